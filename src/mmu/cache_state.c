/* Snapshots and statistics arithmetic of the cache hierarchy: see
 * cache_state.h. */
#include "mmu/cache_state.h"

#include "mmu/cache_priv.h"

void cache_state_append_level(const CacheHier *c, unsigned level, GByteArray *out)
{
    g_assert(level < c->nlevels);
    const Level *L = &c->lv[level];
    g_byte_array_append(out, (const guint8 *)L->tags,
                        (guint)(L->nsets * L->ways * sizeof *L->tags));
}

bool cache_state_level_moved(const CacheStats *d, unsigned level)
{
    g_assert(level < CACHE_MAX_LEVELS);
    return d->level[level].hits || d->level[level].misses;
}

/* Every counter of CacheStats, once: the two functions below must not
 * forget one. */
#define CACHE_STATS_FIELDS(X, d, a, b)                                     \
    for (unsigned l = 0; l < CACHE_MAX_LEVELS; l++) {                      \
        X(d->level[l].hits, a->level[l].hits, b->level[l].hits);           \
        X(d->level[l].misses, a->level[l].misses, b->level[l].misses);     \
        X(d->level[l].evictions, a->level[l].evictions, b->level[l].evictions); \
    }                                                                      \
    X(d->accesses, a->accesses, b->accesses);                              \
    X(d->writes, a->writes, b->writes);                                    \
    X(d->mem, a->mem, b->mem);                                             \
    X(d->uncached, a->uncached, b->uncached);                              \
    X(d->cycles, a->cycles, b->cycles)

/* 3 x 3 level counters and 5 totals: a new counter breaks this until it
 * is added above. */
G_STATIC_ASSERT(sizeof(CacheStats) == (3 * CACHE_MAX_LEVELS + 5) * sizeof(uint64_t));

#define SUB(d, a, b) (d) = (a) - (b)
void cache_state_stats_diff(CacheStats *d, const CacheStats *a, const CacheStats *b)
{
    CACHE_STATS_FIELDS(SUB, d, a, b);
}
#undef SUB

void cache_state_stats_add(CacheHier *c, const CacheStats *d, uint64_t times)
{
    CacheStats *s = &c->st;
#define ADD(dst, x, unused) (dst) += times * (x)
    CACHE_STATS_FIELDS(ADD, s, d, d);
#undef ADD
}
