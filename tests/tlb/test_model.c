/* The host-speed shortcut must not change the model. A naive TLB written
 * here from the rules in tlb.h (linear scan of the set, LRU or FIFO by
 * stamps, lowest invalid way first, refresh in place, SDM flush rules) runs
 * the same random operations as the real array, whose hash index and
 * tag/mask compare are shortcuts: every lookup, fill and flush outcome and
 * the final counters must agree. */
#include "tlb_test.h"

#include "tlb/fill_priv.h"

typedef struct {
    bool valid, global, dirty;
    unsigned size;
    uint32_t vpn;
    uint16_t pcid;
    uint64_t stamp;
} RefEnt;

typedef struct {
    unsigned sets, ways;
    bool fifo;
    bool holds[3];               /* [size]: 4 KiB, 2 MiB, 4 MiB */
    uint64_t clock;
    RefEnt *e;
    uint64_t lookups, hits, misses, dirty, fills, evictions, dropped;
} Ref;

/* Page shift of each size (tlb.h: 4 KiB, 2 MiB, 4 MiB). */
static const unsigned ref_shift[3] = { 12, 21, 22 };

static bool ref_match(const RefEnt *x, unsigned size, uint32_t vpn, uint16_t pcid)
{
    return x->valid && x->size == size && x->vpn == vpn && (x->global || x->pcid == pcid);
}

/* Returns 0 miss, 1 dirty miss, 2 hit; *idx the entry. */
static int ref_lookup(Ref *r, uint32_t lin, uint16_t pcid, Access a, int *idx)
{
    r->lookups++;
    for (unsigned size = 0; size < 3; size++) {
        if (!r->holds[size])
            continue;
        uint32_t vpn = lin >> ref_shift[size];
        unsigned set = vpn % r->sets;
        for (unsigned w = 0; w < r->ways; w++) {
            RefEnt *x = &r->e[set * r->ways + w];
            if (!ref_match(x, size, vpn, pcid))
                continue;
            *idx = (int)(set * r->ways + w);
            if (a == ACCESS_WRITE && !x->dirty) {
                r->misses++;
                r->dirty++;
                return 1;
            }
            r->hits++;
            if (!r->fifo)
                x->stamp = ++r->clock;
            return 2;
        }
    }
    r->misses++;
    return 0;
}

static TlbFillInfo ref_fill(Ref *r, const TlbEntry *n)
{
    TlbFillInfo fi = { 0 };
    unsigned set = n->vpn % r->sets;
    int slot = -1;
    fi.set = set;
    for (unsigned w = 0; w < r->ways; w++) {
        RefEnt *x = &r->e[set * r->ways + w];
        bool dup = x->valid && x->size == n->page_size && x->vpn == n->vpn &&
                   (x->pcid == n->pcid || x->global || n->global);
        if (!dup)
            continue;
        if (slot < 0) {
            slot = (int)w;
            fi.refreshed = true;
        } else {
            x->valid = false;
            fi.superseded++;
        }
    }
    for (unsigned w = 0; w < r->ways && slot < 0; w++)
        if (!r->e[set * r->ways + w].valid)
            slot = (int)w;
    if (slot < 0) {
        slot = 0;
        for (unsigned w = 1; w < r->ways; w++)
            if (r->e[set * r->ways + w].stamp < r->e[set * r->ways + slot].stamp)
                slot = (int)w;
        fi.evicted = true;
    }
    fi.way = (unsigned)slot;
    r->e[set * r->ways + slot] = (RefEnt){ true, n->global, n->dirty, n->page_size,
                                           n->vpn, n->pcid, ++r->clock };
    r->fills++;
    r->evictions += fi.evicted + fi.superseded;
    return fi;
}

/* kind: 0 CR3/PCID (non-global of pcid), 1 INVLPG, 2 everything. */
static unsigned ref_flush(Ref *r, int kind, uint32_t lin, uint16_t pcid)
{
    unsigned n = 0;
    for (unsigned i = 0; i < r->sets * r->ways; i++) {
        RefEnt *x = &r->e[i];
        bool go = false;
        if (!x->valid)
            continue;
        if (kind == 0)
            go = !x->global && x->pcid == pcid;
        else if (kind == 1)
            go = ref_match(x, x->size, lin >> ref_shift[x->size], pcid) && r->holds[x->size];
        else
            go = true;
        if (go) {
            x->valid = false;
            n++;
        }
    }
    r->dropped += n;
    return n;
}

/* Fill e into the array and the model and compare where it went. With
 * info, as reported; without (how the hierarchy fills, and the array's
 * shortest path), the entry read back from the model's set and way, and
 * the evictions left to the final counters. */
static void check_fill(Tlb *t, Ref *r, const TlbEntry *e, Access a, bool with_info)
{
    TlbFillInfo got, want = ref_fill(r, e);
    if (with_info) {
        tlb_fill(t, e, a, 3, &got);
        ck_assert_uint_eq(got.set, want.set);
        ck_assert_uint_eq(got.way, want.way);
        ck_assert_int_eq(got.evicted, want.evicted);
        ck_assert_int_eq(got.refreshed, want.refreshed);
        ck_assert_uint_eq(got.superseded, want.superseded);
        return;
    }
    const TlbEntry *n = tlb_fill(t, e, a, 3, NULL);
    ck_assert(n->vpn == e->vpn && n->pcid == e->pcid && n->page_size == e->page_size &&
              n->global == e->global && n->frame == e->frame);
    TlbEntry at;
    ck_assert(tlb_entry_at(t, want.set, want.way, &at));
    ck_assert(at.vpn == e->vpn && at.pcid == e->pcid && at.page_size == e->page_size &&
              at.global == e->global && at.frame == e->frame);
}

static void run_differential(unsigned entries, unsigned ways, const char *policy,
                             uint64_t seed)
{
    /* Every size at once: 32-bit paging's 4 MiB pages beside PAE's 2 MiB
     * (a real array holds only one of them at a time, as CR4.PAE changes
     * flush everything, but the array itself must keep them apart). */
    Tlb *t = new_tlb(entries, ways, PG_4K2M | PRESET_PG_4M, policy, 1);
    Ref r = { .sets = entries / ways, .ways = ways, .fifo = strcmp(policy, "fifo") == 0,
              .holds = { true, true, true } };
    r.e = g_new0(RefEnt, entries);
    uint64_t rng = seed, dropped = 0;
    for (int step = 0; step < 12000; step++) {
        uint64_t x = tlb_splitmix64(&rng);
        bool big = x % 11 == 0, huge = big && (x >> 60) % 2;   /* 2 or 4 MiB */
        /* Page pools small enough to collide in sets and hash buckets. */
        uint32_t lin = big ? ((uint32_t)((x >> 8) % 6) << 21) | ((uint32_t)(x >> 40) & 0x1FFFFF)
                           : ((uint32_t)((x >> 8) % (entries * 3)) * 0x1000u * 3) |
                                 ((uint32_t)(x >> 40) & 0xFFF);
        uint16_t pcid = (x >> 20) % 3;
        Access a = (Access)((x >> 24) % 3);
        unsigned op = (x >> 28) % 100;   /* 55% lookups, 39% fills, 6% flushes */
        if (op < 55) {
            const TlbEntry *e = NULL;
            int idx = -1;
            TlbResult got = tlb_lookup(t, lin, pcid, a, 3, &e);
            int want = ref_lookup(&r, lin, pcid, a, &idx);
            ck_assert_int_eq(got == TLB_HIT ? 2 : got == TLB_MISS_DIRTY ? 1 : 0, want);
            if (want) {
                ck_assert_uint_eq(e->vpn, r.e[idx].vpn);
                ck_assert_uint_eq(e->pcid, r.e[idx].pcid);
                ck_assert_uint_eq(e->page_size, r.e[idx].size);
            }
        } else if (op < 94) {
            uint32_t flin = lin & (huge ? ~0x3FFFFFu : big ? ~0x1FFFFFu : ~0xFFFu);
            TlbEntry e = huge  ? ent_4m(flin, pcid, (x >> 32) % 6 == 0)
                         : big ? ent_2m(flin, pcid, (x >> 32) % 6 == 0)
                               : ent_4k(flin, pcid, (x >> 32) % 6 == 0);
            e.dirty = (x >> 36) % 3 != 0;
            if ((x >> 52) % 2) {
                /* First a lookup of the page, as the MMU's miss path
                 * makes: a miss lets the fill skip the duplicate search. */
                const TlbEntry *le = NULL;
                int idx;
                TlbResult lr = tlb_lookup(t, flin, pcid, a, 3, &le);
                ck_assert_int_eq(lr == TLB_HIT ? 2 : lr == TLB_MISS_DIRTY ? 1 : 0,
                                 ref_lookup(&r, flin, pcid, a, &idx));
            }
            check_fill(t, &r, &e, a, (x >> 53) % 2);
        } else {
            unsigned got, want;
            /* Mostly INVLPG (it must find globals of any PCID and 2 MiB
             * pages), some CR3/PCID flushes, rare full flushes. */
            unsigned kind = (x >> 44) % 20;
            if (kind < 12) {
                got = tlb_invlpg(t, lin, pcid);
                want = ref_flush(&r, 1, lin, pcid);
            } else if (kind < 16) {
                got = tlb_flush_nonglobal(t, pcid, TLB_FLUSH_CR3);
                want = ref_flush(&r, 0, 0, pcid);
            } else if (kind < 19) {
                got = tlb_flush_nonglobal(t, pcid, TLB_FLUSH_PCID);
                want = ref_flush(&r, 0, 0, pcid);
            } else {
                got = tlb_flush_all(t);
                want = ref_flush(&r, 2, 0, 0);
            }
            ck_assert_uint_eq(got, want);
            dropped += got;
        }
    }
    const TlbStats *s = tlb_stats(t);
    uint64_t v;
    tlb_stats_get(s, "lookups", &v); ck_assert_uint_eq(v, r.lookups);
    tlb_stats_get(s, "hits", &v); ck_assert_uint_eq(v, r.hits);
    tlb_stats_get(s, "misses", &v); ck_assert_uint_eq(v, r.misses);
    tlb_stats_get(s, "dirty_walks", &v); ck_assert_uint_eq(v, r.dirty);
    tlb_stats_get(s, "fills", &v); ck_assert_uint_eq(v, r.fills);
    ck_assert_uint_eq(s->evictions, r.evictions);
    ck_assert_uint_eq(dropped, r.dropped);
    ck_assert_uint_gt(r.evictions, 100);    /* the run did exercise replacement */
    ck_assert_uint_gt(r.hits, 500);
    ck_assert_uint_gt(r.dropped, 200);
    g_free(r.e);
    tlb_free(t);
}

/* A stream through large LRU sets, the pattern whose victims the LRU
 * order (policy_lru.c) appends without rebuilding: each step looks up the
 * next page of a pool three times the array (a miss), fills it and mostly
 * looks it up once more (a load then a store). Sometimes it looks it up
 * twice more, looks up an older page, fills a page twice, or flushes one
 * page or everything: each of these costs the order its watermark at a
 * different point. Every victim and the counters against the naive model
 * (the real array must do what a scan of the stamps does). */
static void run_stream(unsigned entries, unsigned ways, uint64_t seed)
{
    Tlb *t = new_tlb(entries, ways, PG_4K2M, "lru", 1);
    Ref r = { .sets = entries / ways, .ways = ways, .holds = { true, true } };
    r.e = g_new0(RefEnt, entries);
    uint64_t rng = seed, dropped = 0;
    unsigned pool = entries * 3, next = 0;
    for (int step = 0; step < 6000; step++) {
        uint64_t x = tlb_splitmix64(&rng);
        unsigned op = x % 1000;          /* in thousandths */
        uint32_t lin = (next++ % pool) * 0x1000u;
        int idx;
        const TlbEntry *e = NULL;
        Access a = ACCESS_READ;
        TlbResult got = tlb_lookup(t, lin, 0, a, 3, &e);
        ck_assert_int_eq(got == TLB_HIT ? 2 : got == TLB_MISS_DIRTY ? 1 : 0,
                         ref_lookup(&r, lin, 0, a, &idx));
        TlbEntry n = ent_4k(lin, 0, false);
        n.dirty = true;
        check_fill(t, &r, &n, a, step % 2);
        if (op < 10)                         /* the same page filled again */
            check_fill(t, &r, &n, a, step % 4 < 2);
        unsigned again = op < 900 ? 1 : op < 930 ? 2 : op < 960 ? 0 : 1;
        for (unsigned k = 0; k < again + (op >= 960 && op < 990); k++) {
            /* op 960..989: then an older page */
            uint32_t l = k == again ? ((next + pool - 1 - (x >> 8) % entries) % pool) * 0x1000u
                                    : lin;
            Access w = ACCESS_WRITE;
            got = tlb_lookup(t, l, 0, w, 3, &e);
            ck_assert_int_eq(got == TLB_HIT ? 2 : got == TLB_MISS_DIRTY ? 1 : 0,
                             ref_lookup(&r, l, 0, w, &idx));
        }
        if (op >= 990 && op < 998) {
            dropped += tlb_invlpg(t, ((x >> 16) % pool) * 0x1000u, 0);
            ref_flush(&r, 1, ((x >> 16) % pool) * 0x1000u, 0);
        } else if (op >= 998) {
            dropped += tlb_flush_all(t);
            ref_flush(&r, 2, 0, 0);
        }
    }
    const TlbStats *s = tlb_stats(t);
    uint64_t v;
    tlb_stats_get(s, "hits", &v); ck_assert_uint_eq(v, r.hits);
    tlb_stats_get(s, "misses", &v); ck_assert_uint_eq(v, r.misses);
    ck_assert_uint_eq(s->evictions, r.evictions);
    ck_assert_uint_eq(dropped, r.dropped);
    ck_assert_uint_gt(r.evictions, 2000);
    ck_assert_uint_gt(r.hits, 1000);
    g_free(r.e);
    tlb_free(t);
}

/* CR3/PCID flushes keep the hash index by unlinking each dropped entry,
 * or rebuild it when a flush drops most of the array (tlb.c). Rounds of
 * fills in which PCID 0 owns from none to all of the array (a few global
 * entries besides), each ended by a CR3 flush of PCID 0: the count, then a
 * lookup of every page of the pool under both PCIDs, must agree with the
 * naive model, and the next round's fills evict the survivors (an entry
 * left off its chain, or a dropped one left on it, breaks lookups or the
 * unlink of a later eviction). Both regimes must have occurred: flushes
 * dropping at most half the valid entries (unlinked) and flushes dropping
 * more than 8 + half (rebuilt). */
static void run_flush_regimes(unsigned entries, unsigned ways, uint64_t seed)
{
    Tlb *t = new_tlb(entries, ways, PG_4K2M, "lru", 1);
    Ref r = { .sets = entries / ways, .ways = ways, .holds = { true, true } };
    r.e = g_new0(RefEnt, entries);
    uint64_t rng = seed;
    unsigned pool = entries * 2, few = 0, most = 0;
    for (unsigned round = 0; round < 120; round++) {
        unsigned own = round % 9;    /* PCID 0 owns own/8 of the fills */
        for (unsigned k = 0; k < entries * 2; k++) {
            uint64_t x = tlb_splitmix64(&rng);
            uint32_t lin = (uint32_t)(x % pool) * 0x1000u;
            uint16_t pcid = (x >> 20) % 8 < own ? 0 : 1;
            TlbEntry e = ent_4k(lin, pcid, (x >> 32) % 40 == 0);
            check_fill(t, &r, &e, ACCESS_READ, k % 2);
        }
        unsigned before = tlb_valid_count(t);
        ck_assert_uint_eq(before, count_valid(t));
        unsigned want = ref_flush(&r, 0, 0, 0);
        ck_assert_uint_eq(tlb_flush_nonglobal(t, 0, TLB_FLUSH_CR3), want);
        ck_assert_uint_eq(tlb_valid_count(t), before - want);
        if (want > 0 && want <= before / 2)
            few++;
        if (want > 8 + before / 2)
            most++;
        for (unsigned pg = 0; pg < pool; pg++)
            for (uint16_t pcid = 0; pcid < 2; pcid++) {
                const TlbEntry *e = NULL;
                int idx;
                TlbResult got = tlb_lookup(t, pg * 0x1000u, pcid, ACCESS_READ, 3, &e);
                ck_assert_int_eq(got == TLB_HIT ? 2 : 0,
                                 ref_lookup(&r, pg * 0x1000u, pcid, ACCESS_READ, &idx));
            }
    }
    ck_assert_uint_gt(few, 5);
    ck_assert_uint_gt(most, 5);
    g_free(r.e);
    tlb_free(t);
}

START_TEST(fa64_flush_regimes) { run_flush_regimes(64, 64, 21); }
END_TEST

START_TEST(sa64x4_flush_regimes) { run_flush_regimes(64, 4, 22); }
END_TEST

START_TEST(fa128_flush_regimes) { run_flush_regimes(128, 128, 23); }
END_TEST

START_TEST(fa64_lru_stream) { run_stream(64, 64, 11); }
END_TEST
START_TEST(sa48x12_lru_stream) { run_stream(48, 12, 12); }
END_TEST

START_TEST(fa64_lru_hashed) { run_differential(64, 64, "lru", 1); }
END_TEST
START_TEST(sa64x4_lru_hashed) { run_differential(64, 4, "lru", 2); }
END_TEST
START_TEST(sa8x2_lru_scanned) { run_differential(8, 2, "lru", 7); }
END_TEST
START_TEST(sa32x16_lru_hashed_two_sets) { run_differential(32, 16, "lru", 3); }
END_TEST
START_TEST(sa48x12_lru_hashed_odd_ways) { run_differential(48, 12, "lru", 4); }
END_TEST
/* Set 5 of this one straddles a word of the valid bitmap (slots 60-71):
 * the lowest invalid way is searched across words. */
START_TEST(sa96x12_lru_set_across_words) { run_differential(96, 12, "lru", 8); }
END_TEST

START_TEST(fa8_fifo_scanned) { run_differential(8, 8, "fifo", 5); }
END_TEST
START_TEST(fa64_fifo_hashed) { run_differential(64, 64, "fifo", 6); }
END_TEST

/* The MMU's fused fill of a one-set LRU array (tlb_fill_fresh_lru1_slot,
 * fill_priv.h: the victim and the index inline, the entry written by the
 * caller) against a plain scan of stamps kept here: per slot its page and
 * the tick of its last use. Each step looks a page up as the MMU does
 * (tlb_hit_fast_4k); a miss is filled as the MMU fills it (the fused
 * fill when tlb_fill_fresh_evicts_lru1, else the free way's); a hit may
 * be followed by memo hits, which only write the stamp, n ticks at once
 * (`*stamp = *clock += n`, tlb_token_record in tlb_token.h). Now and then a page is
 * invalidated or the array flushed (free ways, refilled by the free-way
 * fill), a run of hits on old pages leaves the order no live record (a
 * rebuild), or another page is used between the last fill and a use of
 * its page (which must not make that page's record due). Every victim must be the slot with the oldest use. */
static void run_fused_lru1(unsigned ways, uint64_t seed)
{
    Tlb *t = new_tlb(ways, ways, PG_4K, "lru", 1);
    ck_assert_uint_eq(t->lru_single_set_ways, ways);
    uint32_t *page = g_new0(uint32_t, ways);     /* VPN + 1, 0: free */
    uint64_t *used = g_new0(uint64_t, ways), clock = 0, rng = seed;
    uint64_t also = 0, fused = 0, rebuilt = 0, late = 0;
    unsigned pool = ways * 3, next = 0;
    int last = -1;                               /* the slot filled last */
    for (int step = 0; step < 40000; step++) {
        uint64_t x = tlb_splitmix64(&rng);
        unsigned op = x % 1000;
        uint32_t vpn = op < 700 ? next++ % pool : (uint32_t)(x >> 10) % pool;
        if (op >= 990 && op < 999) {
            tlb_invlpg(t, vpn << 12, 0);
            for (unsigned w = 0; w < ways; w++)
                if (page[w] == vpn + 1)
                    page[w] = 0;
            continue;
        }
        if (op == 999) {
            tlb_flush_all(t);
            memset(page, 0, ways * sizeof(*page));
            continue;
        }
        if (op >= 900 && op < 910) {
            /* Every page held, used from the oldest: no record stays live. */
            for (unsigned w = 0; w < ways; w++)
                if (page[w])
                    ck_assert_ptr_nonnull(tlb_hit_fast_4k(t, (page[w] - 1) << 12, 0,
                                                          ACCESS_READ, 3, NULL));
            for (unsigned w = 0; w < ways; w++)
                if (page[w])
                    used[w] = ++clock;
            rebuilt++;
            continue;
        }
        if (op >= 910 && op < 940 && last >= 0 && page[last]) {
            /* Another page, then the one filled last (its stamp is the
             * clock again, but a tick since its fill went elsewhere). */
            unsigned q = (unsigned)(x >> 20) % ways;
            if (q != (unsigned)last && page[q]) {
                const uint32_t hit[2] = { page[q] - 1, page[last] - 1 };
                const unsigned who[2] = { q, (unsigned)last };
                for (int k = 0; k < 2; k++) {
                    ck_assert_ptr_nonnull(tlb_hit_fast_4k(t, hit[k] << 12, 0, ACCESS_READ, 3,
                                                          NULL));
                    used[who[k]] = ++clock;
                }
                late++;
            }
            continue;
        }
        bool missed = false;
        const TlbEntry *e = tlb_hit_fast_4k(t, vpn << 12, 0, ACCESS_READ, 3, &missed);
        int want = -1;
        for (unsigned w = 0; w < ways; w++)
            if (page[w] == vpn + 1)
                want = (int)w;
        if (e) {
            ck_assert_int_ge(want, 0);
            ck_assert_ptr_eq(e, &t->ent[want]);
            used[want] = ++clock;
        } else {
            ck_assert(missed);
            ck_assert_int_lt(want, 0);
            int slot;
            if (tlb_fill_fresh_evicts_lru1(t)) {
                unsigned v = 0;
                for (unsigned w = 1; w < ways; w++)
                    if (used[w] < used[v])
                        v = w;
                slot = (int)tlb_fill_fresh_lru1_slot(t, vpn, ACCESS_READ, 3, &also);
                ck_assert_int_eq(slot, (int)v);
                fused++;
            } else {
                slot = tlb_fill_fresh_4k_free_slot(t, vpn, ACCESS_READ, 3, &also);
                ck_assert_int_ge(slot, 0);
                ck_assert_uint_eq(page[slot], 0);
            }
            t->ent[slot] = ent_4k(vpn << 12, 0, false);
            page[slot] = vpn + 1;
            used[slot] = ++clock;
            want = slot;
            last = slot;
        }
        /* Memo hits: none (a miss then another page), one (a load then a
         * store) or a batch of n ticks. */
        unsigned n = op % 4 == 0 ? 0 : op % 4 == 1 ? 1 : 1 + (unsigned)(x >> 40) % 5;
        if (n) {
            TlbHitToken k;       /* as a memo of the hit records them */
            tlb_token_make(t, (unsigned)want, 0, &k);
            tlb_token_record(&k, ACCESS_READ, n);
            used[want] = clock += n;
        }
        ck_assert_uint_eq(*t->clock, clock);
    }
    ck_assert_uint_gt(fused, 10000);
    ck_assert_uint_gt(rebuilt, 100);
    ck_assert_uint_gt(late, 100);
    ck_assert_uint_eq(also, tlb_stats(t)->evictions);
    g_free(page);
    g_free(used);
    tlb_free(t);
}

START_TEST(fa64_fused_lru1) { run_fused_lru1(64, 31); }
END_TEST
/* Ways not a power of two: the ring has more records than ways. */
START_TEST(fa48_fused_lru1) { run_fused_lru1(48, 32); }
END_TEST

int main(void)
{
    Suite *s = suite_create("tlb");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, fa64_lru_hashed);
    tcase_add_test(tc, fa64_lru_stream);
    tcase_add_test(tc, sa48x12_lru_stream);
    tcase_add_test(tc, sa64x4_lru_hashed);
    tcase_add_test(tc, sa8x2_lru_scanned);
    tcase_add_test(tc, sa32x16_lru_hashed_two_sets);
    tcase_add_test(tc, sa48x12_lru_hashed_odd_ways);
    tcase_add_test(tc, sa96x12_lru_set_across_words);
    tcase_add_test(tc, fa8_fifo_scanned);
    tcase_add_test(tc, fa64_fifo_hashed);
    tcase_add_test(tc, fa64_flush_regimes);
    tcase_add_test(tc, sa64x4_flush_regimes);
    tcase_add_test(tc, fa128_flush_regimes);
    tcase_add_test(tc, fa64_fused_lru1);
    tcase_add_test(tc, fa48_fused_lru1);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
