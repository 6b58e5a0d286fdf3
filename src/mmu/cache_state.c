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

void cache_state_append_sets(const CacheHier *c, unsigned level, const CacheSpan *spans,
                             size_t nspans, GByteArray *out)
{
    g_assert(level < c->nlevels);
    const Level *L = &c->lv[level];
    size_t words = (L->nsets + 63) / 64;
    uint64_t *seen = g_new0(uint64_t, words);
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
    /* Each set seen, in set order: its number, then its tags (MRU first).
     * Sized once and filled in place (this runs at every period boundary
     * of a fast-forward). */
    size_t n = 0;
    for (size_t k = 0; k < words; k++)
        n += (size_t)__builtin_popcountll(seen[k]);
    size_t rec = sizeof(uint64_t) + L->ways * sizeof *L->tags;
    guint at = out->len;
    g_byte_array_set_size(out, (guint)(at + n * rec));
    guint8 *p = out->data + at;
    for (size_t k = 0; k < words; k++) {
        for (uint64_t b = seen[k]; b; b &= b - 1) {
            uint64_t set = k * 64 + (uint64_t)__builtin_ctzll(b);
            memcpy(p, &set, sizeof set);
            memcpy(p + sizeof set, &L->tags[set * L->ways], L->ways * sizeof *L->tags);
            p += rec;
        }
    }
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

bool cache_state_sets_equivalent(const CacheHier *c, unsigned level, const CacheSpan *spans,
                                 size_t nspans, const CacheStats *d,
                                 const GByteArray *start, const GByteArray *now)
{
    g_assert(level < c->nlevels);
    const Level *L = &c->lv[level];
    size_t rec = sizeof(uint64_t) + L->ways * sizeof *L->tags;
    if (d->level[level].misses || d->level[level].evictions || start->len != now->len ||
        start->len % rec)
        return false;
    if (!d->level[level].hits)
        return true;                         /* not reached by the loop */
    LineRun *runs = g_new(LineRun, nspans + 1);
    size_t nruns = line_runs(spans, nspans, L->line_shift, runs);
    uint64_t *x = g_new(uint64_t, 2 * (1 + L->ways)), *y = x + 1 + L->ways;
    bool ok = true;
    for (size_t at = 0; ok && at < start->len; at += rec) {
        if (!memcmp(start->data + at, now->data + at, rec))
            continue;
        memcpy(x, start->data + at, rec);    /* the set's number, then MRU first */
        memcpy(y, now->data + at, rec);
        ok = x[0] == y[0];
        for (unsigned w = 1; ok && w <= L->ways; w++) {
            if (x[w] == CACHE_TAG_INVALID || !line_in(runs, nruns, x[w]))
                break;                       /* the end of the loop's run */
            ok = x[w] == y[w];
        }
    }
    g_free(x);
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
        k->misses += times * x->misses;
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
