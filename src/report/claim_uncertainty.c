/* vmsplit claim: the uncertainty of the null call's 4G/4G extra. The
 * design (calib/uncertainty.h) runs as an ordinary sweep of kind
 * "uncertainty" (parallel with the claim's -j; `vmsplit sweep --kind
 * uncertainty --sample ... --shard K/N` makes the same rows on other
 * machines), into DIR/uncertainty.csv, which is read back for the 90 %
 * interval. The tornado (each estimate at its two ends, the others at the
 * preset's values, the fit rows met again) goes to DIR/tornado.csv and a
 * table, largest swing first. */
#include "report/claim_priv.h"

#include "calib/uncertainty.h"
#include "report/csv.h"
#include "report/sweep.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>

#define SEED "1"

static bool tornado_to(Claim *c, FILE *out, const char *path, GError **err);

static bool run_design(Claim *c, const char *path, GError **err)
{
    const SweepRunner *r = sweep_runner_lookup("uncertainty", err);
    if (!r)
        return false;
    SweepDef *d = sweep_def_new(r);
    GString *samples = g_string_new(NULL);
    for (int i = 0; i < c->cfg->uncertainty; i++)
        g_string_append_printf(samples, "%s%d", i ? "," : "", i);
    /* A stale file from another preset would be resumed: start afresh. */
    g_unlink(path);
    SweepOptions o = { .jobs = (guint)c->cfg->jobs };
    SweepResult res;
    bool ok = sweep_def_add_list(d, "cpu", c->p4->name, err) &&
              sweep_def_add_list(d, "seed", SEED, err) &&
              sweep_def_add_list(d, "sample", samples->str, err) && sweep_def_finish(d, err) &&
              sweep_run(d, path, &o, &res, err);
    g_string_free(samples, TRUE);
    sweep_def_free(d);
    return ok;
}

static bool read_intervals(Claim *c, const char *path, GError **err)
{
    CsvTable *t = csv_read_file(path, CSV_READ_STRICT, err);
    if (!t)
        return false;
    static const char *const cols[] = { "accepted", "int80_3g1g", "int80_4g4g", "sysenter_3g1g",
                                        "sysenter_4g4g", NULL };
    bool ok = csv_table_require(t, cols, err);
    int ci[5];
    for (int k = 0; ok && k < 5; k++)
        ci[k] = csv_table_column(t, cols[k]);
    double *x[2] = { g_new(double, t->rows->len + 1), g_new(double, t->rows->len + 1) };
    unsigned n = 0;
    double mhz = c->p4->clock_mhz;
    for (guint r = 0; ok && r < t->rows->len; r++) {
        if (strcmp(csv_table_get(t, r, (guint)ci[0]), "1"))
            continue;
        double v[4];
        for (int k = 0; k < 4; k++)
            v[k] = g_ascii_strtod(csv_table_get(t, r, (guint)ci[k + 1]), NULL);
        x[0][n] = (v[1] - v[0]) / mhz;
        x[1][n] = (v[3] - v[2]) / mhz;
        n++;
    }
    c->unc_total = t->rows->len;
    c->unc_used = n;
    if (ok && n) {
        for (int e = 0; e < 2; e++) {
            c->extra_lo[e] = unc_quantile(x[e], n, 0.05);
            c->extra_hi[e] = unc_quantile(x[e], n, 0.95);
        }
        c->have_unc = true;
    }
    g_free(x[0]);
    g_free(x[1]);
    csv_table_free(t);
    return ok;
}

static int swing_cmp(const void *a, const void *b)
{
    const UncSwing *x = a, *y = b;
    double sx = fabs(x->high - x->low), sy = fabs(y->high - y->low);
    return (sy > sx) - (sy < sx);
}

bool claim_tornado(Claim *c, FILE *out, GError **err)
{
    char *path = g_build_filename(c->cfg->outdir, "tornado.csv", NULL);
    bool ok = tornado_to(c, out, path, err);
    g_free(path);
    return ok;
}

static bool tornado_to(Claim *c, FILE *out, const char *path, GError **err)
{
    MeasurementSet *set = meas_load(NULL, err);
    UncSwing *s = NULL;
    unsigned n = 0;
    if (!set || !unc_tornado(c->p4, set, 4, &s, &n, err)) {
        meas_free(set);
        return false;
    }
    qsort(s, n, sizeof *s, swing_cmp);
    FILE *f = fopen(path, "w");
    if (!f) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO, "%s: cannot write: %s", path,
                    g_strerror(errno));
        unc_tornado_free(s, n);
        meas_free(set);
        return false;
    }
    double mhz = c->p4->clock_mhz;
    const PresetRange *r;
    UncFigures central;
    if (!unc_figures(c->p4, &central, err)) {
        fclose(f);
        unc_tornado_free(s, n);
        meas_free(set);
        return false;
    }
    double mid = unc_figure_pick(&central, 4) / mhz;
    fprintf(f, "parameter,low,high,extra_us_at_low,extra_us_at_high,central_us\n");
    fprintf(out, "  What decides the 4g4g extra of the null call (int 0x80), each estimate at "
            "the ends of its range,\n  the others as shipped, the fit rows met again "
            "(tornado.csv):\n");
    for (unsigned i = 0; i < n; i++) {
        r = preset_range_find(c->p4, s[i].id);
        char ends[48];
        if (r->kind == PRESET_RANGE_SPAN)
            g_snprintf(ends, sizeof ends, "%u..%u", r->lo, r->hi);
        else
            g_snprintf(ends, sizeof ends, "%s", "alternatives");
        char lo[16] = "min", hi[16] = "max";
        if (r->kind == PRESET_RANGE_SPAN) {
            g_snprintf(lo, sizeof lo, "%u", r->lo);
            g_snprintf(hi, sizeof hi, "%u", r->hi);
        }
        fprintf(f, "%s,%s,%s,%.4f,%.4f,%.4f\n", s[i].id, lo, hi, s[i].low / mhz,
                s[i].high / mhz, mid);
        if (fabs(s[i].high - s[i].low) / mhz >= 0.005)
            fprintf(out, "    %-28s %-13s %.2f .. %.2f us\n", s[i].id, ends, s[i].low / mhz,
                    s[i].high / mhz);
    }
    fprintf(out, "    (estimates that move it by less than 0.005 us are left out)\n\n");
    fclose(f);
    unc_tornado_free(s, n);
    meas_free(set);
    return true;
}

bool claim_uncertainty_run(Claim *c, GError **err)
{
    char *csv = g_build_filename(c->cfg->outdir, "uncertainty.csv", NULL);
    bool ok = run_design(c, csv, err) && read_intervals(c, csv, err);
    g_free(csv);
    return ok;
}
