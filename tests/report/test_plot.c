/* The plot driver (src/report/plot.h) and the scripts in plots/: each plot
 * kind, on a small hand-written CSV (tests/report/data/), gives a PNG (its
 * 8-byte signature, PNG spec §5.2) and an SVG (an XML document starting
 * "<?xml" or "<svg"); missing columns, an unknown kind and a missing
 * gnuplot are clear errors. */
#include "report/csv.h"
#include "report/plot.h"

#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

static char *tmpdir;

static void setup(void)
{
    tmpdir = g_dir_make_tmp("vmsplit-plot-XXXXXX", NULL);
    ck_assert(tmpdir);
}

static void teardown(void)
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
}

static char *data(const char *name)
{
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    ck_assert_msg(src, "VMSPLIT_SOURCE_DIR not set (run through meson test)");
    return g_build_filename(src, "tests", "report", "data", name, NULL);
}

static void assert_png(const char *p)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    char *s = NULL;
    gsize n = 0;
    ck_assert_msg(g_file_get_contents(p, &s, &n, NULL), "%s not written", p);
    ck_assert_msg(n > 1000, "%s: only %zu bytes", p, (size_t)n);
    ck_assert_msg(memcmp(s, sig, 8) == 0, "%s: not a PNG", p);
    g_free(s);
}

static void assert_svg(const char *p)
{
    char *s = NULL;
    gsize n = 0;
    ck_assert_msg(g_file_get_contents(p, &s, &n, NULL), "%s not written", p);
    ck_assert_msg(g_str_has_prefix(s, "<?xml") || g_str_has_prefix(s, "<svg"), "%s: not SVG", p);
    ck_assert_msg(strstr(s, "</svg>"), "%s: SVG not closed", p);
    g_free(s);
}

static void assert_pdf(const char *p)
{
    char *s = NULL;
    gsize n = 0;
    ck_assert_msg(g_file_get_contents(p, &s, &n, NULL), "%s not written", p);
    ck_assert_msg(n > 1000 && g_str_has_prefix(s, "%PDF-"), "%s: not a PDF", p);
    /* The trailer; the body is binary (NULs), so compare the tail bytes. */
    ck_assert_msg(memmem(s + n - 16, 16, "%%EOF", 5), "%s: PDF not closed", p);
    g_free(s);
}

/* kind (NULL: detect), input CSV under data/, the expected text in the SVG
 * (a legend entry the script should draw). */
static const struct {
    const char *kind, *csv, *svg_text;
} cases[] = {
    {"overhead", "overhead.csv", "4G/4G mail: 0-30 %"},
    {"kpti", "overhead.csv", "Gregg 2018"},
    {"latency", "latency.csv", "CR3 writes"},
    {"tlb", "tlb.csv", "plru"},
    {"lowmem", "lowmem.csv", "does not boot"},
    {NULL, "lowmem.csv", "no boot from 64 GiB"},
    {NULL, "latency.csv", "handler body"},
    {NULL, "tlb.csv", "DTLB misses"},
    {NULL, "overhead.csv", "kpti-pcid"},
    /* compare --csv (vmsplit compare --csv --layouts 3g1g,4g4g,kpti,kpti-pcid
     * of a 10-call null trace): only its summary rows carry an overhead. */
    {NULL, "compare.csv", "kpti-pcid (what-if)"},
    {"kpti", "compare.csv", "Gregg 2018"},
    {"tornado", "tornado.csv", "as shipped"},
    {NULL, "tornado.csv", "cost.mov_cr3"},
};

START_TEST(test_each_plot)
{
    char *csv = data(cases[_i].csv);
    char *png = g_strdup_printf("%s/p%d.png", tmpdir, _i);
    char *svg = g_strdup_printf("%s/p%d.svg", tmpdir, _i);
    char *pdf = g_strdup_printf("%s/p%d.pdf", tmpdir, _i);
    PlotOptions o = {cases[_i].kind, NULL, false};
    GError *err = NULL;
    ck_assert_msg(plot_csv(csv, png, &o, &err), "%s", err ? err->message : "");
    assert_png(png);
    ck_assert(!g_file_test(svg, G_FILE_TEST_EXISTS));
    ck_assert_msg(plot_csv(csv, pdf, &o, &err), "%s", err ? err->message : "");
    assert_pdf(pdf);
    /* Not x.pdf.png and x.pdf.svg, as a stem would give. */
    char *wrong = g_strconcat(pdf, ".png", NULL);
    ck_assert(!g_file_test(wrong, G_FILE_TEST_EXISTS));
    g_free(wrong);
    g_free(pdf);
    ck_assert_msg(plot_csv(csv, svg, &o, &err), "%s", err ? err->message : "");
    assert_svg(svg);
    char *s = NULL;
    g_file_get_contents(svg, &s, NULL, NULL);
    ck_assert_msg(strstr(s, cases[_i].svg_text), "%s: no '%s' in the SVG", cases[_i].csv,
                  cases[_i].svg_text);
    g_free(s);
    g_free(png);
    g_free(svg);
    g_free(csv);
}
END_TEST

START_TEST(test_both_formats)
{
    /* No extension: both. */
    char *csv = data("lowmem.csv");
    char *stem = g_build_filename(tmpdir, "both", NULL);
    PlotOptions o = {NULL, "My title", false};
    GError *err = NULL;
    ck_assert_msg(plot_csv(csv, stem, &o, &err), "%s", err ? err->message : "");
    char *png = g_strconcat(stem, ".png", NULL), *svg = g_strconcat(stem, ".svg", NULL);
    assert_png(png);
    assert_svg(svg);
    char *s = NULL;
    g_file_get_contents(svg, &s, NULL, NULL);
    ck_assert(strstr(s, "My title"));
    g_free(s);
    g_free(png);
    g_free(svg);
    g_free(stem);
    g_free(csv);
}
END_TEST

START_TEST(test_unknown_extension)
{
    /* An extension that is not an image type is an error before gnuplot
     * runs, naming the extension; nothing is written. */
    char *csv = data("lowmem.csv");
    char *out = g_build_filename(tmpdir, "fig.jpg", NULL);
    PlotOptions o = {NULL, NULL, false};
    GError *err = NULL;
    ck_assert(!plot_csv(csv, out, &o, &err));
    ck_assert_msg(err && strstr(err->message, "'.jpg'"), "%s", err ? err->message : "no error");
    g_clear_error(&err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    char *png = g_strconcat(out, ".png", NULL);
    ck_assert(!g_file_test(png, G_FILE_TEST_EXISTS));
    g_free(png);
    /* A dot in a directory name does not make an extension. */
    char *dir = g_build_filename(tmpdir, "v1.2", NULL);
    g_mkdir_with_parents(dir, 0755);
    char *stem = g_build_filename(dir, "fig", NULL);
    ck_assert_msg(plot_csv(csv, stem, &o, &err), "%s", err ? err->message : "");
    char *svg = g_strconcat(stem, ".svg", NULL);
    assert_svg(svg);
    g_free(svg);
    g_free(stem);
    g_free(dir);
    g_free(out);
    g_free(csv);
}
END_TEST

START_TEST(test_detect)
{
    static const struct {
        const char *csv, *kind;
    } d[] = {
        {"overhead.csv", "overhead"}, {"latency.csv", "latency"},
        {"tlb.csv", "tlb"}, {"lowmem.csv", "lowmem"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(d); i++) {
        char *p = data(d[i].csv);
        GError *err = NULL;
        CsvTable *t = csv_read_file(p, CSV_READ_STRICT, &err);
        ck_assert_msg(t, "%s", err ? err->message : "");
        const PlotKind *k = plot_kind_detect(t, &err);
        ck_assert_msg(k && !strcmp(k->name, d[i].kind), "%s", d[i].csv);
        csv_table_free(t);
        g_free(p);
    }
    /* A replay sweep that does not vary the TLB sizes is plot 1; its
     * columns alone (dtlb_entries present) would say tlb. Only the sweep's
     * record -- the sidecar, or line 1 of a CSV from before the sidecar --
     * tells, so this is what it must carry to plot. */
    static const char rows[] = "workload,layout,dtlb_entries,syscalls_per_sec,overhead_pct\n"
                               "gen:null,4g4g,0,1000,1.5\ngen:null,4g4g,0,10000,9.5\n";
    char *csv = g_build_filename(tmpdir, "replay.csv", NULL);
    char *meta = g_strconcat(csv, ".meta.json", NULL);
    static const struct {
        const char *record, *legacy, *kind;
    } r[] = {
        {NULL, "", "tlb"},
        {"{\"schema\": \"vmsplit.sweep-meta/1\", \"kind\": \"replay\"}", "", "overhead"},
        {NULL, "# vmsplit-sweep v1 kind=replay workload=gen:null\n", "overhead"},
        {"{\"schema\": \"vmsplit.sweep-meta/1\", \"kind\": \"lowmem\"}", "", "lowmem"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(r); i++) {
        g_unlink(meta);
        if (r[i].record)
            ck_assert(g_file_set_contents(meta, r[i].record, -1, NULL));
        char *text = g_strconcat(r[i].legacy, rows, NULL);
        ck_assert(g_file_set_contents(csv, text, -1, NULL));
        g_free(text);
        GError *err = NULL;
        CsvTable *t = csv_read_file(csv, CSV_READ_STRICT, &err);
        ck_assert_msg(t, "%s", err ? err->message : "");
        const PlotKind *k = plot_kind_detect(t, &err);
        ck_assert_msg(k && !strcmp(k->name, r[i].kind), "%zu: %s", i,
                      err ? err->message : k->name);
        csv_table_free(t);
    }
    /* An unreadable record is an error naming it, not a guess. */
    ck_assert(g_file_set_contents(meta, "{\"schema\": \"vmsplit.sweep-meta/9\"}", -1, NULL));
    GError *err = NULL;
    CsvTable *t = csv_read_file(csv, CSV_READ_STRICT, &err);
    ck_assert(!plot_kind_detect(t, &err));
    ck_assert_msg(err && strstr(err->message, "replay.csv.meta.json: expected \"schema\""), "%s",
                  err ? err->message : "(no error)");
    g_clear_error(&err);
    csv_table_free(t);
    g_free(meta);
    g_free(csv);
}
END_TEST

START_TEST(test_missing_columns)
{
    char *csv = g_build_filename(tmpdir, "bad.csv", NULL);
    ck_assert(g_file_set_contents(csv, "layout,syscalls_per_sec\n4g4g,1000\n", -1, NULL));
    char *out = g_build_filename(tmpdir, "bad.png", NULL);
    PlotOptions o = {"overhead", NULL, false};
    GError *err = NULL;
    ck_assert(!plot_csv(csv, out, &o, &err));
    ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_MISMATCH));
    ck_assert_msg(strstr(err->message, "bad.csv:1: missing column(s) overhead_pct"), "%s",
                  err->message);
    g_clear_error(&err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    /* tlb: neither TLB size column. */
    o.kind = "tlb";
    ck_assert(!plot_csv(csv, out, &o, &err));
    ck_assert_msg(strstr(err->message, "needs dtlb_entries or itlb_entries"), "%s", err->message);
    g_clear_error(&err);
    /* An unknown kind; a CSV nothing can be detected from. */
    o.kind = "pie";
    ck_assert(!plot_csv(csv, out, &o, &err));
    ck_assert_msg(strstr(err->message, "unknown plot kind 'pie'"), "%s", err->message);
    g_clear_error(&err);
    ck_assert(g_file_set_contents(csv, "x,y\n1,2\n", -1, NULL));
    o.kind = NULL;
    ck_assert(!plot_csv(csv, out, &o, &err));
    ck_assert_msg(strstr(err->message, "cannot tell which plot"), "%s", err->message);
    g_clear_error(&err);
    /* Header only. */
    ck_assert(g_file_set_contents(csv, "layout,syscalls_per_sec,overhead_pct\n", -1, NULL));
    ck_assert(!plot_csv(csv, out, &o, &err));
    ck_assert_msg(strstr(err->message, "no rows to plot"), "%s", err->message);
    g_clear_error(&err);
    g_free(out);
    g_free(csv);
}
END_TEST

START_TEST(test_no_gnuplot)
{
    g_setenv("VMSPLIT_GNUPLOT", "/nonexistent/gnuplot", TRUE);
    char *csv = data("overhead.csv");
    char *out = g_build_filename(tmpdir, "x.png", NULL);
    PlotOptions o = {NULL, NULL, false};
    GError *err = NULL;
    ck_assert(!plot_csv(csv, out, &o, &err));
    ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_TOOL));
    ck_assert_msg(strstr(err->message, "gnuplot not found"), "%s", err->message);
    g_error_free(err);
    g_unsetenv("VMSPLIT_GNUPLOT");
    g_free(out);
    g_free(csv);
}
END_TEST

static Suite *plot_suite(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("plot");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_each_plot, 0, G_N_ELEMENTS(cases));
    tcase_add_test(tc, test_both_formats);
    tcase_add_test(tc, test_unknown_extension);
    tcase_add_test(tc, test_detect);
    tcase_add_test(tc, test_missing_columns);
    tcase_add_test(tc, test_no_gnuplot);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(plot_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
