/* The page-table format a kernel builds, per paging mode: the one place the
 * kernel model reads entry size, levels, index shifts, large-page size, the
 * address field, the CR4 bits and the physical limit from (the address-
 * space builder, the machine's CR4 and virtual-stack PTEs, the page-fault
 * and uaccess bodies' PTE reads and writes). The walk's own rules (reserved
 * bits, rights, the walk's geometry) are the MMU's (mmu/pae.h PagingRules);
 * this table takes its figures from the MMU's constants and names the
 * MMU's rules for its mode (tests/kernel_model/test_paging_modes.c checks
 * the two agree).
 *
 *   mode    kernel (Linux 2.6 i386)     levels  entry  PD index  large  phys
 *   pae     CONFIG_X86_PAE (3-level)    3       8 B    va 29:21  2 MiB  64 GiB
 *   legacy  !CONFIG_X86_PAE (2-level)   2       4 B    va 31:22  4 MiB  4 GiB
 *
 * The flag bits P, R/W, U/S, PWT, PCD, A, D, PS (PDE) and G sit at the same
 * positions in both formats (SDM Vol. 3A Tables 4-5, 4-6 against 4-9 to
 * 4-11), so the model writes them with the PAE_* names of mmu/pae.h; what
 * differs is how wide an entry is, where its address field ends, and that
 * 32-bit paging has no XD bit and no PDPT.
 *
 * Tables are addressed the same way in both modes: a page directory is
 * found by the PDPTE index va >> 30 (under legacy paging the one page
 * directory stands for all four indices), and an entry at any level by
 * the level's shift and entry count (ptformat_entry_addr). */
#ifndef VMSPLIT_KERNEL_MODEL_PTFORMAT_H
#define VMSPLIT_KERNEL_MODEL_PTFORMAT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "mmu/pae.h"
#include "mmu/physmem.h"

/* PagingMode and PAGING_NMODES are the MMU's (mmu/pae.h). */

typedef struct {
    PagingMode mode;
    const char *name;            /* the --paging value: "pae", "legacy" */
    const char *title;           /* as Linux's Kconfig and the mails say it */
    unsigned levels;             /* 3 (PDPT, PD, PT) or 2 (PD, PT) */
    unsigned entry_bytes;        /* 8 or 4 */
    /* Per level of a walk, top first: the index is (va >> shift) &
     * (entries - 1). PAE: 30/4, 21/512, 12/512; legacy: 22/1024, 12/1024. */
    unsigned shift[3];
    unsigned entries[3];
    uint32_t large_page;         /* a PS=1 PDE maps this much: 2 or 4 MiB */
    uint64_t addr_4k;            /* the address field of a PDE or PTE */
    uint32_t cr3_base_mask;      /* CR3's table address bits */
    uint32_t cr4_paging;         /* CR4 bits the mode needs (CR4.PAE or none) */
    bool cr4_pse_for_large;      /* large pages need CR4.PSE (32-bit paging) */
    bool xd;                     /* entries have the XD bit: Linux turns on
                                  * EFER.NXE (set_nx) only under PAE */
    uint64_t phys_limit;         /* highest physical address + 1 the entries reach */
    const PagingRules *rules;    /* the MMU's reserved-bit rules for the mode */
    const char *source;
} PageTableFormat;

extern const PageTableFormat ptformat_pae;
extern const PageTableFormat ptformat_legacy;

/* The format of a mode; NULL for a name no mode has. */
const PageTableFormat *ptformat_get(PagingMode mode);
const PageTableFormat *ptformat_find(const char *name);
/* "pae, legacy" (for error messages). */
const char *ptformat_names(void);

/* One entry at pa (setup writes and host-side reads: not modelled). */
static inline uint64_t ptformat_read(const PageTableFormat *f, const PhysMem *pm, uint64_t pa)
{
    return f->entry_bytes == 8 ? physmem_read64(pm, pa) : physmem_read32(pm, pa);
}

static inline void ptformat_write(const PageTableFormat *f, PhysMem *pm, uint64_t pa,
                                  uint64_t v)
{
    if (f->entry_bytes == 8)
        physmem_write64(pm, pa, v);
    else
        physmem_write32(pm, pa, (uint32_t)v);
}

/* Where the entry for va lives in a table of level `level` (0 = the one
 * CR3 points at). */
static inline uint64_t ptformat_entry_addr(const PageTableFormat *f, unsigned level,
                                           uint64_t table, uint32_t va)
{
    return table + f->entry_bytes * ((va >> f->shift[level]) & (f->entries[level] - 1));
}

/* Where the PDE of va lives in page directory pd, and its PTE in page
 * table pt. */
static inline uint64_t ptformat_pde_addr(const PageTableFormat *f, uint64_t pd, uint32_t va)
{
    return ptformat_entry_addr(f, f->levels - 2, pd, va);
}

static inline uint64_t ptformat_pte_addr(const PageTableFormat *f, uint64_t pt, uint32_t va)
{
    return ptformat_entry_addr(f, f->levels - 1, pt, va);
}

/* The PDPTE index (0..3) whose page directory holds va's PDE: under legacy
 * paging every index names the one directory (see above). */
static inline unsigned ptformat_pd_index(uint32_t va) { return va >> PAE_PDPTE_SHIFT; }

#endif
