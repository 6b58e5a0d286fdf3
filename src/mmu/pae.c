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

PaeFastMasks pae_fast_masks[3 * 8];

/* The fast walk's masks (pae_priv.h), derived from the rules: an entry
 * must have U/S where a page without it would refuse the access, R/W
 * where a page without it would, and P and A (a set A bit: no A write);
 * the leaf also D on a write (§4.8: no D write); no entry may have a
 * reserved bit or an XD bit that would refuse the access. Run once when
 * the program starts, before anything walks. */
__attribute__((constructor)) static void fast_masks_init(void)
{
    for (unsigned a = 0; a < 3; a++)
        for (unsigned i = 0; i < 8; i++) {
            Access acc = (Access)a;
            int cpl = i & 4 ? 3 : 0;
            bool wp = i & 2, nxe = i & 1;
            uint64_t need = PAE_P | PAE_A;
            if (!paging_rights_ok(true, false, false, acc, cpl, wp, nxe))
                need |= PAE_US;
            if (!paging_rights_ok(false, true, false, acc, cpl, wp, nxe))
                need |= PAE_RW;
            uint64_t bad = paging_reserved_bits(&pae_rules, false, nxe);
            if (!paging_rights_ok(true, true, true, acc, cpl, wp, nxe))
                bad |= PAE_XD;
            pae_fast_masks[a << 3 | i] = (PaeFastMasks){
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

/* Whether a present PDE or PTE has a reserved bit set (pae_rules). */
static inline bool entry_reserved(uint64_t e, bool nxe, bool large)
{
    return (e & paging_reserved_bits(&pae_rules, large, nxe)) != 0;
}

static inline void add_ref(PaeWalk *out, uint64_t paddr, bool write)
{
    out->refs[out->nrefs++] = (PaeRef){ .paddr = paddr, .write = write };
}

/* The walk (pae.h), inline so that its steps are not calls. */
static inline __attribute__((always_inline)) bool
walk_impl(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access, int cpl,
          PaeWalk *out)
{
    out->fault = false;
    out->nrefs = 0;
    uint32_t ec = paging_fault_code(access, cpl, regs->nxe);

    /* Level 3: the PDPTE register (no memory reference, no A/D bits). */
    unsigned i3 = lin >> PAE_PDPTE_SHIFT;
    uint64_t pdpte = regs->pdpte[i3];
    out->levels[0] = (PaeLevel){ .level = PAE_LEVEL_PDPTE,
                                 .paddr = (regs->cr3 & PAE_CR3_PDPT_MASK) + 8u * i3,
                                 .before = pdpte, .after = pdpte,
                                 .from_register = true };
    out->nlevels = 1;
    if (!(pdpte & PAE_P))
        return page_fault(out, lin, ec);
    /* Reserved PDPTE bits were refused at the CR3 load (#GP). */

    /* Level 2: the PDE. */
    uint64_t pde_pa = (pdpte & PAE_ADDR_4K) + 8u * ((lin >> PAE_PDE_SHIFT) & 511);
    uint64_t pde = physmem_read64_aligned(pm, pde_pa);
    add_ref(out, pde_pa, false);
    out->pde_pa = pde_pa;
    out->pde = pde;
    out->levels[1] = (PaeLevel){ .level = PAE_LEVEL_PDE, .paddr = pde_pa,
                                 .before = pde, .after = pde };
    out->nlevels = 2;
    if (!(pde & PAE_P))
        return page_fault(out, lin, ec);
    bool large = (pde & PAE_PS) != 0;
    if (entry_reserved(pde, regs->nxe, large))
        return page_fault(out, lin, ec | PF_ERR_P | PF_ERR_RSVD);

    uint64_t leaf = pde, leaf_pa = pde_pa;
    bool rw = pde & PAE_RW, us = pde & PAE_US, nx = pde & PAE_XD;
    if (large) {
        out->frame = pde & PAE_ADDR_2M;
        out->page_size = PAE_PAGE_2M;
    } else {
        /* Level 1: the PTE. */
        uint64_t pte_pa = (pde & PAE_ADDR_4K) + 8u * ((lin >> 12) & 511);
        uint64_t pte = physmem_read64_aligned(pm, pte_pa);
        add_ref(out, pte_pa, false);
        out->levels[2] = (PaeLevel){ .level = PAE_LEVEL_PTE, .paddr = pte_pa,
                                     .before = pte, .after = pte };
        out->nlevels = 3;
        if (!(pte & PAE_P))
            return page_fault(out, lin, ec);
        if (entry_reserved(pte, regs->nxe, false))
            return page_fault(out, lin, ec | PF_ERR_P | PF_ERR_RSVD);
        rw = rw && (pte & PAE_RW);
        us = us && (pte & PAE_US);
        nx = nx || (pte & PAE_XD);
        leaf = pte;
        leaf_pa = pte_pa;
        out->frame = pte & PAE_ADDR_4K;
        out->page_size = PAE_PAGE_4K;
    }

    uint32_t bad = paging_rights_fault(rw, us, nx, access, cpl, regs->wp, regs->nxe);
    if (bad) {
        /* SDM Vol. 3A §6.15, Interrupt 14, footnote: "If a page fault is
         * caused by a page-level protection violation, the access flag in
         * the page-directory entry is set when the fault occurs." (The
         * PTE's is model-specific; vmsplit leaves the leaf unchanged.) */
        if (!large && !(pde & PAE_A)) {
            pde |= PAE_A;
            physmem_write64(pm, pde_pa, pde);
            add_ref(out, pde_pa, true);
            out->pde = pde;
            out->levels[1].after = pde;
        }
        return page_fault(out, lin, bad);
    }

    /* §4.8: set A in every PDE/PTE used, D in the leaf on a write. Each
     * change is a locked write the caller times. */
    if (!(pde & PAE_A) && !large) {
        pde |= PAE_A;
        physmem_write64(pm, pde_pa, pde);
        add_ref(out, pde_pa, true);
        out->pde = pde;
        out->levels[1].after = pde;
    }
    uint64_t nleaf = leaf | PAE_A | (access == ACCESS_WRITE ? PAE_D : 0);
    if (nleaf != leaf) {
        physmem_write64(pm, leaf_pa, nleaf);
        add_ref(out, leaf_pa, true);
        if (large)
            out->pde = nleaf;
        out->levels[out->nlevels - 1].after = nleaf;
    }

    out->rw = rw;
    out->us = us;
    out->nx = regs->nxe && nx;
    out->global = (nleaf & PAE_G) != 0;
    out->dirty = (nleaf & PAE_D) != 0;
    out->paddr = out->frame | (lin & (out->page_size - 1));
    return true;
}

bool pae_walk(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access,
              int cpl, PaeWalk *out)
{
    return walk_impl(regs, pm, lin, access, cpl, out);
}

const char *pae_describe_entry(PaeLevelId level, uint64_t e, char *buf, size_t len)
{
    static const struct { uint64_t bit; const char *name; bool pdpte_ok; } bits[] = {
        { PAE_P, "P", true },     { PAE_RW, "RW", false }, { PAE_US, "US", false },
        { PAE_PWT, "PWT", true }, { PAE_PCD, "PCD", true }, { PAE_A, "A", false },
        { PAE_D, "D", false },    { PAE_PS, "PS", false },  { PAE_G, "G", false },
        { PAE_XD, "XD", false },
    };
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        if (!(e & bits[i].bit) || (level == PAE_LEVEL_PDPTE && !bits[i].pdpte_ok))
            continue;
        const char *name = bits[i].name;
        if (bits[i].bit == PAE_PS && level == PAE_LEVEL_PTE)
            name = "PAT";
        n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? " " : "", name);
    }
    bool large = level == PAE_LEVEL_PDE && (e & PAE_PS);
    uint64_t addr = e & (large ? PAE_ADDR_2M : PAE_ADDR_4K);
    snprintf(buf + n, n < len ? len - n : 0, "%saddr=0x%09llx", n ? " " : "",
             (unsigned long long)addr);
    return buf;
}
