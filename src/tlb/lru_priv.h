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
    const uint64_t *at;          /* the way's stamp: live if *at == stamp */
} Rec;

typedef struct {
    unsigned head, tail;         /* records [head, tail) of the set's ring,
                                  * counting on (index & ring_mask) */
    uint64_t w;                  /* the watermark W */
    const uint64_t *due;         /* the stamp of the last victim, whose
                                  * record is due if W was the clock when
                                  * it was taken (lru_order_take); at first
                                  * &Lru.none */
} Order;

typedef struct Lru {
    unsigned ways;
    unsigned ring_mask;          /* ring size - 1: a power of two >= ways */
    uint64_t clock;
    Order *ord;                  /* per set when ways > LRU_SCAN, else NULL;
                                  * &one when there is one set */
    Order one;
    uint64_t none;               /* Order.due's first target: 0, and W too
                                  * (a set is full, so the clock is past 2,
                                  * before its first victim) */
    Rec *rec;                    /* per set a ring of ring_mask + 1 records */
    uint16_t *scratch;           /* stamp_rank's buffers for a rebuild */
    unsigned *bounds;
    uint64_t stamp[];            /* sets * ways */
} Lru;

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
static inline __attribute__((always_inline)) unsigned lru_order_take(Lru *s, Order *o, Rec *rec,
                                                                    const uint64_t *st)
{
    const uint64_t *at = rec[o->head & s->ring_mask].at;
    unsigned v = (unsigned)(at - st);
    /* v's record dies now: tlb_fill stamps v with the next tick. If W is
     * the clock, v is then the one way stamped after W: its record is
     * due (lru_victim_of). If W is not the clock, it is at least two
     * ticks behind, and the test there cannot pass for v, so due need
     * not be told apart: W only moves to the clock at a victim search
     * (the append or a rebuild), whose take then sees W = the clock; if
     * the next search comes one tick later (v's fill: no other tick),
     * v's stamp is that tick and v is appended, W moving again. So a
     * take with W behind is at least two ticks past it, and v's fill
     * three: more than the test's two. */
    o->head++;
    o->due = at;
    return v;
}

/* The victim of a set of more than LRU_SCAN ways (s->ord is set), whose
 * order is o (&s->ord[set], or &s->one if the array has one set: no
 * pointer to load). */
static inline __attribute__((always_inline)) unsigned lru_victim_of(Lru *s, unsigned set,
                                                                    Order *o)
{
    SET_ORDER(s, set, o_, rec, st);
    (void)o_;
    uint64_t now = s->clock;
    if (*o->due == now && now - o->w <= 2) {
        /* The last victim v was taken with W the clock and stamped at
         * W + 1 (tlb_fill stamps it with the next tick); its stamp is
         * now, and at most one more tick has passed: that tick went to v
         * too. So v is the one way stamped after W: appended with its
         * stamp (the largest, so the order holds), every way stamped up
         * to now is recorded live (I2), and every record is <= now (I1):
         * W = now. The ring has room: v's record has just left it (a way
         * has at most one record: records are only ever added for a way
         * whose record was consumed, or by a rebuild). Else v is not
         * recorded; its stamp is > W, which I1 and I2 allow. */
        rec[o->tail++ & s->ring_mask] = (Rec){ now, o->due };
        o->w = now;
    }
    /* The first live record is the victim (policy_lru.c's top comment). */
    const Rec *r = &rec[o->head & s->ring_mask];
    if (G_UNLIKELY(o->head == o->tail || *r->at != r->stamp))
        return lru_order_search(s, set);
    return lru_order_take(s, o, rec, st);
}

static inline __attribute__((always_inline)) unsigned lru_victim_ordered(Lru *s, unsigned set)
{
    return lru_victim_of(s, set, &s->ord[set]);
}

#endif
