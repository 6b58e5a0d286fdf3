/* tlbsim references per host second on the bundled real Lackey trace
 * (issue 3's aim: over 20 million). The trace is decompressed once into a
 * temporary file so that gzip is not what is measured; each run replays it
 * whole on p4-northwood. Prints the median of RUNS runs in thread CPU time
 * (the build machine is shared: time spent descheduled is not replay time)
 * and, for reference, in wall time.
 *
 * Usage: bench-tlbsim [runs]   (default 5) */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "preset/preset.h"
#include "replay/lackey.h"
#include "replay/tlbsim.h"

#include "../bench_util.h"

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 100)
        runs = 5;
    char *src = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR") ? g_getenv("VMSPLIT_SOURCE_DIR") : ".",
                                 "workloads", "memtraces", "qsortwords.lackey.gz", NULL);
    char *dir = g_dir_make_tmp("vmsplit-bench-XXXXXX", NULL);
    char *plain = g_build_filename(dir, "trace.lackey", NULL);
    char *cmd = g_strdup_printf("gzip -dc '%s' > '%s'", src, plain);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench-tlbsim: cannot decompress %s\n", src);
        return 1;
    }
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    if (!p) {
        fprintf(stderr, "bench-tlbsim: %s\n", err->message);
        return 1;
    }
    double *cpu = g_new(double, runs), *wall = g_new(double, runs);
    uint64_t refs = 0;
    for (int i = 0; i < runs; i++) {
        TlbSimConfig cfg = { .trace = plain, .preset = p, .seed = 1 };
        double c0 = bench_thread_seconds();
        gint64 w0 = g_get_monotonic_time();
        TlbSim *s = tlbsim_run(&cfg, &err);
        if (!s) {
            fprintf(stderr, "bench-tlbsim: %s\n", err->message);
            return 1;
        }
        cpu[i] = bench_thread_seconds() - c0;
        wall[i] = (g_get_monotonic_time() - w0) / 1e6;
        refs = tlbsim_counters(s)->refs;
        tlbsim_free(s);
    }
    qsort(cpu, runs, sizeof *cpu, bench_cmp_double);
    qsort(wall, runs, sizeof *wall, bench_cmp_double);
    printf("tlbsim on qsortwords.lackey (%" G_GUINT64_FORMAT " references, p4-northwood), median of %d runs:\n",
           refs, runs);
    printf("  %.1f million references per second (CPU time %.3f s)\n", refs / cpu[runs / 2] / 1e6, cpu[runs / 2]);
    printf("  %.1f million references per second (wall time %.3f s)\n", refs / wall[runs / 2] / 1e6, wall[runs / 2]);
    g_remove(plain);
    g_rmdir(dir);
    preset_free(p);
    g_free(cpu);
    g_free(wall);
    g_free(cmd);
    g_free(plain);
    g_free(dir);
    g_free(src);
    return 0;
}
