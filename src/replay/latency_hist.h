/* A fixed-size latency histogram for quantiles over any number of samples
 * (memory does not grow with the trace): exact below 128, then 64 buckets
 * per power of two, so a reported quantile is within 1/64 (1.6 %) of the
 * true value. */
#ifndef VMSPLIT_REPLAY_LATENCY_HIST_H
#define VMSPLIT_REPLAY_LATENCY_HIST_H

#include <stdint.h>

#define LHIST_EXACT 128
#define LHIST_SUB 64
#define LHIST_BUCKETS (LHIST_EXACT + 58 * LHIST_SUB)

typedef struct {
    uint64_t n;
    uint64_t count[LHIST_BUCKETS];
} LatencyHist;

void lhist_add(LatencyHist *h, uint64_t v);
/* The q-quantile (0 < q <= 1): the lower bound of the bucket holding the
 * ceil(q * n)-th smallest sample; 0 when empty. */
uint64_t lhist_quantile(const LatencyHist *h, double q);

#endif
