/* The cache hierarchy's state as data, for the user-work fast-forward
 * (src/kernel_model/userwork.c): a canonical snapshot to compare, and
 * statistics arithmetic. Each level keeps its ways in recency order (MRU
 * first, cache.c), so its tag array is already canonical: equal tags mean
 * equal futures. */
#ifndef VMSPLIT_MMU_CACHE_STATE_H
#define VMSPLIT_MMU_CACHE_STATE_H

#include <glib.h>
#include <stdint.h>

#include "mmu/cache.h"

/* Physical bytes [pa, pa + len). */
typedef struct {
    uint64_t pa, len;
} CacheSpan;
/* Append only the sets that the lines of the spans map to, in set order,
 * as runs of consecutive sets (each run's first set and length, then its
 * sets' rows: tags, MRU first, and in L1 maybe empty padding
 * (cache_priv.h)): the state that work referencing
 * nothing outside the spans can see or change. Sets are independent (a
 * reference looks up and reorders its own set in each level; there is no
 * prefetch and no write-back, cache.c), so two states equal on these sets
 * give such work the same outcomes and leave the other sets alone. */
void cache_state_append_sets(const CacheHier *c, unsigned level, const CacheSpan *spans,
                             size_t nspans, GByteArray *out);
/* The smallest line of any level, as a shift (63 with no level): a gap
 * between spans shorter than that line holds no line of its own. */
unsigned cache_state_min_line_shift(const CacheHier *c);

/* Whether the sets now (appended as above for the same spans) may stand
 * for the sets start where a loop is concerned: start is the level at the
 * start of a cycle of the loop (a block of its work returns every part of
 * the memory system there), d the block's statistics delta, and the loop
 * references no line outside the spans. True only if no lookup of the
 * level missed in the block; then, set by set, now's most recent lines
 * must be start's longest most-recent run of lines within the spans, in
 * the same order; a level the block did not look up may differ freely.
 * The lines below them, which the loop never reaches, are
 * free (same proof as tlb_state_part_equivalent's, tlb/tlb_state.c; a line
 * is found by its number alone, so no other line can answer for it).
 * Valid only if every other part is equal or equivalent in this sense. */
bool cache_state_sets_equivalent(const CacheHier *c, unsigned level, const CacheSpan *spans,
                                 size_t nspans, const CacheStats *d,
                                 const GByteArray *start, const GByteArray *now);
/* False if work whose statistics delta is d cannot have changed the
 * level: it was not looked up (a level is looked up only after every level
 * above it missed, and every lookup counts a hit or a miss; uncached
 * references touch no level). */
bool cache_state_level_moved(const CacheStats *d, unsigned level);
/* d = a - b, counter by counter. */
void cache_state_stats_diff(CacheStats *d, const CacheStats *a, const CacheStats *b);
/* Add times x d to every counter of c. d must be a difference of two
 * cache_stats answers of c, as cache_state_stats_diff makes (checked). */
void cache_state_stats_add(CacheHier *c, const CacheStats *d, uint64_t times);

#endif
