/* Robustness: random bytes executed as code must never crash or abort the
 * simulator (issue 4: "undefined or unsupported opcodes raise #UD in the
 * guest; they never abort"), and must behave identically with the decoded
 * cache on and off. Each program runs at CPL 0 with paging off and an empty
 * IDT, so the first exception escalates to a triple fault (a clean stop);
 * random CR writes, LGDT, I/O and self-modification all happen. Under
 * ASan/UBSan (CI) this also checks the handlers for undefined behaviour.
 *
 * The random stream is a fixed LCG (VMSPLIT_FUZZ_SEED overrides the seed):
 * failures are reproducible, and the failing program's bytes are printed. */
#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "mmu/mmu.h"

#define PROGRAMS 800            /* VMSPLIT_FUZZ_PROGRAMS overrides (longer manual runs) */
#define CODE_BYTES 96
#define CODE_AT 0x7000u
#define MAX_STEPS 1000

typedef struct {
    CpuStop stop;
    uint32_t regs[CPU_NREGS], eip, eflags;
    uint64_t insns, cycles, mmu_cycles;
} Outcome;

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next32(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 32);
}

static Outcome run_program(const uint8_t *code, const uint32_t regs[CPU_NREGS], bool dcache)
{
    PhysMem *pm = physmem_new();
    Mmu *m = mmu_new(pm, NULL);
    Cpu *c = cpu_new(m, NULL);
    cpu_set_decode_cache(c, dcache);
    physmem_write(pm, CODE_AT, code, CODE_BYTES);
    for (int r = 0; r < CPU_NREGS; r++)
        cpu_set_reg(c, r, regs[r]);
    cpu_set_reg(c, REG_ESP, 0x6000);
    cpu_set_eip(c, CODE_AT);
    Outcome o;
    memset(&o, 0, sizeof o);                 /* padding too: compared with memcmp */
    o.stop = cpu_run(c, MAX_STEPS);
    for (int r = 0; r < CPU_NREGS; r++)
        o.regs[r] = cpu_reg(c, r);
    o.eip = cpu_eip(c);
    o.eflags = cpu_eflags(c);
    o.insns = cpu_insns(c);
    o.cycles = cpu_cycles(c);
    o.mmu_cycles = mmu_stats(m)->cycles;
    cpu_free(c);
    mmu_free(m);
    physmem_free(pm);
    return o;
}

START_TEST(test_random_code)
{
    const char *seed = g_getenv("VMSPLIT_FUZZ_SEED"), *count = g_getenv("VMSPLIT_FUZZ_PROGRAMS");
    if (seed)
        rng = g_ascii_strtoull(seed, NULL, 0);
    int programs = count ? atoi(count) : PROGRAMS;
    for (int n = 0; n < programs; n++) {
        uint8_t code[CODE_BYTES];
        uint32_t regs[CPU_NREGS];
        for (int k = 0; k < CODE_BYTES; k++)
            code[k] = (uint8_t)next32();
        /* Registers: small addresses (data near the code), edge values. */
        for (int r = 0; r < CPU_NREGS; r++)
            regs[r] = (r & 1) ? CODE_AT + (next32() & 0x1FFF) : next32();
        Outcome a = run_program(code, regs, true);
        Outcome b = run_program(code, regs, false);
        ck_assert(a.stop == CPU_STOP_MAX_INSNS || a.stop == CPU_STOP_HLT ||
                  a.stop == CPU_STOP_TRIPLE_FAULT);
        if (memcmp(&a, &b, sizeof a) != 0) {
            GString *hex = g_string_new(NULL);
            for (int k = 0; k < CODE_BYTES; k++)
                g_string_append_printf(hex, "%02x", code[k]);
            ck_abort_msg("program %d differs with the decoded cache on and off "
                         "(stop %d/%d, eip %08x/%08x, cycles %" G_GUINT64_FORMAT "/%"
                         G_GUINT64_FORMAT "): %s", n, a.stop, b.stop, a.eip, b.eip, a.cycles,
                         b.cycles, hex->str);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu_fuzz");
    TCase *t = tcase_create("random");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_random_code);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
