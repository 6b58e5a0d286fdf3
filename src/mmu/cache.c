/* Set-associative cache hierarchy with true LRU. See cache.h for the model.
 *
 * Layout: each level keeps its tags in one array of sets x ways; within a
 * set the ways are kept in recency order, most recently used first. A hit in
 * way 0 (the common case: consecutive references to one line) costs one
 * compare and no reordering; a hit further down moves that way to the front;
 * a miss drops the last way (the LRU victim) and puts the new line in front.
 * Invalid ways hold CACHE_TAG_INVALID and collect at the back, so the last
 * way is always the victim, valid or not. The "tag" stored is the whole
 * line: comparing the set bits too is harmless. In L1 it is the line's
 * address (paddr & tag_mask: one AND on the inline path, and the row one
 * AND and a multiply from paddr), in the other levels its number (paddr >>
 * line_shift, from which the row is an AND and a constant shift):
 * cache_priv.h. Masks and shifts are computed once in cache_new.
 *
 * Access path (host speed only; the outcome is the plain loop over levels
 * and ways described above): each level has a lookup function for its
 * associativity, chosen in cache_new, that compares the ways unrolled and
 * shifts the set once, then on a miss tail-calls the next level's, and the
 * last level's memory's. So cache_access is one count and a jump, and a
 * level costs its compares, one fixed-size shift and a count or two:
 * totals that can be derived from the levels' counts are, when read
 * (cache_stats). Where the host has AVX2, an 8-way last level compares
 * most of its ways at once and shifts them in two moves (below: the same
 * compares and moves, fewer instructions). */
#include "mmu/cache.h"
#include "mmu/cache_priv.h"

#include <stdarg.h>
#include <string.h>

/* 256 MiB per level: far beyond any modelled part; bounds the tag array. */
#define CACHE_MAX_SIZE (1u << 28)

G_DEFINE_QUARK(vmsplit-cache-error-quark, cache_error)

static const char *const level_names[CACHE_MAX_LEVELS] = { "l1d", "l2", "l3" };

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static unsigned log2u(uint64_t v)
{
    unsigned s = 0;
    while ((1ULL << s) < v)
        s++;
    return s;
}

static bool geom_fail(const char **key, const char *k, GError **err,
                      const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static bool geom_fail(const char **key, const char *k, GError **err,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (key)
        *key = k;
    g_set_error_literal(err, CACHE_ERROR, CACHE_ERROR_GEOMETRY, msg);
    g_free(msg);
    return false;
}

bool cache_geom_check(const CacheGeom *g, const char **key, GError **err)
{
    if (g->size == 0)
        return true;
    if (g->size > CACHE_MAX_SIZE)
        return geom_fail(key, "size", err, "%u bytes is too large; expected at most %u",
                         g->size, CACHE_MAX_SIZE);
    if (!is_pow2(g->line) || g->line < CACHE_MIN_LINE || g->line > CACHE_MAX_LINE)
        return geom_fail(key, "line", err,
                         "%u; expected a power of two from %u to %u bytes", g->line,
                         CACHE_MIN_LINE, CACHE_MAX_LINE);
    if (g->ways < 1 || g->ways > CACHE_MAX_WAYS)
        return geom_fail(key, "ways", err, "%u; expected 1 to %u", g->ways,
                         CACHE_MAX_WAYS);
    uint64_t way_bytes = (uint64_t)g->ways * g->line;
    if (g->size % way_bytes)
        return geom_fail(key, "ways", err,
                         "ways x line = %u x %u does not divide size %u; expected a "
                         "whole number of sets", g->ways, g->line, g->size);
    uint64_t sets = g->size / way_bytes;
    if (!is_pow2(sets))
        return geom_fail(key, "size", err,
                         "%u / (%u ways x %u-byte lines) = %" G_GUINT64_FORMAT
                         " sets; expected a power of two", g->size, g->ways, g->line,
                         sets);
    if (g->latency < 1)
        return geom_fail(key, "latency", err, "0; expected at least 1 cycle");
    return true;
}

/* ---- one set ----------------------------------------------------------- */

/* Two ways at once, at any 8-byte alignment; may alias the tags. */
typedef uint64_t CacheWay2 __attribute__((vector_size(16), aligned(8), may_alias));

/* Move ways 0..w-1 of a set down one place (to 1..w). Only inlined with a
 * constant w <= 15 (16 ways at most are shifted this way): the loops then
 * unroll into a few 16-byte moves, all loads before all stores, where a
 * memmove or a way-by-way loop would become a library call. */
CACHE_HOT void set_shift(uint64_t *row, unsigned w)
{
    CacheWay2 two[8];
    uint64_t odd = 0;
    for (unsigned k = 0; k < w / 2; k++)
        two[k] = *(const CacheWay2 *)(row + 2 * k);
    if (w & 1)
        odd = row[w - 1];
    for (unsigned k = 0; k < w / 2; k++)
        *(CacheWay2 *)(row + 1 + 2 * k) = two[k];
    if (w & 1)
        row[w] = odd;
}

/* Between a set's scan and its shift: no load of the scan may be kept
 * for the shift, so each compare takes its way straight from memory
 * (one instruction, not a load and a compare) and the shift loads only
 * the ways it moves, after the scan. Emits nothing; the tags are the
 * same memory either way, so the outcome cannot change. */
#define CACHE_SCAN_DONE() __asm__ volatile("" ::: "memory")

/* Look for the line at way w of a set: on a hit, the ways above it move
 * down one place and it goes to the front (MRU). */
#define SET_TRY_WAY(row, line, w)                                          \
    do {                                                                   \
        if ((row)[w] == (line)) {                                          \
            CACHE_SCAN_DONE();                                             \
            set_shift((row), (w));                                         \
            (row)[0] = (line);                                             \
            return true;                                                   \
        }                                                                  \
    } while (0)

/* A miss in a set of n ways: every way moves down one place, the last
 * (LRU, or invalid: invalid ways collect at the back) falls off, and the
 * line goes in front; a fill of an empty way is counted in s. */
CACHE_HOT bool set_miss(uint64_t *row, uint64_t line, unsigned n, CacheLevelCounts *s)
{
    CACHE_SCAN_DONE();
    /* Counted first: the compare then takes the way straight from memory
     * (one instruction fewer than a load kept for after the shift). */
    if (row[n - 1] == CACHE_TAG_INVALID)
        s->fills_empty++;
    set_shift(row, n - 1);
    row[0] = line;
    return false;
}

/* One set of 4, 8 or 16 ways (the presets' associativities): true on a
 * hit (level_rest counts the lookup, once for every way it may end at).
 * The scan is unrolled, one compare and branch per way, and the ways
 * are shifted once, by a fixed amount, after the line is found or not:
 * the same reordering, way for way, as set_access_any's carry through
 * every way scanned (tests/mmu/test_cache.c checks each width against a
 * naive timestamp LRU). The line is in at most one way. first is 1 when
 * way 0 is already known not to hold the line (cache_access_fast),
 * else 0; a constant wherever these are inlined. */
CACHE_HOT bool set_access_4(uint64_t *row, uint64_t line, CacheLevelCounts *s, unsigned first)
{
    if (!first)
        SET_TRY_WAY(row, line, 0);
    SET_TRY_WAY(row, line, 1);
    SET_TRY_WAY(row, line, 2);
    SET_TRY_WAY(row, line, 3);
    return set_miss(row, line, 4, s);
}

CACHE_HOT bool set_access_8(uint64_t *row, uint64_t line, CacheLevelCounts *s, unsigned first)
{
    if (!first)
        SET_TRY_WAY(row, line, 0);
    SET_TRY_WAY(row, line, 1);
    SET_TRY_WAY(row, line, 2);
    SET_TRY_WAY(row, line, 3);
    SET_TRY_WAY(row, line, 4);
    SET_TRY_WAY(row, line, 5);
    SET_TRY_WAY(row, line, 6);
    SET_TRY_WAY(row, line, 7);
    return set_miss(row, line, 8, s);
}

CACHE_HOT bool set_access_16(uint64_t *row, uint64_t line, CacheLevelCounts *s, unsigned first)
{
    if (!first)
        SET_TRY_WAY(row, line, 0);
    SET_TRY_WAY(row, line, 1);
    SET_TRY_WAY(row, line, 2);
    SET_TRY_WAY(row, line, 3);
    SET_TRY_WAY(row, line, 4);
    SET_TRY_WAY(row, line, 5);
    SET_TRY_WAY(row, line, 6);
    SET_TRY_WAY(row, line, 7);
    SET_TRY_WAY(row, line, 8);
    SET_TRY_WAY(row, line, 9);
    SET_TRY_WAY(row, line, 10);
    SET_TRY_WAY(row, line, 11);
    SET_TRY_WAY(row, line, 12);
    SET_TRY_WAY(row, line, 13);
    SET_TRY_WAY(row, line, 14);
    SET_TRY_WAY(row, line, 15);
    return set_miss(row, line, 16, s);
}

/* Any associativity: scan the ways, shifting each one down a place as we
 * pass it; on a hit at way w the ways before it have moved to 1..w and the
 * line goes to the front; on a miss the last (LRU) way has fallen off. */
CACHE_HOT bool set_access_any(uint64_t *row, uint64_t line, unsigned n, CacheLevelCounts *s)
{
    uint64_t carry = row[0];
    if (carry == line)
        return true;
    for (unsigned w = 1; w < n; w++) {
        uint64_t t = row[w];
        row[w] = carry;
        if (t == line) {
            row[0] = line;
            return true;
        }
        carry = t;
    }
    if (carry == CACHE_TAG_INVALID)
        s->fills_empty++;
    row[0] = line;
    return false;
}

/* ---- one level, then the next ------------------------------------------ */

/* What a level does after a miss (its lookup function knows, chosen in
 * cache_new): NEXT_MEM, it is the last level and memory supplies the line
 * (the level counts the miss: memory's references); NEXT_CALL, the next
 * level's lookup, called through L[1].access; 4, 8 or 16, the next level
 * is the last and has that many ways, and its lookup is inlined here (the
 * presets' pairs: no call between L1 and L2). Only the last level counts
 * its misses: every lookup of a level but L1 follows a miss in the level
 * above and nothing else, so a level's misses are the next level's hits +
 * misses (cache_stats derives them). */
enum { NEXT_CALL = -1, NEXT_MEM = 0 };

/* Level L's set row looked up for line from way first, as its width n
 * (0: any, which starts from way 0) has it done. */
CACHE_HOT bool level_set_access(Level *L, uint64_t *row, uint64_t line, unsigned n,
                                unsigned first)
{
    return n == 4 ? set_access_4(row, line, &L->n, first)
         : n == 8 ? set_access_8(row, line, &L->n, first)
         : n == 16 ? set_access_16(row, line, &L->n, first)
         : set_access_any(row, line, L->ways, &L->n);
}

/* The last level's count of a lookup that hit or not, and the cycles of
 * whoever supplied the line. Counted after the scan, not at each of its
 * exits: the hits then share one increment (dd: 1 % fewer host
 * instructions). */
CACHE_HOT unsigned level_count_last(Level *L, bool hit)
{
    if (!hit) {
        L->n.misses++;
        return L[1].latency;     /* memory's level */
    }
    L->n.hits++;
    return L->latency;
}

/* The last level (n ways, 0: any) from way first of the line's set. */
CACHE_HOT unsigned level_rest_last(Level *L, uint64_t *row, uint64_t line, unsigned n,
                                   unsigned first)
{
    return level_count_last(L, level_set_access(L, row, line, n, first));
}

/* The set of level L (n ways, 0: any; not L1, cache_l1_row) that paddr's
 * line maps to, and the line's number, its tag there. */
CACHE_HOT uint64_t *level_row(const Level *L, uint64_t paddr, unsigned n, uint64_t *line)
{
    *line = paddr >> L->line_shift;
    return L->tags + (size_t)(*line & L->set_mask) * (n ? n : L->row_words);
}

/* The set of L1 that paddr's line maps to, wide or not, and the line's
 * address, its tag there (cache_priv.h). */
CACHE_HOT uint64_t *l1_row(const Level *L, uint64_t paddr, uint64_t *line)
{
    *line = paddr & L->tag_mask;
    return L->tags + (size_t)((paddr >> L->line_shift) & L->set_mask) * L->row_words;
}

/* The last level, from way 0. */
CACHE_HOT unsigned level_step_last(Level *L, uint64_t paddr, unsigned n)
{
    uint64_t line;
    uint64_t *row = level_row(L, paddr, n, &line);
    return level_rest_last(L, row, line, n, 0);
}

/* Level L of n ways (0: any) from way first of the line's set, row, then
 * on a miss what next says (above). Returns the cycles of the level that
 * supplied the line. */
CACHE_HOT unsigned level_rest(Level *L, uint64_t paddr, uint64_t *row, uint64_t line,
                              unsigned n, unsigned first, int next)
{
    if (next == NEXT_MEM)
        return level_rest_last(L, row, line, n, first);
    bool hit = level_set_access(L, row, line, n, first);
    if (!hit) {
        if (next == NEXT_CALL)
            return L[1].access(L + 1, paddr);
        return level_step_last(L + 1, paddr, (unsigned)next);
    }
    L->n.hits++;
    return L->latency;
}

/* The same from way 0: CacheLevelAccessFn's job. */
CACHE_HOT unsigned level_step(Level *L, uint64_t paddr, unsigned n, int next)
{
    uint64_t line;
    uint64_t *row = level_row(L, paddr, n, &line);
    return level_rest(L, paddr, row, line, n, 0, next);
}

/* One CacheLevelAccessFn and one CacheLevelAfterMruFn for each width
 * (w: 4, 8, 16; any: 0) and next step (mem, call, or the last level's
 * width inline: m4, m8, m16). An after_mru of any width looks at way 0
 * again (set_access_any), which finds nothing there and changes nothing.
 * The access functions are the levels' below L1 (level_row); L1's
 * after_mru takes its row and tag from cache_l1_row. */
#define LEVEL_FNS(name, w, next)                                                  \
    static unsigned level_access_##name(Level *L, uint64_t paddr)                 \
    {                                                                             \
        return level_step(L, paddr, w, next);                                     \
    }                                                                             \
    static unsigned level_after_mru_##name(Level *L, uint64_t paddr, uint64_t *row, \
                                           uint64_t line)                         \
    {                                                                             \
        return level_rest(L, paddr, row, line, w, 1, next);                       \
    }
#define LEVEL_FNS_W(w)                                                            \
    LEVEL_FNS(w##_mem, w, NEXT_MEM)                                               \
    LEVEL_FNS(w##_call, w, NEXT_CALL)                                             \
    LEVEL_FNS(w##_m4, w, 4)                                                       \
    LEVEL_FNS(w##_m8, w, 8)                                                       \
    LEVEL_FNS(w##_m16, w, 16)
LEVEL_FNS_W(4)
LEVEL_FNS_W(8)
LEVEL_FNS_W(16)
LEVEL_FNS(0_mem, 0, NEXT_MEM)
LEVEL_FNS(0_call, 0, NEXT_CALL)

/* [width][next]: width 4, 8, 16, any; next mem, call, m4, m8, m16 (the
 * any row has no inline next: call). */
static const struct {
    CacheLevelAccessFn access;
    CacheLevelAfterMruFn after_mru;
} level_fns[4][5] = {
#define LEVEL_FN(name) { level_access_##name, level_after_mru_##name }
    { LEVEL_FN(4_mem), LEVEL_FN(4_call), LEVEL_FN(4_m4), LEVEL_FN(4_m8), LEVEL_FN(4_m16) },
    { LEVEL_FN(8_mem), LEVEL_FN(8_call), LEVEL_FN(8_m4), LEVEL_FN(8_m8), LEVEL_FN(8_m16) },
    { LEVEL_FN(16_mem), LEVEL_FN(16_call), LEVEL_FN(16_m4), LEVEL_FN(16_m8),
      LEVEL_FN(16_m16) },
    { LEVEL_FN(0_mem), LEVEL_FN(0_call), LEVEL_FN(0_call), LEVEL_FN(0_call), LEVEL_FN(0_call) },
#undef LEVEL_FN
};

/* level_fns's row for a width. */
static unsigned width_index(unsigned ways)
{
    return ways == 4 ? 0 : ways == 8 ? 1 : ways == 16 ? 2 : 3;
}

/* ---- an 8-way last level with AVX2 ------------------------------------- */

/* Where the host has AVX2 (cache_new asks the CPU), an 8-way last level
 * inline after the level above (m8) or reached by a call (8_mem) is looked
 * up by the functions below instead: the same compares and moves, so the
 * same outcome, way for way, as set_access_8's (tests/mmu/test_cache.c runs
 * the naive LRU comparison with them and without). They pay where the line
 * misses: pageloop's data line misses L1 and L2 every time, and ways 3 to 7
 * are compared at once (two overlapping 4-way compares) and the set shifted
 * with two 32-byte moves, not 5 compares and 9 moves (-12 M host
 * instructions on pageloop). Ways 0 to 2 are still compared one by one:
 * that is where almost every L2 hit of dd lands (a wide compare first
 * would cost each of them more). Compiled for AVX2 whatever the build's
 * flags (target attribute), chosen only when __builtin_cpu_supports says
 * the CPU and OS have it. SSE2 compares two ways at a time in 4-byte
 * lanes (an 8-byte equality takes a shuffle and an AND more), and
 * session 6's SSE2 scan compared every way before the first, where dd's
 * hits are: it did not pay. */
#if defined(__GNUC__) && defined(__x86_64__)
#define CACHE_AVX2 1
#include <immintrin.h>

#define CACHE_AVX2_FN __attribute__((target("avx2")))

CACHE_AVX2_FN CACHE_HOT bool set_access_8_avx2(uint64_t *row, uint64_t line,
                                               CacheLevelCounts *s)
{
    SET_TRY_WAY(row, line, 0);
    SET_TRY_WAY(row, line, 1);
    SET_TRY_WAY(row, line, 2);
    __m256i l = _mm256_set1_epi64x((long long)line);
    __m256i ways3_6 = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)(row + 3)), l);
    __m256i ways4_7 = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)(row + 4)), l);
    __m256i any = _mm256_or_si256(ways3_6, ways4_7);
    if (!_mm256_testz_si256(any, any)) {
        /* A hit: which way, and its shift, one by one as set_access_8. */
        SET_TRY_WAY(row, line, 3);
        SET_TRY_WAY(row, line, 4);
        SET_TRY_WAY(row, line, 5);
        SET_TRY_WAY(row, line, 6);
        SET_TRY_WAY(row, line, 7);
    }
    /* A miss: set_miss's steps, ways 0..6 moved to 1..7 as words 0..3 to
     * 1..4 and 3..6 to 4..7 (both loads before either store; word 4 is
     * written twice, both times with word 3). */
    CACHE_SCAN_DONE();
    if (row[7] == CACHE_TAG_INVALID)
        s->fills_empty++;
    __m256i lo = _mm256_loadu_si256((const __m256i *)row);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(row + 3));
    _mm256_storeu_si256((__m256i *)(row + 1), lo);
    _mm256_storeu_si256((__m256i *)(row + 4), hi);
    row[0] = line;
    return false;
}

/* level_step_last for an 8-way level. */
CACHE_AVX2_FN CACHE_HOT unsigned level_step_last_8_avx2(Level *L, uint64_t paddr)
{
    uint64_t line;
    uint64_t *row = level_row(L, paddr, 8, &line);
    return level_count_last(L, set_access_8_avx2(row, line, &L->n));
}

/* level_rest with next 8 (m8). */
CACHE_AVX2_FN CACHE_HOT unsigned level_rest_m8_avx2(Level *L, uint64_t paddr, uint64_t *row,
                                                   uint64_t line, unsigned n, unsigned first)
{
    if (!level_set_access(L, row, line, n, first))
        return level_step_last_8_avx2(L + 1, paddr);
    L->n.hits++;
    return L->latency;
}

#define LEVEL_FNS_M8_AVX2(w)                                                      \
    CACHE_AVX2_FN static unsigned level_access_##w##_m8_avx2(Level *L, uint64_t paddr) \
    {                                                                             \
        uint64_t line;                                                            \
        uint64_t *row = level_row(L, paddr, w, &line);                            \
        return level_rest_m8_avx2(L, paddr, row, line, w, 0);                     \
    }                                                                             \
    CACHE_AVX2_FN static unsigned level_after_mru_##w##_m8_avx2(Level *L, uint64_t paddr, \
                                                                uint64_t *row, uint64_t line) \
    {                                                                             \
        return level_rest_m8_avx2(L, paddr, row, line, w, 1);                     \
    }
LEVEL_FNS_M8_AVX2(4)
LEVEL_FNS_M8_AVX2(8)
LEVEL_FNS_M8_AVX2(16)

CACHE_AVX2_FN static unsigned level_access_8_mem_avx2(Level *L, uint64_t paddr)
{
    return level_step_last_8_avx2(L, paddr);
}

/* level_fns's m8 column with AVX2, by width (4, 8, 16). */
static const struct {
    CacheLevelAccessFn access;
    CacheLevelAfterMruFn after_mru;
} level_fns_m8_avx2[3] = {
    { level_access_4_m8_avx2, level_after_mru_4_m8_avx2 },
    { level_access_8_m8_avx2, level_after_mru_8_m8_avx2 },
    { level_access_16_m8_avx2, level_after_mru_16_m8_avx2 },
};
#endif

bool cache_avx2_allowed = true;

/* Whether cache_new may choose the AVX2 lookups: allowed, and the CPU and
 * OS have AVX2. */
static bool avx2_usable(void)
{
#ifdef CACHE_AVX2
    return cache_avx2_allowed && __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

/* A wide L1's after_mru (cache_priv.h): cache_l1_row's row held nothing
 * and nothing was changed, so the lookup starts over from way 0 of the
 * real row; a hit there is counted and costed as cache_mru_hit does. */
static unsigned level_after_mru_wide(Level *L, uint64_t paddr, uint64_t *row, uint64_t line)
{
    row = l1_row(L, paddr, &line);
    if (row[0] == line) {
        L->n.hits++;
        return L->latency;
    }
    return L->after_mru_wide(L, paddr, row, line);
}

/* Level i's functions in a hierarchy of n levels (all initialized). */
static void level_choose(CacheHier *c, unsigned i)
{
    Level *L = &c->lv[i];
    unsigned next;
    if (i + 1 == c->nlevels)
        next = 0;                                /* mem */
    else if (i + 2 == c->nlevels && width_index(c->lv[i + 1].ways) < 3)
        next = 2 + width_index(c->lv[i + 1].ways);   /* the last level inline */
    else
        next = 1;                                /* call */
    /* L1's lookup starts at cache_access_fast (cache_access): its
     * tags are not the access functions' (level_row). */
    L->access = i ? level_fns[width_index(L->ways)][next].access : NULL;
    L->after_mru = level_fns[width_index(L->ways)][next].after_mru;
#ifdef CACHE_AVX2
    if (avx2_usable()) {
        if (next == 3 && width_index(L->ways) < 3) {             /* m8 */
            L->access = i ? level_fns_m8_avx2[width_index(L->ways)].access : NULL;
            L->after_mru = level_fns_m8_avx2[width_index(L->ways)].after_mru;
            c->avx2 = true;
        } else if (next == 0 && i && L->ways == 8) {              /* 8_mem below L1 */
            L->access = level_access_8_mem_avx2;
            c->avx2 = true;
        }
    }
#endif
    if (!i && L->fast_tags != L->tags) {
        L->after_mru_wide = L->after_mru;
        L->after_mru = level_after_mru_wide;
    }
}

/* Memory when there is no level at all: its references are counted here.
 * Behind a last level, memory is never called (NEXT_MEM). */
static unsigned level_access_mem_bare(Level *L, uint64_t paddr)
{
    (void)paddr;
    L->all->bare++;
    return L->latency;
}

/* lv[0]'s after_mru with no level at all: memory's. */
static unsigned level_after_mru_bare(Level *L, uint64_t paddr, uint64_t *row, uint64_t line)
{
    (void)row, (void)line;
    return level_access_mem_bare(L, paddr);
}

/* ---- the hierarchy ------------------------------------------------------ */

/* The line no reference has: UINT64_MAX is no line number (cache_priv.h). */
static uint64_t no_line = CACHE_TAG_INVALID;

/* Level L (l1: the first) of geometry g (cache_priv.h: its tags and
 * where its rows lie). */
static void level_init(Level *L, const CacheGeom *g, CacheCounts *all, bool l1)
{
    L->ways = g->ways;
    L->latency = g->latency;
    L->line_shift = log2u(g->line);
    L->nsets = g->size / ((size_t)g->ways * g->line);
    L->set_mask = L->nsets - 1;
    uint64_t stride = (uint64_t)g->ways * sizeof *L->tags;
    bool fast = l1 && stride <= g->line;
    if (fast)
        stride = g->line;
    L->row_words = stride / sizeof *L->tags;
    L->tags = g_new(uint64_t, L->nsets * L->row_words);
    for (size_t i = 0; i < L->nsets * L->row_words; i++)
        L->tags[i] = CACHE_TAG_INVALID;
    if (l1) {
        L->fast_tags = fast ? L->tags : &no_line;
        L->row_mask = fast ? (uint64_t)L->set_mask << L->line_shift : 0;
        L->tag_mask = ~(uint64_t)(g->line - 1);
        L->tag_shift = L->line_shift;
    }
    L->all = all;
}

/* Memory's level, after the last cache (or the only one, bare). Its tag
 * is never written: the last level returns its latency itself (NEXT_MEM),
 * with no level at all lv[0]'s lookup is level_access_mem_bare, and
 * cache_access_fast only reads way 0 of set 0, which holds no line. */
static void level_init_mem(Level *L, CacheCounts *all, unsigned mem_latency, bool bare)
{
    *L = (Level){ .fast_tags = &no_line, .tags = &no_line, .row_mask = 0, .tag_mask = ~(uint64_t)7,
                  .tag_shift = 3, .set_mask = 0, .row_words = 1,
                  .line_shift = 3, .ways = 1,
                  .latency = mem_latency, .nsets = 1,
                  .access = bare ? level_access_mem_bare : NULL,
                  .after_mru = level_after_mru_bare, .all = all };
}

CacheHier *cache_new(const CacheGeom *l1, const CacheGeom *l2,
                     const CacheGeom *l3, unsigned mem_latency, GError **err)
{
    const CacheGeom *g[CACHE_MAX_LEVELS] = { l1, l2, l3 };
    unsigned n = 0;
    for (unsigned i = 0; i < CACHE_MAX_LEVELS; i++) {
        bool present = g[i] && g[i]->size;
        if (!present)
            continue;
        if (n != i) {
            g_set_error(err, CACHE_ERROR, CACHE_ERROR_GEOMETRY,
                        "%s.size: a %s cache without %s; expected the levels to be "
                        "contiguous from l1d", level_names[i], level_names[i],
                        level_names[n]);
            return NULL;
        }
        const char *key = NULL;
        if (!cache_geom_check(g[i], &key, err)) {
            g_prefix_error(err, "%s.%s: ", level_names[i], key);
            return NULL;
        }
        n++;
    }
    if (mem_latency < 1) {
        g_set_error(err, CACHE_ERROR, CACHE_ERROR_GEOMETRY,
                    "memory.latency: 0; expected at least 1 cycle");
        return NULL;
    }
    CacheHier *c = g_new0(CacheHier, 1);
    c->nlevels = n;
    c->mem_latency = mem_latency;
    for (unsigned i = 0; i < n; i++)
        level_init(&c->lv[i], g[i], &c->n, i == 0);
    level_init_mem(&c->lv[n], &c->n, mem_latency, n == 0);
    for (unsigned i = 0; i < n; i++)
        level_choose(c, i);
    c->view = &c->view_store;
    return c;
}

CacheHier *cache_new_from_preset(const Preset *p, GError **err)
{
    return cache_new(&p->l1d, &p->l2, &p->l3, p->mem_latency, err);
}

void cache_free(CacheHier *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nlevels; i++)
        g_free(c->lv[i].tags);
    g_free(c);
}

/* The inline path out of line: L1's lookup always starts there (its
 * tags and rows are cache_l1_row's), so L1 has no access function. */
unsigned cache_access(CacheHier *c, uint64_t paddr, bool write)
{
    return cache_access_fast(c, paddr, write);
}

/* The level that supplies a line is the first that holds it: a level is
 * looked up only after every level above it missed. So probing first,
 * without side effects, tells where cache_access will find it. */
unsigned cache_access_from(CacheHier *c, uint64_t paddr, bool write,
                           CacheLevel *from)
{
    if (from)
        *from = cache_probe(c, paddr);
    return cache_access(c, paddr, write);
}

unsigned cache_access_uncached(CacheHier *c, uint64_t paddr, bool write)
{
    (void)paddr;
    c->n.uncached++;
    c->n.writes += write;
    return c->mem_latency;
}

bool cache_contains(const CacheHier *c, CacheLevel level, uint64_t paddr)
{
    if ((unsigned)level >= c->nlevels)
        return false;
    uint64_t line;
    const Level *L = &c->lv[level];
    const uint64_t *row = level == CACHE_L1 ? l1_row(L, paddr, &line)
                                            : level_row(L, paddr, 0, &line);
    for (unsigned w = 0; w < L->ways; w++)
        if (row[w] == line)
            return true;
    return false;
}

CacheLevel cache_probe(const CacheHier *c, uint64_t paddr)
{
    for (unsigned i = 0; i < c->nlevels; i++)
        if (cache_contains(c, (CacheLevel)i, paddr))
            return (CacheLevel)i;
    return CACHE_MEM;
}

void cache_invalidate_all(CacheHier *c)
{
    for (unsigned i = 0; i < c->nlevels; i++) {
        Level *L = &c->lv[i];
        for (size_t k = 0; k < L->nsets * L->row_words; k++)
            L->tags[k] = CACHE_TAG_INVALID;
    }
}

unsigned cache_levels(const CacheHier *c) { return c->nlevels; }

unsigned cache_latency(const CacheHier *c, CacheLevel level)
{
    if (level == CACHE_MEM)
        return c->mem_latency;
    g_assert((unsigned)level < c->nlevels);
    return c->lv[level].latency;
}

/* The statistics from the counts. Each total is exact, not an estimate
 * (uint64_t arithmetic wraps, so every identity holds modulo 2^64 even
 * past overflow, as the running sums it replaces did):
 * - accesses: every cached reference (cache_access, cache_access_fast,
 *   cache_access_from through cache_access) looks L1 up exactly once, a hit
 *   or a miss; uncached ones look nothing up. With no level, each goes
 *   straight to level_access_mem_bare, which counts it.
 * - mem: a level is looked up only after the one above missed, and a miss
 *   in the last level goes on to memory and nowhere else; so memory supplied
 *   the last level's misses (bare: every cached reference), plus the
 *   uncached references.
 * - cycles: a reference returns the latency of the level that supplied it,
 *   the one it hit (it hits at most one: the lookup stops there) or memory;
 *   latencies never change after cache_new. So the sum of the returns is
 *   sum(hits[l] x latency[l]) + mem x mem_latency.
 * - misses: only the last level counts its own (level_rest_last). A level
 *   below L1 is looked up exactly when the level above missed (a miss goes
 *   on to the next level and nowhere else; nothing else looks it up), so
 *   the level above's misses are its hits + misses.
 * - evictions: a miss fills exactly one way, its set's last, which held a
 *   line (an eviction) or none (fills_empty).
 * cache_state_stats_add adds to the counts in the same terms (linear maps,
 * so a delta of two answers converts back exactly). */
const CacheStats *cache_stats(const CacheHier *c)
{
    const CacheCounts *n = &c->n;
    CacheStats *v = c->view;
    memset(v, 0, sizeof *v);
    uint64_t cycles = 0;
    for (unsigned l = c->nlevels; l-- > 0;) {
        const CacheLevelCounts *k = &c->lv[l].n;
        v->level[l].hits = k->hits;
        v->level[l].misses = l + 1 == c->nlevels ? k->misses
                           : v->level[l + 1].hits + v->level[l + 1].misses;
        v->level[l].evictions = v->level[l].misses - k->fills_empty;
        cycles += k->hits * c->lv[l].latency;
    }
    v->accesses = c->nlevels ? v->level[0].hits + v->level[0].misses : n->bare;
    v->mem = (c->nlevels ? v->level[c->nlevels - 1].misses : n->bare) + n->uncached;
    v->writes = n->writes;
    v->uncached = n->uncached;
    v->cycles = cycles + v->mem * c->mem_latency;
    return v;
}

void cache_reset_stats(CacheHier *c)
{
    memset(&c->n, 0, sizeof c->n);
    for (unsigned l = 0; l < c->nlevels; l++)
        memset(&c->lv[l].n, 0, sizeof c->lv[l].n);
}
