/* End to end: `vmsplit sweep --kind replay` as a user runs it (the built
 * binary, path in argv[1]), on the lmbench-style null-syscall generator:
 * -j 1 and -j 2 give the same bytes; the rows obey what the design and the
 * SDM say independently of the model's numbers (3g1g is its own baseline;
 * 4G/4G writes CR3 on every entry and every exit and each write without
 * PCID is one flush; the per-syscall cost is fixed, so less user work per
 * syscall means more overhead; --rate R on a 2.8 GHz CPU means 2.8e9 / R
 * user instructions per syscall); a trace file and the same gen: workload
 * give the same row; the CSV plots; bad workloads are rejected before any
 * point runs, exit 2. Small counts: CI also runs this under ASan. */
#include "report/csv.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

static const char *exe;
static char *tmpdir, *csv_j1, *csv_j2;
static int status_j1 = -1, status_j2 = -1;

#define COUNT 200
#define RATE_LOW 50000
#define RATE_HIGH 200000
/* p4-northwood is a 2.8 GHz Pentium 4 (presets/p4-northwood.ini). */
#define P4_HZ 2.8e9

#define SWEEP_ARGS "sweep", "--kind", "replay", "--workloads", "gen:null", "--count", "200", \
                   "--rate", "50000,200000", "--layouts", "3g1g,4g4g", "-q"

static char *tpath(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

/* Run vmsplit with args (NULL-terminated); the exit status (-1 if it did
 * not exit normally), stderr in *err_out (may be NULL). No ck_assert: also
 * used from the unchecked fixture. */
static int run(char **err_out, const char *first, ...)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)exe);
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    char *errs = NULL;
    int status = -1;
    bool ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                           NULL, NULL, &errs, &status, NULL);
    g_ptr_array_unref(argv);
    if (err_out)
        *err_out = errs ? errs : g_strdup("");
    else
        g_free(errs);
    return ok && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Once for the suite (in the parent): the same sweep with -j 1 and -j 2. */
static void sweep_setup(void)
{
    tmpdir = g_dir_make_tmp("vmsplit-sweepreplay-XXXXXX", NULL);
    g_assert(tmpdir);
    csv_j1 = tpath("j1.csv");
    csv_j2 = tpath("j2.csv");
    status_j1 = run(NULL, SWEEP_ARGS, "-j", "1", "-o", csv_j1, NULL);
    status_j2 = run(NULL, SWEEP_ARGS, "-j", "2", "-o", csv_j2, NULL);
}

static void sweep_teardown(void)
{
    GDir *d = g_dir_open(tmpdir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
        char *p = g_build_filename(tmpdir, n, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(tmpdir);
    g_free(tmpdir);
    g_free(csv_j1);
    g_free(csv_j2);
}

static CsvTable *table(void)
{
    ck_assert_int_eq(status_j1, 0);
    GError *e = NULL;
    CsvTable *t = csv_read_file(csv_j1, CSV_READ_STRICT, &e);
    ck_assert_msg(t, "%s", e ? e->message : "");
    ck_assert_uint_eq(t->rows->len, 4);  /* 2 layouts x 2 rates */
    return t;
}

static const char *get(const CsvTable *t, guint r, const char *col)
{
    int c = csv_table_column(t, col);
    ck_assert_msg(c >= 0, "no column %s", col);
    return csv_table_get(t, r, (guint)c);
}

static double dget(const CsvTable *t, guint r, const char *col)
{
    return g_ascii_strtod(get(t, r, col), NULL);
}

static guint64 uget(const CsvTable *t, guint r, const char *col)
{
    return g_ascii_strtoull(get(t, r, col), NULL, 10);
}

/* The row of layout at rate. */
static guint row(const CsvTable *t, const char *layout, unsigned rate)
{
    for (guint r = 0; r < t->rows->len; r++)
        if (!strcmp(get(t, r, "layout"), layout) && uget(t, r, "rate") == rate)
            return r;
    ck_abort_msg("no row %s at rate %u", layout, rate);
    return 0;
}

START_TEST(test_jobs_same_bytes)
{
    ck_assert_int_eq(status_j1, 0);
    ck_assert_int_eq(status_j2, 0);
    char *a = NULL, *b = NULL;
    ck_assert(g_file_get_contents(csv_j1, &a, NULL, NULL));
    ck_assert(g_file_get_contents(csv_j2, &b, NULL, NULL));
    ck_assert_str_eq(a, b);
    ck_assert(g_str_has_prefix(a, "workload,"));  /* the header first */
    char *ma = g_strconcat(csv_j1, ".meta.json", NULL), *mb = g_strconcat(csv_j2, ".meta.json", NULL);
    char *ra = NULL, *rb = NULL;
    ck_assert(g_file_get_contents(ma, &ra, NULL, NULL));
    ck_assert(g_file_get_contents(mb, &rb, NULL, NULL));
    ck_assert_str_eq(ra, rb);
    ck_assert(strstr(ra, "\"replay\""));
    g_free(ra);
    g_free(rb);
    g_free(ma);
    g_free(mb);
    g_free(a);
    g_free(b);
}
END_TEST

START_TEST(test_overhead_against_3g1g)
{
    CsvTable *t = table();
    for (guint r = 0; r < t->rows->len; r++) {
        bool base = !strcmp(get(t, r, "layout"), "3g1g");
        guint64 cyc = uget(t, r, "cycles"), bcyc = uget(t, r, "base_cycles");
        double ov = dget(t, r, "overhead_pct");
        if (base) {
            /* 3g1g is the baseline itself. */
            ck_assert_msg(ov == 0.0, "3g1g overhead %s", get(t, r, "overhead_pct"));
            ck_assert_uint_eq(cyc, bcyc);
        } else {
            ck_assert_msg(ov > 0.0, "4g4g overhead %s", get(t, r, "overhead_pct"));
            ck_assert_uint_gt(cyc, bcyc);
        }
        /* The definition, from the row's own cycle counts. */
        double want = 100.0 * ((double)cyc - (double)bcyc) / (double)bcyc;
        ck_assert_msg(fabs(ov - want) < 1e-4, "overhead %f, cycles give %f", ov, want);
        /* syscalls per simulated second at the preset's 2.8 GHz. */
        double rate = (double)uget(t, r, "syscalls") / ((double)cyc / P4_HZ);
        ck_assert_msg(fabs(dget(t, r, "syscalls_per_sec") - rate) < 0.01 * rate,
                      "syscalls_per_sec %s, expected %f", get(t, r, "syscalls_per_sec"), rate);
    }
    /* The baseline does not depend on the layout compared with it. */
    for (unsigned rate = RATE_LOW; rate <= RATE_HIGH; rate *= 4)
        ck_assert_uint_eq(uget(t, row(t, "3g1g", rate), "base_cycles"),
                          uget(t, row(t, "4g4g", rate), "base_cycles"));
    csv_table_free(t);
}
END_TEST

START_TEST(test_cr3_writes)
{
    /* A null-syscall loop has no context switches: 4G/4G writes CR3 once
     * on entry and once on exit of every call (the 2003 mail's design);
     * 3G/1G never. On i686 (no PCID) each MOV CR3 is one TLB flush
     * (SDM Vol. 3A 4.10.4.1). */
    CsvTable *t = table();
    for (guint r = 0; r < t->rows->len; r++) {
        guint64 sys = uget(t, r, "syscalls");
        ck_assert_uint_ge(sys, COUNT);
        ck_assert_uint_eq(uget(t, r, "switches"), 0);
        if (!strcmp(get(t, r, "layout"), "4g4g")) {
            ck_assert_uint_eq(uget(t, r, "cr3_writes"), 2 * sys);
            ck_assert_uint_eq(uget(t, r, "tlb_flushes"), 2 * sys);
            ck_assert_uint_gt(uget(t, r, "tlb_dropped"), 0);
        } else {
            ck_assert_uint_eq(uget(t, r, "cr3_writes"), 0);
            ck_assert_uint_eq(uget(t, r, "tlb_flushes"), 0);
        }
        ck_assert_uint_eq(uget(t, r, "kmaps"), 0);  /* getppid copies nothing */
    }
    csv_table_free(t);
}
END_TEST

START_TEST(test_rate)
{
    CsvTable *t = table();
    /* --rate R is what the workload reaches under 3g1g on the point's CPU
     * (gen_rate.h promises 0.5 %; users are promised 5 %): the 3g1g
     * replay's own rate, in both the 3g1g row and the 4g4g row's baseline
     * columns. 4g4g, with the same user work, reaches less: each of its
     * syscalls costs more. And the rate is not the nominal 2.8e9 / R user
     * instructions at IPC 1: the kernel's share takes some of 1/R. */
    for (unsigned rate = RATE_LOW; rate <= RATE_HIGH; rate *= 4) {
        guint r = row(t, "4g4g", rate), b = row(t, "3g1g", rate);
        ck_assert_msg(fabs(dget(t, b, "syscalls_per_sec") / rate - 1) < 0.005,
                      "3g1g at --rate %u: %s syscalls/s", rate, get(t, b, "syscalls_per_sec"));
        ck_assert_str_eq(get(t, r, "base_syscalls_per_sec"), get(t, b, "syscalls_per_sec"));
        ck_assert_double_lt(dget(t, r, "syscalls_per_sec"), rate);
        double per = (double)uget(t, r, "user_insns") / (double)uget(t, r, "syscalls");
        ck_assert_double_lt(per, P4_HZ / rate);
    }
    /* The per-syscall cost of 4G/4G is fixed; less user work per syscall
     * (a higher rate) leaves it a larger share of the time. */
    guint lo = row(t, "4g4g", RATE_LOW), hi = row(t, "4g4g", RATE_HIGH);
    ck_assert_msg(dget(t, hi, "overhead_pct") > dget(t, lo, "overhead_pct"),
                  "overhead %s%% at %u/s, %s%% at %u/s", get(t, hi, "overhead_pct"), RATE_HIGH,
                  get(t, lo, "overhead_pct"), RATE_LOW);
    ck_assert_double_gt(dget(t, hi, "syscalls_per_sec"), dget(t, lo, "syscalls_per_sec"));
    double elo = dget(t, lo, "extra_ns_per_syscall"), ehi = dget(t, hi, "extra_ns_per_syscall");
    ck_assert_double_gt(elo, 0);
    ck_assert_msg(fabs(ehi - elo) < 0.1 * elo, "extra per syscall %f ns and %f ns", elo, ehi);
    csv_table_free(t);
}
END_TEST

/* A legacy point's rate is its own: --rate R is reached by the legacy
 * 3g1g replay (the baseline of a legacy point), not by PAE's. gen:db has a
 * TLB footprint, so its user work runs faster on 2-level page tables: the
 * user work solved under PAE 3g1g realises about 4 % more than R under
 * legacy (208,201/s for 200,000 on p4-northwood), outside the 0.5 % the
 * solver promises. */
START_TEST(test_rate_legacy)
{
    char *out = tpath("legacy-rate.csv");
    ck_assert_int_eq(run(NULL, "sweep", "--kind", "replay", "--workloads", "gen:db", "--count",
                         "200", "--rate", "200000", "--layouts", "3g1g,4g4g", "--paging",
                         "pae,legacy", "-q", "-o", out, NULL), 0);
    GError *e = NULL;
    CsvTable *t = csv_read_file(out, CSV_READ_STRICT, &e);
    ck_assert_msg(t, "%s", e ? e->message : "");
    ck_assert_uint_eq(t->rows->len, 4);
    unsigned legacy_rows = 0;
    for (guint r = 0; r < t->rows->len; r++) {
        double base = dget(t, r, "base_syscalls_per_sec");
        ck_assert_msg(fabs(base / 200000 - 1) < 0.005, "%s %s: base %s syscalls/s for 200000",
                      get(t, r, "layout"), get(t, r, "paging"), get(t, r, "base_syscalls_per_sec"));
        legacy_rows += !strcmp(get(t, r, "paging"), "legacy");
    }
    ck_assert_uint_eq(legacy_rows, 2);
    csv_table_free(t);
    g_free(out);
}
END_TEST

START_TEST(test_trace_file_same_as_gen)
{
    /* `vmsplit gen null` at the same rate on the same CPU, replayed from a
     * file, is the same workload as gen:null at that rate. */
    char *tr = tpath("null.vmt"), *out = tpath("file.csv");
    ck_assert_int_eq(run(NULL, "gen", "null", "--count", "200", "--rate", "200000",
                         "--cpu", "p4-northwood", "-o", tr, NULL), 0);
    ck_assert_int_eq(run(NULL, "sweep", "--kind", "replay", "--workloads", tr, "--layouts",
                         "4g4g", "-q", "-o", out, NULL), 0);
    GError *e = NULL;
    CsvTable *f = csv_read_file(out, CSV_READ_STRICT, &e), *t = table();
    ck_assert_msg(f, "%s", e ? e->message : "");
    ck_assert_uint_eq(f->rows->len, 1);
    guint r = row(t, "4g4g", RATE_HIGH);
    static const char *const cols[] = {"cycles", "base_cycles", "syscalls", "cr3_writes",
                                       "walks", "overhead_pct"};
    for (size_t i = 0; i < G_N_ELEMENTS(cols); i++)
        ck_assert_str_eq(get(f, 0, cols[i]), get(t, r, cols[i]));
    ck_assert_str_eq(get(f, 0, "workload"), tr);
    csv_table_free(f);
    csv_table_free(t);
    g_free(tr);
    g_free(out);
}
END_TEST

/* The fixture's sweep as vmsplit wrote it before the paging parameter
 * existed: no paging column, and a record without "paging" (sidecar) or
 * the comment line of before the sidecar. That sweep ran PAE, the
 * default, so it is the same sweep as SWEEP_ARGS: resume, merge and plot
 * take it, and what they write is the fresh sweep's CSV to the byte. */
#define OLD_RECORD                                                                              \
    "{\"schema\":\"vmsplit.sweep-meta/1\",\"written_by\":\"vmsplit 0.1.0\",\"kind\":\"replay\"," \
    "\"parameters\":{\"workload\":[\"gen:null\"],\"cpu\":[\"p4-northwood\"],"                    \
    "\"layout\":[\"3g1g\",\"4g4g\"],\"entry\":[\"int80\"],\"ram_mib\":[\"4096\"],"              \
    "\"dtlb_entries\":[\"0\"],\"itlb_entries\":[\"0\"],\"count\":[\"200\"],\"seed\":[\"1\"],"   \
    "\"rate\":[\"50000\",\"200000\"]},\"shard\":{\"k\":1,\"n\":1}}\n"
#define OLD_LINE                                                                                \
    "# vmsplit-sweep v1 kind=replay workload=gen:null cpu=p4-northwood layout=3g1g,4g4g "     \
    "entry=int80 ram_mib=4096 dtlb_entries=0 itlb_entries=0 count=200 seed=1 "                \
    "rate=50000,200000\n"

/* csv_j1's first `keep` lines after the header, without the paging column
 * (its values hold no commas or quotes), header included. */
static char *without_paging(guint keep)
{
    char *text = NULL;
    ck_assert(g_file_get_contents(csv_j1, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    char **head = g_strsplit(lines[0], ",", -1);
    int col = -1;
    for (int i = 0; head[i]; i++)
        if (!strcmp(head[i], "paging"))
            col = i;
    ck_assert_int_ge(col, 0);
    GString *out = g_string_new(NULL);
    for (guint l = 0; lines[l] && *lines[l] && l <= keep; l++) {
        char **f = g_strsplit(lines[l], ",", -1);
        for (int i = 0; f[i]; i++)
            if (i != col)
                g_string_append_printf(out, "%s%s", out->len && out->str[out->len - 1] != '\n'
                                                        ? "," : "", f[i]);
        g_string_append_c(out, '\n');
        g_strfreev(f);
    }
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
    return g_string_free(out, FALSE);
}

static void assert_same_file(const char *a, const char *b)
{
    char *x = NULL, *y = NULL;
    ck_assert(g_file_get_contents(a, &x, NULL, NULL));
    ck_assert(g_file_get_contents(b, &y, NULL, NULL));
    ck_assert_str_eq(x, y);
    g_free(x);
    g_free(y);
}

START_TEST(test_record_before_paging)
{
    ck_assert_int_eq(status_j1, 0);
    /* Resume: three of the four rows and the old sidecar. */
    char *old = tpath("old.csv"), *side = tpath("old.csv.meta.json"), *err = NULL;
    char *part = without_paging(3);
    ck_assert(g_file_set_contents(old, part, -1, NULL));
    ck_assert(g_file_set_contents(side, OLD_RECORD, -1, NULL));
    int st = run(&err, SWEEP_ARGS, "-o", old, NULL);
    ck_assert_msg(st == 0, "resume: exit %d: %s", st, err);
    assert_same_file(old, csv_j1);
    char *j1side = g_strconcat(csv_j1, ".meta.json", NULL);
    assert_same_file(side, j1side);
    g_free(err);
    /* Merge and plot: all rows and the comment line. */
    char *line = tpath("line.csv"), *merged = tpath("merged.csv"), *png = tpath("line.png");
    char *all = without_paging(4), *text = g_strconcat(OLD_LINE, all, NULL);
    ck_assert(g_file_set_contents(line, text, -1, NULL));
    st = run(&err, "merge", line, "-o", merged, "-q", NULL);
    ck_assert_msg(st == 0, "merge: exit %d: %s", st, err);
    assert_same_file(merged, csv_j1);
    g_free(err);
    st = run(&err, "plot", line, "-o", png, "--kind", "overhead", NULL);
    ck_assert_msg(st == 0, "plot: exit %d: %s", st, err);
    g_free(err);
    /* The old record and a PAE shard of today merge too; a record that
     * lacks a parameter with no single default is still refused. */
    ck_assert(g_file_set_contents(old, all, -1, NULL));
    ck_assert(g_file_set_contents(side, OLD_RECORD, -1, NULL));
    st = run(&err, "merge", old, "-o", merged, "-q", NULL);
    ck_assert_msg(st == 0, "merge of the old sidecar: exit %d: %s", st, err);
    assert_same_file(merged, csv_j1);
    g_free(err);
    char *no_workload = g_strdup(OLD_LINE);
    char *at = strstr(no_workload, "workload=gen:null ");
    memmove(at, at + strlen("workload=gen:null "), strlen(at + strlen("workload=gen:null ")) + 1);
    g_free(text);
    text = g_strconcat(no_workload, all, NULL);
    ck_assert(g_file_set_contents(line, text, -1, NULL));
    st = run(&err, "merge", line, "-o", merged, "-q", NULL);
    ck_assert_msg(st == 2 && strstr(err, "no values for workload"), "exit %d: %s", st, err);
    g_free(err);
    g_free(no_workload);
    g_free(text);
    g_free(all);
    g_free(part);
    g_free(j1side);
    g_free(line);
    g_free(merged);
    g_free(png);
    g_free(side);
    g_free(old);
}
END_TEST

static void assert_png(const char *p)
{
    char *s = NULL;
    gsize len = 0;
    ck_assert_msg(g_file_get_contents(p, &s, &len, NULL), "no %s", p);
    /* PNG signature, PNG spec 5.2. */
    ck_assert_msg(len > 8 && memcmp(s, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: not a PNG", p);
    g_free(s);
}

START_TEST(test_plot)
{
    ck_assert_int_eq(status_j1, 0);
    static const char *const kinds[] = {"overhead", "kpti"};
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        char *name = g_strconcat(kinds[i], ".png", NULL), *png = tpath(name), *err = NULL;
        int st = run(&err, "plot", csv_j1, "-o", png, "--kind", kinds[i], NULL);
        ck_assert_msg(st == 0, "plot --kind %s: %d: %s", kinds[i], st, err);
        assert_png(png);
        g_free(err);
        g_free(png);
        g_free(name);
    }
}
END_TEST

START_TEST(test_bad_workloads)
{
    char *out = tpath("bad.csv"), *junk = tpath("junk.vmt");
    ck_assert(g_file_set_contents(junk, "not a trace\n", -1, NULL));
    static const struct {
        const char *workloads, *expect;
    } cases[] = {
        {"gen:nope", "unknown generator 'nope'"},
        {"gen:null,gen:nope", "unknown generator 'nope'"},
        {"/nonexistent/app.vmt", "/nonexistent/app.vmt: no such trace file"},
        {NULL, "junk.vmt"},   /* exists, but is not a vmsplit trace */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *err = NULL;
        const char *w = cases[i].workloads ? cases[i].workloads : junk;
        int st = run(&err, "sweep", "--kind", "replay", "--workloads", w, "--layouts", "4g4g",
                     "--count", "200", "-q", "-o", out, NULL);
        ck_assert_msg(st == 2, "%s: exit %d: %s", w, st, err);
        ck_assert_msg(strstr(err, cases[i].expect), "%s: %s", w, err);
        /* Rejected before any point ran: no CSV at all. */
        ck_assert_msg(!g_file_test(out, G_FILE_TEST_EXISTS), "%s: %s was written", w, out);
        g_free(err);
    }
    /* Other parameters too. */
    char *err = NULL;
    ck_assert_int_eq(run(&err, "sweep", "--kind", "replay", "--workloads", "gen:null",
                         "--layouts", "4g4g,5g5g", "-o", out, NULL), 2);
    ck_assert_msg(strstr(err, "5g5g"), "%s", err);
    g_free(err);
    ck_assert_int_eq(run(&err, "sweep", "--kind", "replay", "--workloads", "gen:null",
                         "--count", "0", "-o", out, NULL), 2);
    ck_assert_msg(strstr(err, "--count"), "%s", err);
    g_free(err);
    ck_assert_int_eq(run(&err, "sweep", "--kind", "replay", "-o", out, NULL), 2);
    ck_assert_msg(strstr(err, "needs --workloads"), "%s", err);
    g_free(err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    g_free(junk);
    g_free(out);
}
END_TEST

int main(int argc, char **argv)
{
    exe = argc > 1 ? argv[1] : g_getenv("VMSPLIT_EXE");
    if (!exe) {
        fprintf(stderr, "usage: %s PATH-TO-VMSPLIT\n", argv[0]);
        return 2;
    }
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("sweep-replay");
    tcase_add_unchecked_fixture(tc, sweep_setup, sweep_teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_jobs_same_bytes);
    tcase_add_test(tc, test_overhead_against_3g1g);
    tcase_add_test(tc, test_cr3_writes);
    tcase_add_test(tc, test_rate);
    tcase_add_test(tc, test_rate_legacy);
    tcase_add_test(tc, test_record_before_paging);
    tcase_add_test(tc, test_trace_file_same_as_gen);
    tcase_add_test(tc, test_plot);
    tcase_add_test(tc, test_bad_workloads);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
