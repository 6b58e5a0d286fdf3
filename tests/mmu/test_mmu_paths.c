/* The MMU's only-array miss path (mmu.c miss_only_array) and its memos are host-speed
 * shortcuts: with them on, every reference must reach the same byte or
 * the same fault, and leave every counter, every cycle and the TLB's
 * contents and replacement order exactly as the general path does (with
 * mmu_set_shortcuts(m, false): tlb_hier_lookup_rest, the full walk
 * interface, tlb_hier_fill, no memo), which tests/tlb/test_model.c holds to
 * a naive TLB. Two MMUs over two identical memories run the same random
 * references and control-register events; after each step their results,
 * and every few steps all statistics and the TLB's canonical snapshot,
 * must agree. The page tables mix every case the only-array miss path must decline
 * or hand on: not-present and reserved-bit entries, clean and
 * not-accessed pages (the full walk sets A/D), global pages, 2 MiB pages,
 * supervisor and read-only pages, frames never written. */
#include <check.h>
#include <string.h>

#include "preset/preset.h"
#include "mmu/cache.h"
#include "mmu/mmu.h"
#include "mmu/mmu_fast.h"
#include "mmu/mmu_state.h"
#include "mmu/pae.h"
#include "mmu/physmem.h"
#include "tlb/hierarchy.h"
#include "tlb/policy.h"
#include "tlb/tlb_state.h"


#define PDPT 0x1000u
#define PD0 0x2000u              /* PDPTE 0: linear 0 - 1 GiB */
#define PT_BASE 0x10000u         /* page tables of PD0 entries 0..NPT-1 */
#define NPT 3
#define FRAMES 0x400000u         /* the pages' frames from here */
#define NPAGES (NPT * 512)
#define BIG_PDE 8                /* PD0 entries 8..9: 2 MiB pages */

static uint64_t rnd(uint64_t *s) { return tlb_splitmix64(s); }

/* A random PTE (or 2 MiB PDE with PS) for page i: mostly the fast
 * path's case (present, accessed, permitted), often not. */
static uint64_t random_leaf(uint64_t *s, uint64_t frame)
{
    uint64_t x = rnd(s), e = frame;
    if (x % 20 != 0)
        e |= PAE_P;
    if ((x >> 8) % 10 < 7)
        e |= PAE_RW;
    if ((x >> 12) % 10 < 8)
        e |= PAE_US;
    if ((x >> 16) % 10 < 8)
        e |= PAE_A;
    if ((x >> 20) % 2)
        e |= PAE_D;
    if ((x >> 24) % 5 == 0)
        e |= PAE_G;
    if ((x >> 28) % 60 == 0)
        e |= 1ULL << 40;         /* reserved: #PF with RSVD */
    if ((x >> 36) % 8 == 0)
        e |= PAE_XD;             /* reserved unless EFER.NXE */
    return e;
}

/* 32-bit paging's tables (CR4.PAE = 0) beside the PAE ones: a page
 * directory at LPD whose entries 0..1 name page tables of 4-byte random
 * leaves over the same frames, and entries LBIG..LBIG+1 4 MiB pages (PS,
 * taken as such with CR4.PSE = 1, as tables without it). */
#define LPD 0x5000u
#define LPT_BASE 0x20000u
#define LNPT 2
#define LBIG 8

static void build_legacy(PhysMem *pm, uint64_t seed)
{
    uint64_t s = seed ^ 0x5a5a;
    for (unsigned t = 0; t < LNPT; t++)
        physmem_write32(pm, LPD + 4 * t,
                        (LPT_BASE + 0x1000u * t) | PAE_P | PAE_RW | PAE_US | (t ? 0 : PAE_A));
    for (unsigned i = 0; i < LNPT * 1024; i++)
        physmem_write32(pm, LPT_BASE + 4 * i,
                        (uint32_t)(random_leaf(&s, FRAMES + 0x1000ull * (i % NPAGES)) & 0xFFFFFFFFu));
    for (unsigned b = 0; b < 2; b++) {
        /* Bit 17 now and then: reserved in a 4 MiB PDE (#PF with RSVD). */
        uint32_t e = (uint32_t)(random_leaf(&s, 0x40000000ull + 0x400000ull * b) & 0xFFFFFFFFu);
        physmem_write32(pm, LPD + 4 * (LBIG + b), e | PAE_PS | PAE_P | (rnd(&s) % 4 ? 0 : 1u << 17));
    }
}

static void build(PhysMem *pm, uint64_t seed)
{
    build_legacy(pm, seed);
    uint64_t s = seed;
    physmem_write64(pm, PDPT, PD0 | PAE_P);
    for (unsigned t = 0; t < NPT; t++) {
        uint64_t pde = (PT_BASE + 0x1000u * t) | PAE_P | PAE_RW | PAE_US;
        if (t != 1)
            pde |= PAE_A;        /* table 1's first walk sets its PDE's A */
        physmem_write64(pm, PD0 + 8 * t, pde);
    }
    for (unsigned i = 0; i < NPAGES; i++) {
        uint64_t frame = FRAMES + 0x1000ull * i;
        physmem_write64(pm, PT_BASE + 8 * i, random_leaf(&s, frame));
        if (i % 3) {             /* the other frames were never written */
            uint8_t buf[64];
            for (unsigned k = 0; k < sizeof buf; k++)
                buf[k] = (uint8_t)(i * 7 + k);
            physmem_write(pm, frame, buf, sizeof buf);
        }
    }
    for (unsigned b = 0; b < 2; b++)
        physmem_write64(pm, PD0 + 8 * (BIG_PDE + b),
                        (random_leaf(&s, 0x40000000ull + 0x200000ull * b) & ~(1ULL << 40)) |
                            PAE_PS | PAE_P);
}

static Mmu *start(PhysMem *pm, const Preset *p, const TlbHierConfig *cfg, bool shortcuts,
                  bool legacy)
{
    GError *err = NULL;
    Mmu *m = mmu_new_full(pm, p, cfg, 7, &err);
    ck_assert_msg(m, "%s", err ? err->message : "");
    mmu_set_shortcuts(m, shortcuts);
    MmuFault f;
    ck_assert(mmu_write_cr4(m, legacy ? CR4_PSE | CR4_PGE : CR4_PAE | CR4_PGE, &f));
    ck_assert(mmu_write_cr3(m, legacy ? LPD : PDPT, &f));
    ck_assert(mmu_write_cr0(m, CR0_PE | CR0_PG, &f));
    return m;
}

static uint32_t random_lin(uint64_t x, bool legacy)
{
    if (legacy && x % 16 == 0)   /* a 4 MiB page (or a table without PSE) */
        return (uint32_t)(LBIG + (x >> 8) % 2) << 22 | (uint32_t)((x >> 12) & 0x3FFFFC);
    if (x % 16 == 0)             /* a 2 MiB page */
        return (uint32_t)(BIG_PDE + (x >> 8) % 2) << 21 | (uint32_t)((x >> 12) & 0x1FFFFC);
    /* A pool wider than the TLBs, denser at the start (hits and misses). */
    unsigned page = (x >> 8) % 4 ? (unsigned)((x >> 16) % 100) : (unsigned)((x >> 16) % NPAGES);
    return page << 12 | (uint32_t)((x >> 40) & 0xFFC);
}

static void same_stats(Mmu *a, Mmu *b)
{
    ck_assert(memcmp(mmu_stats(a), mmu_stats(b), sizeof(MmuStats)) == 0);
    ck_assert(memcmp(cache_stats(mmu_cache(a)), cache_stats(mmu_cache(b)), sizeof(CacheStats)) == 0);
    TlbHierarchy *ha = mmu_tlb(a), *hb = mmu_tlb(b);
    for (size_t k = 0; k < tlb_stats_count(); k++) {
        TlbStatItem x = tlb_stats_item(tlb_hier_stats(ha), k);
        TlbStatItem y = tlb_stats_item(tlb_hier_stats(hb), k);
        ck_assert_msg(x.value == y.value, "total %s: %llu != %llu", x.name,
                      (unsigned long long)x.value, (unsigned long long)y.value);
        for (unsigned i = 0; i < tlb_hier_array_count(ha); i++) {
            x = tlb_stats_item(tlb_stats(tlb_hier_array(ha, i)), k);
            y = tlb_stats_item(tlb_stats(tlb_hier_array(hb, i)), k);
            ck_assert_msg(x.value == y.value, "%s %s: %llu != %llu",
                          tlb_name(tlb_hier_array(ha, i)), x.name,
                          (unsigned long long)x.value, (unsigned long long)y.value);
        }
    }
    ck_assert(tlb_state_comparable(ha));
    for (unsigned i = 0; i < tlb_state_nparts(ha); i++) {
        GByteArray *sa = g_byte_array_new(), *sb = g_byte_array_new();
        tlb_state_append_part(ha, i, sa);
        tlb_state_append_part(hb, i, sb);
        ck_assert_uint_eq(sa->len, sb->len);
        ck_assert(memcmp(sa->data, sb->data, sa->len) == 0);
        g_byte_array_unref(sa);
        g_byte_array_unref(sb);
    }
}

/* The same reference to lin in both MMUs, through the CPU's entry (cpu)
 * or mmu_access: the same bytes or the same fault. Returns whether it
 * reached memory. */
static bool access_both(Mmu *a, Mmu *b, uint32_t lin, Access acc, int cpl, bool cpu,
                        MmuFault *fa, MmuFault *fb)
{
    const uint8_t *ua = cpu ? mmu_access_fast(a, lin, acc, cpl, fa)
                            : mmu_access(a, lin, acc, cpl, fa);
    const uint8_t *ub = cpu ? mmu_access_fast(b, lin, acc, cpl, fb)
                            : mmu_access(b, lin, acc, cpl, fb);
    ck_assert_int_eq(ua != NULL, ub != NULL);
    if (ua) {
        /* The frame's written head (build) identifies it. */
        unsigned off = lin & 0xFFF;
        ck_assert_uint_eq(*ua, *ub);
        ck_assert(memcmp(ua - off, ub - off, 64) == 0);
    }
    return ua != NULL;
}

static void run_cfg(const char *preset, const TlbHierConfig *cfg, uint64_t seed, bool legacy)
{
    Preset *p = preset ? preset_load(preset, NULL) : NULL;
    ck_assert(!preset || p);
    PhysMem *pa = physmem_new(), *pb = physmem_new();
    build(pa, seed);
    build(pb, seed);
    Mmu *a = start(pa, p, cfg, true, legacy), *b = start(pb, p, cfg, false, legacy);
    uint64_t s = seed * 977 + 1, hits = 0, faults = 0;
    uint32_t cr0 = CR0_PE | CR0_PG, cr4 = legacy ? CR4_PSE | CR4_PGE : CR4_PAE | CR4_PGE;
    uint64_t efer = 0;
    for (int step = 0; step < 40000; step++) {
        uint64_t x = rnd(&s);
        unsigned op = x % 1000;
        MmuFault fa = { 0 }, fb = { 0 };
        if (op < 940) {
            uint32_t lin = random_lin(rnd(&s), legacy);
            Access acc = (Access)((x >> 10) % 3);
            int cpl = (x >> 12) % 3 ? 3 : 0;
            if ((x >> 14) % 4 == 0 || acc == ACCESS_EXEC) {
                uint64_t qa = 0, qb = 0;
                bool oa = mmu_translate(a, lin, acc, cpl, &qa, &fa);
                bool ob = mmu_translate(b, lin, acc, cpl, &qb, &fb);
                ck_assert_int_eq(oa, ob);
                ck_assert_uint_eq(qa, qb);
                faults += !oa;
            } else {
                /* Half through the CPU's entry (mmu_access_fast, whose
                 * memo miss takes mmu_access_lookup), half through
                 * mmu_access (mmu_translate_fast). */
                bool cpu = (x >> 16) % 2;
                bool ok = access_both(a, b, lin, acc, cpl, cpu, &fa, &fb);
                /* Often a store right after a load to the same place,
                 * as pageloop makes: the fill of a clean page (D=0)
                 * meets the dirty miss on the entry it just made. */
                if (ok && acc == ACCESS_READ && (x >> 18) % 4 == 0)
                    ok = access_both(a, b, lin, ACCESS_WRITE, cpl, cpu, &fa, &fb);
                faults += !ok;
                hits += ok;
            }
            ck_assert_uint_eq(fa.vector, fb.vector);
            ck_assert_uint_eq(fa.error_code, fb.error_code);
            ck_assert_uint_eq(fa.cr2, fb.cr2);
        } else if (op < 960) {
            ck_assert(mmu_write_cr3(a, legacy ? LPD : PDPT, &fa));
            ck_assert(mmu_write_cr3(b, legacy ? LPD : PDPT, &fb));
        } else if (op < 975) {
            uint32_t lin = random_lin(rnd(&s), legacy);
            mmu_invlpg(a, lin);
            mmu_invlpg(b, lin);
        } else if (op < 990) {
            /* Page tables change under the TLB (stale entries stay until
             * flushed, in both). */
            uint64_t y = rnd(&s);
            unsigned i = (unsigned)(y % 100);
            uint64_t e = random_leaf(&s, FRAMES + 0x1000ull * i);
            physmem_write64(pa, PT_BASE + 8 * i, e);
            physmem_write64(pb, PT_BASE + 8 * i, e);
        } else if (op < 994) {
            cr0 ^= CR0_WP;
            ck_assert(mmu_write_cr0(a, cr0, &fa));
            ck_assert(mmu_write_cr0(b, cr0, &fb));
        } else if (op < 997) {
            /* NXE: XD becomes a right instead of a reserved bit (the
             * fast walk's masks, Mmu.fast_masks, change with it). */
            efer ^= EFER_NXE;
            mmu_write_efer(a, efer);
            mmu_write_efer(b, efer);
        } else {
            /* In 32-bit paging, CR4.PSE too (4 MiB pages come and go;
             * the TLB keeps what it has until flushed). */
            cr4 ^= legacy && (x >> 20) % 2 ? CR4_PSE : CR4_PGE;
            ck_assert(mmu_write_cr4(a, cr4, &fa));
            ck_assert(mmu_write_cr4(b, cr4, &fb));
        }
        if (step % 500 == 0)
            same_stats(a, b);
    }
    same_stats(a, b);
    ck_assert_uint_gt(hits, 10000);
    ck_assert_uint_gt(faults, 500);
    ck_assert_uint_gt(mmu_stats(a)->walks, 5000);
    mmu_free(a);
    mmu_free(b);
    physmem_free(pa);
    physmem_free(pb);
    preset_free(p);
}

static void run(const char *preset, uint64_t seed) { run_cfg(preset, NULL, seed, false); }

/* One 64-entry fully associative array per side holding both sizes, with
 * a policy whose hit needs no stamp (FIFO, random): the only-array miss path and
 * memos serve it, and its memos' tokens stamp the array's sinks
 * (tlb_token.h). */
static void run_policy(const char *policy, uint64_t seed)
{
    TlbGeom g = { .entries = 64, .ways = 64, .page_sizes = PRESET_PG_4K | PRESET_PG_2M };
    TlbHierConfig c = { .itlb_4k = g, .dtlb_4k = g, .policy = policy };
    run_cfg(NULL, &c, seed, false);
}

/* The same with true LRU and a first-level hit that costs cycles (a
 * what-if geometry): the memos' hit latency (MmuFast.hit_lat, mmu_fast.h)
 * must be charged as the TLB's own hit path charges it. */
static void run_hit_latency(uint64_t seed)
{
    TlbGeom g = { .entries = 64, .ways = 64, .hit_latency = 3,
                  .page_sizes = PRESET_PG_4K | PRESET_PG_2M };
    TlbHierConfig c = { .itlb_4k = g, .dtlb_4k = g, .policy = "lru" };
    run_cfg(NULL, &c, seed, false);
}

/* A write that finds its page's entry with D not known (filled by a
 * read while the PTE's D was 0) is a dirty miss, not a miss: the probe
 * found the entry. If the PTE's D is meanwhile 1, the walker's fast path
 * would succeed, yet the only-array miss path must not take the miss (it would add
 * a second entry for the page): the general path refreshes the entry in
 * place. Through each entry point, on the P4 and with no preset. */
static void dirty_miss_with_d_set(const char *preset)
{
    Preset *p = preset ? preset_load(preset, NULL) : NULL;
    PhysMem *pa = physmem_new(), *pb = physmem_new();
    build(pa, 9);
    build(pb, 9);
    Mmu *a = start(pa, p, NULL, true, false), *b = start(pb, p, NULL, false, false);
    for (unsigned i = 1; i < 60; i++) {
        uint32_t lin = i << 12 | 0x40;
        uint64_t pte = (FRAMES + 0x1000ull * i) | PAE_P | PAE_RW | PAE_US | PAE_A;
        physmem_write64(pa, PT_BASE + 8 * i, pte);
        physmem_write64(pb, PT_BASE + 8 * i, pte);
        physmem_write32(pa, FRAMES + 0x1000ull * i, i);   /* the frame exists */
        physmem_write32(pb, FRAMES + 0x1000ull * i, i);
        MmuFault fa = { 0 }, fb = { 0 };
        unsigned how = i % 3;
        for (int k = 0; k < 2; k++) {    /* the read that fills, then the write */
            Access acc = k ? ACCESS_WRITE : ACCESS_READ;
            if (k) {
                physmem_write64(pa, PT_BASE + 8 * i, pte | PAE_D);
                physmem_write64(pb, PT_BASE + 8 * i, pte | PAE_D);
            }
            if (how == 2) {
                uint64_t qa = 0, qb = 0;
                ck_assert(mmu_translate(a, lin, acc, 3, &qa, &fa));
                ck_assert(mmu_translate(b, lin, acc, 3, &qb, &fb));
                ck_assert_uint_eq(qa, qb);
            } else {
                ck_assert(access_both(a, b, lin, acc, 3, how == 1, &fa, &fb));
            }
        }
        same_stats(a, b);
    }
    mmu_free(a);
    mmu_free(b);
    physmem_free(pa);
    physmem_free(pb);
    preset_free(p);
}

START_TEST(p4_dirty_miss_with_d_set) { dirty_miss_with_d_set("p4-northwood"); }
END_TEST
START_TEST(default_dirty_miss_with_d_set) { dirty_miss_with_d_set(NULL); }
END_TEST
START_TEST(fifo_fused_path_matches_general) { run_policy("fifo", 6); }
END_TEST
START_TEST(random_fused_path_matches_general) { run_policy("random", 7); }
END_TEST
START_TEST(hit_latency_fused_path_matches_general) { run_hit_latency(8); }
END_TEST
START_TEST(p4_fused_path_matches_general) { run("p4-northwood", 1); }
END_TEST
START_TEST(p4_fused_path_matches_general_2) { run("p4-northwood", 2); }
END_TEST
/* No preset: 64-entry 4-way arrays of both sizes, no caches. */
START_TEST(default_fused_path_matches_general) { run(NULL, 3); }
END_TEST
/* Presets the only-array miss path does not serve (an STLB, a PDE cache, separate
 * large-page arrays): the shortcuts must still change nothing. */
START_TEST(skylake_matches_general) { run("skylake", 4); }
END_TEST
START_TEST(p3_matches_general) { run("p3-coppermine", 5); }
END_TEST
/* 32-bit paging (4-byte entries, 4 MiB pages, CR4.PSE toggled): the P4
 * (the only-array miss path and memos, 4 MiB pages in the 4 KiB array),
 * Skylake (separate large arrays listing 2M,4M, an STLB without 4M, a PDE cache keyed by
 * 4 MiB regions) and no preset. */
START_TEST(legacy_p4_matches_general) { run_cfg("p4-northwood", NULL, 11, true); }
END_TEST
START_TEST(legacy_skylake_matches_general) { run_cfg("skylake", NULL, 12, true); }
END_TEST
START_TEST(legacy_default_matches_general) { run_cfg(NULL, NULL, 13, true); }
END_TEST

int main(void)
{
    Suite *s = suite_create("mmu_paths");
    TCase *tc = tcase_create("fused");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, p4_fused_path_matches_general);
    tcase_add_test(tc, p4_fused_path_matches_general_2);
    tcase_add_test(tc, default_fused_path_matches_general);
    tcase_add_test(tc, skylake_matches_general);
    tcase_add_test(tc, p3_matches_general);
    tcase_add_test(tc, legacy_p4_matches_general);
    tcase_add_test(tc, legacy_skylake_matches_general);
    tcase_add_test(tc, legacy_default_matches_general);
    tcase_add_test(tc, p4_dirty_miss_with_d_set);
    tcase_add_test(tc, default_dirty_miss_with_d_set);
    tcase_add_test(tc, fifo_fused_path_matches_general);
    tcase_add_test(tc, random_fused_path_matches_general);
    tcase_add_test(tc, hit_latency_fused_path_matches_general);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
