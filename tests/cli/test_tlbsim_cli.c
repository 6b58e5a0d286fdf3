/* vmsplit tlbsim end to end on the bundled real Lackey trace and on bad
 * input, as a user runs it (the binary is argv[1]).
 *
 * Two kinds of expectation:
 *  - independent: the reference counts per kind are the trace's line
 *    counts (zcat | awk, workloads/memtraces/README.md); lookups = hits +
 *    misses; every distinct page costs at least one compulsory miss;
 *  - golden: the TLB and cache figures of this trace on p4-northwood as
 *    first computed and reviewed (walks, misses by side, L1/L2 hits). A
 *    change to the model that moves them must update them here on purpose,
 *    saying why in the commit. */
#include <check.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

static const char *vmsplit;
static char *trace;

static int run(const char *const *args, char **out, char **err)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)vmsplit);
    g_ptr_array_add(argv, "tlbsim");
    for (; *args; args++)
        g_ptr_array_add(argv, (char *)*args);
    g_ptr_array_add(argv, NULL);
    int status = -1;
    GError *e = NULL;
    ck_assert(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, &e));
    g_ptr_array_free(argv, TRUE);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static gint64 member(JsonObject *o, const char *path)
{
    char **parts = g_strsplit(path, ".", -1);
    for (int i = 0; parts[i + 1]; i++)
        o = json_object_get_object_member(o, parts[i]);
    gint64 v = json_object_get_int_member(o, parts[g_strv_length(parts) - 1]);
    g_strfreev(parts);
    return v;
}

START_TEST(bundled_trace_json)
{
    char *out = NULL, *err = NULL;
    const char *args[] = { "--json", trace, NULL };
    ck_assert_int_eq(run(args, &out, &err), 0);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    /* Independent: the trace's own line counts. */
    ck_assert_int_eq(member(o, "counters.fetches"), 931474);
    ck_assert_int_eq(member(o, "counters.loads"), 291314);
    ck_assert_int_eq(member(o, "counters.stores"), 269345);
    ck_assert_int_eq(member(o, "counters.modifies"), 6138);
    gint64 lookups = member(o, "tlb.total.lookups");
    ck_assert_int_eq(lookups, member(o, "tlb.total.hits") + member(o, "tlb.total.misses"));
    /* Fetch lookups: one per I line plus one per page it crosses into. */
    ck_assert_int_ge(member(o, "tlb.total.lookups_fetch"), 931474);
    ck_assert_int_le(member(o, "tlb.total.lookups_fetch"), 931474 + member(o, "counters.page_crossings"));
    ck_assert_int_ge(member(o, "tlb.total.misses"), member(o, "counters.pages_mapped"));
    ck_assert_int_eq(member(o, "counters.cr3_writes"), 0);
    /* Golden (see the header comment). */
    ck_assert_int_eq(member(o, "counters.pages_mapped"), 162);
    ck_assert_int_eq(member(o, "counters.walks"), 170);
    ck_assert_int_eq(member(o, "tlb.total.misses_fetch"), 85);
    ck_assert_int_eq(member(o, "tlb.total.misses_read"), 59);
    ck_assert_int_eq(member(o, "tlb.total.misses_write"), 26);
    ck_assert_int_eq(member(o, "tlb.total.dirty_walks"), 7);
    JsonArray *cache = json_object_get_array_member(o, "cache");
    ck_assert_int_eq(json_object_get_int_member(json_array_get_object_element(cache, 0), "hits"), 570691);
    ck_assert_int_eq(json_object_get_int_member(json_array_get_object_element(cache, 1), "hits"), 1904);
    g_object_unref(p);
    g_free(out);
    g_free(err);
}
END_TEST

/* Periodic flushes only add misses; with a CR3 write every 1000 references
 * there are refs / 1000 of them. */
START_TEST(flush_every_adds_misses)
{
    char *out = NULL, *err = NULL;
    const char *args[] = { "--json", "--flush-every", "1000", trace, NULL };
    ck_assert_int_eq(run(args, &out, &err), 0);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_int_eq(member(o, "counters.cr3_writes"), 1498271 / 1000);
    ck_assert_int_eq(member(o, "tlb.total.flushes_cr3"), 1498271 / 1000);
    ck_assert_int_gt(member(o, "tlb.total.misses"), 170);
    ck_assert_int_gt(member(o, "tlb.total.dropped_cr3"), 0);
    g_object_unref(p);
    g_free(out);
    g_free(err);
}
END_TEST

START_TEST(csv_and_text)
{
    char *out = NULL, *err = NULL;
    const char *a1[] = { "--csv", "--max-refs", "1000", trace, NULL };
    ck_assert_int_eq(run(a1, &out, &err), 0);
    char **lines = g_strsplit(out, "\n", -1);
    ck_assert_uint_ge(g_strv_length(lines), 2);
    ck_assert(g_str_has_prefix(lines[0], "preset,page_size,refs,"));
    ck_assert(g_str_has_prefix(lines[1], "p4-northwood,4096,1000,"));
    char **h = g_strsplit(lines[0], ",", -1), **r = g_strsplit(lines[1], ",", -1);
    ck_assert_uint_eq(g_strv_length(h), g_strv_length(r));
    g_strfreev(h);
    g_strfreev(r);
    g_strfreev(lines);
    g_free(out);
    g_free(err);
    const char *a2[] = { "--dtlb-entries", "16", "--policy", "fifo", "--max-refs", "1000", trace, NULL };
    ck_assert_int_eq(run(a2, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "dtlb_4k"));
    g_free(out);
    g_free(err);
}
END_TEST

START_TEST(bad_input)
{
    char *dir = g_dir_make_tmp("vmsplit-tlbsimcli-XXXXXX", NULL);
    char *bad = g_build_filename(dir, "bad.lackey", NULL);
    g_file_set_contents(bad, "I  1000,4\n L 2000,4\nQ junk\n", -1, NULL);
    char *out = NULL, *err = NULL;
    const char *a1[] = { bad, NULL };
    ck_assert_int_eq(run(a1, &out, &err), 2);
    ck_assert_msg(strstr(err, "bad.lackey:3:") != NULL, "%s", err);
    g_free(out);
    g_free(err);
    const char *a2[] = { "--skip-bad", bad, NULL };
    ck_assert_int_eq(run(a2, &out, &err), 0);
    ck_assert_msg(strstr(err, "1 malformed lines skipped; first at line 3") != NULL, "%s", err);
    g_free(out);
    g_free(err);
    const char *a3[] = { "/nonexistent.lackey", NULL };
    ck_assert_int_eq(run(a3, &out, &err), 2);
    g_free(out);
    g_free(err);
    const char *a4[] = { "--dtlb-entries", "48", "--dtlb-ways", "4", bad, NULL };
    ck_assert_int_eq(run(a4, &out, &err), 2);   /* 12 sets: not a power of two */
    ck_assert_msg(strstr(err, "power of two") != NULL, "%s", err);
    g_free(out);
    g_free(err);
    const char *a5[] = { "--cpu", "p9-imaginary", bad, NULL };
    ck_assert_int_eq(run(a5, &out, &err), 2);
    g_free(out);
    g_free(err);
    const char *a6[] = { NULL };
    ck_assert_int_eq(run(a6, &out, &err), 2);
    g_free(out);
    g_free(err);
    g_free(bad);
    g_free(dir);
}
END_TEST

int main(int argc, char **argv)
{
    g_assert(argc == 2);
    vmsplit = argv[1];
    trace = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "workloads", "memtraces",
                             "qsortwords.lackey.gz", NULL);
    Suite *s = suite_create("tlbsim-cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bundled_trace_json);
    tcase_add_test(tc, flush_every_adds_misses);
    tcase_add_test(tc, csv_and_text);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
