/* The whole Mmu, for mmu.c and mmu_state.c (and the MMU's tests): its
 * first member is the part the inline fast path reads (MmuFast,
 * mmu_fast.h, which the core and the kernel model include instead of
 * this); the rest is the miss path's: the walker's registers, hints and
 * masks, the TLB hierarchy, the control registers. Everyone else uses
 * mmu.h. */
#ifndef VMSPLIT_MMU_MMU_PRIV_H
#define VMSPLIT_MMU_MMU_PRIV_H

#include "mmu/mmu_fast.h"
#include "mmu/pae_priv.h"
#include "tlb/hierarchy.h"

struct Mmu {
    MmuFast fast;                /* first: what the inline fast path reads */
    PhysMem *pm;
    TlbHierarchy *tlb;
    PaeRegs regs;
    uint32_t cr0, cr4;
    uint64_t efer;
    uint16_t pcid;
    bool paging;                 /* CR0.PG, kept beside cr0 for the hit path */
    bool pdpte_uncached;
    bool no_memo;                /* mmu_set_shortcuts(m, false) */
    Tlb *only[2];                /* per side, tlb_hier_only_array when the
                                  * shortcuts are on, else NULL: the array
                                  * whose misses the only-array miss path takes
                                  * (mmu.c) */
    unsigned walk_base;          /* preset cost.page_walk_base */
    uint8_t large_size;          /* TlbPageSize of the paging mode's large
                                  * page (2 MiB under PAE, 4 MiB in 32-bit
                                  * paging): set with regs.mode (mmu.c) */
    uint32_t pde_region_mask;    /* lin masked with it keys the PDE cache,
                                  * which keys by bits 31:21: ~0 under PAE;
                                  * in 32-bit paging a PDE maps bits 31:22,
                                  * so bit 21 is cleared */
    PaeHints hints;              /* the walker's frame hints (pae_priv.h) */
    const PaeFastMasks *fast_masks[4]; /* [cpl]: pae_fast_masks_for(&regs,
                                  * cpl): set wherever regs.wp or regs.nxe
                                  * is (only here, in mmu.c) */
};

/* The rights rule (paging_rights_ok, pae.h) on a TLB entry's rights. */
static inline bool mmu_rights_ok(const TlbEntry *e, Access access, int cpl,
                                 const PaeRegs *r)
{
    return paging_rights_ok(e->rw, e->us, e->nx, access, cpl, r->wp, r->nxe);
}

#endif
