/* One modelled TLB array. See tlb.h for the semantics and model choices,
 * tlb_priv.h for the slot layout and the inline hit path. */
#include "tlb/tlb.h"

#include <string.h>

#include "tlb/fill_priv.h"
#include "tlb/tlb_state.h"

G_DEFINE_QUARK(vmsplit-tlb-error-quark, tlb_error)

/* ---- construction ---------------------------------------------------- */

static bool is_pow2(unsigned x) { return x && !(x & (x - 1)); }

static bool check_geom(const char *name, const TlbGeom *g, GError **err)
{
    const char *why = NULL;
    g_autofree char *msg = NULL;
    if (g->entries == 0)
        why = "has no entries";
    else if (g->entries > 32767)
        msg = g_strdup_printf("has %u entries; the model supports at most 32767",
                              g->entries);
    else if (g->ways == 0 || g->ways > g->entries || g->entries % g->ways)
        msg = g_strdup_printf("%u ways do not divide %u entries", g->ways,
                              g->entries);
    else if (!is_pow2(g->entries / g->ways))
        msg = g_strdup_printf("%u entries / %u ways = %u sets, which is not a "
                              "power of two", g->entries, g->ways,
                              g->entries / g->ways);
    else if (!(g->page_sizes & (PRESET_PG_4K | PRESET_PG_2M | PRESET_PG_4M)))
        why = "holds no page size (expected 4K, 2M and/or 4M)";
    else if (g->page_sizes & ~(PRESET_PG_4K | PRESET_PG_2M | PRESET_PG_4M))
        why = "lists an unknown page size";
    if (!why && !msg)
        return true;
    g_set_error(err, TLB_ERROR, TLB_ERROR_GEOMETRY, "%s: %s", name,
                why ? why : msg);
    return false;
}

Tlb *tlb_new(const char *name, const TlbGeom *geom, const TlbPolicy *policy,
             uint64_t seed, GError **err)
{
    g_return_val_if_fail(name && geom && policy, NULL);
    if (!check_geom(name, geom, err))
        return NULL;
    unsigned sets = geom->entries / geom->ways;
    GError *perr = NULL;
    if (policy->check && !policy->check(sets, geom->ways, &perr)) {
        g_set_error(err, TLB_ERROR, TLB_ERROR_GEOMETRY, "%s: %s", name,
                    perr->message);
        g_error_free(perr);
        return NULL;
    }

    Tlb *t = g_new0(Tlb, 1);
    t->self = &t->stats;
    t->name = g_strdup(name);
    t->geom = *geom;
    t->policy = policy;
    t->ways = geom->ways;
    t->sets = sets;
    t->set_mask = sets - 1;
    if (geom->page_sizes & PRESET_PG_4K)
        t->sizes[t->nsizes++] = TLB_PAGE_4K;
    if (geom->page_sizes & PRESET_PG_2M)
        t->sizes[t->nsizes++] = TLB_PAGE_2M;
    if (geom->page_sizes & PRESET_PG_4M)
        t->sizes[t->nsizes++] = TLB_PAGE_4M;
    for (unsigned i = 0; i < t->nsizes; i++) {
        t->shifts[i] = (uint8_t)tlb_page_shift((TlbPageSize)t->sizes[i]);
        t->key_base[i] = make_key(t->sizes[i], 0, 0);
        t->hash_salt[i] = (uint32_t)t->sizes[i] << 30;
    }
    t->tag = g_new(Tag, geom->entries);
    t->ent = g_new0(TlbEntry, geom->entries);
    for (unsigned i = 0; i < geom->entries; i++)
        t->tag[i] = (Tag){ 0, MASK_FULL };
    if (geom->entries > TLB_SCAN_ENTRIES) {
        unsigned bits = 1;
        while ((1u << bits) < 4 * geom->entries)
            bits++;
        t->hash_shift = 32 - bits;
        /* The dummy, the slots, the heads (Tlb.node). */
        size_t nodes = 1 + geom->entries + (1u << bits);
        t->nodes = g_new(IndexNode, nodes);
        t->node = t->nodes + 1;
        t->head0 = (int)geom->entries;
        t->bucket = t->node + t->head0;
        memset(t->nodes, 0xff, nodes * sizeof(IndexNode));      /* all NO_SLOT */
    }
    t->vbits = g_new0(uint64_t, (geom->entries + 63) / 64);
    t->sgen = g_new0(uint32_t, geom->entries);
    t->set_valid = g_new0(uint16_t, sets);
    t->pstate = policy->create(sets, geom->ways, seed);
    t->touch = policy->touch;
    if (policy->stamps)
        t->stamps = policy->stamps(t->pstate, &t->clock);
    t->hit_inline = t->stamps || !t->touch;
    if (policy->ordered_lru && t->node)
        t->lru = policy->ordered_lru(t->pstate);
    t->lru_single_set_ways = t->lru && sets == 1 ? geom->ways : UINT_MAX;
    return t;
}

void tlb_free(Tlb *t)
{
    if (!t)
        return;
    t->policy->destroy(t->pstate);
    g_free(t->tag);
    g_free(t->ent);
    g_free(t->nodes);
    g_free(t->vbits);
    g_free(t->sgen);
    g_free(t->set_valid);
    g_free(t->name);
    g_free(t);
}

/* ---- hash index ------------------------------------------------------ */

static inline unsigned entry_bucket(const Tlb *t, const TlbEntry *e)
{
    return hash_page(t, (uint32_t)e->page_size << 30, e->vpn);
}

/* Visit the valid slots, a word of the valid bitmap at a time: flushes
 * run on every CR3 write of the 4G/4G and KPTI layouts, and most arrays are
 * mostly empty or mostly dropped by then. fn may invalidate the slot. */
#define FOR_EACH_VALID(t, s)                                                  \
    for (unsigned w_ = 0; w_ < ((t)->geom.entries + 63) / 64; w_++)           \
        for (uint64_t b_ = (t)->vbits[w_]; b_; b_ &= b_ - 1)                  \
            for (unsigned s = w_ * 64 + (unsigned)__builtin_ctzll(b_), o_ = 1; o_; o_ = 0)

static void index_rebuild(Tlb *t)
{
    if (!t->node)
        return;
    /* Every head: NO_SLOT. */
    memset(t->bucket, 0xff, sizeof(IndexNode) << (32 - t->hash_shift));
    FOR_EACH_VALID(t, i)
        index_link(t, i, entry_bucket(t, &t->ent[i]));
}

/* ---- lookup ---------------------------------------------------------- */

TlbResult tlb_lookup(Tlb *t, uint32_t lin, uint16_t pcid, Access access,
                     int cpl, const TlbEntry **out)
{
    return tlb_lookup_inline(t, lin, pcid, access, cpl, out);
}

void tlb_bad_pcid(uint16_t pcid)
{
    g_error("TLB lookup with PCID %u: PCIDs have %d bits", pcid, TLB_PCID_BITS);
}

int tlb_probe_later_sizes(const Tlb *t, uint32_t lin, uint16_t pcid)
{
    for (unsigned i = 1; i < t->nsizes; i++) {
        if (!t->nof[t->sizes[i]])
            continue;
        int s = probe_size(t, i, lin, pcid);
        if (s != NO_SLOT)
            return s;
    }
    return NO_SLOT;
}

TlbResult tlb_lookup_slow(Tlb *t, uint32_t lin, uint16_t pcid, Access access,
                          int cpl, const TlbEntry **out)
{
    unsigned p = TLB_PRIV(cpl);
    uint64_t key0 = t->key_base[0] | ((uint64_t)(lin >> t->shifts[0]) << KEY_VPN_SHIFT) | pcid;
    for (unsigned i = t->missed == key0 ? t->nsizes : 0; i < t->nsizes; i++) {
        int s = probe_size(t, i, lin, pcid);
        if (s == NO_SLOT)
            continue;
        *out = &t->ent[s];
        if (access == ACCESS_WRITE && !t->ent[s].dirty) {
            t->stats.misses[access][p]++;
            t->stats.dirty_walks[access][p]++;
            return TLB_MISS_DIRTY;
        }
        t->slow_hits[access][p]++;
        if (t->stamps) {
            t->stamps[s] = ++*t->clock;
        } else if (t->touch) {
            unsigned set = (lin >> t->shifts[i]) & t->set_mask;
            t->touch(t->pstate, set, (unsigned)s - set * t->ways);
        }
        return TLB_HIT;
    }
    t->stats.misses[access][p]++;
    *out = NULL;
    return TLB_MISS;
}

bool tlb_peek(const Tlb *t, uint32_t lin, uint16_t pcid, TlbEntry *out,
              unsigned *set, unsigned *way)
{
    for (unsigned i = 0; i < t->nsizes; i++) {
        int s = probe_size(t, i, lin, pcid);
        if (s == NO_SLOT)
            continue;
        if (out)
            *out = t->ent[s];
        if (set)
            *set = (unsigned)s / t->ways;
        if (way)
            *way = (unsigned)s % t->ways;
        return true;
    }
    return false;
}

/* ---- fill ------------------------------------------------------------ */

/* The valid bitmap and per-set counts follow the tags' V bits (a fill
 * sets both inline). */
static inline void mark_invalid(Tlb *t, unsigned slot)
{
    t->vbits[slot / 64] &= ~(1ULL << (slot % 64));
    t->set_valid[t->ent[slot].vpn & t->set_mask]--;
    count_size(t, t->ent[slot].page_size, -1);
}

static void invalidate_slot(Tlb *t, unsigned slot)
{
    g_assert(t->tag[slot].key & KEY_VALID);
    t->sgen[slot]++;
    if (t->node)
        index_unlink(t, slot);
    mark_invalid(t, slot);
    t->tag[slot] = (Tag){ 0, MASK_FULL };
    t->nvalid--;
}

/* Would the entry in slot and a new entry (key, global) answer the same
 * lookup? Same page, and same PCID or either one global. */
static bool duplicates(const Tlb *t, unsigned slot, uint64_t key, bool global)
{
    uint64_t k = t->tag[slot].key;
    if (!(k & KEY_VALID) || !same_page(k, key))
        return false;
    return global || t->ent[slot].global || k == key;
}

/* take_duplicates through the hash index: every entry of the same page is
 * on the chain of (size, vpn), and in the new entry's set. */
static int take_duplicates_hashed(Tlb *t, const TlbEntry *e, uint64_t key,
                                  unsigned h, unsigned *extra)
{
    int first = NO_SLOT;
    for (int s = index_first(t, h); s != NO_SLOT; s = t->node[s].next)
        if (duplicates(t, (unsigned)s, key, e->global) && (first == NO_SLOT || s < first))
            first = s;
    if (first == NO_SLOT)
        return NO_SLOT;
    for (;;) {
        int s = index_first(t, h);
        while (s != NO_SLOT && (s == first || !duplicates(t, (unsigned)s, key, e->global)))
            s = t->node[s].next;
        if (s == NO_SLOT)
            return first;
        invalidate_slot(t, (unsigned)s);
        (*extra)++;
    }
}

/* Find the first duplicate of the new entry in its set and invalidate any
 * further ones (only possible after page tables changed a G bit). Returns
 * the slot to refresh or NO_SLOT; *extra counts the entries removed. Out
 * of line: most fills skip it (tlb_fill_counted), and inlined it would
 * cost them register saves. */
static G_GNUC_NO_INLINE int take_duplicates(Tlb *t, unsigned base, const TlbEntry *e,
                           uint64_t key, unsigned h, unsigned *extra)
{
    if (t->node)
        return take_duplicates_hashed(t, e, key, h, extra);
    bool global = e->global;
    int first = NO_SLOT;
    for (unsigned w = 0; w < t->ways; w++) {
        if (!duplicates(t, base + w, key, global))
            continue;
        if (first == NO_SLOT) {
            first = (int)(base + w);
        } else {
            invalidate_slot(t, base + w);
            (*extra)++;
        }
    }
    return first;
}

/* The policy's victim in set (at base), taken off the index (the slot
 * stays valid in the same set; its tag and entry are overwritten by
 * fill_place). The policy's answer is stamped (or inserted) by fill_place
 * before anything else reaches the policy (policy.h victim). */
static inline __attribute__((always_inline)) unsigned fill_victim(Tlb *t, unsigned set,
                                                                  unsigned base)
{
    unsigned v = t->policy->victim(t->pstate, set);
    g_assert(v < t->ways);           /* else a policy's bug */
    if (t->node)
        index_unlink(t, base + v);
    return base + v;
}

const TlbEntry *tlb_fill_insert(Tlb *t, unsigned set, unsigned slot)
{
    t->policy->insert(t->pstate, set, slot - set * t->ways);
    return &t->ent[slot];
}

/* A fill into a full set, of an entry that duplicates nothing. Out of
 * line, so that a fill into a free way makes no call and saves no
 * registers. */
static G_GNUC_NO_INLINE const TlbEntry *
fill_evicting(Tlb *t, const TlbEntry *e, unsigned set, Access access, int cpl,
              uint64_t *also)
{
    /* Counted first: then only t, e and set live across the policy's
     * call. */
    fill_count(t, access, cpl, 1, also);
    unsigned slot = fill_victim(t, set, set * t->ways);
    return fill_place(t, e, make_key(e->page_size, e->vpn, e->pcid), set, slot, true);
}

static G_GNUC_NO_INLINE const TlbEntry *
fill_evicting_lru(Tlb *t, const TlbEntry *e, unsigned set, Access access, int cpl,
                  uint64_t *also)
{
    return evict_lru(t, e, make_key(e->page_size, e->vpn, e->pcid), set, access, cpl, also);
}

/* fill_evicting_lru for an array of one set (fully associative: the P4's
 * DTLB and ITLB): set is then vpn & 0 = 0, and with the constant the
 * set's order, ring, stamps and slot base need no index arithmetic. */
static G_GNUC_NO_INLINE const TlbEntry *
fill_evicting_lru1(Tlb *t, const TlbEntry *e, Access access, int cpl, uint64_t *also)
{
    return evict_lru(t, e, make_key(e->page_size, e->vpn, e->pcid), 0, access, cpl, also);
}

/* A fill into a set with an invalid way, of an entry that duplicates
 * nothing: the lowest invalid way (there is one: set_valid counts the
 * set's valid ways). */
static G_GNUC_NO_INLINE const TlbEntry *
fill_free(Tlb *t, const TlbEntry *e, unsigned set, Access access, int cpl, uint64_t *also)
{
    int slot = first_invalid(t, set * t->ways);
    g_assert(slot != NO_SLOT);
    fill_count(t, access, cpl, 0, also);
    return fill_place(t, e, make_key(e->page_size, e->vpn, e->pcid), set, (unsigned)slot,
                      false);
}

/* The probe key in page size z (one of the array's sizes after the
 * first) for the address whose first-size probe key t->missed holds, or
 * 0 (no valid key) if none: probe_size's key for that size. An address's
 * VPN in size z is its first-size VPN shifted by the difference of the
 * sizes' shifts. */
static inline uint64_t missed_in_size(const Tlb *t, unsigned z)
{
    uint64_t m = t->missed;
    if (!m)
        return 0;
    for (unsigned i = 1; i < t->nsizes; i++) {
        if (t->sizes[i] != z)
            continue;
        uint32_t vpn0 = (uint32_t)(m >> KEY_VPN_SHIFT);  /* the key's VPN field */
        uint32_t vpn1 = vpn0 >> (t->shifts[i] - t->shifts[0]);
        return t->key_base[i] | ((uint64_t)vpn1 << KEY_VPN_SHIFT) | (m & KEY_PCID_MASK);
    }
    return 0;
}

/* A fill of an entry that duplicates nothing: into a free way, or over
 * the victim. Tail calls only, so that its callers save no registers. */
static inline __attribute__((always_inline)) const TlbEntry *
fill_new(Tlb *t, const TlbEntry *e, Access access, int cpl, uint64_t *also)
{
    t->missed = 0;                   /* the page may now be here */
    unsigned set = e->vpn & t->set_mask;
    if (t->set_valid[set] < t->ways)
        return fill_free(t, e, set, access, cpl, also);
    if (t->lru)
        return t->set_mask ? fill_evicting_lru(t, e, set, access, cpl, also)
                           : fill_evicting_lru1(t, e, access, cpl, also);
    return fill_evicting(t, e, set, access, cpl, also);
}

/* tlb_fill_counted in general: duplicates of e looked for (the first is
 * refreshed in place, any others removed), *info filled in. Out of line:
 * most fills follow a miss, need neither, and take tlb_fill_counted's
 * short paths. */
static G_GNUC_NO_INLINE const TlbEntry *
fill_searched(Tlb *t, const TlbEntry *e, Access access, int cpl, TlbFillInfo *info,
              uint64_t *also)
{
    uint64_t key = make_key(e->page_size, e->vpn, e->pcid);
    if (!e->global && !info && key == missed_in_size(t, e->page_size))
        return fill_new(t, e, access, cpl, also);   /* see tlb_fill_counted */
    unsigned h = t->node ? hash_page(t, (uint32_t)e->page_size << 30, e->vpn) : 0;
    unsigned set = e->vpn & t->set_mask, base = set * t->ways, extra = 0;
    int dup = take_duplicates(t, base, e, key, h, &extra);
    t->missed = 0;                   /* the page may now be here */
    bool evicted = false;
    int slot = dup;
    TlbEntry old;
    if (dup != NO_SLOT) {
        invalidate_slot(t, (unsigned)dup);
    } else {
        if (t->set_valid[set] < t->ways)
            slot = first_invalid(t, base);
        if (slot == NO_SLOT) {
            evicted = true;
            slot = (int)fill_victim(t, set, base);
            if (info)
                old = t->ent[slot];
        }
    }
    fill_count(t, access, cpl, extra + evicted, also);
    const TlbEntry *r = fill_place(t, e, key, set, (unsigned)slot, evicted);
    if (info) {
        *info = (TlbFillInfo){ .set = set, .way = (unsigned)slot - base,
                               .evicted = evicted, .refreshed = dup != NO_SLOT,
                               .superseded = extra };
        if (evicted)
            info->old = old;
    }
    return r;
}

/* tlb_fill; the array's evictions are also added to *also (the
 * hierarchy's count), so that tlb_hier_fill need not compare counts
 * around the call. The caller has checked e (tlb_check_entry) and that t
 * holds its page size. */
const TlbEntry *tlb_fill_counted(Tlb *t, const TlbEntry *e, Access access, int cpl,
                                 TlbFillInfo *info, uint64_t *also)
{
    uint64_t key = make_key(e->page_size, e->vpn, e->pcid);
    /* No duplicate can exist when the entry is not global and its key is
     * the probe key, in its size, of the address t->missed records:
     * tlb_hit_fast set missed after probing every size of the array for
     * that address under that PCID (or knowing, from nlarge, that the
     * later sizes hold nothing) and finding no slot that answers it; the
     * probe in the entry's size had exactly the entry's key (t->missed
     * itself for the first size, missed_in_size for a later one, the
     * kernel's 2 MiB pages in the P4's DTLB). Any duplicate of a
     * non-global entry (same page, and the same PCID or itself global)
     * would have answered that probe under its mask. Since then nothing
     * added an entry: every fill clears missed (here and in
     * fill_searched), and flushes and invalidations only remove entries.
     * A global entry can duplicate entries of other PCIDs, which that
     * probe did not look for: it always searches. */
    if (G_UNLIKELY(key != t->missed || e->global || info))
        return fill_searched(t, e, access, cpl, info, also);
    return fill_new(t, e, access, cpl, also);
}

const TlbEntry *tlb_fill_fresh(Tlb *t, const TlbEntry *e, Access access, int cpl,
                               uint64_t *also)
{
    return fill_new(t, e, access, cpl, also);
}

void tlb_bad_entry(const TlbEntry *e)
{
    g_error("TLB fill of an entry with page size %u, PCID %u, VPN %#x: sizes are "
            "0-%d, PCIDs have %d bits, a VPN is below 4 GiB", e->page_size,
            e->pcid, e->vpn, TLB_NPAGESIZES - 1, TLB_PCID_BITS);
}

const TlbEntry *tlb_fill(Tlb *t, const TlbEntry *e, Access access, int cpl,
                         TlbFillInfo *info)
{
    tlb_check_entry(e);
    if (!tlb_holds(t, (TlbPageSize)e->page_size))
        g_error("TLB fill of %s: it does not hold page size %u", t->name, e->page_size);
    uint64_t ignored = 0;
    return tlb_fill_counted(t, e, access, cpl, info, &ignored);
}

/* ---- flushes --------------------------------------------------------- */

static void count_flush(Tlb *t, TlbFlushCause cause, unsigned n)
{
    switch (cause) {
    case TLB_FLUSH_CR3: t->stats.flushes_cr3++; t->stats.dropped_cr3 += n; break;
    case TLB_FLUSH_INVLPG: t->stats.flushes_invlpg++; t->stats.dropped_invlpg += n; break;
    case TLB_FLUSH_PCID: t->stats.flushes_pcid++; t->stats.dropped_pcid += n; break;
    case TLB_FLUSH_PGE: t->stats.flushes_pge++; t->stats.dropped_pge += n; break;
    }
}

/* INVLPG removes, in each page size, the entries a lookup of lin under
 * pcid would hit: at most one per size (tlb.h: a fill replaces any entry
 * the new one would duplicate, so no two entries answer one probe). An
 * array with the hash index finds it there, as a lookup does; a small
 * array compares every way of the set. */
unsigned tlb_invlpg(Tlb *t, uint32_t lin, uint16_t pcid)
{
    unsigned n = 0;
    for (unsigned i = 0; i < t->nsizes; i++) {
        if (t->node) {
            int s = probe_size(t, i, lin, pcid);
            if (s != NO_SLOT) {
                invalidate_slot(t, (unsigned)s);
                n++;
            }
            continue;
        }
        unsigned size = t->sizes[i];
        uint32_t vpn = lin >> tlb_page_shift((TlbPageSize)size);
        uint64_t probe = make_key(size, vpn, pcid);
        unsigned base = (vpn & t->set_mask) * t->ways;
        for (unsigned w = 0; w < t->ways; w++) {
            unsigned s = base + w;
            if (t->tag[s].key & KEY_VALID && ((t->tag[s].key ^ probe) & t->tag[s].mask) == 0) {
                invalidate_slot(t, s);
                n++;
            }
        }
    }
    count_flush(t, TLB_FLUSH_INVLPG, n);
    return n;
}

/* A CR3/PCID flush unlinks each entry it drops from the hash index, up
 * to a limit past which it rebuilds the index instead. Either way the
 * index afterwards holds exactly the valid slots, each on the chain of
 * its own bucket (the order on a chain is irrelevant: at most one slot
 * answers a probe, and take_duplicates_hashed picks the lowest slot
 * itself). An unlink costs ~6 host instructions (the chains are doubly
 * linked); a rebuild clears every bucket (~entries host instructions:
 * four 8-byte heads per entry) and relinks every survivor (~10 each),
 * ~100 for the P4's DTLB with few survivors. So 4G/4G's CR3 writes, which drop a handful of
 * entries per array, unlink; a flush dropping most of a large array
 * rebuilds. The limit, 8 + half the entries valid before, is an estimate
 * of that crossover, not tuned. */
unsigned tlb_flush_nonglobal(Tlb *t, uint16_t pcid, TlbFlushCause cause)
{
    g_assert(cause == TLB_FLUSH_CR3 || cause == TLB_FLUSH_PCID);
    unsigned n = 0, limit = t->node ? 8 + t->nvalid / 2 : 0;
    FOR_EACH_VALID(t, s) {
        if (!t->ent[s].global && t->ent[s].pcid == pcid) {
            t->sgen[s]++;
            /* Past the limit the index is rebuilt below, whatever was
             * unlinked before. */
            if (n < limit)
                index_unlink(t, s);
            mark_invalid(t, s);
            t->tag[s] = (Tag){ 0, MASK_FULL };
            n++;
        }
    }
    t->nvalid -= n;
    if (n > limit)
        index_rebuild(t);
    count_flush(t, cause, n);
    return n;
}

unsigned tlb_flush_all(Tlb *t)
{
    unsigned n = t->nvalid;
    for (unsigned s = 0; s < t->geom.entries; s++) {
        t->tag[s] = (Tag){ 0, MASK_FULL };
        t->sgen[s]++;
    }
    memset(t->vbits, 0, sizeof(uint64_t) * ((t->geom.entries + 63) / 64));
    memset(t->set_valid, 0, sizeof(uint16_t) * t->sets);
    t->nvalid = 0;
    t->nlarge = 0;
    memset(t->nof, 0, sizeof t->nof);
    index_rebuild(t);
    count_flush(t, TLB_FLUSH_PGE, n);
    return n;
}

/* ---- inspection ------------------------------------------------------ */

const char *tlb_name(const Tlb *t) { return t->name; }
const TlbGeom *tlb_geom(const Tlb *t) { return &t->geom; }
unsigned tlb_sets(const Tlb *t) { return t->sets; }
const TlbPolicy *tlb_policy(const Tlb *t) { return t->policy; }
unsigned tlb_valid_count(const Tlb *t) { return t->nvalid; }
/* The derived counters (Tlb.stats in tlb_priv.h): hits are the inline
 * ones plus the others, and every lookup was a hit or a miss. */
const TlbStats *tlb_stats(const Tlb *t)
{
    TlbStats *v = t->self;
    for (unsigned a = 0; a < TLB_NACCESS; a++)
        for (unsigned p = 0; p < 2; p++) {
            v->hits[a][p] = t->fast_hits[2 * a + p] + t->slow_hits[a][p];
            v->lookups[a][p] = v->hits[a][p] + v->misses[a][p];
        }
    return v;
}

void tlb_stats_reset(Tlb *t)
{
    memset(&t->stats, 0, sizeof t->stats);
    memset(t->fast_hits, 0, sizeof t->fast_hits);
    memset(t->slow_hits, 0, sizeof t->slow_hits);
}

bool tlb_holds(const Tlb *t, TlbPageSize s)
{
    for (unsigned i = 0; i < t->nsizes; i++)
        if (t->sizes[i] == s)
            return true;
    return false;
}

bool tlb_entry_at(const Tlb *t, unsigned set, unsigned way, TlbEntry *out)
{
    g_assert(set < t->sets && way < t->ways);
    unsigned s = set * t->ways + way;
    if (!(t->tag[s].key & KEY_VALID))
        return false;
    if (out)
        *out = t->ent[s];
    return true;
}

void tlb_stats_add_base(TlbStats *dst, uint64_t hits[TLB_NACCESS][2], const TlbStats *d,
                        uint64_t times)
{
    TlbStats x = *d;
    memset(x.lookups, 0, sizeof x.lookups);
    memset(x.hits, 0, sizeof x.hits);
    tlb_stats_add_scaled(dst, &x, times);
    for (unsigned a = 0; a < TLB_NACCESS; a++)
        for (unsigned p = 0; p < 2; p++)
            hits[a][p] += times * d->hits[a][p];
}
