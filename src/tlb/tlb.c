/* One modelled TLB array. See tlb.h for the semantics and model choices,
 * tlb_priv.h for the slot layout and the inline hit path. */
#include "tlb/tlb.h"

#include <string.h>

#include "tlb/tlb_priv.h"

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
    t->name = g_strdup(name);
    t->geom = *geom;
    t->policy = policy;
    t->ways = geom->ways;
    t->sets = sets;
    t->set_mask = sets - 1;
    if (geom->page_sizes & PRESET_PG_4K)
        t->sizes[t->nsizes++] = TLB_PAGE_4K;
    if (geom->page_sizes & (PRESET_PG_2M | PRESET_PG_4M))
        t->sizes[t->nsizes++] = TLB_PAGE_2M;
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
        t->bucket = g_new(int16_t, 1u << bits);
        t->next = g_new(int16_t, geom->entries);
        t->home = g_new(uint32_t, geom->entries);
        for (unsigned i = 0; i < (1u << bits); i++)
            t->bucket[i] = NO_SLOT;
    }
    t->vbits = g_new0(uint64_t, (geom->entries + 63) / 64);
    t->sgen = g_new0(uint32_t, geom->entries);
    t->set_valid = g_new0(uint16_t, sets);
    t->pstate = policy->create(sets, geom->ways, seed);
    t->touch = policy->touch;
    if (policy->stamps)
        t->stamps = policy->stamps(t->pstate, &t->clock);
    t->hit_inline = t->stamps || !t->touch;
    return t;
}

void tlb_free(Tlb *t)
{
    if (!t)
        return;
    t->policy->destroy(t->pstate);
    g_free(t->tag);
    g_free(t->ent);
    g_free(t->bucket);
    g_free(t->next);
    g_free(t->home);
    g_free(t->vbits);
    g_free(t->sgen);
    g_free(t->set_valid);
    g_free(t->name);
    g_free(t);
}

/* ---- hash index ------------------------------------------------------ */

/* Link slot into bucket h (hash_page of its entry's size and VPN). */
static inline void index_link(Tlb *t, unsigned slot, unsigned h)
{
    t->next[slot] = t->bucket[h];
    t->bucket[h] = (int16_t)slot;
    t->home[slot] = h;
}

static inline unsigned entry_bucket(const Tlb *t, const TlbEntry *e)
{
    return hash_page(t, (uint32_t)e->page_size << 30, e->vpn);
}

static inline void index_unlink(Tlb *t, unsigned slot)
{
    int16_t *p = &t->bucket[t->home[slot]];
    while (*p != (int16_t)slot) {
        g_assert(*p != NO_SLOT);
        p = &t->next[*p];
    }
    *p = t->next[slot];
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
    if (!t->bucket)
        return;
    memset(t->bucket, 0xff, sizeof(int16_t) << (32 - t->hash_shift));
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

TlbResult tlb_lookup_slow(Tlb *t, uint32_t lin, uint16_t pcid, Access access,
                          int cpl, const TlbEntry **out)
{
    unsigned p = TLB_PRIV(cpl);
    t->stats.lookups[access][p]++;
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
        t->stats.hits[access][p]++;
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
    t->nlarge -= t->ent[slot].page_size != t->sizes[0];
}

static void invalidate_slot(Tlb *t, unsigned slot)
{
    g_assert(t->tag[slot].key & KEY_VALID);
    t->sgen[slot]++;
    if (t->bucket)
        index_unlink(t, slot);
    mark_invalid(t, slot);
    t->tag[slot] = (Tag){ 0, MASK_FULL };
    t->nvalid--;
}

/* The lowest invalid slot of the set starting at base, or NO_SLOT: a word
 * of the valid bitmap at a time. */
static int first_invalid(const Tlb *t, unsigned base)
{
    unsigned end = base + t->ways;
    for (unsigned i = base; i < end;) {
        unsigned b = i % 64, span = 64 - b;
        uint64_t free = ~t->vbits[i / 64] >> b;
        if (free) {
            unsigned k = i + (unsigned)__builtin_ctzll(free);
            if (k < i + span)
                return k < end ? (int)k : NO_SLOT;
        }
        i += span;
    }
    return NO_SLOT;
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
    for (int s = t->bucket[h]; s != NO_SLOT; s = t->next[s])
        if (duplicates(t, (unsigned)s, key, e->global) && (first == NO_SLOT || s < first))
            first = s;
    if (first == NO_SLOT)
        return NO_SLOT;
    for (;;) {
        int s = t->bucket[h];
        while (s != NO_SLOT && (s == first || !duplicates(t, (unsigned)s, key, e->global)))
            s = t->next[s];
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
    if (t->bucket)
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

/* tlb_fill; the array's evictions are also added to *also (the
 * hierarchy's count), so that tlb_hier_fill need not compare counts
 * around the call. */
const TlbEntry *tlb_fill_counted(Tlb *t, const TlbEntry *e, Access access, int cpl,
                                 TlbFillInfo *info, uint64_t *also)
{
    /* Caller bugs at the API boundary: a PCID that would spill into the
     * key, a page size the array does not hold, a VPN past 4 GiB. */
    unsigned size = e->page_size;
    g_assert(e->pcid <= TLB_PCID_MAX);
    g_assert(t->sizes[0] == size || (t->nsizes > 1 && t->sizes[1] == size));
    g_assert(e->vpn <= (UINT32_MAX >> tlb_page_shift((TlbPageSize)size)));
    uint64_t key = make_key(size, e->vpn, e->pcid);
    unsigned set = e->vpn & t->set_mask;
    unsigned base = set * t->ways;
    unsigned h = t->bucket ? hash_page(t, (uint32_t)size << 30, e->vpn) : 0;
    unsigned extra = 0;
    int slot = NO_SLOT;
    bool refreshed = false, evicted = false;
    TlbEntry old;

    /* No duplicate can exist when the entry is not global and its key is
     * t->missed: tlb_hit_fast set missed after probing every size of the
     * array for this page under this PCID and finding no slot that
     * answers it, and any duplicate of a non-global entry (same page, and
     * the same PCID or itself global) answers that probe under its mask.
     * Since then nothing added an entry: every fill clears missed (below),
     * and flushes and invalidations only remove entries. A global entry can duplicate entries of other PCIDs,
     * which that probe did not look for: it always searches. */
    if (key != t->missed || e->global)
        slot = take_duplicates(t, base, e, key, h, &extra);
    t->missed = 0;                   /* the page may now be here */
    if (G_UNLIKELY(slot != NO_SLOT)) {
        refreshed = true;
        invalidate_slot(t, (unsigned)slot);
    } else {
        if (t->set_valid[set] < t->ways)
            slot = first_invalid(t, base);
        if (slot == NO_SLOT) {
            /* The policy's answer is stamped (or inserted) below before
             * anything else reaches the policy (policy.h victim). */
            unsigned v = t->policy->victim(t->pstate, set);
            g_assert(v < t->ways);
            slot = (int)(base + v);
            evicted = true;
            if (info)
                old = t->ent[slot];
            /* The slot stays valid in the same set: only the index moves
             * (the tag and entry are overwritten below). */
            if (t->bucket)
                index_unlink(t, (unsigned)slot);
        }
    }
    t->sgen[slot]++;
    if (evicted)
        t->nlarge -= t->ent[slot].page_size != t->sizes[0];
    t->nlarge += e->page_size != t->sizes[0];
    t->ent[slot] = *e;
    t->tag[slot] = (Tag){ key, e->global ? MASK_GLOBAL : MASK_FULL };
    if (!evicted) {
        t->nvalid++;
        t->vbits[(unsigned)slot / 64] |= 1ULL << ((unsigned)slot % 64);
        t->set_valid[set]++;
    }
    if (t->bucket)
        index_link(t, (unsigned)slot, h);
    unsigned way = (unsigned)slot - base;
    if (t->stamps)
        t->stamps[slot] = ++*t->clock;
    else
        t->policy->insert(t->pstate, set, way);
    t->stats.fills[access][TLB_PRIV(cpl)]++;
    unsigned ev = extra + evicted;
    t->stats.evictions += ev;
    *also += ev;
    if (info) {
        *info = (TlbFillInfo){ .set = set, .way = way, .evicted = evicted,
                               .refreshed = refreshed, .superseded = extra };
        if (evicted)
            info->old = old;
    }
    return &t->ent[slot];
}

const TlbEntry *tlb_fill(Tlb *t, const TlbEntry *e, Access access, int cpl,
                         TlbFillInfo *info)
{
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

unsigned tlb_invlpg(Tlb *t, uint32_t lin, uint16_t pcid)
{
    unsigned n = 0;
    for (unsigned i = 0; i < t->nsizes; i++) {
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

unsigned tlb_flush_nonglobal(Tlb *t, uint16_t pcid, TlbFlushCause cause)
{
    g_assert(cause == TLB_FLUSH_CR3 || cause == TLB_FLUSH_PCID);
    unsigned n = 0;
    FOR_EACH_VALID(t, s) {
        if (!t->ent[s].global && t->ent[s].pcid == pcid) {
            t->sgen[s]++;
            mark_invalid(t, s);
            t->tag[s] = (Tag){ 0, MASK_FULL };
            n++;
        }
    }
    t->nvalid -= n;
    if (n)
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
const TlbStats *tlb_stats(const Tlb *t) { return &t->stats; }
void tlb_stats_reset(Tlb *t) { memset(&t->stats, 0, sizeof t->stats); }

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
