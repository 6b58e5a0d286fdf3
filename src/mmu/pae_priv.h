/* The fast walk as inline code, private to src/mmu: the MMU's miss path
 * (mmu.c) tries it first, inline, so that the common walk costs no call
 * and no walk record; when it declines, the walk (pae_walk, pae.h) runs.
 * These are the walker's two entry points. Everyone else uses pae.h. */
#ifndef VMSPLIT_MMU_PAE_PRIV_H
#define VMSPLIT_MMU_PAE_PRIV_H

#include <string.h>

#include "mmu/pae.h"

/* The common case of an MMU miss, once a page has been touched: the
 * PDPTE is present, the PDE (and PTE) are present in frames that exist,
 * no reserved bit is set, the access is permitted, and the A bits (and D
 * on a write) are already set, so the walk changes no memory. Fills out
 * and returns true; otherwise returns false, and the caller runs the full
 * walk from the start. It has then changed no memory and written nothing
 * in out.
 *
 * Exactness: under these conditions walk_impl reads the PDE (and the
 * PTE) and takes none of its fault branches: P is in need; bad holds its
 * reserved mask (62:36, XD without NXE, 20:13 of a 2 MiB PDE); and
 * check_rights passes, because need and bad are its rule in mask form:
 * a user access needs U/S at every level; a write needs R/W at every
 * level when it is a user write or CR0.WP=1, and is allowed anyway
 * otherwise; a fetch with NXE=1 fails on XD at any level (with NXE=0,
 * XD is reserved). It writes no A/D bit: A is in need at every level and
 * D in the leaf's on a write, so nleaf == leaf. It then sets exactly the
 * fields set here, with nx = NXE && XD-anywhere = XD-anywhere (XD is in
 * bad when NXE=0). A frame that was never written reads as zeros, a not
 * present entry: the full walk handles it. */
typedef struct {
    uint64_t need;               /* bits every entry used must have */
    uint64_t need_leaf;          /* ... and the leaf (D on a write) */
    uint64_t bad;                /* bits no entry used may have */
    uint64_t pad;                /* a power-of-two stride: cheaper indexing */
} PaeFastMasks;

/* need, need_leaf and bad for each paging mode, access (a), user or not
 * (u), CR0.WP (w) and EFER.NXE (x), at [mode][a << 3 | u << 2 | w << 1 |
 * x]: derived from paging_rights_ok and the mode's PagingRules (pae.h)
 * when the program starts (pae.c), as the comment above says they follow
 * from them. */
extern PaeFastMasks pae_fast_masks[PAGING_NMODES][3 * 8];

/* What the fast path found, and nothing more: the MMU's miss path builds
 * its TLB entry and times the two reads from this without a PaeWalk
 * (whose fields it would only copy out again). */
typedef struct {
    uint64_t pde_pa;             /* the PDE read (refs[0]) */
    uint64_t pte_pa;             /* the PTE read (refs[1]); 4 KiB pages only */
    uint64_t pde;                /* the PDE (pde, pde_pa of the PaeWalk) */
    uint64_t frame;              /* physical base of the page */
    uint64_t all;                /* the entries used ANDed: R/W, U/S at every level */
    uint64_t any;                /* ... ORed: XD at any level */
    uint64_t leaf;               /* the leaf: G, D */
    bool large;                  /* a large page (the mode's: 2 or 4 MiB):
                                  * the PDE is the leaf */
} PaeFast;

/* The host frames of the last page directory and page table a walk
 * read (a host-speed shortcut, the MMU's): a walk through the same table
 * again skips physmem's lookup. The page directory's hint is keyed by the
 * PDPTE itself, P bit and all, so that a hit also says the PDPTE is
 * present; the page table's by its physical base. Exact because a frame,
 * once it exists, never moves and is never freed while its PhysMem lives
 * (physmem.h), and a hint is only set from a lookup that found the frame
 * (through a present PDPTE): a base whose frame did not exist is looked
 * up every time, and a hint's host is never NULL, which a hit then need
 * not test. */
typedef struct {
    uint64_t base;               /* pd: the PDPTE; pt: the table's base;
                                  * PAE_NO_HINT until set */
    const uint8_t *host;
} PaeFrameHint;

typedef struct {
    PaeFrameHint pd, pt;
} PaeHints;

/* No PDPTE in PaeRegs (pae_load_cr3 refuses reserved bits) and no
 * 4 KiB-aligned base. */
#define PAE_NO_HINT (~0ULL)

/* physmem_frame_peek_base(pm, base) through hint h (NULL: none); key:
 * the hint's key for base (see PaeFrameHint). */
static inline __attribute__((always_inline)) const uint8_t *
pae_frame_hinted(PaeFrameHint *h, const PhysMem *pm, uint64_t key, uint64_t base)
{
    if (h && key == h->base) {
        const uint8_t *f = h->host;
        if (!f)
            __builtin_unreachable();     /* never set to NULL (above) */
        return f;
    }
    const uint8_t *f = physmem_frame_peek_base(pm, base);
    if (h && f) {
        h->base = key;
        h->host = f;
    }
    return f;
}

/* pae_fast_masks for regs' CR0.WP and EFER.NXE, access READ, CPL cpl:
 * the base the fast path indexes by access. The MMU keeps it beside its
 * registers for each CPL (Mmu.fast_masks), set wherever WP or NXE is. */
static inline const PaeFastMasks *pae_fast_masks_for(const PaeRegs *regs, int cpl)
{
    return &pae_fast_masks[regs->mode][(unsigned)(cpl == 3) << 2 | (unsigned)regs->wp << 1 |
                                       (unsigned)regs->nxe];
}

/* The fast walk into a PaeFast under rules r (a constant in each of
 * pae_walk_fast's two calls, so that each mode's copy has its sizes and
 * masks folded in): true under the conditions above, having changed
 * nothing either way (out is only written on success). hints: the MMU's
 * frame hints, or NULL; masks: pae_fast_masks_for(regs, cpl), or NULL to
 * work it out. Under 32-bit paging the page directory's hint is keyed by
 * CR3's base with the P bit added: the same key a PAE PDPTE naming that
 * frame would have, and the same frame. */
static inline __attribute__((always_inline)) bool
paging_walk_fast(const PagingRules *r, const PaeRegs *regs, const PhysMem *pm, PaeHints *hints,
                 const PaeFastMasks *masks, uint32_t lin, Access access, int cpl, PaeFast *out)
{
    uint64_t top = r->top_loaded ? regs->pdpte[lin >> PAE_PDPTE_SHIFT]
                                 : (uint64_t)(regs->cr3 & r->cr3_base_mask) | PAE_P;
    uint64_t pd = top & PAE_ADDR_4K;
    const uint8_t *pdf;
    if (hints && top == hints->pd.base) {
        pdf = pae_frame_hinted(&hints->pd, pm, top, pd);   /* present */
    } else {
        if (!(top & PAE_P))
            return false;
        pdf = pae_frame_hinted(hints ? &hints->pd : NULL, pm, top, pd);
        if (!pdf)
            return false;
    }
    unsigned pde_off = (unsigned)(paging_entry_pa(r, 0, lin, r->pde_shift));
    uint64_t pde = 0;
    memcpy(&pde, pdf + pde_off, r->entry_bytes);

    if (!masks)
        masks = pae_fast_masks_for(regs, cpl);
    const PaeFastMasks *fm = masks + ((unsigned)access << 3);
    if (__builtin_expect(paging_pde_large(r, pde, regs->pse), 0)) {
        /* A large page: the PDE is the leaf. */
        if ((~pde & fm->need_leaf) | (pde & (fm->bad | r->rsvd_large)))
            return false;
        *out = (PaeFast){ .pde_pa = pd + pde_off, .pde = pde,
                          .frame = paging_large_frame(r, pde),
                          .all = pde, .any = pde, .leaf = pde, .large = true };
        return true;
    }
    if ((~pde & fm->need) | (pde & fm->bad))
        return false;
    uint64_t pt = pde & PAE_ADDR_4K;
    const uint8_t *ptf;
    if (hints && pt == hints->pt.base) {
        ptf = pae_frame_hinted(&hints->pt, pm, pt, pt);
    } else {
        ptf = pae_frame_hinted(hints ? &hints->pt : NULL, pm, pt, pt);
        if (!ptf)
            return false;
    }
    unsigned pte_off = (unsigned)(paging_entry_pa(r, 0, lin, PAGE_SHIFT));
    uint64_t pte = 0;
    memcpy(&pte, ptf + pte_off, r->entry_bytes);
    if ((~pte & fm->need_leaf) | (pte & fm->bad))
        return false;
    *out = (PaeFast){ .pde_pa = pd + pde_off, .pte_pa = pt + pte_off, .pde = pde,
                      .frame = pte & PAE_ADDR_4K, .all = pde & pte, .any = pde | pte,
                      .leaf = pte, .large = false };
    return true;
}

/* The fast walk under the rules of regs->mode (the walker's second entry
 * point, pae.h's first). */
static inline __attribute__((always_inline)) bool
pae_walk_fast(const PaeRegs *regs, const PhysMem *pm, PaeHints *hints, const PaeFastMasks *masks,
              uint32_t lin, Access access, int cpl, PaeFast *out)
{
    if (__builtin_expect(regs->mode == PAGING_LEGACY, 0))
        return paging_walk_fast(&legacy_rules, regs, pm, hints, masks, lin, access, cpl, out);
    return paging_walk_fast(&pae_rules, regs, pm, hints, masks, lin, access, cpl, out);
}

#endif
