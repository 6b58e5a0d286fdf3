/* True LRU's state and its victim for large sets (the ordered records of
 * policy_lru.c, whose top comment proves them), private to src/tlb: the
 * array's fill (tlb.c) takes the common victim inline instead of through
 * the policy's function pointer. Everyone else uses policy.h. */
#ifndef VMSPLIT_TLB_LRU_PRIV_H
#define VMSPLIT_TLB_LRU_PRIV_H

#include <glib.h>
#include <stdint.h>

#include "tlb/policy.h"

#define LRU_SCAN 8

typedef struct {
    uint64_t stamp;
    uint64_t way;
} Rec;

typedef struct {
    unsigned head, tail;         /* records [head, tail) of the set's ring,
                                  * counting on (index & ring_mask) */
    uint64_t w;                  /* the watermark W */
} Order;

typedef struct Lru {
    unsigned ways;
    unsigned ring_mask;          /* ring size - 1: a power of two >= ways */
    uint64_t clock;
    Order *ord;                  /* per set when ways > LRU_SCAN, else NULL;
                                  * &one when there is one set */
    Order one;
    Rec *rec;                    /* per set a ring of ring_mask + 1 records */
    uint16_t *scratch;           /* stamp_rank's buffers for a rebuild */
    unsigned *bounds;
    uint64_t stamp[];            /* sets * ways */
} Lru;

extern const TlbPolicy tlb_policy_lru;

/* The victim when the head record is dead or there is none: dead records
 * skipped, the order rebuilt when they run out. Out of line, so that the
 * common victim (a live head) saves no registers (policy_lru.c). */
unsigned lru_order_search(Lru *s, unsigned set);

/* The set's order: its watermark, its ring and the stamps of its ways. */
#define SET_ORDER(s, set, o, rec, st)                                         \
    Order *o = &(s)->ord[set];                                                \
    Rec *rec = &(s)->rec[(size_t)(set) * ((s)->ring_mask + 1)];               \
    const uint64_t *st = &(s)->stamp[(size_t)(set) * (s)->ways]

/* Take the record at the head, which is live: its way is the victim. */
static inline __attribute__((always_inline)) unsigned lru_order_take(Lru *s, Order *o, Rec *rec)
{
    uint64_t now = s->clock;
    unsigned v = (unsigned)rec[o->head & s->ring_mask].way;
    /* v's record dies now: tlb_fill stamps v with the next tick. */
    o->head++;
    if (o->w == now) {
        /* Every way is recorded live (W = now), and v's stamp will be
         * now + 1 with no tick in between: append it, W = now + 1. The
         * ring has room, v's record having just left it (a way has at
         * most one record: records are only ever added for a way whose
         * record was just consumed, or by a rebuild). */
        rec[o->tail++ & s->ring_mask] = (Rec){ now + 1, v };
        o->w = now + 1;
    }
    return v;
}

/* The victim of a set of more than LRU_SCAN ways (s->ord is set).
 * checked: the tests that the fused fill of a one-set array
 * (tlb_fill_fresh_lru1_slot, fill_priv.h) does without, false there:
 *  - g_assert(W <= now): W > now only if a victim went unstamped, and
 *    that fill stamps its victim itself;
 *  - the watermark's move (the last record taking the stamp) tested for
 *    an empty ring: if the ring is empty, the search that follows
 *    rebuilds the order, which sets W to the clock whatever it was and
 *    rewrites the records from the ring's start (a record outside
 *    [head, tail) is never read, so the one written at tail - 1 does no
 *    harm).
 * It is only unchecked on a one-set array (set 0, its order Lru.one). */
static inline __attribute__((always_inline)) unsigned lru_victim_checked(Lru *s, unsigned set,
                                                                         bool checked)
{
    SET_ORDER(s, set, o, rec, st);
    if (!checked)
        o = &s->one;                 /* the one set's (no pointer to load) */
    unsigned mask = s->ring_mask;
    uint64_t now = s->clock;
    /* W > now would mean the last victim was never stamped: a caller
     * other than tlb_fill, which the append relies on. */
    if (checked)
        g_assert(o->w <= now);
    if (now == o->w + 1 && (!checked || o->head != o->tail)) {
        /* If the one tick since W went to the last recorded way, its
         * record takes the stamp (the largest, so the order holds); then
         * every way stamped up to now is recorded live (I2), and every
         * record is <= now (I1): W = now. */
        Rec *last = &rec[(o->tail - 1) & mask];
        if (st[last->way] == now) {
            last->stamp = now;
            o->w = now;
        }
    }
    /* The first live record is the victim (policy_lru.c's top comment). */
    const Rec *r = &rec[o->head & mask];
    if (G_UNLIKELY(o->head == o->tail || st[r->way] != r->stamp))
        return lru_order_search(s, set);
    return lru_order_take(s, o, rec);
}

static inline __attribute__((always_inline)) unsigned lru_victim_ordered(Lru *s, unsigned set)
{
    return lru_victim_checked(s, set, true);
}

#endif
