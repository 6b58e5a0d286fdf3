/* Cache-model benchmark: host nanoseconds per cache_access().
 *
 * cache_access runs for every simulated memory reference, so its hit path
 * bounds the simulator's speed. Address streams are precomputed (no RNG in
 * the timed loop); each configuration runs RUNS times and the median is
 * reported with the spread. Times are the thread's CPU time.
 *
 *   l1-hot      random 8-byte references within 4 KiB (L1 hits, any way)
 *   sequential  8-byte stride over 64 MiB (7 of 8 hit the MRU way)
 *   random-1M   random references over 1 MiB (L1 misses; L2 hits or misses)
 *   random-64M  random references over 64 MiB (mostly misses everywhere)
 *
 * on the p4-northwood (2 levels, 4- and 8-way) and skylake (3 levels, up to
 * 16-way) geometries. A benchmark, never a test: it asserts nothing about
 * speed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "preset/preset.h"
#include "mmu/cache.h"

#include "../bench_util.h"

#define RUNS 7
#define REFS_PER_RUN 8000000u
#define NADDR (1u << 16)                /* power of two */

/* Thread CPU time, not wall time: the benchmark machines are shared, and
 * time spent descheduled is not the model's. */

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 17;
}

typedef enum { PAT_HOT, PAT_SEQ, PAT_RAND_1M, PAT_RAND_64M } Pattern;
static const char *const pattern_names[] = { "l1-hot", "sequential", "random-1M", "random-64M" };

static void fill_addrs(uint64_t *a, Pattern pat)
{
    uint64_t s = 42;
    for (unsigned i = 0; i < NADDR; i++) {
        switch (pat) {
        case PAT_HOT: a[i] = 0x100000 + (rng_next(&s) & 4095 & ~7ULL); break;
        case PAT_SEQ: a[i] = 0x100000 + 8ULL * i; break;
        case PAT_RAND_1M: a[i] = rng_next(&s) & ((1u << 20) - 1) & ~7ULL; break;
        case PAT_RAND_64M: a[i] = rng_next(&s) & ((1u << 26) - 1) & ~7ULL; break;
        }
    }
}

static double run(CacheHier *c, const uint64_t *a, Pattern pat, uint64_t *sink)
{
    uint64_t sum = 0, off = 0;
    double t0 = (bench_thread_seconds() * 1e9);
    for (unsigned i = 0; i < REFS_PER_RUN; i++) {
        unsigned k = i & (NADDR - 1);
        if (pat == PAT_SEQ && k == 0)
            off += 8ULL * NADDR;          /* keep streaming over 64 MiB */
        sum += cache_access(c, a[k] + (pat == PAT_SEQ ? off % (64u << 20) : 0), i & 1);
    }
    double t = (bench_thread_seconds() * 1e9) - t0;
    *sink += sum;
    return t / REFS_PER_RUN;
}

int main(void)
{
    static const char *const presets[] = { "p4-northwood", "skylake" };
    uint64_t *addrs = malloc(sizeof *addrs * NADDR), sink = 0;
    printf("cache_access, ns per reference: median of %d runs of %u references [min..max]\n",
           RUNS, REFS_PER_RUN);
    for (size_t p = 0; p < sizeof presets / sizeof *presets; p++) {
        GError *err = NULL;
        Preset *pr = preset_load(presets[p], &err);
        if (!pr) {
            fprintf(stderr, "bench_cache: %s\n", err->message);
            return 2;
        }
        for (Pattern pat = PAT_HOT; pat <= PAT_RAND_64M; pat++) {
            fill_addrs(addrs, pat);
            CacheHier *c = cache_new_from_preset(pr, NULL);
            double t[RUNS];
            run(c, addrs, pat, &sink);            /* warm-up */
            for (int r = 0; r < RUNS; r++)
                t[r] = run(c, addrs, pat, &sink);
            qsort(t, RUNS, sizeof *t, bench_cmp_double);
            const CacheStats *st = cache_stats(c);
            printf("  %-13s %-11s %6.2f ns  [%.2f..%.2f]  L1 hit rate %.3f\n", presets[p],
                   pattern_names[pat], t[RUNS / 2], t[0], t[RUNS - 1],
                   (double)st->level[0].hits / (double)st->accesses);
            cache_free(c);
        }
        preset_free(pr);
    }
    printf("(checksum %llu)\n", (unsigned long long)sink);
    free(addrs);
    return 0;
}
