/* The user-work fast-forward (issue 6; kernel_model/userwork.h): simulated
 * time per host second on the bundled real traces under 3g1g and 4g4g on
 * p4-northwood, with and without it, and the share of user instructions it
 * skipped. Median of RUNS runs, thread CPU time (the machine is shared).
 * The simulated figures are identical either way (tests/replay
 * test_replay_ffwd.c); the bench checks the cycles agree too.
 *
 * Usage: bench-ffwd [runs]   (default 3) */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "preset/preset.h"
#include "replay/replay.h"

#include "../bench_util.h"

typedef struct {
    double host;                 /* median CPU seconds */
    double sim;                  /* simulated seconds */
    uint64_t cycles, user_insns, skipped;
    UserWorkSkips sk;
} Run;

static Run bench(const Preset *p, const char *layout, const char *trace, bool ffwd, int runs)
{
    Run out = { 0 };
    double *t = g_new(double, runs);
    for (int i = 0; i < runs; i++) {
        ReplayConfig cfg = { .preset = p, .layout = layout_find(layout), .ram = 4ULL << 30,
                             .no_fast_forward = !ffwd };
        GError *err = NULL;
        double c0 = bench_thread_seconds();
        ReplayResult *r = replay_run(&cfg, trace, &err);
        t[i] = bench_thread_seconds() - c0;
        if (!r) {
            fprintf(stderr, "bench-ffwd: %s\n", err->message);
            exit(1);
        }
        out.sim = replay_seconds(r);
        out.cycles = replay_totals(r)->cycles;
        out.user_insns = replay_totals(r)->user_insns;
        out.skipped = replay_fast_forward(r)->insns;
        out.sk = *replay_fast_forward(r);
        replay_result_free(r);
    }
    qsort(t, runs, sizeof *t, bench_cmp_double);
    out.host = t[runs / 2];
    g_free(t);
    return out;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 3;
    if (runs < 1)
        return 2;
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR") ? g_getenv("VMSPLIT_SOURCE_DIR") : ".";
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    if (!p) {
        fprintf(stderr, "bench-ffwd: %s\n", err->message);
        return 1;
    }
    printf("user-work fast-forward, p4-northwood, median of %d runs (thread CPU time)\n", runs);
    printf("  %-12s %-5s %10s %10s %8s %8s\n", "trace", "", "sim/host", "sim/host", "speedup",
           "skipped");
    printf("  %-12s %-5s %10s %10s %8s %8s\n", "", "", "off", "on", "", "user");
    static const char *traces[] = { "sqlite.vmt", "pipeline.vmt", "http.vmt", "dd.vmt" };
    static const char *layouts[] = { "3g1g", "4g4g" };
    int rc = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
        char *tp = g_build_filename(src, "workloads", "traces", traces[i], NULL);
        for (int l = 0; l < 2; l++) {
            Run off = bench(p, layouts[l], tp, false, runs);
            Run on = bench(p, layouts[l], tp, true, runs);
            if (on.cycles != off.cycles) {
                fprintf(stderr, "bench-ffwd: %s %s: %" G_GUINT64_FORMAT " cycles with, %"
                        G_GUINT64_FORMAT " without the fast-forward\n", traces[i], layouts[l],
                        on.cycles, off.cycles);
                rc = 1;
            }
            printf("  %-12s %-5s %10.3f %10.3f %7.1fx %7.1f%%"
                   "   (%.4f s simulated; %.3f s / %.3f s host)\n",
                   traces[i], layouts[l], off.sim / off.host, on.sim / on.host,
                   off.host / on.host, 100.0 * on.skipped / MAX(on.user_insns, 1), on.sim,
                   off.host, on.host);
            printf("  %-18s %" G_GUINT64_FORMAT " runs skipped, %" G_GUINT64_FORMAT
                   " with a learned cycle; %.2f periods run per run\n", "",
                   on.sk.runs, on.sk.reused, (double)on.sk.periods_run / MAX(on.sk.runs, 1));
        }
        g_free(tp);
    }
    preset_free(p);
    return rc;
}
