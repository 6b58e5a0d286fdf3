/* vmsplit claim with its uncertainty analysis (64 points of the design,
 * each a calibration and four executed null calls) against the claim
 * without it, alternately, both with -j 2 and no plots; prints the median
 * wall time of each over RUNS runs and the difference, the cost of the
 * intervals. The aim: the claim with uncertainty under a minute.
 *
 *   bench-claim [RUNS] [N]      (defaults 3 and 64) */
#include "report/claim.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "../bench_util.h"

static double run_once(const char *dir, int n)
{
    ClaimConfig cfg = { .outdir = dir, .plots = false, .jobs = 2, .uncertainty = n };
    FILE *devnull = fopen("/dev/null", "w");
    GError *err = NULL;
    gint64 t0 = g_get_monotonic_time();
    if (!claim_run(&cfg, devnull, &err)) {
        fprintf(stderr, "bench-claim: %s\n", err->message);
        exit(1);
    }
    double s = (double)(g_get_monotonic_time() - t0) / 1e6;
    fclose(devnull);
    return s;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 3, n = argc > 2 ? atoi(argv[2]) : 64;
    if (runs < 1 || runs > 16)
        runs = 3;
    char *dir = g_dir_make_tmp("vmsplit-bench-claim-XXXXXX", NULL);
    double with[16], without[16];
    for (int r = 0; r < runs; r++) {
        with[r] = run_once(dir, n);
        without[r] = run_once(dir, 0);
    }
    double a = bench_median(with, runs), b = bench_median(without, runs);
    printf("vmsplit claim, -j 2, no plots, median of %d runs (wall):\n", runs);
    printf("  --uncertainty %-3d %7.2f s\n  --uncertainty 0   %7.2f s\n  the intervals and tornado: "
           "%.2f s\n", n, a, b, a - b);
    char *rm = g_strdup_printf("rm -rf '%s'", dir);
    if (system(rm) != 0)
        fprintf(stderr, "bench-claim: could not remove %s\n", dir);
    g_free(rm);
    g_free(dir);
    return 0;
}
