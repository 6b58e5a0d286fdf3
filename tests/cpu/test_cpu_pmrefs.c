/* The modelled memory references of the protected-mode mechanics, counted
 * one instruction at a time through the TLB's lookup counters (one lookup
 * per reference, by access type and by the privilege it is made at). The
 * expected counts are the SDM's lists of what each operation reads and
 * writes (Vol. 3A §6.12.1, §3.4.5.1, §5.8.7, Vol. 2 INT n / IRET / MOV Sreg
 * / SYSENTER / SYSEXIT "Operation"), worked out by hand below; they guard
 * the host-speed shortcuts in protmode.c, which must not add, drop or merge
 * a reference:
 *   INT n from ring 3 through a DPL-3 trap gate: IDT gate (8 bytes, one
 *     reference), GDT entry of the gate's CS, TSS.ESP0, TSS.SS0, GDT entry
 *     of SS0 (5 supervisor reads), then SS, ESP, EFLAGS, CS, EIP pushed on
 *     the ring-0 stack (5 writes at CPL 0); a descriptor whose accessed bit
 *     is clear gets it set (one more supervisor write);
 *   IRETD to ring 3: EIP, CS, EFLAGS popped (3 reads at CPL 0), CS's GDT
 *     entry, ESP and SS popped, SS's GDT entry (4 more reads), no write;
 *   MOV DS: one GDT read, plus one write when the accessed bit was clear;
 *   a descriptor that straddles a page boundary is read as two dwords;
 *   SYSENTER / SYSEXIT: no data reference at all.
 * The machine is built here by hand: PAE identity map of the first 2 MiB,
 * a Linux-ordered GDT, a TSS, an IDT, and a few hand-assembled bytes. */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "mmu/mmu.h"
#include "tlb/hierarchy.h"

#include "prot_boot.h"

#define GDT 0x1000u
#define GDT_SPLIT 0x1FF4u        /* entry 1 (KCS) at 0x1FFC..0x2003 */
#define IDT 0x2800u
#define TSS 0x3000u
#define KTEXT 0x4000u
#define KSTACK_TOP 0x9000u
#define UTEXT 0x10000u
#define USTACK_TOP 0x31000u
#define PDPT 0x100000u
#define PD 0x101000u
#define PT 0x102000u

#define KCS 0x08
#define KDS 0x10
#define UCS 0x1B
#define UDS 0x23
#define TSS_SEL 0x28
#define UDS_NA 0x33              /* DPL-3 data whose accessed bit is clear */

#define K_HANDLER (KTEXT + 0x100)
#define K_SYSENTER (KTEXT + 0x200)

/* kstart: push 0x23; push USTACK_TOP; push 0x202; push 0x1b; push UTEXT;
 * iretd (into ring 3). */
static const uint8_t kstart[] = {
    0x6A, 0x23, 0x68, 0x00, 0x10, 0x03, 0x00, 0x68, 0x02, 0x02, 0x00, 0x00,
    0x6A, 0x1B, 0x68, 0x00, 0x00, 0x01, 0x00, 0xCF,
};

/* The user program (offsets from UTEXT). */
static const uint8_t user[] = {
    0xCD, 0x80,                          /* +0  int 0x80 (handler: iretd) */
    0x66, 0xB8, 0x23, 0x00,              /* +2  mov ax, 0x23 */
    0x8E, 0xD8,                          /* +6  mov ds, ax */
    0x66, 0xB8, 0x33, 0x00,              /* +8  mov ax, 0x33 */
    0x8E, 0xD8,                          /* +12 mov ds, ax */
    0x89, 0xE1,                          /* +14 mov ecx, esp */
    0xBA, 0x17, 0x00, 0x01, 0x00,        /* +16 mov edx, UTEXT + 23 */
    0x0F, 0x34,                          /* +21 sysenter (entry: sysexit) */
    0xEB, 0xFE,                          /* +23 jmp $ */
};

static PhysMem *pm;
static Mmu *mmu;
static Cpu *cpu;

static uint64_t seg_desc(uint32_t base, uint32_t limit, unsigned access, unsigned flags)
{
    return (limit & 0xFFFF) | ((uint64_t)(base & 0xFFFFFF) << 16) | ((uint64_t)access << 40) |
           ((uint64_t)((limit >> 16) & 0xF) << 48) | ((uint64_t)flags << 52) |
           ((uint64_t)(base >> 24) << 56);
}

/* Access bytes: 0x9B/0x93 ring-0 code/data, 0xFB/0xF3 ring 3, all with
 * the accessed bit set; 0xF2 ring-3 data with it clear; 0x89 TSS. */
static const uint64_t *gdt_entries(unsigned *n)
{
    static uint64_t g[7];
    g[0] = 0;
    g[1] = seg_desc(0, 0xFFFFF, 0x9B, 0xC);
    g[2] = seg_desc(0, 0xFFFFF, 0x93, 0xC);
    g[3] = seg_desc(0, 0xFFFFF, 0xFB, 0xC);
    g[4] = seg_desc(0, 0xFFFFF, 0xF3, 0xC);
    g[5] = seg_desc(TSS, 103, 0x89, 0);
    g[6] = seg_desc(0, 0xFFFFF, 0xF2, 0xC);
    *n = G_N_ELEMENTS(g);
    return g;
}

/* Write the GDT at base as two dwords per entry (base need not be aligned). */
static void write_gdt(uint32_t base)
{
    unsigned n;
    const uint64_t *g = gdt_entries(&n);
    for (unsigned k = 0; k < n; k++) {
        physmem_write32(pm, base + 8 * k, (uint32_t)g[k]);
        physmem_write32(pm, base + 8 * k + 4, (uint32_t)(g[k] >> 32));
    }
}

static void setup(void)
{
    pm = physmem_new();
    mmu = mmu_new(pm, NULL);
    cpu = cpu_new(mmu, NULL);
    physmem_write64(pm, PDPT, PD | 1);
    for (unsigned k = 1; k < 4; k++)
        physmem_write64(pm, PDPT + 8 * k, 0);
    physmem_write64(pm, PD, PT | 7);
    for (uint32_t a = 0x1000; a < 0x10000; a += 0x1000)
        physmem_write64(pm, PT + 8 * (a >> 12), a | 3);           /* supervisor RW */
    physmem_write64(pm, PT + 8 * (UTEXT >> 12), UTEXT | 5);       /* user RO */
    physmem_write64(pm, PT + 8 * ((USTACK_TOP - 0x1000) >> 12), (USTACK_TOP - 0x1000) | 7);
    write_gdt(GDT);
    physmem_write32(pm, TSS + 4, KSTACK_TOP);
    physmem_write32(pm, TSS + 8, KDS);
    physmem_write32(pm, TSS + 0x64, 104u << 16);
    /* int 0x80: 32-bit trap gate, DPL 3, present, to KCS:K_HANDLER. */
    physmem_write32(pm, IDT + 8 * 0x80, ((uint32_t)KCS << 16) | (K_HANDLER & 0xFFFF));
    physmem_write32(pm, IDT + 8 * 0x80 + 4, (K_HANDLER & 0xFFFF0000u) | 0xEF00u);
    for (unsigned k = 0; k < sizeof kstart; k++)
        physmem_write8(pm, KTEXT + k, kstart[k]);
    physmem_write8(pm, K_HANDLER, 0xCF);                              /* iretd */
    physmem_write8(pm, K_SYSENTER, 0x0F);                             /* sysexit */
    physmem_write8(pm, K_SYSENTER + 1, 0x35);
    for (unsigned k = 0; k < sizeof user; k++)
        physmem_write8(pm, UTEXT + k, user[k]);

    unsigned n;
    gdt_entries(&n);
    prot_boot(cpu, &(ProtBoot){ .gdt = GDT, .gdt_limit = (uint16_t)(8 * n - 1), .idt = IDT,
                                .pdpt = PDPT, .sysenter_esp = KSTACK_TOP - 0x100,
                                .sysenter_eip = K_SYSENTER, .eip = KTEXT, .esp = KSTACK_TOP });
    for (unsigned k = 0; k < 6; k++)                                  /* to ring 3 */
        ck_assert_int_eq(cpu_step(cpu), CPU_STOP_NONE);
    ck_assert_int_eq(cpu_cpl(cpu), 3);
    ck_assert_uint_eq(cpu_eip(cpu), UTEXT);
}

static void teardown(void)
{
    cpu_free(cpu);
    mmu_free(mmu);
    physmem_free(pm);
}

/* Data references (reads, writes) made at CPL 0 and at CPL 3 by one step. */
typedef struct {
    uint64_t rd_k, wr_k, rd_u, wr_u;
} Refs;

static Refs step_refs(void)
{
    TlbHierarchy *h = mmu_tlb(mmu);
    tlb_hier_stats_reset(h);
    ck_assert_int_eq(cpu_step(cpu), CPU_STOP_NONE);
    const TlbStats *s = tlb_hier_stats(h);
    return (Refs){ s->lookups[ACCESS_READ][TLB_PRIV_KERNEL], s->lookups[ACCESS_WRITE][TLB_PRIV_KERNEL],
                   s->lookups[ACCESS_READ][TLB_PRIV_USER], s->lookups[ACCESS_WRITE][TLB_PRIV_USER] };
}

#define ASSERT_REFS(r, rk, wk, ru, wu)          \
    do {                                        \
        ck_assert_uint_eq((r).rd_k, (rk));      \
        ck_assert_uint_eq((r).wr_k, (wk));      \
        ck_assert_uint_eq((r).rd_u, (ru));      \
        ck_assert_uint_eq((r).wr_u, (wu));      \
    } while (0)

START_TEST(test_int_iret_references)
{
    Refs r = step_refs();                                             /* int 0x80 */
    ASSERT_REFS(r, 5, 5, 0, 0);
    ck_assert_int_eq(cpu_cpl(cpu), 0);
    ck_assert_uint_eq(cpu_eip(cpu), K_HANDLER);
    ck_assert_uint_eq(cpu_reg(cpu, REG_ESP), KSTACK_TOP - 20);
    r = step_refs();                                                  /* iretd */
    ASSERT_REFS(r, 7, 0, 0, 0);
    ck_assert_int_eq(cpu_cpl(cpu), 3);
    ck_assert_uint_eq(cpu_eip(cpu), UTEXT + 2);
    ck_assert_uint_eq(cpu_reg(cpu, REG_ESP), USTACK_TOP);
    ck_assert_uint_eq(cpu_seg_selector(cpu, SEG_SS), UDS);
}
END_TEST

/* The gate's code segment not yet accessed: the CPU sets the bit, one more
 * supervisor write, after the frame's pushes. */
START_TEST(test_int_sets_accessed_bit)
{
    physmem_write32(pm, GDT + 8 + 4, physmem_read32(pm, GDT + 8 + 4) & ~(1u << 8));
    Refs r = step_refs();
    ASSERT_REFS(r, 5, 6, 0, 0);
    ck_assert_uint_ne(physmem_read32(pm, GDT + 8 + 4) & (1u << 8), 0);
    r = step_refs();                                                  /* iretd: set already */
    ASSERT_REFS(r, 7, 0, 0, 0);
}
END_TEST

/* A descriptor across a page boundary: two dword reads for it. */
START_TEST(test_split_descriptor)
{
    unsigned n;
    gdt_entries(&n);
    write_gdt(GDT_SPLIT);
    cpu_set_gdtr(cpu, GDT_SPLIT, (uint16_t)(8 * n - 1));
    Refs r = step_refs();                                             /* int 0x80: KCS split */
    ASSERT_REFS(r, 6, 5, 0, 0);
    ck_assert_int_eq(cpu_cpl(cpu), 0);
    r = step_refs();                                                  /* iretd: UCS, UDS whole */
    ASSERT_REFS(r, 7, 0, 0, 0);
    ck_assert_int_eq(cpu_cpl(cpu), 3);
}
END_TEST

START_TEST(test_mov_sreg_references)
{
    step_refs();                                                      /* int 0x80 */
    step_refs();                                                      /* iretd */
    Refs r = step_refs();                                             /* mov ax, 0x23 */
    ASSERT_REFS(r, 0, 0, 0, 0);
    r = step_refs();                                                  /* mov ds, ax */
    ASSERT_REFS(r, 1, 0, 0, 0);
    ck_assert_uint_eq(cpu_seg_selector(cpu, SEG_DS), UDS);
    step_refs();                                                      /* mov ax, 0x33 */
    r = step_refs();                                                  /* mov ds, ax: sets A */
    ASSERT_REFS(r, 1, 1, 0, 0);
    ck_assert_uint_eq(cpu_seg_selector(cpu, SEG_DS), UDS_NA);
    ck_assert_uint_ne(physmem_read32(pm, GDT + 6 * 8 + 4) & (1u << 8), 0);
}
END_TEST

START_TEST(test_sysenter_sysexit_references)
{
    for (unsigned k = 0; k < 8; k++)                                  /* up to sysenter */
        step_refs();
    ck_assert_uint_eq(cpu_eip(cpu), UTEXT + 21);
    Refs r = step_refs();                                             /* sysenter */
    ASSERT_REFS(r, 0, 0, 0, 0);
    ck_assert_int_eq(cpu_cpl(cpu), 0);
    ck_assert_uint_eq(cpu_reg(cpu, REG_ESP), KSTACK_TOP - 0x100);
    r = step_refs();                                                  /* sysexit */
    ASSERT_REFS(r, 0, 0, 0, 0);
    ck_assert_int_eq(cpu_cpl(cpu), 3);
    ck_assert_uint_eq(cpu_eip(cpu), UTEXT + 23);
    ck_assert_uint_eq(cpu_seg_selector(cpu, SEG_CS), KCS + 16 + 3);
    ck_assert_uint_eq(cpu_seg_selector(cpu, SEG_SS), KCS + 24 + 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu_pmrefs");
    TCase *t = tcase_create("references");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_int_iret_references);
    tcase_add_test(t, test_int_sets_accessed_bit);
    tcase_add_test(t, test_split_descriptor);
    tcase_add_test(t, test_mov_sreg_references);
    tcase_add_test(t, test_sysenter_sysexit_references);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
