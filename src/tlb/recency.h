/* The order of each set's ways as a circular doubly linked list, for FIFO
 * (touched on fills; the same list touched on hits too would be true LRU,
 * but LRU keeps stamps so that a hit stays one store, see policy_lru.c):
 * moving a way to the front and finding the way at the back are both
 * O(1), where stamps need a scan of the set for the victim (64 ways of a
 * fully associative array on every miss).
 *
 * Nodes are slots (set * ways + way) followed by one sentinel per set
 * (node entries + set): next[] runs from the most recently used way
 * towards the least, prev[] back. Every way is always on its set's list,
 * valid or not: an invalidated way keeps its place, as a stamp would keep
 * its value, and the policy is asked for a victim only when every way is
 * valid, when the back of the list is exactly the way with the oldest
 * stamp. Initially way 0 is at the back, then way 1, ...: among ways never
 * touched the lowest-numbered comes first, as with equal (zero) stamps. */
#ifndef VMSPLIT_TLB_RECENCY_H
#define VMSPLIT_TLB_RECENCY_H

#include <glib.h>
#include <stdint.h>

typedef struct TlbRecency {
    uint16_t *prev, *next;       /* entries + sets nodes; at most 2 x 32767 */
    unsigned ways, entries;
} TlbRecency;

static inline void recency_init(TlbRecency *r, unsigned sets, unsigned ways)
{
    unsigned n = sets * ways;
    g_assert(n + sets <= UINT16_MAX);
    r->ways = ways;
    r->entries = n;
    r->prev = g_new(uint16_t, n + sets);
    r->next = g_new(uint16_t, n + sets);
    for (unsigned s = 0; s < sets; s++) {
        unsigned base = s * ways, sent = n + s;
        for (unsigned w = 0; w < ways; w++) {
            r->next[base + w] = (uint16_t)(w ? base + w - 1 : sent);
            r->prev[base + w] = (uint16_t)(w + 1 < ways ? base + w + 1 : sent);
        }
        r->next[sent] = (uint16_t)(base + ways - 1);
        r->prev[sent] = (uint16_t)base;
    }
}

static inline void recency_free(TlbRecency *r)
{
    g_free(r->prev);
    g_free(r->next);
}

/* Make slot (in set) the most recently used. The check for "already at
 * the front" makes the common repeated hit one compare. */
static inline void recency_touch(TlbRecency *r, unsigned set, unsigned slot)
{
    unsigned sent = r->entries + set;
    unsigned first = r->next[sent];
    if (first == slot)
        return;
    uint16_t p = r->prev[slot], n = r->next[slot];
    r->next[p] = n;
    r->prev[n] = p;
    r->next[slot] = (uint16_t)first;
    r->prev[first] = (uint16_t)slot;
    r->prev[slot] = (uint16_t)sent;
    r->next[sent] = (uint16_t)slot;
}

/* The way at the back of set's list. */
static inline unsigned recency_last_way(const TlbRecency *r, unsigned set)
{
    return r->prev[r->entries + set] - set * r->ways;
}

#endif
