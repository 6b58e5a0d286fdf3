/* FIFO: the victim is the way filled longest ago; hits change nothing.
 * Kept as insertion stamps rather than a round-robin pointer, so that after
 * a flush has left holes (filled lowest-first by the array) the order is
 * still the order of insertion. */
#include "tlb/policy.h"

typedef struct {
    unsigned ways;
    uint64_t clock;
    uint64_t stamp[];            /* sets * ways: when each way was filled */
} Fifo;

static void *fifo_create(unsigned sets, unsigned ways, uint64_t seed)
{
    (void)seed;
    Fifo *s = g_malloc0(sizeof(Fifo) + (size_t)sets * ways * sizeof(uint64_t));
    s->ways = ways;
    return s;
}

static void fifo_insert(void *state, unsigned set, unsigned way)
{
    Fifo *s = state;
    s->stamp[set * s->ways + way] = ++s->clock;
}

static unsigned fifo_victim(void *state, unsigned set)
{
    Fifo *s = state;
    const uint64_t *st = &s->stamp[set * s->ways];
    unsigned v = 0;
    for (unsigned w = 1; w < s->ways; w++)
        if (st[w] < st[v])
            v = w;
    return v;
}

const TlbPolicy tlb_policy_fifo = {
    .name = "fifo",
    .description = "first-in first-out (hits do not reorder)",
    .check = NULL,
    .create = fifo_create,
    .destroy = g_free,
    .touch = NULL,
    .insert = fifo_insert,
    .victim = fifo_victim,
};
