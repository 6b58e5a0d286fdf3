/* True LRU: every hit and fill stamps the way with a per-array clock; the
 * victim is the way of the set with the oldest stamp. The hit path is one
 * store, done inline by the array (lru_stamps).
 *
 * The victim search: a set of at most LRU_SCAN ways is scanned. A larger
 * one (the P4's 64-way DTLB, where a scan on every miss was most of the
 * simulator's time) keeps an order: a ring of records (way, stamp) in
 * ascending stamp order (the way held as the address of its stamp, which
 * is what a record's test reads), and a watermark W on the clock, such
 * that
 *
 *   (I1) every record's stamp is <= W, and
 *   (I2) every way whose stamp now is <= W has a record with that stamp
 *        (a "live" record; a record whose way has been stamped since is
 *        dead and is skipped).
 *
 * A way whose stamp is > W was stamped after W, so it is newer than every
 * record (I1); by I2 every other way is recorded live. So the first live
 * record is the oldest way of the set; and if no record is live, every
 * way has been stamped since W and the order is rebuilt from the stamps
 * (W = now). Stamps only grow and each tick goes to one way, so hits,
 * which only stamp (inline, never seen here), keep I1 and I2: the way hit
 * gets a stamp > W and its record dies.
 *
 * Keeping W current, which lets the victim be recorded, O(1), instead of
 * the order being rebuilt once the records run out:
 *  - tlb_fill stamps the way victim() returns with the very next tick
 *    (tlb.c; nothing else runs in between). So when W was the clock at
 *    the take, the victim v is, right after its fill, the one way
 *    stamped after W: its record is due (Order.due points at its stamp).
 *  - At the next request, if v's stamp is the clock and at most two
 *    ticks have passed since W (v's fill, and possibly a hit right after
 *    it, as a load-then-store makes, which then went to v too), v is
 *    appended with its stamp (the largest, so the order holds) and W
 *    moves to the clock.
 *  Otherwise W stays behind and the records are used up before a rebuild
 *  (a rebuild per at most `ways` victims, as with any partial order).
 * A streaming pattern thus never rebuilds; the victims are exactly those of
 * a full scan in every case (tests/tlb/test_model.c).
 *
 * The state and the common victim (a live head) are in lru_priv.h, so
 * that the array's fill (tlb.c fill_evicting_lru) runs that same code
 * inline instead of through the victim pointer. */
#include "tlb/policy.h"

#include <stdlib.h>
#include <string.h>

#include "tlb/lru_priv.h"
#include "tlb/stamp_rank.h"

static void *lru_create(unsigned sets, unsigned ways, uint64_t seed)
{
    (void)seed;
    Lru *s = g_malloc0(sizeof(Lru) + (size_t)sets * ways * sizeof(uint64_t));
    s->ways = ways;
    if (ways > LRU_SCAN) {
        unsigned ring = 1;
        while (ring < ways)
            ring *= 2;
        s->ring_mask = ring - 1;
        s->ord = sets == 1 ? &s->one : g_new0(Order, sets);
        for (unsigned i = 0; i < sets; i++)
            s->ord[i].due = &s->none;
        s->rec = g_new0(Rec, (size_t)sets * ring);
        s->scratch = g_new(uint16_t, 3 * (size_t)ways);
        s->bounds = g_new(unsigned, ways + 1);
    }
    return s;
}

static void lru_destroy(void *state)
{
    Lru *s = state;
    if (s->ord != &s->one)
        g_free(s->ord);
    g_free(s->rec);
    g_free(s->scratch);
    g_free(s->bounds);
    g_free(s);
}

static void lru_touch(void *state, unsigned set, unsigned way)
{
    Lru *s = state;
    s->stamp[set * s->ways + way] = ++s->clock;
}

static uint64_t *lru_stamps(void *state, uint64_t **clock)
{
    Lru *s = state;
    *clock = &s->clock;
    return s->stamp;
}

/* Every way of the set recorded in stamp order, W = the clock: I1 and I2
 * hold trivially (stamps never exceed the clock). Out of line: rare, and
 * its registers would otherwise be saved on every request. */
static G_GNUC_NO_INLINE void order_rebuild(Lru *s, Order *o, Rec *rec, const uint64_t *st)
{
    unsigned n = s->ways;
    uint16_t *rank = s->scratch;
    stamp_rank(st, n, rank, rank + n, rank + 2 * n, s->bounds);
    for (unsigned w = 0; w < n; w++)
        rec[rank[w]] = (Rec){ st[w], &st[w] };
    o->head = 0;
    o->tail = n;
    o->w = s->clock;                 /* the take that follows sets due */
}

/* lru_victim_ordered when the head record is dead or there is none
 * (lru_priv.h): dead records skipped, the order rebuilt when they run
 * out. */
unsigned lru_order_search(Lru *s, unsigned set)
{
    SET_ORDER(s, set, o, rec, st);
    for (;;) {
        if (o->head == o->tail) {
            order_rebuild(s, o, rec, st);
            continue;
        }
        const Rec *r = &rec[o->head & s->ring_mask];
        if (*r->at == r->stamp)
            return lru_order_take(s, o, rec, st);
        o->head++;                   /* a dead record */
    }
}

static unsigned lru_victim(void *state, unsigned set)
{
    Lru *s = state;
    if (s->ord)
        return lru_victim_ordered(s, set);
    const uint64_t *st = &s->stamp[set * s->ways];
    unsigned v = 0;
    for (unsigned w = 1; w < s->ways; w++)
        if (st[w] < st[v])
            v = w;
    return v;
}

/* Canonical state (policy.h): per set, each way's rank by (stamp, way),
 * 0 = the victim. Victims depend on nothing else: new stamps are always
 * the newest, and the orders of large sets only speed the search up. */
static void lru_canon(const void *state, unsigned sets, GByteArray *out)
{
    const Lru *s = state;
    unsigned n = s->ways;
    uint16_t *buf = g_new(uint16_t, 3 * (size_t)n);
    unsigned *bounds = g_new(unsigned, n + 1);
    guint at = out->len;
    g_byte_array_set_size(out, at + (guint)((size_t)sets * n * sizeof(uint16_t)));
    for (unsigned set = 0; set < sets; set++) {
        stamp_rank(&s->stamp[(size_t)set * n], n, buf, buf + n, buf + 2 * n, bounds);
        memcpy(out->data + at + (size_t)set * n * sizeof(uint16_t), buf, n * sizeof(uint16_t));
    }
    g_free(bounds);
    g_free(buf);
}

/* The state, if its victims come from ordered records (ways > LRU_SCAN). */
static Lru *lru_ordered(void *state)
{
    Lru *s = state;
    return s->ord ? s : NULL;
}

const TlbPolicy tlb_policy_lru = {
    .name = "lru",
    .description = "true least-recently-used (per-way timestamps)",
    .check = NULL,
    .create = lru_create,
    .destroy = lru_destroy,
    .touch = lru_touch,
    .stamps = lru_stamps,
    .insert = lru_touch,
    .victim = lru_victim,
    .canon = lru_canon,
    .ordered_lru = lru_ordered,
    .victim_by_recency = true,
};
