/* vmsplit replay / compare end to end (the binary is argv[1]): the
 * compare overhead equals what two separate replays give; replays are
 * deterministic; bad input exits 2 naming the line. */
#include <check.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

static const char *vmsplit;
static char *trace;

static int run(const char *const *args, char **out, char **err)
{
    GPtrArray *a = g_ptr_array_new();
    g_ptr_array_add(a, (char *)vmsplit);
    for (; *args; args++)
        g_ptr_array_add(a, (char *)*args);
    g_ptr_array_add(a, NULL);
    int status = -1;
    ck_assert(g_spawn_sync(NULL, (char **)a->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, NULL));
    g_ptr_array_free(a, TRUE);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* cycles of each replay in a --json output, in order */
static void cycles_of(const char *json, gint64 *out, guint want)
{
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, json, -1, NULL));
    JsonArray *a = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "replays");
    ck_assert_uint_eq(json_array_get_length(a), want);
    for (guint i = 0; i < want; i++) {
        JsonObject *o = json_array_get_object_element(a, i);
        out[i] = json_object_get_int_member(json_object_get_object_member(o, "totals"), "cycles");
    }
    g_object_unref(p);
}

START_TEST(compare_equals_replays)
{
    char *o1, *e1, *o2, *e2, *o3, *e3;
    const char *c[] = { "compare", "--json", "--layouts", "3g1g,4g4g", trace, NULL };
    const char *r1[] = { "replay", "--json", "--layout", "3g1g", trace, NULL };
    const char *r2[] = { "replay", "--json", "--layout", "4g4g", trace, NULL };
    ck_assert_int_eq(run(c, &o1, &e1), 0);
    ck_assert_int_eq(run(r1, &o2, &e2), 0);
    ck_assert_int_eq(run(r2, &o3, &e3), 0);
    gint64 cc[2], a[1], b[1];
    cycles_of(o1, cc, 2);
    cycles_of(o2, a, 1);
    cycles_of(o3, b, 1);
    ck_assert_int_eq(cc[0], a[0]);
    ck_assert_int_eq(cc[1], b[0]);
    ck_assert_int_gt(cc[1], cc[0]);      /* 4g4g costs more than 3g1g */
    g_free(o1); g_free(e1); g_free(o2); g_free(e2); g_free(o3); g_free(e3);
}
END_TEST

START_TEST(text_and_csv)
{
    char *out, *err;
    const char *a[] = { "compare", "--layouts", "3g1g,4g4g,kpti-pcid", trace, NULL };
    ck_assert_int_eq(run(a, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "overhead (%)"));
    ck_assert_ptr_nonnull(strstr(out, "where the extra cycles went"));
    ck_assert_ptr_nonnull(strstr(out, "what-if"));
    /* The note says why kpti-pcid can beat 3g1g, with the trace's own
     * number of context switches (its `switch` events). */
    char *text;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    unsigned switches = 0;
    char **lines = g_strsplit(text, "\n", -1);
    for (char **p = lines; *p; p++)
        switches += g_str_has_suffix(*p, " switch");
    g_strfreev(lines);
    g_free(text);
    ck_assert_uint_gt(switches, 0);
    char *want = g_strdup_printf("its %u context switches drop no TLB entries", switches);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    g_free(want);
    g_free(out);
    g_free(err);
    /* Every output names the paging mode it ran in: the text in a line,
     * the CSV in a column of every row (PAE, the default, too). */
    static const char *const modes[] = { "pae", "legacy" };
    for (size_t m = 0; m < G_N_ELEMENTS(modes); m++) {
        const char *b[] = { "replay", "--csv", "--paging", modes[m], trace, NULL };
        ck_assert_int_eq(run(b, &out, &err), 0);
        ck_assert(g_str_has_prefix(out, "cpu,layout,syscall,paging,count,"));
        char **rows = g_strsplit(out, "\n", -1);
        unsigned n = 0;
        for (char **r = rows + 1; *r && **r; r++, n++) {
            char **f = g_strsplit(*r, ",", 5);
            ck_assert_msg(f[3] && !strcmp(f[3], modes[m]), "--paging %s: row '%s'", modes[m], *r);
            g_strfreev(f);
        }
        ck_assert_uint_gt(n, 1);
        g_strfreev(rows);
        g_free(out);
        g_free(err);
        const char *c[] = { "replay", "--paging", modes[m], trace, NULL };
        ck_assert_int_eq(run(c, &out, &err), 0);
        char *want = g_strdup_printf("paging: %s (", modes[m]);
        ck_assert_msg(g_str_has_prefix(out, want), "--paging %s: text starts '%.60s'", modes[m],
                      out);
        g_free(want);
        g_free(out);
        g_free(err);
    }
}
END_TEST

START_TEST(bad_input)
{
    char *dir = g_dir_make_tmp("vmsplit-rcli-XXXXXX", NULL);
    char *bad = g_build_filename(dir, "bad.vmt", NULL);
    g_file_set_contents(bad, "#vmsplit-trace 1\n1 sys getppid 0\n1 sys\n", -1, NULL);
    static const char *const cases[][6] = {
        { "replay", NULL, NULL },
        { "replay", "--layout", "5g5g", NULL },
        { "replay", "--ram", "1T", NULL },
        { "compare", "--layouts", "3g1g", NULL },
        { "replay", "/nonexistent.vmt", NULL },
    };
    char *out, *err;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *args[8];
        size_t k = 0;
        for (; cases[i][k]; k++)
            args[k] = cases[i][k];
        if (i >= 1 && i <= 3)
            args[k++] = trace;
        args[k] = NULL;
        ck_assert_int_eq(run(args, &out, &err), 2);
        ck_assert_msg(strlen(err) > 0, "case %zu", i);
        g_free(out);
        g_free(err);
    }
    const char *b[] = { "replay", bad, NULL };
    ck_assert_int_eq(run(b, &out, &err), 2);
    ck_assert_msg(strstr(err, "bad.vmt:3:") != NULL, "%s", err);
    g_free(out);
    g_free(err);
    g_remove(bad);
    g_rmdir(dir);
    g_free(bad);
    g_free(dir);
}
END_TEST

int main(int argc, char **argv)
{
    g_assert(argc == 2);
    vmsplit = argv[1];
    trace = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "workloads", "traces", "pipeline.vmt", NULL);
    Suite *s = suite_create("replay-cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, compare_equals_replays);
    tcase_add_test(tc, text_and_csv);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    g_free(trace);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
