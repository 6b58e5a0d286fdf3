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

/* Every JSON object a command prints names its schema: "vmsplit.CMD/N",
 * CMD from the program name main() set ("vmsplit replay"), N the
 * version of that command's JSON (CLI_JSON_SCHEMA). A reader checks it
 * before trusting the members; a member added keeps N, a member renamed or
 * removed raises it. */
static void print_root(JsonNode *root)
{
    if (JSON_NODE_HOLDS_OBJECT(root)) {
        const char *prg = g_get_prgname();
        const char *cmd = prg && g_str_has_prefix(prg, "vmsplit ") ? prg + 8 : "vmsplit";
        char *schema = g_strdup_printf("vmsplit.%s/%d", cmd, CLI_JSON_SCHEMA);
        json_object_set_string_member(json_node_get_object(root), "schema", schema);
        g_free(schema);
    }
    JsonGenerator *g = json_generator_new();
    json_generator_set_pretty(g, TRUE);
    json_generator_set_root(g, root);
    char *s = json_generator_to_data(g, NULL);
    printf("%s\n", s);
    g_free(s);
    g_object_unref(g);
}

void cli_print_json_keep(JsonBuilder *b)
{
    JsonNode *root = json_builder_get_root(b);
    print_root(root);
    json_node_unref(root);
}

bool cli_print_json_text(const char *text)
{
    JsonParser *p = json_parser_new();
    bool ok = json_parser_load_from_data(p, text, -1, NULL);
    if (ok)
        print_root(json_parser_get_root(p));
    g_object_unref(p);
    return ok;
}

void cli_print_json(JsonBuilder *b)
{
    cli_print_json_keep(b);
    g_object_unref(b);
}

bool cli_opt_uint(const char *cmd, const char *opt, const char *text, uint64_t min,
                  uint64_t max, uint64_t *out)
{
    guint64 v = 0;
    if (text && g_ascii_string_to_unsigned(text, 10, min, max, &v, NULL)) {
        *out = v;
        return true;
    }
    fprintf(stderr, "vmsplit %s: --%s: expected a whole number from %" G_GUINT64_FORMAT " to %"
            G_GUINT64_FORMAT ", got '%s'\n", cmd, opt, min, max, text ? text : "");
    return false;
}

bool cli_opt_paging(const char *cmd, const char *text, PagingMode *out)
{
    const PageTableFormat *f = text ? ptformat_find(text) : ptformat_get(PAGING_PAE);
    if (f) {
        *out = f->mode;
        return true;
    }
    fprintf(stderr, "vmsplit %s: --paging: expected one of %s, got '%s'\n", cmd,
            ptformat_names(), text);
    return false;
}

bool cli_check_ram_paging(const char *cmd, uint64_t ram, PagingMode mode)
{
    const PageTableFormat *f = ptformat_get(mode);
    if (ram <= f->phys_limit)
        return true;
    fprintf(stderr, "vmsplit %s: --ram %.0f GiB: %s (%s) paging addresses at most %.0f GiB of "
            "RAM; use --paging pae or a smaller --ram\n", cmd, ram / 1073741824.0, f->name,
            f->title, f->phys_limit / 1073741824.0);
    return false;
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
