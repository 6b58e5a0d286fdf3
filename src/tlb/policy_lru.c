/* True LRU: every hit and fill stamps the way with a per-array clock; the
 * victim is the way of the set with the oldest stamp. The hit path is one
 * store, done inline by the array (lru_stamps); the O(ways) search happens
 * only when a full set takes a fill. */
#include "tlb/policy.h"

typedef struct {
    unsigned ways;
    uint64_t clock;
    uint64_t stamp[];            /* sets * ways */
} Lru;

static void *lru_create(unsigned sets, unsigned ways, uint64_t seed)
{
    (void)seed;
    Lru *s = g_malloc0(sizeof(Lru) + (size_t)sets * ways * sizeof(uint64_t));
    s->ways = ways;
    return s;
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

static unsigned lru_victim(void *state, unsigned set)
{
    Lru *s = state;
    const uint64_t *st = &s->stamp[set * s->ways];
    unsigned v = 0;
    for (unsigned w = 1; w < s->ways; w++)
        if (st[w] < st[v])
            v = w;
    return v;
}

const TlbPolicy tlb_policy_lru = {
    .name = "lru",
    .description = "true least-recently-used (per-way timestamps)",
    .check = NULL,
    .create = lru_create,
    .destroy = g_free,
    .touch = lru_touch,
    .stamps = lru_stamps,
    .insert = lru_touch,
    .victim = lru_victim,
};
