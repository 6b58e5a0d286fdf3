/* PAE page walker. See pae.h for the model and the SDM sections. */
#include "mmu/pae.h"
#include "mmu/pae_priv.h"

#include <stdio.h>
#include <string.h>

bool pae_load_cr3(PaeRegs *regs, const PhysMem *pm, uint32_t cr3, PaeRef refs[4])
{
    uint64_t base = cr3 & PAE_CR3_PDPT_MASK;
    /* The PDPT is 32-byte aligned (CR3[31:5]) and below 4 GiB: its four
     * entries lie in one frame, read with one lookup (zeros if the frame
     * was never written, as physmem_read64 would return). */
    uint64_t e[PAE_PTRS_PER_PDPT] = { 0 };
    const uint8_t *frame = physmem_frame_peek_base(pm, base & PAGE_MASK);
    if (frame)
        memcpy(e, frame + (base & (PAGE_SIZE - 1)), sizeof e);
    for (int i = 0; i < PAE_PTRS_PER_PDPT; i++) {
        if (refs)
            refs[i] = (PaeRef){ .paddr = base + 8 * (uint64_t)i, .write = false };
        /* §4.4.1: a present PDPTE with a reserved bit set makes the MOV
         * to CR3 fault with #GP(0); nothing is loaded. */
        if ((e[i] & PAE_P) && (e[i] & pae_rules.rsvd_top))
            return false;
    }
    regs->cr3 = cr3;
    memcpy(regs->pdpte, e, sizeof e);
    return true;
}

PaeFastMasks pae_fast_masks[PAGING_NMODES][3 * 8];

/* The fast walk's masks (pae_priv.h) for each mode, derived from its
 * rules: an entry must have U/S where a page without it would refuse the
 * access, R/W where a page without it would, and P and A (a set A bit: no
 * A write); the leaf also D on a write (§4.8: no D write); no entry may
 * have a reserved bit or an XD bit that would refuse the access (a mode
 * without XD has none: EFER.NXE has no effect there). Run once when the
 * program starts, before anything walks. */
__attribute__((constructor)) static void fast_masks_init(void)
{
    for (unsigned mode = 0; mode < PAGING_NMODES; mode++)
        for (unsigned a = 0; a < 3; a++)
            for (unsigned i = 0; i < 8; i++) {
                const PagingRules *r = paging_rules((PagingMode)mode);
                Access acc = (Access)a;
                int cpl = i & 4 ? 3 : 0;
                bool wp = i & 2, nxe = (i & 1) && r->xd;
                uint64_t need = PAE_P | PAE_A;
                if (!paging_rights_ok(true, false, false, acc, cpl, wp, nxe))
                    need |= PAE_US;
                if (!paging_rights_ok(false, true, false, acc, cpl, wp, nxe))
                    need |= PAE_RW;
                uint64_t bad = paging_reserved_bits(r, false, nxe);
                if (!paging_rights_ok(true, true, true, acc, cpl, wp, nxe))
                    bad |= r->xd;
                pae_fast_masks[mode][a << 3 | i] = (PaeFastMasks){
                    .need = need,
                    .need_leaf = need | (acc == ACCESS_WRITE ? PAE_D : 0),
                    .bad = bad,
                };
            }
}

uint32_t pae_check_rights(bool rw, bool us, bool nx, Access access, int cpl,
                          bool wp, bool nxe)
{
    return paging_rights_fault(rw, us, nx, access, cpl, wp, nxe);
}

static inline bool page_fault(PaeWalk *out, uint32_t lin, uint32_t ec)
{
    out->fault = true;
    out->vector = VEC_PF;
    out->error_code = ec;
    out->cr2 = lin;
    return false;
}

/* Whether a present PDE or PTE has a reserved bit set under rules r. */
static inline bool entry_reserved(const PagingRules *r, uint64_t e, bool nxe, bool large)
{
    return (e & paging_reserved_bits(r, large, nxe)) != 0;
}

static inline void add_ref(PaeWalk *out, uint64_t paddr, bool write)
{
    out->refs[out->nrefs++] = (PaeRef){ .paddr = paddr, .write = write };
}

/* A PDE or PTE of the mode's size (4-byte entries are 4-aligned: they
 * never cross a frame). */
static inline __attribute__((always_inline)) uint64_t entry_read(const PagingRules *r,
                                                                 const PhysMem *pm, uint64_t pa)
{
    return r->entry_bytes == 8 ? physmem_read64_aligned(pm, pa) : physmem_read32(pm, pa);
}

/* An A/D update: the entry written back at its own size (a 4-byte write
 * must not touch the next entry). */
static inline __attribute__((always_inline)) void entry_write(const PagingRules *r, PhysMem *pm,
                                                              uint64_t pa, uint64_t e)
{
    if (r->entry_bytes == 8)
        physmem_write64(pm, pa, e);
    else
        physmem_write32(pm, pa, (uint32_t)e);
}

/* The walk (pae.h) under rules r, a constant in each of pae_walk's two
 * calls (so each mode's copy has its sizes and masks folded in); inline
 * so that its steps are not calls. */
static inline __attribute__((always_inline)) bool
walk_impl(const PagingRules *r, const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access,
          int cpl, PaeWalk *out)
{
    out->fault = false;
    out->nrefs = 0;
    out->nlevels = 0;
    bool nxe = regs->nxe && r->xd;         /* 32-bit paging: no XD, no I/D */
    uint32_t ec = paging_fault_code(access, cpl, nxe);

    uint64_t pd;
    if (r->top_loaded) {
        /* PAE level 3: the PDPTE register (no memory reference, no A/D
         * bits). */
        unsigned i3 = lin >> PAE_PDPTE_SHIFT;
        uint64_t pdpte = regs->pdpte[i3];
        out->levels[0] = (PaeLevel){ .level = PAE_LEVEL_PDPTE,
                                     .paddr = (regs->cr3 & r->cr3_base_mask) + 8u * i3,
                                     .before = pdpte, .after = pdpte,
                                     .from_register = true };
        out->nlevels = 1;
        if (!(pdpte & PAE_P))
            return page_fault(out, lin, ec);
        /* Reserved PDPTE bits were refused at the CR3 load (#GP). */
        pd = pdpte & PAE_ADDR_4K;
    } else {
        pd = regs->cr3 & r->cr3_base_mask;  /* 32-bit paging: CR3[31:12] */
    }

    /* The PDE. */
    int ipde = out->nlevels;
    uint64_t pde_pa = paging_entry_pa(r, pd, lin, r->pde_shift);
    uint64_t pde = entry_read(r, pm, pde_pa);
    add_ref(out, pde_pa, false);
    out->pde_pa = pde_pa;
    out->pde = pde;
    out->levels[ipde] = (PaeLevel){ .level = PAE_LEVEL_PDE, .paddr = pde_pa,
                                    .before = pde, .after = pde };
    out->nlevels = ipde + 1;
    if (!(pde & PAE_P))
        return page_fault(out, lin, ec);
    bool large = paging_pde_large(r, pde, regs->pse);
    if (entry_reserved(r, pde, nxe, large))
        return page_fault(out, lin, ec | PF_ERR_P | PF_ERR_RSVD);

    uint64_t leaf = pde, leaf_pa = pde_pa;
    bool rw = pde & PAE_RW, us = pde & PAE_US, nx = pde & r->xd;
    if (large) {
        out->frame = paging_large_frame(r, pde);
        out->page_size = r->large_page;
    } else {
        /* The PTE. */
        uint64_t pte_pa = paging_entry_pa(r, pde & PAE_ADDR_4K, lin, PAGE_SHIFT);
        uint64_t pte = entry_read(r, pm, pte_pa);
        add_ref(out, pte_pa, false);
        out->levels[ipde + 1] = (PaeLevel){ .level = PAE_LEVEL_PTE, .paddr = pte_pa,
                                            .before = pte, .after = pte };
        out->nlevels = ipde + 2;
        if (!(pte & PAE_P))
            return page_fault(out, lin, ec);
        if (entry_reserved(r, pte, nxe, false))
            return page_fault(out, lin, ec | PF_ERR_P | PF_ERR_RSVD);
        rw = rw && (pte & PAE_RW);
        us = us && (pte & PAE_US);
        nx = nx || (pte & r->xd);
        leaf = pte;
        leaf_pa = pte_pa;
        out->frame = pte & PAE_ADDR_4K;
        out->page_size = PAE_PAGE_4K;
    }

    uint32_t bad = paging_rights_fault(rw, us, nx, access, cpl, regs->wp, nxe);
    if (bad) {
        /* SDM Vol. 3A §6.15, Interrupt 14, footnote: "If a page fault is
         * caused by a page-level protection violation, the access flag in
         * the page-directory entry is set when the fault occurs." (The
         * PTE's is model-specific; vmsplit leaves the leaf unchanged.) */
        if (!large && !(pde & PAE_A)) {
            pde |= PAE_A;
            entry_write(r, pm, pde_pa, pde);
            add_ref(out, pde_pa, true);
            out->pde = pde;
            out->levels[ipde].after = pde;
        }
        return page_fault(out, lin, bad);
    }

    /* §4.8: set A in every PDE/PTE used, D in the leaf on a write. Each
     * change is a locked write the caller times. */
    if (!(pde & PAE_A) && !large) {
        pde |= PAE_A;
        entry_write(r, pm, pde_pa, pde);
        add_ref(out, pde_pa, true);
        out->pde = pde;
        out->levels[ipde].after = pde;
    }
    uint64_t nleaf = leaf | PAE_A | (access == ACCESS_WRITE ? PAE_D : 0);
    if (nleaf != leaf) {
        entry_write(r, pm, leaf_pa, nleaf);
        add_ref(out, leaf_pa, true);
        if (large)
            out->pde = nleaf;
        out->levels[out->nlevels - 1].after = nleaf;
    }

    out->rw = rw;
    out->us = us;
    out->nx = nxe && nx;
    out->global = (nleaf & PAE_G) != 0;
    out->dirty = (nleaf & PAE_D) != 0;
    out->paddr = out->frame | (lin & (out->page_size - 1));
    return true;
}

bool pae_walk(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access,
              int cpl, PaeWalk *out)
{
    if (regs->mode == PAGING_LEGACY)
        return walk_impl(&legacy_rules, regs, pm, lin, access, cpl, out);
    return walk_impl(&pae_rules, regs, pm, lin, access, cpl, out);
}

const char *paging_describe_entry(const PagingRules *r, PaeLevelId level, uint64_t e, bool pse,
                                  char *buf, size_t len)
{
    static const struct { uint64_t bit; const char *name; bool pdpte_ok; } bits[] = {
        { PAE_P, "P", true },     { PAE_RW, "RW", false }, { PAE_US, "US", false },
        { PAE_PWT, "PWT", true }, { PAE_PCD, "PCD", true }, { PAE_A, "A", false },
        { PAE_D, "D", false },    { PAE_PS, "PS", false },  { PAE_G, "G", false },
        { PAE_XD, "XD", false },
    };
    bool large = level == PAE_LEVEL_PDE && paging_pde_large(r, e, pse);
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        if (!(e & bits[i].bit) || (level == PAE_LEVEL_PDPTE && !bits[i].pdpte_ok))
            continue;
        if (bits[i].bit == PAE_XD && !r->xd)
            continue;            /* 32-bit entries have no bit 63 */
        const char *name = bits[i].name;
        if (bits[i].bit == PAE_PS && level == PAE_LEVEL_PTE)
            name = "PAT";
        else if (bits[i].bit == PAE_PS && level == PAE_LEVEL_PDE && !large)
            name = "PS(ignored)"; /* 32-bit paging without CR4.PSE */
        n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? " " : "", name);
    }
    uint64_t addr = large ? paging_large_frame(r, e) : e & PAE_ADDR_4K;
    snprintf(buf + n, n < len ? len - n : 0, "%saddr=0x%09llx", n ? " " : "",
             (unsigned long long)addr);
    return buf;
}

const char *pae_describe_entry(PaeLevelId level, uint64_t e, char *buf, size_t len)
{
    return paging_describe_entry(&pae_rules, level, e, true, buf, len);
}
