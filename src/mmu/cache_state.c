/* Snapshots and statistics arithmetic of the cache hierarchy: see
 * cache_state.h. */
#include "mmu/cache_state.h"

#include "mmu/cache_priv.h"

void cache_state_append_sets(const CacheHier *c, unsigned level, const CacheSpan *spans,
                             size_t nspans, GByteArray *out)
{
    g_assert(level < c->nlevels);
    const Level *L = &c->lv[level];
    guint8 *seen = g_malloc0((L->nsets + 7) / 8);
    for (size_t i = 0; i < nspans; i++) {
        if (!spans[i].len)
            continue;
        uint64_t first = spans[i].pa >> L->line_shift;
        uint64_t last = (spans[i].pa + spans[i].len - 1) >> L->line_shift;
        for (uint64_t line = first; line <= last && line - first <= L->set_mask; line++) {
            uint64_t set = line & L->set_mask;
            seen[set / 8] |= (guint8)(1u << (set % 8));
        }
    }
    for (uint64_t set = 0; set < L->nsets; set++) {
        if (!(seen[set / 8] & (1u << (set % 8))))
            continue;
        g_byte_array_append(out, (const guint8 *)&set, sizeof set);
        g_byte_array_append(out, (const guint8 *)&L->tags[set * L->ways],
                            (guint)(L->ways * sizeof *L->tags));
    }
    g_free(seen);
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
