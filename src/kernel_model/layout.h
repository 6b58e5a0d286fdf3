/* Address-space layouts: how a kernel arranges its and user space's
 * mappings, and what that makes the entry/exit path do. A layout is a
 * descriptor in a small table (layout.c); adding one is one descriptor and
 * one line in the table.
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
 * Sources: REFERENCES.md ("The 4G/4G patch as shipped", "i386 Linux 2.6
 * memory layout", "KPTI"). */
#ifndef VMSPLIT_KERNEL_MODEL_LAYOUT_H
#define VMSPLIT_KERNEL_MODEL_LAYOUT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    LAYOUT_SHARED,      /* one page table per process maps user and kernel */
    LAYOUT_4G4G,        /* separate kernel page table, shared top window */
    LAYOUT_PTI,         /* per-process kernel and user page-table pair */
} LayoutKind;

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
    bool pcid;               /* CR3 writes keep the other context's entries */
    bool indirect_uaccess;   /* copies through kmap_atomic, not user VAs */
    bool what_if;            /* not possible on real i686 hardware */
    const char *stub;        /* its entry/exit stubs: stubs/STUB.asm */
    bool no_sysenter;        /* the kernel it follows has no sysenter path */
    bool kmap_global;        /* atomic kmaps (virtual stack, uaccess) carry G */
} Layout;

/* NULL if unknown. */
const Layout *layout_find(const char *name);
/* As layout_find, with a GError listing the known names. */
const Layout *layout_lookup(const char *name, GError **err);
/* NULL-terminated table in presentation order. */
const Layout *const *layout_all(void);

/* MAXMEM, the kernel's own formula (include/asm-i386/page.h, 2.6 and the
 * RHEL4 4G/4G tree alike): -__PAGE_OFFSET - __VMALLOC_RESERVE mod 2^32.
 * The 128 MiB reserve covers vmalloc, pkmap, the fixmap and the 4g4g
 * window. The end of lowmem for the model is layout_mem_lowmem_limit()
 * (layout_mem.h), which subtracts what a layout carves out on top. */
uint64_t layout_maxmem(const Layout *l);

#endif
