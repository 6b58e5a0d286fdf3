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
/* Append only the sets that the lines of the spans map to (each set's
 * index, then its tags), in set order: the state that work referencing
 * nothing outside the spans can see or change. Sets are independent (a
 * reference looks up and reorders its own set in each level; there is no
 * prefetch and no write-back, cache.c), so two states equal on these sets
 * give such work the same outcomes and leave the other sets alone. */
void cache_state_append_sets(const CacheHier *c, unsigned level, const CacheSpan *spans,
                             size_t nspans, GByteArray *out);
/* False if work whose statistics delta is d cannot have changed the
 * level: it was not looked up (a level is looked up only after every level
 * above it missed, and every lookup counts a hit or a miss; uncached
 * references touch no level). */
bool cache_state_level_moved(const CacheStats *d, unsigned level);
/* d = a - b, counter by counter. */
void cache_state_stats_diff(CacheStats *d, const CacheStats *a, const CacheStats *b);
/* Add times x d to every counter of c. */
void cache_state_stats_add(CacheHier *c, const CacheStats *d, uint64_t times);

#endif
