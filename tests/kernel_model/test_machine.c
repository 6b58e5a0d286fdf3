/* The machine executing the real entry/exit stubs, per layout, checked
 * against what each design says (REFERENCES.md, the 4G/4G mail, pti.rst):
 *   CR3 writes per null syscall: 3g1g 0, 4g4g 2 (entry, exit), kpti 2,
 *   kpti-pcid 2 dropping nothing; TLB entries dropped only under 4g4g and
 *   kpti; the kernel's global entries survive in 3g1g; 4g4g copies to and
 *   from user space with one kmap_atomic and one INVLPG per page. */
#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "preset/preset.h"
#include "kernel_model/body.h"
#include "kernel_model/machine.h"
#include "mmu/mmu_state.h"
#include "tlb/hierarchy.h"

#define GiB (1024ULL * 1024 * 1024)

static const char *layouts[] = { "3g1g", "2g2g", "1g3g", "4g4g", "kpti", "kpti-pcid",
                                  "4g4g-2003" };

typedef struct {
    Preset *p;
    Machine *m;
    KernelBody *kb;
    ProfileTable *prof;
} Fix;

static Fix boot(const char *layout, bool sysenter)
{
    Fix f = { 0 };
    GError *err = NULL;
    f.p = preset_load("p4-northwood", &err);
    ck_assert_msg(f.p != NULL, "%s", err ? err->message : "");
    MachineConfig cfg = { .preset = f.p, .layout = layout_find(layout), .ram = 4 * GiB,
                          .sysenter = sysenter };
    f.m = machine_new(&cfg, &err);
    ck_assert_msg(f.m != NULL, "%s: %s", layout, err ? err->message : "");
    f.kb = kbody_new(f.m, &err);
    ck_assert_msg(f.kb != NULL, "%s", err ? err->message : "");
    f.prof = profiles_load(NULL, &err);
    ck_assert_ptr_nonnull(f.prof);
    return f;
}

static void fix_free(Fix *f)
{
    profiles_free(f->prof);
    kbody_free(f->kb);
    machine_free(f->m);
    preset_free(f->p);
}

static uint64_t tlbstat(Fix *f, const char *name)
{
    uint64_t v = 0;
    ck_assert(tlb_stats_get(tlb_hier_stats(mmu_tlb(machine_mmu(f->m))), name, &v));
    return v;
}

static void null_call(Fix *f, const char *name)
{
    SyscallCall c = { .profile = profiles_find(f->prof, name, NULL), .switch_to = -1, .ret = 7 };
    kbody_set_call(f->kb, &c);
    uint32_t ret = 0;
    GError *err = NULL;
    ck_assert_msg(machine_syscall(f->m, c.profile->nr, NULL, &ret, &err), "%s",
                  err ? err->message : "");
    ck_assert_uint_eq(ret, 7);
}

/* CR3 writes and dropped TLB entries per null syscall, warm. */
START_TEST(null_syscall_cr3)
{
    static const unsigned want_cr3[] = { 0, 0, 0, 2, 2, 2, 2 };
    const char *name = layouts[_i / 2];
    bool sysenter = _i % 2;
    if (sysenter && layout_find(name)->no_sysenter)
        return;                           /* no_sysenter_2003 */
    Fix f = boot(name, sysenter);
    for (int i = 0; i < 3; i++)
        null_call(&f, "getppid");             /* warm up */
    uint64_t cr3 = mmu_stats(machine_mmu(f.m))->cr3_writes;
    uint64_t dropped = tlbstat(&f, "dropped_cr3");
    uint64_t sc = machine_counts(f.m)->syscalls;
    for (int i = 0; i < 10; i++)
        null_call(&f, "getppid");
    ck_assert_uint_eq(machine_counts(f.m)->syscalls - sc, 10);
    ck_assert_uint_eq(mmu_stats(machine_mmu(f.m))->cr3_writes - cr3, 10 * want_cr3[_i / 2]);
    uint64_t d = tlbstat(&f, "dropped_cr3") - dropped;
    bool flushes = !strcmp(name, "4g4g") || !strcmp(name, "kpti") || !strcmp(name, "4g4g-2003");
    if (flushes)
        ck_assert_uint_gt(d, 0);
    else
        ck_assert_uint_eq(d, 0);
    ck_assert_int_eq(cpu_cpl(machine_cpu(f.m)), 3);
    fix_free(&f);
}
END_TEST

/* In 3g1g the kernel's entries are global: after warm-up a null syscall
 * takes no TLB miss at all; under 4g4g every call misses again. */
START_TEST(kernel_globals_survive)
{
    Fix a = boot("3g1g", false);
    for (int i = 0; i < 3; i++)
        null_call(&a, "getppid");
    uint64_t m0 = tlbstat(&a, "misses_kernel");
    null_call(&a, "getppid");
    ck_assert_uint_eq(tlbstat(&a, "misses_kernel") - m0, 0);
    fix_free(&a);
    Fix b = boot("4g4g", false);
    for (int i = 0; i < 3; i++)
        null_call(&b, "getppid");
    m0 = tlbstat(&b, "misses_kernel");
    null_call(&b, "getppid");
    ck_assert_uint_gt(tlbstat(&b, "misses_kernel") - m0, 0);
    fix_free(&b);
}
END_TEST

/* The kernel references of the bodies (machine_kernel_read / _write and a
 * copy's lines, which make aligned dword references themselves) against
 * the core's cpu_read_linear / cpu_write_linear making the same calls'
 * references on an identical machine: hits (3g1g: the direct map is in
 * every page table), faults (4g4g: it is not in the user's), a copy whose
 * target faults, unaligned copies and reads that take the core's piece
 * loop, and dwords on both sides of a page boundary. Every counter, the
 * data read, memory and the TLB/cache state must agree. */
static void kernel_refs_naive(Machine *m, uint32_t from, uint32_t to, uint32_t lines,
                              uint32_t step)
{
    uint32_t v, zero = 0;
    for (uint32_t k = 0; k < lines; k++) {
        cpu_read_linear(machine_cpu(m), from + k * step, &v, 4);
        cpu_write_linear(machine_cpu(m), to + k * step, &zero, 4);
    }
}

static void kernel_refs(Machine *m, bool naive, uint32_t kva, uint32_t *got, bool *ok)
{
    /* kva: four mapped kernel pages; 0x1000: no kernel mapping there. */
    static const struct { uint32_t from, to, lines, step; } cp[] = {
        { 0, 0x2000, 64, 64 }, { 0x2000, 0, 16, 64 }, { 0x0FC0, 0x1FC0, 3, 64 },
        { 2, 0x2001, 5, 64 }, { 0, 0x2000, 7, 6 }, { 0, 0xFFFFFFFFu, 4, 64 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cp); i++) {
        uint32_t to = cp[i].to == 0xFFFFFFFFu ? 0x1000 : kva + cp[i].to;
        if (naive)
            kernel_refs_naive(m, kva + cp[i].from, to, cp[i].lines, cp[i].step);
        else
            machine_kernel_copy_lines(m, kva + cp[i].from, to, cp[i].lines, cp[i].step);
    }
    static const struct { uint32_t off, n; bool write; } rw[] = {
        { 0x10, 24, false }, { 0x0FFC, 8, false }, { 0x2FF8, 16, true }, { 0x13, 6, false },
        { 0x2005, 7, true }, { 0x3000, 4, true }, { 0x40, 4, false },
    };
    uint32_t buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    for (size_t i = 0; i < G_N_ELEMENTS(rw); i++) {
        for (uint32_t va = kva + rw[i].off, j = 0; j < 2; j++, va = 0x1000 + rw[i].off) {
            Cpu *c = machine_cpu(m);
            if (rw[i].write)
                *ok++ = naive ? cpu_write_linear(c, va, buf, rw[i].n)
                              : machine_kernel_write(m, va, buf, rw[i].n);
            else
                *ok++ = naive ? cpu_read_linear(c, va, got, rw[i].n)
                              : machine_kernel_read(m, va, got, rw[i].n);
            got += 8;
        }
    }
}

/* Every counter, the TLB/cache state (kva's four pages) and those pages'
 * memory equal on the two machines. */
static void same_state(Fix f[2], uint32_t kva, const uint64_t pa[2])
{
    ck_assert_uint_eq(cpu_cycles(machine_cpu(f[0].m)), cpu_cycles(machine_cpu(f[1].m)));
    MmuStatsAll st[2];
    GByteArray *part[2] = { g_byte_array_new(), g_byte_array_new() };
    MmuRange r = { kva, kva + 4 * 4096 };
    for (int n = 0; n < 2; n++) {
        memset(&st[n], 0, sizeof st[n]);
        mmu_state_stats_get(machine_mmu(f[n].m), &st[n]);
        for (unsigned p = 0; p < mmu_state_nparts(machine_mmu(f[n].m)); p++)
            mmu_state_append_part(machine_mmu(f[n].m), p, &r, 1, NULL, part[n]);
    }
    ck_assert_uint_gt(st[0].mmu.data_cycles, 0);
    ck_assert_mem_eq(&st[0], &st[1], sizeof st[0]);
    ck_assert_uint_eq(part[0]->len, part[1]->len);
    ck_assert_mem_eq(part[0]->data, part[1]->data, part[0]->len);
    uint8_t mem[2][4 * 4096];
    for (int n = 0; n < 2; n++)
        physmem_read(kspace_physmem(machine_kspace(f[n].m)),
                     pa[n], mem[n], sizeof mem[n]);
    ck_assert_mem_eq(mem[0], mem[1], sizeof mem[0]);
    for (int n = 0; n < 2; n++)
        g_byte_array_unref(part[n]);
}

/* Two machines after a null call, each with four mapped kernel pages at
 * kva (the same on both) backed by pa[n]. */
static void boot_pair(const char *layout, Fix f[2], uint32_t *kva, uint64_t pa[2])
{
    for (int n = 0; n < 2; n++) {
        f[n] = boot(layout, false);
        KernelSpace *ks = machine_kspace(f[n].m);
        pa[n] = kspace_alloc_frames(ks, 4, NULL);
        ck_assert(pa[n] != 0);
        uint32_t va = kspace_phys_to_virt(ks, pa[n]);
        ck_assert(n == 0 || va == *kva);
        *kva = va;
        null_call(&f[n], "getppid");
    }
}

START_TEST(kernel_refs_as_core)
{
    Fix f[2];
    uint32_t got[2][14 * 8] = { { 0 } }, kva;
    uint64_t pa[2];
    bool ok[2][14] = { { false } };
    boot_pair(_i ? "4g4g" : "3g1g", f, &kva, pa);
    for (int n = 0; n < 2; n++)
        kernel_refs(f[n].m, n == 1, kva, got[n], ok[n]);
    ck_assert_mem_eq(ok[0], ok[1], sizeof ok[0]);
    ck_assert_mem_eq(got[0], got[1], sizeof got[0]);
    same_state(f, kva, pa);
    for (int n = 0; n < 2; n++)
        fix_free(&f[n]);
}
END_TEST

/* A copy's lines made at once after the first (copy_hit_lines) leave the
 * TLB's recency order as the core's references would, checked right after
 * each copy (a later reference would hide it). Under 3g1g the kernel's
 * pages share one 2 MiB entry and the user's have their own (the kernel
 * reaches them in the same page table): kernel to user and back (two
 * slots), kernel to kernel (one slot stamped by both memos), and a copy
 * that crosses into the next pages after its first line. Under 4g4g the
 * direct map is absent from the user's page table: every reference
 * faults, line by line. */
#define COPY_UVA 0x20000000u
START_TEST(copy_lines_as_core)
{
    static const struct { uint32_t from, to, lines; } cp[] = {
        { 0, COPY_UVA, 64 }, { COPY_UVA + 0x1000, 0x1000, 40 }, { 0, 0x40, 63 },
        { 0x0FC0, COPY_UVA + 0x0FC0, 9 },
    };
    Fix f[2];
    uint32_t kva;
    uint64_t pa[2];
    boot_pair(_i ? "4g4g" : "3g1g", f, &kva, pa);
    for (int n = 0; n < 2; n++)
        ck_assert(machine_map_user(f[n].m, machine_current(f[n].m), COPY_UVA, 2, true, NULL));
    for (size_t i = 0; i < G_N_ELEMENTS(cp); i++) {
        uint32_t from = cp[i].from < COPY_UVA ? kva + cp[i].from : cp[i].from;
        uint32_t to = cp[i].to < COPY_UVA ? kva + cp[i].to : cp[i].to;
        machine_kernel_copy_lines(f[0].m, from, to, cp[i].lines, 64);
        kernel_refs_naive(f[1].m, from, to, cp[i].lines, 64);
        same_state(f, kva, pa);
    }
    for (int n = 0; n < 2; n++)
        fix_free(&f[n]);
}
END_TEST

/* 4g4g uaccess: a 3-page read (copy_to_user of 12 KiB into a page-aligned
 * buffer) takes 3 kmaps and 3 INVLPGs; the same under 3g1g takes none. */
START_TEST(uaccess_kmap_per_page)
{
    for (int l = 0; l < 2; l++) {
        Fix f = boot(l ? "4g4g" : "3g1g", false);
        GError *err = NULL;
        ck_assert(machine_map_user(f.m, machine_current(f.m), 0x10000000, 4, true, &err));
        SyscallCall c = { .profile = profiles_find(f.prof, "read", NULL), .bytes_out = 3 * 4096,
                          .user_buf = 0x10000000, .user_buf_bytes = 4 * 4096, .switch_to = -1 };
        uint64_t inv0 = tlbstat(&f, "flushes_invlpg");
        kbody_set_call(f.kb, &c);
        ck_assert(machine_syscall(f.m, 3, NULL, NULL, &err));
        const KBodyCost *k = kbody_last(f.kb);
        ck_assert_uint_eq(k->copied, 3 * 4096);
        ck_assert_uint_eq(k->kmaps, l ? 3 : 0);
        ck_assert_uint_eq(tlbstat(&f, "flushes_invlpg") - inv0, l ? 3 : 0);
        ck_assert_uint_gt(k->uaccess, 0);
        fix_free(&f);
    }
}
END_TEST

/* Two tasks: a context switch through the timer interrupt. 3g1g writes CR3
 * once (switch_mm); 4g4g writes it twice (the IRQ's entry and exit) and
 * remaps the virtual stack: both of its PTEs change (the two tasks' stacks
 * are different frames), so __kmap_atomic rewrites both and the stub
 * INVLPGs both; both land in the other task. The 2003 form does the same
 * (RHEL3 __switch_to, KM_VSTACK0/1). */
START_TEST(context_switch)
{
    static const char *names[] = { "3g1g", "4g4g", "kpti", "4g4g-2003" };
    static const unsigned want_cr3[] = { 1, 2, 3, 2 };   /* kpti: entry, switch_mm, exit */
    static const unsigned want_invlpg[] = { 0, 2, 0, 2 };
    for (int l = 0; l < 4; l++) {
        Fix f = boot(names[l], false);
        GError *err = NULL;
        int t1 = machine_task_new(f.m, &err);
        ck_assert_int_eq(t1, 1);
        uint64_t cr3 = mmu_stats(machine_mmu(f.m))->cr3_writes;
        uint64_t inv = tlbstat(&f, "flushes_invlpg");
        ck_assert_msg(machine_switch_to(f.m, t1, &err), "%s: %s", names[l], err ? err->message : "");
        ck_assert_int_eq(machine_current(f.m), t1);
        ck_assert_uint_eq(mmu_stats(machine_mmu(f.m))->cr3_writes - cr3, want_cr3[l]);
        ck_assert_uint_eq(tlbstat(&f, "flushes_invlpg") - inv, want_invlpg[l]);
        ck_assert_uint_eq(machine_counts(f.m)->switches, 1);
        ck_assert_uint_eq(machine_counts(f.m)->vstack_ptes_rewritten, want_invlpg[l]);
        /* The new task makes a syscall and the old one resumes fine. */
        null_call(&f, "getppid");
        inv = tlbstat(&f, "flushes_invlpg");
        ck_assert(machine_switch_to(f.m, 0, &err));
        ck_assert_uint_eq(tlbstat(&f, "flushes_invlpg") - inv, want_invlpg[l]);
        ck_assert_uint_eq(machine_counts(f.m)->vstack_ptes_rewritten, 2 * want_invlpg[l]);
        null_call(&f, "getppid");
        ck_assert_int_eq(machine_current(f.m), 0);
        fix_free(&f);
    }
}
END_TEST

/* RHEL3's 2.4.21 has no sysenter entry: asking for one is a clear error,
 * not a run. */
START_TEST(no_sysenter_2003)
{
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    MachineConfig cfg = { .preset = p, .layout = layout_find("4g4g-2003"), .ram = 4 * GiB,
                          .sysenter = true };
    Machine *m = machine_new(&cfg, &err);
    ck_assert_ptr_null(m);
    ck_assert_msg(err && strstr(err->message, "4g4g-2003") && strstr(err->message, "sysenter"),
                  "%s", err ? err->message : "no error");
    g_error_free(err);
    preset_free(p);
}
END_TEST

/* Instructions per null syscall, counted by hand from the two entry.S
 * (stubs/entry_4g4g.asm and entry_4g4g_2003.asm follow them line by line):
 *   entry: RHEL4's __SWITCH_KERNELSPACE runs 10 (cmp, jb, the immediate,
 *          two movs, two ands, or, mov cr3, mov esp); RHEL3's __SWITCH 12
 *          (mov from cr3, cmp, jz, the immediate, mov cr3, GET_CURRENT's
 *          two, the real_stack load, mov, and, or, mov esp): +2;
 *   exit:  RHEL4's user path 29 (the EIP load, two marker pairs of
 *          cmp/jb, the EFLAGS/CS test of four, GET_THREAD_INFO's two, two
 *          loads, mov/and/or, mov esp, mov cr3, nine pops, add, iret);
 *          RHEL3's 30 (one marker pair of loads/compares, the same test,
 *          GET_CURRENT, two loads, two nops, mov/and/or, mov eax,esp,
 *          mov esp, mov cr3, nine pops, add, iret): +1.
 * So the 2003 form executes exactly 3 more per call. */
START_TEST(entry_2003_insns)
{
    uint64_t per_call[2];
    const char *names[2] = { "4g4g", "4g4g-2003" };
    for (int l = 0; l < 2; l++) {
        Fix f = boot(names[l], false);
        for (int i = 0; i < 3; i++)
            null_call(&f, "getppid");
        uint64_t n0 = cpu_insns(machine_cpu(f.m));
        for (int i = 0; i < 10; i++)
            null_call(&f, "getppid");
        per_call[l] = (cpu_insns(machine_cpu(f.m)) - n0) / 10;
        fix_free(&f);
    }
    ck_assert_uint_eq(per_call[1], per_call[0] + 3);
}
END_TEST

/* The sixth syscall argument under sysenter is EBP, and the vsyscall page
 * put the user's EBP on the user stack and the stack pointer in EBP
 * (user.asm, vsyscall-sysenter.S). Vanilla 2.6's sysenter_entry loads it
 * back from the user stack; RHEL4's 4G/4G entry does not ("No six-argument
 * syscall is ever used with sysenter"), so its body sees the stack
 * pointer. Through int 0x80 every layout passes EBP as it is. */
static uint32_t seen_arg6;
static uint32_t record_arg6(Machine *m, uint32_t nr, const uint32_t args[6], void *user)
{
    (void)m, (void)nr, (void)user;
    seen_arg6 = args[5];
    return 0;
}

START_TEST(sysenter_sixth_argument)
{
    static const char *names[] = { "3g1g", "2g2g", "1g3g", "4g4g", "kpti" };
    const char *name = names[_i / 2];
    bool sysenter = _i % 2;
    Fix f = boot(name, sysenter);
    machine_set_body(f.m, record_arg6, NULL);
    const uint32_t args[6] = { 1, 2, 3, 4, 5, 0xCAFE0006u };
    GError *err = NULL;
    seen_arg6 = 0;
    ck_assert_msg(machine_syscall(f.m, 64, args, NULL, &err), "%s", err ? err->message : "");
    bool loaded = !sysenter || !strcmp(name, "3g1g") || !strcmp(name, "2g2g") ||
                  !strcmp(name, "1g3g") || !strcmp(name, "kpti");
    if (loaded)
        ck_assert_uint_eq(seen_arg6, 0xCAFE0006u);
    else
        ck_assert_uint_ne(seen_arg6, 0xCAFE0006u);
    fix_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("machine");
    TCase *tc = tcase_create("stubs");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, null_syscall_cr3, 0, 14);
    tcase_add_test(tc, no_sysenter_2003);
    tcase_add_test(tc, entry_2003_insns);
    tcase_add_loop_test(tc, sysenter_sixth_argument, 0, 10);
    tcase_add_test(tc, kernel_globals_survive);
    tcase_add_test(tc, uaccess_kmap_per_page);
    tcase_add_test(tc, context_switch);
    tcase_add_loop_test(tc, kernel_refs_as_core, 0, 2);
    tcase_add_loop_test(tc, copy_lines_as_core, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
