/* Per-layout memory constants; see layout_mem.h. */
#include "kernel_model/layout_mem.h"

#include <string.h>

#define KiB 1024u
#define MiB (1024u * 1024u)

/* 3g1g, 2g2g, 1g3g: one page table per process maps both halves; the
 * kernel half is shared (pgd_alloc copies swapper's kernel PMD pointer). */
static const LayoutMem mem_3g1g = {
    .name = "3g1g",
    .source = "include/asm-i386/page.h: MAXMEM = -PAGE_OFFSET - __VMALLOC_RESERVE (896 MiB)",
};
static const LayoutMem mem_2g2g = {
    .name = "2g2g",
    .source = "VMSPLIT_2G PAGE_OFFSET 0x80000000; MAXMEM formula of page.h (1920 MiB)",
};
static const LayoutMem mem_1g3g = {
    .name = "1g3g",
    .source = "VMSPLIT_1G PAGE_OFFSET 0x40000000; MAXMEM formula of page.h (2944 MiB)",
};

/* 4g4g: the kernel has its own swapper_pg_dir. Each user PGD gets four PMD
 * pages (USER_PTRS_PER_PGD = 4 under PAE + X86_4G_VM_LAYOUT, RHEL4
 * include/asm-i386/pgtable.h) where 3g1g allocates three and points the
 * fourth at the kernel's shared PMD: the fourth comes from kpmd_cache with
 * the 8 shared-window PMD entries copied in (kpmd_ctor, wli's cleanup of
 * the patch, LKML 2003-08-02). One extra 4 KiB page per process. */
static const LayoutMem mem_4g4g = {
    .name = "4g4g",
    .separate_kernel_pgd = true,
    .per_process_bytes = 4 * KiB,
    .source = "RHEL4 page.h __PAGE_OFFSET 0x02000000, MAXMEM = -PAGE_OFFSET - "
              "__VMALLOC_RESERVE (3936 MiB); pgtable.h USER_PTRS_PER_PGD 4 (kpmd page)",
};

static const LayoutMem mem_4g4g_2003 = {
    .name = "4g4g-2003",
    .separate_kernel_pgd = true,
    .per_process_bytes = 4 * KiB,
    .source = "as 4g4g (the 2003 entry path changes the entry cost, not memory)",
};

/* kpti: Documentation/x86/pti.rst: "an extra 4k per process" (the PGD
 * becomes a kernel/user pair) and the 2 MiB cpu_entry_area. Estimate: on
 * 32-bit the cpu_entry_area sits below the fixmap and pushes the end of the
 * direct map down (4.19 computes MAXMEM from VMALLOC_END), so we take its
 * 2 MiB out of the lowmem limit; its pages are per-CPU data that exist in
 * every layout, so no physical reservation is added. */
static const LayoutMem mem_kpti = {
    .name = "kpti",
    .kva_carveout = 2 * MiB,
    .separate_kernel_pgd = true,
    .per_process_bytes = 4 * KiB,
    .source = "pti.rst: extra 4 KiB per process, 2 MiB cpu_entry_area (estimate: "
              "taken from the direct map)",
};
static const LayoutMem mem_kpti_pcid = {
    .name = "kpti-pcid",
    .kva_carveout = 2 * MiB,
    .separate_kernel_pgd = true,
    .per_process_bytes = 4 * KiB,
    .source = "as kpti (PCID changes TLB behaviour, not memory)",
};

static const LayoutMem *const table[] = {
    &mem_3g1g, &mem_2g2g, &mem_1g3g, &mem_4g4g, &mem_4g4g_2003, &mem_kpti, &mem_kpti_pcid,
    NULL,
};

const LayoutMem *const *layout_mem_all(void) { return table; }

const LayoutMem *layout_mem_find(const char *name)
{
    if (!name)
        return NULL;
    for (const LayoutMem *const *m = table; *m; m++)
        if (!strcmp((*m)->name, name))
            return *m;
    return NULL;
}

const LayoutMem *layout_mem_lookup(const char *name, GError **err)
{
    const LayoutMem *m = layout_mem_find(name);
    if (!m) {
        GString *s = g_string_new(NULL);
        for (const LayoutMem *const *k = table; *k; k++)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*k)->name);
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "unknown layout '%s' (expected one of: %s)", name ? name : "(none)",
                    s->str);
        g_string_free(s, TRUE);
    }
    return m;
}

const Layout *layout_mem_layout(const LayoutMem *m)
{
    const Layout *l = layout_find(m->name);
    g_assert(l); /* both tables list the same names */
    return l;
}

uint64_t layout_mem_lowmem_limit(const LayoutMem *m)
{
    const Layout *l = layout_mem_layout(m);
    return layout_maxmem(l) - m->kva_carveout;
}
