#include "replay/latency_hist.h"

#include <math.h>

static unsigned bucket(uint64_t v)
{
    if (v < LHIST_EXACT)
        return (unsigned)v;
    unsigned msb = 63 - (unsigned)__builtin_clzll(v);          /* >= 7 */
    unsigned b = LHIST_EXACT + (msb - 7) * LHIST_SUB + (unsigned)((v >> (msb - 6)) & (LHIST_SUB - 1));
    return b < LHIST_BUCKETS ? b : LHIST_BUCKETS - 1;
}

static uint64_t lower_bound(unsigned b)
{
    if (b < LHIST_EXACT)
        return b;
    unsigned k = b - LHIST_EXACT, msb = 7 + k / LHIST_SUB;
    return ((uint64_t)(LHIST_SUB + k % LHIST_SUB)) << (msb - 6);
}

void lhist_add(LatencyHist *h, uint64_t v)
{
    h->count[bucket(v)]++;
    h->n++;
}

uint64_t lhist_quantile(const LatencyHist *h, double q)
{
    if (!h->n)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < LHIST_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank)
            return lower_bound(b);
    }
    return lower_bound(LHIST_BUCKETS - 1);
}
