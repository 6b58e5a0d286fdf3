/* Private to src/tlb: the layout of a Tlb and its hit path as inline
 * functions, so that the hierarchy (hierarchy.c) probes its first-level
 * arrays without a call (TinyEMU's _priv.h pattern). Included only in
 * src/tlb (tests/check_private_includes.py holds it so); outside src/tlb
 * only src/mmu/mmu.c sees it, through hier_priv.h and fill_priv.h (the
 * inline hit path and fill steps of the MMU's miss path).
 *
 * Layout: slot = set * ways + way. Each slot has a tag (key, mask) used by
 * the hit path and a TlbEntry payload. The key packs everything a lookup
 * compares:
 *
 *   63   62..61  60..44   43 ........ 12   11 ..... 0
 *  +---+-------+--------+----------------+-----------+
 *  | V | size  |   0    |      VPN       |   PCID    |
 *  +---+-------+--------+----------------+-----------+
 *
 * A lookup builds the same key with V=1 and compares under the slot's mask:
 * all ones for a non-global entry, PCID bits cleared for a global one (it
 * matches any PCID). An invalid slot has key 0 and a full mask, so it never
 * matches a probe (whose V bit is 1): no separate valid test on the hit
 * path. */
#ifndef VMSPLIT_TLB_TLB_PRIV_H
#define VMSPLIT_TLB_TLB_PRIV_H

#include "tlb/tlb.h"
#include "tlb/tlb_token.h"

/* The hit path is forced inline into the hierarchy: GCC otherwise keeps
 * one out-of-line copy for its three call sites. */
#if defined(__GNUC__)
#define TLB_HOT static inline __attribute__((always_inline))
#else
#define TLB_HOT static inline
#endif

#define KEY_VALID (1ULL << 63)
#define KEY_SIZE_SHIFT 61
#define KEY_VPN_SHIFT TLB_PCID_BITS
#define KEY_PCID_MASK ((uint64_t)TLB_PCID_MAX)
#define MASK_FULL (~0ULL)
#define MASK_GLOBAL (~KEY_PCID_MASK)
#define NO_SLOT (-1)

typedef struct {
    uint64_t key, mask;
} Tag;

typedef struct {
    int32_t next, prev;          /* the nodes after and before on the chain */
} IndexNode;

struct Tlb {
    /* Hot: read by every lookup. */
    Tag *tag;
    TlbEntry *ent;
    unsigned ways;
    unsigned set_mask;
    unsigned nsizes;
    uint8_t sizes[TLB_NPAGESIZES];   /* probe order: 4 KiB first */
    uint8_t shifts[TLB_NPAGESIZES];  /* tlb_page_shift(sizes[i]) */
    uint64_t key_base[TLB_NPAGESIZES]; /* make_key(sizes[i], 0, 0) */
    uint32_t hash_salt[TLB_NPAGESIZES]; /* sizes[i] << 30, see hash_page */
    /* Hash index (host-speed shortcut; node is NULL when sets are
     * scanned): per bucket a chain of slots, doubly linked so that a slot
     * leaves it in two stores, without a walk. node[s] links slot s;
     * bucket[h] = node[head0 + h] is bucket h's head, whose next is the
     * chain's first slot; node[-1] is a dummy. A chain ends in NO_SLOT
     * (-1), so the unlink of a chain's last slot writes the dummy's prev
     * and an empty bucket's head holds -1 (a rebuild is one memset). */
    IndexNode *node;
    IndexNode *bucket;
    int head0;                   /* entries: bucket's first node */
    unsigned hash_shift;
    unsigned nlarge;             /* valid entries of the sizes after the
                                  * first (sizes[1..]): none, and their
                                  * probes cannot match, so the hit path
                                  * skips them */
    uint64_t missed;             /* probe key (first size) that tlb_hit_fast
                                  * found in no size, until the next fill;
                                  * 0: none. Spares tlb_lookup_slow the same
                                  * probes right after (nothing between can
                                  * add an entry but a fill), and the fill
                                  * that follows its duplicate search
                                  * (tlb_fill_counted) */
    uint32_t *sgen;              /* per slot: a generation that changes
                                  * whenever the slot does (fill,
                                  * invalidation, flush). A token for a hit
                                  * in the slot (tlb_token.h) holds while
                                  * it is the same */
    uint64_t *stamps;            /* policy's inline stamps (policy.h), or NULL */
    struct Lru *lru;             /* the policy's state when it is true LRU
                                  * with ordered records (ways > LRU_SCAN,
                                  * lru_priv.h) and the array has the hash
                                  * index: a fill into a full set takes
                                  * fill_evicting_lru; else NULL */
    unsigned lru_single_set_ways; /* ways when lru is set and the array
                                  * has one set (the P4's), else UINT_MAX:
                                  * the set's valid count at which a fresh
                                  * fill is evict_lru on set 0 (fill_priv.h) */
    uint64_t *clock;
    bool hit_inline;             /* a hit is handled inline: stamps, or no touch */
    void (*touch)(void *, unsigned, unsigned);
    void *pstate;
    /* Statistics: every counter of stats is counted where it happens,
     * but lookups and hits, which tlb_stats (tlb.c) derives there when
     * read. A hit taken inline (tlb_count_hit) counts only fast_hits,
     * any other hit slow_hits; no lookup is counted, since every lookup
     * is exactly one hit or one miss (lookups = hits + misses). */
    TlbStats stats;
    uint64_t fast_hits[TLB_NACCESS * 2]; /* [2 * access + privilege]: flat,
                                  * so that a token can point at its
                                  * privilege's column (tlb_token.h) */
    uint64_t token_sink[2];      /* a token's stamp and clock when the
                                  * array has no stamps: written, never
                                  * read */
    uint64_t slow_hits[TLB_NACCESS][2];
    TlbStats *self;              /* &stats, so that tlb_stats can refresh a
                                  * const array's derived counters */

    /* Fill path. */
    uint64_t *vbits;             /* bit per slot: valid (the tag's V bit),
                                  * to find a set's lowest invalid way */
    uint16_t *set_valid;         /* valid ways per set */

    /* Cold. */
    unsigned nof[TLB_NPAGESIZES]; /* valid entries per TlbPageSize, kept
                                  * for the sizes after the first (the
                                  * first's is not kept): in an array of
                                  * three sizes, a later size with none is
                                  * not probed (an array holding 2 MiB and
                                  * 4 MiB pages holds only one of them at a
                                  * time, as a CR4.PAE change flushes
                                  * everything) */
    IndexNode *nodes;            /* the hash index's allocation */
    const TlbPolicy *policy;
    char *name;
    TlbGeom geom;
    unsigned sets;
    unsigned nvalid;
};

TLB_HOT uint64_t make_key(unsigned size, uint32_t vpn, uint16_t pcid)
{
    return KEY_VALID | ((uint64_t)size << KEY_SIZE_SHIFT) |
           ((uint64_t)vpn << KEY_VPN_SHIFT) | pcid;
}

/* Same page (size and VPN), any PCID. */
static inline bool same_page(uint64_t a, uint64_t b)
{
    return ((a ^ b) & ~KEY_PCID_MASK) == 0;
}

/* Fibonacci hashing of (size, VPN); the top bits are the bucket. salt is
 * size << 30 (a VPN has at most 20 bits). */
TLB_HOT unsigned hash_page(const Tlb *t, uint32_t salt, uint32_t vpn)
{
    return (uint32_t)((vpn ^ salt) * 0x9E3779B1u) >> t->hash_shift;
}

/* The first slot on bucket h's chain, or NO_SLOT. */
TLB_HOT int index_first(const Tlb *t, unsigned h)
{
    return t->bucket[h].next;
}

/* Bit w set if way w of the set at tag matches probe. With a constant
 * ways the loop unrolls completely. */
TLB_HOT unsigned scan_ways(const Tag *tag, uint64_t probe, unsigned ways)
{
    unsigned m = 0;
    for (unsigned w = 0; w < ways; w++)
        m |= (unsigned)(((tag[w].key ^ probe) & tag[w].mask) == 0) << w;
    return m;
}

/* The slot answering probe for page (size, vpn), or NO_SLOT.
 *
 * Small arrays (at most TLB_SCAN_ENTRIES entries) compare every way of
 * the set and take the
 * match from a bit mask: a fixed trip count instead of an exit at a
 * data-dependent way, which the host's branch predictor cannot guess for a
 * random reference stream. At most one way can match (tlb.h: a fill
 * replaces duplicates), so taking the lowest bit is no choice at all. The
 * switch gives the usual associativities an unrolled copy; it is
 * predicted perfectly since an array's ways never change. */
TLB_HOT int find_slot(const Tlb *t, uint32_t salt, uint32_t vpn, uint64_t probe)
{
    if (t->node) {
        int s = index_first(t, hash_page(t, salt, vpn));
        while (s != NO_SLOT && ((t->tag[s].key ^ probe) & t->tag[s].mask) != 0)
            s = t->node[s].next;
        return s;
    }
    unsigned base = (vpn & t->set_mask) * t->ways;
    const Tag *tag = &t->tag[base];
    unsigned m;
    switch (t->ways) {
    case 1: m = scan_ways(tag, probe, 1); break;
    case 2: m = scan_ways(tag, probe, 2); break;
    case 4: m = scan_ways(tag, probe, 4); break;
    case 8: m = scan_ways(tag, probe, 8); break;
    default: m = scan_ways(tag, probe, t->ways); break;
    }
    return m ? (int)(base + (unsigned)__builtin_ctz(m)) : NO_SLOT;
}

/* Probe for lin under pcid with the array's i-th page size: the slot, or
 * NO_SLOT. *key: the probe key (the first size's is what tlb_hit_fast
 * remembers). The hash index or the set is probed straight away: trying
 * the slot of the array's last hit first, as the hit path once did, paid
 * off only for runs of references to one page, which the MMU's memos now
 * answer; the failed guess cost every miss about 12 host instructions of
 * pageloop's ~500, and the 4G/4G null syscall no more than it saved. */
TLB_HOT int probe_key(const Tlb *t, unsigned i, uint32_t lin, uint16_t pcid, uint64_t *key)
{
    uint32_t vpn = lin >> t->shifts[i];
    *key = t->key_base[i] | ((uint64_t)vpn << KEY_VPN_SHIFT) | pcid;
    return find_slot(t, t->hash_salt[i], vpn, *key);
}

/* probe_key for i = 0 in an array whose first size is 4 KiB (every
 * side's small array: hierarchy.c's add_array requires it to hold 4 KiB
 * pages, listed first): its shift, key base and hash salt are then
 * constants (TLB_SHIFT_4K, make_key(TLB_PAGE_4K, 0, 0) = KEY_VALID, 0). */
TLB_HOT int probe_key_4k(const Tlb *t, uint32_t lin, uint16_t pcid, uint64_t *key)
{
    uint32_t vpn = lin >> TLB_SHIFT_4K;
    *key = KEY_VALID | ((uint64_t)vpn << KEY_VPN_SHIFT) | pcid;
    return find_slot(t, 0, vpn, *key);
}

TLB_HOT int probe_size(const Tlb *t, unsigned i, uint32_t lin, uint16_t pcid)
{
    uint64_t key;
    return probe_key(t, i, lin, pcid, &key);
}

/* The probes of the sizes after the first in an array of three (4 KiB,
 * 2 MiB, 4 MiB: the P4's), in order, skipping a size with no entry
 * (Tlb.nof): the slot answering lin, or NO_SLOT. Out of line (tlb.c), so
 * that the inline hit path of the common arrays (one or two sizes) keeps
 * its registers: inlined, the loop cost the TLB's hit-path benchmark
 * about 3 % of its host time. */
int tlb_probe_later_sizes(const Tlb *t, uint32_t lin, uint16_t pcid);

/* Count a valid entry of size z coming (d = 1) or going (d = -1): nlarge
 * and nof for a size after the first. */
TLB_HOT void count_size(Tlb *t, unsigned z, int d)
{
    if (z != t->sizes[0]) {
        t->nlarge += (unsigned)d;
        t->nof[z] += (unsigned)d;
    }
}

/* tlb_lookup (tlb.h) in full: every page size, misses, dirty misses,
 * policies whose touch is a call. Out of line (tlb.c). */
TlbResult tlb_lookup_slow(Tlb *t, uint32_t lin, uint16_t pcid, Access access,
                          int cpl, const TlbEntry **out);

/* tlb_fill, also adding the evictions it counts to *also (the
 * hierarchy's count) (tlb.c). It checks nothing: the caller has passed e
 * through tlb_check_entry and chosen an array that holds its size. */
const TlbEntry *tlb_fill_counted(Tlb *t, const TlbEntry *e, Access access, int cpl,
                                 TlbFillInfo *info, uint64_t *also);

/* tlb_fill_counted of an entry that is not global and whose key is
 * t->missed (a 4 KiB page the array's last tlb_hit_fast found in no size
 * under its PCID): the case in which tlb_fill_counted searches no
 * duplicate, done without its tests (tlb.c). */
const TlbEntry *tlb_fill_fresh(Tlb *t, const TlbEntry *e, Access access, int cpl,
                               uint64_t *also);

/* Add times x d, a delta of what tlb_stats (or tlb_hier_stats) reads, to
 * the counts behind it: to dst (Tlb.stats or the hierarchy's) every
 * counter but lookups, which is derived and so not added, and hits,
 * which go to *hits (the array's slow_hits, the hierarchy's own_hits).
 * Exact, since the derivations are sums (tlb.c). */
void tlb_stats_add_base(TlbStats *dst, uint64_t hits[TLB_NACCESS][2], const TlbStats *d,
                        uint64_t times);

/* An entry that tlb_fill or tlb_hier_fill was given with a page size that
 * is no TlbPageSize, a PCID wider than 12 bits (it would spill into the
 * key) or a VPN past 4 GiB: a caller's bug (tlb.c). */
G_NORETURN void tlb_bad_entry(const TlbEntry *e);

/* The checks of an entry at the API boundary (tlb_fill, tlb_hier_fill),
 * as one branch on the fill path. */
TLB_HOT void tlb_check_entry(const TlbEntry *e)
{
    static const uint32_t vpn_max[TLB_NPAGESIZES] = {
        [TLB_PAGE_4K] = UINT32_MAX >> TLB_SHIFT_4K,
        [TLB_PAGE_2M] = UINT32_MAX >> TLB_SHIFT_2M,
        [TLB_PAGE_4M] = UINT32_MAX >> TLB_SHIFT_4M,
    };
    if (G_UNLIKELY(e->page_size >= TLB_NPAGESIZES || e->pcid > TLB_PCID_MAX ||
                   e->vpn > vpn_max[e->page_size]))
        tlb_bad_entry(e);
}

/* A PCID wider than 12 bits is a caller's bug (it would spill into the
 * key's VPN field). Reported by a noreturn function so the check costs
 * the hit path a compare and nothing else (tlb.c). */
G_NORETURN void tlb_bad_pcid(uint16_t pcid);

/* What a hit in slot s costs the array when the policy's hit is a stamp
 * or nothing (hit_inline): the count (the lookup is derived, see
 * Tlb.stats) and the stamp. tlb_hit_fast ends here; a token's
 * tlb_token_record does the same through the token's pointers. */
TLB_HOT void tlb_count_hit(Tlb *t, int s, Access access, int cpl)
{
    t->fast_hits[2 * access + TLB_PRIV(cpl)]++;
    if (t->stamps)
        t->stamps[s] = ++*t->clock;
}

/* The token for a hit at cpl in slot s of t, whose hits are taken inline
 * (hit_inline): recording a hit through it does what tlb_count_hit does.
 * _stamped: t has stamps (true LRU), no test. */
TLB_HOT void tlb_token_make_stamped(Tlb *t, unsigned s, int cpl, TlbHitToken *k)
{
    k->gen = t->sgen[s];
    k->slot_gen = &t->sgen[s];
    k->hits = &t->fast_hits[TLB_PRIV(cpl)];
    k->stamp = &t->stamps[s];
    k->clock = t->clock;
}

TLB_HOT void tlb_token_make(Tlb *t, unsigned s, int cpl, TlbHitToken *k)
{
    k->gen = t->sgen[s];
    k->slot_gen = &t->sgen[s];
    k->hits = &t->fast_hits[TLB_PRIV(cpl)];
    k->stamp = t->stamps ? &t->stamps[s] : &t->token_sink[0];
    k->clock = t->stamps ? t->clock : &t->token_sink[1];
}

/* The common hit, decided on a straight path: the array's page sizes in
 * order (4 KiB first unless it holds only large pages), a policy whose hit is a
 * stamp (LRU) or nothing (FIFO, random), no dirty walk needed. Returns the entry after counting the hit and telling the
 * policy; or NULL having changed nothing, and the caller starts again on
 * its slow path (tlb_lookup_slow). Keeping the rare cases out of the
 * inlined code keeps the hit path free of register spills. */
TLB_HOT const TlbEntry *tlb_hit_fast_sized(Tlb *t, uint32_t lin, uint16_t pcid,
                                           Access access, int cpl, bool first_4k,
                                           bool *missed)
{
    uint64_t key;
    int s = first_4k ? probe_key_4k(t, lin, pcid, &key) : probe_key(t, 0, lin, pcid, &key);
    /* An array holding several page sizes (the P4's DTLB) serves the
     * kernel's 2 MiB direct map from here too: the later sizes, after the
     * first missed, in tlb_lookup_slow's order. nlarge counts entries of
     * the later sizes, so it is 0 in an array of one size (no test of
     * nsizes); with two sizes the second then has entries. */
    if (s == NO_SLOT && t->nlarge)
        s = G_LIKELY(t->nsizes == 2) ? probe_size(t, 1, lin, pcid)
                                     : tlb_probe_later_sizes(t, lin, pcid);
    if (G_UNLIKELY(s == NO_SLOT)) {
        t->missed = key;             /* every size probed: tlb_lookup_slow need not */
        if (missed)
            *missed = true;
        return NULL;
    }
    if (G_UNLIKELY(!t->hit_inline || (access == ACCESS_WRITE && !t->ent[s].dirty)))
        return NULL;
    tlb_count_hit(t, s, access, cpl);
    return &t->ent[s];
}

TLB_HOT const TlbEntry *tlb_hit_fast(Tlb *t, uint32_t lin, uint16_t pcid,
                                     Access access, int cpl)
{
    if (G_UNLIKELY(pcid > TLB_PCID_MAX))
        tlb_bad_pcid(pcid);
    return tlb_hit_fast_sized(t, lin, pcid, access, cpl, false, NULL);
}

/* tlb_hit_fast of an array whose first size is 4 KiB (see probe_key_4k),
 * but for the PCID check: the caller's (tlb_hier_hit_fast checks it; the
 * MMU's pcid is CR3's low 12 bits or 0). *missed (if not NULL) is set
 * true when it found no entry for the page in any size (t->missed then
 * holds the probe key), else left alone. */
TLB_HOT const TlbEntry *tlb_hit_fast_4k(Tlb *t, uint32_t lin, uint16_t pcid,
                                        Access access, int cpl, bool *missed)
{
    return tlb_hit_fast_sized(t, lin, pcid, access, cpl, true, missed);
}

/* tlb_lookup (tlb.h), inline. */
TLB_HOT TlbResult tlb_lookup_inline(Tlb *t, uint32_t lin, uint16_t pcid,
                                    Access access, int cpl,
                                    const TlbEntry **out)
{
    const TlbEntry *e = tlb_hit_fast(t, lin, pcid, access, cpl);
    if (G_LIKELY(e)) {
        *out = e;
        return TLB_HIT;
    }
    return tlb_lookup_slow(t, lin, pcid, access, cpl, out);
}

#endif
