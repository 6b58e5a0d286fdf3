/* The TLB hierarchy of one core. See hierarchy.h. */
#include "tlb/hierarchy.h"

#include <string.h>

#include "tlb/hier_priv.h"

void tlb_hier_config_from_preset(TlbHierConfig *c, const Preset *p)
{
    *c = (TlbHierConfig){
        .itlb_4k = p->itlb_4k, .itlb_large = p->itlb_large,
        .dtlb_4k = p->dtlb_4k, .dtlb_large = p->dtlb_large,
        .stlb = p->stlb, .stlb_data_only = p->stlb_data_only,
        .pde_cache_entries = p->pde_cache_entries,
        .policy = p->tlb_policy,
    };
}

TlbHierarchy *tlb_hier_new(const Preset *p, uint64_t seed, GError **err)
{
    TlbHierConfig c;
    tlb_hier_config_from_preset(&c, p);
    return tlb_hier_new_config(&c, seed, err);
}

#define LARGE_SIZES (PRESET_PG_2M | PRESET_PG_4M)

/* Create one array if it exists; *ok goes false on error. */
static Tlb *add_array(TlbHierarchy *h, const char *name, const TlbGeom *g,
                      const TlbPolicy *pol, uint64_t *seed, unsigned need,
                      GError **err, bool *ok)
{
    if (!*ok || g->entries == 0)
        return NULL;
    if (need && !(g->page_sizes & need)) {
        g_set_error(err, TLB_ERROR, TLB_ERROR_GEOMETRY, "%s: %s", name,
                    need == PRESET_PG_4K
                        ? "must hold 4K pages; its page_sizes lacks 4K"
                        : "must hold large pages; its page_sizes lists neither 2M nor 4M");
        *ok = false;
        return NULL;
    }
    /* Each array draws from its own stream so that adding an array does
     * not change another's random victims. */
    Tlb *t = tlb_new(name, g, pol, tlb_splitmix64(seed), err);
    if (!t) {
        *ok = false;
        return NULL;
    }
    h->arrays[h->narrays++] = t;
    return t;
}

static void side_wire(Side *sd)
{
    if (sd->small && tlb_holds(sd->small, TLB_PAGE_4K))
        sd->for_size[TLB_PAGE_4K] = sd->small;
    /* Each large size goes to the separate large array if it holds it,
     * else to the 4 KiB array if that does (the P4's), else nowhere (not
     * cached: tlb.h). */
    for (unsigned z = TLB_PAGE_2M; z <= TLB_PAGE_4M; z++) {
        if (sd->large && tlb_holds(sd->large, (TlbPageSize)z))
            sd->for_size[z] = sd->large;
        else if (sd->small && tlb_holds(sd->small, (TlbPageSize)z))
            sd->for_size[z] = sd->small;
    }
}

TlbHierarchy *tlb_hier_new_config(const TlbHierConfig *c, uint64_t seed,
                                  GError **err)
{
    const TlbPolicy *pol = tlb_policy_find(c->policy ? c->policy : "lru", err);
    if (!pol)
        return NULL;
    TlbHierarchy *h = g_new0(TlbHierarchy, 1);
    h->self = &h->stats;
    bool ok = true;
    uint64_t s = seed;
    Side *i = &h->side[SIDE_INSN], *d = &h->side[SIDE_DATA];
    i->small = add_array(h, "itlb_4k", &c->itlb_4k, pol, &s, PRESET_PG_4K, err, &ok);
    i->large = add_array(h, "itlb_large", &c->itlb_large, pol, &s, LARGE_SIZES, err, &ok);
    d->small = add_array(h, "dtlb_4k", &c->dtlb_4k, pol, &s, PRESET_PG_4K, err, &ok);
    d->large = add_array(h, "dtlb_large", &c->dtlb_large, pol, &s, LARGE_SIZES, err, &ok);
    h->stlb = add_array(h, "stlb", &c->stlb, pol, &s, 0, err, &ok);
    if (!ok) {
        tlb_hier_free(h);
        return NULL;
    }
    /* add_array made each small array hold 4 KiB pages, which tlb_new
     * lists first: tlb_hier_hit_fast probes it as such (tlb_hit_fast_4k). */
    g_assert(!i->small || i->small->sizes[0] == TLB_PAGE_4K);
    g_assert(!d->small || d->small->sizes[0] == TLB_PAGE_4K);
    side_wire(i);
    side_wire(d);
    h->stlb_for[SIDE_DATA] = h->stlb;
    h->stlb_for[SIDE_INSN] = c->stlb_data_only ? NULL : h->stlb;
    for (unsigned k = 0; k < 2; k++) {
        Side *sd = &h->side[k];
        for (unsigned z = 0; z < TLB_NPAGESIZES; z++)
            if (h->stlb_for[k] && tlb_holds(h->stlb_for[k], (TlbPageSize)z))
                sd->stlb_for_size[z] = h->stlb_for[k];
        sd->only_small = sd->small && !sd->large && !h->stlb_for[k];
    }
    h->stlb_latency = h->stlb ? c->stlb.hit_latency : 0;
    h->pde_entries = c->pde_cache_entries;
    if (h->pde_entries)
        h->pde = pde_cache_new(h->pde_entries);
    for (unsigned k = 0; k < 2; k++)
        h->side[k].only_array = h->side[k].only_small && !h->pde && h->side[k].small->hit_inline
                              ? h->side[k].small : NULL;
    return h;
}

unsigned tlb_hier_token_latency(const TlbHierarchy *h, bool exec)
{
    const Tlb *t = h->side[exec].small;
    return t ? t->geom.hit_latency : 0;
}

Tlb *tlb_hier_only_array(const TlbHierarchy *h, bool exec)
{
    return h->side[exec].only_array;
}

/* The clock a token of t records with (tlb_token_make). */
static const uint64_t *token_clock(const Tlb *t)
{
    return t->stamps ? t->clock : &t->token_sink[1];
}

bool tlb_hier_insn_hits_apart(const TlbHierarchy *h)
{
    const Tlb *ti = h->side[SIDE_INSN].small, *td = h->side[SIDE_DATA].small;
    if (!ti)
        return true;
    if (ti == td || ti == h->side[SIDE_DATA].large || ti == h->stlb_for[SIDE_DATA])
        return false;
    return !td || token_clock(ti) != token_clock(td);
}

void tlb_hier_free(TlbHierarchy *h)
{
    if (!h)
        return;
    for (unsigned i = 0; i < h->narrays; i++)
        tlb_free(h->arrays[i]);
    pde_cache_free(h->pde);
    g_free(h);
}

/* ---- lookup and fill ------------------------------------------------- */

/* tlb_hier_lookup for everything but a first-level hit on the fast path
 * (tlb_hit_fast changed nothing, so this starts from scratch): the 4 KiB
 * array in full, the large-page array, the STLB, the miss. Out of line so
 * that the hit path needs no register saves for it. */
static G_GNUC_NO_INLINE TlbResult lookup_rest_full(TlbHierarchy *h, uint32_t lin, Access access,
                                  int cpl, uint16_t pcid, TlbEntry *out,
                                  unsigned *extra_cycles)
{
    unsigned side = access == ACCESS_EXEC;
    Side *sd = &h->side[side];
    unsigned p = TLB_PRIV(cpl);
    const TlbEntry *e = NULL;
    TlbResult r = TLB_MISS;
    Tlb *t = sd->small;

    if (t)
        r = tlb_lookup_slow(t, lin, pcid, access, cpl, &e);
    if (r == TLB_MISS && sd->large) {
        t = sd->large;
        r = tlb_lookup_inline(t, lin, pcid, access, cpl, &e);
    }
    if (r == TLB_HIT) {
        h->own_hits[access][p]++;
        *out = *e;
        *extra_cycles = t->geom.hit_latency;
        return TLB_HIT;
    }
    *extra_cycles = 0;
    if (r == TLB_MISS && h->stlb_for[side]) {
        *extra_cycles = h->stlb_latency;
        r = tlb_lookup_inline(h->stlb_for[side], lin, pcid, access, cpl, &e);
        if (r == TLB_HIT) {
            *out = *e;     /* copy first: the refill may not keep e valid */
            Tlb *l1 = sd->for_size[out->page_size];
            if (l1)
                tlb_fill_counted(l1, out, access, cpl, NULL, &h->stats.evictions);
            h->own_hits[access][p]++;
            h->stats.stlb_hits[access][p]++;
            return TLB_HIT_STLB;
        }
    }
    h->stats.misses[access][p]++;
    if (r == TLB_MISS_DIRTY)
        h->stats.dirty_walks[access][p]++;
    return r;
}

TlbResult tlb_hier_lookup_rest(TlbHierarchy *h, uint32_t lin, Access access,
                               int cpl, uint16_t pcid, TlbEntry *out,
                               unsigned *extra_cycles)
{
    const Side *sd = &h->side[access == ACCESS_EXEC];
    Tlb *t = sd->small;
    /* The side's one array, which tlb_hit_fast just found without the
     * page under this PCID in any size (t->missed, see tlb_lookup_slow):
     * lookup_rest_full would count the lookup and the miss in the array
     * and the hierarchy, find no other array to ask, and return TLB_MISS
     * with no extra cycles, leaving *out alone. Counted here without the
     * call. */
    if (sd->only_small &&
        t->missed == (t->key_base[0] | ((uint64_t)(lin >> t->shifts[0]) << KEY_VPN_SHIFT) | pcid)) {
        tlb_hier_count_miss(h, t, access, cpl);
        *extra_cycles = 0;
        return TLB_MISS;
    }
    return lookup_rest_full(h, lin, access, cpl, pcid, out, extra_cycles);
}

TlbResult tlb_hier_lookup(TlbHierarchy *h, uint32_t lin, Access access,
                          int cpl, uint16_t pcid, TlbEntry *out,
                          unsigned *extra_cycles)
{
    const TlbEntry *e = tlb_hier_hit_fast(h, lin, access, cpl, pcid, extra_cycles);
    if (G_LIKELY(e)) {
        *out = *e;
        return TLB_HIT;
    }
    return tlb_hier_lookup_rest(h, lin, access, cpl, pcid, out, extra_cycles);
}

/* tlb_hier_fill where an STLB backs the side for the entry's size: the
 * STLB first (the arrays are independent), then the first-level array,
 * whose entry is the result. Out of line so that the P4's fills (no
 * STLB) are a straight tail call. */
static G_GNUC_NO_INLINE const TlbEntry *fill_with_stlb(TlbHierarchy *h, const Side *sd,
                                                      Access access, int cpl,
                                                      const TlbEntry *e)
{
    tlb_fill_counted(sd->stlb_for_size[e->page_size], e, access, cpl, NULL,
                     &h->stats.evictions);
    Tlb *l1 = sd->for_size[e->page_size];
    if (!l1)
        return NULL;
    return tlb_fill_counted(l1, e, access, cpl, NULL, &h->stats.evictions);
}

const TlbEntry *tlb_hier_fill(TlbHierarchy *h, Access access, int cpl,
                              const TlbEntry *e)
{
    /* The caller's entry checked once; the arrays for_size and
     * stlb_for_size name hold its size (side_wire, tlb_hier_new_config). */
    tlb_check_entry(e);
    const Side *sd = &h->side[access == ACCESS_EXEC];
    h->stats.fills[access][TLB_PRIV(cpl)]++;
    if (sd->stlb_for_size[e->page_size])
        return fill_with_stlb(h, sd, access, cpl, e);
    Tlb *l1 = sd->for_size[e->page_size];
    if (!l1)
        return NULL;
    return tlb_fill_counted(l1, e, access, cpl, NULL, &h->stats.evictions);
}

void tlb_entry_from_walk(TlbEntry *e, uint32_t lin, const PaeWalk *w,
                         uint16_t pcid, bool pge)
{
    tlb_entry_from_walk_inline(e, lin, w, pcid, pge);
}

/* ---- flushes --------------------------------------------------------- */

static unsigned hier_flush(TlbHierarchy *h, TlbFlushCause cause, uint32_t lin,
                           uint16_t pcid)
{
    unsigned n = 0, pn = 0;
    for (unsigned i = 0; i < h->narrays; i++) {
        Tlb *t = h->arrays[i];
        switch (cause) {
        case TLB_FLUSH_INVLPG: n += tlb_invlpg(t, lin, pcid); break;
        case TLB_FLUSH_CR3:
        case TLB_FLUSH_PCID: n += tlb_flush_nonglobal(t, pcid, cause); break;
        case TLB_FLUSH_PGE: n += tlb_flush_all(t); break;
        }
    }
    /* Paging-structure caches hold no global entries: every cause but a
     * full flush removes exactly the current/named PCID's entries (INVLPG
     * too, regardless of address: SDM §4.10.4.1). */
    if (h->pde)
        pn = cause == TLB_FLUSH_PGE ? pde_cache_flush_all(h->pde)
                                    : pde_cache_flush_pcid(h->pde, pcid);
    h->stats.pde_dropped += pn;
    switch (cause) {
    case TLB_FLUSH_CR3: h->stats.flushes_cr3++; h->stats.dropped_cr3 += n; break;
    case TLB_FLUSH_INVLPG: h->stats.flushes_invlpg++; h->stats.dropped_invlpg += n; break;
    case TLB_FLUSH_PCID: h->stats.flushes_pcid++; h->stats.dropped_pcid += n; break;
    case TLB_FLUSH_PGE: h->stats.flushes_pge++; h->stats.dropped_pge += n; break;
    }
    return n;
}

unsigned tlb_hier_invlpg(TlbHierarchy *h, uint32_t lin, uint16_t pcid)
{
    return hier_flush(h, TLB_FLUSH_INVLPG, lin, pcid);
}

unsigned tlb_hier_flush_nonglobal(TlbHierarchy *h, uint16_t pcid)
{
    return hier_flush(h, TLB_FLUSH_CR3, 0, pcid);
}

unsigned tlb_hier_flush_pcid(TlbHierarchy *h, uint16_t pcid)
{
    return hier_flush(h, TLB_FLUSH_PCID, 0, pcid);
}

unsigned tlb_hier_flush_all(TlbHierarchy *h)
{
    return hier_flush(h, TLB_FLUSH_PGE, 0, 0);
}

/* ---- PDE cache ------------------------------------------------------- */

bool tlb_hier_pde_lookup(TlbHierarchy *h, uint32_t lin, uint16_t pcid,
                         uint64_t *pde, uint64_t *pde_pa)
{
    if (!h->pde)
        return false;
    h->stats.pde_lookups++;
    bool hit = pde_cache_lookup(h->pde, lin, pcid, pde, pde_pa);
    h->stats.pde_hits += hit;
    return hit;
}

void tlb_hier_pde_fill(TlbHierarchy *h, uint32_t lin, uint16_t pcid,
                       uint64_t pde, uint64_t pde_pa)
{
    if (!h->pde)
        return;
    /* Only a PDE that references a page table is cached (§4.10.3.1); a
     * 2 MiB PDE is a translation and belongs in the TLB. */
    g_assert((pde & PAE_P) && !(pde & PAE_PS));
    h->stats.pde_fills++;
    h->stats.pde_evictions += pde_cache_fill(h->pde, lin, pcid, pde, pde_pa);
}

unsigned tlb_hier_pde_entries(const TlbHierarchy *h) { return h->pde_entries; }

/* ---- statistics and inspection -------------------------------------- */

/* The derived counters (TlbHierarchy.stats in hier_priv.h): the hits
 * taken inline are each side's 4 KiB array's fast_hits, and every lookup
 * was a hit or a miss. */
const TlbStats *tlb_hier_stats(const TlbHierarchy *h)
{
    TlbStats *v = h->self;
    memcpy(v->hits, h->own_hits, sizeof v->hits);
    for (unsigned k = 0; k < 2; k++) {
        const Tlb *t = h->side[k].small;
        if (!t)
            continue;
        for (unsigned a = 0; a < TLB_NACCESS; a++)
            for (unsigned p = 0; p < 2; p++)
                v->hits[a][p] += t->fast_hits[2 * a + p];
    }
    for (unsigned a = 0; a < TLB_NACCESS; a++)
        for (unsigned p = 0; p < 2; p++)
            v->lookups[a][p] = v->hits[a][p] + v->misses[a][p];
    return v;
}
unsigned tlb_hier_array_count(const TlbHierarchy *h) { return h->narrays; }
const Tlb *tlb_hier_stlb(const TlbHierarchy *h) { return h->stlb; }

void tlb_hier_stats_reset(TlbHierarchy *h)
{
    memset(&h->stats, 0, sizeof h->stats);
    memset(h->own_hits, 0, sizeof h->own_hits);
    for (unsigned i = 0; i < h->narrays; i++)
        tlb_stats_reset(h->arrays[i]);
}

const Tlb *tlb_hier_array(const TlbHierarchy *h, unsigned i)
{
    g_assert(i < h->narrays);
    return h->arrays[i];
}

const Tlb *tlb_hier_l1(const TlbHierarchy *h, Access access, TlbPageSize s)
{
    g_assert(s < TLB_NPAGESIZES);
    return h->side[access == ACCESS_EXEC].for_size[s];
}

void tlb_hier_print_stats(const TlbHierarchy *h, FILE *out, bool skip_zero)
{
    const char *titles[6] = { "total" };
    const TlbStats *stats[6] = { tlb_hier_stats(h) };
    for (unsigned i = 0; i < h->narrays; i++) {
        titles[i + 1] = tlb_name(h->arrays[i]);
        stats[i + 1] = tlb_stats(h->arrays[i]);
    }
    tlb_stats_print_table(out, h->narrays + 1, titles, stats, skip_zero);
}

void tlb_hier_stats_to_json(const TlbHierarchy *h, JsonBuilder *b)
{
    json_builder_set_member_name(b, "total");
    json_builder_begin_object(b);
    tlb_stats_to_json(tlb_hier_stats(h), b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "arrays");
    json_builder_begin_object(b);
    for (unsigned i = 0; i < h->narrays; i++) {
        json_builder_set_member_name(b, tlb_name(h->arrays[i]));
        json_builder_begin_object(b);
        tlb_stats_to_json(tlb_stats(h->arrays[i]), b);
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
}
