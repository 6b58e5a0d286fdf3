/* vmsplit calibrate on p4-northwood: the whole fit (every experiment an
 * executed run through the stubs on the core) from the preset's priors,
 * several times; prints the median wall and thread CPU time and the number
 * of executed experiments. The aim: under a minute.
 *
 *   bench-calibrate [RUNS]      (default 3)
 *
 * The fitted values must be the same in every run (the fit is
 * deterministic): the benchmark fails otherwise. Speed is only printed. */
#include "calib/calibrate.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_util.h"

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 3;
    if (runs < 1 || runs > 32)
        runs = 3;
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    MeasurementSet *set = p ? meas_load(NULL, &err) : NULL;
    if (!set) {
        fprintf(stderr, "bench-calibrate: %s\n", err->message);
        return 1;
    }
    unsigned *priors = g_new0(unsigned, p->nranges + 1), n = 0;
    for (unsigned i = 0; i < p->nranges; i++)
        if (p->ranges[i].kind == PRESET_RANGE_SPAN) {
            unsigned v = 0;
            preset_get_uint(p, p->ranges[i].id, &v);
            priors[n++] = p->ranges[i].has_prior ? p->ranges[i].prior : v;
        }
    double wall[32], cpu[32];
    unsigned experiments = 0, *first = NULL;
    for (int r = 0; r < runs; r++) {
        CalibConfig cfg = { .preset = p, .set = set, .start = priors };
        gint64 t0 = g_get_monotonic_time();
        double c0 = bench_thread_seconds();
        CalibResult *res = calib_fit(&cfg, &err);
        cpu[r] = bench_thread_seconds() - c0;
        wall[r] = (double)(g_get_monotonic_time() - t0) / 1e6;
        if (!res) {
            fprintf(stderr, "bench-calibrate: %s\n", err->message);
            return 1;
        }
        unsigned *vals = g_new(unsigned, res->nparams);
        for (unsigned j = 0; j < res->nparams; j++)
            vals[j] = res->params[j].value;
        if (first && memcmp(first, vals, sizeof *vals * res->nparams)) {
            fprintf(stderr, "bench-calibrate: run %d fitted other values than run 1\n", r + 1);
            return 1;
        }
        if (!first)
            first = vals;
        else
            g_free(vals);
        experiments = res->runs;
        calib_result_free(res);
    }
    printf("vmsplit calibrate, p4-northwood from its priors: %u executed experiments per fit\n",
           experiments);
    printf("  median of %d runs: %.3f s wall, %.3f s CPU (one thread)\n", runs,
           bench_median(wall, runs), bench_median(cpu, runs));
    g_free(first);
    g_free(priors);
    meas_free(set);
    preset_free(p);
    return 0;
}
