/* True LRU: every hit and fill stamps the way with a per-array clock; the
 * victim is the way of the set with the oldest stamp. The hit path is one
 * store, done inline by the array (lru_stamps).
 *
 * The victim search: a set of at most LRU_SCAN ways is scanned. A larger
 * one (the P4's 64-way DTLB, where a scan on every miss was most of the
 * simulator's time) keeps a list of its LRU_CAND oldest ways as of its
 * last scan, oldest first, with their stamps then. The oldest way now is
 * the first listed way whose stamp has not changed since: stamps only
 * grow, every way stamped since the scan is newer than every way that was
 * not, and every unlisted way was newer at the scan than every listed one.
 * When every listed way has changed, the set is scanned again. A streaming
 * reference pattern thus pays one scan per LRU_CAND evictions; the victims
 * are exactly those of a full scan (tests/tlb/test_model.c).
 *
 * The scan starts at the way after the last victim. Stamps are unique, so
 * where it starts changes nothing in the list; but under streaming the
 * ways' stamps rise from there (victims go round the set in way order), so
 * each way arrives in order: appended while the list fills, refused at the
 * first compare afterwards, no insertion shifts. */
#include "tlb/policy.h"

#include <stdlib.h>
#include <string.h>

#include "tlb/stamp_rank.h"

#define LRU_SCAN 8
#define LRU_CAND 32

typedef struct {
    uint64_t stamp[LRU_CAND];    /* each listed way's stamp at the scan */
    uint16_t way[LRU_CAND];      /* oldest first */
    uint8_t n, pos;              /* listed, and the first not yet ruled out */
    uint16_t start;              /* where the next scan begins */
} Cand;

typedef struct {
    unsigned ways;
    uint64_t clock;
    Cand *cand;                  /* per set when ways > LRU_SCAN, else NULL */
    uint64_t stamp[];            /* sets * ways */
} Lru;

static void *lru_create(unsigned sets, unsigned ways, uint64_t seed)
{
    (void)seed;
    Lru *s = g_malloc0(sizeof(Lru) + (size_t)sets * ways * sizeof(uint64_t));
    s->ways = ways;
    if (ways > LRU_SCAN)
        s->cand = g_new0(Cand, sets);
    return s;
}

static void lru_destroy(void *state)
{
    Lru *s = state;
    g_free(s->cand);
    g_free(s);
}

static void lru_touch(void *state, unsigned set, unsigned way)
{
    Lru *s = state;
    s->stamp[set * s->ways + way] = ++s->clock;
}

static uint64_t *lru_stamps(void *state, uint64_t **clock)
{
    Lru *s = state;
    *clock = &s->clock;
    return s->stamp;
}

/* The LRU_CAND oldest ways of the set, oldest first (the stamps of a full
 * set are unique: every fill and hit takes a new one). */
static void cand_scan(Cand *c, const uint64_t *st, unsigned ways)
{
    unsigned n = 0;
    for (unsigned k = 0, w = c->start % ways; k < ways; k++, w = w + 1 == ways ? 0 : w + 1) {
        if (n == LRU_CAND && st[w] >= c->stamp[n - 1])
            continue;
        unsigned i = n < LRU_CAND ? n++ : n - 1;
        while (i > 0 && c->stamp[i - 1] > st[w]) {
            c->stamp[i] = c->stamp[i - 1];
            c->way[i] = c->way[i - 1];
            i--;
        }
        c->stamp[i] = st[w];
        c->way[i] = (uint16_t)w;
    }
    c->n = (uint8_t)n;
    c->pos = 0;
}

static unsigned lru_victim(void *state, unsigned set)
{
    Lru *s = state;
    const uint64_t *st = &s->stamp[set * s->ways];
    if (!s->cand) {
        unsigned v = 0;
        for (unsigned w = 1; w < s->ways; w++)
            if (st[w] < st[v])
                v = w;
        return v;
    }
    Cand *c = &s->cand[set];
    for (;;) {
        for (; c->pos < c->n; c->pos++)
            if (st[c->way[c->pos]] == c->stamp[c->pos]) {
                c->start = (uint16_t)(c->way[c->pos] + 1);
                return c->way[c->pos];
            }
        cand_scan(c, st, s->ways);
    }
}

/* Canonical state (policy.h): per set, each way's rank by (stamp, way),
 * 0 = the victim. Victims depend on nothing else: new stamps are always
 * the newest, and the candidate lists only speed the search up. */
static void lru_canon(const void *state, unsigned sets, GByteArray *out)
{
    const Lru *s = state;
    unsigned n = s->ways;
    uint16_t *buf = g_new(uint16_t, 3 * (size_t)n);
    unsigned *bounds = g_new(unsigned, n + 1);
    guint at = out->len;
    g_byte_array_set_size(out, at + (guint)((size_t)sets * n * sizeof(uint16_t)));
    for (unsigned set = 0; set < sets; set++) {
        stamp_rank(&s->stamp[(size_t)set * n], n, buf, buf + n, buf + 2 * n, bounds);
        memcpy(out->data + at + (size_t)set * n * sizeof(uint16_t), buf, n * sizeof(uint16_t));
    }
    g_free(bounds);
    g_free(buf);
}

const TlbPolicy tlb_policy_lru = {
    .name = "lru",
    .description = "true least-recently-used (per-way timestamps)",
    .check = NULL,
    .create = lru_create,
    .destroy = lru_destroy,
    .touch = lru_touch,
    .stamps = lru_stamps,
    .insert = lru_touch,
    .victim = lru_victim,
    .canon = lru_canon,
};
