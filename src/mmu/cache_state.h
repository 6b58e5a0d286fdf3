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

/* Append one level's tags (set by set, MRU first) to out. */
void cache_state_append_level(const CacheHier *c, unsigned level, GByteArray *out);
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
