/* Per-layout memory constants for the lowmem model: how much physical
 * memory the kernel can map directly (the lowmem limit, Linux's MAXMEM) and
 * what each process costs in kernel-side page tables beyond 3g1g.
 *
 * The address-space facts (PAGE_OFFSET, TASK_SIZE, vmalloc reserve, the
 * shared window) live in the layout table (layout.h); this small table adds
 * only what the memory accounting needs, keyed by the same names, so the
 * replay engine can charge per-process page tables from one place.
 *
 * The lowmem limit follows the kernel's own formula, include/asm-i386/page.h
 * (2.6 and the RHEL4 4G/4G tree alike):
 *     MAXMEM = -__PAGE_OFFSET - __VMALLOC_RESERVE        (mod 2^32)
 * The 128 MiB vmalloc reserve already covers the 8 MiB VMALLOC_OFFSET gap,
 * the vmalloc area, pkmap and the fixmap (and under 4G/4G the whole 16 MiB
 * shared window at 0xFF000000): see docs/lowmem.md for the 4g4g derivation.
 */
#ifndef VMSPLIT_KERNEL_MODEL_LAYOUT_MEM_H
#define VMSPLIT_KERNEL_MODEL_LAYOUT_MEM_H

#include "kernel_model/layout.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *name;              /* the layout's name in layout.h */
    uint64_t kva_carveout;         /* kernel VA taken out of the direct map on
                                    * top of the vmalloc reserve (kpti's
                                    * cpu_entry_area) */
    bool separate_kernel_pgd;      /* the kernel runs on its own page tables
                                    * and each process needs extra kernel-side
                                    * ones (4g4g, kpti) */
    uint32_t per_process_bytes;    /* those extra page tables, per process */
    const char *source;            /* where the figures come from */
} LayoutMem;

/* NULL if the layout has no memory descriptor (unknown name). */
const LayoutMem *layout_mem_find(const char *name);
/* As layout_mem_find, with a GError naming the known layouts. */
const LayoutMem *layout_mem_lookup(const char *name, GError **err);
/* NULL-terminated, in the layout table's order. */
const LayoutMem *const *layout_mem_all(void);

/* The layout descriptor (PAGE_OFFSET, vmalloc reserve, window). */
const Layout *layout_mem_layout(const LayoutMem *m);

/* MAXMEM: bytes of physical memory the kernel maps directly. */
uint64_t layout_mem_lowmem_limit(const LayoutMem *m);

#endif
