/* Replay speed (issue 6): null syscalls per host second on a generated
 * getppid trace under 3g1g and 4g4g, and simulated time per host second
 * on the bundled real traces, on p4-northwood. Prints the median of RUNS
 * runs (thread CPU time: the machine is shared) and the peak RSS, so a
 * longer trace shows whether memory stays flat. The real traces replay
 * in a few milliseconds, where one spell of page faults (10-15 us each on
 * the project's virtual machines, e.g. when malloc has given its heap
 * back) moves a single run by half: they take the median of 3 x RUNS.
 *
 * Usage: bench-replay [null-syscalls] [runs]   (default 1000000, 3) */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "preset/preset.h"
#include "replay/replay.h"
#include "replay/trace.h"

#include "../bench_util.h"

static long rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* Median CPU seconds of runs replays; *res gets the last result's totals. */
static double bench(const Preset *p, const char *layout, const char *trace, int runs,
                    ReplayTotals *tot, double *sim)
{
    double *t = g_new(double, runs);
    for (int i = 0; i < runs; i++) {
        ReplayConfig cfg = { .preset = p, .layout = layout_find(layout), .ram = 4ULL << 30 };
        GError *err = NULL;
        double c0 = bench_thread_seconds();
        ReplayResult *r = replay_run(&cfg, trace, &err);
        t[i] = bench_thread_seconds() - c0;
        if (!r) {
            fprintf(stderr, "bench-replay: %s\n", err->message);
            exit(1);
        }
        *tot = *replay_totals(r);
        *sim = replay_seconds(r);
        replay_result_free(r);
    }
    qsort(t, runs, sizeof *t, bench_cmp_double);
    double m = t[runs / 2];
    g_free(t);
    return m;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 1 || runs < 1)
        return 2;
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR") ? g_getenv("VMSPLIT_SOURCE_DIR") : ".";
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    if (!p) {
        fprintf(stderr, "bench-replay: %s\n", err->message);
        return 1;
    }
    char *dir = g_dir_make_tmp("vmsplit-bench-XXXXXX", NULL);
    char *null = g_build_filename(dir, "null.vmt", NULL);
    TraceWriter *w = trace_writer_open(null, NULL, &err);
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_SYSCALL, 1);
    ev.u.sys.name = g_intern_string("getppid");
    ev.u.sys.ret = 1;
    ev.u.sys.ret_known = true;
    for (long i = 0; i < n; i++)
        trace_writer_write(w, &ev);
    if (!trace_writer_close(w, &err)) {
        fprintf(stderr, "bench-replay: %s\n", err->message);
        return 1;
    }
    printf("replay on p4-northwood, median of %d runs (real traces: %d; thread CPU time)\n", runs,
           3 * runs);
    static const char *layouts[] = { "3g1g", "4g4g" };
    ReplayTotals t;
    double sim;
    for (int l = 0; l < 2; l++) {
        double s = bench(p, layouts[l], null, runs, &t, &sim);
        printf("  null x %ld, %-5s %9.0f syscalls per host second  (%.2f s; peak RSS %ld KiB)\n", n,
               layouts[l], t.syscalls / s, s, rss_kb());
    }
    static const char *traces[] = { "sqlite.vmt", "pipeline.vmt", "http.vmt", "dd.vmt",
                                    "cp.vmt" };
    for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
        char *tp = g_build_filename(src, "workloads", "traces", traces[i], NULL);
        for (int l = 0; l < 2; l++) {
            double s = bench(p, layouts[l], tp, 3 * runs, &t, &sim);
            printf("  %-12s %-5s simulated/host time %6.3f  (%.4f s simulated in %.3f s; %" G_GUINT64_FORMAT
                   " syscalls)\n", traces[i], layouts[l], sim / s, sim, s, t.syscalls);
        }
        g_free(tp);
    }
    g_remove(null);
    g_rmdir(dir);
    g_free(null);
    g_free(dir);
    preset_free(p);
    return 0;
}
