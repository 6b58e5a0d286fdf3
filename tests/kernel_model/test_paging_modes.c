/* Every layout in both paging modes (issue 16): PAE (3-level, 8-byte
 * entries) and legacy 32-bit paging (2-level, 4-byte entries, 4 MiB PSE
 * pages), each checked against what the design says rather than against
 * the model's own output:
 *   - the legacy page tables, read back through the MMU's own walker
 *     (mmu_translate with CR4.PAE = 0): the direct map in 4 MiB pages (one
 *     TLB fill serves the whole 4 MiB), kernel pages closed to CPL 3, the
 *     4g4g window and kpti entry area shared, user pages per process;
 *   - CR3 writes per null syscall and per context switch as each design
 *     has them (3g1g: 0 and 1 for switch_mm; 4g4g: 2 and 2, no switch_mm;
 *     kpti: 2 and 3), the same in both modes;
 *   - INVLPG at a 4g4g switch exactly for the virtual-stack PTEs it
 *     rewrote, none when nothing switched;
 *   - the same syscall results (return value, bytes written to the user
 *     buffer) in every layout and mode;
 *   - legacy paging refuses more than 4 GiB of RAM, and its lowmem model
 *     cuts RAM at 4 GiB as a non-PAE kernel does. */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "preset/preset.h"
#include "kernel_model/aspace.h"
#include "kernel_model/body.h"
#include "kernel_model/layout_mem.h"
#include "kernel_model/lowmem.h"
#include "kernel_model/machine.h"
#include "mmu/mmu.h"
#include "replay/replay.h"
#include "tlb/hierarchy.h"

#define MiB (1024ULL * 1024ULL)
#define GiB (1024ULL * MiB)
#define BUF_VA 0x10000000u

static const char *layouts[] = { "3g1g", "2g2g", "1g3g", "4g4g", "4g4g-2003", "kpti",
                                  "kpti-pcid" };
#define NLAYOUTS 7

static const Layout *row(const char *name, PagingMode mode)
{
    const Layout *l = layout_find(name);
    ck_assert_ptr_nonnull(l);
    return layout_with_paging(l, mode);
}

/* ---- the legacy tables through the MMU's walker ------------------------ */

typedef struct {
    PhysMem *pm;
    KernelSpace *ks;
    ProcSpace *ps;
    Mmu *mmu;
} Tables;

static Tables tables_new(const char *layout, uint64_t ram)
{
    Tables t;
    GError *err = NULL;
    t.pm = physmem_new();
    t.ks = kspace_new(t.pm, row(layout, PAGING_LEGACY), ram, true, &err);
    ck_assert_msg(t.ks != NULL, "%s", err ? err->message : "");
    t.ps = pspace_new(t.ks, &err);
    ck_assert_ptr_nonnull(t.ps);
    t.mmu = mmu_new(t.pm, NULL);
    /* As Linux boots a non-PAE kernel with cpu_has_pse: CR4.PSE, no PAE;
     * CR0.PG with WP. */
    MmuFault f;
    ck_assert(mmu_write_cr4(t.mmu, CR4_PSE, &f));
    ck_assert(mmu_write_cr3(t.mmu, kspace_kernel_cr3(t.ks), &f));
    ck_assert(mmu_write_cr0(t.mmu, CR0_PE | CR0_WP | CR0_PG, &f));
    return t;
}

static void tables_free(Tables *t)
{
    mmu_free(t->mmu);
    pspace_free(t->ps);
    kspace_free(t->ks);
    physmem_free(t->pm);
}

static bool xlate(Tables *t, uint32_t cr3, uint32_t va, Access a, int cpl, uint64_t *pa,
                  MmuFault *f)
{
    MmuFault g;
    ck_assert(mmu_write_cr3(t->mmu, cr3, &g));
    return mmu_translate(t->mmu, va, a, cpl, pa, f);
}

/* The entry format is the one of 32-bit paging: 4-byte entries, the
 * table CR3 names is a page directory of 1024. */
START_TEST(legacy_format)
{
    const PageTableFormat *f = row("3g1g", PAGING_LEGACY)->paging;
    ck_assert_uint_eq(f->entry_bytes, 4);
    ck_assert_uint_eq(f->levels, 2);
    ck_assert_uint_eq(f->large_page, 4 * MiB);
    ck_assert_uint_eq(f->cr4_paging & CR4_PAE, 0);
    const PageTableFormat *p = row("3g1g", PAGING_PAE)->paging;
    ck_assert_uint_eq(p->entry_bytes, 8);
    ck_assert_uint_eq(p->cr4_paging & CR4_PAE, CR4_PAE);
    /* The format's figures are the MMU's (mmu/pae.h PagingRules). */
    for (int m = 0; m < PAGING_NMODES; m++) {
        const PageTableFormat *g = ptformat_get((PagingMode)m);
        ck_assert_int_eq(g->rules->mode, m);
        ck_assert_str_eq(g->rules->name, paging_rules((PagingMode)m)->name);
        ck_assert_uint_eq(g->entry_bytes, g->rules->entry_bytes);
        ck_assert_uint_eq(g->large_page, g->rules->large_page);
        ck_assert_uint_eq(g->cr3_base_mask, g->rules->cr3_base_mask);
        ck_assert_uint_eq(g->shift[g->levels - 2], g->rules->pde_shift);
        ck_assert_uint_eq(g->entries[g->levels - 1], 1u << g->rules->index_bits);
        ck_assert_int_eq(g->xd, g->rules->xd != 0);
        ck_assert_int_eq(g->levels == 3, g->rules->top_loaded);
    }
    /* A layout's twin is the same row in the other mode. */
    const Layout *a = row("4g4g", PAGING_LEGACY);
    ck_assert_str_eq(a->name, "4g4g");
    ck_assert_uint_eq(a->page_offset, layout_find("4g4g")->page_offset);
    ck_assert_ptr_eq(layout_with_paging(a, PAGING_PAE), layout_find("4g4g"));
    ck_assert_ptr_eq(layout_with_paging(a, PAGING_LEGACY), a);
}
END_TEST

/* Kernel mode reaches lowmem through the direct map in 4 MiB pages: one
 * walk fills a TLB entry that then serves the whole 4 MiB (a 4 KiB
 * mapping would take a second walk 3 MiB further on). Global only where
 * the layout makes kernel pages global. */
START_TEST(legacy_direct_map)
{
    Tables t = tables_new(layouts[_i], 1 * GiB);
    const Layout *l = kspace_layout(t.ks);
    uint64_t pa;
    MmuFault f;
    uint32_t base = l->page_offset + 8 * MiB;
    ck_assert(xlate(&t, pspace_kernel_cr3(t.ps), base + 0x123, ACCESS_WRITE, 0, &pa, &f));
    ck_assert_uint_eq(pa, 8 * MiB + 0x123);
    uint64_t walks = mmu_stats(t.mmu)->walks;
    ck_assert(mmu_translate(t.mmu, base + 3 * MiB + 0x456, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, 11 * MiB + 0x456);
    ck_assert_uint_eq(mmu_stats(t.mmu)->walks, walks);
    /* The last lowmem page. */
    uint64_t end = kspace_lowmem_end(t.ks);
    ck_assert(mmu_translate(t.mmu, l->page_offset + (uint32_t)end - 4, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, end - 4);
    tables_free(&t);
}
END_TEST

/* A ring-3 access through the user page table never reaches a kernel page:
 * the shared layouts fault on U/S (P|U), 4g4g and kpti find nothing (U). */
START_TEST(legacy_user_cannot_touch_kernel)
{
    Tables t = tables_new(layouts[_i], 1 * GiB);
    const Layout *l = kspace_layout(t.ks);
    uint64_t pa;
    MmuFault f;
    uint32_t kva = l->page_offset + 0x100000;
    ck_assert(!xlate(&t, pspace_user_cr3(t.ps), kva, ACCESS_READ, 3, &pa, &f));
    ck_assert_uint_eq(f.vector, 14);
    ck_assert_uint_eq(f.cr2, kva);
    ck_assert_uint_eq(f.error_code, l->kernel_tables == LAYOUT_KTABLES_IN_USER ? 0x5u : 0x4u);
    tables_free(&t);
}
END_TEST

/* A user page: the process's own, visible at CPL 3; the kernel-mode table
 * sees it in the shared layouts and kpti (whose kernel page directory gets
 * the same user PDE), not in 4g4g. Unmapped, it faults not-present. */
START_TEST(legacy_user_pages)
{
    Tables t = tables_new(layouts[_i], 2 * GiB);
    const Layout *l = kspace_layout(t.ks);
    GError *err = NULL;
    uint64_t frame = kspace_alloc_user_frame(t.ks, &err), pa;
    MmuFault f;
    uint32_t va = 0x08048000;
    if (va >= l->task_size)
        va = 0x00400000;
    ck_assert(pspace_map_user(t.ps, va, frame, true, &err));
    ck_assert(xlate(&t, pspace_user_cr3(t.ps), va + 4, ACCESS_WRITE, 3, &pa, &f));
    ck_assert_uint_eq(pa, frame + 4);
    bool seen = xlate(&t, pspace_kernel_cr3(t.ps), va + 4, ACCESS_READ, 0, &pa, &f) &&
                pa == frame + 4;
    ck_assert_int_eq(seen, l->kernel_tables != LAYOUT_KTABLES_SWAPPER);
    /* A second process has its own directory: the page is not there. */
    ProcSpace *p2 = pspace_new(t.ks, &err);
    ck_assert(!xlate(&t, pspace_user_cr3(p2), va, ACCESS_READ, 3, &pa, &f));
    ck_assert_uint_eq(f.error_code, 0x4);
    pspace_free(p2);
    ck_assert_uint_eq(pspace_unmap_user(t.ps, va), frame);
    mmu_invlpg(t.mmu, va);
    ck_assert(!xlate(&t, pspace_user_cr3(t.ps), va, ACCESS_READ, 3, &pa, &f));
    ck_assert_uint_eq(f.error_code, 0x4);
    tables_free(&t);
}
END_TEST

/* The 4g4g window and the kpti entry area: one page, the same frame from
 * the kernel and the user page table, supervisor-only. */
START_TEST(legacy_window_shared)
{
    const char *name = (const char *[]){ "4g4g", "kpti" }[_i];
    Tables t = tables_new(name, 4 * GiB);
    const Layout *l = kspace_layout(t.ks);
    GError *err = NULL;
    uint64_t frame = kspace_alloc_frame(t.ks, &err), pa;
    MmuFault f;
    uint32_t va = l->window_base + l->window_size - 3 * PAGE_SIZE;
    ck_assert(kspace_map_window(t.ks, va, frame, true, &err));
    ck_assert(xlate(&t, pspace_kernel_cr3(t.ps), va + 8, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, frame + 8);
    ck_assert(xlate(&t, pspace_user_cr3(t.ps), va + 8, ACCESS_READ, 0, &pa, &f));
    ck_assert_uint_eq(pa, frame + 8);
    ck_assert(!xlate(&t, pspace_user_cr3(t.ps), va, ACCESS_READ, 3, &pa, &f));
    ck_assert_uint_eq(f.error_code, 0x5);
    tables_free(&t);
}
END_TEST

/* Page-table pages per new process, as the non-PAE kernels allocate them:
 * one page directory (pgd_alloc, no PMDs), kpti a pair. */
START_TEST(legacy_process_tables)
{
    Tables t = tables_new(layouts[_i], 1 * GiB);
    unsigned want = kspace_layout(t.ks)->kernel_tables == LAYOUT_KTABLES_PER_PROCESS ? 2 : 1;
    ck_assert_uint_eq(pspace_table_pages(t.ps), want);
    tables_free(&t);
}
END_TEST

/* ---- machines ----------------------------------------------------------- */

typedef struct {
    Preset *p;
    Machine *m;
    KernelBody *kb;
    ProfileTable *prof;
} Fix;

static Fix boot(const char *layout, PagingMode mode, bool sysenter)
{
    Fix f = { 0 };
    GError *err = NULL;
    f.p = preset_load("p4-northwood", &err);
    ck_assert_msg(f.p != NULL, "%s", err ? err->message : "");
    MachineConfig cfg = { .preset = f.p, .layout = row(layout, mode), .ram = 4 * GiB,
                          .sysenter = sysenter };
    f.m = machine_new(&cfg, &err);
    ck_assert_msg(f.m != NULL, "%s %s: %s", layout, ptformat_get(mode)->name,
                  err ? err->message : "");
    f.kb = kbody_new(f.m, &err);
    ck_assert_ptr_nonnull(f.kb);
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

static uint64_t cr3_writes(Fix *f) { return mmu_stats(machine_mmu(f->m))->cr3_writes; }

static uint32_t call(Fix *f, const char *name, uint32_t bytes_out, uint32_t ret)
{
    SyscallCall c = { .profile = profiles_find(f->prof, name, NULL), .switch_to = -1,
                      .ret = ret, .bytes_out = bytes_out, .user_buf = BUF_VA,
                      .user_buf_bytes = bytes_out };
    kbody_set_call(f->kb, &c);
    uint32_t r = 0;
    GError *err = NULL;
    ck_assert_msg(machine_syscall(f->m, c.profile->nr, NULL, &r, &err), "%s",
                  err ? err->message : "");
    return r;
}

/* The patch's design (REFERENCES.md "The 4G/4G patch as shipped"; pti.rst):
 * a null syscall writes CR3 twice under 4g4g (both entry paths) and kpti,
 * never under the shared layouts, and the CR3 writes under 4g4g and kpti
 * drop TLB entries (no PCID) -- in either paging mode. */
START_TEST(cr3_per_syscall)
{
    const char *name = layouts[_i % NLAYOUTS];
    PagingMode mode = (PagingMode)((_i / NLAYOUTS) % 2);
    bool sysenter = _i >= 2 * NLAYOUTS;
    if (sysenter && layout_find(name)->no_sysenter)
        return;
    const Layout *l = row(name, mode);
    unsigned want = l->kernel_tables == LAYOUT_KTABLES_IN_USER ? 0 : 2;
    Fix f = boot(name, mode, sysenter);
    for (int i = 0; i < 3; i++)
        call(&f, "getppid", 0, 7);
    uint64_t c0 = cr3_writes(&f), d0 = tlbstat(&f, "dropped_cr3");
    for (int i = 0; i < 10; i++)
        ck_assert_uint_eq(call(&f, "getppid", 0, 7), 7);
    ck_assert_uint_eq(cr3_writes(&f) - c0, 10 * want);
    uint64_t dropped = tlbstat(&f, "dropped_cr3") - d0;
    if (want && !l->pcid)
        ck_assert_uint_gt(dropped, 0);
    else
        ck_assert_uint_eq(dropped, 0);
    /* Under legacy paging the core runs with CR4.PAE clear. */
    ck_assert_int_eq((mmu_cr4(machine_mmu(f.m)) & CR4_PAE) != 0, mode == PAGING_PAE);
    fix_free(&f);
}
END_TEST

/* A context switch through the timer interrupt: CR3 writes as the design
 * has them (3g1g: switch_mm's one; 4g4g: the IRQ's entry and exit, no
 * switch_mm; kpti: entry, switch_mm, exit), and under 4g4g an INVLPG for
 * each virtual-stack PTE __kmap_atomic rewrote (both: the two tasks'
 * stacks are different frames) and none otherwise. A syscall that
 * switches nothing INVLPGs nothing. */
START_TEST(context_switch)
{
    static const char *names[] = { "3g1g", "4g4g", "kpti", "4g4g-2003" };
    static const unsigned want_cr3[] = { 1, 2, 3, 2 };
    static const unsigned want_invlpg[] = { 0, 2, 0, 2 };
    int l = _i % 4;
    PagingMode mode = (PagingMode)(_i / 4);
    Fix f = boot(names[l], mode, false);
    GError *err = NULL;
    int t1 = machine_task_new(f.m, &err);
    ck_assert_int_eq(t1, 1);
    for (int round = 0; round < 2; round++) {
        uint64_t c0 = cr3_writes(&f), inv = tlbstat(&f, "flushes_invlpg");
        uint64_t rew = machine_counts(f.m)->vstack_ptes_rewritten;
        int to = round ? 0 : t1;
        ck_assert_msg(machine_switch_to(f.m, to, &err), "%s", err ? err->message : "");
        ck_assert_int_eq(machine_current(f.m), to);
        ck_assert_uint_eq(cr3_writes(&f) - c0, want_cr3[l]);
        ck_assert_uint_eq(tlbstat(&f, "flushes_invlpg") - inv, want_invlpg[l]);
        ck_assert_uint_eq(machine_counts(f.m)->vstack_ptes_rewritten - rew, want_invlpg[l]);
        inv = tlbstat(&f, "flushes_invlpg");
        ck_assert_uint_eq(call(&f, "getppid", 0, 5), 5);
        ck_assert_uint_eq(tlbstat(&f, "flushes_invlpg") - inv, 0);
    }
    fix_free(&f);
}
END_TEST

/* The same call gives the same result everywhere: its return value, and
 * what it wrote into the user buffer (copy_to_user writes the first dword
 * of every line: through the user addresses, or under 4g4g through a
 * kmap_atomic of the user frame). Read back from the user frames. */
START_TEST(same_results)
{
    const char *name = layouts[_i % NLAYOUTS];
    PagingMode mode = (PagingMode)(_i / NLAYOUTS);
    Fix f = boot(name, mode, false);
    GError *err = NULL;
    const uint32_t bytes = 2 * PAGE_SIZE;
    ck_assert(machine_map_user(f.m, 0, BUF_VA, bytes / PAGE_SIZE, true, &err));
    ProcSpace *ps = machine_task_space(f.m, 0);
    PhysMem *pm = kspace_physmem(machine_kspace(f.m));
    const PageTableFormat *fmt = kspace_paging(machine_kspace(f.m));
    uint64_t frame[2];
    for (int p = 0; p < 2; p++) {
        uint64_t pte_pa = pspace_user_pte_pa(ps, BUF_VA + p * PAGE_SIZE, false, &err);
        ck_assert_uint_ne(pte_pa, 0);
        frame[p] = ptformat_read(fmt, pm, pte_pa) & fmt->addr_4k;
        uint8_t fill[PAGE_SIZE];
        memset(fill, 0xAB, sizeof fill);
        physmem_write(pm, frame[p], fill, sizeof fill);
    }
    ck_assert_uint_eq(call(&f, "read", bytes, 8192), 8192);
    ck_assert_uint_eq(kbody_last(f.kb)->copied, bytes);
    for (int p = 0; p < 2; p++)
        for (uint32_t off = 0; off < PAGE_SIZE; off += 4) {
            uint32_t v = physmem_read32(pm, frame[p] + off);
            ck_assert_msg(v == (off % 64 ? 0xABABABABu : 0u), "%s %s: page %d offset %u: 0x%08x",
                          name, fmt->name, p, off, v);
        }
    ck_assert_uint_eq(call(&f, "getppid", 0, 4242), 4242);
    fix_free(&f);
}
END_TEST

/* A real program replayed with its own references and page faults
 * (workloads/captures/pipeline: 21 processes, forks and execs): which
 * faults it takes is the program's, not the page-table format's, so every
 * layout in both modes takes the same faults of each kind, maps the same
 * pages, hands the fault body the CR2 and error code the touch raised,
 * and returns to the program what its syscalls returned. */
START_TEST(same_faults_in_both_modes)
{
    static const char *names[] = { "3g1g", "4g4g", "kpti" };
    char *trace = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR") ? g_getenv("VMSPLIT_SOURCE_DIR")
                                                                   : ".",
                                   "workloads", "captures", "pipeline.vmt.gz", NULL);
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    ck_assert_ptr_nonnull(p);
    UserMmStats first = { 0 };
    for (int i = 0; i < 6; i++) {
        ReplayConfig cfg = { .preset = p, .layout = row(names[i % 3], (PagingMode)(i / 3)),
                             .ram = 4 * GiB };
        ReplayResult *r = replay_run(&cfg, trace, &err);
        ck_assert_msg(r != NULL, "%s: %s", names[i % 3], err ? err->message : "");
        const ReplayRefs *refs = replay_refs(r);
        ck_assert(refs->has_refs);
        ck_assert_uint_eq(refs->faults.bad_fault_info, 0);
        ck_assert_uint_gt(refs->results_checked, 0);
        ck_assert_uint_eq(refs->results_wrong, 0);
        if (i == 0)
            first = refs->faults;
        for (int k = 0; k < UFAULT_KINDS; k++)
            ck_assert_msg(refs->faults.count[k] == first.count[k], "%s %s: %s %llu against %llu",
                          names[i % 3], i / 3 ? "legacy" : "pae",
                          usermm_fault_name((UserFaultKind)k),
                          (unsigned long long)refs->faults.count[k],
                          (unsigned long long)first.count[k]);
        ck_assert_uint_eq(refs->faults.pages_peak, first.pages_peak);
        replay_result_free(r);
    }
    ck_assert_uint_gt(first.count[UFAULT_COW_COPY] + first.count[UFAULT_COW_REUSE], 0);
    preset_free(p);
    g_free(trace);
}
END_TEST

/* ---- RAM limits --------------------------------------------------------- */

/* Legacy paging addresses 4 GiB: a machine with more is refused with an
 * error that says so; 4 GiB itself boots. PAE still takes 64 GiB. */
START_TEST(legacy_ram_limit)
{
    GError *err = NULL;
    PhysMem *pm = physmem_new();
    ck_assert_ptr_null(kspace_new(pm, row("3g1g", PAGING_LEGACY), 8 * GiB, true, &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err->message, "4 GiB"));
    ck_assert_ptr_nonnull(strstr(err->message, "non-PAE"));
    g_clear_error(&err);
    KernelSpace *ks = kspace_new(pm, row("4g4g", PAGING_LEGACY), 4 * GiB, true, &err);
    ck_assert_ptr_nonnull(ks);
    kspace_free(ks);
    ks = kspace_new(pm, row("4g4g", PAGING_PAE), 64 * GiB, true, &err);
    ck_assert_ptr_nonnull(ks);
    kspace_free(ks);
    physmem_free(pm);
}
END_TEST

/* The lowmem model under legacy paging: RAM above 4 GiB is cut off (Linux
 * setup.c: "Warning only 4GB will be used"), so no highmem beyond it; no
 * PAE PMD pages among the direct-map page tables (2 pages: pkmap and
 * fixmap PTE pages, against PAE's 6); the per-process extra of 4g4g is
 * none (one pgd page, pgd_ctor copies the window entries) and kpti's
 * the pgd pair's second page. */
START_TEST(legacy_lowmem)
{
    LowmemMap map;
    LowmemReport pae, leg;
    GError *err = NULL;
    ck_assert(lowmem_map_default(&map, 8 * GiB, &err));
    ck_assert(lowmem_compute(&row("3g1g", PAGING_PAE)->mem, &map, NULL, &pae, &err));
    ck_assert(lowmem_compute(&row("3g1g", PAGING_LEGACY)->mem, &map, NULL, &leg, &err));
    ck_assert(!pae.beyond_pae);
    ck_assert(leg.beyond_pae);
    ck_assert_uint_eq(leg.max_pfn, 4 * GiB / PAGE_SIZE);
    ck_assert_uint_le(leg.high_total_kb * 1024, 4 * GiB - 896 * MiB);
    ck_assert_uint_gt(pae.high_total_kb, leg.high_total_kb + 3 * 1024 * 1024);
    ck_assert_uint_eq(lowmem_report_item(&pae, "direct-map page tables")->bytes, 6 * PAGE_SIZE);
    ck_assert_uint_eq(lowmem_report_item(&leg, "direct-map page tables")->bytes, 2 * PAGE_SIZE);
    ck_assert_uint_eq(row("4g4g", PAGING_LEGACY)->mem.per_process_bytes, 0);
    ck_assert_uint_eq(row("4g4g", PAGING_PAE)->mem.per_process_bytes, 4096);
    ck_assert_uint_eq(row("kpti", PAGING_LEGACY)->mem.per_process_bytes, 4096);
    /* Up to 4 GiB the two modes see the same RAM. */
    ck_assert(lowmem_map_default(&map, 2 * GiB, &err));
    ck_assert(lowmem_compute(&row("3g1g", PAGING_PAE)->mem, &map, NULL, &pae, &err));
    ck_assert(lowmem_compute(&row("3g1g", PAGING_LEGACY)->mem, &map, NULL, &leg, &err));
    ck_assert_uint_eq(pae.high_total_kb, leg.high_total_kb);
    ck_assert_uint_eq(pae.max_pfn, leg.max_pfn);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("paging-modes");
    TCase *tc = tcase_create("paging");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, legacy_format);
    tcase_add_loop_test(tc, legacy_direct_map, 0, NLAYOUTS);
    tcase_add_loop_test(tc, legacy_user_cannot_touch_kernel, 0, NLAYOUTS);
    tcase_add_loop_test(tc, legacy_user_pages, 0, NLAYOUTS);
    tcase_add_loop_test(tc, legacy_window_shared, 0, 2);
    tcase_add_loop_test(tc, legacy_process_tables, 0, NLAYOUTS);
    tcase_add_loop_test(tc, cr3_per_syscall, 0, 4 * NLAYOUTS);
    tcase_add_loop_test(tc, context_switch, 0, 8);
    tcase_add_loop_test(tc, same_results, 0, 2 * NLAYOUTS);
    tcase_add_test(tc, same_faults_in_both_modes);
    tcase_add_test(tc, legacy_ram_limit);
    tcase_add_test(tc, legacy_lowmem);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
