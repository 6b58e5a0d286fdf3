/* The TLB hierarchy's state as data, for the user-work fast-forward
 * (src/kernel_model/userwork.c): a canonical snapshot to compare, and the
 * statistics as one block that can be subtracted and added back scaled.
 *
 * Canonical means: two hierarchies whose snapshots are byte-for-byte equal
 * behave identically under any future reference sequence (same hits,
 * misses, victims, fills, counts). It holds every array's entries way by
 * way (the way matters: a fill takes the lowest invalid way), each array's
 * replacement state as its policy encodes it (policy.h canon: LRU as
 * recency ranks, not raw timestamps), and the PDE cache's entries with
 * their LRU ranks. It leaves out statistics and host-speed shortcuts (the
 * hash index, LRU candidate lists), which decide nothing. */
#ifndef VMSPLIT_TLB_TLB_STATE_H
#define VMSPLIT_TLB_TLB_STATE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "tlb/hierarchy.h"
#include "tlb/tlb_stats.h"

#define TLB_STATE_MAX_ARRAYS 5   /* itlb_4k, itlb_large, dtlb_4k, dtlb_large, stlb */

/* Every TLB counter of a hierarchy: its own and each array's. */
typedef struct {
    TlbStats hier;
    TlbStats array[TLB_STATE_MAX_ARRAYS];
    unsigned narrays;
} TlbStatsAll;

/* False if some array's policy cannot encode its state (policy.h canon is
 * NULL): then snapshots mean nothing and must not be compared. */
bool tlb_state_comparable(const TlbHierarchy *h);

/* The snapshot comes in parts (each array, then the PDE cache if any), so
 * that a caller can re-read only the parts some work touched: a part
 * whose counters in the work's delta are all zero did not change (every
 * lookup, fill and flush of an array is counted in its statistics, and
 * every PDE-cache lookup, fill and drop in the hierarchy's). */
unsigned tlb_state_nparts(const TlbHierarchy *h);
/* Append part i's canonical encoding to out. */
void tlb_state_append_part(const TlbHierarchy *h, unsigned i, GByteArray *out);
/* False if work whose statistics delta is d cannot have changed part i. */
bool tlb_state_part_moved(const TlbHierarchy *h, unsigned i, const TlbStatsAll *d);

/* Linear addresses [lo, hi), hi up to 2^32. */
typedef struct {
    uint64_t lo, hi;
} TlbSpan;

/* Whether the array part i's snapshot now may stand for its snapshot
 * start where a loop is concerned. start is the array at the start of a
 * cycle of the loop: a block of the loop's work from start returns every
 * part to its start snapshot, and counted d (the array's statistics delta
 * over the block). The loop looks up only pages in spans under pcid. True
 * only when d shows that every lookup of the block hit and the array is
 * true LRU; then, set by set, now's most recent entries must be those of
 * the most recent slots of start that match the loop's pages (the longest
 * run of such slots from the most recent down), in the same order (in any
 * ways), and neither may hold another entry matching those pages. An
 * array the block did not look up may differ freely. Entries the loop cannot match, and their order
 * among themselves, are free: the proof is in tlb_state.c. Sets that
 * fail this must be equal byte for byte. Valid only if every other part
 * of the memory system is equal or equivalent in the same sense. */
bool tlb_state_part_equivalent(const TlbHierarchy *h, unsigned i, const TlbStats *d,
                               uint16_t pcid, const TlbSpan *spans, size_t nspans,
                               const GByteArray *start, const GByteArray *now);

void tlb_state_stats_get(const TlbHierarchy *h, TlbStatsAll *out);
/* d = after - before, counter by counter. */
void tlb_state_stats_diff(TlbStatsAll *d, const TlbStatsAll *after,
                          const TlbStatsAll *before);
/* Add times x d to every counter of h (d from the same hierarchy). */
void tlb_state_stats_add(TlbHierarchy *h, const TlbStatsAll *d, uint64_t times);

/* The same for one stats block: dst += times x d; d = a - b; all zero. */
void tlb_stats_add_scaled(TlbStats *dst, const TlbStats *d, uint64_t times);
void tlb_stats_diff(TlbStats *d, const TlbStats *a, const TlbStats *b);
bool tlb_stats_is_zero(const TlbStats *s);

#endif
