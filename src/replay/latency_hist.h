/* A latency histogram for quantiles over any number of samples (memory
 * does not grow with the trace): exact below 128, then 64 buckets per
 * power of two, so a reported quantile is within 1/64 (1.6 %) of the true
 * value. A power of two's buckets are allocated when its first sample
 * comes: one system call's latencies span a few powers of two, and a
 * replay keeps one histogram per system call name, so allocating all 58
 * up front (30 KB a histogram) made a short replay spend more host time
 * faulting in zeroed pages than replaying (docs/speed.md). */
#ifndef VMSPLIT_REPLAY_LATENCY_HIST_H
#define VMSPLIT_REPLAY_LATENCY_HIST_H

#include <stdint.h>

#define LHIST_EXACT 128
#define LHIST_SUB 64
#define LHIST_GROUPS 58          /* powers of two 2^7 .. 2^64 */
#define LHIST_BUCKETS (LHIST_EXACT + LHIST_GROUPS * LHIST_SUB)

typedef struct {
    uint64_t n;
    uint64_t exact[LHIST_EXACT];
    uint64_t *group[LHIST_GROUPS];   /* LHIST_SUB counts each, or NULL: none yet */
} LatencyHist;

/* A zeroed LatencyHist is empty; lhist_clear frees what lhist_add
 * allocated and leaves it empty. */
void lhist_add(LatencyHist *h, uint64_t v);
void lhist_clear(LatencyHist *h);
/* The q-quantile (0 < q <= 1): the lower bound of the bucket holding the
 * ceil(q * n)-th smallest sample; 0 when empty. */
uint64_t lhist_quantile(const LatencyHist *h, double q);

#endif
