/* The steps of an array's fill as inline functions, private to src/tlb:
 * tlb.c's fills are made of them, and hier_priv.h's tlb_hier_fill_missed
 * (the fill the MMU's only-array miss path asks for) runs the same steps
 * inline for the P4's fills (tlb_fill_fresh_lru1_slot,
 * tlb_fill_fresh_4k_free_slot). Everyone else uses tlb.h. */
#ifndef VMSPLIT_TLB_FILL_PRIV_H
#define VMSPLIT_TLB_FILL_PRIV_H

#include "tlb/lru_priv.h"
#include "tlb/tlb_priv.h"

/* Link slot into bucket h (hash_page of its entry's size and VPN), first
 * on its chain. */
TLB_HOT void index_link(Tlb *t, unsigned slot, unsigned h)
{
    int first = t->bucket[h].next;
    t->node[slot] = (IndexNode){ first, t->head0 + (int)h };
    t->node[first].prev = (int)slot; /* the dummy's, if the chain was empty */
    t->bucket[h].next = (int)slot;
}

/* Take slot off its bucket's chain. */
TLB_HOT void index_unlink(Tlb *t, unsigned slot)
{
    IndexNode x = t->node[slot];
    t->node[x.prev].next = x.next;
    t->node[x.next].prev = x.prev;   /* the dummy's, if slot was last */
}

/* The lowest invalid slot of the set starting at base, or NO_SLOT: a word
 * of the valid bitmap at a time, the first from base's bit. The first
 * clear bit k at or after base is the answer if k < end; if k >= end,
 * every slot of [base, end) is valid. Bits past the last entry are never
 * set, and no word past the set's last is read. */
TLB_HOT int first_invalid(const Tlb *t, unsigned base)
{
    unsigned end = base + t->ways, w = base / 64;
    uint64_t free = ~t->vbits[w] & (~0ULL << (base % 64));
    for (;;) {
        if (free) {
            unsigned k = w * 64 + (unsigned)__builtin_ctzll(free);
            return k < end ? (int)k : NO_SLOT;
        }
        if (++w * 64 >= end)
            return NO_SLOT;
        free = ~t->vbits[w];
    }
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
    t->sgen[slot]++;
    if (!evicted) {
        count_size(t, e->page_size, 1);
        t->nvalid++;
        t->vbits[slot / 64] |= 1ULL << (slot % 64);
        t->set_valid[set]++;
    } else if (t->ent[slot].page_size != e->page_size) {
        /* A victim of the new entry's size leaves the counts alone. */
        count_size(t, t->ent[slot].page_size, -1);
        count_size(t, e->page_size, 1);
    }
    t->ent[slot] = *e;
    t->tag[slot] = (Tag){ key, e->global ? MASK_GLOBAL : MASK_FULL };
    if (t->node)
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
 * (fill_evicting_lru1). One compare (Tlb.lru_single_set_ways): set 0's valid
 * count never reaches UINT_MAX. */
TLB_HOT bool tlb_fill_fresh_evicts_lru1(const Tlb *t)
{
    return t->set_valid[0] == t->lru_single_set_ways;
}

/* tlb_fill_fresh of a 4 KiB entry that is not global, for page vpn
 * (t->missed's), into a free way, but for the entry itself, which the
 * caller then writes straight into t->ent[returned slot]
 * (tlb_hier_fill_missed, hier_priv.h, writes it there once instead of
 * building a copy first); or -1,
 * having changed nothing, when the set is full (the caller then calls
 * tlb_fill_fresh). The steps fill_new takes into fill_free, with
 * fill_place's, in which e->page_size is TLB_PAGE_4K, which is
 * t->sizes[0] (t->missed is a 4 KiB key: nlarge does not count the new
 * entry), and e->global is false; only the victim's size is read from an
 * entry, and a policy's insert (no stamps) reads no entry, so the entry
 * can be written last. */
TLB_HOT int tlb_fill_fresh_4k_free_slot(Tlb *t, uint32_t vpn, Access access, int cpl,
                                        uint64_t *also)
{
    unsigned set = vpn & t->set_mask;
    if (t->set_valid[set] >= t->ways)
        return -1;
    uint64_t key = t->missed;
    t->missed = 0;                   /* the page may now be here */
    fill_count(t, access, cpl, 0, also);
    unsigned slot = (unsigned)first_invalid(t, set * t->ways);
    t->sgen[slot]++;
    t->nvalid++;
    t->vbits[slot / 64] |= 1ULL << (slot % 64);
    t->set_valid[set]++;
    t->tag[slot] = (Tag){ key, MASK_FULL };
    if (t->node)
        index_link(t, slot, hash_page(t, 0, vpn));
    if (G_LIKELY(t->stamps))
        t->stamps[slot] = ++*t->clock;
    else
        tlb_fill_insert(t, set, slot);
    return (int)slot;
}

/* The same where tlb_fill_fresh_evicts_lru1 holds: evict_lru on set 0,
 * which Tlb.lru implies t->node (the hash index) and t->stamps for; always
 * a slot. */
TLB_HOT unsigned tlb_fill_fresh_lru1_slot(Tlb *t, uint32_t vpn, Access access, int cpl,
                                          uint64_t *also)
{
    fill_count(t, access, cpl, 1, also);
    unsigned slot = lru_victim_of(t->lru, 0, &t->lru->one);
    index_unlink(t, slot);
    t->sgen[slot]++;
    /* A 4 KiB entry over a victim of a later size: one fewer of it. */
    count_size(t, t->ent[slot].page_size, -1);
    /* The key read where it is used, not held across the victim's
     * search (nothing before reads or writes t->missed). */
    t->tag[slot] = (Tag){ t->missed, MASK_FULL };
    t->missed = 0;                   /* the page may now be here */
    index_link(t, slot, hash_page(t, 0, vpn));
    t->stamps[slot] = ++*t->clock;
    return slot;
}

#endif
