/* The steps of an array's fill as inline functions, private to src/tlb:
 * tlb.c's fills are made of them, and the MMU's fused miss path
 * (src/mmu/mmu.c) runs the same steps inline for the P4's fills
 * (tlb_fill_fresh_lru1). Everyone else uses tlb.h. */
#ifndef VMSPLIT_TLB_FILL_PRIV_H
#define VMSPLIT_TLB_FILL_PRIV_H

#include "tlb/lru_priv.h"
#include "tlb/tlb_priv.h"

/* Link slot into bucket h (hash_page of its entry's size and VPN). */
TLB_HOT void index_link(Tlb *t, unsigned slot, unsigned h)
{
    t->next[slot] = t->bucket[h];
    t->bucket[h] = (int16_t)slot;
    t->home[slot] = h;
}

/* Take slot off its bucket's chain. */
TLB_HOT void index_unlink(Tlb *t, unsigned slot)
{
    int16_t *p = &t->bucket[t->home[slot]];
    while (*p != (int16_t)slot) {
        g_assert(*p != NO_SLOT);
        p = &t->next[*p];
    }
    *p = t->next[slot];
}

/* Tell a policy without stamps of the new entry in slot of set; returns
 * the entry (tlb.c). */
const TlbEntry *tlb_fill_insert(Tlb *t, unsigned set, unsigned slot);

/* Count a fill and its evictions (extra duplicates removed, plus the
 * victim). Independent of the rest of a fill, so callers do it where it
 * costs least. */
TLB_HOT void fill_count(Tlb *t, Access access, int cpl, unsigned ev, uint64_t *also)
{
    t->stats.fills[access][TLB_PRIV(cpl)]++;
    t->stats.evictions += ev;
    *also += ev;
}

/* Put e (its key) in slot of set, which either held the victim (evicted:
 * valid, already off the index) or was invalid, and tell the policy.
 * Returns the new entry. */
TLB_HOT const TlbEntry *fill_place(Tlb *t, const TlbEntry *e, uint64_t key, unsigned set,
                                   unsigned slot, bool evicted)
{
    bool large = e->page_size != t->sizes[0];
    t->sgen[slot]++;
    if (!evicted) {
        t->nlarge += large;
        t->nvalid++;
        t->vbits[slot / 64] |= 1ULL << (slot % 64);
        t->set_valid[set]++;
    } else if (t->ent[slot].page_size != e->page_size) {
        /* A victim of the new entry's size leaves nlarge alone. Else the
         * array holds two sizes and exactly one of the two entries is of
         * the second: +1 if the new one is, -1 if the victim was. */
        t->nlarge += large ? 1 : -1;
    }
    t->ent[slot] = *e;
    t->tag[slot] = (Tag){ key, e->global ? MASK_GLOBAL : MASK_FULL };
    if (t->bucket)
        index_link(t, slot, hash_page(t, (uint32_t)e->page_size << 30, e->vpn));
    if (G_LIKELY(t->stamps)) {
        t->stamps[slot] = ++*t->clock;
        return &t->ent[slot];
    }
    /* Last, so that the call is a tail call and the fill path saves no
     * registers for it. */
    return tlb_fill_insert(t, set, slot);
}

/* fill_evicting for true LRU with ordered records and the hash index
 * (Tlb.lru: the P4's 64-way arrays) of e, whose key is key: the policy's
 * victim function inline (lru_priv.h, the very code its victim runs), and
 * no test of what Tlb.lru implies. */
TLB_HOT const TlbEntry *evict_lru(Tlb *t, const TlbEntry *e, uint64_t key, unsigned set,
                                  Access access, int cpl, uint64_t *also)
{
    fill_count(t, access, cpl, 1, also);
    unsigned slot = set * t->ways + lru_victim_ordered(t->lru, set);
    index_unlink(t, slot);
    return fill_place(t, e, key, set, slot, true);
}

/* Whether tlb_fill_fresh (tlb_priv.h) into t takes evict_lru on set 0:
 * t is true LRU with ordered records and the hash index (Tlb.lru), has
 * one set (fully associative: the P4's DTLB and ITLB) and that set is
 * full, which is where fill_new (tlb.c) sends the fill then
 * (fill_evicting_lru1). One compare (Tlb.lru1_full): set 0's valid
 * count never reaches UINT_MAX. */
TLB_HOT bool tlb_fill_fresh_evicts_lru1(const Tlb *t)
{
    return t->set_valid[0] == t->lru1_full;
}

/* tlb_fill_fresh where tlb_fill_fresh_evicts_lru1 holds, inline: what
 * fill_new then does. e's key is t->missed (tlb_fill_fresh's
 * precondition), which the miss path has at hand. */
TLB_HOT const TlbEntry *tlb_fill_fresh_lru1(Tlb *t, const TlbEntry *e, Access access, int cpl,
                                           uint64_t *also)
{
    uint64_t key = t->missed;
    t->missed = 0;                   /* the page may now be here */
    return evict_lru(t, e, key, 0, access, cpl, also);
}

#endif
