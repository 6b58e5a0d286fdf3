/* vmsplit claim: the uncertainty of its figures. The design
 * (calib/uncertainty.h) runs as an ordinary sweep of kind "uncertainty"
 * over its points and the claim's workloads (parallel with the claim's -j;
 * `vmsplit sweep --kind uncertainty ... --shard K/N` makes the same rows on
 * other machines), into DIR/uncertainty.csv, which is read back for the
 * 90 % intervals: the null call's 4G/4G extra, the largest typical
 * workload's overhead, and the largest microbenchmark's minus that. The
 * tornadoes (each estimate at its two ends, the others as shipped, the fit
 * rows met again) go to DIR/tornado.csv (the null call's extra) and
 * DIR/tornado-db.csv (the db workload's overhead), largest swing first. */
#include "report/claim_priv.h"

#include "calib/uncertainty.h"
#include "report/csv.h"
#include "report/sweep.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEED "1"

static bool run_design(Claim *c, const char *path, GError **err)
{
    const SweepRunner *r = sweep_runner_lookup("uncertainty", err);
    if (!r)
        return false;
    SweepDef *d = sweep_def_new(r);
    GString *samples = g_string_new(NULL), *workloads = g_string_new("none");
    for (int i = 0; i < c->cfg->uncertainty; i++)
        g_string_append_printf(samples, "%s%d", i ? "," : "", i);
    /* The microbenchmarks are replayed at every point; the captured
     * programs (the typical workloads) only with --uncertainty-captures: a
     * capture's replay takes a few tenths of a second, so sampling six at
     * 64 points takes minutes. Without it their overheads are point
     * estimates (typ_sampled false). */
    c->typ_sampled = false;
    for (guint i = 0; i < c->wl->len; i++) {
        const Workload *w = g_ptr_array_index(c->wl, i);
        bool sampled = w->micro || (w->typical && (c->cfg->sample_captures ||
                                                   !g_str_has_suffix(w->trace, ".vmt.gz")));
        if (sampled)
            g_string_append_printf(workloads, ",%s", w->trace);
        c->typ_sampled |= w->typical && sampled;
    }
    /* A stale file from another preset would be resumed: start afresh. */
    g_unlink(path);
    SweepOptions o = { .jobs = (guint)c->cfg->jobs };
    SweepResult res;
    bool ok = sweep_def_add_list(d, "cpu", c->p4->name, err) &&
              sweep_def_add_list(d, "seed", SEED, err) &&
              sweep_def_add_list(d, "sample", samples->str, err) &&
              sweep_def_add_list(d, "workload", workloads->str, err) &&
              sweep_def_add_list(d, "paging", ptformat_get((PagingMode)c->cfg->paging)->name,
                                 err) &&
              sweep_def_finish(d, err) && sweep_run(d, path, &o, &res, err);
    g_string_free(samples, TRUE);
    g_string_free(workloads, TRUE);
    sweep_def_free(d);
    return ok;
}

static const Workload *workload_of(const Claim *c, const char *trace)
{
    for (guint i = 0; i < c->wl->len; i++) {
        const Workload *w = g_ptr_array_index(c->wl, i);
        if (!strcmp(w->trace, trace))
            return w;
    }
    return NULL;
}

/* Per sample: the figures the intervals are taken over. */
typedef struct {
    bool seen, accepted;
    double extra[3], ratio, typ, micro;
} SampleFigs;

static bool read_intervals(Claim *c, const char *path, GError **err)
{
    CsvTable *t = csv_read_file(path, CSV_READ_STRICT, err);
    if (!t)
        return false;
    static const char *const cols[] = { "sample", "workload", "accepted", "int80_3g1g",
                                        "int80_4g4g", "sysenter_3g1g", "sysenter_4g4g",
                                        "overhead_pct", "sysenter_3g1g_legacy",
                                        "sysenter_4g4g_legacy", NULL };
    bool ok = csv_table_require(t, cols, err);
    int ci[10];
    for (int k = 0; ok && k < 10; k++)
        ci[k] = csv_table_column(t, cols[k]);
    unsigned ns = (unsigned)c->cfg->uncertainty;
    SampleFigs *sf = g_new0(SampleFigs, ns + 1);
    for (unsigned s = 0; s < ns; s++)
        sf[s].typ = sf[s].micro = -INFINITY;
    double mhz = c->p4->clock_mhz;
    for (guint r = 0; ok && r < t->rows->len; r++) {
        unsigned s = (unsigned)g_ascii_strtoull(csv_table_get(t, r, (guint)ci[0]), NULL, 10);
        const char *wl = csv_table_get(t, r, (guint)ci[1]);
        g_assert(s < ns);        /* the sweep made exactly these samples */
        SampleFigs *f = &sf[s];
        f->seen = true;
        f->accepted = !strcmp(csv_table_get(t, r, (guint)ci[2]), "1");
        if (!strcmp(wl, "none")) {
            double v[4];
            for (int k = 0; k < 4; k++)
                v[k] = g_ascii_strtod(csv_table_get(t, r, (guint)ci[3 + k]), NULL);
            f->extra[0] = (v[1] - v[0]) / mhz;
            f->extra[1] = (v[3] - v[2]) / mhz;
            double l3 = g_ascii_strtod(csv_table_get(t, r, (guint)ci[8]), NULL);
            double l4 = g_ascii_strtod(csv_table_get(t, r, (guint)ci[9]), NULL);
            f->extra[2] = (l4 - l3) / mhz;
            f->ratio = f->extra[2] > 0 ? f->extra[1] / f->extra[2] : INFINITY;
            continue;
        }
        const Workload *w = workload_of(c, wl);
        double o = g_ascii_strtod(csv_table_get(t, r, (guint)ci[7]), NULL);
        if (w && w->typical)
            f->typ = MAX(f->typ, o);
        if (w && w->micro)
            f->micro = MAX(f->micro, o);
    }
    enum { NX = 6 };
    double *x[NX];
    for (int k = 0; k < NX; k++)
        x[k] = g_new(double, ns + 1);
    unsigned n = 0;
    for (unsigned s = 0; ok && s < ns; s++)
        if (sf[s].seen && sf[s].accepted) {
            x[0][n] = sf[s].extra[0];
            x[1][n] = sf[s].extra[1];
            x[2][n] = sf[s].typ;
            x[3][n] = sf[s].micro - sf[s].typ;
            x[4][n] = sf[s].extra[2];
            x[5][n] = sf[s].ratio;
            n++;
        }
    c->unc_total = ns;
    c->unc_used = n;
    if (ok && n) {
        double *lo[] = { &c->extra_lo[0], &c->extra_lo[1], &c->typ_lo, &c->micro_lo,
                         &c->extra_lo[2], &c->ratio_lo };
        double *hi[] = { &c->extra_hi[0], &c->extra_hi[1], &c->typ_hi, &c->micro_hi,
                         &c->extra_hi[2], &c->ratio_hi };
        for (int k = 0; k < NX; k++) {
            *lo[k] = unc_quantile(x[k], n, 0.05);
            *hi[k] = unc_quantile(x[k], n, 0.95);
        }
        c->have_unc = true;
    }
    for (int k = 0; k < NX; k++)
        g_free(x[k]);
    g_free(sf);
    csv_table_free(t);
    return ok;
}

bool claim_uncertainty_run(Claim *c, GError **err)
{
    char *csv = g_build_filename(c->cfg->outdir, "uncertainty.csv", NULL);
    bool ok = run_design(c, csv, err) && read_intervals(c, csv, err);
    g_free(csv);
    return ok;
}

/* ---- tornadoes ----------------------------------------------------------- */

static int swing_cmp(const void *a, const void *b)
{
    const UncSwing *x = a, *y = b;
    double sx = fabs(x->high - x->low), sy = fabs(y->high - y->low);
    return (sy > sx) - (sy < sx);
}

/* The null call's 4g4g extra via int 0x80, us. */
static bool fig_null_extra(const Preset *p, void *user, double *out, GError **err)
{
    (void)user;
    UncFigures f;
    if (!unc_figures(p, &f, err))
        return false;
    *out = unc_figure_pick(&f, 4) / p->clock_mhz;
    return true;
}

/* A trace's 4g4g overhead, %, in a paging mode. */
typedef struct {
    const char *trace;
    PagingMode paging;
} OverheadOf;

static bool fig_overhead(const Preset *p, void *user, double *out, GError **err)
{
    const OverheadOf *o = user;
    return unc_overhead(p, o->trace, o->paging, out, err);
}

typedef struct {
    const char *file, *what, *unit;
    UncFigureFn fn;
    double min_swing;            /* smaller swings are left out of the table */
    const char *figure;          /* the plot's x label */
    double band_lo, band_hi;     /* the statement's band, shaded */
} Tornado;

static bool tornado_one(Claim *c, FILE *out, const MeasurementSet *set, const Tornado *td,
                        void *user, GError **err)
{
    UncSwing *s = NULL;
    unsigned n = 0;
    double mid = 0;
    if (!td->fn(c->p4, user, &mid, err) || !unc_tornado(c->p4, set, td->fn, user, &s, &n, err))
        return false;
    qsort(s, n, sizeof *s, swing_cmp);
    char *path = g_build_filename(c->cfg->outdir, td->file, NULL);
    FILE *f = fopen(path, "w");
    if (!f) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO, "%s: cannot write: %s", path,
                    g_strerror(errno));
        g_free(path);
        unc_tornado_free(s, n);
        return false;
    }
    fprintf(f, "parameter,low,high,at_low,at_high,central,figure,band_lo,band_hi\n");
    fprintf(out, "  What decides %s: each estimate at the ends of its range, the others as "
            "shipped,\n  the fit rows met again (%s; %.2f %s as shipped):\n", td->what, td->file,
            mid, td->unit);
    for (unsigned i = 0; i < n; i++) {
        const PresetRange *r = preset_range_find(c->p4, s[i].id);
        char lo[16] = "min", hi[16] = "max", ends[40] = "alternatives";
        if (r->kind == PRESET_RANGE_SPAN) {
            g_snprintf(lo, sizeof lo, "%u", r->lo);
            g_snprintf(hi, sizeof hi, "%u", r->hi);
            g_snprintf(ends, sizeof ends, "%u..%u", r->lo, r->hi);
        }
        fprintf(f, "%s,%s,%s,%.4f,%.4f,%.4f,%s,%g,%g\n", s[i].id, lo, hi, s[i].low, s[i].high,
                mid, td->figure, td->band_lo, td->band_hi);
        if (fabs(s[i].high - s[i].low) >= td->min_swing)
            fprintf(out, "    %-28s %-13s %.2f .. %.2f %s\n", s[i].id, ends, s[i].low, s[i].high,
                    td->unit);
    }
    fprintf(out, "    (estimates that move it by less than %g %s are left out)\n\n",
            td->min_swing, td->unit);
    fclose(f);
    g_free(path);
    unc_tornado_free(s, n);
    return true;
}

bool claim_tornado(Claim *c, FILE *out, GError **err)
{
    static const Tornado null_extra = {
        "tornado.csv", "the 4g4g extra of the null call (int 0x80)", "us", fig_null_extra, 0.005,
        "4g4g extra of the null call via int 0x80 (us); shaded: the mail's +3 us +- 1", 2, 4 };
    static const Tornado db = {
        "tornado-db.csv", "the db workload's 4g4g overhead", "%", fig_overhead, 0.05,
        "db workload: 4g4g overhead against 3g1g (%); shaded: the mail's 0-30 %", 0, 30 };
    MeasurementSet *set = meas_load(NULL, err);
    const Workload *w = NULL;
    for (guint i = 0; i < c->wl->len && !w; i++) {
        const Workload *x = g_ptr_array_index(c->wl, i);
        if (!strcmp(x->name, "db"))
            w = x;
    }
    g_assert(w);                 /* the claim always replays the db generator */
    OverheadOf of = { w->trace, (PagingMode)c->cfg->paging };
    bool ok = set && tornado_one(c, out, set, &null_extra, NULL, err) &&
              tornado_one(c, out, set, &db, &of, err);
    meas_free(set);
    return ok;
}
