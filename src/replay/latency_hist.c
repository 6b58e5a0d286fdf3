#include "replay/latency_hist.h"

#include <glib.h>
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
    unsigned b = bucket(v);
    h->n++;
    if (b < LHIST_EXACT) {
        h->exact[b]++;
        return;
    }
    unsigned g = (b - LHIST_EXACT) / LHIST_SUB;
    if (!h->group[g])
        h->group[g] = g_new0(uint64_t, LHIST_SUB);
    h->group[g][(b - LHIST_EXACT) % LHIST_SUB]++;
}

void lhist_clear(LatencyHist *h)
{
    for (unsigned g = 0; g < LHIST_GROUPS; g++)
        g_free(h->group[g]);
    *h = (LatencyHist){ 0 };
}

uint64_t lhist_quantile(const LatencyHist *h, double q)
{
    if (!h->n)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < LHIST_EXACT; b++) {
        seen += h->exact[b];
        if (seen >= rank)
            return lower_bound(b);
    }
    for (unsigned g = 0; g < LHIST_GROUPS; g++) {
        if (!h->group[g])
            continue;                /* no sample in this power of two */
        for (unsigned k = 0; k < LHIST_SUB; k++) {
            seen += h->group[g][k];
            if (seen >= rank)
                return lower_bound(LHIST_EXACT + g * LHIST_SUB + k);
        }
    }
    return lower_bound(LHIST_BUCKETS - 1);
}
