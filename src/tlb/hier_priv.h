/* The hierarchy's layout and its first-level hit path as an inline
 * function, for hierarchy.c and tlb_state.c, and for the MMU's miss path.
 * Consumer outside src/tlb: src/mmu/mmu.c (the one caller on the
 * simulator's hot path), which calls the functions here and reads no
 * field of a TlbHierarchy or Tlb (through this header it sees tlb_priv.h
 * and fill_priv.h, for their inline code). The MMU's memos hold tokens
 * (tlb_token.h), which only the TLB's functions write through.
 * Everyone else uses hierarchy.h.
 *
 * tlb_hier_hit_fast does exactly what tlb_hier_lookup does on a hit in the
 * side's 4 KiB array that needs no dirty walk (count the lookup and hit in
 * the hierarchy and the array, tell the policy), and hands back a pointer
 * to the entry instead of a copy. Anything else returns NULL having changed
 * nothing; the caller then calls tlb_hier_lookup_rest, which is
 * tlb_hier_lookup from scratch minus the fast path's probe. */
#ifndef VMSPLIT_TLB_HIER_PRIV_H
#define VMSPLIT_TLB_HIER_PRIV_H

#include "tlb/hierarchy.h"
#include "tlb/pde_cache.h"
#include "tlb/fill_priv.h"
#include "tlb/tlb_priv.h"

enum { SIDE_DATA = 0, SIDE_INSN = 1 };

typedef struct {
    Tlb *small;                  /* 4 KiB pages (and 2 MiB when shared) */
    Tlb *large;                  /* separate large-page array, or NULL */
    Tlb *for_size[TLB_NPAGESIZES]; /* first-level array per page size, or NULL */
    Tlb *stlb_for_size[TLB_NPAGESIZES]; /* the STLB if it backs this side
                                  * and holds the size, else NULL */
    bool only_small;             /* small is the side's one array: no large
                                  * array, no STLB behind it (the P4) */
    Tlb *only_array;             /* small, when only_small, the hierarchy
                                  * has no PDE cache and small's hits are
                                  * taken inline (memos can be made): then
                                  * a miss in it is the whole lookup, and
                                  * the MMU may take it on its only-array miss
                                  * path (mmu.c); else NULL */
} Side;

struct TlbHierarchy {
    Side side[2];
    Tlb *stlb;
    Tlb *stlb_for[2];            /* per side: the STLB, or NULL if it does not back it */
    unsigned stlb_latency;
    PdeCache *pde;
    unsigned pde_entries;
    Tlb *arrays[5];
    unsigned narrays;
    /* Statistics: every counter of stats is counted where it happens,
     * but lookups and hits, which tlb_hier_stats (hierarchy.c) derives
     * there when read. A first-level hit taken inline (tlb_hier_hit_fast,
     * a token's tlb_token_record) is counted only in the side's 4 KiB array, as its
     * fast_hits, which no other hit counts (tlb_lookup_inline is never
     * called on a side's small array: lookup_rest_full probes it with
     * tlb_lookup_slow); any other hit counts own_hits; lookups are hits +
     * misses, as in an array. */
    TlbStats stats;
    uint64_t own_hits[TLB_NACCESS][2];
    TlbStats *self;              /* &stats, for a const hierarchy's refresh */
};

/* Count a first-level hit in slot s of array t (the side's 4 KiB array
 * of h): the array's count and stamp, from which the hierarchy's count is
 * derived (TlbHierarchy.stats). */
TLB_HOT void tlb_hier_count_hit(TlbHierarchy *h, Tlb *t, int s, Access access, int cpl)
{
    (void)h;
    tlb_count_hit(t, s, access, cpl);
}

/* Count a lookup that missed in t, the side's only array, having found
 * no entry for the page under this PCID in any size (tlb_hit_fast set
 * t->missed): what tlb_hier_lookup_rest counts then (it would find no
 * other array to ask). */
TLB_HOT void tlb_hier_count_miss(TlbHierarchy *h, Tlb *t, Access access, int cpl)
{
    unsigned p = TLB_PRIV(cpl);
    t->stats.misses[access][p]++;
    h->stats.misses[access][p]++;
}

/* See above. *extra_cycles as tlb_hier_lookup sets it on a hit; *missed
 * (if not NULL) set true when the side's small array had no entry for the
 * page at all (its Tlb.missed is then the probe key: see
 * tlb_hit_fast_4k), else left alone. pcid is not checked: it must fit 12
 * bits (tlb_hier_hit_fast checks; the MMU's always does). */
TLB_HOT const TlbEntry *tlb_hier_hit_fast_m(TlbHierarchy *h, uint32_t lin,
                                            Access access, int cpl, uint16_t pcid,
                                            unsigned *extra_cycles, bool *missed)
{
    Tlb *t = h->side[access == ACCESS_EXEC].small;
    const TlbEntry *e;
    /* t holds 4 KiB pages, its first size (hierarchy.c's add_array). */
    if (G_LIKELY(t) && G_LIKELY((e = tlb_hit_fast_4k(t, lin, pcid, access, cpl, missed)))) {
        /* The hierarchy's counts are derived from t's (see above). */
        *extra_cycles = t->geom.hit_latency;
        return e;
    }
    return NULL;
}

TLB_HOT const TlbEntry *tlb_hier_hit_fast(TlbHierarchy *h, uint32_t lin,
                                          Access access, int cpl, uint16_t pcid,
                                          unsigned *extra_cycles)
{
    /* Where tlb_hit_fast would check it: an array to probe. */
    if (h->side[access == ACCESS_EXEC].small && G_UNLIKELY(pcid > TLB_PCID_MAX))
        tlb_bad_pcid(pcid);
    return tlb_hier_hit_fast_m(h, lin, access, cpl, pcid, extra_cycles, NULL);
}

/* tlb_entry_from_walk (hierarchy.h), inline for the MMU's miss path. */
TLB_HOT void tlb_entry_from_walk_inline(TlbEntry *e, uint32_t lin, const PaeWalk *w,
                                        uint16_t pcid, bool pge)
{
    g_assert(!w->fault);
    TlbPageSize z = w->page_size == PAE_PAGE_2M   ? TLB_PAGE_2M
                    : w->page_size == LEG_PAGE_4M ? TLB_PAGE_4M
                                                  : TLB_PAGE_4K;
    *e = (TlbEntry){
        .vpn = lin >> tlb_page_shift(z),
        .page_size = (uint8_t)z,
        .pcid = pcid,
        .frame = w->frame,
        .rw = w->rw, .us = w->us, .nx = w->nx,
        .dirty = w->dirty,
        .global = w->global && pge,
    };
}

/* A token for the hit in first-level entry e (just hit or filled, for
 * access at cpl), if e is in the side's 4 KiB array, whose hits are taken
 * inline: true and *k set (tlb_token.h); else false, *k untouched. */
TLB_HOT bool tlb_hier_hit_token(TlbHierarchy *h, Access access, int cpl, const TlbEntry *e,
                                TlbHitToken *k)
{
    Tlb *t = h->side[access == ACCESS_EXEC].small;
    if (!t || !t->hit_inline)
        return false;
    size_t slot = (size_t)(e - t->ent);
    if (slot >= t->geom.entries)
        return false;
    tlb_token_make(t, (unsigned)slot, cpl, k);
    return true;
}

/* tlb_hier_fill of e (by value: built in registers, written once, into
 * its slot), a 4 KiB entry that is not global, into t, the side's only
 * array (tlb_hier_only_array), right after tlb_hier_hit_fast_m found no
 * entry for its page there (so t->missed is e's key, which
 * tlb_fill_fresh requires): the fill counted as tlb_hier_fill counts it,
 * the entry put in its slot, and *k the token for a hit in it; returns
 * the new entry. When the fill takes a free way or true LRU's victim in a
 * one-set array (the P4's arrays), the steps run inline (fill_priv.h)
 * and the entry is written straight into its slot; else tlb_fill_fresh. */
TLB_HOT const TlbEntry *tlb_hier_fill_missed(TlbHierarchy *h, Tlb *t, Access access, int cpl,
                                             TlbEntry e, TlbHitToken *k)
{
    h->stats.fills[access][TLB_PRIV(cpl)]++;
    if (tlb_fill_fresh_evicts_lru1(t)) {
        unsigned slot = tlb_fill_fresh_lru1_slot(t, e.vpn, access, cpl, &h->stats.evictions);
        t->ent[slot] = e;
        tlb_token_make_stamped(t, slot, cpl, k);     /* true LRU: stamps */
        return &t->ent[slot];
    }
    int slot = tlb_fill_fresh_4k_free_slot(t, e.vpn, access, cpl, &h->stats.evictions);
    if (G_LIKELY(slot >= 0))
        t->ent[slot] = e;
    else
        slot = (int)(tlb_fill_fresh(t, &e, access, cpl, &h->stats.evictions) - t->ent);
    tlb_token_make(t, (unsigned)slot, cpl, k);
    return &t->ent[slot];
}

/* tlb_hier_lookup after tlb_hier_hit_fast returned NULL (hierarchy.c). */
TlbResult tlb_hier_lookup_rest(TlbHierarchy *h, uint32_t lin, Access access,
                               int cpl, uint16_t pcid, TlbEntry *out,
                               unsigned *extra_cycles);

#endif
