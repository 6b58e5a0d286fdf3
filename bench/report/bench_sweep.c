/* Sweep engine scaling: a 64-point DTLB-size sweep of the tlbsim runner
 * over the bundled real Lackey trace (workloads/memtraces), run with -j 1
 * and -j 2, alternately, several times; prints the median wall time of
 * each and the speed-up. Also a 64-point lowmem sweep, whose points are
 * microseconds each, to show the engine's own per-point cost.
 *
 *   bench-sweep [RUNS] [MAX_REFS]      (defaults 3 and 0 = whole trace)
 *
 * The sizes are 4, 8, ..., 256 entries, fully associative (as the P4
 * Northwood DTLB of the p4-northwood preset), so that every size is a
 * valid geometry. The CSVs of the -j 1 and -j 2 runs are compared: the
 * benchmark fails if they differ. Speed is only printed, never asserted. */
#include "config.h"
#include "report/sweep.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_util.h"

/* One run into a fresh file; returns wall seconds. */
static double run_once(const SweepDef *d, const char *out, guint jobs)
{
    g_unlink(out);
    SweepOptions o = {jobs, false, false, 0};
    SweepResult res;
    GError *err = NULL;
    gint64 t0 = g_get_monotonic_time();
    if (!sweep_run(d, out, &o, &res, &err)) {
        fprintf(stderr, "bench-sweep: %s\n", err->message);
        exit(1);
    }
    return (double)(g_get_monotonic_time() - t0) / 1e6;
}

static void bench(const char *title, const SweepDef *d, int runs)
{
    char *dir = g_dir_make_tmp("vmsplit-bench-XXXXXX", NULL);
    char *f1 = g_build_filename(dir, "j1.csv", NULL), *f2 = g_build_filename(dir, "j2.csv", NULL);
    double t1[16], t2[16];
    for (int r = 0; r < runs; r++) {
        t1[r] = run_once(d, f1, 1);
        t2[r] = run_once(d, f2, 2);
    }
    char *a = NULL, *b = NULL;
    g_file_get_contents(f1, &a, NULL, NULL);
    g_file_get_contents(f2, &b, NULL, NULL);
    if (!a || !b || strcmp(a, b)) {
        fprintf(stderr, "bench-sweep: the -j 1 and -j 2 CSVs differ\n");
        exit(1);
    }
    double m1 = bench_median(t1, runs), m2 = bench_median(t2, runs);
    printf("%s: %u points, median of %d runs\n", title, sweep_def_n_points(d), runs);
    printf("  -j 1  %8.3f s  (%.2f ms/point)\n", m1, 1e3 * m1 / sweep_def_n_points(d));
    printf("  -j 2  %8.3f s  (%.2f ms/point)\n", m2, 1e3 * m2 / sweep_def_n_points(d));
    printf("  speed-up %.2fx on %d cores (other load on the machine lowers it)\n\n", m1 / m2,
           g_get_num_processors());
    g_free(a);
    g_free(b);
    g_unlink(f1);
    g_unlink(f2);
    g_rmdir(dir);
    g_free(f1);
    g_free(f2);
    g_free(dir);
}

static SweepDef *def_or_die(const char *kind, const char *const *kv, const char *path)
{
    GError *err = NULL;
    const SweepRunner *r = sweep_runner_lookup(kind, &err);
    SweepDef *d = r ? sweep_def_new(r) : NULL;
    for (const char *const *p = kv; d && *p; p += 2)
        if (!sweep_def_add_list(d, p[0], p[1], &err))
            d = NULL;
    if (d && path && !sweep_def_add_value(d, "trace", path, &err))
        d = NULL;
    if (!d || !sweep_def_finish(d, &err)) {
        fprintf(stderr, "bench-sweep: %s\n", err ? err->message : "setup failed");
        exit(1);
    }
    return d;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 3;
    const char *max_refs = argc > 2 ? argv[2] : "0";
    runs = CLAMP(runs, 1, 16);

    GString *sizes = g_string_new(NULL);
    for (int e = 4; e <= 256; e += 4)
        g_string_append_printf(sizes, "%s%d", sizes->len ? "," : "", e);
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    char *trace = g_build_filename(src ? src : VMSPLIT_SOURCE_DIR, "workloads", "memtraces",
                                   "qsortwords.lackey.gz", NULL);
    const char *tlb_kv[] = {"dtlb-entries", sizes->str, "max-refs", max_refs, NULL};
    SweepDef *d = def_or_die("tlbsim", tlb_kv, trace);
    bench("tlbsim DTLB-size sweep (qsortwords.lackey.gz, p4-northwood)", d, runs);
    sweep_def_free(d);

    const char *lm_kv[] = {"layouts", "3g1g,4g4g", "struct-page", "32,40",
                           "ram", "512M,1G,2G,4G,8G,16G,32G,64G,1536M,3G,6G,12G,24G,48G,768M,40G",
                           NULL};
    d = def_or_die("lowmem", lm_kv, NULL);
    bench("lowmem sweep (engine overhead: points are microseconds)", d, runs);
    sweep_def_free(d);
    g_string_free(sizes, TRUE);
    g_free(trace);
    return 0;
}
