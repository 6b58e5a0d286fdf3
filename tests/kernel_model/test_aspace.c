/* Address spaces per layout, checked with the PAE walker against what each
 * layout's design says (REFERENCES.md; the 4G/4G mail; pti.rst). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_model/aspace.h"
#include "kernel_model/layout.h"
#include "mmu/pae.h"

#define MiB (1024ULL * 1024ULL)
#define GiB (1024ULL * MiB)

typedef struct {
    PhysMem *pm;
    KernelSpace *ks;
    ProcSpace *ps;
} Fix;

static Fix fix_new(const char *layout, uint64_t ram)
{
    Fix f;
    f.pm = physmem_new();
    GError *err = NULL;
    f.ks = kspace_new(f.pm, layout_find(layout), ram, true, &err);
    ck_assert_msg(f.ks != NULL, "%s", err ? err->message : "");
    f.ps = pspace_new(f.ks, &err);
    ck_assert_ptr_nonnull(f.ps);
    return f;
}

static void fix_free(Fix *f)
{
    pspace_free(f->ps);
    kspace_free(f->ks);
    physmem_free(f->pm);
}

static bool walk(Fix *f, uint32_t cr3, uint32_t va, Access a, int cpl, PaeWalk *w)
{
    PaeRegs r = { .wp = true, .nxe = false };
    ck_assert(pae_load_cr3(&r, f->pm, cr3, NULL));
    return pae_walk(&r, f->pm, va, a, cpl, w);
}

static const char *all_layouts[] = { "3g1g", "2g2g", "1g3g", "4g4g", "kpti", "kpti-pcid", "4g4g-2003" };

/* Kernel mode reaches lowmem through the direct map at page_offset. */
START_TEST(direct_map)
{
    Fix f = fix_new(all_layouts[_i], 1 * GiB);
    const Layout *l = kspace_layout(f.ks);
    PaeWalk w;
    uint64_t pa = 5 * MiB + 0x123;
    ck_assert(walk(&f, pspace_kernel_cr3(f.ps), l->page_offset + (uint32_t)pa,
                   ACCESS_WRITE, 0, &w));
    ck_assert_uint_eq(w.paddr, pa);
    ck_assert_uint_eq(w.page_size, PAE_PAGE_2M);
    ck_assert_int_eq(w.us, 0);
    /* Global only where the layout says (3g1g, 2g2g, 1g3g). */
    ck_assert_int_eq(w.global, l->kernel_tables == LAYOUT_KTABLES_IN_USER);
    fix_free(&f);
}
END_TEST

/* A ring-3 access through the user-mode page table never reaches a kernel
 * page: shared layouts fault on U/S (error code P|U = 0x5 for a read),
 * 4g4g and kpti have nothing mapped there (U = 0x4). */
START_TEST(user_cannot_touch_kernel)
{
    Fix f = fix_new(all_layouts[_i], 1 * GiB);
    const Layout *l = kspace_layout(f.ks);
    PaeWalk w;
    uint32_t kva = l->page_offset + 0x100000;
    bool ok = walk(&f, pspace_user_cr3(f.ps), kva, ACCESS_READ, 3, &w);
    ck_assert(!ok);
    ck_assert_uint_eq(w.vector, 14);
    ck_assert_uint_eq(w.cr2, kva);
    ck_assert_uint_eq(w.error_code, l->kernel_tables == LAYOUT_KTABLES_IN_USER ? 0x5u : 0x4u);
    fix_free(&f);
}
END_TEST

/* The 4g4g window and the kpti entry area are the same page, through the
 * same PTE, in the kernel and the user page table. */
START_TEST(window_shared)
{
    const char *name = (const char *[]){ "4g4g", "kpti" }[_i];
    Fix f = fix_new(name, 64 * GiB);
    const Layout *l = kspace_layout(f.ks);
    GError *err = NULL;
    uint64_t frame = kspace_alloc_frame(f.ks, &err);
    uint32_t va = l->window_base + l->window_size - 3 * PAGE_SIZE;
    ck_assert(kspace_map_window(f.ks, va, frame, true, &err));
    PaeWalk wk, wu;
    ck_assert(walk(&f, pspace_kernel_cr3(f.ps), va + 8, ACCESS_READ, 0, &wk));
    ck_assert(walk(&f, pspace_user_cr3(f.ps), va + 8, ACCESS_READ, 0, &wu));
    ck_assert_uint_eq(wk.paddr, frame + 8);
    ck_assert_uint_eq(wu.paddr, frame + 8);
    ck_assert_uint_eq(wk.levels[2].paddr, wu.levels[2].paddr);
    /* Different page directories (4g4g copies the window PMD entries into
     * each user PGD, kpmd_ctor; pti has a separate entry PD), same entry
     * value, hence the same page table. */
    ck_assert_uint_ne(wk.levels[1].paddr, wu.levels[1].paddr);
    ck_assert_uint_eq(wk.levels[1].after, wu.levels[1].after);
    /* pti keeps the entry area global; 4g4g makes no kernel page global. */
    ck_assert_int_eq(wk.global, l->kernel_tables == LAYOUT_KTABLES_PER_PROCESS);
    /* Supervisor-only, also from the user page table. */
    ck_assert(!walk(&f, pspace_user_cr3(f.ps), va, ACCESS_READ, 3, &wu));
    ck_assert_uint_eq(wu.error_code, 0x5);
    fix_free(&f);
}
END_TEST

/* User pages: visible at CPL 3 through the user table; the kernel table sees
 * them in shared layouts and kpti, but not in 4g4g, where the same address
 * is the kernel's own direct map (hence indirect uaccess). */
START_TEST(user_pages)
{
    Fix f = fix_new(all_layouts[_i], 2 * GiB);
    const Layout *l = kspace_layout(f.ks);
    GError *err = NULL;
    uint64_t frame = kspace_alloc_user_frame(f.ks, &err);
    uint32_t va = 0x08048000;
    if (va >= l->task_size)
        va = 0x00400000;
    ck_assert(pspace_map_user(f.ps, va, frame, true, &err));
    PaeWalk w;
    ck_assert(walk(&f, pspace_user_cr3(f.ps), va + 4, ACCESS_WRITE, 3, &w));
    ck_assert_uint_eq(w.paddr, frame + 4);
    ck_assert(w.dirty);
    bool seen = walk(&f, pspace_kernel_cr3(f.ps), va + 4, ACCESS_READ, 0, &w) &&
                w.paddr == frame + 4;
    ck_assert_int_eq(seen, l->kernel_tables != LAYOUT_KTABLES_SWAPPER);
    ck_assert_uint_eq(pspace_unmap_user(f.ps, va), frame);
    ck_assert(!walk(&f, pspace_user_cr3(f.ps), va, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.error_code, 0x4);
    fix_free(&f);
}
END_TEST

/* User space reaches 0xFEFFF000 under 4g4g (TASK_SIZE 0xff000000), and
 * the 3g1g boundary is 0xC0000000. */
START_TEST(task_size)
{
    GError *err = NULL;
    Fix a = fix_new("4g4g", 1 * GiB);
    ck_assert(pspace_map_user(a.ps, 0xFEFFF000u, kspace_alloc_user_frame(a.ks, &err), true, &err));
    ck_assert(!pspace_map_user(a.ps, 0xFF000000u, 0x1000000, true, &err));
    g_clear_error(&err);
    fix_free(&a);
    Fix b = fix_new("3g1g", 1 * GiB);
    ck_assert(pspace_map_user(b.ps, 0xBFFFF000u, kspace_alloc_user_frame(b.ks, &err), true, &err));
    ck_assert(!pspace_map_user(b.ps, 0xC0000000u, 0x1000000, true, &err));
    ck_assert_ptr_nonnull(err);
    g_clear_error(&err);
    fix_free(&b);
}
END_TEST

/* Lowmem ends where the layout's kernel VA runs out (MAXMEM =
 * -PAGE_OFFSET - 128 MiB): 3g1g 4G-3G-128M = 896 MiB; 4g4g
 * 4G-32M-128M = 3936 MiB. */
START_TEST(lowmem_end)
{
    Fix a = fix_new("3g1g", 64 * GiB);
    ck_assert_uint_eq(kspace_lowmem_end(a.ks), 896 * MiB);
    fix_free(&a);
    Fix b = fix_new("4g4g", 64 * GiB);
    ck_assert_uint_eq(kspace_lowmem_end(b.ks), 3936 * MiB);
    fix_free(&b);
    Fix c = fix_new("3g1g", 512 * MiB);
    ck_assert_uint_eq(kspace_lowmem_end(c.ks), 512 * MiB);
    fix_free(&c);
}
END_TEST

/* Page-table pages per new process: the PDPT plus every user PMD page
 * preallocated (PAE pgd_alloc); kpti adds the kernel-side PDPT. */
START_TEST(process_tables)
{
    static const unsigned want[] = { 4, 3, 2, 5, 5, 5 };
    Fix f = fix_new(all_layouts[_i], 1 * GiB);
    ck_assert_uint_eq(pspace_table_pages(f.ps), want[_i]);
    uint64_t before = kspace_lowmem_frames_used(f.ks);
    GError *err = NULL;
    ProcSpace *p2 = pspace_new(f.ks, &err);
    ck_assert_uint_eq(kspace_lowmem_frames_used(f.ks), before + want[_i]);
    pspace_free(p2);
    ck_assert_uint_eq(kspace_lowmem_frames_used(f.ks), before);
    fix_free(&f);
}
END_TEST

START_TEST(unknown_layout)
{
    GError *err = NULL;
    ck_assert_ptr_null(layout_lookup("5g5g", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "4g4g"));
    g_error_free(err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aspace");
    TCase *tc = tcase_create("layouts");
    tcase_add_loop_test(tc, direct_map, 0, 6);
    tcase_add_loop_test(tc, user_cannot_touch_kernel, 0, 6);
    tcase_add_loop_test(tc, window_shared, 0, 2);
    tcase_add_loop_test(tc, user_pages, 0, 6);
    tcase_add_test(tc, task_size);
    tcase_add_test(tc, lowmem_end);
    tcase_add_loop_test(tc, process_tables, 0, 6);
    tcase_add_test(tc, unknown_layout);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
