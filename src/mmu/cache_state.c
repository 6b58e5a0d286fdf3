/* Snapshots and statistics arithmetic of the cache hierarchy: see
 * cache_state.h. */
#include "mmu/cache_state.h"

#include <stdlib.h>
#include <string.h>

#include "mmu/cache_priv.h"

unsigned cache_state_min_line_shift(const CacheHier *c)
{
    unsigned shift = 63;
    for (unsigned l = 0; l < c->nlevels; l++)
        shift = MIN(shift, c->lv[l].line_shift);
    return shift;
}

/* Set bits a..b (inclusive) of the bitmap. */
static void seen_mark(uint64_t *seen, uint64_t a, uint64_t b)
{
    uint64_t wa = a / 64, wb = b / 64;
    uint64_t ma = ~0ull << (a % 64), mb = ~0ull >> (63 - b % 64);
    if (wa == wb) {
        seen[wa] |= ma & mb;
        return;
    }
    seen[wa] |= ma;
    for (uint64_t k = wa + 1; k < wb; k++)
        seen[k] = ~0ull;
    seen[wb] |= mb;
}

/* Bitmaps of sets up to this many words long live on the stack: every
 * preset's levels fit (8192 sets at most, Skylake's L3). */
#define SEEN_STACK_WORDS 128

/* Mark the sets that the spans' lines map to. */
static void seen_mark_spans(const Level *L, const CacheSpan *spans, size_t nspans,
                            uint64_t *seen)
{
    for (size_t i = 0; i < nspans; i++) {
        if (!spans[i].len)
            continue;
        uint64_t first = spans[i].pa >> L->line_shift;
        uint64_t last = (spans[i].pa + spans[i].len - 1) >> L->line_shift;
        if (last - first >= L->set_mask) {  /* every set */
            seen_mark(seen, 0, L->set_mask);
            continue;
        }
        /* Consecutive lines map to consecutive sets, wrapping once at most. */
        uint64_t a = first & L->set_mask, b = last & L->set_mask;
        if (a <= b)
            seen_mark(seen, a, b);
        else {
            seen_mark(seen, a, L->set_mask);
            seen_mark(seen, 0, b);
        }
    }
}

/* One run of n consecutive sets from set first (n >= 1): first and n, then
 * the sets' rows, which lie in that order in the level's array, padding
 * included (L1's rows may be padded, cache_priv.h: those words are always
 * empty, so they change no comparison, and the run is one copy). */
static void append_run(const Level *L, uint64_t first, uint64_t n, GByteArray *out)
{
    const uint64_t head[2] = { first, n };
    g_byte_array_append(out, (const guint8 *)head, sizeof head);
    g_byte_array_append(out, (const guint8 *)cache_level_set(L, first),
                        (guint)(n * L->row_words * sizeof *L->tags));
}

void cache_state_append_sets(const CacheHier *c, unsigned level, const CacheSpan *spans,
                             size_t nspans, GByteArray *out)
{
    g_assert(level < c->nlevels);
    const Level *L = &c->lv[level];
    size_t words = (L->nsets + 63) / 64;
    uint64_t stack[SEEN_STACK_WORDS];
    uint64_t *seen = words <= SEEN_STACK_WORDS ? memset(stack, 0, words * sizeof *stack)
                                               : g_new0(uint64_t, words);
    seen_mark_spans(L, spans, nspans, seen);
    /* The maximal runs of marked sets, in set order, each in one piece
     * (this runs at every period boundary of a fast-forward). A word's
     * runs are found a run at a time; one ending at the word's top bit
     * goes on into the next word's if that starts with a marked set. */
    uint64_t first = 0, n = 0;
    for (size_t k = 0; k < words; k++) {
        for (uint64_t b = seen[k]; b;) {
            unsigned lo = (unsigned)__builtin_ctzll(b);
            uint64_t past = ~(b >> lo);          /* its low zeros: the run */
            unsigned len = past ? (unsigned)__builtin_ctzll(past) : 64;
            uint64_t set = k * 64 + lo;
            if (n && first + n == set)
                n += len;
            else {
                if (n)
                    append_run(L, first, n, out);
                first = set;
                n = len;
            }
            b = lo + len < 64 ? b & (~0ull << (lo + len)) : 0;
        }
    }
    if (n)
        append_run(L, first, n, out);
    if (seen != stack)
        g_free(seen);
}

typedef struct {
    uint64_t first, last;        /* line numbers, inclusive */
} LineRun;

static int run_cmp(const void *a, const void *b)
{
    const LineRun *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The spans' lines at line_shift, sorted and merged; returns how many. */
static size_t line_runs(const CacheSpan *spans, size_t nspans, unsigned line_shift,
                        LineRun *out)
{
    size_t n = 0;
    bool sorted = true;
    for (size_t i = 0; i < nspans; i++) {
        if (!spans[i].len)
            continue;
        LineRun r = { spans[i].pa >> line_shift, (spans[i].pa + spans[i].len - 1) >> line_shift };
        if (n && r.first >= out[n - 1].first && r.first <= out[n - 1].last + 1)
            out[n - 1].last = MAX(out[n - 1].last, r.last);   /* the usual stride */
        else {
            sorted = sorted && (!n || r.first > out[n - 1].last);
            out[n++] = r;
        }
    }
    if (!sorted)
        qsort(out, n, sizeof *out, run_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && out[i].first <= out[m - 1].last + 1)
            out[m - 1].last = MAX(out[m - 1].last, out[i].last);
        else
            out[m++] = out[i];
    }
    return m;
}

static bool line_in(const LineRun *runs, size_t n, uint64_t line)
{
    size_t lo = 0, hi = n;                   /* the first run ending at or after line */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (runs[mid].last < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && runs[lo].first <= line;
}

/* One set of level L of start and the same set now, ways tags each (MRU
 * first; cache_tag_line gives a tag's line): now's most recent lines must
 * be start's longest most-recent run of lines within the runs, in the
 * same order. */
static bool set_equivalent(const Level *L, const guint8 *start, const guint8 *now,
                           const LineRun *runs, size_t nruns)
{
    for (unsigned w = 0; w < L->ways; w++) {
        uint64_t x, y;
        memcpy(&x, start + w * sizeof x, sizeof x);
        if (x == CACHE_TAG_INVALID || !line_in(runs, nruns, cache_tag_line(L, x)))
            return true;                     /* the end of the loop's run */
        memcpy(&y, now + w * sizeof y, sizeof y);
        if (x != y)
            return false;
    }
    return true;
}

bool cache_state_sets_equivalent(const CacheHier *c, unsigned level, const CacheSpan *spans,
                                 size_t nspans, const CacheStats *d,
                                 const GByteArray *start, const GByteArray *now)
{
    g_assert(level < c->nlevels);
    const Level *L = &c->lv[level];
    size_t row = L->row_words * sizeof *L->tags;     /* as append_run copies it */
    if (d->level[level].misses || d->level[level].evictions || start->len != now->len)
        return false;
    if (!d->level[level].hits)
        return true;                         /* not reached by the loop */
    LineRun *runs = g_new(LineRun, nspans + 1);
    size_t nruns = line_runs(spans, nspans, L->line_shift, runs);
    bool ok = true;
    /* Run by run (cache_state_append_sets): the same sets, then set by set. */
    for (size_t at = 0; ok && at < start->len;) {
        uint64_t hs[2], hn[2];
        ok = start->len - at >= sizeof hs;
        if (!ok)
            break;
        memcpy(hs, start->data + at, sizeof hs);
        memcpy(hn, now->data + at, sizeof hn);
        at += sizeof hs;
        ok = hs[0] == hn[0] && hs[1] == hn[1] && hs[1] <= (start->len - at) / row;
        for (uint64_t i = 0; ok && i < hs[1]; i++, at += row)
            ok = !memcmp(start->data + at, now->data + at, row) ||
                 set_equivalent(L, start->data + at, now->data + at, runs, nruns);
    }
    g_free(runs);
    return ok;
}

bool cache_state_level_moved(const CacheStats *d, unsigned level)
{
    g_assert(level < CACHE_MAX_LEVELS);
    return d->level[level].hits || d->level[level].misses;
}

/* Every counter of CacheStats, once: cache_state_stats_diff must not
 * forget one (cache_state_stats_add, below it, converts each to the
 * counts behind it). */
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
 * is added above and to cache_state_stats_add. */
G_STATIC_ASSERT(sizeof(CacheStats) == (3 * CACHE_MAX_LEVELS + 5) * sizeof(uint64_t));

#define SUB(d, a, b) (d) = (a) - (b)
void cache_state_stats_diff(CacheStats *d, const CacheStats *a, const CacheStats *b)
{
    CACHE_STATS_FIELDS(SUB, d, a, b);
}
#undef SUB

/* The counts behind cache_stats (cache_priv.h) get times x d's share, so
 * that every statistic derived from them grows by times x d: each is a
 * linear function of the counts (cache.c, cache_stats), and d, a difference
 * of two cache_stats answers of this hierarchy, is itself that function of
 * the counts' difference. A d that is not (a total that disagrees with its
 * counts) is a caller's error. */
void cache_state_stats_add(CacheHier *c, const CacheStats *d, uint64_t times)
{
    unsigned nl = c->nlevels;
    uint64_t cycles = 0;
    for (unsigned l = 0; l < CACHE_MAX_LEVELS; l++) {
        const CacheLevelStats *x = &d->level[l];
        if (l >= nl) {
            g_assert(!x->hits && !x->misses && !x->evictions);
            continue;
        }
        CacheLevelCounts *k = &c->lv[l].n;
        k->hits += times * x->hits;
        if (l + 1 == nl)         /* the others' misses are derived (cache_stats) */
            k->misses += times * x->misses;
        else
            g_assert(x->misses == d->level[l + 1].hits + d->level[l + 1].misses);
        k->fills_empty += times * (x->misses - x->evictions);
        cycles += x->hits * c->lv[l].latency;
    }
    uint64_t cached = nl ? d->level[0].hits + d->level[0].misses : d->accesses;
    uint64_t mem = (nl ? d->level[nl - 1].misses : d->accesses) + d->uncached;
    g_assert(d->accesses == cached && d->mem == mem &&
             d->cycles == cycles + mem * c->mem_latency);
    if (!nl)
        c->n.bare += times * d->accesses;
    c->n.writes += times * d->writes;
    c->n.uncached += times * d->uncached;
}
