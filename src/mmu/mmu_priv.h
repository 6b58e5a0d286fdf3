/* The layout of an Mmu and the hit path of mmu_access as an inline
 * function, for the core (src/cpu/cpu_priv.h), whose every data reference
 * goes through it, and mmu.c. Everyone else uses mmu.h.
 *
 * mmu_access_fast(m, lin, access, cpl, f) is mmu_access (mmu.h) with the
 * commonest case decided without a call: paging on, a hit in the side's
 * first-level 4 KiB array needing no dirty walk, rights that allow the
 * access, and a frame that exists. It counts and charges exactly what
 * mmu_access would (the TLB's and MMU's statistics, the cache reference);
 * in every other case it calls the out-of-line code, which starts from
 * where the inline part stopped so nothing is counted twice. */
#ifndef VMSPLIT_MMU_MMU_PRIV_H
#define VMSPLIT_MMU_MMU_PRIV_H

#include "mmu/cache_priv.h"
#include "mmu/mmu.h"
#include "tlb/hier_priv.h"

struct Mmu {
    PhysMem *pm;
    TlbHierarchy *tlb;
    CacheHier *cache;
    PaeRegs regs;
    uint32_t cr0, cr4;
    uint64_t efer;
    uint16_t pcid;
    bool paging;                 /* CR0.PG, kept beside cr0 for the hit path */
    bool pdpte_uncached;
    unsigned walk_base;          /* preset cost.page_walk_base */
    MmuStats stats;
};

/* pae_check_rights(...) == 0 for an entry's combined rights, inline. */
static inline bool mmu_rights_ok(const TlbEntry *e, Access access, int cpl,
                                 const PaeRegs *r)
{
    bool user = cpl == 3;
    if (user && !e->us)
        return false;
    if (access == ACCESS_WRITE)
        return e->rw || (!user && !r->wp);
    if (access == ACCESS_EXEC)
        return !(r->nxe && e->nx);
    return true;
}

/* Out of line (mmu.c): mmu_translate when the fast path found no usable
 * first-level hit, and after a hit whose rights refuse the access. */
bool mmu_translate_rest(Mmu *m, uint32_t lin, Access access, int cpl,
                        uint64_t *pa, MmuFault *f);
bool mmu_translate_rewalk(Mmu *m, uint32_t lin, Access access, int cpl,
                          uint64_t *pa, MmuFault *f);

/* mmu_translate (mmu.h) with a usable first-level hit inline. */
TLB_HOT bool mmu_translate_fast(Mmu *m, uint32_t lin, Access access, int cpl,
                                uint64_t *pa, MmuFault *f)
{
    unsigned extra;
    const TlbEntry *e;
    if (G_LIKELY(m->paging) &&
        G_LIKELY((e = tlb_hier_hit_fast(m->tlb, lin, access, cpl, m->pcid, &extra)))) {
        m->stats.cycles += extra;
        if (G_LIKELY(mmu_rights_ok(e, access, cpl, &m->regs))) {
            *pa = tlb_entry_paddr(e, lin);
            return true;
        }
        return mmu_translate_rewalk(m, lin, access, cpl, pa, f);
    }
    return mmu_translate_rest(m, lin, access, cpl, pa, f);
}

/* Out of line (mmu.c): mmu_access when the fast path found no usable
 * first-level hit (paging off, or tlb_hier_hit_fast returned NULL having
 * changed nothing); mmu_access after a first-level hit whose rights refuse
 * the access (it re-walks, as mmu_translate does); the host pointer of a
 * frame never written. */
uint8_t *mmu_access_rest(Mmu *m, uint32_t lin, Access access, int cpl,
                         MmuFault *f);
uint8_t *mmu_access_rewalk(Mmu *m, uint32_t lin, Access access, int cpl,
                           MmuFault *f);
uint8_t *mmu_host_absent(Mmu *m, uint64_t pa, Access access);

TLB_HOT uint8_t *mmu_access_fast(Mmu *m, uint32_t lin, Access access, int cpl,
                                 MmuFault *f)
{
    unsigned extra;
    const TlbEntry *e;
    if (G_UNLIKELY(!m->paging) ||
        G_UNLIKELY(!(e = tlb_hier_hit_fast(m->tlb, lin, access, cpl, m->pcid, &extra))))
        return mmu_access_rest(m, lin, access, cpl, f);
    m->stats.cycles += extra;
    if (G_UNLIKELY(!mmu_rights_ok(e, access, cpl, &m->regs)))
        return mmu_access_rewalk(m, lin, access, cpl, f);
    uint64_t pa = tlb_entry_paddr(e, lin);
    if (access != ACCESS_EXEC) {     /* no instruction-cache model: see mmu.h */
        unsigned c = cache_access_fast(m->cache, pa, access == ACCESS_WRITE);
        m->stats.cycles += c;
        m->stats.data_cycles += c;
    }
    uint8_t *fr = (uint8_t *)physmem_frame_peek_inline(m->pm, pa);
    if (G_UNLIKELY(!fr))
        fr = mmu_host_absent(m, pa, access);
    return fr + (pa & (PAGE_SIZE - 1));
}

#endif
