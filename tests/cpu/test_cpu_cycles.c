/* The cycle and reference model of cpu.h, checked against hand counts:
 *   - base costs by class (the documented defaults: alu 1, mul 4, div 20,
 *     branch 2, string_iter 1) plus one cycle per data reference (no
 *     preset: no caches, 1 cycle per reference), RDTSC reading the same
 *     counter;
 *   - the fetch model: one ITLB lookup per 16-byte block an instruction
 *     enters, a new one after every taken branch;
 *   - data references: a read is one DTLB read lookup, a read-modify-write
 *     two write lookups (the read is made with write intent), a dword that
 *     crosses a page two lookups. */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "mmu/mmu.h"

typedef struct {
    PhysMem *pm;
    Mmu *m;
    Cpu *c;
} Box;

static Box box_new(bool paging)
{
    Box b;
    b.pm = physmem_new();
    b.m = mmu_new(b.pm, NULL);
    b.c = cpu_new(b.m, NULL);
    if (paging) {
        /* Identity map of the first 2 MiB, 4 KiB pages, supervisor RW. */
        physmem_write64(b.pm, 0x100000, 0x101000 | 1);
        physmem_write64(b.pm, 0x101000, 0x102000 | 3);
        for (uint32_t p = 0; p < 512; p++)
            physmem_write64(b.pm, 0x102000 + 8 * p, (p << 12) | 3);
        uint8_t v;
        uint32_t e;
        ck_assert(cpu_write_cr(b.c, 4, 1u << 5, &v, &e));
        ck_assert(cpu_write_cr(b.c, 3, 0x100000, &v, &e));
        ck_assert(cpu_write_cr(b.c, 0, CR0_PG | CR0_ET | CR0_PE, &v, &e));
    }
    cpu_set_reg(b.c, REG_ESP, 0x8000);
    return b;
}

static void box_free(Box *b)
{
    cpu_free(b->c);
    mmu_free(b->m);
    physmem_free(b->pm);
}

static uint64_t stat(Box *b, const char *name)
{
    uint64_t v;
    ck_assert(tlb_stats_get(tlb_hier_stats(mmu_tlb(b->m)), name, &v));
    return v;
}

/* Run code placed at addr until HLT. */
static void run_code(Box *b, uint32_t addr, const uint8_t *code, size_t n)
{
    physmem_write(b->pm, addr, code, n);
    cpu_set_eip(b->c, addr);
    ck_assert_int_eq(cpu_run(b->c, 1000), CPU_STOP_HLT);
}

START_TEST(test_base_costs)
{
    Box b = box_new(false);
    const CpuCosts *k = cpu_costs(b.c);
    ck_assert_uint_eq(k->alu, 1);
    ck_assert_uint_eq(k->div, 20);
    static const uint8_t code[] = {
        0x0F, 0x31,                         /* rdtsc                 alu 1, EAX = 0 */
        0x89, 0xC6,                         /* mov esi, eax          alu 1 */
        0xA1, 0x00, 0x01, 0x00, 0x00,       /* mov eax, [0x100]      alu 1 + 1 ref */
        0x83, 0xC0, 0x05,                   /* add eax, 5            alu 1 */
        0xA3, 0x04, 0x01, 0x00, 0x00,       /* mov [0x104], eax      alu 1 + 1 ref */
        0x0F, 0xAF, 0xC0,                   /* imul eax, eax         mul 4 */
        0xF7, 0xF1,                         /* div ecx               div 20 */
        0xEB, 0x00,                         /* jmp $+2               branch 2 */
        0x4B,                               /* dec ebx (1 -> 0)      alu 1 */
        0x75, 0x10,                         /* jnz (not taken)       alu 1 */
        0xBF, 0x00, 0x02, 0x00, 0x00,       /* mov edi, 0x200        alu 1 */
        0xF3, 0xAB,                         /* rep stosd (ECX = 3)   3 x (1 + 1 ref) */
        0x0F, 0x31,                         /* rdtsc: cycles so far */
        0xF4,                               /* hlt                   alu 1 */
    };
    cpu_set_reg(b.c, REG_ECX, 3);
    cpu_set_reg(b.c, REG_EBX, 1);
    cpu_set_reg(b.c, REG_EDX, 0);
    run_code(&b, 0x1000, code, sizeof code);
    /* Before the second RDTSC: 1+1+2+1+2+4+20+2+1+1+1+6 = 42. */
    ck_assert_uint_eq(cpu_reg(b.c, REG_ESI), 0);
    ck_assert_uint_eq(cpu_reg(b.c, REG_EAX), 42);
    ck_assert_uint_eq(cpu_reg(b.c, REG_EDX), 0);
    /* Then RDTSC (1) and HLT (1). */
    ck_assert_uint_eq(cpu_cycles(b.c), 44);
    ck_assert_uint_eq(cpu_insns(b.c), 14);
    box_free(&b);
}
END_TEST

START_TEST(test_fetch_blocks)
{
    Box b = box_new(true);
    /* 40 NOPs from a block boundary, then HLT at +40: the code touches the
     * blocks at +0, +16, +32: three fetch references. */
    uint8_t code[64];
    memset(code, 0x90, sizeof code);
    code[40] = 0xF4;
    uint64_t before = stat(&b, "lookups_fetch");
    run_code(&b, 0x10000, code, 41);
    ck_assert_uint_eq(stat(&b, "lookups_fetch") - before, 3);
    box_free(&b);

    /* A taken JMP to the next instruction (same block) still refetches:
     * blocks +0, then +0 again after the jump, +16, +32 = 4. */
    b = box_new(true);
    memset(code, 0x90, sizeof code);
    code[4] = 0xEB;
    code[5] = 0x00;
    code[40] = 0xF4;
    before = stat(&b, "lookups_fetch");
    run_code(&b, 0x10000, code, 41);
    ck_assert_uint_eq(stat(&b, "lookups_fetch") - before, 4);
    box_free(&b);

    /* MOV EAX, imm32 at +14 spans blocks +0 and +16; then HLT at +19:
     * 2 references, the second one at +16. */
    b = box_new(true);
    memset(code, 0x90, sizeof code);
    code[14] = 0xB8;
    memcpy(code + 15, "\x78\x56\x34\x12", 4);
    code[19] = 0xF4;
    before = stat(&b, "lookups_fetch");
    run_code(&b, 0x10000, code, 20);
    ck_assert_uint_eq(stat(&b, "lookups_fetch") - before, 2);
    ck_assert_uint_eq(cpu_reg(b.c, REG_EAX), 0x12345678);
    box_free(&b);
}
END_TEST

START_TEST(test_data_references)
{
    for (int dc = 0; dc < 2; dc++) {
        Box b = box_new(true);
        cpu_set_decode_cache(b.c, dc);
        static const uint8_t code[] = {
            0xA1, 0x00, 0x30, 0x00, 0x00,   /* mov eax, [0x3000]     1 read */
            0x01, 0x05, 0x00, 0x30, 0x00, 0x00, /* add [0x3000], eax 2 write (RMW) */
            0xA1, 0xFE, 0x3F, 0x00, 0x00,   /* mov eax, [0x3FFE]     crosses: 2 reads */
            0xF4,
        };
        uint64_t r0 = stat(&b, "lookups_read"), w0 = stat(&b, "lookups_write");
        run_code(&b, 0x10000, code, sizeof code);
        ck_assert_uint_eq(stat(&b, "lookups_read") - r0, 3);
        ck_assert_uint_eq(stat(&b, "lookups_write") - w0, 2);
        box_free(&b);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu_cycles");
    TCase *t = tcase_create("model");
    tcase_add_test(t, test_base_costs);
    tcase_add_test(t, test_fetch_blocks);
    tcase_add_test(t, test_data_references);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
