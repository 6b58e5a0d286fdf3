/* 32-bit paging (CR4.PAE = 0) through the MMU's public interface: the
 * translation, the TLB's 4 MiB entries, MOV CR3 and the mode switches,
 * each against a sequence worked by hand from the Intel SDM Vol. 3A:
 *
 *   §4.3:        10:10:12 (10:22 for a 4 MiB page); CR3[31:12] is the page
 *                directory, CR3's PWT/PCD do not move it; 4-byte entries;
 *                PDE.PS maps a 4 MiB page only with CR4.PSE = 1; a 4 MiB
 *                PDE's bits 16:13 are address bits 35:32 (PSE-36).
 *   §4.4.1:      only PAE has PDPTE registers: MOV CR3 in 32-bit paging
 *                loads nothing (no memory reference, no #GP).
 *   §4.8:        A in each entry used, D in the leaf on a write; a 4-byte
 *                entry's update leaves its neighbour alone.
 *   §4.1.2:      MOV to CR4 moves between 32-bit and PAE paging with PG=1;
 *                entering PAE loads the PDPTEs (#GP(0) on a reserved bit,
 *                nothing changed).
 *   §2.5:        setting CR0.PG with CR0.PE = 0 is #GP.
 *   §4.10.2/4.10.4.1: a 4 MiB page is one TLB entry, hit from anywhere
 *                in it; INVLPG of any address inside removes it.
 *   §4.7:        32-bit paging has no XD: EFER.NXE changes nothing and
 *                the I/D bit of the error code is never set. */
#include <check.h>

#include "mmu/mmu.h"
#include "mmu/pae.h"
#include "mmu/physmem.h"
#include "tlb/hierarchy.h"
#include "tlb/tlb.h"

/* The hand-built tables' own constants (SDM Figure 4-4), not pae.h's. */
#define P 0x001u
#define RW 0x002u
#define US 0x004u
#define A 0x020u
#define D 0x040u
#define PS 0x080u

#define PD 0x00001000u           /* page directory */
#define PT 0x00002000u           /* a page table */
#define LIN4K 0x00412ABCu        /* PDE 1, PTE 0x12, offset 0xABC */
#define FRAME4K 0x00345000u
#define LIN4M 0x00C12345u        /* PDE 3, offset 0x012345 */
#define BASE4M 0x01400000u

static void pd_set(PhysMem *pm, unsigned i, uint32_t v) { physmem_write32(pm, PD + 4 * i, v); }

/* PDE 1 -> PT, PTE 0x12 -> FRAME4K (R/W, U/S); PDE 3 a 4 MiB page at
 * BASE4M with PSE-36 bits pse36 (address bits 35:32), A set. Neighbours
 * of the 4 KiB walk's entries hold sentinels. */
static PhysMem *tables(uint32_t pse36)
{
    PhysMem *pm = physmem_new();
    pd_set(pm, 0, 0xDEADB000u);  /* not present: bit 0 clear */
    pd_set(pm, 1, PT | P | RW | US);
    pd_set(pm, 2, 0xCAFE0006u);  /* not present */
    pd_set(pm, 3, BASE4M | (pse36 << 13) | P | RW | US | A | PS);
    physmem_write32(pm, PT + 4 * 0x11, 0x11111110u);
    physmem_write32(pm, PT + 4 * 0x12, FRAME4K | P | RW | US);
    physmem_write32(pm, PT + 4 * 0x13, 0x33333330u);
    return pm;
}

/* Paging on in 32-bit mode with CR4 = cr4 (PAE clear), CR3 = cr3. */
static Mmu *start(PhysMem *pm, uint32_t cr4, uint32_t cr3)
{
    Mmu *m = mmu_new(pm, NULL);
    MmuFault f;
    ck_assert(mmu_write_cr4(m, cr4, &f));
    ck_assert(mmu_write_cr3(m, cr3, &f));
    ck_assert(mmu_write_cr0(m, CR0_PE | CR0_PG, &f));
    return m;
}

START_TEST(walk_4k_two_levels)
{
    PhysMem *pm = tables(0);
    /* CR3's PWT (bit 3) and PCD (bit 4) set: the directory is still
     * CR3[31:12]. */
    Mmu *m = start(pm, 0, PD | 0x18);
    uint64_t pa;
    MmuFault f;
    ck_assert(mmu_translate(m, LIN4K, ACCESS_READ, 3, &pa, &f));
    ck_assert_uint_eq(pa, FRAME4K | 0xABC);
    /* A set in both entries, D not (a read); neighbours untouched. */
    ck_assert_uint_eq(physmem_read32(pm, PD + 4), PT | P | RW | US | A);
    ck_assert_uint_eq(physmem_read32(pm, PT + 4 * 0x12), FRAME4K | P | RW | US | A);
    ck_assert_uint_eq(physmem_read32(pm, PD + 8), 0xCAFE0006u);
    ck_assert_uint_eq(physmem_read32(pm, PT + 4 * 0x13), 0x33333330u);
    ck_assert_uint_eq(physmem_read32(pm, PT + 4 * 0x11), 0x11111110u);
    /* A write through mmu_write: D set (the TLB entry was not dirty:
     * a walk), the byte lands in the frame. */
    ck_assert(mmu_write(m, LIN4K, 4, 3, 0x12345678u, &f));
    ck_assert_uint_eq(physmem_read32(pm, PT + 4 * 0x12), FRAME4K | P | RW | US | A | D);
    ck_assert_uint_eq(physmem_read32(pm, PT + 4 * 0x13), 0x33333330u);
    ck_assert_uint_eq(physmem_read32(pm, FRAME4K | 0xABC), 0x12345678u);
    uint32_t v;
    ck_assert(mmu_read(m, LIN4K, 4, ACCESS_READ, 0, &v, &f));
    ck_assert_uint_eq(v, 0x12345678u);
    uint8_t *p = mmu_access(m, LIN4K + 1, ACCESS_READ, 3, &f);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(*p, 0x56);
    /* Not present (PDE 0): #PF, error code U only (a read at CPL 3). */
    ck_assert(!mmu_translate(m, 0x00001000u, ACCESS_READ, 3, &pa, &f));
    ck_assert_uint_eq(f.vector, VEC_PF);
    ck_assert_uint_eq(f.error_code, 0x4);
    ck_assert_uint_eq(f.cr2, 0x00001000u);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(cr3_write_loads_nothing)
{
    PhysMem *pm = tables(0);
    /* A "PDPT" at PD that PAE would refuse (bits 2:1 of a present PDPTE
     * are reserved: PDE 1 has R/W and U/S): no #GP in 32-bit paging. */
    Mmu *m = start(pm, CR4_PSE, PD);
    ck_assert_uint_eq(mmu_stats(m)->cr3_cycles, 0);
    uint64_t cycles = mmu_stats(m)->cycles;
    MmuFault f;
    for (int i = 0; i < 10; i++)
        ck_assert(mmu_write_cr3(m, PD, &f));
    ck_assert_uint_eq(mmu_stats(m)->cr3_writes, 11);
    ck_assert_uint_eq(mmu_stats(m)->cr3_cycles, 0);
    ck_assert_uint_eq(mmu_stats(m)->cycles, cycles);      /* no reference made */
    ck_assert_uint_eq(mmu_cr3(m), PD);
    /* And the MOV CR3 flushed (non-global entries): a walk again. */
    uint64_t pa;
    ck_assert(mmu_translate(m, LIN4K, ACCESS_READ, 0, &pa, &f));
    uint64_t w = mmu_stats(m)->walks;
    ck_assert(mmu_translate(m, LIN4K, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(mmu_stats(m)->walks, w);
    ck_assert(mmu_write_cr3(m, PD, &f));
    ck_assert(mmu_translate(m, LIN4K, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(mmu_stats(m)->walks, w + 1);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(page_4m_one_tlb_entry)
{
    /* PSE-36 bits 0x5: the page is at 0x5_0140_0000. */
    PhysMem *pm = tables(0x5);
    Mmu *m = start(pm, CR4_PSE, PD);
    uint64_t pa;
    MmuFault f;
    ck_assert(mmu_translate(m, LIN4M, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, 0x500000000ULL | BASE4M | 0x012345);
    ck_assert_uint_eq(mmu_stats(m)->walks, 1);
    /* One 4 MiB entry in the array holding 4M. */
    const Tlb *t = tlb_hier_l1(mmu_tlb(m), ACCESS_READ, TLB_PAGE_4M);
    ck_assert_ptr_nonnull(t);
    TlbEntry e;
    ck_assert(tlb_peek(t, 0x00C00000u, 0, &e, NULL, NULL));
    ck_assert_uint_eq(e.page_size, TLB_PAGE_4M);
    ck_assert_uint_eq(e.vpn, 3);
    /* Anywhere in the 4 MiB: a hit, no walk. */
    ck_assert(mmu_translate(m, 0x00C00000u, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, 0x500000000ULL | BASE4M);
    ck_assert(mmu_translate(m, 0x00FFFFFFu, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, 0x500000000ULL | BASE4M | 0x3FFFFF);
    ck_assert_uint_eq(mmu_stats(m)->walks, 1);
    /* Outside it (PDE 2, not present): a fault. */
    ck_assert(!mmu_translate(m, 0x00BFFFFFu, ACCESS_READ, 0, &pa, &f));
    /* INVLPG of another address inside removes it. */
    mmu_invlpg(m, 0x00E01234u);
    ck_assert(!tlb_peek(t, 0x00C00000u, 0, &e, NULL, NULL));
    uint64_t w = mmu_stats(m)->walks;
    ck_assert(mmu_translate(m, LIN4M, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(mmu_stats(m)->walks, w + 1);
    /* A write sets D in the PDE, the leaf (A was already set). */
    ck_assert(mmu_write(m, LIN4M, 1, 0, 0x77, &f));
    ck_assert_uint_eq(physmem_read32(pm, PD + 12),
                      BASE4M | (0x5u << 13) | P | RW | US | A | D | PS);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(pse_off_ps_ignored)
{
    /* PSE off: PDE 3's PS is ignored; bits 31:12 name a page table at
     * BASE4M + (0x5 << 13) = 0x0140A000. Its entry 0x012 maps a frame. */
    PhysMem *pm = tables(0x5);
    uint32_t table = BASE4M | (0x5u << 13);
    physmem_write32(pm, table + 4 * 0x012, 0x00777000u | P);
    Mmu *m = start(pm, 0, PD);
    uint64_t pa;
    MmuFault f;
    ck_assert(mmu_translate(m, LIN4M, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, 0x00777345u);
    ck_assert_uint_eq(physmem_read32(pm, table + 4 * 0x012), 0x00777000u | P | A);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(reserved_bit_of_4m_pde)
{
    /* Bit 21 of a 4 MiB PDE is reserved: #PF with P and RSVD (and W, U). */
    PhysMem *pm = tables(0);
    pd_set(pm, 3, BASE4M | (1u << 21) | P | RW | US | PS);
    Mmu *m = start(pm, CR4_PSE, PD);
    uint64_t pa;
    MmuFault f;
    ck_assert(!mmu_translate(m, LIN4M, ACCESS_WRITE, 3, &pa, &f));
    ck_assert_uint_eq(f.error_code, 0x1 | 0x2 | 0x4 | 0x8);
    /* Bit 17 (above MAXPHYADDR 36 in the PSE-36 field) too. */
    pd_set(pm, 3, BASE4M | (1u << 17) | P | RW | US | PS);
    ck_assert(!mmu_translate(m, LIN4M, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(f.error_code, 0x1 | 0x8);
    /* Entry unchanged by the faults. */
    ck_assert_uint_eq(physmem_read32(pm, PD + 12), BASE4M | (1u << 17) | P | RW | US | PS);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(nxe_has_no_effect)
{
    PhysMem *pm = tables(0);
    Mmu *m = start(pm, CR4_PSE, PD);
    mmu_write_efer(m, EFER_NXE);
    uint64_t pa;
    MmuFault f;
    /* A fetch from a present page: allowed (no XD to refuse it). */
    ck_assert(mmu_translate(m, LIN4K, ACCESS_EXEC, 3, &pa, &f));
    /* A fetch from a not-present page: U only, never I/D. */
    ck_assert(!mmu_translate(m, 0x00001000u, ACCESS_EXEC, 3, &pa, &f));
    ck_assert_uint_eq(f.error_code, 0x4);
    /* A supervisor-only page fetched at CPL 3: P|U. */
    physmem_write32(pm, PT + 4 * 0x12, FRAME4K | P | RW);
    mmu_invlpg(m, LIN4K);
    ck_assert(!mmu_translate(m, LIN4K, ACCESS_EXEC, 3, &pa, &f));
    ck_assert_uint_eq(f.error_code, 0x5);
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(pg_needs_pe)
{
    PhysMem *pm = tables(0);
    Mmu *m = mmu_new(pm, NULL);
    MmuFault f;
    ck_assert(mmu_write_cr3(m, PD, &f));
    ck_assert(!mmu_write_cr0(m, CR0_PG, &f));
    ck_assert_uint_eq(f.vector, VEC_GP);
    ck_assert_uint_eq(mmu_cr0(m) & CR0_PG, 0);
    ck_assert(mmu_write_cr0(m, CR0_PE | CR0_PG, &f));   /* no PAE: legal */
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

START_TEST(switch_to_pae_and_back)
{
    PhysMem *pm = tables(0);
    /* A PAE hierarchy at 0x10000 mapping LIN4K to another frame. */
    const uint32_t pdpt = 0x10000, pd = 0x11000, pt = 0x12000;
    physmem_write64(pm, pdpt, pd | P);
    physmem_write64(pm, pd + 8 * 2, pt | P | RW | US);
    physmem_write64(pm, pt + 8 * 0x12, 0x00999000u | P | RW | US);
    Mmu *m = start(pm, CR4_PSE, PD);
    uint64_t pa;
    MmuFault f;
    ck_assert(mmu_translate(m, LIN4K, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, FRAME4K | 0xABC);
    /* CR3 -> the PDPT while still in 32-bit paging: no load. */
    ck_assert(mmu_write_cr3(m, pdpt, &f));
    ck_assert_uint_eq(mmu_stats(m)->cr3_cycles, 0);
    /* Setting CR4.PAE with PG = 1 loads the four PDPTEs from CR3 (their
     * cost in cr3_cycles) and flushes: the PAE translation. */
    ck_assert(mmu_write_cr4(m, CR4_PSE | CR4_PAE, &f));
    ck_assert_uint_gt(mmu_stats(m)->cr3_cycles, 0);
    ck_assert(mmu_translate(m, LIN4K, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, 0x00999ABCu);
    /* Back to 32-bit paging with PG = 1: legal, flushes, CR3 names a
     * page directory again (here the PDPT's frame read as a PD: entry 1
     * is the second half of PDPTE 0, zero: not present). */
    uint64_t c = mmu_stats(m)->cr3_cycles;
    ck_assert(mmu_write_cr4(m, CR4_PSE, &f));
    ck_assert_uint_eq(mmu_stats(m)->cr3_cycles, c);
    ck_assert(!mmu_translate(m, LIN4K, ACCESS_READ, 0, &pa, &f));
    ck_assert(mmu_write_cr3(m, PD, &f));
    ck_assert(mmu_translate(m, LIN4K, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, FRAME4K | 0xABC);
    /* Into PAE with CR3 naming a PDPT whose present PDPTE 0 has bit 1
     * (reserved in a PDPTE, Table 4-8) set: #GP(0), nothing changed. */
    const uint32_t bad = 0x20000;
    physmem_write64(pm, bad, 0x30000u | P | RW);   /* bit 1: reserved in a PDPTE */
    ck_assert(mmu_write_cr3(m, bad, &f));
    ck_assert(!mmu_write_cr4(m, CR4_PSE | CR4_PAE, &f));
    ck_assert_uint_eq(f.vector, VEC_GP);
    ck_assert_uint_eq(mmu_cr4(m), CR4_PSE);         /* nothing changed */
    mmu_free(m);
    physmem_free(pm);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("legacy_mmu");
    TCase *tc = tcase_create("legacy");
    tcase_add_test(tc, walk_4k_two_levels);
    tcase_add_test(tc, cr3_write_loads_nothing);
    tcase_add_test(tc, page_4m_one_tlb_entry);
    tcase_add_test(tc, pse_off_ps_ignored);
    tcase_add_test(tc, reserved_bit_of_4m_pde);
    tcase_add_test(tc, nxe_has_no_effect);
    tcase_add_test(tc, pg_needs_pe);
    tcase_add_test(tc, switch_to_pae_and_back);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
