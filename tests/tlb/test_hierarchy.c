/* The per-core hierarchy: split ITLB/DTLB, shared vs separate large-page
 * arrays, the STLB, the dirty-bit rule, the PDE cache, construction from a
 * preset and its errors. */
#include <signal.h>

#include "tlb_test.h"

static TlbHierarchy *hier(const TlbHierConfig *c)
{
    GError *err = NULL;
    TlbHierarchy *h = tlb_hier_new_config(c, 1, &err);
    ck_assert_msg(h, "%s", err ? err->message : "");
    return h;
}

static TlbResult look(TlbHierarchy *h, uint32_t lin, Access a, TlbEntry *e,
                      unsigned *extra)
{
    TlbEntry tmp;
    unsigned x;
    return tlb_hier_lookup(h, lin, a, 3, 0, e ? e : &tmp, extra ? extra : &x);
}

START_TEST(stlb_hit_refills_l1)
{
    /* L1 DTLB of 4 entries (LRU, fully associative) in front of a 64-entry
     * STLB with a 7-cycle hit. Five pages: the first falls out of L1 but
     * stays in the STLB. */
    TlbHierConfig c = {
        .itlb_4k = geom(4, 4, PG_4K), .dtlb_4k = geom(4, 4, PG_4K),
        .stlb = { .entries = 64, .ways = 4, .page_sizes = PG_4K2M, .hit_latency = 7 },
    };
    TlbHierarchy *h = hier(&c);
    for (uint32_t i = 0; i < 5; i++) {
        TlbEntry e = ent_4k(0x10000000 + i * 0x1000, 0, false);
        tlb_hier_fill(h, ACCESS_READ, 3, &e);
    }
    const Tlb *l1 = tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_4K);
    ck_assert(!tlb_peek(l1, 0x10000000, 0, NULL, NULL, NULL));
    TlbEntry e;
    unsigned extra;
    ck_assert_int_eq(look(h, 0x10000123, ACCESS_READ, &e, &extra), TLB_HIT_STLB);
    ck_assert_uint_eq(extra, 7);
    ck_assert_uint_eq(tlb_entry_paddr(&e, 0x10000123), 0x110000123ULL);
    /* Refilled into L1 (evicting the LRU page 1): the next lookup hits L1. */
    ck_assert(tlb_peek(l1, 0x10000000, 0, NULL, NULL, NULL));
    ck_assert(!tlb_peek(l1, 0x10001000, 0, NULL, NULL, NULL));
    ck_assert_int_eq(look(h, 0x10000FFF, ACCESS_READ, &e, &extra), TLB_HIT);
    ck_assert_uint_eq(extra, 0);
    /* A page in neither: miss, after paying for the STLB probe. */
    ck_assert_int_eq(look(h, 0x20000000, ACCESS_READ, &e, &extra), TLB_MISS);
    ck_assert_uint_eq(extra, 7);
    /* The STLB is unified: a fetch of a data-filled page hits it. */
    ck_assert_int_eq(look(h, 0x10002000, ACCESS_EXEC, &e, &extra), TLB_HIT_STLB);
    const TlbStats *s = tlb_hier_stats(h);
    ck_assert_uint_eq(s->stlb_hits[ACCESS_READ][TLB_PRIV_USER], 1);
    ck_assert_uint_eq(s->stlb_hits[ACCESS_EXEC][TLB_PRIV_USER], 1);
    ck_assert_uint_eq(s->hits[ACCESS_READ][TLB_PRIV_USER], 2);
    ck_assert_uint_eq(s->misses[ACCESS_READ][TLB_PRIV_USER], 1);
    ck_assert_uint_eq(s->fills[ACCESS_READ][TLB_PRIV_USER], 5);
    /* Evictions: page 0 from L1 at the 5th fill, page 1 at the refill;
     * the ITLB refill found a free way. */
    ck_assert_uint_eq(s->evictions, 2);
    tlb_hier_free(h);
}
END_TEST

START_TEST(stlb_data_only)
{
    /* Core 2's DTLB1 backs loads and stores only: fetches never probe it
     * and fetch walks do not fill it. */
    TlbHierConfig c = {
        .itlb_4k = geom(4, 4, PG_4K), .dtlb_4k = geom(4, 4, PG_4K),
        .stlb = { .entries = 16, .ways = 4, .page_sizes = PG_4K, .hit_latency = 2 },
        .stlb_data_only = true,
    };
    TlbHierarchy *h = hier(&c);
    TlbEntry d = ent_4k(0x1000, 0, false), i = ent_4k(0x9000, 0, false);
    tlb_hier_fill(h, ACCESS_READ, 3, &d);
    tlb_hier_fill(h, ACCESS_EXEC, 3, &i);
    ck_assert_uint_eq(count_valid(tlb_hier_stlb(h)), 1);
    unsigned extra = 99;
    ck_assert_int_eq(look(h, 0x1000, ACCESS_EXEC, NULL, &extra), TLB_MISS);
    ck_assert_uint_eq(extra, 0);
    ck_assert_uint_eq(tlb_stats(tlb_hier_stlb(h))->lookups[ACCESS_EXEC][TLB_PRIV_USER], 0);
    tlb_hier_free(h);
}
END_TEST

START_TEST(split_itlb_dtlb)
{
    TlbHierConfig c = { .itlb_4k = geom(8, 8, PG_4K), .dtlb_4k = geom(8, 8, PG_4K) };
    TlbHierarchy *h = hier(&c);
    TlbEntry e = ent_4k(0x08048000, 0, false);
    tlb_hier_fill(h, ACCESS_EXEC, 3, &e);
    ck_assert_int_eq(look(h, 0x08048000, ACCESS_EXEC, NULL, NULL), TLB_HIT);
    ck_assert_int_eq(look(h, 0x08048000, ACCESS_READ, NULL, NULL), TLB_MISS);
    ck_assert_int_eq(look(h, 0x08048000, ACCESS_WRITE, NULL, NULL), TLB_MISS);
    tlb_hier_fill(h, ACCESS_READ, 3, &e);
    ck_assert_int_eq(look(h, 0x08048000, ACCESS_READ, NULL, NULL), TLB_HIT);
    ck_assert_uint_eq(count_valid(tlb_hier_l1(h, ACCESS_EXEC, TLB_PAGE_4K)), 1);
    ck_assert_uint_eq(count_valid(tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_4K)), 1);
    tlb_hier_free(h);
}
END_TEST

/* Each large size goes to the side's array listing it (tlb.h): 4 MiB pages
 * (32-bit paging) to an array with 4M, 2 MiB pages (PAE) to one with 2M;
 * a size no array lists is not cached. A 4 MiB entry answers every
 * address of its 4 MiB and INVLPG of any of them removes it. */
START_TEST(large_sizes_go_where_listed)
{
    TlbHierConfig c = { .dtlb_4k = geom(64, 4, PG_4K), .dtlb_large = geom(8, 8, PRESET_PG_4M),
                        .itlb_4k = geom(32, 4, PG_4K | PRESET_PG_2M | PRESET_PG_4M) };
    TlbHierarchy *h = hier(&c);
    ck_assert_ptr_eq(tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_4M),
                     tlb_hier_l1(h, ACCESS_WRITE, TLB_PAGE_4M));
    ck_assert_ptr_nonnull(tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_4M));
    ck_assert_ptr_null(tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_2M));    /* 4M-only array */
    ck_assert_ptr_eq(tlb_hier_l1(h, ACCESS_EXEC, TLB_PAGE_4M),
                     tlb_hier_l1(h, ACCESS_EXEC, TLB_PAGE_4K));      /* shared, as the P4 */
    TlbEntry m = ent_4m(0xC0400000, 0, false), two = ent_2m(0xC0000000, 0, false);
    ck_assert_ptr_nonnull(tlb_hier_fill(h, ACCESS_READ, 0, &m));
    ck_assert_ptr_null(tlb_hier_fill(h, ACCESS_READ, 0, &two));       /* nowhere to go */
    uint32_t inside[] = { 0xC0400000, 0xC0512345, 0xC07FFFFF };
    for (size_t i = 0; i < G_N_ELEMENTS(inside); i++) {
        TlbEntry e;
        ck_assert_int_eq(look(h, inside[i], ACCESS_READ, &e, NULL), TLB_HIT);
        ck_assert_uint_eq(e.page_size, TLB_PAGE_4M);
        ck_assert_uint_eq(tlb_entry_paddr(&e, inside[i]),
                          0x300000000ULL + inside[i]);
    }
    ck_assert_int_ne(look(h, 0xC0800000, ACCESS_READ, NULL, NULL), TLB_HIT);
    ck_assert_int_ne(look(h, 0xC03FFFFF, ACCESS_READ, NULL, NULL), TLB_HIT);
    ck_assert_uint_eq(tlb_hier_invlpg(h, 0xC06ABCDE, 0), 1);
    ck_assert_int_ne(look(h, 0xC0400000, ACCESS_READ, NULL, NULL), TLB_HIT);
    tlb_hier_free(h);
}
END_TEST

START_TEST(large_pages_shared_or_separate)
{
    TlbEntry big = ent_2m(0xC0000000, 0, true), small = ent_4k(0x08048000, 0, false);

    /* Shared: no dtlb_large, the 4K array lists 2M: both go there. */
    TlbHierConfig shared = { .dtlb_4k = geom(64, 64, PG_4K2M) };
    TlbHierarchy *h = hier(&shared);
    ck_assert_uint_eq(tlb_hier_array_count(h), 1);
    ck_assert_ptr_eq(tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_2M),
                     tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_4K));
    tlb_hier_fill(h, ACCESS_READ, 0, &big);
    tlb_hier_fill(h, ACCESS_READ, 3, &small);
    ck_assert_uint_eq(count_valid(tlb_hier_array(h, 0)), 2);
    ck_assert_int_eq(look(h, 0xC01FFFFF, ACCESS_READ, NULL, NULL), TLB_HIT);
    ck_assert_int_eq(look(h, 0x08048FFF, ACCESS_READ, NULL, NULL), TLB_HIT);
    tlb_hier_free(h);

    /* Separate: a 4-entry large-page array holding 2M and 4M, as the
     * bundled presets list (CPUID leaf 2's "2M/4M"). */
    TlbHierConfig sep = { .dtlb_4k = geom(64, 4, PG_4K),
                          .dtlb_large = geom(4, 4, PRESET_PG_2M | PRESET_PG_4M) };
    h = hier(&sep);
    ck_assert_uint_eq(tlb_hier_array_count(h), 2);
    const Tlb *l4k = tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_4K);
    const Tlb *l2m = tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_2M);
    ck_assert_ptr_ne(l4k, l2m);
    tlb_hier_fill(h, ACCESS_READ, 0, &big);
    tlb_hier_fill(h, ACCESS_READ, 3, &small);
    ck_assert_uint_eq(count_valid(l4k), 1);
    ck_assert_uint_eq(count_valid(l2m), 1);
    TlbEntry e;
    ck_assert_int_eq(look(h, 0xC0123456, ACCESS_READ, &e, NULL), TLB_HIT);
    ck_assert_uint_eq(e.page_size, TLB_PAGE_2M);
    /* Five large pages into the 4-entry array evict one; the 4K array is
     * untouched by them. */
    for (uint32_t i = 1; i <= 4; i++) {
        TlbEntry b = ent_2m(0xC0000000 + i * 0x200000, 0, true);
        tlb_hier_fill(h, ACCESS_READ, 0, &b);
    }
    ck_assert_uint_eq(count_valid(l2m), 4);
    ck_assert_uint_eq(tlb_stats(l2m)->evictions, 1);
    ck_assert_uint_eq(tlb_stats(l4k)->evictions, 0);
    ck_assert_int_eq(look(h, 0x08048000, ACCESS_READ, NULL, NULL), TLB_HIT);
    tlb_hier_free(h);

    /* Neither: a side without a large-capable array caches no 2 MiB
     * translation (the walk repeats). */
    TlbHierConfig none = { .dtlb_4k = geom(64, 4, PG_4K) };
    h = hier(&none);
    ck_assert_ptr_null(tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_2M));
    tlb_hier_fill(h, ACCESS_READ, 0, &big);
    ck_assert_int_eq(look(h, 0xC0000000, ACCESS_READ, NULL, NULL), TLB_MISS);
    tlb_hier_free(h);
}
END_TEST

START_TEST(dirty_known_write_rule)
{
    /* SDM §4.8: a write through an entry cached with D=0 must walk to set
     * D. The entry answers reads; the write misses (dirty walk); the refill
     * after the walk (D=1) updates the same entry in place. */
    TlbHierConfig c = { .dtlb_4k = geom(4, 4, PG_4K),
                        .stlb = { .entries = 16, .ways = 4, .page_sizes = PG_4K, .hit_latency = 5 } };
    TlbHierarchy *h = hier(&c);
    TlbEntry clean = ent_4k(0x0804A000, 0, false);
    clean.dirty = false;
    tlb_hier_fill(h, ACCESS_READ, 3, &clean);
    ck_assert_int_eq(look(h, 0x0804A010, ACCESS_READ, NULL, NULL), TLB_HIT);
    unsigned extra = 99;
    TlbEntry e;
    ck_assert_int_eq(look(h, 0x0804A010, ACCESS_WRITE, &e, &extra), TLB_MISS_DIRTY);
    ck_assert_uint_eq(extra, 0);    /* straight to the walk, no STLB probe */
    const TlbStats *s = tlb_hier_stats(h);
    ck_assert_uint_eq(s->dirty_walks[ACCESS_WRITE][TLB_PRIV_USER], 1);
    ck_assert_uint_eq(s->misses[ACCESS_WRITE][TLB_PRIV_USER], 1);
    ck_assert_uint_eq(s->hits[ACCESS_WRITE][TLB_PRIV_USER], 0);
    /* The walk set D: refill. */
    TlbEntry dirty = clean;
    dirty.dirty = true;
    tlb_hier_fill(h, ACCESS_WRITE, 3, &dirty);
    ck_assert_int_eq(look(h, 0x0804A010, ACCESS_WRITE, &e, NULL), TLB_HIT);
    ck_assert(e.dirty);
    ck_assert_uint_eq(count_valid(tlb_hier_l1(h, ACCESS_READ, TLB_PAGE_4K)), 1);
    ck_assert_uint_eq(count_valid(tlb_hier_stlb(h)), 1);
    ck_assert_uint_eq(s->evictions, 0);
    /* A read-only entry with D=0 still takes the walk on a write: the walk
     * is what raises the #PF, the TLB does not decide rights. */
    TlbEntry ro = ent_4k(0x0804B000, 0, false);
    ro.rw = false;
    ro.dirty = false;
    tlb_hier_fill(h, ACCESS_READ, 3, &ro);
    ck_assert_int_eq(look(h, 0x0804B000, ACCESS_WRITE, NULL, NULL), TLB_MISS_DIRTY);
    tlb_hier_free(h);
}
END_TEST

START_TEST(pde_cache)
{
    TlbHierConfig c = { .dtlb_4k = geom(4, 4, PG_4K), .pde_cache_entries = 2 };
    TlbHierarchy *h = hier(&c);
    ck_assert_uint_eq(tlb_hier_pde_entries(h), 2);
    uint64_t pde = 0, pa = 0;
    ck_assert(!tlb_hier_pde_lookup(h, 0x08048000, 0, &pde, &pa));
    tlb_hier_pde_fill(h, 0x08048000, 0, 0x1234000 | PAE_P | PAE_RW | PAE_US, 0x5020);
    /* Any address of the same 2 MiB region (bits 31:21) hits. */
    ck_assert(tlb_hier_pde_lookup(h, 0x081FFFFF, 0, &pde, &pa));
    ck_assert_uint_eq(pde, 0x1234000 | PAE_P | PAE_RW | PAE_US);
    ck_assert_uint_eq(pa, 0x5020);
    ck_assert(!tlb_hier_pde_lookup(h, 0x08200000, 0, &pde, &pa));
    ck_assert(!tlb_hier_pde_lookup(h, 0x08048000, 1, &pde, &pa));   /* other PCID */
    /* LRU of 2 entries: region 0x040 was filled and hit; region 0x041
     * takes the free slot; region 0x042 then evicts the least recently
     * used, 0x040. */
    tlb_hier_pde_fill(h, 0x08200000, 0, 0x2000 | PAE_P, 0x5028);
    tlb_hier_pde_fill(h, 0x08400000, 0, 0x3000 | PAE_P, 0x5030);
    ck_assert(!tlb_hier_pde_lookup(h, 0x08048000, 0, &pde, &pa));
    ck_assert(tlb_hier_pde_lookup(h, 0x08200000, 0, &pde, &pa));
    const TlbStats *s = tlb_hier_stats(h);
    ck_assert_uint_eq(s->pde_fills, 3);
    ck_assert_uint_eq(s->pde_evictions, 1);
    ck_assert_uint_eq(s->pde_lookups, 6);
    ck_assert_uint_eq(s->pde_hits, 2);
    /* Full flush empties it. */
    tlb_hier_flush_all(h);
    ck_assert_uint_eq(s->pde_dropped, 2);
    ck_assert(!tlb_hier_pde_lookup(h, 0x08200000, 0, &pde, &pa));
    tlb_hier_free(h);

    /* No PDE cache: lookups miss and count nothing. */
    TlbHierConfig none = { .dtlb_4k = geom(4, 4, PG_4K) };
    h = hier(&none);
    tlb_hier_pde_fill(h, 0x08048000, 0, 0x1000 | PAE_P, 0x10);
    ck_assert(!tlb_hier_pde_lookup(h, 0x08048000, 0, &pde, &pa));
    ck_assert_uint_eq(tlb_hier_stats(h)->pde_lookups, 0);
    tlb_hier_free(h);
}
END_TEST

START_TEST(entry_from_walk)
{
    PaeWalk w = { .fault = false, .frame = 0x123400000ULL, .page_size = PAE_PAGE_2M,
                  .rw = true, .us = false, .nx = true, .global = true, .dirty = false };
    TlbEntry e;
    tlb_entry_from_walk(&e, 0xC0345678, &w, 3, true);
    ck_assert_uint_eq(e.vpn, 0xC0345678u >> 21);
    ck_assert_uint_eq(e.page_size, TLB_PAGE_2M);
    ck_assert(e.global && e.nx && e.rw && !e.us && !e.dirty);
    ck_assert_uint_eq(e.pcid, 3);
    ck_assert_uint_eq(tlb_entry_paddr(&e, 0xC0345678), 0x123400000ULL + 0x145678);
    /* G is ignored without CR4.PGE (SDM §4.10.2.4). */
    tlb_entry_from_walk(&e, 0xC0345678, &w, 0, false);
    ck_assert(!e.global);
    w.page_size = PAE_PAGE_4K;
    w.frame = 0xABCDE000ULL;
    tlb_entry_from_walk(&e, 0x08048123, &w, 0, true);
    ck_assert_uint_eq(e.vpn, 0x08048);
    ck_assert_uint_eq(tlb_entry_paddr(&e, 0x08048123), 0xABCDE123ULL);
}
END_TEST

START_TEST(from_preset_and_errors)
{
    /* A preset written by hand with the P-III Coppermine figures of
     * REFERENCES.md (CPUID leaf 2): ITLB 4K 32/4-way + 4M 2 fully; DTLB 4K
     * 64/4-way + 4M 8/4-way. */
    Preset p = { 0 };
    p.itlb_4k = geom(32, 4, PG_4K);
    p.itlb_large = geom(2, 2, PRESET_PG_2M | PRESET_PG_4M);
    p.dtlb_4k = geom(64, 4, PG_4K);
    p.dtlb_large = geom(8, 4, PRESET_PG_2M | PRESET_PG_4M);
    p.tlb_policy = (char *)"plru";
    GError *err = NULL;
    TlbHierarchy *h = tlb_hier_new(&p, 5, &err);
    ck_assert_msg(h, "%s", err ? err->message : "");
    ck_assert_uint_eq(tlb_hier_array_count(h), 4);
    ck_assert_str_eq(tlb_name(tlb_hier_array(h, 0)), "itlb_4k");
    ck_assert_uint_eq(tlb_sets(tlb_hier_array(h, 2)), 16);
    ck_assert_str_eq(tlb_policy(tlb_hier_array(h, 3))->name, "plru");
    ck_assert_ptr_null(tlb_hier_stlb(h));
    tlb_hier_free(h);

    struct { TlbGeom dtlb_4k, dtlb_large; const char *policy, *needle; } bad[] = {
        { geom(48, 4, PG_4K), geom(0, 0, 0), "lru", "dtlb_4k: 48 entries / 4 ways = 12 sets" },
        { geom(64, 4, PG_4K), geom(8, 4, PG_4K), "lru", "dtlb_large: must hold large pages" },
        { geom(64, 4, PG_2M), geom(0, 0, 0), "lru", "dtlb_4k: must hold 4K" },
        { geom(64, 4, PG_4K), geom(6, 6, PG_2M), "plru", "dtlb_large: tree pseudo-LRU" },
        { geom(64, 4, PG_4K), geom(0, 0, 0), "lfu", "unknown TLB replacement policy 'lfu'" },
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        TlbHierConfig c = { .dtlb_4k = bad[i].dtlb_4k, .dtlb_large = bad[i].dtlb_large,
                            .policy = bad[i].policy };
        err = NULL;
        ck_assert_ptr_null(tlb_hier_new_config(&c, 1, &err));
        ck_assert_msg(err && strstr(err->message, bad[i].needle), "case %u: '%s'", i,
                      err ? err->message : "(no error)");
        g_error_free(err);
    }
}
END_TEST

START_TEST(random_policy_reproducible_in_hierarchy)
{
    /* The same seed and references give the same hit/miss sequence;
     * another seed a different one (5000 outcomes agreeing by chance is
     * vanishingly unlikely). */
    uint64_t hits[3], trace[3];
    const uint64_t seeds[3] = { 11, 11, 12 };
    for (int k = 0; k < 3; k++) {
        TlbHierConfig c = { .dtlb_4k = geom(16, 4, PG_4K), .policy = "random" };
        TlbHierarchy *h = tlb_hier_new_config(&c, seeds[k], NULL);
        ck_assert_ptr_nonnull(h);
        uint64_t rng = 5;
        trace[k] = 0;
        for (int i = 0; i < 5000; i++) {
            uint32_t lin = (uint32_t)(tlb_splitmix64(&rng) % 40) << 12;
            TlbEntry e;
            unsigned x;
            bool hit = tlb_result_hit(tlb_hier_lookup(h, lin, ACCESS_READ, 3, 0, &e, &x));
            trace[k] = trace[k] * 0x100000001B3ULL + hit + 1;   /* FNV-style fold */
            if (!hit) {
                e = ent_4k(lin, 0, false);
                tlb_hier_fill(h, ACCESS_READ, 3, &e);
            }
        }
        hits[k] = tlb_hier_stats(h)->hits[ACCESS_READ][TLB_PRIV_USER];
        tlb_hier_free(h);
    }
    ck_assert_uint_eq(hits[0], hits[1]);
    ck_assert_uint_eq(trace[0], trace[1]);
    ck_assert_uint_ne(trace[0], trace[2]);
}
END_TEST

START_TEST(hierarchy_report)
{
    TlbHierConfig c = { .itlb_4k = geom(4, 4, PG_4K), .dtlb_4k = geom(8, 2, PG_4K),
                        .stlb = geom(32, 4, PG_4K) };
    TlbHierarchy *h = hier(&c);
    TlbEntry e = ent_4k(0x1000, 0, false);
    tlb_hier_fill(h, ACCESS_READ, 3, &e);
    look(h, 0x1000, ACCESS_READ, NULL, NULL);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    tlb_hier_print_stats(h, f, true);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "total"));
    ck_assert_ptr_nonnull(strstr(buf, "dtlb_4k"));
    ck_assert_ptr_nonnull(strstr(buf, "stlb"));
    ck_assert(g_regex_match_simple("\nhits +1 +0 +1 +0\n", buf, 0, 0));
    free(buf);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    tlb_hier_stats_to_json(h, b);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    JsonObject *o = json_node_get_object(root);
    JsonObject *arrays = json_object_get_object_member(o, "arrays");
    ck_assert_int_eq(json_object_get_int_member(json_object_get_object_member(o, "total"), "hits"), 1);
    ck_assert_int_eq(json_object_get_int_member(json_object_get_object_member(arrays, "stlb"), "fills"), 1);
    ck_assert_uint_eq(json_object_get_size(arrays), 3);
    json_node_unref(root);
    g_object_unref(b);
    tlb_hier_free(h);
}
END_TEST

/* Caller bugs at the fill API boundary stop the program (g_error raises
 * SIGTRAP): a PCID wider than 12 bits, a page size that is no TlbPageSize,
 * a VPN past 4 GiB, a page size the array does not hold. The checks moved
 * off the array's fill path to tlb_fill and tlb_hier_fill; these make sure
 * they are still there. */
static TlbHierarchy *p4like(void)
{
    TlbHierConfig c = { .itlb_4k = geom(16, 16, PG_4K), .dtlb_4k = geom(16, 16, PG_4K2M) };
    return hier(&c);
}

START_TEST(hier_fill_rejects_wide_pcid)
{
    TlbEntry e = ent_4k(0x1000, 0x1000, false);
    tlb_hier_fill(p4like(), ACCESS_READ, 3, &e);
}
END_TEST

START_TEST(hier_fill_rejects_bad_size)
{
    TlbEntry e = ent_4k(0x1000, 0, false);
    e.page_size = TLB_NPAGESIZES;
    tlb_hier_fill(p4like(), ACCESS_READ, 3, &e);
}
END_TEST

START_TEST(hier_fill_rejects_large_vpn)
{
    TlbEntry e = ent_2m(0, 0, false);
    e.vpn = 0x800;                   /* 2 MiB pages below 4 GiB: VPN < 0x800 */
    tlb_hier_fill(p4like(), ACCESS_READ, 3, &e);
}
END_TEST

START_TEST(fill_rejects_wide_pcid)
{
    Tlb *t = new_tlb(16, 16, PG_4K, "lru", 1);
    TlbEntry e = ent_4k(0x1000, 0xFFFF, false);
    tlb_fill(t, &e, ACCESS_READ, 3, NULL);
}
END_TEST

START_TEST(fill_rejects_unheld_size)
{
    Tlb *t = new_tlb(16, 16, PG_4K, "lru", 1);
    TlbEntry e = ent_2m(0x200000, 0, false);
    tlb_fill(t, &e, ACCESS_READ, 3, NULL);
}
END_TEST

START_TEST(fill_accepts_limits)
{
    /* The largest legal values pass the same checks. */
    TlbHierarchy *h = p4like();
    TlbEntry a = ent_4k(0xFFFFF000u, TLB_PCID_MAX, false);
    TlbEntry b = ent_2m(0xFFE00000u, TLB_PCID_MAX, true);
    ck_assert_uint_eq(tlb_hier_fill(h, ACCESS_READ, 3, &a)->vpn, 0xFFFFF);
    ck_assert_uint_eq(tlb_hier_fill(h, ACCESS_WRITE, 0, &b)->vpn, 0x7FF);
    tlb_hier_free(h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tlb");
    TCase *tc = tcase_create("hierarchy");
    tcase_add_test(tc, stlb_hit_refills_l1);
    tcase_add_test(tc, stlb_data_only);
    tcase_add_test(tc, split_itlb_dtlb);
    tcase_add_test(tc, large_pages_shared_or_separate);
    tcase_add_test(tc, large_sizes_go_where_listed);
    tcase_add_test(tc, dirty_known_write_rule);
    tcase_add_test(tc, pde_cache);
    tcase_add_test(tc, entry_from_walk);
    tcase_add_test(tc, from_preset_and_errors);
    tcase_add_test(tc, random_policy_reproducible_in_hierarchy);
    tcase_add_test(tc, hierarchy_report);
    tcase_add_test(tc, fill_accepts_limits);
    tcase_add_test_raise_signal(tc, hier_fill_rejects_wide_pcid, SIGTRAP);
    tcase_add_test_raise_signal(tc, hier_fill_rejects_bad_size, SIGTRAP);
    tcase_add_test_raise_signal(tc, hier_fill_rejects_large_vpn, SIGTRAP);
    tcase_add_test_raise_signal(tc, fill_rejects_wide_pcid, SIGTRAP);
    tcase_add_test_raise_signal(tc, fill_rejects_unheld_size, SIGTRAP);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
