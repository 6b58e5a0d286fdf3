/* Statistics invariants: hits + misses = lookups in every split; each
 * flush's dropped count equals the valid entries it removed (counted here
 * by visiting every slot); evictions and the valid count balance; the
 * text, CSV and JSON outputs carry the same list. */
#include "tlb_test.h"

#include "tlb/policy.h"          /* tlb_splitmix64 */
#include "tlb/tlb_state.h"

static uint64_t stat(const TlbStats *s, const char *name)
{
    uint64_t v = 0;
    ck_assert_msg(tlb_stats_get(s, name, &v), "no counter %s", name);
    return v;
}

static void check_split_invariants(const TlbStats *s)
{
    const char *events[] = { "lookups", "hits", "misses", "dirty_walks", "fills" };
    for (unsigned i = 0; i < G_N_ELEMENTS(events); i++) {
        char n[64];
        uint64_t total = stat(s, events[i]);
        uint64_t by_access = 0, by_priv = 0;
        const char *acc[] = { "_fetch", "_read", "_write" }, *priv[] = { "_user", "_kernel" };
        for (int a = 0; a < 3; a++) {
            g_snprintf(n, sizeof n, "%s%s", events[i], acc[a]);
            by_access += stat(s, n);
        }
        for (int p = 0; p < 2; p++) {
            g_snprintf(n, sizeof n, "%s%s", events[i], priv[p]);
            by_priv += stat(s, n);
        }
        ck_assert_uint_eq(by_access, total);
        ck_assert_uint_eq(by_priv, total);
    }
    const char *split[] = { "", "_fetch", "_read", "_write", "_user", "_kernel" };
    for (int i = 0; i < 6; i++) {
        char l[32], h[32], m[32];
        g_snprintf(l, sizeof l, "lookups%s", split[i]);
        g_snprintf(h, sizeof h, "hits%s", split[i]);
        g_snprintf(m, sizeof m, "misses%s", split[i]);
        ck_assert_uint_eq(stat(s, h) + stat(s, m), stat(s, l));
    }
}

/* A random but reproducible mix of operations on one array; every flush's
 * return and counter are compared with a slot count before and after. */
START_TEST(array_invariants)
{
    const struct { unsigned e, w; const char *pol; } g[] = {
        { 16, 4, "lru" }, { 64, 64, "lru" }, { 32, 8, "plru" },
        { 16, 16, "fifo" }, { 64, 4, "random" },
    };
    for (unsigned gi = 0; gi < G_N_ELEMENTS(g); gi++) {
        Tlb *t = new_tlb(g[gi].e, g[gi].w, PG_4K2M, g[gi].pol, 7);
        uint64_t rng = 99, dropped[4] = { 0 }, lookups = 0, evict = 0;
        unsigned fills = 0, refreshes = 0, flushes[4] = { 0 };
        for (int step = 0; step < 4000; step++) {
            uint64_t r = tlb_splitmix64(&rng);
            /* 48 pages of 4K and 4 of 2M, PCIDs 0-2, some global. */
            bool big = (r >> 8) % 13 == 0;
            uint32_t lin = big ? (uint32_t)((r >> 16) % 4) << 21 | 0x80000000u
                               : 0x08000000u + (uint32_t)((r >> 16) % 48) * 0x1000u;
            uint16_t pcid = (r >> 24) % 3;
            Access acc = (Access)((r >> 28) % 3);
            int cpl = (r >> 32) & 1 ? 3 : 0;
            unsigned op = (r >> 40) % 100, before = count_valid(t), n;
            if (op < 60) {
                const TlbEntry *e;
                tlb_lookup(t, lin, pcid, acc, cpl, &e);
                lookups++;
            } else if (op < 93) {
                TlbEntry e = big ? ent_2m(lin, pcid, (r >> 50) % 5 == 0)
                                 : ent_4k(lin, pcid, (r >> 50) % 5 == 0);
                e.dirty = (r >> 54) & 1;
                TlbFillInfo fi;
                tlb_fill(t, &e, acc, cpl, &fi);
                fills++;
                refreshes += fi.refreshed;
                evict += fi.evicted + fi.superseded;
                ck_assert_uint_eq(count_valid(t), before + 1 - fi.evicted - fi.refreshed -
                                                      fi.superseded);
            } else {
                int cause = op % 4;
                switch (cause) {
                case 0: n = tlb_flush_nonglobal(t, pcid, TLB_FLUSH_CR3); break;
                case 1: n = tlb_invlpg(t, lin, pcid); break;
                case 2: n = tlb_flush_nonglobal(t, pcid, TLB_FLUSH_PCID); break;
                default: n = tlb_flush_all(t); break;
                }
                ck_assert_uint_eq(n, before - count_valid(t));
                dropped[cause] += n;
                flushes[cause]++;
            }
            ck_assert_uint_eq(tlb_valid_count(t), count_valid(t));
        }
        const TlbStats *s = tlb_stats(t);
        check_split_invariants(s);
        ck_assert_uint_eq(stat(s, "lookups"), lookups);
        ck_assert_uint_eq(stat(s, "fills"), fills);
        ck_assert_uint_eq(s->evictions, evict);
        ck_assert_uint_gt(evict, 0);
        ck_assert_uint_eq(s->dropped_cr3, dropped[0]);
        ck_assert_uint_eq(s->dropped_invlpg, dropped[1]);
        ck_assert_uint_eq(s->dropped_pcid, dropped[2]);
        ck_assert_uint_eq(s->dropped_pge, dropped[3]);
        ck_assert_uint_eq(s->flushes_cr3, flushes[0]);
        ck_assert_uint_eq(s->flushes_invlpg, flushes[1]);
        ck_assert_uint_eq(s->flushes_pcid, flushes[2]);
        ck_assert_uint_eq(s->flushes_pge, flushes[3]);
        /* Every entry that came in either is still there or left through an
         * eviction or a flush; a refresh replaces itself. */
        ck_assert_uint_eq(count_valid(t) + s->evictions + dropped[0] + dropped[1] +
                              dropped[2] + dropped[3] + refreshes,
                          fills);
        tlb_free(t);
    }
}
END_TEST

START_TEST(evictions_counted)
{
    /* 2 sets of 2 ways: the 3rd page of a set evicts, other sets do not. */
    Tlb *t = new_tlb(4, 2, PG_4K, "lru", 1);
    const uint32_t set0[] = { 0x0000, 0x2000, 0x4000, 0x6000 };
    TlbEntry e = ent_4k(0x1000, 0, false);
    tlb_fill(t, &e, ACCESS_READ, 0, NULL);             /* set 1 */
    for (int i = 0; i < 4; i++) {
        e = ent_4k(set0[i], 0, false);
        tlb_fill(t, &e, ACCESS_READ, 0, NULL);
    }
    ck_assert_uint_eq(tlb_stats(t)->evictions, 2);
    ck_assert_uint_eq(tlb_stats(t)->fills[ACCESS_READ][TLB_PRIV_KERNEL], 5);
    /* A refill of a page already present replaces it: no eviction. */
    tlb_fill(t, &e, ACCESS_READ, 0, NULL);
    ck_assert_uint_eq(tlb_stats(t)->evictions, 2);
    ck_assert_uint_eq(count_valid(t), 3);
    tlb_free(t);
}
END_TEST

START_TEST(split_by_access_and_privilege)
{
    /* Hand-counted: three user reads (hit, hit, miss), one kernel write
     * miss, one kernel fetch hit. */
    Tlb *t = new_tlb(8, 8, PG_4K, "lru", 1);
    TlbEntry e = ent_4k(0x1000, 0, false);
    tlb_fill(t, &e, ACCESS_READ, 3, NULL);
    const TlbEntry *x;
    tlb_lookup(t, 0x1000, 0, ACCESS_READ, 3, &x);
    tlb_lookup(t, 0x1FFF, 0, ACCESS_READ, 3, &x);
    tlb_lookup(t, 0x2000, 0, ACCESS_READ, 3, &x);
    tlb_lookup(t, 0x3000, 0, ACCESS_WRITE, 0, &x);
    tlb_lookup(t, 0x1000, 0, ACCESS_EXEC, 0, &x);
    const TlbStats *s = tlb_stats(t);
    ck_assert_uint_eq(stat(s, "lookups"), 5);
    ck_assert_uint_eq(stat(s, "lookups_user"), 3);
    ck_assert_uint_eq(stat(s, "lookups_kernel"), 2);
    ck_assert_uint_eq(stat(s, "hits_read"), 2);
    ck_assert_uint_eq(stat(s, "misses_read"), 1);
    ck_assert_uint_eq(stat(s, "misses_write"), 1);
    ck_assert_uint_eq(stat(s, "hits_fetch"), 1);
    ck_assert_uint_eq(stat(s, "hits_kernel"), 1);
    ck_assert_uint_eq(stat(s, "misses_user"), 1);
    ck_assert_uint_eq(stat(s, "fills_user"), 1);
    check_split_invariants(s);
    tlb_free(t);
}
END_TEST

/* Every printable counter name appears once, and the outputs agree. */
START_TEST(outputs_share_one_list)
{
    TlbStats s = { 0 };
    s.hits[ACCESS_WRITE][TLB_PRIV_USER] = 5;
    s.hits[ACCESS_EXEC][TLB_PRIV_KERNEL] = 2;
    s.dropped_pge = 17;
    size_t n = tlb_stats_count();
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; i < n; i++) {
        TlbStatItem it = tlb_stats_item(&s, i);
        ck_assert_msg(g_hash_table_add(seen, (gpointer)it.name), "duplicate %s", it.name);
        ck_assert(it.description && *it.description);
    }
    g_hash_table_destroy(seen);
    ck_assert_uint_eq(stat(&s, "hits"), 7);
    ck_assert_uint_eq(stat(&s, "hits_write"), 5);
    ck_assert_uint_eq(stat(&s, "hits_user"), 5);
    ck_assert_uint_eq(stat(&s, "hits_fetch"), 2);
    uint64_t dummy;
    ck_assert(!tlb_stats_get(&s, "no_such_counter", &dummy));

    /* CSV: header and row have n fields each, in the same order. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tlb_stats_csv_header(f, "dtlb.");
    fputc('\n', f);
    tlb_stats_csv_row(f, &s);
    fclose(f);
    char **lines = g_strsplit(buf, "\n", -1);
    char **hdr = g_strsplit(lines[0], ",", -1), **row = g_strsplit(lines[1], ",", -1);
    ck_assert_uint_eq(g_strv_length(hdr), n);
    ck_assert_uint_eq(g_strv_length(row), n);
    for (size_t i = 0; i < n; i++) {
        TlbStatItem it = tlb_stats_item(&s, i);
        ck_assert_str_eq(hdr[i] + 5, it.name);
        ck_assert_uint_eq(g_ascii_strtoull(row[i], NULL, 10), it.value);
    }
    g_strfreev(hdr);
    g_strfreev(row);
    g_strfreev(lines);
    free(buf);

    /* JSON: an object with exactly the n counters. */
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    tlb_stats_to_json(&s, b);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    JsonObject *o = json_node_get_object(root);
    ck_assert_uint_eq(json_object_get_size(o), n);
    ck_assert_int_eq(json_object_get_int_member(o, "dropped_pge"), 17);
    ck_assert_int_eq(json_object_get_int_member(o, "hits_write"), 5);
    json_node_unref(root);
    g_object_unref(b);

    /* Text: zero rows skipped, a non-zero one printed with its value. */
    f = open_memstream(&buf, &len);
    const TlbStats *cols[] = { &s };
    const char *titles[] = { "dtlb" };
    tlb_stats_print_table(f, 1, titles, cols, true);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "dropped_pge"));
    ck_assert_ptr_null(strstr(buf, "flushes_cr3"));
    ck_assert(g_regex_match_simple("hits_write +5\n", buf, 0, 0));
    free(buf);
}
END_TEST

/* The hierarchy's and the arrays' lookups and hits are partly derived
 * when read (hier_priv.h, tlb_priv.h: hits taken inline are counted once,
 * in the side's 4 KiB array). Against a tally kept here from what each
 * tlb_hier_lookup returned, for a P4-like hierarchy (one array per side)
 * and one with large-page arrays and an STLB: every lookup, hit, miss
 * and fill per access and privilege, at the hierarchy, and its evictions
 * where each side has one array (a third config fills some 2 MiB pages
 * that no array holds); the same at the 4 KiB
 * arrays for the P4-like one, where they see every lookup. A pointer to
 * the statistics keeps every other counter live (measure.c reads flushes
 * that way). Then tlb_state_stats_add must add exactly times x the delta
 * to every counter read back. */
static void check_derived(const TlbHierConfig *c, bool arrays_see_all, bool big)
{
    TlbHierarchy *h = tlb_hier_new_config(c, 1, NULL);
    ck_assert(h);
    uint64_t look[3][2] = { { 0 } }, hit[3][2] = { { 0 } }, miss[3][2] = { { 0 } };
    uint64_t fill[3][2] = { { 0 } }, evict = 0;
    const TlbStats *live = tlb_hier_stats(h);
    uint64_t rng = 5;
    for (int step = 0; step < 20000; step++) {
        uint64_t x = tlb_splitmix64(&rng);
        uint32_t lin = (uint32_t)((x >> 8) % 150) << 12;
        Access a = (Access)((x >> 20) % 3);
        int cpl = (x >> 24) % 3 ? 3 : 0;
        unsigned p = TLB_PRIV(cpl);
        TlbEntry e;
        unsigned extra;
        TlbResult r = tlb_hier_lookup(h, lin, a, cpl, 0, &e, &extra);
        look[a][p]++;
        if (tlb_result_hit(r)) {
            hit[a][p]++;
        } else {
            miss[a][p]++;
            TlbEntry n = ent_4k(lin, 0, false);
            n.dirty = (x >> 30) % 2;
            /* With big, now and then a 2 MiB entry, where no array holds
             * them (a fill into none). */
            if (big && (x >> 32) % 16 == 0) {
                n.page_size = TLB_PAGE_2M;
                n.vpn = lin >> 21;
                n.frame &= ~(uint64_t)0x1fffff;
            }
            /* Evictions: the valid entries the fill removed, from the
             * arrays' valid counts (one more after unless it removed or
             * refreshed). */
            unsigned before = 0, after = 0, filled = 0;
            for (unsigned i = 0; i < tlb_hier_array_count(h); i++)
                before += tlb_valid_count(tlb_hier_array(h, i));
            const Tlb *l1 = tlb_hier_l1(h, a, (TlbPageSize)n.page_size);
            const Tlb *l2 = tlb_hier_stlb(h);
            filled = (l1 != NULL) + (l2 && tlb_holds(l2, (TlbPageSize)n.page_size) &&
                                     !(a == ACCESS_EXEC && c->stlb_data_only));
            tlb_hier_fill(h, a, cpl, &n);
            for (unsigned i = 0; i < tlb_hier_array_count(h); i++)
                after += tlb_valid_count(tlb_hier_array(h, i));
            fill[a][p]++;
            /* A dirty miss's 4 KiB entry refreshes the one found, in
             * place: no eviction (fill_searched). Tallied where the side
             * has one array. */
            evict += before + filled - after -
                     (r == TLB_MISS_DIRTY && n.page_size == TLB_PAGE_4K);
        }
        if ((x >> 40) % 500 == 0)
            tlb_hier_flush_nonglobal(h, 0);
    }
    uint64_t fl = live->flushes_cr3;   /* live, without a new call */
    ck_assert_uint_gt(fl, 10);
    const TlbStats *s = tlb_hier_stats(h);
    for (int a = 0; a < 3; a++)
        for (int p = 0; p < 2; p++) {
            ck_assert_uint_eq(s->lookups[a][p], look[a][p]);
            ck_assert_uint_eq(s->hits[a][p], hit[a][p]);
            ck_assert_uint_eq(s->misses[a][p], miss[a][p]);
            ck_assert_uint_eq(s->fills[a][p], fill[a][p]);
            if (!arrays_see_all)
                continue;
            const Tlb *t = tlb_hier_l1(h, (Access)a, TLB_PAGE_4K);
            ck_assert_uint_eq(tlb_stats(t)->lookups[a][p], look[a][p]);
            ck_assert_uint_eq(tlb_stats(t)->hits[a][p], hit[a][p]);
        }
    ck_assert_uint_gt(s->hits[ACCESS_READ][1], 1000);
    ck_assert_uint_gt(s->misses[ACCESS_EXEC][0], 100);
    if (arrays_see_all) {
        ck_assert_uint_eq(s->evictions, evict);
        ck_assert_uint_gt(evict, 50);
    }
    TlbStatsAll before, d, after;
    tlb_state_stats_get(h, &before);
    TlbStatsAll zero;
    memset(&zero, 0, sizeof zero);
    zero.narrays = before.narrays;
    tlb_state_stats_diff(&d, &before, &zero);   /* d = everything so far */
    tlb_state_stats_add(h, &d, 3);
    tlb_state_stats_get(h, &after);
    for (size_t k = 0; k < tlb_stats_count(); k++) {
        ck_assert_uint_eq(tlb_stats_item(&after.hier, k).value,
                          4 * tlb_stats_item(&before.hier, k).value);
        for (unsigned i = 0; i < after.narrays; i++)
            ck_assert_uint_eq(tlb_stats_item(&after.array[i], k).value,
                              4 * tlb_stats_item(&before.array[i], k).value);
    }
    tlb_hier_free(h);
}

START_TEST(hierarchy_derived_counts)
{
    TlbHierConfig c = { .policy = "lru" };
    c.itlb_4k = geom(64, 64, PG_4K2M);
    c.dtlb_4k = geom(64, 64, PG_4K2M);
    check_derived(&c, true, false);
    TlbHierConfig k = { .policy = "lru" };
    k.itlb_4k = geom(32, 4, PG_4K);
    k.itlb_large = geom(8, 8, PG_2M);
    k.dtlb_4k = geom(16, 4, PG_4K);
    k.dtlb_large = geom(8, 4, PG_2M);
    k.stlb = geom(64, 4, PG_4K);
    k.stlb.hit_latency = 7;
    check_derived(&k, false, false);
    /* P4-like, but no array holds 2 MiB pages: their fills fill none. */
    TlbHierConfig q = { .policy = "lru" };
    q.itlb_4k = geom(64, 64, PG_4K);
    q.dtlb_4k = geom(64, 4, PG_4K);
    check_derived(&q, true, true);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tlb");
    TCase *tc = tcase_create("stats");
    tcase_add_test(tc, array_invariants);
    tcase_add_test(tc, evictions_counted);
    tcase_add_test(tc, split_by_access_and_privilege);
    tcase_add_test(tc, outputs_share_one_list);
    tcase_add_test(tc, hierarchy_derived_counts);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
