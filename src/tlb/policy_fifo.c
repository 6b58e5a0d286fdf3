/* FIFO: the victim is the way filled longest ago; hits change nothing.
 * Kept as a list in insertion order (recency.h, touched on fills only)
 * rather than a round-robin pointer, so that after a flush has left holes
 * (filled lowest-first by the array) the order is still the order of
 * insertion; both the fill and the victim are O(1). */
#include "tlb/policy.h"

#include "tlb/recency.h"

static void *fifo_create(unsigned sets, unsigned ways, uint64_t seed)
{
    (void)seed;
    TlbRecency *r = g_new0(TlbRecency, 1);
    recency_init(r, sets, ways);
    return r;
}

static void fifo_destroy(void *state)
{
    recency_free(state);
    g_free(state);
}

static void fifo_insert(void *state, unsigned set, unsigned way)
{
    TlbRecency *r = state;
    recency_touch(r, set, set * r->ways + way);
}

static unsigned fifo_victim(void *state, unsigned set)
{
    return recency_last_way(state, set);
}

/* Per set, its ways in list order, newest first. */
static void fifo_canon(const void *state, unsigned sets, GByteArray *out)
{
    const TlbRecency *r = state;
    for (unsigned set = 0; set < sets; set++) {
        unsigned sent = r->entries + set;
        for (unsigned n = r->next[sent]; n != sent; n = r->next[n]) {
            uint16_t way = (uint16_t)(n - set * r->ways);
            g_byte_array_append(out, (const guint8 *)&way, sizeof way);
        }
    }
}

const TlbPolicy tlb_policy_fifo = {
    .name = "fifo",
    .description = "first-in first-out (hits do not reorder)",
    .check = NULL,
    .create = fifo_create,
    .destroy = fifo_destroy,
    .touch = NULL,
    .insert = fifo_insert,
    .victim = fifo_victim,
    .canon = fifo_canon,
};
