/* Tree pseudo-LRU (the scheme of the i486 cache and many TLBs). A set of W
 * ways (W a power of two) has W-1 bits arranged as a binary tree in heap
 * order: node 1 is the root, node n has children 2n and 2n+1, and the
 * leaves below the last level are the ways 0..W-1 from left to right.
 *
 *   bit == 0: the pseudo-least-recently-used way is in the LEFT subtree
 *   bit == 1: it is in the RIGHT subtree
 *
 * victim: start at the root and follow the bits down to a way.
 * touch/insert of way w: on the path from the root to w, set every bit to
 * point AWAY from w (1 where w is on the left, 0 where it is on the right).
 *
 * Example, 4 ways (bits b1 root, b2 over ways 0-1, b3 over ways 2-3), all 0:
 * touch 0 -> b1=1 b2=1; touch 2 -> b1=0 b3=1; victim: b1=0 -> left, b2=1 ->
 * right: way 1. */
#include "tlb/policy.h"

#include "tlb/tlb.h"             /* TLB_ERROR */

typedef struct {
    unsigned ways;
    uint8_t bit[];               /* sets * ways bytes; index 0 of each set unused */
} Plru;

static bool plru_check(unsigned sets, unsigned ways, GError **err)
{
    (void)sets;
    if (ways == 0 || (ways & (ways - 1)) != 0) {
        g_set_error(err, TLB_ERROR, TLB_ERROR_GEOMETRY,
                    "tree pseudo-LRU needs a power-of-two number of ways, got %u",
                    ways);
        return false;
    }
    return true;
}

static void *plru_create(unsigned sets, unsigned ways, uint64_t seed)
{
    (void)seed;
    Plru *s = g_malloc0(sizeof(Plru) + (size_t)sets * ways);
    s->ways = ways;
    return s;
}

static void plru_touch(void *state, unsigned set, unsigned way)
{
    Plru *s = state;
    uint8_t *b = &s->bit[set * s->ways];
    unsigned node = 1, lo = 0, n = s->ways;
    while (n > 1) {
        unsigned half = n / 2;
        if (way < lo + half) {
            b[node] = 1;         /* w is left: point right */
            node = 2 * node;
        } else {
            b[node] = 0;         /* w is right: point left */
            node = 2 * node + 1;
            lo += half;
        }
        n = half;
    }
}

static unsigned plru_victim(void *state, unsigned set)
{
    Plru *s = state;
    const uint8_t *b = &s->bit[set * s->ways];
    unsigned node = 1, lo = 0, n = s->ways;
    while (n > 1) {
        unsigned half = n / 2;
        if (b[node] == 0) {
            node = 2 * node;
        } else {
            node = 2 * node + 1;
            lo += half;
        }
        n = half;
    }
    return lo;
}

/* The tree bits are the whole state, and canonical as they are. */
static void plru_canon(const void *state, unsigned sets, GByteArray *out)
{
    const Plru *s = state;
    g_byte_array_append(out, s->bit, sets * s->ways);
}

const TlbPolicy tlb_policy_plru = {
    .name = "plru",
    .description = "tree pseudo-LRU (ways-1 bits per set)",
    .check = plru_check,
    .create = plru_create,
    .destroy = g_free,
    .touch = plru_touch,
    .insert = plru_touch,
    .victim = plru_victim,
    .canon = plru_canon,
};
