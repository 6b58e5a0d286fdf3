/* Address-space layouts: how a kernel arranges its and user space's
 * mappings, and what that makes the entry/exit path do. A layout is one
 * row of the table in layout.c: its addresses, its mechanisms (which page
 * table the kernel runs on, where entry from user mode lands), its flags,
 * the stub file of its entry/exit path and its memory figures
 * (LayoutMem), each with its source. Everything that builds or runs a
 * layout reads the row, and none of it branches on a layout's name:
 *   - aspace.c builds the page tables from kernel_tables, PAGE_OFFSET,
 *     TASK_SIZE and the window: the kernel PDs from PAGE_OFFSET, a
 *     process's user PDs from TASK_SIZE, a shared entry-area PD where a
 *     user table holds only the window and no user space shares its PD;
 *   - machine.c loads the row's stub (resolving its externs KERNEL_PGD,
 *     PAGE_OFFSET and WINDOW_BASE from the row), places its .entry
 *     sections and the GDT, IDT and TSS in the window when the row has
 *     one, points the IDT's gates and the SYSENTER MSRs at the stub's
 *     symbols, and fills TSS.esp0 and the per-CPU block from esp0 and
 *     kernel_tables;
 *   - the lowmem model (layout_mem.h) reads the addresses and LayoutMem.
 *
 * Adding a variant of an existing design (another split, a window of
 * another size or place, another entry path for the same page tables):
 * its row in layout.c and its line in `layouts`, and, if its entry path
 * differs, a stub file in stubs/ named in the row. Nothing else:
 * kernel_model/meson.build assembles the stubs the rows name (it reads
 * the `.stub = "NAME",` lines of layout.c; test_lowmem.c's
 * test_layout_stubs_built checks every row's object was built), and
 * tests/kernel_model/test_layout_variant.c boots rows that are in no
 * table, in both paging modes. One limit: under PAE, where a process's
 * table maps the kernel (all kernel_tables but SWAPPER), user space and
 * the kernel's PDs must not share a PDPTE slot (TASK_SIZE at or below
 * PAGE_OFFSET rounded down to 1 GiB), as Linux's SHARED_KERNEL_PMD has
 * it; kspace_new asserts it.
 *
 * The stub file must define the symbols load_stubs requires
 * (int80_entry, sysenter_entry, irq_entry, ret_from_fork, cpu_data:
 * stubs/common.inc) and follow the row's contract: with esp0, where the
 * CPU lands from user mode; with kernel_tables, which CR3 values it
 * finds where (the per-CPU block's CD_NEXT_CR3 unless the kernel table
 * is swapper's; its CD_KERNEL_CR3/CD_USER_CR3 pair with a per-process
 * kernel table; the extern KERNEL_PGD and thread_info->user_pgd always).
 *
 * Adding a kind, a mechanism none of the enums below names (say a
 * kernel table per CPU, or a stack scheme other than LayoutEsp0's
 * three): a value in LayoutKernelTables or LayoutEsp0, its stub file,
 * and its case where that enum is read. In aspace.c, for kernel_tables:
 * pspace_new and pspace_new_legacy (which CR3 tables a process gets and
 * what each holds of the kernel, per paging mode) and has_entry_pd. In
 * machine.c: build_tables (esp0: what TSS.esp0 points at) and
 * install_task (esp0, and kernel_tables: which CR3 values the per-CPU
 * block gets). The switches fail to compile without the new case
 * (-Wswitch under -Dwerror=true); the if-tests name the value they test.
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

/* Which page table the kernel runs on, and so what a process's user page
 * table holds of the kernel (aspace.c builds them; machine.c writes the
 * CR3 values the stubs load). */
typedef enum {
    /* One page table per process maps user and kernel: the kernel half
     * is the kernel's own PDs (PAE: SHARED_KERNEL_PMD) or a copy of its
     * PDEs (legacy: pgd_ctor). switch_mm loads it (CD_NEXT_CR3). */
    LAYOUT_KTABLES_IN_USER,
    /* The kernel runs on one page table of its own for every process
     * (swapper_pg_dir: the stub's KERNEL_PGD); a user page table holds
     * only the window's PDEs (kpmd_ctor; legacy pgd_ctor) and is loaded
     * on exit from thread_info->user_pgd. switch_mm writes no CR3. */
    LAYOUT_KTABLES_SWAPPER,
    /* Each process has a kernel page table beside its user one (the pgd
     * pair): the kernel one maps everything, the user one user space
     * plus the window (PAE: a shared entry-area PD where no user space
     * shares the window's PD); user PDEs appear in both. The stubs load
     * the pair from the per-CPU block (CD_KERNEL_CR3, CD_USER_CR3). */
    LAYOUT_KTABLES_PER_PROCESS,
} LayoutKernelTables;

/* Where the CPU lands on entry from user mode: what TSS.esp0 (and the
 * SYSENTER_ESP MSR, which points at it) gives the stub (machine.c). Any
 * value but the first needs a window (window_size != 0). */
typedef enum {
    LAYOUT_ESP0_TASK_STACK,     /* the task's kernel stack, rewritten at each switch */
    LAYOUT_ESP0_VIRTUAL_STACK,  /* a per-CPU virtual stack in the window: two
                                 * pages re-pointed at the task's stack at each
                                 * switch (4g4g's __switch_to) */
    LAYOUT_ESP0_ENTRY_STACK,    /* a per-CPU entry stack page in the window; the
                                 * stub moves to the task's stack, whose top it
                                 * reads from the per-CPU block (CD_STACK_TOP) */
} LayoutEsp0;

struct Layout;

/* What the lowmem model needs of a layout (layout_mem.h): how much
 * physical memory the kernel can map directly and what each process costs
 * in kernel-side page tables beyond 3g1g. Part of the layout's row. */
typedef struct {
    const struct Layout *layout;   /* the row it is part of */
    uint64_t kva_carveout;         /* kernel VA taken out of the direct map on
                                    * top of the vmalloc reserve (kpti's
                                    * cpu_entry_area) */
    uint32_t per_process_bytes;    /* extra kernel-side page tables per process
                                    * (where the kernel runs on its own page
                                    * tables: Layout.kernel_tables) */
    const char *source;            /* where the figures come from */
    /* The same under legacy (non-PAE) paging, where a process's page
     * directory is one 4 KiB page holding every PDE: no PMD pages. */
    uint32_t legacy_per_process_bytes;
    const char *legacy_source;
} LayoutMem;

typedef struct Layout {
    const char *name;
    const char *summary;
    LayoutKernelTables kernel_tables; /* the kernel's page table (above) */
    LayoutEsp0 esp0;         /* where entry from user mode lands (above) */
    uint32_t page_offset;    /* start of the kernel direct map (kernel view) */
    uint32_t task_size;      /* top of user space (user view) */
    uint32_t vmalloc_reserve;/* __VMALLOC_RESERVE: kernel VA not direct-mapped */
    uint32_t window_base;    /* a window mapped alike in the kernel and the
                              * user page tables, holding the stubs'
                              * .entry/.entry_data sections, the GDT, IDT,
                              * TSS and esp0's stack: 4g4g's shared window,
                              * kpti's entry area; size 0: none (the
                              * stubs run from the kernel text) */
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
