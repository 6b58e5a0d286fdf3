/* Canonical snapshots and statistics arithmetic of a TLB hierarchy: see
 * tlb_state.h. Reads the private layouts (tlb_priv.h, hier_priv.h,
 * pde_cache_priv.h); changes nothing but statistics. */
#include "tlb/tlb_state.h"

#include <string.h>

#include "tlb/hier_priv.h"
#include "tlb/pde_cache_priv.h"
#include "tlb/stamp_rank.h"

G_STATIC_ASSERT(G_N_ELEMENTS(((TlbHierarchy *)0)->arrays) == TLB_STATE_MAX_ARRAYS);

/* ---- statistics ---- */

void tlb_stats_add_scaled(TlbStats *dst, const TlbStats *d, uint64_t times)
{
#define TLB_STAT_EVENT(f, n, desc)                      \
    for (int a = 0; a < TLB_NACCESS; a++)               \
        for (int p = 0; p < 2; p++)                     \
            dst->f[a][p] += times * d->f[a][p];
#define TLB_STAT_COUNT(f, n, desc) dst->f += times * d->f;
#include "tlb/tlb_stats.def"
#undef TLB_STAT_EVENT
#undef TLB_STAT_COUNT
}

void tlb_stats_diff(TlbStats *d, const TlbStats *a, const TlbStats *b)
{
#define TLB_STAT_EVENT(f, n, desc)                      \
    for (int x = 0; x < TLB_NACCESS; x++)               \
        for (int p = 0; p < 2; p++)                     \
            d->f[x][p] = a->f[x][p] - b->f[x][p];
#define TLB_STAT_COUNT(f, n, desc) d->f = a->f - b->f;
#include "tlb/tlb_stats.def"
#undef TLB_STAT_EVENT
#undef TLB_STAT_COUNT
}

bool tlb_stats_is_zero(const TlbStats *s)
{
    uint64_t any = 0;
#define TLB_STAT_EVENT(f, n, desc)                      \
    for (int a = 0; a < TLB_NACCESS; a++)               \
        for (int p = 0; p < 2; p++)                     \
            any |= s->f[a][p];
#define TLB_STAT_COUNT(f, n, desc) any |= s->f;
#include "tlb/tlb_stats.def"
#undef TLB_STAT_EVENT
#undef TLB_STAT_COUNT
    return any == 0;
}

void tlb_state_stats_get(const TlbHierarchy *h, TlbStatsAll *out)
{
    memset(out, 0, sizeof *out);
    out->hier = h->stats;
    out->narrays = h->narrays;
    for (unsigned i = 0; i < h->narrays; i++)
        out->array[i] = h->arrays[i]->stats;
}

void tlb_state_stats_diff(TlbStatsAll *d, const TlbStatsAll *after,
                          const TlbStatsAll *before)
{
    g_assert(after->narrays == before->narrays);
    memset(d, 0, sizeof *d);
    d->narrays = after->narrays;
    tlb_stats_diff(&d->hier, &after->hier, &before->hier);
    for (unsigned i = 0; i < d->narrays; i++)
        tlb_stats_diff(&d->array[i], &after->array[i], &before->array[i]);
}

void tlb_state_stats_add(TlbHierarchy *h, const TlbStatsAll *d, uint64_t times)
{
    g_assert(d->narrays == h->narrays);
    tlb_stats_add_scaled(&h->stats, &d->hier, times);
    for (unsigned i = 0; i < h->narrays; i++)
        tlb_stats_add_scaled(&h->arrays[i]->stats, &d->array[i], times);
}

/* ---- snapshots ---- */

bool tlb_state_comparable(const TlbHierarchy *h)
{
    for (unsigned i = 0; i < h->narrays; i++)
        if (!h->arrays[i]->policy->canon)
            return false;
    return true;
}

/* One slot as it goes into a snapshot: fixed layout, no padding left
 * uninitialised (the record is zeroed before it is filled). */
typedef struct {
    uint64_t key, mask, frame;
    uint32_t vpn;
    uint16_t pcid;
    uint8_t page_size, flags;
} SlotRecord;

enum { SLOT_RW = 1, SLOT_US = 2, SLOT_NX = 4, SLOT_DIRTY = 8, SLOT_GLOBAL = 16 };

static void append_array(const Tlb *t, GByteArray *out)
{
    size_t n = (size_t)t->sets * t->ways;
    guint at = out->len;                 /* sized once, filled in place */
    g_byte_array_set_size(out, (guint)(at + n * sizeof(SlotRecord)));
    for (size_t i = 0; i < n; i++) {
        SlotRecord r;
        memset(&r, 0, sizeof r);
        if (t->tag[i].key & KEY_VALID) {
            const TlbEntry *e = &t->ent[i];
            r.key = t->tag[i].key;
            r.mask = t->tag[i].mask;
            r.frame = e->frame;
            r.vpn = e->vpn;
            r.pcid = e->pcid;
            r.page_size = e->page_size;
            r.flags = (uint8_t)((e->rw ? SLOT_RW : 0) | (e->us ? SLOT_US : 0) |
                                (e->nx ? SLOT_NX : 0) | (e->dirty ? SLOT_DIRTY : 0) |
                                (e->global ? SLOT_GLOBAL : 0));
        }
        memcpy(out->data + at + i * sizeof r, &r, sizeof r);
    }
    t->policy->canon(t->pstate, t->sets, out);
}

/* Each slot's contents and its rank by (stamp, slot): the victim is the
 * first slot with the oldest stamp (pde_cache.c), and new stamps are
 * always the newest, so the ranks decide every future victim. */
static void append_pde(const PdeCache *c, GByteArray *out)
{
    uint64_t *stamp = g_new(uint64_t, c->n);
    uint16_t *buf = g_new(uint16_t, 3 * (size_t)c->n);
    unsigned *bounds = g_new(unsigned, c->n + 1);
    for (unsigned i = 0; i < c->n; i++)
        stamp[i] = c->slot[i].stamp;
    stamp_rank(stamp, c->n, buf, buf + c->n, buf + 2 * c->n, bounds);
    for (unsigned i = 0; i < c->n; i++) {
        const PdeSlot *s = &c->slot[i];
        uint64_t rec[4] = { 0, 0, 0, 0 };
        if (s->valid) {
            rec[0] = 1 | (uint64_t)s->pcid << 8 | (uint64_t)s->region << 24;
            rec[1] = s->pde;
            rec[2] = s->pde_pa;
        }
        rec[3] = buf[i];
        g_byte_array_append(out, (const guint8 *)rec, sizeof rec);
    }
    g_free(bounds);
    g_free(buf);
    g_free(stamp);
}

unsigned tlb_state_nparts(const TlbHierarchy *h)
{
    return h->narrays + (h->pde ? 1 : 0);
}

void tlb_state_append_part(const TlbHierarchy *h, unsigned i, GByteArray *out)
{
    g_assert(i < tlb_state_nparts(h) && tlb_state_comparable(h));
    if (i < h->narrays)
        append_array(h->arrays[i], out);
    else
        append_pde(h->pde, out);
}

bool tlb_state_part_moved(const TlbHierarchy *h, unsigned i, const TlbStatsAll *d)
{
    g_assert(i < tlb_state_nparts(h) && d->narrays == h->narrays);
    if (i < h->narrays)
        return !tlb_stats_is_zero(&d->array[i]);
    return d->hier.pde_lookups || d->hier.pde_fills || d->hier.pde_dropped;
}
