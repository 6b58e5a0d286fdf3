/* Ranks of n stamps by (stamp, index), 0 = the oldest: what the canonical
 * snapshots of true LRU (policy_lru.c) and the PDE cache (tlb_state.c)
 * encode instead of raw clocks. Both pick as victim the lowest index with
 * the oldest stamp, so this order decides every future victim.
 *
 * A natural merge sort on indices, the comparison inline: the stamps of a
 * set are usually a few ascending runs (a stream stamps the ways in way
 * order from where the last victim was, so a full set is one or two
 * runs), which cost one pass; any order is still O(n log n). qsort's
 * comparator calls were several per cent of a fast-forwarded replay. */
#ifndef VMSPLIT_TLB_STAMP_RANK_H
#define VMSPLIT_TLB_STAMP_RANK_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

static inline bool stamp_older(const uint64_t *st, uint16_t a, uint16_t b)
{
    return st[a] < st[b] || (st[a] == st[b] && a < b);
}

/* rank[i] = the position of i in the order; tmp and bounds are scratch of
 * n and n + 1 entries. n <= 65535. */
static inline void stamp_rank(const uint64_t *st, unsigned n, uint16_t *rank, uint16_t *tmp,
                              uint16_t *order, unsigned *bounds)
{
    g_assert(n <= UINT16_MAX);
    if (n == 0)
        return;
    /* Ascending runs of the identity order: a run ends where the stamp
     * drops (equal stamps are ascending by index). */
    unsigned nb = 0;
    bounds[nb++] = 0;
    for (unsigned i = 0; i < n; i++) {
        order[i] = (uint16_t)i;
        if (i > 0 && st[i] < st[i - 1])
            bounds[nb++] = i;
    }
    bounds[nb] = n;
    unsigned runs = nb;
    uint16_t *src = order, *dst = tmp;
    while (runs > 1) {
        unsigned out = 0;
        for (unsigned r = 0; r < runs; r += 2) {
            unsigned lo = bounds[r], mid = bounds[r + 1];
            unsigned hi = r + 2 <= runs ? bounds[r + 2] : mid;
            unsigned a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = stamp_older(st, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
            bounds[out++] = lo;
        }
        bounds[out] = n;
        runs = out;
        uint16_t *t = src;
        src = dst;
        dst = t;
    }
    for (unsigned i = 0; i < n; i++)
        rank[src[i]] = (uint16_t)i;
}

#endif
