/* The plot driver (see plot.h): check the CSV has what the script reads,
 * choose x/y/grouping, run gnuplot on plots/<kind>.gp. */
#include "config.h"
#include "report/plot.h"
#include "report/sweep.h"
#include "preset/preset.h"
#include "kernel_model/layout.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

/* Per kind: extra -e variables; NULL when the static column list says it
 * all. May add required columns by failing with a clear error. */
typedef bool (*PlotVarsFn)(const CsvTable *t, GString *vars, const char **xcol,
                           GError **err);

typedef struct {
    PlotKind pub;
    const char *xcol;                 /* excluded from grouping */
    const char *xparam;               /* sweep parameter x derives from (a replay
                                       * sweep's rate): not a group either */
    const char *const *groups;        /* candidate group columns (no sweep record) */
    PlotVarsFn vars;
    const char *const *always;        /* group columns taken whenever present */
} PlotKindPriv;

static void add_var(GString *vars, const char *name, const char *value)
{
    /* gnuplot single-quoted string: a quote is written twice. */
    g_string_append_printf(vars, "%s='", name);
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            g_string_append_c(vars, '\'');
        g_string_append_c(vars, *p);
    }
    g_string_append(vars, "'; ");
}

/* tlb: x is the DTLB size if the CSV has it, else the ITLB size; y the
 * overhead for replay CSVs, else the miss rate of that TLB. */
static bool vars_tlb(const CsvTable *t, GString *vars, const char **xcol, GError **err)
{
    bool d = csv_table_column(t, "dtlb_entries") >= 0;
    const char *x = d ? "dtlb_entries" : "itlb_entries";
    const char *y = csv_table_column(t, "overhead_pct") >= 0 ? "overhead_pct"
                    : d                                    ? "dtlb_miss_pct"
                                                           : "itlb_miss_pct";
    const char *need[] = {x, y, NULL};
    if (!csv_table_require(t, need, err)) {
        g_prefix_error(err, "a TLB plot needs dtlb_entries or itlb_entries, and "
                            "overhead_pct or the TLB's miss_pct: ");
        return false;
    }
    add_var(vars, "xcol", x);
    *xcol = x;
    /* The preset's own size of that TLB, marked on the plot, and the CPU
     * in the title (one CPU in the CSV). */
    int c = csv_table_column(t, "cpu");
    bool one_cpu = c >= 0 && t->rows->len > 0;
    for (guint r = 1; one_cpu && r < t->rows->len; r++)
        one_cpu = !strcmp(csv_table_get(t, r, (guint)c), csv_table_get(t, 0, (guint)c));
    if (one_cpu) {
        GError *ignore = NULL;
        Preset *p = preset_load(csv_table_get(t, 0, (guint)c), &ignore);
        g_clear_error(&ignore);
        if (p) {
            char buf[32];
            g_snprintf(buf, sizeof buf, "%u", d ? p->dtlb_4k.entries : p->itlb_4k.entries);
            g_string_append_printf(vars, "presetx = %s; ", buf);
            add_var(vars, "presetname", p->name);
            char *label = g_strdup_printf("%s, %g MHz", p->name, p->clock_mhz);
            add_var(vars, "cpulabel", label);
            g_free(label);
            preset_free(p);
        }
    }
    add_var(vars, "ycol", y);
    add_var(vars, "xlabel", d ? "DTLB entries (4 KiB pages)" : "ITLB entries (4 KiB pages)");
    add_var(vars, "ylabel", !strcmp(y, "overhead_pct") ? "overhead against 3g1g (%)"
                            : d ? "DTLB misses (% of data references)"
                                : "ITLB misses (% of instruction fetches)");
    return true;
}

/* What the title and legend of a rate plot say about the data: the CPU and
 * its clock when the CSV has one CPU ("p4-northwood, 2800 MHz"), and which
 * of its layouts are what-ifs (layout.h: not possible on real i686). */
static bool vars_rate(const CsvTable *t, GString *vars, const char **xcol, GError **err)
{
    (void)err;
    /* x: the workload's own rate under the baseline 3g1g where the CSV
     * says it (sweeps, the claim), else each row's own rate (compare). */
    if (csv_table_column(t, "base_syscalls_per_sec") >= 0) {
        *xcol = "base_syscalls_per_sec";
        add_var(vars, "xcol", "base_syscalls_per_sec");
        add_var(vars, "xlabel", "system calls per second under 3g1g (per CPU)");
    }
    int c = csv_table_column(t, "cpu"), l = csv_table_column(t, "layout");
    bool one_cpu = c >= 0 && t->rows->len > 0;
    for (guint r = 1; one_cpu && r < t->rows->len; r++)
        one_cpu = !strcmp(csv_table_get(t, r, (guint)c), csv_table_get(t, 0, (guint)c));
    if (one_cpu) {
        GError *ignore = NULL;
        Preset *p = preset_load(csv_table_get(t, 0, (guint)c), &ignore);
        g_clear_error(&ignore);
        char *label = p ? g_strdup_printf("%s, %g MHz", p->name, p->clock_mhz)
                        : g_strdup(csv_table_get(t, 0, (guint)c));
        add_var(vars, "cpulabel", label);
        g_free(label);
        preset_free(p);
    }
    GString *whatif = g_string_new(NULL);
    for (guint r = 0; l >= 0 && r < t->rows->len; r++) {
        const Layout *lay = layout_find(csv_table_get(t, r, (guint)l));
        if (lay && lay->what_if && !strstr(whatif->str, lay->name))
            g_string_append_printf(whatif, "%s%s", whatif->len ? " " : "", lay->name);
    }
    add_var(vars, "whatif", whatif->str);
    g_string_free(whatif, TRUE);
    return true;
}

static const char *const need_overhead[] = {"layout", "syscalls_per_sec", "overhead_pct", NULL};
static const char *const need_latency[] = {"syscall", "layout", "base_ns", "cr3_ns",
                                           "refill_ns", "uaccess_ns", "body_ns", NULL};
static const char *const need_lowmem[] = {"layout", "ram_mib", "low_total_kb",
                                          "mem_map_kb", "boots", "min_free_boot_kb", NULL};
static const char *const need_tornado[] = {"parameter", "at_low", "at_high", "central",
                                           "figure", "band_lo", "band_hi", NULL};

/* tornado: the figure's name for the x label and the statement's band,
 * from the CSV's first row (every row carries them). */
static bool vars_tornado(const CsvTable *t, GString *vars, const char **xcol, GError **err)
{
    (void)xcol;
    int f = csv_table_column(t, "figure"), lo = csv_table_column(t, "band_lo"),
        hi = csv_table_column(t, "band_hi");
    const char *band[2] = { csv_table_get(t, 0, (guint)lo), csv_table_get(t, 0, (guint)hi) };
    for (int i = 0; i < 2; i++) {
        char *end = NULL;
        g_ascii_strtod(band[i], &end);
        if (!*band[i] || *end) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s: band_%s '%s'; expected a number", t->path, i ? "hi" : "lo",
                        band[i]);
            return false;
        }
    }
    add_var(vars, "xlabel", csv_table_get(t, 0, (guint)f));
    g_string_append_printf(vars, "band_lo=%s; band_hi=%s; ", band[0], band[1]);
    return true;
}
static const char *const need_none[] = {NULL};

static const char *const groups_layout[] = {"layout", NULL};
static const char *const groups_overhead[] = {"workload", "layout", NULL};
static const char *const groups_lowmem[] = {"layout", "struct_page", NULL};
static const char *const groups_tlb[] = {"policy", "layout", "cpu", "dtlb_ways",
                                         "itlb_ways", "flush_every", "trace", NULL};

static const PlotKindPriv kinds[] = {
    {{"overhead", "overhead.gp", "overhead (%) against syscalls/s per layout, 0-30 % band",
      need_overhead}, "syscalls_per_sec", "rate", groups_layout, vars_rate, groups_overhead},
    {{"tlb", "tlb.gp", "TLB misses (or overhead) against DTLB/ITLB size",
      need_none}, "dtlb_entries", NULL, groups_tlb, vars_tlb, NULL},
    {{"latency", "latency.gp", "per-syscall latency stacked by component",
      need_latency}, NULL, NULL, NULL, NULL, NULL},
    {{"lowmem", "lowmem.gp", "lowmem (MiB) against installed RAM, where it stops booting",
      need_lowmem}, "ram_mib", NULL, groups_lowmem, NULL, NULL},
    {{"kpti", "kpti.gp", "4g4g, kpti, kpti-pcid overhead against syscalls/s",
      need_overhead}, "syscalls_per_sec", "rate", groups_layout, vars_rate, groups_overhead},
    {{"tornado", "tornado.gp", "what decides a figure: each estimate from its low to its high end",
      need_tornado}, NULL, NULL, NULL, vars_tornado, NULL},
};

static const PlotKind *const kind_table[] = {
    &kinds[0].pub, &kinds[1].pub, &kinds[2].pub, &kinds[3].pub, &kinds[4].pub, &kinds[5].pub,
    NULL,
};

const PlotKind *const *plot_kind_all(void)
{
    return kind_table;
}

const PlotKind *plot_kind_lookup(const char *name, GError **err)
{
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
        if (!strcmp(kinds[i].pub.name, name))
            return &kinds[i].pub;
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                "unknown plot kind '%s' (expected overhead, tlb, latency, lowmem, kpti or tornado)",
                name);
    return NULL;
}

/* Whether column c exists and has two different values. */
static bool varies(const CsvTable *t, const char *c)
{
    int i = csv_table_column(t, c);
    for (guint r = 1; i >= 0 && r < t->rows->len; r++)
        if (strcmp(csv_table_get(t, r, (guint)i), csv_table_get(t, 0, (guint)i)))
            return true;
    return false;
}

const PlotKind *plot_kind_detect(const CsvTable *t, GError **err)
{
    /* The sweep's kind from its record (sweep.h: OUT.meta.json or a legacy
     * comment line); an unreadable record is an error, not a guess. */
    GError *e = NULL;
    char *sk = sweep_record_kind(t, &e);
    if (e) {
        g_propagate_error(err, e);
        return NULL;
    }
    const char *name = NULL;
    if (sk && !strcmp(sk, "lowmem"))
        name = "lowmem";
    else if (sk && !strcmp(sk, "tlbsim"))
        name = "tlb";
    else if (sk && !strcmp(sk, "replay"))   /* TLB sizes varied: plot 2, else plot 1 */
        name = varies(t, "dtlb_entries") || varies(t, "itlb_entries") ? "tlb" : "overhead";
    else if (csv_table_column(t, "base_ns") >= 0)
        name = "latency";
    else if (csv_table_column(t, "dtlb_entries") >= 0 || csv_table_column(t, "itlb_entries") >= 0)
        name = "tlb";
    else if (csv_table_column(t, "syscalls_per_sec") >= 0)
        name = "overhead";
    else if (csv_table_column(t, "low_total_kb") >= 0)
        name = "lowmem";
    else if (csv_table_column(t, "at_low") >= 0)
        name = "tornado";
    g_free(sk);
    if (!name) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "%s: cannot tell which plot this CSV is for (no sweep record and "
                    "no known columns); use --kind", t->path);
        return NULL;
    }
    return plot_kind_lookup(name, err);
}

char *plot_find_gnuplot(GError **err)
{
    const char *env = g_getenv("VMSPLIT_GNUPLOT");
    char *path = env && *env ? g_find_program_in_path(env) : g_find_program_in_path("gnuplot");
    if (!path)
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_TOOL,
                    "gnuplot not found (%s%s); install it (Debian: apt-get install "
                    "gnuplot-nox) or set VMSPLIT_GNUPLOT to its path",
                    env && *env ? "VMSPLIT_GNUPLOT=" : "looked on PATH",
                    env && *env ? env : "");
    return path;
}

char *plot_find_script(const PlotKind *k, GError **err)
{
    const char *env = g_getenv("VMSPLIT_PLOTS_DIR");
    const char *dirs[] = {env && *env ? env : NULL, VMSPLIT_SOURCE_DIR "/plots",
                          VMSPLIT_DATADIR "/plots"};
    for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
        if (!dirs[i])
            continue;
        char *p = g_build_filename(dirs[i], k->script, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            return p;
        g_free(p);
    }
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO,
                "plot script %s not found in %s%s" VMSPLIT_SOURCE_DIR "/plots or "
                VMSPLIT_DATADIR "/plots (set VMSPLIT_PLOTS_DIR)", k->script,
                env && *env ? env : "", env && *env ? ", " : "");
    return NULL;
}

/* Distinct values of column c (up to a small cap), or -1 if absent. */
static int count_distinct(const CsvTable *t, int c, bool *has_space)
{
    if (c < 0)
        return -1;
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint r = 0; r < t->rows->len; r++) {
        const char *v = csv_table_get(t, r, (guint)c);
        *has_space = *has_space || strpbrk(v, " \t") != NULL;
        g_hash_table_add(seen, (gpointer)v);
    }
    int n = (int)g_hash_table_size(seen);
    g_hash_table_unref(seen);
    return n;
}

/* Whether word w is one of the blank-separated words of list. */
static bool in_words(const char *list, const char *w)
{
    char **v = g_strsplit(list, " ", -1);
    bool in = g_strv_contains((const char *const *)v, w);
    g_strfreev(v);
    return in;
}

/* Group columns: those of the sweep's parameters (or, without a sweep
 * line, of the kind's candidates) that vary in the CSV, x excepted. If none
 * varies, the kind's first candidate when present ("layout"), so that the
 * legend still says what the line is. */
static bool pick_groups(const PlotKindPriv *k, const CsvTable *t, const char *xcol,
                        GString *vars, GError **err)
{
    if (!k->groups)
        return true;
    GPtrArray *cands = g_ptr_array_new_with_free_func(g_free);
    GError *ignore = NULL;
    SweepDef *d = sweep_def_from_table(t, &ignore);
    g_clear_error(&ignore);
    if (d) {
        const SweepRunner *r = sweep_def_runner(d);
        for (size_t i = 0; i < r->n_params; i++)
            g_ptr_array_add(cands, g_strdup(r->params[i].column));
        sweep_def_free(d);
    } else {
        for (const char *const *g = k->groups; *g; g++)
            g_ptr_array_add(cands, g_strdup(*g));
    }
    GString *cols = g_string_new(NULL);
    bool ok = true;
    /* Columns that always make series (overhead: each workload its own). */
    for (const char *const *a = k->always; a && *a; a++)
        if (csv_table_column(t, *a) >= 0)
            g_string_append_printf(cols, "%s%s", cols->len ? " " : "", *a);
    for (guint i = 0; ok && i < cands->len; i++) {
        const char *c = cands->pdata[i];
        bool space = false;
        int n = count_distinct(t, csv_table_column(t, c), &space);
        if ((xcol && !strcmp(c, xcol)) || (k->xparam && !strcmp(c, k->xparam)) || n < 2 ||
            in_words(cols->str, c))
            continue;
        if (space) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s: values of column %s contain blanks, which the plot "
                        "scripts cannot group by", t->path, c);
            ok = false;
        }
        g_string_append_printf(cols, "%s%s", cols->len ? " " : "", c);
    }
    if (ok && !cols->len && csv_table_column(t, k->groups[0]) >= 0)
        g_string_append(cols, k->groups[0]);
    if (ok)
        add_var(vars, "groupcols", cols->str);
    g_string_free(cols, TRUE);
    g_ptr_array_unref(cands);
    return ok;
}

static bool run_gnuplot(const char *gnuplot, const char *script, const char *vars,
                        const char *out, bool verbose, GError **err)
{
    const char *argv[] = {gnuplot, "-e", vars, script, NULL};
    char *errout = NULL;
    int status = 0;
    GError *e = NULL;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                      NULL, &errout, &status, &e)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_TOOL, "cannot run %s: %s", gnuplot,
                    e->message);
        g_error_free(e);
        return false;
    }
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok && verbose && errout && *errout)
        fputs(errout, stderr);
    GStatBuf st;
    if (ok && (g_stat(out, &st) != 0 || st.st_size == 0)) {
        ok = false;
    }
    if (!ok)
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_TOOL,
                    "gnuplot failed on %s writing %s:\n%s", script, out,
                    errout && *errout ? errout : "(no message; empty output)\n");
    g_free(errout);
    return ok;
}

bool plot_output_ok(const char *out, GError **err)
{
    const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (!dot || (slash && slash > dot) || !strcmp(dot, ".png") || !strcmp(dot, ".svg") ||
        !strcmp(dot, ".pdf"))
        return true;
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                "-o %s: unknown image type '%s' (expected .png, .svg, .pdf, or a name "
                "without an extension for both .png and .svg)", out, dot);
    return false;
}

bool plot_csv(const char *csv_path, const char *out, const PlotOptions *o, GError **err)
{
    if (!plot_output_ok(out, err))
        return false;
    CsvTable *t = csv_read_file(csv_path, CSV_READ_STRICT, err);
    if (!t)
        return false;
    const PlotKind *pk = o->kind ? plot_kind_lookup(o->kind, err) : plot_kind_detect(t, err);
    const PlotKindPriv *k = (const PlotKindPriv *)pk;
    GString *vars = g_string_new(NULL);
    char *gnuplot = NULL, *script = NULL;
    bool ok = k && csv_table_require(t, k->pub.required, err);
    if (ok && t->rows->len == 0) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "%s: no rows to plot", csv_path);
        ok = false;
    }
    const char *xcol = k ? k->xcol : NULL;
    if (ok && k->vars)
        ok = k->vars(t, vars, &xcol, err);
    if (ok)
        ok = pick_groups(k, t, xcol, vars, err);
    if (ok && o->title)
        add_var(vars, "plottitle", o->title);
    ok = ok && (gnuplot = plot_find_gnuplot(err)) && (script = plot_find_script(pk, err));
    if (ok) {
        add_var(vars, "csv", csv_path);
        /* One image for .png, .svg or .pdf; a name without an extension
         * is a stem for .png and .svg (what the claim writes). */
        const char *exts[] = {".png", ".svg", ".pdf"};
        const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
        bool stem = !dot || (slash && slash > dot);
        for (size_t i = 0; ok && i < G_N_ELEMENTS(exts); i++) {
            if (stem ? i == 2 : !g_str_has_suffix(out, exts[i]))
                continue;
            char *file = stem ? g_strconcat(out, exts[i], NULL) : g_strdup(out);
            GString *v = g_string_new(vars->str);
            add_var(v, "out", file);
            ok = run_gnuplot(gnuplot, script, v->str, file, o->verbose, err);
            g_string_free(v, TRUE);
            g_free(file);
        }
    }
    g_free(gnuplot);
    g_free(script);
    g_string_free(vars, TRUE);
    csv_table_free(t);
    return ok;
}
