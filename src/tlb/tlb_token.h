/* A token for a hit in one slot of a TLB array: what the TLB hands a
 * host-speed memo of that hit (the MMU's memos, mmu/mmu_fast.h) so that
 * the memo can tell whether the hit still holds and have the TLB record
 * more of the same hits, without knowing the array's layout. As in Spike
 * and TinyEMU, the host-speed structure never writes modelled state
 * itself: only the functions here, owned by src/tlb, write the array's
 * hit counts, the slot's recency stamp and the array's clock.
 *
 * The hierarchy makes tokens (tlb_hier_hit_token, tlb_hier_fill_missed in
 * hier_priv.h) only for the side's first-level array whose hits are taken
 * inline (the policy's hit is a stamp or nothing), so that recording n
 * hits here is exactly what n hits on the TLB's own hit path
 * (tlb_count_hit, tlb_priv.h) would do. A token holds while its slot's
 * generation is unchanged: every fill, invalidation and flush of the slot
 * moves the generation. Host-speed only; no modelled figure changes;
 * tests/mmu/test_mmu_memo.c, tests/tlb/test_model.c. */
#ifndef VMSPLIT_TLB_TLB_TOKEN_H
#define VMSPLIT_TLB_TLB_TOKEN_H

#include <stdbool.h>
#include <stdint.h>

#include "mmu/pae.h"             /* Access */

#if defined(__GNUC__)
#define TLB_TOKEN_HOT static inline __attribute__((always_inline))
#else
#define TLB_TOKEN_HOT static inline
#endif

/* The fields are the TLB's; a holder only keeps the token and passes it
 * back. 40 bytes: a memo with its key, frame and host page is one 64-byte
 * host cache line. */
typedef struct {
    uint32_t gen;                /* the slot's generation when made */
    uint32_t pad;
    const uint32_t *slot_gen;    /* the slot's generation now */
    uint64_t *hits;              /* the array's inline-hit counts of the
                                  * token's privilege, [2 * access] */
    uint64_t *stamp;             /* the slot's recency stamp, or a sink of
                                  * the array's (no stamps: FIFO, random) */
    uint64_t *clock;             /* the array's clock, or its other sink */
} TlbHitToken;

/* Whether the slot still holds the entry the token was made for. */
TLB_TOKEN_HOT bool tlb_token_holds(const TlbHitToken *k)
{
    return k->gen == *k->slot_gen;
}

/* Record n hits of access in a row, nothing in between touching the
 * array: n counts, the slot stamped with the clock's n-th tick. */
TLB_TOKEN_HOT void tlb_token_record(const TlbHitToken *k, Access access, uint64_t n)
{
    k->hits[2 * access] += n;
    *k->stamp = *k->clock += n;          /* or the sinks: no stamps */
}

/* n rounds of hits through tokens k[0..count-1] in that order (n >= 1),
 * nothing else touching the arrays in between, recorded in two steps:
 * tlb_token_count for every token, then tlb_token_stamp for every token in
 * the same order. That leaves the counts, clocks and stamps where the n
 * rounds leave them, whether the tokens share an array, a slot or are one:
 * each count adds its n hits and all but the last round's ticks, each
 * stamp makes the last round's tick; earlier rounds' stamps are
 * overwritten in their own slots before anything could read them. */
TLB_TOKEN_HOT void tlb_token_count(const TlbHitToken *k, Access access, uint64_t n)
{
    k->hits[2 * access] += n;
    *k->clock += n - 1;                  /* or the sinks: no stamps */
}

TLB_TOKEN_HOT void tlb_token_stamp(const TlbHitToken *k)
{
    *k->stamp = ++*k->clock;
}

#endif
