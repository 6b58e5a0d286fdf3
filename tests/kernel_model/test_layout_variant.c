/* A variant of an existing design is its row alone (layout.h): rows that
 * are in no table, made here by changing a shipped row's addresses, boot
 * on the machine with the shipped stubs, make null syscalls, and build
 * the page tables their design says, in both paging modes:
 *   - kpti on a 2G/2G split (Linux 4.19 allows VMSPLIT_2G with PTI): the
 *     kernel table maps the whole direct map, which now spans two PAE
 *     PDPTE slots (0x80000000 and 0xC0000000); the user table maps user
 *     space and the entry area, never the direct map; two CR3 writes per
 *     call (pti.rst);
 *   - 4G/4G with a 32 MiB window at 0xFE000000 (the patch's
 *     NR_SHARED_PMDS, 8 in RHEL4, is a build constant; 16 here): the
 *     window's pages are the same in both tables, the direct map is in
 *     the kernel's alone, user space reaches up to the window; two CR3
 *     writes per call (the 4G/4G mail: one on entry, one on exit), which
 *     needs the entry's virtual-stack test to use this window's base.
 * The expectations are the designs' (REFERENCES.md: "KPTI", "The 4G/4G
 * patch as shipped"), checked with the MMU's own walker. */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "preset/preset.h"
#include "kernel_model/aspace.h"
#include "kernel_model/body.h"
#include "kernel_model/machine.h"
#include "mmu/mmu.h"

#define MiB (1024ULL * 1024ULL)
#define GiB (1024ULL * MiB)

/* A row copied from a shipped one in paging mode `mode`; the caller
 * changes its addresses. Its memory figures name it. */
static Layout variant(const char *from, PagingMode mode)
{
    const Layout *l = layout_find(from);
    ck_assert_ptr_nonnull(l);
    Layout v = *layout_with_paging(l, mode);
    v.name = "variant";
    return v;
}

typedef struct {
    Preset *p;
    Machine *m;
    KernelBody *kb;
    ProfileTable *prof;
    Mmu *walker;            /* a second MMU over the machine's memory */
} Fix;

static Fix boot(const Layout *l, uint64_t ram)
{
    Fix f = { 0 };
    GError *err = NULL;
    f.p = preset_load("p4-northwood", &err);
    ck_assert_msg(f.p != NULL, "%s", err ? err->message : "");
    MachineConfig cfg = { .preset = f.p, .layout = l, .ram = ram };
    f.m = machine_new(&cfg, &err);
    ck_assert_msg(f.m != NULL, "%s", err ? err->message : "");
    f.kb = kbody_new(f.m, &err);
    ck_assert_msg(f.kb != NULL, "%s", err ? err->message : "");
    f.prof = profiles_load(NULL, &err);
    ck_assert_ptr_nonnull(f.prof);
    f.walker = mmu_new(kspace_physmem(machine_kspace(f.m)), NULL);
    MmuFault g;
    ck_assert(mmu_write_cr4(f.walker, l->paging->cr4_paging | CR4_PSE, &g));
    ck_assert(mmu_write_cr3(f.walker, kspace_kernel_cr3(machine_kspace(f.m)), &g));
    ck_assert(mmu_write_cr0(f.walker, CR0_PE | CR0_WP | CR0_PG, &g));
    return f;
}

static void fix_free(Fix *f)
{
    mmu_free(f->walker);
    profiles_free(f->prof);
    kbody_free(f->kb);
    machine_free(f->m);
    preset_free(f->p);
}

/* CR3 writes over ten warm null syscalls. */
static uint64_t cr3_per_10_calls(Fix *f)
{
    SyscallCall c = { .profile = profiles_find(f->prof, "getppid", NULL), .switch_to = -1,
                      .ret = 7 };
    uint64_t cr3 = 0;
    for (int i = 0; i < 13; i++) {
        kbody_set_call(f->kb, &c);         /* one call at a time (body.h) */
        if (i == 3)
            cr3 = mmu_stats(machine_mmu(f->m))->cr3_writes;
        uint32_t ret = 0;
        GError *err = NULL;
        ck_assert_msg(machine_syscall(f->m, c.profile->nr, NULL, &ret, &err), "%s",
                      err ? err->message : "");
        ck_assert_uint_eq(ret, 7);
    }
    ck_assert_int_eq(cpu_cpl(machine_cpu(f->m)), 3);
    return mmu_stats(machine_mmu(f->m))->cr3_writes - cr3;
}

/* va's physical address through the table at cr3 at CPL 0, or ~0 if it
 * is not mapped there. */
static uint64_t xlate(Fix *f, uint32_t cr3, uint32_t va)
{
    MmuFault g;
    uint64_t pa;
    ck_assert(mmu_write_cr3(f->walker, cr3, &g));
    return mmu_translate(f->walker, va, ACCESS_READ, 0, &pa, &g) ? pa : ~0ULL;
}

START_TEST(kpti_2g2g)
{
    PagingMode mode = (PagingMode)_i;
    Layout v = variant("kpti", mode);
    v.page_offset = v.task_size = 0x80000000u;
    v.mem.layout = &v;
    Fix f = boot(&v, 4 * GiB);
    ck_assert_uint_eq(cr3_per_10_calls(&f), 20);
    ProcSpace *ps = machine_task_space(f.m, machine_current(f.m));
    uint32_t kcr3 = pspace_kernel_cr3(ps), ucr3 = pspace_user_cr3(ps);
    ck_assert_uint_ne(kcr3, ucr3);
    /* The direct map, in both of its PDPTE slots, in the kernel table. */
    uint64_t lowmem = kspace_lowmem_end(machine_kspace(f.m));
    ck_assert_uint_eq(lowmem, 2 * GiB - 128 * MiB - 2 * MiB);   /* MAXMEM - entry area */
    ck_assert_uint_eq(xlate(&f, kcr3, 0x80000000u + 5 * MiB), 5 * MiB);
    ck_assert_uint_eq(xlate(&f, kcr3, 0x80000000u + (uint32_t)(lowmem - 4096)), lowmem - 4096);
    ck_assert_uint_eq(xlate(&f, kcr3, 0xC0000000u + 5 * MiB), 1 * GiB + 5 * MiB);
    /* Not in the user table. */
    ck_assert_uint_eq(xlate(&f, ucr3, 0x80000000u + 5 * MiB), ~0ULL);
    ck_assert_uint_eq(xlate(&f, ucr3, 0xC0000000u + 5 * MiB), ~0ULL);
    /* The entry area: the same pages in both. */
    uint64_t e = xlate(&f, kcr3, v.window_base);
    ck_assert_uint_ne(e, ~0ULL);
    ck_assert_uint_eq(xlate(&f, ucr3, v.window_base), e);
    /* User space up to TASK_SIZE (the stack below it): in both. */
    uint32_t stack = v.task_size - 2 * 4096;
    uint64_t s = xlate(&f, ucr3, stack);
    ck_assert_uint_ne(s, ~0ULL);
    ck_assert_uint_eq(xlate(&f, kcr3, stack), s);
    fix_free(&f);
}
END_TEST

START_TEST(window_4g4g_32m)
{
    PagingMode mode = (PagingMode)_i;
    Layout v = variant("4g4g", mode);
    v.window_base = v.task_size = 0xFE000000u;
    v.window_size = 32 * MiB;
    v.mem.layout = &v;
    Fix f = boot(&v, 4 * GiB);
    ck_assert_uint_eq(cr3_per_10_calls(&f), 20);
    ProcSpace *ps = machine_task_space(f.m, machine_current(f.m));
    uint32_t kcr3 = pspace_kernel_cr3(ps), ucr3 = pspace_user_cr3(ps);
    /* The kernel runs on swapper's table, the same for every process. */
    ck_assert_uint_eq(kcr3, kspace_kernel_cr3(machine_kspace(f.m)));
    /* The window's first page (the entry text): the same in both tables. */
    uint64_t e = xlate(&f, kcr3, v.window_base);
    ck_assert_uint_ne(e, ~0ULL);
    ck_assert_uint_eq(xlate(&f, ucr3, v.window_base), e);
    /* The direct map: the kernel's alone. */
    ck_assert_uint_eq(xlate(&f, kcr3, v.page_offset + 5 * MiB), 5 * MiB);
    ck_assert_uint_eq(xlate(&f, ucr3, v.page_offset + 5 * MiB), ~0ULL);
    /* The user stack just below the window: the user table's. */
    ck_assert_uint_ne(xlate(&f, ucr3, v.task_size - 2 * 4096), ~0ULL);
    fix_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout-variant");
    TCase *tc = tcase_create("variants");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, kpti_2g2g, 0, PAGING_NMODES);
    tcase_add_loop_test(tc, window_4g4g_32m, 0, PAGING_NMODES);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
