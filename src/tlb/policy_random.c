/* Random replacement from a seeded splitmix64 stream, one per array: the
 * same seed and the same reference sequence give the same victims. */
#include "tlb/policy.h"

typedef struct {
    unsigned ways;
    uint64_t rng;
} Random;

static void *random_create(unsigned sets, unsigned ways, uint64_t seed)
{
    (void)sets;
    Random *s = g_new0(Random, 1);
    s->ways = ways;
    s->rng = seed;
    return s;
}

static void random_insert(void *state, unsigned set, unsigned way)
{
    (void)state;
    (void)set;
    (void)way;
}

static unsigned random_victim(void *state, unsigned set)
{
    (void)set;
    Random *s = state;
    /* Lemire's multiply-shift maps 32 random bits onto [0, ways) without a
     * division. */
    uint64_t r = tlb_splitmix64(&s->rng) >> 32;
    return (unsigned)((r * s->ways) >> 32);
}

/* The generator's state: it moves on every victim, so a run that evicts
 * never repeats its state and is never fast-forwarded. */
static void random_canon(const void *state, unsigned sets, GByteArray *out)
{
    (void)sets;
    const Random *s = state;
    g_byte_array_append(out, (const guint8 *)&s->rng, sizeof s->rng);
}

const TlbPolicy tlb_policy_random = {
    .name = "random",
    .description = "random victim from a seeded splitmix64 generator",
    .check = NULL,
    .create = random_create,
    .destroy = g_free,
    .touch = NULL,
    .insert = random_insert,
    .victim = random_victim,
    .canon = random_canon,
};
