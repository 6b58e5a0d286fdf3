/* The layout table. Figures from REFERENCES.md with their origin. */
#include "kernel_model/layout.h"

#include <string.h>

#define KiB 1024u
#define MiB (1024u * 1024u)

/* include/asm-i386/page.h (2.6): __PAGE_OFFSET 0xC0000000,
 * __VMALLOC_RESERVE 128 MiB -> MAXMEM 896 MiB. */
static const Layout layout_3g1g = {
    .name = "3g1g",
    .summary = "classic i386 3G/1G split: one page table, kernel global",
    .kernel_tables = LAYOUT_KTABLES_IN_USER,
    .esp0 = LAYOUT_ESP0_TASK_STACK,
    .page_offset = 0xC0000000u,
    .task_size = 0xC0000000u,
    .vmalloc_reserve = 128 * MiB,
    .kernel_global = true,
    .window_global = true,
    .paging = &ptformat_pae,
    .stub = "entry_shared",
    .mem = {
        .layout = &layout_3g1g,
        .source = "include/asm-i386/page.h: MAXMEM = -PAGE_OFFSET - __VMALLOC_RESERVE (896 MiB)",
    },
};

/* arch/i386/Kconfig VMSPLIT_2G (2.6.20): PAGE_OFFSET 0x80000000. */
static const Layout layout_2g2g = {
    .name = "2g2g",
    .summary = "CONFIG_VMSPLIT_2G: 2G/2G split, same mechanics as 3g1g",
    .kernel_tables = LAYOUT_KTABLES_IN_USER,
    .esp0 = LAYOUT_ESP0_TASK_STACK,
    .page_offset = 0x80000000u,
    .task_size = 0x80000000u,
    .vmalloc_reserve = 128 * MiB,
    .kernel_global = true,
    .window_global = true,
    .paging = &ptformat_pae,
    .stub = "entry_shared",
    .mem = {
        .layout = &layout_2g2g,
        .source = "VMSPLIT_2G PAGE_OFFSET 0x80000000; MAXMEM formula of page.h (1920 MiB)",
    },
};

/* arch/i386/Kconfig VMSPLIT_1G: PAGE_OFFSET 0x40000000. */
static const Layout layout_1g3g = {
    .name = "1g3g",
    .summary = "CONFIG_VMSPLIT_1G: 1G/3G split, same mechanics as 3g1g",
    .kernel_tables = LAYOUT_KTABLES_IN_USER,
    .esp0 = LAYOUT_ESP0_TASK_STACK,
    .page_offset = 0x40000000u,
    .task_size = 0x40000000u,
    .vmalloc_reserve = 128 * MiB,
    .kernel_global = true,
    .window_global = true,
    .paging = &ptformat_pae,
    .stub = "entry_shared",
    .mem = {
        .layout = &layout_1g3g,
        .source = "VMSPLIT_1G PAGE_OFFSET 0x40000000; MAXMEM formula of page.h (2944 MiB)",
    },
};

/* RHEL4 arch/i386 with X86_4G: __PAGE_OFFSET 0x02000000, TASK_SIZE
 * 0xff000000, the top 16 MiB (NR_SHARED_PMDS = 8 PMDs of 2 MiB) shared;
 * kernel mappings not _PAGE_GLOBAL under X86_SWITCH_PAGETABLES. */
static const Layout layout_4g4g = {
    .name = "4g4g",
    .summary = "2003 4G/4G split: separate kernel page table, CR3 write per entry/exit",
    .kernel_tables = LAYOUT_KTABLES_SWAPPER,
    .esp0 = LAYOUT_ESP0_VIRTUAL_STACK,
    .page_offset = 0x02000000u,
    .task_size = 0xFF000000u,
    .vmalloc_reserve = 128 * MiB,
    .window_base = 0xFF000000u,
    .window_size = 16 * MiB,
    .kernel_global = false,
    .window_global = false,
    .indirect_uaccess = true,
    .paging = &ptformat_pae,
    .stub = "entry_4g4g",
    /* The kernel has its own swapper_pg_dir. Each user PGD gets four PMD
     * pages (USER_PTRS_PER_PGD = 4 under PAE + X86_4G_VM_LAYOUT, RHEL4
     * include/asm-i386/pgtable.h) where 3g1g allocates three and points
     * the fourth at the kernel's shared PMD: the fourth comes from
     * kpmd_cache with the 8 shared-window PMD entries copied in
     * (kpmd_ctor, wli's cleanup of the patch, LKML 2003-08-02). One extra
     * 4 KiB page per process. */
    .mem = {
        .layout = &layout_4g4g,
        .per_process_bytes = 4 * KiB,
        .source = "RHEL4 page.h __PAGE_OFFSET 0x02000000, MAXMEM = -PAGE_OFFSET - "
                  "__VMALLOC_RESERVE (3936 MiB); pgtable.h USER_PTRS_PER_PGD 4 (kpmd page)",
        /* Non-PAE (RHEL4 arch/i386/mm/pgtable.c pgd_ctor, PTRS_PER_PMD
         * == 1): the one pgd page gets the NR_SHARED_PMDS window entries
         * of swapper_pg_dir copied in; pgd_alloc allocates no PMD. */
        .legacy_source = "RHEL4 pgtable.c pgd_ctor: non-PAE copies the window PDEs into the "
                         "one pgd page, no kpmd page",
    },
};

/* The same split and mappings with the first entry/exit path: RHEL3
 * 2.4.21 arch/i386/kernel/entry.S (__SWITCH, RESTORE_ALL). 2.4 has no
 * sysenter entry. */
static const Layout layout_4g4g_2003 = {
    .name = "4g4g-2003",
    .paging = &ptformat_pae,
    .stub = "entry_4g4g_2003",
    .summary = "4G/4G with the 2003 entry path (CR3 read per entry, RHEL3 2.4.21; int 0x80 only)",
    .kernel_tables = LAYOUT_KTABLES_SWAPPER,
    .esp0 = LAYOUT_ESP0_VIRTUAL_STACK,
    .page_offset = 0x02000000u,
    .task_size = 0xFF000000u,
    .vmalloc_reserve = 128 * MiB,
    .window_base = 0xFF000000u,
    .window_size = 16 * MiB,
    .kernel_global = false,
    .window_global = false,
    .indirect_uaccess = true,
    .no_sysenter = true,
    /* RHEL3 include/asm-i386/atomic_kmap.h: kmap_prot is PAGE_KERNEL_GLOBAL,
     * which pgtable.h keeps global under X86_SWITCH_PAGETABLES while
     * PAGE_KERNEL is not: the virtual stack and the uaccess kmaps survive
     * the CR3 writes (with CR4.PGE). RHEL4 made kmap_prot PAGE_KERNEL. */
    .kmap_global = true,
    .mem = {
        .layout = &layout_4g4g_2003,
        .per_process_bytes = 4 * KiB,
        .source = "as 4g4g (the 2003 entry path changes the entry cost, not memory)",
        .legacy_source = "as 4g4g",
    },
};

/* Linux 4.19 32-bit PTI (Documentation/x86/pti.rst): 3G/1G addresses, a
 * user page table with only the entry area (cpu_entry_area, 2 MiB here:
 * the last PMD), kernel mappings not global. */
static const Layout layout_kpti = {
    .name = "kpti",
    .summary = "2018 KPTI on 32-bit PAE: kernel/user page-table pair, no PCID",
    .kernel_tables = LAYOUT_KTABLES_PER_PROCESS,
    .esp0 = LAYOUT_ESP0_ENTRY_STACK,
    .page_offset = 0xC0000000u,
    .task_size = 0xC0000000u,
    .vmalloc_reserve = 128 * MiB,
    .window_base = 0xFFE00000u,
    .window_size = 2 * MiB,
    .kernel_global = false,
    .window_global = true,
    .paging = &ptformat_pae,
    .stub = "entry_kpti",
    /* Documentation/x86/pti.rst: "an extra 4k per process" (the PGD
     * becomes a kernel/user pair) and the 2 MiB cpu_entry_area. Estimate:
     * on 32-bit the cpu_entry_area sits below the fixmap and pushes the
     * end of the direct map down (4.19 computes MAXMEM from VMALLOC_END),
     * so its 2 MiB come out of the lowmem limit; its pages are per-CPU
     * data that exist in every layout, so no physical reservation is
     * added. */
    .mem = {
        .layout = &layout_kpti,
        .kva_carveout = 2 * MiB,
        .per_process_bytes = 4 * KiB,
        .source = "pti.rst: extra 4 KiB per process, 2 MiB cpu_entry_area (estimate: "
                  "taken from the direct map)",
        /* 4.19 arch/x86/include/asm/pgalloc.h: PGD_ALLOCATION_ORDER 1 with
         * PTI, on 32-bit non-PAE too: the pgd is a kernel/user page pair. */
        .legacy_per_process_bytes = 4 * KiB,
        .legacy_source = "4.19 pgalloc.h PGD_ALLOCATION_ORDER 1: the pgd page pair, an extra "
                         "4 KiB; 2 MiB cpu_entry_area as PAE (estimate)",
    },
};

static const Layout layout_kpti_pcid = {
    .name = "kpti-pcid",
    .summary = "KPTI with PCID-tagged TLB entries (what-if: PCID needs IA-32e paging)",
    .kernel_tables = LAYOUT_KTABLES_PER_PROCESS,
    .esp0 = LAYOUT_ESP0_ENTRY_STACK,
    .page_offset = 0xC0000000u,
    .task_size = 0xC0000000u,
    .vmalloc_reserve = 128 * MiB,
    .window_base = 0xFFE00000u,
    .window_size = 2 * MiB,
    .kernel_global = false,
    .window_global = true,
    .pcid = true,
    .what_if = true,
    .paging = &ptformat_pae,
    .stub = "entry_kpti",
    .mem = {
        .layout = &layout_kpti_pcid,
        .kva_carveout = 2 * MiB,
        .per_process_bytes = 4 * KiB,
        .source = "as kpti (PCID changes TLB behaviour, not memory)",
        .legacy_per_process_bytes = 4 * KiB,
        .legacy_source = "as kpti",
    },
};

static const Layout *const layouts[] = {
    &layout_3g1g, &layout_2g2g, &layout_1g3g, &layout_4g4g, &layout_4g4g_2003,
    &layout_kpti, &layout_kpti_pcid, NULL,
};

const Layout *const *layout_all(void) { return layouts; }

#define NLAYOUTS (G_N_ELEMENTS(layouts) - 1)

/* The twins of the rows in the other modes, made once from the rows. */
static Layout twins[PAGING_NMODES][NLAYOUTS];

static void make_twins(void)
{
    for (unsigned mode = 0; mode < PAGING_NMODES; mode++)
        for (unsigned i = 0; i < NLAYOUTS; i++) {
            Layout *t = &twins[mode][i];
            *t = *layouts[i];
            t->paging = ptformat_get((PagingMode)mode);
            t->mem.layout = t;
            if (mode == PAGING_LEGACY) {
                t->mem.per_process_bytes = t->mem.legacy_per_process_bytes;
                if (t->mem.legacy_source)
                    t->mem.source = t->mem.legacy_source;
            }
        }
}

const Layout *layout_with_paging(const Layout *l, PagingMode mode)
{
    static gsize once;
    g_assert(mode < PAGING_NMODES);
    if (l->paging->mode == mode)
        return l;
    if (g_once_init_enter(&once)) {
        make_twins();
        g_once_init_leave(&once, 1);
    }
    for (unsigned i = 0; i < NLAYOUTS; i++)
        if (!strcmp(layouts[i]->name, l->name))
            return mode == PAGING_PAE ? layouts[i] : &twins[mode][i];
    g_assert_not_reached();
}

const Layout *layout_find(const char *name)
{
    for (const Layout *const *l = layouts; *l; l++)
        if (!strcmp((*l)->name, name))
            return *l;
    return NULL;
}

const Layout *layout_lookup(const char *name, GError **err)
{
    const Layout *l = layout_find(name);
    if (!l) {
        GString *s = g_string_new(NULL);
        for (const Layout *const *k = layouts; *k; k++)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*k)->name);
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "unknown layout '%s' (expected one of: %s)", name, s->str);
        g_string_free(s, TRUE);
    }
    return l;
}

uint64_t layout_maxmem(const Layout *l)
{
    return (1ULL << 32) - l->page_offset - l->vmalloc_reserve;
}
