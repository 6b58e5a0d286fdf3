/* Flush semantics, Intel SDM Vol. 3A §4.10.2.4 and §4.10.4.1, written as a
 * table: for each operation, which of a fixed population of entries must
 * survive. Every row runs on an 8-entry array (its set scanned), a 4-way
 * set-associative and a 32-entry fully associative one (both found through
 * the hash index), which must agree. */
#include "tlb_test.h"

/* The population. */
enum {
    U1,     /* user 4K page 0x08048000, PCID 1 */
    U2,     /* user 4K page 0x08049000, PCID 2 */
    U3,     /* 4K page 0x08048000 again, PCID 2 (same address, other PCID) */
    KG,     /* kernel 4K page 0xC0100000, global */
    L1,     /* 2 MiB page 0x40000000, PCID 1, not global */
    LG,     /* 2 MiB page 0xC0400000, global */
    NPOP
};

static TlbEntry pop_entry(int i)
{
    switch (i) {
    case U1: return ent_4k(0x08048000, 1, false);
    case U2: return ent_4k(0x08049000, 2, false);
    case U3: return ent_4k(0x08048000, 2, false);
    case KG: return ent_4k(0xC0100000, 1, true);
    case L1: return ent_2m(0x40000000, 1, false);
    default: return ent_2m(0xC0400000, 1, true);
    }
}

/* An address inside each entry's page, for lookups. */
static const uint32_t pop_addr[NPOP] = {
    0x08048ABC, 0x08049FF0, 0x08048004, 0xC0100800, 0x401FF123, 0xC0512345,
};
static const uint16_t pop_pcid[NPOP] = { 1, 2, 2, 1, 1, 1 };

typedef enum { OP_CR3, OP_CR3_NOFLUSH, OP_INVLPG, OP_PCID, OP_PGE } Op;

typedef struct {
    const char *what;
    Op op;
    uint32_t lin;                /* INVLPG */
    uint16_t pcid;               /* CR3, INVLPG (current PCID), PCID flush */
    const char *survive;         /* one char per population entry: 1 = stays */
} Row;

/*                                                      U1 U2 U3 KG L1 LG */
static const Row rules[] = {
    { "MOV CR3, PCID 1: non-global of PCID 1 go",
      OP_CR3, 0, 1,                                     "011101" },
    { "MOV CR3, PCID off (all tags 0): nothing tagged 0 here",
      OP_CR3, 0, 0,                                     "111111" },
    { "MOV CR3 with the no-flush bit: nothing goes",
      OP_CR3_NOFLUSH, 0, 1,                             "111111" },
    { "INVLPG of a global 4K page removes it",
      OP_INVLPG, 0xC0100FFF, 1,                         "111011" },
    { "INVLPG removes a global entry filled under another PCID",
      OP_INVLPG, 0xC0100000, 2,                         "111011" },
    { "INVLPG with PCID off removes a global 2 MiB entry tagged 1",
      OP_INVLPG, 0xC0400000, 0,                         "111110" },
    { "INVLPG inside a 2 MiB page removes the 2 MiB entry",
      OP_INVLPG, 0x40123456, 1,                         "111101" },
    { "INVLPG inside a global 2 MiB page removes it",
      OP_INVLPG, 0xC05FF000, 1,                         "111110" },
    { "INVLPG removes only the current PCID's entry",
      OP_INVLPG, 0x08048000, 1,                         "011111" },
    { "INVLPG under PCID 2 of the same address",
      OP_INVLPG, 0x08048FFF, 2,                         "110111" },
    { "INVLPG of an address mapped under another PCID only",
      OP_INVLPG, 0x08049000, 1,                         "111111" },
    { "PCID flush 2: its non-global entries go",
      OP_PCID, 0, 2,                                    "100111" },
    { "CR4.PGE toggle: everything goes, global too",
      OP_PGE, 0, 0,                                     "000000" },
};

static const struct { unsigned entries, ways; } geoms[] = {
    { 8, 8 },                    /* fully associative, scanned */
    { 16, 4 },                   /* 4 sets, hash index */
    { 32, 32 },                  /* fully associative, hash index */
};

static Tlb *populate(unsigned gi)
{
    Tlb *t = new_tlb(geoms[gi].entries, geoms[gi].ways, PG_4K2M, "lru", 1);
    for (int i = 0; i < NPOP; i++) {
        TlbEntry e = pop_entry(i);
        TlbFillInfo fi;
        tlb_fill(t, &e, ACCESS_READ, 0, &fi);
        ck_assert(!fi.evicted && !fi.refreshed);
    }
    ck_assert_uint_eq(count_valid(t), NPOP);
    return t;
}

static unsigned apply(Tlb *t, const Row *r)
{
    switch (r->op) {
    case OP_CR3: return tlb_flush_nonglobal(t, r->pcid, TLB_FLUSH_CR3);
    case OP_CR3_NOFLUSH: return 0;   /* the architectural effect: none */
    case OP_INVLPG: return tlb_invlpg(t, r->lin, r->pcid);
    case OP_PCID: return tlb_flush_nonglobal(t, r->pcid, TLB_FLUSH_PCID);
    case OP_PGE: return tlb_flush_all(t);
    }
    return 0;
}

START_TEST(flush_table)
{
    for (unsigned gi = 0; gi < G_N_ELEMENTS(geoms); gi++) {
        for (unsigned ri = 0; ri < G_N_ELEMENTS(rules); ri++) {
            const Row *r = &rules[ri];
            Tlb *t = populate(gi);
            unsigned before = count_valid(t);
            unsigned dropped = apply(t, r);
            unsigned expect_dropped = 0;
            for (int i = 0; i < NPOP; i++) {
                bool stays = r->survive[i] == '1';
                expect_dropped += !stays;
                TlbEntry got;
                bool found = tlb_peek(t, pop_addr[i], pop_pcid[i], &got, NULL, NULL);
                /* A global entry found under its own PCID is the same. */
                bool is_it = found && got.vpn == pop_entry(i).vpn &&
                             got.pcid == pop_entry(i).pcid;
                ck_assert_msg(is_it == stays, "%u-way: %s: entry %d %s", geoms[gi].ways,
                              r->what, i, stays ? "was removed" : "survived");
            }
            ck_assert_uint_eq(dropped, expect_dropped);
            ck_assert_uint_eq(before - count_valid(t), expect_dropped);
            tlb_free(t);
        }
    }
}
END_TEST

START_TEST(pcid_isolation)
{
    /* SDM §4.10.2.4: with PCIDs, a non-global entry is used only under its
     * PCID; a global entry under any PCID. */
    for (unsigned gi = 0; gi < G_N_ELEMENTS(geoms); gi++) {
        Tlb *t = populate(gi);
        const TlbEntry *e;
        /* U1 (PCID 1) hits for 1, not for 2 (which finds U3, its own entry),
         * nor for 3. */
        ck_assert_int_eq(tlb_lookup(t, 0x08048010, 1, ACCESS_READ, 3, &e), TLB_HIT);
        ck_assert_uint_eq(e->pcid, 1);
        ck_assert_int_eq(tlb_lookup(t, 0x08048010, 2, ACCESS_READ, 3, &e), TLB_HIT);
        ck_assert_uint_eq(e->pcid, 2);
        ck_assert_int_eq(tlb_lookup(t, 0x08048010, 3, ACCESS_READ, 3, &e), TLB_MISS);
        ck_assert_int_eq(tlb_lookup(t, 0x08049010, 1, ACCESS_READ, 3, &e), TLB_MISS);
        /* Globals hit for every PCID. */
        for (uint16_t p = 0; p < 5; p++) {
            ck_assert_int_eq(tlb_lookup(t, 0xC0100000, p, ACCESS_READ, 0, &e), TLB_HIT);
            ck_assert_int_eq(tlb_lookup(t, 0xC0400000 + 0x1FFFFF, p, ACCESS_READ, 0, &e), TLB_HIT);
            ck_assert_uint_eq(e->page_size, TLB_PAGE_2M);
        }
        ck_assert_int_eq(tlb_lookup(t, 0x40000000, 2, ACCESS_READ, 0, &e), TLB_MISS);
        ck_assert_int_eq(tlb_lookup(t, 0xFFF, 4095, ACCESS_READ, 0, &e), TLB_MISS);
        tlb_free(t);
    }
}
END_TEST

START_TEST(large_page_covers_region)
{
    /* A 2 MiB entry answers every address of its 2 MiB region and none
     * outside it; the physical address keeps the low 21 bits. */
    Tlb *t = new_tlb(8, 8, PG_4K2M, "lru", 1);
    TlbEntry e = ent_2m(0x40200000, 0, false);
    tlb_fill(t, &e, ACCESS_READ, 0, NULL);
    const TlbEntry *x;
    const uint32_t in[] = { 0x40200000, 0x40200FFF, 0x40345678, 0x403FFFFF };
    const uint32_t out[] = { 0x401FFFFF, 0x40400000, 0x00200000 };
    for (unsigned i = 0; i < G_N_ELEMENTS(in); i++) {
        ck_assert_int_eq(tlb_lookup(t, in[i], 0, ACCESS_READ, 0, &x), TLB_HIT);
        ck_assert_uint_eq(tlb_entry_paddr(x, in[i]),
                          0x200000000ULL + 0x40200000 + (in[i] & 0x1FFFFF));
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(out); i++)
        ck_assert_int_eq(tlb_lookup(t, out[i], 0, ACCESS_READ, 0, &x), TLB_MISS);
    tlb_free(t);
}
END_TEST

START_TEST(global_survives_cr3_dies_on_pge)
{
    /* The 3G/1G story in one test: kernel global pages survive the CR3
     * writes of context switches and die on a CR4.PGE toggle. */
    Tlb *t = new_tlb(64, 4, PG_4K, "lru", 1);
    for (uint32_t i = 0; i < 8; i++) {
        TlbEntry k = ent_4k(0xC0000000 + i * 0x1000, 0, true);
        TlbEntry u = ent_4k(0x08048000 + i * 0x1000, 0, false);
        tlb_fill(t, &k, ACCESS_READ, 0, NULL);
        tlb_fill(t, &u, ACCESS_READ, 3, NULL);
    }
    ck_assert_uint_eq(tlb_flush_nonglobal(t, 0, TLB_FLUSH_CR3), 8);
    ck_assert_uint_eq(count_valid(t), 8);
    ck_assert_uint_eq(tlb_flush_nonglobal(t, 0, TLB_FLUSH_CR3), 0);
    const TlbEntry *x;
    ck_assert_int_eq(tlb_lookup(t, 0xC0003000, 0, ACCESS_READ, 0, &x), TLB_HIT);
    ck_assert_int_eq(tlb_lookup(t, 0x08048000, 0, ACCESS_READ, 3, &x), TLB_MISS);
    ck_assert_uint_eq(tlb_flush_all(t), 8);
    ck_assert_uint_eq(count_valid(t), 0);
    ck_assert_int_eq(tlb_lookup(t, 0xC0003000, 0, ACCESS_READ, 0, &x), TLB_MISS);
    const TlbStats *s = tlb_stats(t);
    ck_assert_uint_eq(s->flushes_cr3, 2);
    ck_assert_uint_eq(s->dropped_cr3, 8);
    ck_assert_uint_eq(s->flushes_pge, 1);
    ck_assert_uint_eq(s->dropped_pge, 8);
    tlb_free(t);
}
END_TEST

START_TEST(hierarchy_flushes_and_pde_cache)
{
    /* The same rules through a hierarchy: every array and the PDE cache.
     * PDE-cache entries are never global and INVLPG drops all of the
     * current PCID's (SDM §4.10.4.1). */
    TlbHierConfig c = {
        .itlb_4k = geom(8, 8, PG_4K), .itlb_large = geom(2, 2, PG_2M),
        .dtlb_4k = geom(16, 4, PG_4K), .dtlb_large = geom(4, 4, PG_2M),
        .stlb = geom(64, 4, PG_4K2M), .pde_cache_entries = 4, .policy = "lru",
    };
    GError *err = NULL;
    TlbHierarchy *h = tlb_hier_new_config(&c, 1, &err);
    ck_assert_msg(h, "%s", err ? err->message : "");
    TlbEntry k = ent_4k(0xC0100000, 0, true), u = ent_4k(0x08048000, 0, false);
    TlbEntry big = ent_2m(0x40000000, 0, false);
    tlb_hier_fill(h, ACCESS_READ, 0, &k);      /* dtlb_4k + stlb */
    tlb_hier_fill(h, ACCESS_EXEC, 3, &u);      /* itlb_4k + stlb */
    tlb_hier_fill(h, ACCESS_WRITE, 3, &big);   /* dtlb_large + stlb */
    tlb_hier_pde_fill(h, 0x08048000, 0, 0x5000 | PAE_P | PAE_RW, 0x3000);
    tlb_hier_pde_fill(h, 0xC0100000, 0, 0x6000 | PAE_P | PAE_RW, 0x4018);
    tlb_hier_pde_fill(h, 0xC0100000, 7, 0x7000 | PAE_P | PAE_RW, 0x8018);

    /* MOV CR3 (PCID off): u and big in two arrays each; k stays. */
    ck_assert_uint_eq(tlb_hier_flush_nonglobal(h, 0), 4);
    ck_assert_uint_eq(tlb_hier_stats(h)->pde_dropped, 2);
    uint64_t pde, pa;
    ck_assert(tlb_hier_pde_lookup(h, 0xC0100000, 7, &pde, &pa));
    ck_assert_uint_eq(pa, 0x8018);
    /* INVLPG of an unrelated address under PCID 7 still empties that
     * PCID's PDE-cache entries. */
    ck_assert_uint_eq(tlb_hier_invlpg(h, 0x12345000, 7), 0);
    ck_assert(!tlb_hier_pde_lookup(h, 0xC0100000, 7, &pde, &pa));
    /* INVLPG of the global kernel page: dtlb_4k and stlb. */
    ck_assert_uint_eq(tlb_hier_invlpg(h, 0xC0100ABC, 0), 2);
    const TlbStats *s = tlb_hier_stats(h);
    ck_assert_uint_eq(s->flushes_cr3, 1);
    ck_assert_uint_eq(s->dropped_cr3, 4);
    ck_assert_uint_eq(s->flushes_invlpg, 2);
    ck_assert_uint_eq(s->dropped_invlpg, 2);
    ck_assert_uint_eq(s->pde_dropped, 3);
    for (unsigned i = 0; i < tlb_hier_array_count(h); i++)
        ck_assert_uint_eq(count_valid(tlb_hier_array(h, i)), 0);
    tlb_hier_free(h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tlb");
    TCase *tc = tcase_create("flush");
    tcase_add_test(tc, flush_table);
    tcase_add_test(tc, pcid_isolation);
    tcase_add_test(tc, large_page_covers_region);
    tcase_add_test(tc, global_survives_cr3_dies_on_pge);
    tcase_add_test(tc, hierarchy_flushes_and_pde_cache);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
