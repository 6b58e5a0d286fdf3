/* The cache hierarchy's layout and its access as an inline function, for
 * src/mmu: mmu.c (every data and walk reference of the simulator's hot
 * path goes through it), cache.c, cache_state.c, and mmu_fast.h (the
 * memo's hit with an L1 MRU hit, inline in the core). Everyone else uses
 * cache.h. See cache.c for
 * the layout of a level (ways in recency order, MRU first). */
#ifndef VMSPLIT_MMU_CACHE_PRIV_H
#define VMSPLIT_MMU_CACHE_PRIV_H

#include "mmu/cache.h"

#if defined(__GNUC__)
#define CACHE_HOT static inline __attribute__((always_inline))
#else
#define CACHE_HOT static inline
#endif

/* A way of L1 holds its line's address, paddr & tag_mask (one AND on the
 * inline path), a way of any other level its line's number, paddr >>
 * line_shift (its row is found from that number); tag >> tag_shift is the
 * line number either way. Neither is ever UINT64_MAX (the address has
 * line_shift >= 3 low bits clear, the number line_shift high bits), the
 * value of an empty way. */
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
/* The same, when way 0 of the line's set, row, is known not to hold the
 * line, whose tag is line: the lookup goes on from way 1. */
typedef unsigned (*CacheLevelAfterMruFn)(Level *L, uint64_t paddr, uint64_t *row,
                                         uint64_t line);

/* A set's row starts at set x row_words tags. When L1's ways fit in one
 * line (ways x 8 <= line size: every preset), its rows are padded to one
 * line each (the P4's 4 ways of 8 bytes to 64 bytes), so that a row lies
 * at byte paddr & row_mask of tags, the set times the line size:
 * cache_l1_row is two ANDs and an add. The padding ways stay empty and are
 * never looked up. A wider L1 ("wide") gives cache_l1_row a row of one
 * empty way (fast_tags, row_mask 0), which never holds the line, so that
 * every reference goes to after_mru, which finds the real row
 * (cache.c, level_after_mru_wide). Every field cache_l1_row reads is 64
 * bits wide, so that each instruction takes it straight from memory. */
struct Level {
    uint64_t *fast_tags;         /* L1: cache_l1_row's tags (tags, or one empty way) */
    uint64_t row_mask;           /* L1: (sets - 1) << line_shift, or 0 (wide) */
    uint64_t tag_mask;           /* L1: ~(line size - 1), a line's address */
    uint64_t *tags;              /* nsets rows of row_words, each set's ways MRU first */
    unsigned tag_shift;          /* tag >> tag_shift: the line's number */
    unsigned line_shift;
    unsigned ways;
    unsigned latency;
    uint64_t set_mask;           /* sets - 1 */
    size_t nsets;
    size_t row_words;            /* tags from one set's row to the next's: ways, or more in L1 */
    CacheLevelAccessFn access;   /* this level, then the next on a miss */
    CacheLevelAfterMruFn after_mru;   /* access, from way 1 on */
    CacheLevelAfterMruFn after_mru_wide;   /* a wide L1's after_mru, from its real row */
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
    bool avx2;                   /* some level's lookup is an AVX2 one (cache.c) */
    CacheCounts n;
    /* cache_stats's answer, derived from n at each call; reached through a
     * pointer so that a const hierarchy can fill it in. */
    CacheStats *view;
    CacheStats view_store;
};

/* Whether cache_new may choose the lookups that use AVX2 (cache.c) when
 * the host has it: true unless a test turns it off to check the portable
 * ones too (they must give the same outcome). Read only by cache_new. */
extern bool cache_avx2_allowed;

/* cache_access (cache.h) for the commonest reference, a hit in the most
 * recently used way of its L1 set, without a call: counts and costs it
 * exactly as cache_access does. Anything else goes on out of line, straight
 * to L1's lookup from way 1 (nothing was changed here but the write count
 * every reference makes). With no cache at all, lv[0]'s one way holds no
 * line, so that is where every reference goes: its after_mru is memory's
 * access. */
/* The set (row) of L1 that paddr's line maps to, and the line (the tag
 * a way holding it holds): where cache_access_fast looks first. Three
 * loads and three operations (above); in a wide L1, a row that never holds
 * the line. */
CACHE_HOT uint64_t *cache_l1_row(const CacheHier *c, uint64_t paddr, uint64_t *line)
{
    const Level *L = &c->lv[0];
    *line = paddr & L->tag_mask;
    return (uint64_t *)((char *)L->fast_tags + (paddr & L->row_mask));
}

/* The ways of set `set` of level L (ways of them, MRU first), for
 * cache_state.c and the tests. */
static inline uint64_t *cache_level_set(const Level *L, uint64_t set)
{
    return L->tags + set * L->row_words;
}

/* The number of the line a valid way of L holds, from its tag (above). */
static inline uint64_t cache_tag_line(const Level *L, uint64_t tag)
{
    return tag >> L->tag_shift;
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
