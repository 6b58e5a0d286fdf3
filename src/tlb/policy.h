/* TLB replacement policies: a small table of functions with a printable
 * name (Dinero IV's replacementf beside name_replacement).
 *
 * Division of labour with the array (tlb.c): a fill into a set that still
 * has an invalid way takes the lowest-numbered invalid way without asking
 * the policy; the policy is asked for a victim only when every way of the
 * set is valid. The policy is told of every hit (touch) and every fill
 * (insert), and keeps whatever per-set state it needs.
 *
 * Adding a policy: write policy_NAME.c defining `const TlbPolicy
 * tlb_policy_NAME`, add TLB_POLICY(NAME) to policies.def and the file to
 * meson.build. */
#ifndef VMSPLIT_TLB_POLICY_H
#define VMSPLIT_TLB_POLICY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct TlbPolicy {
    const char *name;            /* "lru": what presets and --policy use */
    const char *description;
    /* Reject a geometry the policy cannot serve (tree PLRU needs a power of
     * two ways). NULL: any geometry. The message should say why. */
    bool (*check)(unsigned sets, unsigned ways, GError **err);
    /* Per-array state; seed is only used by policies that draw numbers. */
    void *(*create)(unsigned sets, unsigned ways, uint64_t seed);
    void (*destroy)(void *state);
    /* A lookup hit (set, way). NULL: hits do not change the order (FIFO,
     * random), and the hit path makes no call at all. */
    void (*touch)(void *state, unsigned set, unsigned way);
    /* Optional fast path for policies whose touch and insert are "stamp
     * the way with the next tick of a clock" (true LRU): return the per-way
     * stamp array (indexed set * ways + way) and set *clock to the clock,
     * and hits and fills do `stamp[slot] = ++*clock` inline instead of
     * calling touch and insert. Same effect, no indirect call. NULL: touch
     * and insert are called. */
    uint64_t *(*stamps)(void *state, uint64_t **clock);
    /* A fill wrote (set, way). */
    void (*insert)(void *state, unsigned set, unsigned way);
    /* Every way of set is valid: the way to replace. Called only by a
     * fill, which then inserts (or stamps) exactly that way before the
     * policy sees anything else; LRU's O(1) order relies on it
     * (policy_lru.c). */
    unsigned (*victim)(void *state, unsigned set);
    /* Append a canonical encoding of the whole replacement state to out
     * (the user-work fast-forward compares two, src/tlb/tlb_state.h):
     * equal encodings must choose the same victims for every future
     * sequence of touches, inserts and victim requests. Raw clocks are not
     * canonical (LRU encodes each set's recency ranks); host-speed caches
     * are left out. NULL: not comparable, so nothing is fast-forwarded. */
    void (*canon)(const void *state, unsigned sets, GByteArray *out);
    /* Properties the array asks instead of testing which policy it has:
     * ordered_lru returns the state as true LRU with ordered records
     * (lru_priv.h), whose victim the array's fill then takes inline
     * (tlb.c), or NULL when the state keeps no such records; NULL: not
     * such a policy. victim_by_recency: the victim depends on nothing but
     * the order in which the set's ways were last used (true LRU), so the
     * user-work fast-forward may compare a set by its recency ranks
     * instead of byte for byte (tlb_state.c). */
    struct Lru *(*ordered_lru)(void *state);
    bool victim_by_recency;
} TlbPolicy;

/* The registered policies (policies.def), in registration order. */
const TlbPolicy *const *tlb_policy_all(size_t *n);

/* By name; an unknown name is a GError (TLB_ERROR_POLICY) that lists the
 * known ones. */
const TlbPolicy *tlb_policy_find(const char *name, GError **err);

/* A small deterministic generator for policies and tests (splitmix64,
 * Steele, Lea & Flood 2014): the same seed gives the same sequence on every
 * host, which rand() does not promise. */
static inline uint64_t tlb_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

#endif
