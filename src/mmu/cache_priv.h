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

/* A way holds its line's address, paddr & tag_mask (the low line_shift
 * >= 3 bits clear), so no line is UINT64_MAX: an empty way holds that. */
#define CACHE_TAG_INVALID UINT64_MAX

typedef struct Level Level;

/* What the hot path counts, per level (in the level, beside what its
 * lookup reads anyway): the lookups, and the misses that filled an empty
 * (invalid) way; then per hierarchy. CacheStats (cache.h) is derived from
 * these when read (cache_stats, cache.c, which proves each total exact), so
 * a reference adds to no total it can be derived for. */
typedef struct {
    uint64_t hits;
    uint64_t misses;             /* the last level's only: the others' are derived */
    uint64_t fills_empty;        /* misses whose victim way held no line */
} CacheLevelCounts;

typedef struct {
    uint64_t writes;             /* cached and uncached references that write */
    uint64_t uncached;           /* cache_access_uncached calls */
    uint64_t bare;               /* cached references when there is no level at all */
} CacheCounts;

/* Look paddr up in level L and, on a miss, in the levels behind it (the
 * last of them inline, or a tail call to L[1].access); count the lookup
 * in L's counts; return the cycles of the level that supplied the line.
 * One function per associativity and next step (cache.c), chosen once in
 * cache_new, so a reference costs no loop over the levels and no test of
 * their geometry. */
typedef unsigned (*CacheLevelAccessFn)(Level *L, uint64_t paddr);
/* The same, when way 0 of the line's set, row (line = paddr & tag_mask),
 * is known not to hold it: the lookup goes on from way 1. */
typedef unsigned (*CacheLevelAfterMruFn)(Level *L, uint64_t paddr, uint64_t *row,
                                         uint64_t line);

/* A set's row starts at byte ((paddr & row_mask) * row_mul) >> row_shr of
 * tags: (paddr & row_mask) is the set times the line size, and row_mul /
 * 2^row_shr the row's size over the line's, a fraction in lowest terms
 * (cache.c, level_init). In L1, row_shr is 0: its rows are padded to a
 * whole number of lines (the P4's 4 ways of 8 bytes to one 64-byte line),
 * so that cache_l1_row needs no shift; the padding ways stay empty and are
 * never looked at. Every field cache_l1_row reads is 64 bits wide, so that
 * each instruction takes it straight from memory. */
struct Level {
    uint64_t *tags;              /* nsets rows of row_words, each set's ways MRU first */
    uint64_t row_mask;           /* (sets - 1) << line_shift */
    uint64_t row_mul;
    uint64_t tag_mask;           /* ~(line size - 1): a line's address */
    unsigned row_shr;
    unsigned line_shift;
    unsigned ways;
    unsigned latency;
    uint64_t set_mask;           /* sets - 1 */
    size_t nsets;
    size_t row_words;            /* tags from one set's row to the next's: ways, or more in L1 */
    CacheLevelAccessFn access;   /* this level, then the next on a miss */
    CacheLevelAfterMruFn after_mru;   /* access, from way 1 on */
    CacheLevelCounts n;          /* this level's lookups; memory's: unused */
    CacheCounts *all;            /* the hierarchy's counts */
};

struct CacheHier {
    /* The levels, then one more whose access is memory's (a reference
     * that gets there costs mem_latency). With no level at all, lv[0] is
     * memory's, holding one set of one invalid way, so cache_access_fast
     * needs no level count. */
    Level lv[CACHE_MAX_LEVELS + 1];
    unsigned nlevels;
    unsigned mem_latency;
    CacheCounts n;
    /* cache_stats's answer, derived from n at each call; reached through a
     * pointer so that a const hierarchy can fill it in. */
    CacheStats *view;
    CacheStats view_store;
};

/* cache_access (cache.h) for the commonest reference, a hit in the most
 * recently used way of its L1 set, without a call: counts and costs it
 * exactly as cache_access does. Anything else goes on out of line, straight
 * to L1's lookup from way 1 (nothing was changed here but the write count
 * every reference makes). With no cache at all, lv[0]'s one way holds no
 * line, so that is where every reference goes: its after_mru is memory's
 * access. */
/* The set (row) of L1 that paddr's line maps to, and the line (the value
 * a way holding it holds): where cache_access_fast looks first. Three
 * loads and four operations: L1's row_shr is 0 (above). */
CACHE_HOT uint64_t *cache_l1_row(const CacheHier *c, uint64_t paddr, uint64_t *line)
{
    const Level *L = &c->lv[0];
    *line = paddr & L->tag_mask;
    return (uint64_t *)((char *)L->tags + (paddr & L->row_mask) * L->row_mul);
}

/* The ways of set `set` of level L (ways of them, MRU first), for
 * cache_state.c and the tests. */
static inline uint64_t *cache_level_set(const Level *L, uint64_t set)
{
    return L->tags + set * L->row_words;
}

/* cache_access_fast's inline hit (way 0 of the row holds the line),
 * after the reference's write count: count it, return its cycles. */
CACHE_HOT unsigned cache_mru_hit(CacheHier *c)
{
    c->lv[0].n.hits++;
    return c->lv[0].latency;
}

CACHE_HOT unsigned cache_access_fast(CacheHier *c, uint64_t paddr, bool write)
{
    uint64_t line;
    uint64_t *row = cache_l1_row(c, paddr, &line);
    c->n.writes += write;
    if (G_LIKELY(row[0] == line))
        return cache_mru_hit(c);
    return c->lv[0].after_mru(&c->lv[0], paddr, row, line);
}

#endif
