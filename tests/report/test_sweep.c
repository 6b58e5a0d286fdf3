/* The sweep engine and merge (src/report/sweep.h, merge.h) with a test
 * runner whose rows are simple enough to write out by hand: the expected
 * CSV below is the hand-worked cartesian product in odometer order (first
 * parameter slowest), with RFC 4180 quoting and the header as its first
 * line. Every run -- any -j, stopped and resumed, torn and repaired,
 * sharded and merged, converted from the legacy form -- must give exactly
 * these bytes, and its record (OUT.meta.json) must say which sweep it is:
 * that is checked by reading the JSON, not against the writer's bytes, and
 * the reader is checked on hand-written records. */
#include "report/csv.h"
#include "report/merge.h"
#include "report/sweep.h"

#include <check.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

/* ---- the test runner: a (number), b (x|y|z), c (size in KiB) ---------- */

static bool check_b(const char *v, GError **err)
{
    if (strcmp(v, "x") && strcmp(v, "y") && strcmp(v, "z")) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "expected x, y or z, found '%s'", v);
        return false;
    }
    return true;
}

static const SweepParam t_params[] = {
    {"alpha", "a", SWEEP_PARAM_UINT, 0, NULL, "a number", NULL},
    {"beta", "b", SWEEP_PARAM_NAME, 0, "x,y", "x, y or z", check_b},
    {"gamma", "c", SWEEP_PARAM_SIZE, 1024, NULL, "a size in KiB", NULL},
};
static const char *const t_figures[] = {"sum", "note"};

static bool t_run(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    (void)ctx;
    guint64 a = g_ascii_strtoull(pt->values[0], NULL, 10);
    guint64 c = g_ascii_strtoull(pt->values[2], NULL, 10);
    if (a == 13) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "unlucky");
        return false;
    }
    /* Uneven durations so that -j 2 finishes points out of order. */
    g_usleep((gulong)((pt->index * 7 + 3) % 4) * 1500);
    out[0] = sweep_format_uint(a + c);
    out[1] = g_strdup_printf("b=%s, \"q\"", pt->values[1]);
    return true;
}

static const SweepRunner t_runner = {
    "ttest", "test runner", t_params, G_N_ELEMENTS(t_params), t_figures,
    G_N_ELEMENTS(t_figures), NULL, NULL, t_run,
};

/* A second runner with a path parameter, for the comment escaping. */
static const SweepParam p_params[] = {
    {"files", "file", SWEEP_PARAM_PATH, 0, NULL, "input", NULL},
};
static bool p_run(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    (void)ctx;
    (void)err;
    out[0] = sweep_format_uint(strlen(pt->values[0]));
    return true;
}
static const char *const p_figures[] = {"len"};
static const SweepRunner p_runner = {
    "tpath", "test runner with paths", p_params, 1, p_figures, 1, NULL, NULL, p_run,
};

/* a=1,2  b=x,y  c=1K,3K: 8 points, a slowest, c fastest. sum = a + c. */
#define HEAD "a,b,c,sum,note\n"
/* The same sweep's record as CSVs carried it before the sidecar. */
#define LEGACY "# vmsplit-sweep v1 kind=ttest a=1,2 b=x,y c=1,3\n"
#define R0 "1,x,1,2,\"b=x, \"\"q\"\"\"\n"
#define R1 "1,x,3,4,\"b=x, \"\"q\"\"\"\n"
#define R2 "1,y,1,2,\"b=y, \"\"q\"\"\"\n"
#define R3 "1,y,3,4,\"b=y, \"\"q\"\"\"\n"
#define R4 "2,x,1,3,\"b=x, \"\"q\"\"\"\n"
#define R5 "2,x,3,5,\"b=x, \"\"q\"\"\"\n"
#define R6 "2,y,1,3,\"b=y, \"\"q\"\"\"\n"
#define R7 "2,y,3,5,\"b=y, \"\"q\"\"\"\n"
static const char *const EXPECTED = HEAD R0 R1 R2 R3 R4 R5 R6 R7;

static char *tmpdir;

static void setup(void)
{
    sweep_runner_register(&t_runner);
    sweep_runner_register(&p_runner);
    tmpdir = g_dir_make_tmp("vmsplit-sweep-XXXXXX", NULL);
    ck_assert(tmpdir);
}

static void rm_rf(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, n, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(dir);
}

static void teardown(void)
{
    rm_rf(tmpdir);
    g_free(tmpdir);
}

static char *path(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

static char *slurp(const char *p)
{
    char *s = NULL;
    ck_assert_msg(g_file_get_contents(p, &s, NULL, NULL), "cannot read %s", p);
    return s;
}

static void spit(const char *p, const char *s)
{
    ck_assert(g_file_set_contents(p, s, -1, NULL));
}

static SweepDef *make_def(const char *a, const char *b, const char *c, const char *shard)
{
    SweepDef *d = sweep_def_new(&t_runner);
    GError *err = NULL;
    ck_assert(sweep_def_add_list(d, "alpha", a, &err));
    if (b)
        ck_assert(sweep_def_add_list(d, "b", b, &err));
    ck_assert(sweep_def_add_list(d, "gamma", c, &err));
    if (shard)
        ck_assert(sweep_def_set_shard(d, shard, &err));
    ck_assert_msg(sweep_def_finish(d, &err), "%s", err ? err->message : "");
    return d;
}

/* Run d into file with -j jobs; returns the result, asserts success. */
static SweepResult run_ok(const SweepDef *d, const char *file, guint jobs, guint stop_after)
{
    SweepOptions o = {jobs, false, false, stop_after};
    SweepResult res;
    GError *err = NULL;
    ck_assert_msg(sweep_run(d, file, &o, &res, &err), "%s", err ? err->message : "");
    return res;
}

static GError *run_err(const SweepDef *d, const char *file, guint jobs)
{
    SweepOptions o = {jobs, false, false, 0};
    SweepResult res;
    GError *err = NULL;
    ck_assert(!sweep_run(d, file, &o, &res, &err));
    ck_assert(err);
    return err;
}

static char *meta(const char *csv)
{
    return g_strconcat(csv, ".meta.json", NULL);
}

/* Write csv's record for d as a sweep would (to set up a file by hand). */
static void spit_meta(const char *csv, const SweepDef *d)
{
    GError *err = NULL;
    ck_assert_msg(sweep_record_write(d, csv, true, false, &err), "%s", err ? err->message : "");
}

/* Comma-joined string array member of o. */
static char *join_strings(JsonObject *o, const char *name)
{
    JsonArray *a = json_object_get_array_member(o, name);
    ck_assert_msg(a, "no array %s", name);
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(a); i++)
        g_string_append_printf(s, "%s%s", i ? "," : "", json_array_get_string_element(a, i));
    return g_string_free(s, FALSE);
}

/* csv's record, read as any JSON reader would: the schema, kind ttest, the
 * lists a, b, c (comma-joined), the shard k/n. */
static void assert_meta(const char *csv, const char *a, const char *b, const char *c,
                        gint64 k, gint64 n)
{
    char *m = meta(csv);
    JsonParser *p = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(p, m, &err), "%s", err ? err->message : "");
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_str_eq(json_object_get_string_member(o, "schema"), "vmsplit.sweep-meta/1");
    ck_assert_str_eq(json_object_get_string_member(o, "kind"), "ttest");
    JsonObject *params = json_object_get_object_member(o, "parameters");
    ck_assert_uint_eq(json_object_get_size(params), 3);
    const char *want[3][2] = {{"a", a}, {"b", b}, {"c", c}};
    for (int i = 0; i < 3; i++) {
        char *got = join_strings(params, want[i][0]);
        ck_assert_str_eq(got, want[i][1]);
        g_free(got);
    }
    JsonObject *sh = json_object_get_object_member(o, "shard");
    ck_assert_int_eq(json_object_get_int_member(sh, "k"), k);
    ck_assert_int_eq(json_object_get_int_member(sh, "n"), n);
    g_object_unref(p);
    g_free(m);
}

static guint count_lines(const char *s)
{
    guint n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(test_enumeration)
{
    /* The canonical values: 1K and 3072 bytes are 1 and 3 KiB; b from
     * its default list. */
    SweepDef *d = make_def("1,2", NULL, "1K,3072", NULL);
    ck_assert_uint_eq(sweep_def_n_points(d), 8);
    const char *v[3];
    static const char *const want[8][3] = {
        {"1", "x", "1"}, {"1", "x", "3"}, {"1", "y", "1"}, {"1", "y", "3"},
        {"2", "x", "1"}, {"2", "x", "3"}, {"2", "y", "1"}, {"2", "y", "3"},
    };
    for (guint i = 0; i < 8; i++) {
        sweep_def_point(d, i, v);
        for (int k = 0; k < 3; k++)
            ck_assert_str_eq(v[k], want[i][k]);
        ck_assert_int_eq(sweep_def_find(d, want[i]), (int)i);
    }
    const char *foreign[] = {"3", "x", "1"};
    ck_assert_int_eq(sweep_def_find(d, foreign), -1);
    char *c = sweep_def_describe(d, true);
    ck_assert_str_eq(c, "kind=ttest a=1,2 b=x,y c=1,3");
    g_free(c);
    sweep_def_free(d);
}
END_TEST

START_TEST(test_bad_values)
{
    static const struct {
        const char *param, *list, *expect;
    } cases[] = {
        {"gamma", "1000", "--gamma: '1000' is not a whole number of KiB"},
        {"gamma", "1Q", "--gamma: expected a size such as 512M or 64G, found '1Q'"},
        {"alpha", "1,x", "--alpha: expected a whole number, found 'x'"},
        {"alpha", "1,,2", "--alpha: expected a whole number, found ''"},
        {"beta", "x,w", "--beta: expected x, y or z, found 'w'"},
        {"gamma", "1K,1024", "--gamma: value '1' appears twice"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        SweepDef *d = sweep_def_new(&t_runner);
        GError *err = NULL;
        ck_assert(!sweep_def_add_list(d, cases[i].param, cases[i].list, &err));
        ck_assert_msg(g_str_has_prefix(err->message, cases[i].expect), "%s", err->message);
        g_error_free(err);
        sweep_def_free(d);
    }
    /* a has no default. */
    SweepDef *d = sweep_def_new(&t_runner);
    GError *err = NULL;
    ck_assert(sweep_def_add_list(d, "gamma", "1K", &err));
    ck_assert(!sweep_def_finish(d, &err));
    ck_assert_str_eq(err->message, "a ttest sweep needs --alpha");
    g_clear_error(&err);
    sweep_def_free(d);
    /* Shards: 1 <= K <= N, each a plain decimal number within 32 bits
     * (4294967297 is 2^32 + 1: it wrapped to 1; "-1" was taken as
     * 4294967295 by sscanf's %u). */
    const char *bad[] = {"0/3", "4/3", "1/0", "a/b", "1/2/3", "2", "4294967297/4294967298",
                         "-1/1", "1/-1", "+1/2", " 1/2", "1/2 ", "1/", "/2", "1/2x"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        d = sweep_def_new(&t_runner);
        ck_assert_msg(!sweep_def_set_shard(d, bad[i], &err), "%s accepted", bad[i]);
        g_clear_error(&err);
        sweep_def_free(d);
    }
    d = sweep_def_new(&t_runner);
    ck_assert(sweep_def_set_shard(d, "4294967295/4294967295", &err));
    ck_assert_uint_eq(sweep_def_shard_k(d), 4294967295u);
    sweep_def_free(d);
}
END_TEST

START_TEST(test_j1_j2_same)
{
    SweepDef *d = make_def("1,2", "x,y", "1K,3K", NULL);
    for (guint j = 1; j <= 3; j++) {
        char *name = g_strdup_printf("j%u.csv", j);
        char *p = path(name);
        SweepResult r = run_ok(d, p, j, 0);
        ck_assert_uint_eq(r.total, 8);
        ck_assert_uint_eq(r.computed, 8);
        ck_assert(r.complete);
        char *s = slurp(p);
        ck_assert_str_eq(s, EXPECTED);
        assert_meta(p, "1,2", "x,y", "1,3", 1, 1);
        /* A rerun finds everything done and changes nothing. */
        r = run_ok(d, p, j, 0);
        ck_assert_uint_eq(r.resumed, 8);
        ck_assert_uint_eq(r.computed, 0);
        char *s2 = slurp(p);
        ck_assert_str_eq(s2, EXPECTED);
        g_free(s2);
        g_free(s);
        g_free(p);
        g_free(name);
    }
    sweep_def_free(d);
}
END_TEST

START_TEST(test_stop_and_resume)
{
    /* Stopping after n rows is what a kill leaves: rows written and
     * flushed stay, points computed but not yet written are lost. Then a
     * rerun (any -j) must give the uninterrupted CSV. */
    SweepDef *d = make_def("1,2", "x,y", "1K,3K", NULL);
    for (guint j = 1; j <= 2; j++) {
        for (guint n = 1; n < 8; n++) {
            char *p = path("stop.csv");
            g_unlink(p);
            SweepResult r = run_ok(d, p, j, n);
            ck_assert(!r.complete);
            ck_assert_uint_eq(r.computed, n);
            char *partial = slurp(p);
            ck_assert_uint_eq(count_lines(partial), 1 + n);
            g_free(partial);
            r = run_ok(d, p, 3 - j, 0);
            ck_assert(r.complete);
            ck_assert_uint_eq(r.resumed, n);
            ck_assert_uint_eq(r.computed, 8 - n);
            char *s = slurp(p);
            ck_assert_str_eq(s, EXPECTED);
            g_free(s);
            g_free(p);
        }
    }
    sweep_def_free(d);
}
END_TEST

START_TEST(test_torn_last_line)
{
    SweepDef *d = make_def("1,2", "x,y", "1K,3K", NULL);
    char *p = path("torn.csv");
    spit_meta(p, d);
    /* Killed while writing the third row (in the middle of a quoted
     * field, so a naive reader would see one field too few). */
    spit(p, HEAD R0 R1 "1,y,1,2,\"b=y, \"\"");
    SweepResult r = run_ok(d, p, 2, 0);
    ck_assert(r.repaired);
    ck_assert_uint_eq(r.resumed, 2);
    ck_assert_uint_eq(r.computed, 6);
    char *s = slurp(p);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    /* Cut even before the header was complete: starts over. */
    spit(p, "a,b,c,su");
    r = run_ok(d, p, 1, 0);
    ck_assert_uint_eq(r.resumed, 0);
    s = slurp(p);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    /* The same in the legacy form, without a sidecar: starts over in the
     * new form. */
    char *m = meta(p);
    g_unlink(m);
    spit(p, LEGACY "a,b,c,su");
    r = run_ok(d, p, 1, 0);
    ck_assert_uint_eq(r.resumed, 0);
    s = slurp(p);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    assert_meta(p, "1,2", "x,y", "1,3", 1, 1);
    /* Rows out of order (a -j 2 run killed) plus a torn line. */
    spit(p, HEAD R5 R0 R3 "2,y");
    r = run_ok(d, p, 1, 0);
    ck_assert(r.repaired);
    ck_assert_uint_eq(r.resumed, 3);
    s = slurp(p);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    g_free(m);
    g_free(p);
    sweep_def_free(d);
}
END_TEST

START_TEST(test_refuses_other_files)
{
    SweepDef *d = make_def("1,2", "x,y", "1K,3K", NULL);
    char *p = path("other.csv");
    char *m = meta(p);
    /* Another sweep's CSV (a=1,2,3), and one of another shard: refused,
     * the CSV and its record left as they were. */
    SweepDef *d3 = make_def("1,2,3", "x,y", "1K,3K", NULL);
    SweepDef *dsh = make_def("1,2", "x,y", "1K,3K", "1/2");
    const SweepDef *others[] = {d3, dsh};
    for (size_t i = 0; i < G_N_ELEMENTS(others); i++) {
        g_unlink(p);
        run_ok(others[i], p, 2, 0);
        char *before = slurp(p), *mbefore = slurp(m);
        GError *err = run_err(d, p, 1);
        ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_MISMATCH));
        ck_assert_msg(strstr(err->message, "other.csv: this CSV holds another sweep"), "%s",
                      err->message);
        ck_assert_msg(strstr(err->message, i ? "in the file: kind=ttest a=1,2 b=x,y c=1,3 "
                                               "shard=1/2\n"
                                             : "in the file: kind=ttest a=1,2,3 b=x,y c=1,3\n"),
                      "%s", err->message);
        g_error_free(err);
        char *after = slurp(p), *mafter = slurp(m);
        ck_assert_str_eq(before, after);
        ck_assert_str_eq(mbefore, mafter);
        g_free(before);
        g_free(after);
        g_free(mbefore);
        g_free(mafter);
    }
    /* The same refusal for a legacy file of another sweep; no sidecar is
     * made for it. */
    g_unlink(m);
    spit(p, "# vmsplit-sweep v1 kind=ttest a=1,2,3 b=x,y c=1,3\n" HEAD R0);
    GError *err = run_err(d, p, 1);
    ck_assert_msg(strstr(err->message, "other.csv: this CSV holds another sweep"), "%s",
                  err->message);
    g_error_free(err);
    ck_assert(!g_file_test(m, G_FILE_TEST_EXISTS));
    /* Same record, different header. */
    spit_meta(p, d);
    spit(p, "a,b,c,sum,notes\n" R0);
    err = run_err(d, p, 1);
    ck_assert_msg(strstr(err->message, "other.csv:1: the header differs"), "%s", err->message);
    g_error_free(err);
    /* A row that is not a point of the sweep, and a doubled one. */
    spit(p, HEAD R0 "9,x,1,10,n\n");
    err = run_err(d, p, 1);
    ck_assert_msg(strstr(err->message, "other.csv:3: point (a=9, b=x, c=1) is not part"), "%s",
                  err->message);
    g_error_free(err);
    spit(p, HEAD R0 R1 R0);
    err = run_err(d, p, 1);
    ck_assert_msg(strstr(err->message, "other.csv:4: point (a=1, b=x, c=1) appears twice "
                                       "(also at line 2)"), "%s", err->message);
    g_error_free(err);
    /* A broken record: an error naming it, the files left alone. */
    spit(m, "{\"schema\": \"vmsplit.sweep-meta/1\", \"kind\": \"ttest\"}");
    spit(p, HEAD R0);
    err = run_err(d, p, 1);
    ck_assert_msg(strstr(err->message, "other.csv.meta.json: expected \"parameters\""), "%s",
                  err->message);
    g_error_free(err);
    char *s = slurp(p);
    ck_assert_str_eq(s, HEAD R0);
    g_free(s);
    /* A CSV that is not a sweep's at all (no record), and a file that is
     * not even a CSV: refused, not overwritten. */
    g_unlink(m);
    static const char *const foreign[] = {"x,y\n1,2\n", "not a csv"};
    for (size_t i = 0; i < G_N_ELEMENTS(foreign); i++) {
        spit(p, foreign[i]);
        err = run_err(d, p, 1);
        ck_assert_msg(strstr(err->message, i ? "other.csv: exists and is not a vmsplit sweep CSV"
                                             : "other.csv: exists without its sweep record "),
                      "%s", err->message);
        g_error_free(err);
        s = slurp(p);
        ck_assert_str_eq(s, foreign[i]);
        g_free(s);
        ck_assert(!g_file_test(m, G_FILE_TEST_EXISTS));
    }
    sweep_def_free(dsh);
    g_free(m);
    g_free(p);
    sweep_def_free(d3);
    sweep_def_free(d);
}
END_TEST

START_TEST(test_failing_point)
{
    /* a=13 fails: the sweep stops with an error naming the point; with
     * -j 1 the four a=1 rows before it stay in the file. */
    SweepDef *d = make_def("1,13", "x,y", "1K,3K", NULL);
    char *p = path("fail.csv");
    GError *err = run_err(d, p, 1);
    ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_RUN));
    ck_assert_msg(strstr(err->message, "point 4 (a=13, b=x, c=1): unlucky"), "%s", err->message);
    g_error_free(err);
    char *s = slurp(p);
    ck_assert_str_eq(s, HEAD R0 R1 R2 R3);
    g_free(s);
    assert_meta(p, "1,13", "x,y", "1,3", 1, 1);
    g_free(p);
    sweep_def_free(d);
}
END_TEST

static char *run_shard(const char *spec, const char *name, guint jobs)
{
    SweepDef *d = make_def("1,2", "x,y", "1K,3K", spec);
    char *p = path(name);
    run_ok(d, p, jobs, 0);
    sweep_def_free(d);
    return p;
}

START_TEST(test_shards)
{
    /* Round robin: shard K/N holds the points whose number mod N is K-1. */
    char *s1 = run_shard("1/3", "s1.csv", 2), *s2 = run_shard("2/3", "s2.csv", 1),
         *s3 = run_shard("3/3", "s3.csv", 2);
    char *t = slurp(s2);
    ck_assert_str_eq(t, HEAD R1 R4 R7);
    g_free(t);
    assert_meta(s2, "1,2", "x,y", "1,3", 2, 3);
    char *out = path("merged.csv");
    const char *in[] = {s3, s1, s2};
    MergeOptions mo = {false};
    MergeResult mr;
    GError *err = NULL;
    ck_assert_msg(merge_csv_files(in, 3, out, &mo, &mr, &err), "%s", err ? err->message : "");
    ck_assert_uint_eq(mr.points, 8);
    ck_assert_uint_eq(mr.present, 8);
    t = slurp(out);
    ck_assert_str_eq(t, EXPECTED);
    g_free(t);
    /* Its record is the whole sweep's: the unsharded run's, byte for byte. */
    assert_meta(out, "1,2", "x,y", "1,3", 1, 1);
    char *whole = run_shard("1/1", "whole.csv", 1);
    char *mo_ = meta(out), *mw = meta(whole);
    char *tm = slurp(mo_), *tw = slurp(mw);
    ck_assert_str_eq(tm, tw);
    g_free(tm);
    g_free(tw);
    g_free(mo_);
    g_free(mw);
    g_free(whole);
    /* A missing shard: refused, naming it; --partial writes the rest. */
    ck_assert(!merge_csv_files(in + 1, 2, out, &mo, &mr, &err));
    ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_POINTS));
    ck_assert_msg(strstr(err->message, "2 of the sweep's 8 points are missing"), "%s", err->message);
    ck_assert_msg(strstr(err->message, "point 2 (a=1, b=y, c=1)"), "%s", err->message);
    ck_assert_msg(strstr(err->message, "no file among the inputs: 3/3"), "%s", err->message);
    g_clear_error(&err);
    mo.allow_missing = true;
    ck_assert(merge_csv_files(in + 1, 2, out, &mo, &mr, &err));
    ck_assert_uint_eq(mr.present, 6);
    t = slurp(out);
    ck_assert_str_eq(t, HEAD R0 R1 R3 R4 R6 R7);
    g_free(t);
    mo.allow_missing = false;
    /* A doubled point: a shard given twice, or a shard with the whole run. */
    const char *dup[] = {s1, s2, s3, s2};
    ck_assert(!merge_csv_files(dup, 4, out, &mo, &mr, &err));
    ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_POINTS));
    ck_assert_msg(strstr(err->message, "s2.csv:2: point (a=1, b=x, c=3) is doubled: already at "),
                  "%s", err->message);
    g_clear_error(&err);
    const char *dup2[] = {out, s1};
    mo.allow_missing = true;
    char *m2 = path("m2.csv");
    ck_assert(!merge_csv_files(dup2, 2, m2, &mo, &mr, &err));
    ck_assert_msg(strstr(err->message, "is doubled"), "%s", err->message);
    g_clear_error(&err);
    g_free(m2);
    g_free(out);
    g_free(s1);
    g_free(s2);
    g_free(s3);
}
END_TEST

START_TEST(test_merge_rejects)
{
    char *s1 = run_shard("1/2", "m1.csv", 1), *s2 = run_shard("2/2", "m2.csv", 1);
    char *out = path("out.csv");
    MergeOptions mo = {false};
    MergeResult mr;
    GError *err = NULL;
    /* Another sweep. */
    SweepDef *d = make_def("1,2", "x,z", "1K,3K", "2/2");
    char *o2 = path("other.csv");
    run_ok(d, o2, 1, 0);
    sweep_def_free(d);
    const char *in[] = {s1, o2};
    ck_assert(!merge_csv_files(in, 2, out, &mo, &mr, &err));
    ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_MISMATCH));
    ck_assert_msg(strstr(err->message, "other.csv: not the same sweep as"), "%s", err->message);
    ck_assert_msg(strstr(err->message, "other.csv: kind=ttest a=1,2 b=x,z c=1,3"), "%s",
                  err->message);
    g_clear_error(&err);
    /* The same with shard 2's record swapped for another sweep's: the
     * record, not the rows, says which sweep a file belongs to. */
    char *ms2 = meta(s2), *mo2 = meta(o2);
    char *t2 = slurp(s2);
    spit(o2, t2);
    const char *in3[] = {s1, o2};
    ck_assert(!merge_csv_files(in3, 2, out, &mo, &mr, &err));
    ck_assert_msg(strstr(err->message, "other.csv: not the same sweep as"), "%s", err->message);
    g_clear_error(&err);
    g_free(t2);
    /* A row from shard 2 in shard 1's file. */
    char *ms1 = meta(s1);
    char *t = slurp(s1), *tm1 = slurp(ms1);
    spit(mo2, tm1);
    char *bad = g_strconcat(t, R1, NULL);
    spit(o2, bad);
    const char *in2[] = {o2, s2};
    ck_assert(!merge_csv_files(in2, 2, out, &mo, &mr, &err));
    ck_assert_msg(strstr(err->message, "other.csv:6: point (a=1, b=x, c=3) is not part of the "
                                       "file's shard"), "%s", err->message);
    g_clear_error(&err);
    /* A torn shard (killed, not resumed). */
    char *torn = g_strconcat(t, "2,y", NULL);
    spit(o2, torn);
    ck_assert(!merge_csv_files(in2, 2, out, &mo, &mr, &err));
    ck_assert_msg(strstr(err->message, "other.csv:6: the last line is incomplete"), "%s",
                  err->message);
    g_clear_error(&err);
    /* Missing columns. */
    spit(o2, "a,b,c,sum\n");
    ck_assert(!merge_csv_files(in2, 2, out, &mo, &mr, &err));
    ck_assert_msg(strstr(err->message, "other.csv:1: the header differs"), "%s", err->message);
    g_clear_error(&err);
    /* No record: the message names the missing sidecar. */
    g_unlink(mo2);
    spit(o2, "a,b,c,sum,note\n");
    ck_assert(!merge_csv_files(in2, 2, out, &mo, &mr, &err));
    ck_assert_msg(strstr(err->message, "other.csv: no sweep record: expected "), "%s",
                  err->message);
    ck_assert_msg(strstr(err->message, "other.csv.meta.json beside it"), "%s", err->message);
    g_clear_error(&err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    g_free(tm1);
    g_free(ms1);
    g_free(ms2);
    g_free(mo2);
    g_free(torn);
    g_free(bad);
    g_free(t);
    g_free(o2);
    g_free(out);
    g_free(s1);
    g_free(s2);
}
END_TEST

START_TEST(test_comment_escaping)
{
    /* File names with blanks, commas, '=' and '%' survive the record (a
     * JSON string) and the legacy line (%-escaped, as sweeps of earlier
     * versions wrote it; the description in messages escapes the same). */
    SweepDef *d = sweep_def_new(&p_runner);
    GError *err = NULL;
    ck_assert(sweep_def_add_value(d, "file", "my trace,1=%.txt", &err));
    ck_assert(sweep_def_add_value(d, "file", "/tmp/b.lackey.gz", &err));
    ck_assert(sweep_def_finish(d, &err));
    char *c = sweep_def_describe(d, true);
    ck_assert_str_eq(c, "kind=tpath file=my%20trace%2C1%3D%25.txt,/tmp/b.lackey.gz");
    SweepDef *back = sweep_def_from_comment(
        " vmsplit-sweep v1 kind=tpath file=my%20trace%2C1%3D%25.txt,/tmp/b.lackey.gz", "x.csv",
        1, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    ck_assert(sweep_def_equal(d, back, false));
    const char *v[1];
    sweep_def_point(back, 0, v);
    ck_assert_str_eq(v[0], "my trace,1=%.txt");
    sweep_def_free(back);
    char *json = sweep_record_to_json(d, true);
    back = sweep_record_from_json(json, strlen(json), "x.json", &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    ck_assert(sweep_def_equal(d, back, false));
    sweep_def_point(back, 0, v);
    ck_assert_str_eq(v[0], "my trace,1=%.txt");
    sweep_def_free(back);
    g_free(json);
    g_free(c);
    sweep_def_free(d);
    /* Malformed sweep lines. */
    static const struct {
        const char *line, *expect;
    } bad[] = {
        {" vmsplit-sweep v9 kind=ttest", "x.csv:1: expected '# vmsplit-sweep v1 kind=KIND"},
        {" vmsplit-sweep v1 kind=nope a=1", "x.csv:1: unknown sweep kind 'nope'"},
        /* %FF is byte 0xff, not UTF-8: the JSON record could not hold it */
        {" vmsplit-sweep v1 kind=ttest a=1 b=%FF c=1",
         "x.csv:1: --beta: value '\xef\xbf\xbd' is not valid UTF-8"},
        {" vmsplit-sweep v1 kind=ttest a=1 b=x", "x.csv:1: the sweep line has no values for c"},
        {" vmsplit-sweep v1 kind=ttest a=1 b=x c=1 d=2", "x.csv:1: unexpected 'd=2'"},
        {" vmsplit-sweep v1 kind=ttest a=1 a=2 b=x c=1", "x.csv:1: a appears twice"},
        {" vmsplit-sweep v1 kind=ttest a=1 b=x c=1 shard=3/2", "x.csv:1: --shard: expected K/N"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        ck_assert(!sweep_def_from_comment(bad[i].line, "x.csv", 1, &err));
        ck_assert_msg(err && g_str_has_prefix(err->message, bad[i].expect), "%zu: %s", i,
                      err ? err->message : "(no error)");
        g_clear_error(&err);
    }
    /* Not a sweep line at all: NULL without an error. */
    ck_assert(!sweep_def_from_comment(" just a comment", "x.csv", 1, &err));
    ck_assert(!err);
}
END_TEST

START_TEST(test_record_json)
{
    /* Hand-written records, as a script or an older or newer vmsplit might
     * write them: members in another order, other blanks, a member this
     * version does not know (ignored), no shard (the whole sweep). */
    static const char *const good[] = {
        "{\"kind\":\"ttest\",\"parameters\":{\"c\":[\"1\",\"3\"],\"b\":[\"x\",\"y\"],"
        "\"a\":[\"1\",\"2\"]},\"shard\":{\"n\":3,\"k\":2},\"note\":\"by hand\","
        "\"schema\":\"vmsplit.sweep-meta/1\"}",
        "{\n \"schema\": \"vmsplit.sweep-meta/1\",\n \"kind\": \"ttest\",\n"
        " \"parameters\": {\"a\": [\"1\", \"2\"], \"b\": [\"x\", \"y\"], \"c\": [\"1\", \"3\"]}\n}\n",
    };
    SweepDef *want[] = {make_def("1,2", "x,y", "1K,3K", "2/3"),
                        make_def("1,2", "x,y", "1K,3K", NULL)};
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        SweepDef *d = sweep_record_from_json(good[i], strlen(good[i]), "x.json", &err);
        ck_assert_msg(d, "%zu: %s", i, err ? err->message : "");
        ck_assert_msg(sweep_def_equal(d, want[i], false), "%zu", i);
        sweep_def_free(d);
        sweep_def_free(want[i]);
    }
#define REC(params, shard) "{\"schema\":\"vmsplit.sweep-meta/1\",\"kind\":\"ttest\"," \
                           "\"parameters\":{" params "}" shard "}"
#define ABC "\"a\":[\"1\"],\"b\":[\"x\"],\"c\":[\"1\"]"
    static const struct {
        const char *json, *expect;
    } bad[] = {
        {"{\"schema\": ", "x.json: not JSON: "},
        {"[1, 2]", "x.json: expected a JSON object"},
        {"{\"kind\":\"ttest\"}", "x.json: expected \"schema\": \"vmsplit.sweep-meta/1\", found none"},
        {"{\"schema\":\"vmsplit.sweep-meta/2\",\"kind\":\"ttest\"}",
         "x.json: expected \"schema\": \"vmsplit.sweep-meta/1\", found \"vmsplit.sweep-meta/2\""},
        {"{\"schema\":\"vmsplit.sweep-meta/1\",\"parameters\":{}}", "x.json: expected \"kind\""},
        {"{\"schema\":\"vmsplit.sweep-meta/1\",\"kind\":\"nope\",\"parameters\":{}}",
         "x.json: unknown sweep kind 'nope'"},
        {"{\"schema\":\"vmsplit.sweep-meta/1\",\"kind\":\"ttest\"}", "x.json: expected \"parameters\""},
        {REC("\"a\":[\"1\"],\"b\":[\"x\"]", ""), "x.json: expected a non-empty list of values for \"c\""},
        {REC("\"a\":[\"1\"],\"b\":[\"x\"],\"c\":[]", ""),
         "x.json: expected a non-empty list of values for \"c\""},
        {REC(ABC ",\"d\":[\"2\"]", ""), "x.json: unexpected parameter \"d\""},
        {REC("\"a\":[1],\"b\":[\"x\"],\"c\":[\"1\"]", ""),
         "x.json: value 1 of \"a\": expected a non-empty string"},
        {REC("\"a\":[\"1\",\"\"],\"b\":[\"x\"],\"c\":[\"1\"]", ""),
         "x.json: value 2 of \"a\": expected a non-empty string"},
        {REC("\"a\":[\"1\",\"1\"],\"b\":[\"x\"],\"c\":[\"1\"]", ""),
         "x.json: --alpha: value '1' appears twice"},
        {REC(ABC, ",\"shard\":{\"k\":3,\"n\":2}"), "x.json: --shard: expected K/N"},
        {REC(ABC, ",\"shard\":\"1/2\""), "x.json: expected \"shard\": {\"k\": K, \"n\": N}"},
        /* 2^32 + 1 and 2^32 + 2: read as 1/2 before the strict parse */
        {REC(ABC, ",\"shard\":{\"k\":4294967297,\"n\":4294967298}"),
         "x.json: --shard: expected K/N"},
        {REC("\"a\":[\"1\"],\"b\":[\"\xff\"],\"c\":[\"1\"]", ""), "x.json: not JSON"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        ck_assert(!sweep_record_from_json(bad[i].json, strlen(bad[i].json), "x.json", &err));
        ck_assert_msg(err && g_str_has_prefix(err->message, bad[i].expect), "%zu: %s", i,
                      err ? err->message : "(no error)");
        g_clear_error(&err);
    }
#undef REC
#undef ABC
}
END_TEST

START_TEST(test_legacy_files)
{
    /* CSVs written before the record moved out: resuming one converts it
     * (record to the sidecar, the CSV without its comment line, a torn
     * last line cut), rows already there are kept. */
    SweepDef *d = make_def("1,2", "x,y", "1K,3K", NULL);
    char *p = path("old.csv"), *m = meta(p);
    spit(p, LEGACY HEAD R5 R0 R3 "2,y");
    SweepResult r = run_ok(d, p, 2, 0);
    ck_assert(r.repaired);
    ck_assert_uint_eq(r.resumed, 3);
    ck_assert_uint_eq(r.computed, 5);
    char *s = slurp(p);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    assert_meta(p, "1,2", "x,y", "1,3", 1, 1);
    /* Converted even when stopped right after (nothing computed yet is
     * lost: the conversion comes before the first new row). */
    g_unlink(m);
    spit(p, LEGACY HEAD R5 R0);
    r = run_ok(d, p, 1, 1);
    ck_assert(!r.complete);
    s = slurp(p);
    ck_assert_uint_eq(count_lines(s), 1 + 3);
    ck_assert(g_str_has_prefix(s, HEAD R5 R0));
    g_free(s);
    assert_meta(p, "1,2", "x,y", "1,3", 1, 1);
    /* A complete legacy file: converted, rows untouched. */
    g_unlink(m);
    spit(p, LEGACY HEAD R0 R1 R2 R3 R4 R5 R6 R7);
    r = run_ok(d, p, 1, 0);
    ck_assert_uint_eq(r.computed, 0);
    s = slurp(p);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    /* Merge reads legacy shards beside new ones; merging one old CSV
     * converts it. */
    char *a = path("old1.csv"), *b = run_shard("2/2", "new2.csv", 1), *out = path("mo.csv");
    spit(a, "# vmsplit-sweep v1 kind=ttest a=1,2 b=x,y c=1,3 shard=1/2\n" HEAD R0 R2 R4 R6);
    const char *in[] = {b, a};
    MergeOptions mo = {false};
    MergeResult mr;
    GError *err = NULL;
    ck_assert_msg(merge_csv_files(in, 2, out, &mo, &mr, &err), "%s", err ? err->message : "");
    s = slurp(out);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    assert_meta(out, "1,2", "x,y", "1,3", 1, 1);
    g_unlink(m);
    spit(p, LEGACY HEAD R0 R1 R2 R3 R4 R5 R6 R7);
    const char *one[] = {p};
    ck_assert_msg(merge_csv_files(one, 1, out, &mo, &mr, &err), "%s", err ? err->message : "");
    s = slurp(out);
    ck_assert_str_eq(s, EXPECTED);
    g_free(s);
    /* A legacy shard of another sweep is still told apart. */
    spit(a, "# vmsplit-sweep v1 kind=ttest a=1,2 b=x,z c=1,3 shard=1/2\n" HEAD R0);
    ck_assert(!merge_csv_files(in, 2, out, &mo, &mr, &err));
    ck_assert_msg(strstr(err->message, "old1.csv: not the same sweep as"), "%s", err->message);
    g_clear_error(&err);
    g_free(out);
    g_free(a);
    g_free(b);
    g_free(m);
    g_free(p);
    sweep_def_free(d);
}
END_TEST

static Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_enumeration);
    tcase_add_test(tc, test_bad_values);
    tcase_add_test(tc, test_j1_j2_same);
    tcase_add_test(tc, test_stop_and_resume);
    tcase_add_test(tc, test_torn_last_line);
    tcase_add_test(tc, test_refuses_other_files);
    tcase_add_test(tc, test_failing_point);
    tcase_add_test(tc, test_shards);
    tcase_add_test(tc, test_merge_rejects);
    tcase_add_test(tc, test_comment_escaping);
    tcase_add_test(tc, test_record_json);
    tcase_add_test(tc, test_legacy_files);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sweep_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
