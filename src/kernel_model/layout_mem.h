/* Per-layout memory constants for the lowmem model: how much physical
 * memory the kernel can map directly (the lowmem limit, Linux's MAXMEM) and
 * what each process costs in kernel-side page tables beyond 3g1g.
 *
 * The figures are part of each layout's row (Layout.mem, layout.c), beside
 * its address-space facts (PAGE_OFFSET, TASK_SIZE, vmalloc reserve, the
 * shared window), so that a new layout is one row; the functions here find
 * them by name for the replay engine, `vmsplit meminfo` and the sweeps.
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

/* LayoutMem (layout.h) is part of each layout's row. Its name is its
 * layout's. */
static inline const char *layout_mem_name(const LayoutMem *m)
{
    return m->layout->name;
}

/* NULL if the name is no layout's. */
const LayoutMem *layout_mem_find(const char *name);
/* As layout_mem_find, with a GError naming the known layouts. */
const LayoutMem *layout_mem_lookup(const char *name, GError **err);
/* The layout descriptor (PAGE_OFFSET, vmalloc reserve, window). */
const Layout *layout_mem_layout(const LayoutMem *m);

/* MAXMEM: bytes of physical memory the kernel maps directly. */
uint64_t layout_mem_lowmem_limit(const LayoutMem *m);

#endif
