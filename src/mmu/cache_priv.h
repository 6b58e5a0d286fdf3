/* The cache hierarchy's layout and its access as an inline function, for
 * src/mmu/mmu.c (every data and walk reference of the simulator's hot path
 * goes through it) and cache.c. Everyone else uses cache.h. See cache.c for
 * the layout of a level (ways in recency order, MRU first). */
#ifndef VMSPLIT_MMU_CACHE_PRIV_H
#define VMSPLIT_MMU_CACHE_PRIV_H

#include "mmu/cache.h"

#if defined(__GNUC__)
#define CACHE_HOT static inline __attribute__((always_inline))
#else
#define CACHE_HOT static inline
#endif

/* Line numbers are paddr >> line_shift with line_shift >= 3, so they never
 * reach UINT64_MAX. */
#define CACHE_TAG_INVALID UINT64_MAX

typedef struct Level Level;

/* Look paddr up in level L and, on a miss, in the levels behind it (a tail
 * call to L[1].access); count the lookup in L's statistics, and the cycles
 * of the level that supplied the line; return those cycles. One function
 * per associativity (cache.c), chosen once in cache_new, so a reference
 * costs no loop over the levels and no test of their geometry. */
typedef unsigned (*CacheLevelAccessFn)(const Level *L, uint64_t paddr);
/* The same, when way 0 of the line's set, row (line = paddr >> line_shift),
 * is known not to hold it: the lookup goes on from way 1. */
typedef unsigned (*CacheLevelAfterMruFn)(const Level *L, uint64_t paddr, uint64_t *row,
                                         uint64_t line);

struct Level {
    uint64_t *tags;              /* sets * ways, each set MRU first */
    uint64_t set_mask;           /* sets - 1 */
    unsigned line_shift;
    unsigned ways;
    unsigned latency;
    size_t nsets;
    CacheLevelAccessFn access;   /* this level, then the next on a miss */
    CacheLevelAfterMruFn after_mru;   /* access, from way 1 on */
    CacheLevelStats *st;         /* &all->level[this level]; memory's: NULL */
    CacheStats *all;             /* the hierarchy's statistics */
};

struct CacheHier {
    /* The levels, then one more whose access is memory's (a reference
     * that gets there costs mem_latency). With no level at all, lv[0] is
     * memory's, holding one set of one invalid way, so cache_access_fast
     * needs no level count. */
    Level lv[CACHE_MAX_LEVELS + 1];
    unsigned nlevels;
    unsigned mem_latency;
    CacheStats st;
};

/* cache_access, when way 0 of the line's L1 set, row, does not hold it
 * (line = paddr >> L1's line_shift): cache_access_fast's way out. */
unsigned cache_access_after_mru(CacheHier *c, uint64_t paddr, bool write, uint64_t *row,
                                uint64_t line);

/* cache_access (cache.h) for the commonest reference, a hit in the most
 * recently used way of its L1 set, without a call: counts and costs it
 * exactly as cache_access does. Anything else goes on out of line from
 * way 1 (nothing was changed here). With no cache at all, lv[0]'s one way
 * holds no line, so that is where every reference goes. */
CACHE_HOT unsigned cache_access_fast(CacheHier *c, uint64_t paddr, bool write)
{
    const Level *L = &c->lv[0];
    uint64_t line = paddr >> L->line_shift;
    uint64_t *row = L->tags + (size_t)(line & L->set_mask) * L->ways;
    if (G_LIKELY(row[0] == line)) {
        c->st.accesses++;
        c->st.writes += write;
        c->st.level[0].hits++;
        c->st.cycles += L->latency;
        return L->latency;
    }
    return cache_access_after_mru(c, paddr, write, row, line);
}

#endif
