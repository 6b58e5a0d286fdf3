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

typedef struct {
    uint64_t *tags;              /* sets * ways, each set MRU first */
    uint64_t set_mask;           /* sets - 1 */
    unsigned line_shift;
    unsigned ways;
    unsigned latency;
    size_t nsets;
} Level;

struct CacheHier {
    Level lv[CACHE_MAX_LEVELS];
    unsigned nlevels;
    unsigned mem_latency;
    CacheStats st;
};

/* cache_access (cache.h) for the commonest reference, a hit in the most
 * recently used way of its L1 set, without a call: counts and costs it
 * exactly as cache_access does. Anything else goes to cache_access, which
 * starts from scratch (nothing was changed here). */
CACHE_HOT unsigned cache_access_fast(CacheHier *c, uint64_t paddr, bool write)
{
    const Level *L = &c->lv[0];
    uint64_t line = paddr >> L->line_shift;
    if (G_LIKELY(c->nlevels) &&
        G_LIKELY(L->tags[(size_t)(line & L->set_mask) * L->ways] == line)) {
        c->st.accesses++;
        c->st.writes += write;
        c->st.level[0].hits++;
        c->st.cycles += L->latency;
        return L->latency;
    }
    return cache_access(c, paddr, write);
}

#endif
