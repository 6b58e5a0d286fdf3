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
    out->hier = *tlb_hier_stats(h);
    out->narrays = h->narrays;
    for (unsigned i = 0; i < h->narrays; i++)
        out->array[i] = *tlb_stats(h->arrays[i]);
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
    /* Into the counts the statistics are derived from (lookups are not
     * counted; hits of any kind go to the counted hits). */
    tlb_stats_add_base(&h->stats, h->own_hits, &d->hier, times);
    for (unsigned i = 0; i < h->narrays; i++)
        tlb_stats_add_base(&h->arrays[i]->stats, h->arrays[i]->slow_hits, &d->array[i], times);
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

/* ---- loose comparison for a loop (tlb_state_part_equivalent) ----
 *
 * Why it is exact. Let X be the snapshot at the start of a cycle of the
 * loop (a block of its work from X returns to X) and Y the state now, and
 * suppose every part of the memory system is equal in X and Y or passes
 * this test (or the caches' like it, cache_state.h). Run the block from X
 * and from Y side by side. Claim: every reference gets the same answer
 * (hit or miss, the same entry, the same cost) in both runs, so every
 * later reference is the same too. Parts equal at the start get the same
 * updates and stay equal. In an array passing this test no lookup of the
 * block missed (d: lookups and hits only), so all its references are
 * hits and nothing is filled or evicted in it, in either run (by the
 * claim, inductively). Take a set S. The loop probes it only for its own
 * pages (spans, pcid); the slots of X_S it hit, H, are the |H| most
 * recent ones at the end of the block, which is X again (true LRU: a hit
 * makes a slot the newest, and nothing else moves the order). So H lies
 * within L, the run of the most recent slots of X_S that match the
 * loop's pages. Y_S holds L's entries in the same order and on top (in
 * any ways: the way matters only to a fill, and none happens); and
 * neither X_S nor Y_S holds any other entry matching the loop's pages. So
 * each probe of the block finds in Y_S exactly what it finds in X_S: the
 * same entry (at most one slot matches a probe, tlb_priv.h), or nothing
 * (an absent 4 KiB entry before a present 2 MiB one). After the block
 * Y_S's order is H in the order of the last hits (as in X_S: H is its
 * top), then the rest in the order before: that is Y_S itself, since H in
 * that order already tops Y_S. An array the block did not look up at all
 * is not reached (H empty): anything goes there. So the block counts in Y
 * what it counted in X and leaves Y as it found it, block after block:
 * skipping blocks from Y and leaving Y in place is exactly full
 * execution. The caches' sets work the same way (cache_state.h), each
 * set's ways in recency order. PLRU, FIFO and random
 * victims depend on more than this order (their state moves on hits or
 * on time), so they keep the byte-for-byte comparison. */

/* Every counter of d but lookups and hits is zero: no miss, fill,
 * eviction or flush. */
static bool only_hits(const TlbStats *d)
{
    TlbStats x = *d;
    memset(x.lookups, 0, sizeof x.lookups);
    memset(x.hits, 0, sizeof x.hits);
    return tlb_stats_is_zero(&x);
}

/* Whether a lookup of some page in spans under pcid can match slot r. */
static bool slot_matches(const SlotRecord *r, uint16_t pcid, const TlbSpan *spans,
                         size_t nspans)
{
    if (!(r->key & KEY_VALID) || ((r->key ^ pcid) & r->mask & KEY_PCID_MASK))
        return false;
    unsigned shift = tlb_page_shift((TlbPageSize)((r->key >> KEY_SIZE_SHIFT) & 3));
    uint64_t lo = ((r->key >> KEY_VPN_SHIFT) & 0xffffffffULL) << shift;
    uint64_t hi = lo + (1ULL << shift);
    for (size_t k = 0; k < nspans; k++)
        if (lo < spans[k].hi && spans[k].lo < hi)
            return true;
    return false;
}

/* One set: slots xs, ys with LRU ranks xr, yr (0 = the oldest); o is
 * scratch of 2 x ways. */
static bool set_equivalent(const SlotRecord *xs, const uint16_t *xr, const SlotRecord *ys,
                           const uint16_t *yr, unsigned ways, uint16_t pcid,
                           const TlbSpan *spans, size_t nspans, uint16_t *o)
{
    uint16_t *ox = o, *oy = o + ways;             /* slots, most recent first */
    for (unsigned w = 0; w < ways; w++) {
        ox[ways - 1 - xr[w]] = (uint16_t)w;
        oy[ways - 1 - yr[w]] = (uint16_t)w;
    }
    unsigned k = 0;
    while (k < ways && slot_matches(&xs[ox[k]], pcid, spans, nspans))
        k++;
    for (unsigned j = 0; j < k; j++)
        if (memcmp(&xs[ox[j]], &ys[oy[j]], sizeof *xs) != 0)
            return false;
    for (unsigned j = k; j < ways; j++)
        if (slot_matches(&xs[ox[j]], pcid, spans, nspans) ||
            slot_matches(&ys[oy[j]], pcid, spans, nspans))
            return false;
    return true;
}

bool tlb_state_part_equivalent(const TlbHierarchy *h, unsigned i, const TlbStats *d,
                               uint16_t pcid, const TlbSpan *spans, size_t nspans,
                               const GByteArray *start, const GByteArray *now)
{
    g_assert(i < tlb_state_nparts(h));
    if (i >= h->narrays)                          /* the PDE cache: exact only */
        return false;
    const Tlb *t = h->arrays[i];
    size_t ways = t->ways, n = (size_t)t->sets * ways;
    size_t len = n * (sizeof(SlotRecord) + sizeof(uint16_t));   /* append_array, lru_canon */
    if (!t->policy->victim_by_recency || !only_hits(d) || start->len != len || now->len != len)
        return false;
    TlbStats none;
    memset(&none, 0, sizeof none);
    if (!memcmp(d->lookups, none.lookups, sizeof none.lookups))
        return true;                              /* not reached by the loop */
    SlotRecord *xs = g_new(SlotRecord, 2 * ways), *ys = xs + ways;
    uint16_t *xr = g_new(uint16_t, 4 * ways), *yr = xr + ways, *o = xr + 2 * ways;
    bool ok = true;
    size_t rank_at = n * sizeof(SlotRecord);
    for (size_t set = 0; ok && set < t->sets; set++) {
        size_t sa = set * ways * sizeof(SlotRecord), ra = rank_at + set * ways * sizeof(uint16_t);
        size_t sl = ways * sizeof(SlotRecord), rl = ways * sizeof(uint16_t);
        if (!memcmp(start->data + sa, now->data + sa, sl) &&
            !memcmp(start->data + ra, now->data + ra, rl))
            continue;
        memcpy(xs, start->data + sa, sl);     /* aligned copies */
        memcpy(ys, now->data + sa, sl);
        memcpy(xr, start->data + ra, rl);
        memcpy(yr, now->data + ra, rl);
        ok = set_equivalent(xs, xr, ys, yr, (unsigned)ways, pcid, spans, nspans, o);
    }
    g_free(xr);
    g_free(xs);
    return ok;
}

bool tlb_state_part_moved(const TlbHierarchy *h, unsigned i, const TlbStatsAll *d)
{
    g_assert(i < tlb_state_nparts(h) && d->narrays == h->narrays);
    if (i < h->narrays)
        return !tlb_stats_is_zero(&d->array[i]);
    return d->hier.pde_lookups || d->hier.pde_fills || d->hier.pde_dropped;
}
