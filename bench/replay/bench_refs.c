/* Replay speed of version-2 traces (issue 18): references per host second
 * and simulated time over host time, on a generated program whose
 * references have a compiler's kind of locality: code on 64 pages, data on
 * 400 pages with most references on a hot 24, runs of one to eight
 * instructions per fetch line and one to four references per data line
 * (the merged form a converter writes), a getppid every 2000 lines. Also
 * the reader alone (parsing the reference lines, no replay), to show what
 * the text costs. Median of RUNS runs, thread CPU time (the machine is
 * shared), peak RSS (memory must not grow with the trace).
 *
 * Usage: bench-refs [reference-lines] [runs]   (default 4000000, 3) */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "preset/preset.h"
#include "replay/replay.h"
#include "replay/trace.h"

#include "../bench_util.h"

#define CODE 0x08100000u
#define DATA 0x10000000u
#define CODE_PAGES 64u
#define DATA_PAGES 400u
#define HOT_PAGES 24u
#define BLOCK 2000u

static long rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static uint32_t rnd(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*x >> 33);
}

/* Writes the trace; returns the references it holds (instructions + data). */
static uint64_t make_trace(const char *path, uint64_t lines)
{
    GError *err = NULL;
    TraceWriter *w = trace_writer_open_version(path, NULL, 2, &err);
    g_assert(w);
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_MMAP, 1);
    ev.u.map.addr = CODE, ev.u.map.len = CODE_PAGES * 4096;
    ev.u.map.prot = TRACE_PROT_READ | TRACE_PROT_EXEC;
    trace_writer_write(w, &ev);
    ev.u.map.addr = DATA, ev.u.map.len = DATA_PAGES * 4096;
    ev.u.map.prot = TRACE_PROT_READ | TRACE_PROT_WRITE, ev.u.map.flags = TRACE_MAP_ANON;
    trace_writer_write(w, &ev);
    TraceEvent sys;
    trace_event_init(&sys, TRACE_EV_SYSCALL, 1);
    sys.u.sys.name = g_intern_string("getppid");
    sys.u.sys.ret = 1;
    uint64_t x = 42, refs = 0;
    TraceRef *block = g_new(TraceRef, BLOCK);
    for (uint64_t done = 0; done < lines; done += BLOCK) {
        uint64_t insns = 0;
        uint32_t pc = CODE + (rnd(&x) % CODE_PAGES) * 4096;
        for (unsigned k = 0; k < BLOCK; k++) {
            uint32_t r = rnd(&x);
            if (k % 2 == 0) {                /* a fetch run, the page changing now and then */
                if (r % 8 == 0)
                    pc = CODE + (r >> 8) % CODE_PAGES * 4096 + (r >> 20) % 4000;
                block[k] = (TraceRef){ pc, 1 + (r >> 3) % 8, TRACE_REF_FETCH, 0 };
                insns += block[k].n;
            } else {
                uint32_t page = r % 10 < 8 ? (r >> 4) % HOT_PAGES : (r >> 4) % DATA_PAGES;
                uint32_t addr = DATA + page * 4096 + ((r >> 14) % 64) * 64 + ((r >> 22) % 8) * 8;
                uint8_t kind = (uint8_t)(TRACE_REF_READ + (r >> 25) % 3);
                block[k] = (TraceRef){ addr, 1 + (r >> 27) % 4, kind, 8 };
                refs += block[k].n;
            }
        }
        ev.kind = TRACE_EV_REFS;
        ev.u.refs.insns = insns;
        ev.u.refs.nrefs = BLOCK;
        trace_writer_write(w, &ev);
        for (unsigned k = 0; k < BLOCK; k++)
            trace_writer_write_ref(w, &block[k]);
        trace_writer_write(w, &sys);
        refs += insns;
    }
    g_free(block);
    if (!trace_writer_close(w, &err)) {
        fprintf(stderr, "bench-refs: %s\n", err->message);
        exit(1);
    }
    return refs;
}

/* The reader alone: every event and reference line parsed. */
static double read_only(const char *path)
{
    GError *err = NULL;
    double c0 = bench_thread_seconds();
    TraceReader *r = trace_reader_open(path, &err);
    TraceEvent ev;
    static TraceRef buf[4096];
    size_t n;
    while (trace_reader_next(r, &ev, &err))
        if (ev.kind == TRACE_EV_REFS)
            while (trace_reader_refs(r, buf, 4096, &n, &err) && n)
                ;
    trace_reader_close(r);
    g_assert(!err);
    return bench_thread_seconds() - c0;
}

int main(int argc, char **argv)
{
    long lines = argc > 1 ? atol(argv[1]) : 4000000;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (lines < BLOCK || runs < 1)
        return 2;
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    if (!p) {
        fprintf(stderr, "bench-refs: %s\n", err->message);
        return 1;
    }
    char *dir = g_dir_make_tmp("vmsplit-bench-XXXXXX", NULL);
    char *path = g_build_filename(dir, "refs.vmt", NULL);
    uint64_t refs = make_trace(path, (uint64_t)lines);
    printf("replay of a version-2 trace on p4-northwood: %ld reference lines, %" G_GUINT64_FORMAT
           " references; median of %d runs (thread CPU time)\n", lines, refs, runs);
    double *t = g_new(double, runs);
    for (int i = 0; i < runs; i++)
        t[i] = read_only(path);
    double rs = bench_median(t, runs);
    printf("  reader alone  %7.2f M lines/s  %7.2f M references/s\n", lines / rs / 1e6,
           refs / rs / 1e6);
    static const char *layouts[] = { "3g1g", "4g4g", "kpti" };
    for (int l = 0; l < 3; l++) {
        double sim = 0;
        for (int i = 0; i < runs; i++) {
            ReplayConfig cfg = { .preset = p, .layout = layout_find(layouts[l]), .ram = 4ULL << 30 };
            double c0 = bench_thread_seconds();
            ReplayResult *r = replay_run(&cfg, path, &err);
            t[i] = bench_thread_seconds() - c0;
            if (!r) {
                fprintf(stderr, "bench-refs: %s\n", err->message);
                return 1;
            }
            sim = replay_seconds(r);
            replay_result_free(r);
        }
        double s = bench_median(t, runs);
        printf("  %-5s  %7.2f M references/s  %7.2f M lines/s  simulated/host time %.3f  "
               "(%.2f s; peak RSS %ld KiB)\n", layouts[l], refs / s / 1e6, lines / s / 1e6,
               sim / s, s, rss_kb());
    }
    g_remove(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    g_free(t);
    preset_free(p);
    return 0;
}
