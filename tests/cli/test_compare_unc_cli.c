/* vmsplit compare --uncertainty end to end (the binary is argv[1]).
 *
 * What must hold whatever the model's figures are:
 *   - the design depends only on the point, so -j 1 and -j 2 give the same
 *     intervals, and so does the design run as two shards of
 *     `vmsplit sweep --kind uncertainty-replay`, merged, and handed to
 *     compare with --uncertainty-csv (read, not rerun: the file is left
 *     as it was);
 *   - the baseline is compared with itself at every point: its overhead
 *     and extra cycles are exactly 0 at both ends;
 *   - a layout's overhead as shipped lies inside its interval (the
 *     shipped preset is one admissible setting of the open estimates);
 *   - bad options exit 2. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>

static const char *vmsplit;

#define TRACE "workloads/traces/cp.vmt"
#define POINTS "6"

static int spawn(const char *const *argv, char **out)
{
    int status = -1;
    char *err = NULL;
    ck_assert(g_spawn_sync(g_getenv("VMSPLIT_SOURCE_DIR"), (char **)argv, NULL, G_SPAWN_DEFAULT,
                           NULL, NULL, out, &err, &status, NULL));
    ck_assert(WIFEXITED(status));
    g_free(err);
    return WEXITSTATUS(status);
}

/* compare --json with the given extra arguments; the parsed document. */
static JsonParser *compare_json(const char *a1, const char *a2, const char *a3, const char *a4)
{
    const char *argv[] = { vmsplit, "compare", "--uncertainty", POINTS, "--layouts",
                           "3g1g,4g4g,kpti", "--json", TRACE, a1, a2, a3, a4, NULL };
    char *out = NULL;
    ck_assert_int_eq(spawn(argv, &out), 0);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    g_free(out);
    return p;
}

static JsonArray *comparison(JsonParser *p)
{
    return json_object_get_array_member(json_node_get_object(json_parser_get_root(p)),
                                        "comparison");
}

/* The intervals of every layout, as text, for comparing two runs. */
static char *intervals_text(JsonParser *p)
{
    GString *s = g_string_new(NULL);
    JsonArray *a = comparison(p);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonNode *n = json_object_get_member(json_array_get_object_element(a, i), "interval_90");
        ck_assert_ptr_nonnull(n);
        char *t = json_to_string(n, FALSE);
        g_string_append(s, t);
        g_free(t);
    }
    return g_string_free(s, FALSE);
}

static void iv(JsonObject *o, const char *name, double *lo, double *hi)
{
    JsonArray *a = json_object_get_array_member(o, name);
    *lo = json_array_get_double_element(a, 0);
    *hi = json_array_get_double_element(a, 1);
}

START_TEST(same_for_any_jobs_and_shards)
{
    JsonParser *j1 = compare_json("-j", "1", NULL, NULL), *j2 = compare_json("-j", "2", NULL, NULL);
    char *t1 = intervals_text(j1), *t2 = intervals_text(j2);
    ck_assert_str_eq(t1, t2);

    char *dir = g_dir_make_tmp("vmsplit-cmpunc-XXXXXX", NULL);
    char *s1 = g_build_filename(dir, "s1.csv", NULL), *s2 = g_build_filename(dir, "s2.csv", NULL);
    char *m = g_build_filename(dir, "merged.csv", NULL);
    for (int k = 1; k <= 2; k++) {
        const char *argv[] = { vmsplit, "sweep", "--kind", "uncertainty-replay", "--quiet",
                               "--sample", "0,1,2,3,4,5", "--workloads", TRACE, "--layouts",
                               "3g1g,4g4g,kpti", "--shard", k == 1 ? "1/2" : "2/2",
                               "-o", k == 1 ? s1 : s2, NULL };
        char *out = NULL;
        ck_assert_int_eq(spawn(argv, &out), 0);
        g_free(out);
    }
    const char *margv[] = { vmsplit, "merge", "-o", m, s1, s2, NULL };
    char *out = NULL, *before = NULL, *after = NULL;
    ck_assert_int_eq(spawn(margv, &out), 0);
    g_free(out);
    ck_assert(g_file_get_contents(m, &before, NULL, NULL));
    JsonParser *js = compare_json("--uncertainty-csv", m, NULL, NULL);
    char *ts = intervals_text(js);
    ck_assert_str_eq(t1, ts);
    ck_assert(g_file_get_contents(m, &after, NULL, NULL));
    ck_assert_str_eq(before, after);

    g_free(before);
    g_free(after);
    g_free(ts);
    g_object_unref(js);
    g_unlink(s1);
    g_unlink(s2);
    g_unlink(m);
    g_rmdir(dir);
    g_free(s1);
    g_free(s2);
    g_free(m);
    g_free(dir);
    g_free(t1);
    g_free(t2);
    g_object_unref(j1);
    g_object_unref(j2);
}
END_TEST

START_TEST(baseline_zero_and_central_inside)
{
    JsonParser *p = compare_json(NULL, NULL, NULL, NULL);
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonObject *u = json_object_get_object_member(root, "uncertainty");
    ck_assert_int_eq(json_object_get_int_member(u, "points"), 6);
    ck_assert_int_gt(json_object_get_int_member(u, "accepted"), 0);
    JsonArray *a = comparison(p);
    ck_assert_int_eq(json_array_get_length(a), 3);
    double lo, hi;
    JsonObject *base = json_object_get_object_member(json_array_get_object_element(a, 0),
                                                     "interval_90");
    iv(base, "overhead_pct", &lo, &hi);
    ck_assert(lo == 0 && hi == 0);
    JsonObject *parts = json_object_get_object_member(base, "extra_cycles_by_part");
    GList *names = json_object_get_members(parts);
    for (GList *n = names; n; n = n->next) {
        iv(parts, n->data, &lo, &hi);
        ck_assert_msg(lo == 0 && hi == 0, "baseline part %s", (char *)n->data);
    }
    g_list_free(names);
    for (guint i = 1; i < 3; i++) {
        JsonObject *o = json_array_get_object_element(a, i);
        double c = json_object_get_double_member(o, "overhead_pct");
        iv(json_object_get_object_member(o, "interval_90"), "overhead_pct", &lo, &hi);
        ck_assert_msg(lo <= c && c <= hi && lo < hi, "layout %u: %g outside [%g, %g]", i, c, lo,
                      hi);
        /* 4G/4G and KPTI add two CR3 writes to every syscall at every point. */
        ck_assert(lo > 0);
    }
    g_object_unref(p);
}
END_TEST

/* The design's points replay in the paging mode the comparison runs in.
 * At every point a PAE CR3 write costs what a legacy one does plus its
 * four PDPTE loads, so the legacy CR3 part is below the PAE one point by
 * point, and so are its 5th and 95th percentiles (the points once ran
 * under PAE whatever --paging said: equal intervals). */
static void cr3_part(JsonParser *p, guint layout, double *lo, double *hi)
{
    JsonObject *o = json_array_get_object_element(comparison(p), layout);
    JsonObject *iv90 = json_object_get_object_member(o, "interval_90");
    iv(json_object_get_object_member(iv90, "extra_cycles_by_part"), "syscall CR3 writes", lo, hi);
}

START_TEST(legacy_intervals_follow_mode)
{
    JsonParser *pae = compare_json(NULL, NULL, NULL, NULL);
    JsonParser *leg = compare_json("--paging", "legacy", NULL, NULL);
    for (guint i = 1; i < 3; i++) {
        double plo, phi, llo, lhi;
        cr3_part(pae, i, &plo, &phi);
        cr3_part(leg, i, &llo, &lhi);
        ck_assert_msg(0 < llo && llo < plo && lhi < phi, "layout %u: legacy [%g, %g], PAE [%g, %g]",
                      i, llo, lhi, plo, phi);
    }
    g_object_unref(pae);
    g_object_unref(leg);
}
END_TEST

START_TEST(text_and_csv)
{
    const char *argv[] = { vmsplit, "compare", "--uncertainty", "3", TRACE, NULL };
    char *out = NULL;
    ck_assert_int_eq(spawn(argv, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "90 % intervals"));
    ck_assert_ptr_nonnull(strstr(out, "overhead (%)                    +0.00 [+0.00, +0.00]"));
    g_free(out);
    const char *cargv[] = { vmsplit, "compare", "--uncertainty", "3", "--csv", TRACE, NULL };
    ck_assert_int_eq(spawn(cargv, &out), 0);
    char **lines = g_strsplit(out, "\n", -1);
    char **head = g_strsplit(lines[0], ",", -1);
    guint cols = g_strv_length(head);
    g_strfreev(head);
    ck_assert_ptr_nonnull(strstr(lines[0], ",overhead_pct_p5,overhead_pct_p95"));
    ck_assert_ptr_null(strstr(lines[0], "(null)"));
    unsigned all = 0;
    for (char **l = lines + 1; *l && **l; l++) {
        char **f = g_strsplit(*l, ",", -1);
        ck_assert_uint_eq(g_strv_length(f), cols);   /* one header for every row */
        all += !strcmp(f[2], "ALL");
        g_strfreev(f);
    }
    ck_assert_uint_eq(all, 2);
    g_strfreev(lines);
    g_free(out);
}
END_TEST

START_TEST(bad_options)
{
    const char *a[] = { vmsplit, "compare", "--uncertainty", "-1", TRACE, NULL };
    const char *b[] = { vmsplit, "compare", "--uncertainty-csv", "x.csv", TRACE, NULL };
    const char *c[] = { vmsplit, "compare", "--uncertainty", "2", "--struct-page", "44", TRACE, NULL };
    char *out = NULL;
    ck_assert_int_eq(spawn(a, &out), 2);
    g_free(out);
    ck_assert_int_eq(spawn(b, &out), 2);
    g_free(out);
    ck_assert_int_eq(spawn(c, &out), 2);
    g_free(out);
}
END_TEST

int main(int argc, char **argv)
{
    g_assert(argc == 2);
    vmsplit = g_canonicalize_filename(argv[1], NULL);   /* the runs start in the source tree */
    Suite *s = suite_create("compare-uncertainty-cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, same_for_any_jobs_and_shards);
    tcase_add_test(tc, baseline_zero_and_central_inside);
    tcase_add_test(tc, legacy_intervals_follow_mode);
    tcase_add_test(tc, text_and_csv);
    tcase_add_test(tc, bad_options);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
