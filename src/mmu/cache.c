/* Set-associative cache hierarchy with true LRU. See cache.h for the model.
 *
 * Layout: each level keeps its tags in one array of sets x ways; within a
 * set the ways are kept in recency order, most recently used first. A hit in
 * way 0 (the common case: consecutive references to one line) costs one
 * compare and no reordering; a hit further down moves that way to the front;
 * a miss drops the last way (the LRU victim) and puts the new line in front.
 * Invalid ways hold CACHE_TAG_INVALID and collect at the back, so the last
 * way is always the victim, valid or not. The "tag" stored is the whole line
 * number (paddr >> line_shift): comparing the set bits too is harmless and
 * saves a shift. Shifts and masks are computed once in cache_new. */
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

static void level_init(Level *L, const CacheGeom *g)
{
    L->ways = g->ways;
    L->latency = g->latency;
    L->line_shift = log2u(g->line);
    L->nsets = g->size / ((size_t)g->ways * g->line);
    L->set_mask = L->nsets - 1;
    L->tags = g_new(uint64_t, L->nsets * L->ways);
    for (size_t i = 0; i < L->nsets * L->ways; i++)
        L->tags[i] = CACHE_TAG_INVALID;
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
        level_init(&c->lv[i], g[i]);
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

/* One level: true on a hit (moved to MRU); on a miss the line is filled in
 * as MRU and the LRU way is dropped. */
static inline bool level_access(Level *L, CacheLevelStats *s, uint64_t paddr)
{
    uint64_t line = paddr >> L->line_shift;
    uint64_t *row = L->tags + (size_t)(line & L->set_mask) * L->ways;
    if (G_LIKELY(row[0] == line)) {
        s->hits++;
        return true;
    }
    /* Scan the other ways, shifting each one down a place as we pass it:
     * on a hit at way w the ways before it have moved to 1..w and the
     * line goes to the front; on a miss the last (LRU) way has fallen off.
     * Ways are few (<= CACHE_MAX_WAYS), so this beats memmove calls. */
    uint64_t carry = row[0];
    unsigned w;
    for (w = 1; w < L->ways; w++) {
        uint64_t t = row[w];
        row[w] = carry;
        if (t == line) {
            row[0] = line;
            s->hits++;
            return true;
        }
        carry = t;
    }
    if (carry != CACHE_TAG_INVALID)
        s->evictions++;
    row[0] = line;
    s->misses++;
    return false;
}

static inline unsigned access_impl(CacheHier *c, uint64_t paddr, bool write,
                                   CacheLevel *from)
{
    unsigned lat = c->mem_latency;
    CacheLevel lvl = CACHE_MEM;
    c->st.accesses++;
    c->st.writes += write;
    for (unsigned i = 0; i < c->nlevels; i++) {
        if (level_access(&c->lv[i], &c->st.level[i], paddr)) {
            lat = c->lv[i].latency;
            lvl = (CacheLevel)i;
            break;
        }
    }
    if (lvl == CACHE_MEM)
        c->st.mem++;
    c->st.cycles += lat;
    if (from)
        *from = lvl;
    return lat;
}

unsigned cache_access(CacheHier *c, uint64_t paddr, bool write)
{
    return access_impl(c, paddr, write, NULL);
}

unsigned cache_access_from(CacheHier *c, uint64_t paddr, bool write,
                           CacheLevel *from)
{
    return access_impl(c, paddr, write, from);
}

unsigned cache_access_uncached(CacheHier *c, uint64_t paddr, bool write)
{
    (void)paddr;
    c->st.uncached++;
    c->st.writes += write;
    c->st.mem++;
    c->st.cycles += c->mem_latency;
    return c->mem_latency;
}

bool cache_contains(const CacheHier *c, CacheLevel level, uint64_t paddr)
{
    if ((unsigned)level >= c->nlevels)
        return false;
    const Level *L = &c->lv[level];
    uint64_t line = paddr >> L->line_shift;
    const uint64_t *row = L->tags + (size_t)(line & L->set_mask) * L->ways;
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
        for (size_t k = 0; k < L->nsets * L->ways; k++)
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

const CacheStats *cache_stats(const CacheHier *c) { return &c->st; }

void cache_reset_stats(CacheHier *c) { memset(&c->st, 0, sizeof c->st); }
