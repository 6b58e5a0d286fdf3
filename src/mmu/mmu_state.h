/* The whole memory system's state as data, for the user-work fast-forward
 * (src/kernel_model/userwork.c): a canonical snapshot (tlb_state.h,
 * cache_state.h, plus the MMU's own control state and the paging entries
 * of the pages a loop touches), every statistic as one block, and a
 * translation that makes no modelled reference.
 *
 * Why the paging entries: a walk sets A and D bits in memory, and the next
 * walk of that page then makes no write. Two snapshots that agree on the
 * TLBs and caches but not on those bits would not have the same future;
 * with the entries of every page the loop references included, they do.
 * Other memory contents (the data the loop adds to) time nothing. */
#ifndef VMSPLIT_MMU_MMU_STATE_H
#define VMSPLIT_MMU_MMU_STATE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmu/cache.h"
#include "mmu/mmu.h"
#include "tlb/tlb_state.h"

/* Every counter of the memory system. */
typedef struct {
    MmuStats mmu;
    CacheStats cache;
    TlbStatsAll tlb;
} MmuStatsAll;

/* Linear addresses [lo, hi) (hi > lo; hi 0 means 4 GiB). */
typedef struct {
    uint32_t lo, hi;
} MmuRange;

/* False if part of the state cannot be put canonically (a TLB policy
 * without canon): snapshots must not be compared then. */
bool mmu_state_comparable(const Mmu *m);

/* The snapshot in parts: part 0 is the control state (CR0, CR3, CR4, EFER,
 * PCID, the PDPTE registers) and the PDE and PTE of every page of the
 * ranges; then the TLB hierarchy's parts (tlb_state.h); then one part per
 * cache level, holding only the sets that references to the ranges can
 * touch (each page's frame, PDE and PTE: cache_state_append_sets), so a
 * snapshot covers the state that work confined to the ranges sees. A caller comparing snapshots re-reads only the parts that
 * moved (the L3 of a Skylake is 1 MiB of tags; work that hits in L1 does
 * not touch it). */
unsigned mmu_state_nparts(const Mmu *m);
/* The physical spans a snapshot's cache parts and mmu_state_part_equivalent
 * derive from the ranges (or words) and the page tables, kept for reuse
 * by the calls at one state: the cache levels and the equivalence tests
 * of one boundary share them instead of each walking the tables again.
 * The caller resets it whenever the state may have moved or the ranges
 * or words change (each boundary of a fast-forward); NULL means none. */
typedef struct MmuStateSpans MmuStateSpans;
MmuStateSpans *mmu_state_spans_new(void);
void mmu_state_spans_free(MmuStateSpans *sc);
void mmu_state_spans_reset(MmuStateSpans *sc);
void mmu_state_append_part(const Mmu *m, unsigned part, const MmuRange *ranges,
                           size_t nranges, MmuStateSpans *sc, GByteArray *out);
/* False if work whose statistics delta is d cannot have changed the part.
 * Part 0 always counts as moved (it is small, and the page tables can be
 * written by more than the walker). */
bool mmu_state_part_moved(const Mmu *m, unsigned part, const MmuStatsAll *d);
/* The loop's data references: n 4-byte words at va + k * stride. Where
 * the block walked no page table (d: no walks), the caches see nothing
 * else of the loop (code fetches are not looked up), so only these words'
 * lines must keep their places. */
typedef struct {
    uint32_t va, stride;
    uint64_t n;
} MmuWords;
/* Whether part now may stand for part start for a loop confined to the
 * ranges although the two differ: start is the part at the start of a
 * cycle of the loop (a block of its work from there returns every part to
 * it) and d the block's counts. The loop then counts from now exactly
 * what it counted from start and leaves the part as now, provided every
 * other part is equal or passes this test too. Entries the loop provably
 * neither reaches nor reorders are left out: tlb_state_part_equivalent
 * and cache_state_sets_equivalent. Part 0 is never loose. */
bool mmu_state_part_equivalent(const Mmu *m, unsigned part, const MmuRange *ranges,
                               size_t nranges, const MmuWords *words, const MmuStatsAll *d,
                               MmuStateSpans *sc, const GByteArray *start,
                               const GByteArray *now);

void mmu_state_stats_get(const Mmu *m, MmuStatsAll *out);
void mmu_state_stats_diff(MmuStatsAll *d, const MmuStatsAll *after,
                          const MmuStatsAll *before);
/* Add times x d to every counter (MMU, TLB hierarchy and arrays, caches):
 * what running times more copies of the work d was measured on would
 * have counted. */
void mmu_state_stats_add(Mmu *m, const MmuStatsAll *d, uint64_t times);

/* The physical address of lin under the current page tables, read with
 * plain memory reads: no TLB lookup, no cache reference, no A/D update.
 * False if it is not mapped (or paging is off and lin is the address).
 * For host-side updates of memory whose references were already
 * accounted. */
bool mmu_state_peek(const Mmu *m, uint32_t lin, uint64_t *pa);

/* mmu_state_peek for many addresses on a few pages: the page last
 * translated is remembered (MMU_PEEK_CACHE_INIT: none), so the walk is
 * made once per page. Valid while the paging entries do not change. */
typedef struct {
    uint32_t page;
    uint64_t frame;
} MmuPeekCache;
#define MMU_PEEK_CACHE_INIT { 1, 0 }
bool mmu_state_peek_cached(const Mmu *m, uint32_t lin, MmuPeekCache *pc, uint64_t *pa);

#endif
