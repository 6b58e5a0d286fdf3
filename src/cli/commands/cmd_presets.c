/* vmsplit presets: the CPU presets (presets/NAME.ini, src/preset/preset.h).
 *
 *   vmsplit presets                       list the bundled presets
 *   vmsplit presets show NAME|FILE        one preset resolved, every key
 *   vmsplit presets show NAME|FILE --json the same as JSON
 *
 * A FILE is anything containing '/' or ending in .ini: a copied and edited
 * preset is checked exactly as the bundled ones are.
 *
 * Exit: 0 ok, 2 unknown preset or invalid file (the message names the
 * file, line, key and what was expected). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "preset/preset.h"

#include <json-glib/json-glib.h>

#include <stdio.h>
#include <string.h>

static void list_json_add(JsonBuilder *b, const Preset *p)
{
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, p->name);
    json_builder_set_member_name(b, "clock_mhz");
    json_builder_add_double_value(b, p->clock_mhz);
    json_builder_set_member_name(b, "default");
    json_builder_add_boolean_value(b, !strcmp(p->name, PRESET_DEFAULT));
    json_builder_set_member_name(b, "description");
    json_builder_add_string_value(b, p->description);
    json_builder_end_object(b);
}

static void list_json_print(JsonBuilder *b)
{
    cli_print_json_keep(b);
}

static int presets_list(bool json)
{
    char **names = preset_list();
    int status = VMS_EXIT_OK;
    if (!names[0]) {
        fprintf(stderr, "vmsplit presets: no presets found in %s\n", preset_dir());
        g_strfreev(names);
        return VMS_EXIT_USAGE;
    }
    JsonBuilder *b = json_builder_new();
    json_builder_begin_array(b);
    for (int i = 0; names[i]; i++) {
        GError *err = NULL;
        Preset *p = preset_load(names[i], &err);
        if (!p) {
            fprintf(stderr, "vmsplit presets: %s\n", err->message);
            g_error_free(err);
            status = VMS_EXIT_USAGE;
            continue;
        }
        if (json)
            list_json_add(b, p);
        else
            printf("%-16s %6.0f MHz  %s%s\n", p->name, p->clock_mhz, p->description,
                   !strcmp(p->name, PRESET_DEFAULT) ? "  (default)" : "");
        preset_free(p);
    }
    json_builder_end_array(b);
    if (json)
        list_json_print(b);
    else
        printf("\nfrom %s; 'vmsplit presets show NAME' prints one, every key.\n",
               preset_dir());
    g_object_unref(b);
    g_strfreev(names);
    return status;
}

static int presets_show(const char *which, bool json)
{
    GError *err = NULL;
    Preset *p = preset_load(which, &err);
    if (!p)
        return cli_fail("presets", err);
    char *text = json ? preset_to_json(p) : preset_to_ini(p);
    if (!json)
        fputs(text, stdout);
    else if (!cli_print_json_text(text))
        g_error("preset_to_json made JSON that does not parse");
    g_free(text);
    preset_free(p);
    return VMS_EXIT_OK;
}

int cmd_presets(int argc, char **argv)
{
    gboolean json = FALSE;
    GOptionEntry entries[] = {
        { "json", 0, 0, G_OPTION_ARG_NONE, &json, "JSON output", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("[list | show NAME|FILE]");
    g_option_context_set_summary(ctx,
        "List the bundled CPU presets, or print one resolved (every key, grouped).\n"
        "FILE: a preset file (a path containing '/' or ending in .ini).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    bool ok = cli_parse(ctx, &argc, &argv, "presets");
    g_option_context_free(ctx);
    if (!ok)
        return VMS_EXIT_USAGE;
    if (argc == 1 || (argc == 2 && !strcmp(argv[1], "list")))
        return presets_list(json);
    if (argc == 3 && !strcmp(argv[1], "show"))
        return presets_show(argv[2], json);
    fprintf(stderr, "vmsplit presets: expected 'list' or 'show NAME|FILE' "
                    "(see 'vmsplit presets --help')\n");
    return VMS_EXIT_USAGE;
}
