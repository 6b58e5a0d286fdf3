/* The MMU's memo of a TLB hit (mmu_fast.h) is a host-speed shortcut; these
 * tests hold it to the architectural rules it must never bend. Each one
 * follows a reference through a change the SDM says a TLB lookup must see
 * (a different PCID, INVLPG, a CR3 reload, CR0.WP) and checks what the
 * access reaches against the rule, with the page tables built by hand:
 *
 *   SDM Vol. 3A §4.10.1:   entries are tagged with the PCID they were made
 *                          under; a lookup under another PCID cannot use them.
 *   §4.10.4.1 (INVLPG):    invalidates the entries for that page.
 *   §4.10.4.1 (MOV to CR3, PCIDE=0): invalidates every non-global entry;
 *                          global ones (CR4.PGE, G=1) stay.
 *   §4.10.4.2:             until invalidated, the old translation may be
 *                          used (vmsplit always uses it: the stale frame).
 *   §4.6:                  with CR0.WP=1 a supervisor write to a read-only
 *                          page faults (#PF, error code P|W = 3).
 * and the counting rule of vmsplit's TLB (tlb.h): N references to one
 * page are N lookups, one miss and N-1 hits. */
#include <check.h>

#include "mmu/mmu.h"
#include "mmu/mmu_fast.h"
#include "mmu/pae.h"
#include "mmu/physmem.h"
#include "tlb/hierarchy.h"


#define LIN 0x00400000u          /* PDPTE 0, PDE 2, PTE 0 */
#define FRAME_A 0x100000u
#define FRAME_B 0x200000u

/* Page tables: PDPT at pdpt, one PD at pdpt + 0x1000, one PT at
 * pdpt + 0x2000 mapping LIN to frame with pte_bits. */
static void map_page(PhysMem *pm, uint32_t pdpt, uint32_t frame, uint64_t pte_bits)
{
    uint32_t pd = pdpt + 0x1000, pt = pdpt + 0x2000;
    physmem_write64(pm, pdpt, pd | PAE_P);
    physmem_write64(pm, pd + 8 * ((LIN >> 21) & 511), pt | PAE_P | PAE_RW | PAE_US | PAE_A);
    physmem_write64(pm, pt + 8 * ((LIN >> 12) & 511), frame | PAE_P | pte_bits);
}

static void set_pte_frame(PhysMem *pm, uint32_t pdpt, uint32_t frame, uint64_t pte_bits)
{
    physmem_write64(pm, pdpt + 0x2000 + 8 * ((LIN >> 12) & 511), frame | PAE_P | pte_bits);
}

/* Frames A and B hold different bytes, so a read tells them apart. */
static PhysMem *new_memory(void)
{
    PhysMem *pm = physmem_new();
    physmem_write8(pm, FRAME_A, 0xAA);
    physmem_write8(pm, FRAME_B, 0xBB);
    return pm;
}

static Mmu *start(PhysMem *pm, uint32_t cr4, uint32_t cr3, uint32_t cr0_extra)
{
    Mmu *m = mmu_new(pm, NULL);
    MmuFault f;
    ck_assert(mmu_write_cr4(m, cr4, &f));
    ck_assert(mmu_write_cr3(m, cr3, &f));
    ck_assert(mmu_write_cr0(m, CR0_PE | CR0_PG | cr0_extra, &f));
    return m;
}

/* The byte the access reaches, or -1 on a fault (*f filled). */
static int touch(Mmu *m, Access a, int cpl, MmuFault *f)
{
    const uint8_t *p = mmu_access(m, LIN, a, cpl, f);
    return p ? *p : -1;
}

static const TlbStats *dtlb(Mmu *m)
{
    return tlb_stats(tlb_hier_l1(mmu_tlb(m), ACCESS_READ, TLB_PAGE_4K));
}

START_TEST(repeated_references_count_one_miss)
{
    PhysMem *pm = new_memory();
    map_page(pm, 0x10000, FRAME_A, PAE_RW | PAE_US | PAE_A | PAE_D);
    Mmu *m = start(pm, CR4_PAE, 0x10000, 0);
    MmuFault f;
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(touch(m, ACCESS_WRITE, 3, &f), 0xAA);
    const TlbStats *s = dtlb(m);
    ck_assert_uint_eq(s->lookups[ACCESS_READ][1], 5);
    ck_assert_uint_eq(s->misses[ACCESS_READ][1], 1);
    ck_assert_uint_eq(s->hits[ACCESS_READ][1], 4);
    ck_assert_uint_eq(s->lookups[ACCESS_WRITE][1], 3);
    ck_assert_uint_eq(s->hits[ACCESS_WRITE][1], 3);   /* D was set: no dirty walk */
    ck_assert_uint_eq(mmu_stats(m)->walks, 1);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(another_pcid_does_not_see_the_entry)
{
    /* Two address spaces mapping LIN to different frames, under PCIDs 1
     * and 2; switching with no flush must still reach the other frame. */
    PhysMem *pm = new_memory();
    map_page(pm, 0x10000, FRAME_A, PAE_RW | PAE_US | PAE_A | PAE_D);
    map_page(pm, 0x20000, FRAME_B, PAE_RW | PAE_US | PAE_A | PAE_D);
    Mmu *m = start(pm, CR4_PAE | CR4_PCIDE, 0x10000 | 1, 0);
    MmuFault f;
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);
    ck_assert(mmu_write_cr3(m, 0x20000 | 2, &f));
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xBB);
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xBB);
    /* Back to PCID 1: its entry survived the switch (no flush). */
    ck_assert(mmu_write_cr3(m, 0x10000 | 1, &f));
    uint64_t walks = mmu_stats(m)->walks;
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);
    ck_assert_uint_eq(mmu_stats(m)->walks, walks);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(invlpg_drops_the_stale_translation)
{
    PhysMem *pm = new_memory();
    map_page(pm, 0x10000, FRAME_A, PAE_RW | PAE_US | PAE_A | PAE_D);
    Mmu *m = start(pm, CR4_PAE, 0x10000, 0);
    MmuFault f;
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);
    set_pte_frame(pm, 0x10000, FRAME_B, PAE_RW | PAE_US | PAE_A | PAE_D);
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);   /* stale: §4.10.4.2 */
    ck_assert_int_eq(touch(m, ACCESS_WRITE, 3, &f), 0xAA);
    mmu_invlpg(m, LIN);
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xBB);
    ck_assert_int_eq(touch(m, ACCESS_WRITE, 3, &f), 0xBB);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(cr3_reload_drops_non_global_keeps_global)
{
    PhysMem *pm = new_memory();
    /* Non-global mapping: a CR3 reload must reach the new frame. */
    map_page(pm, 0x10000, FRAME_A, PAE_RW | PAE_US | PAE_A | PAE_D);
    Mmu *m = start(pm, CR4_PAE | CR4_PGE, 0x10000, 0);
    MmuFault f;
    ck_assert_int_eq(touch(m, ACCESS_READ, 0, &f), 0xAA);
    set_pte_frame(pm, 0x10000, FRAME_B, PAE_RW | PAE_US | PAE_A | PAE_D);
    ck_assert(mmu_write_cr3(m, 0x10000, &f));
    ck_assert_int_eq(touch(m, ACCESS_READ, 0, &f), 0xBB);
    mmu_free(m);
    /* Global mapping: it survives the reload, stale frame and all. */
    map_page(pm, 0x10000, FRAME_A, PAE_RW | PAE_US | PAE_A | PAE_D | PAE_G);
    m = start(pm, CR4_PAE | CR4_PGE, 0x10000, 0);
    ck_assert_int_eq(touch(m, ACCESS_READ, 0, &f), 0xAA);
    set_pte_frame(pm, 0x10000, FRAME_B, PAE_RW | PAE_US | PAE_A | PAE_D | PAE_G);
    ck_assert(mmu_write_cr3(m, 0x10000, &f));
    ck_assert_int_eq(touch(m, ACCESS_READ, 0, &f), 0xAA);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(wp_turned_on_refuses_supervisor_write)
{
    /* A read-only user page: ring 0 may write it while CR0.WP=0. */
    PhysMem *pm = new_memory();
    map_page(pm, 0x10000, FRAME_A, PAE_US | PAE_A | PAE_D);
    Mmu *m = start(pm, CR4_PAE, 0x10000, 0);
    MmuFault f;
    ck_assert_int_eq(touch(m, ACCESS_WRITE, 0, &f), 0xAA);
    ck_assert_int_eq(touch(m, ACCESS_WRITE, 0, &f), 0xAA);
    ck_assert(mmu_write_cr0(m, CR0_PE | CR0_PG | CR0_WP, &f));
    ck_assert_int_eq(touch(m, ACCESS_WRITE, 0, &f), -1);
    ck_assert_uint_eq(f.vector, VEC_PF);
    ck_assert_uint_eq(f.error_code, PF_ERR_P | PF_ERR_W);
    /* Reads are still allowed, and ring 3 cannot write either. */
    ck_assert_int_eq(touch(m, ACCESS_READ, 0, &f), 0xAA);
    ck_assert_int_eq(touch(m, ACCESS_WRITE, 3, &f), -1);
    ck_assert_uint_eq(f.error_code, PF_ERR_P | PF_ERR_W | PF_ERR_U);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(user_cannot_use_a_supervisor_hit)
{
    /* A supervisor page touched by ring 0, then by ring 3: #PF P|U. */
    PhysMem *pm = new_memory();
    map_page(pm, 0x10000, FRAME_A, PAE_RW | PAE_A | PAE_D);
    Mmu *m = start(pm, CR4_PAE, 0x10000, 0);
    MmuFault f;
    ck_assert_int_eq(touch(m, ACCESS_READ, 0, &f), 0xAA);
    ck_assert_int_eq(touch(m, ACCESS_READ, 0, &f), 0xAA);
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), -1);
    ck_assert_uint_eq(f.error_code, PF_ERR_P | PF_ERR_U);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(first_write_to_clean_page_sets_dirty)
{
    /* Clean page (D=0): a write after reads must still make the dirty
     * walk that sets D in the PTE (§4.8), not reuse the read's hit. */
    PhysMem *pm = new_memory();
    map_page(pm, 0x10000, FRAME_A, PAE_RW | PAE_US | PAE_A);
    Mmu *m = start(pm, CR4_PAE, 0x10000, 0);
    MmuFault f;
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);
    ck_assert_int_eq(touch(m, ACCESS_READ, 3, &f), 0xAA);
    ck_assert_int_eq(touch(m, ACCESS_WRITE, 3, &f), 0xAA);
    uint64_t pte = physmem_read64(pm, 0x10000 + 0x2000 + 8 * ((LIN >> 12) & 511));
    ck_assert(pte & PAE_D);
    ck_assert_uint_eq(dtlb(m)->dirty_walks[ACCESS_WRITE][1], 1);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

/* Each memo is one host cache line (mmu_fast.h): the Mmu is allocated
 * aligned to it. */
START_TEST(memos_are_cache_lines)
{
    PhysMem *pm = new_memory();
    Mmu *m = mmu_new(pm, NULL);
    for (unsigned side = 0; side < 2; side++)
        for (uint32_t page = 0; page < 2u << MEMO_BITS; page++) {
            const MmuMemo *mm = mmu_memo_at(m, page << PAGE_SHIFT,
                                            side ? ACCESS_EXEC : ACCESS_READ);
            ck_assert_uint_eq((uintptr_t)mm % 64, 0);
        }
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mmu_memo");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, repeated_references_count_one_miss);
    tcase_add_test(tc, another_pcid_does_not_see_the_entry);
    tcase_add_test(tc, invlpg_drops_the_stale_translation);
    tcase_add_test(tc, cr3_reload_drops_non_global_keeps_global);
    tcase_add_test(tc, wp_turned_on_refuses_supervisor_write);
    tcase_add_test(tc, user_cannot_use_a_supervisor_hit);
    tcase_add_test(tc, first_write_to_clean_page_sets_dirty);
    tcase_add_test(tc, memos_are_cache_lines);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
