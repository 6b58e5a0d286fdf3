/* Address-space layouts: how a kernel arranges its and user space's
 * mappings, and what that makes the entry/exit path do. A layout is one
 * row of the table in layout.c: its addresses, its kind, its flags, the
 * stub file of its entry/exit path and its memory figures (LayoutMem),
 * each with its source; everything else (the lowmem model, the machine's
 * stub loader, the address-space builder) reads the row.
 *
 * Adding a variant of an existing kind (another split, a window of
 * another size): one row in layout.c and its line in `layouts`, and, if
 * its entry path differs, a stub file in stubs/ named in the row and in
 * kernel_model/meson.build's stub_names (tests/kernel_model/test_lowmem.c
 * fails if a row names a stub the build does not assemble).
 *
 * Adding a kind: a LayoutKind value, a stub file (it must define the
 * symbols load_stubs requires, stubs/common.inc), and a case in each place
 * that builds or switches page tables by kind: aspace.c (kspace_new: the
 * pti entry PD; pspace_new and pspace_new_legacy: the process's kernel
 * page table and how the kernel half is shared, in each paging mode; the
 * kernel PDs and a process's user PDs follow from PAGE_OFFSET and
 * TASK_SIZE) and machine.c (build_tables: the IDT's entry points and the
 * window's data; install_task: the CR3 values and stacks the per-CPU
 * block gets; machine_new: Machine.windowed). Those kind branches are
 * not yet data (issue 21).
 *
 *   3g1g       classic i386: user 0-3 GiB, kernel direct map at 0xC0000000,
 *              one page table per process holding both, kernel pages global.
 *   2g2g,1g3g  the later CONFIG_VMSPLIT options, same mechanics.
 *   4g4g       Ingo Molnar's 2003 patch as RHEL4 shipped it (2.6.9): a
 *              kernel page table of its own
 *              (__PAGE_OFFSET 0x02000000), user space up to 0xFF000000, a
 *              16 MiB window at the top shared by both; CR3 written on every
 *              entry from and exit to user mode; nothing global; uaccess
 *              through kmap_atomic.
 *   4g4g-2003  the same split with the patch's first entry/exit path (July
 *              2003, kept in RHEL3's 2.4.21 backport): a CR3 read and
 *              compare on every entry, return markers loaded from memory,
 *              no sysenter (stubs/entry_4g4g_2003.asm).
 *   kpti       the 2018 design as Linux 4.19 applied it to 32-bit PAE: the
 *              kernel page table maps everything, the user one only user
 *              space plus the entry area; CR3 written on every entry/exit,
 *              no PCID on i686, so each write flushes non-global entries.
 *   kpti-pcid  kpti with PCID-tagged TLB entries (CR3 writes with the
 *              no-flush bit). PCID exists only in IA-32e paging: this is a
 *              what-if on an i686 core, and reports must say so.
 *
 * Paging modes: the rows are PAE (3-level); layout_with_paging gives each
 * row's twin with legacy 2-level page tables (ptformat.h), as the same
 * kernel built without CONFIG_X86_PAE: the same addresses, stubs and
 * flags, the mode's page-table format and LayoutMem.legacy_* figures.
 *
 * Sources: REFERENCES.md ("The 4G/4G patch as shipped", "i386 Linux 2.6
 * memory layout", "KPTI"). */
#ifndef VMSPLIT_KERNEL_MODEL_LAYOUT_H
#define VMSPLIT_KERNEL_MODEL_LAYOUT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel_model/ptformat.h"

typedef enum {
    LAYOUT_SHARED,      /* one page table per process maps user and kernel */
    LAYOUT_4G4G,        /* separate kernel page table, shared top window */
    LAYOUT_PTI,         /* per-process kernel and user page-table pair */
} LayoutKind;

struct Layout;

/* What the lowmem model needs of a layout (layout_mem.h): how much
 * physical memory the kernel can map directly and what each process costs
 * in kernel-side page tables beyond 3g1g. Part of the layout's row. */
typedef struct {
    const struct Layout *layout;   /* the row it is part of */
    uint64_t kva_carveout;         /* kernel VA taken out of the direct map on
                                    * top of the vmalloc reserve (kpti's
                                    * cpu_entry_area) */
    bool separate_kernel_pgd;      /* the kernel runs on its own page tables
                                    * and each process needs extra kernel-side
                                    * ones (4g4g, kpti) */
    uint32_t per_process_bytes;    /* those extra page tables, per process */
    const char *source;            /* where the figures come from */
    /* The same under legacy (non-PAE) paging, where a process's page
     * directory is one 4 KiB page holding every PDE: no PMD pages. */
    uint32_t legacy_per_process_bytes;
    const char *legacy_source;
} LayoutMem;

typedef struct Layout {
    const char *name;
    const char *summary;
    LayoutKind kind;
    uint32_t page_offset;    /* start of the kernel direct map (kernel view) */
    uint32_t task_size;      /* top of user space (user view) */
    uint32_t vmalloc_reserve;/* __VMALLOC_RESERVE: kernel VA not direct-mapped */
    uint32_t window_base;    /* 4g4g: shared window (trampoline, GDT, IDT,
                              * TSS, virtual stacks); kpti: entry area */
    uint32_t window_size;
    bool kernel_global;      /* kernel mappings carry G (with CR4.PGE) */
    bool window_global;      /* the window's (or fixmap's) pages carry G:
                              * the shared layouts' as all kernel pages,
                              * kpti's entry text and cpu_entry_area
                              * (pti.rst: they keep _PAGE_GLOBAL), not
                              * 4g4g's (MAKE_GLOBAL is empty under
                              * X86_SWITCH_PAGETABLES) */
    bool pcid;               /* CR3 writes keep the other context's entries */
    bool indirect_uaccess;   /* copies through kmap_atomic, not user VAs */
    bool what_if;            /* not possible on real i686 hardware */
    const char *stub;        /* its entry/exit stubs: stubs/STUB.asm,
                              * assembled to STUB.o (kernel_model/meson.build
                              * lists the files it assembles) */
    LayoutMem mem;           /* its memory figures (layout_mem.h) */
    bool no_sysenter;        /* the kernel it follows has no sysenter path */
    bool kmap_global;        /* atomic kmaps (virtual stack, uaccess) carry G */
    const PageTableFormat *paging; /* the page-table format (ptformat.h): the
                              * table's rows are PAE; layout_with_paging
                              * gives each row's twin in another mode */
} Layout;

/* NULL if unknown. */
const Layout *layout_find(const char *name);
/* As layout_find, with a GError listing the known names. */
const Layout *layout_lookup(const char *name, GError **err);
/* NULL-terminated table in presentation order (PAE rows). */
const Layout *const *layout_all(void);
/* The row l in paging mode `mode`: l itself if it is in that mode, else
 * its twin, the same row with the mode's page-table format and memory
 * figures (LayoutMem: legacy_per_process_bytes). Twins keep the row's
 * name; outputs name the paging mode beside it. */
const Layout *layout_with_paging(const Layout *l, PagingMode mode);

/* MAXMEM, the kernel's own formula (include/asm-i386/page.h, 2.6 and the
 * RHEL4 4G/4G tree alike): -__PAGE_OFFSET - __VMALLOC_RESERVE mod 2^32.
 * The 128 MiB reserve covers vmalloc, pkmap, the fixmap and the 4g4g
 * window. The end of lowmem for the model is layout_mem_lowmem_limit()
 * (layout_mem.h), which subtracts what a layout carves out on top. */
uint64_t layout_maxmem(const Layout *l);

#endif
