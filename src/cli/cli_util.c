#include "cli/cli_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

int cli_fail(const char *cmd, GError *err)
{
    fprintf(stderr, "vmsplit %s: %s\n", cmd, err ? err->message : "error");
    if (err)
        g_error_free(err);
    return VMS_EXIT_USAGE;
}

bool cli_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd)
{
    GError *err = NULL;
    if (!g_option_context_parse(ctx, argc, argv, &err)) {
        fprintf(stderr, "vmsplit %s: %s (see 'vmsplit %s --help')\n", cmd,
                err->message, cmd);
        g_error_free(err);
        return false;
    }
    return true;
}

void cli_print_json(JsonBuilder *b)
{
    JsonGenerator *g = json_generator_new();
    json_generator_set_pretty(g, TRUE);
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(g, root);
    char *s = json_generator_to_data(g, NULL);
    printf("%s\n", s);
    g_free(s);
    json_node_unref(root);
    g_object_unref(g);
    g_object_unref(b);
}

bool cli_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return false;
    uint64_t mul = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mul = 1ULL << 10; end++; break;
    case 'm': case 'M': mul = 1ULL << 20; end++; break;
    case 'g': case 'G': mul = 1ULL << 30; end++; break;
    case 't': case 'T': mul = 1ULL << 40; end++; break;
    default: return false;
    }
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end != '\0')
        return false;
    if (v > UINT64_MAX / mul)
        return false;
    *out = (uint64_t)v * mul;
    return true;
}

bool cli_header_kv_valid(const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || strpbrk(eq + 1, "\r\n"))
        return false;
    for (const char *k = kv; k < eq; k++)
        if (!g_ascii_islower(*k) && !g_ascii_isdigit(*k) && *k != '-')
            return false;
    return true;
}
