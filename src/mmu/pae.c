/* PAE page walker. See pae.h for the model and the SDM sections. */
#include "mmu/pae.h"

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
        if ((e[i] & PAE_P) && (e[i] & PAE_RSVD_PDPTE))
            return false;
    }
    regs->cr3 = cr3;
    memcpy(regs->pdpte, e, sizeof e);
    return true;
}

/* §4.6: access rights on the rights combined over the levels (a page is
 * writable only if R/W is set at every level, user-accessible only if U/S
 * is set at every level, and execute-disabled if XD is set at any level).
 * Inline so that the walk does not pay a call for it. */
static inline uint32_t check_rights(bool rw, bool us, bool nx, Access access, int cpl,
                                    bool wp, bool nxe)
{
    bool user = cpl == 3;
    bool ok;
    if (user && !us)
        ok = false;
    else if (access == ACCESS_WRITE)
        ok = rw || (!user && !wp);
    else if (access == ACCESS_EXEC)
        ok = !(nxe && nx);
    else
        ok = true;
    if (ok)
        return 0;
    uint32_t ec = PF_ERR_P;
    if (access == ACCESS_WRITE)
        ec |= PF_ERR_W;
    if (user)
        ec |= PF_ERR_U;
    if (access == ACCESS_EXEC && nxe)
        ec |= PF_ERR_ID;
    return ec;
}

uint32_t pae_check_rights(bool rw, bool us, bool nx, Access access, int cpl,
                          bool wp, bool nxe)
{
    return check_rights(rw, us, nx, access, cpl, wp, nxe);
}

static inline uint32_t fault_bits(Access access, int cpl, bool nxe)
{
    uint32_t ec = 0;
    if (access == ACCESS_WRITE)
        ec |= PF_ERR_W;
    if (cpl == 3)
        ec |= PF_ERR_U;
    if (access == ACCESS_EXEC && nxe)
        ec |= PF_ERR_ID;
    return ec;
}

static inline bool page_fault(PaeWalk *out, uint32_t lin, uint32_t ec)
{
    out->fault = true;
    out->vector = VEC_PF;
    out->error_code = ec;
    out->cr2 = lin;
    return false;
}

/* Reserved bits of a present PDE or PTE (§4.4.2, Tables 4-9..4-11):
 * 62:36 always, 63 unless EFER.NXE, and 20:13 of a 2 MiB PDE. */
static inline bool entry_reserved(uint64_t e, bool nxe, bool large)
{
    uint64_t rsvd = PAE_RSVD_HIGH | (nxe ? 0 : PAE_XD) | (large ? PAE_RSVD_PDE2M : 0);
    return (e & rsvd) != 0;
}

static inline void add_ref(PaeWalk *out, uint64_t paddr, bool write)
{
    out->refs[out->nrefs++] = (PaeRef){ .paddr = paddr, .write = write };
}

/* Both walks; explain: record the levels (a constant in each caller, so
 * the lean copy carries none of that work). */
static inline __attribute__((always_inline)) bool
walk_impl(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access, int cpl,
          PaeWalk *out, bool explain)
{
    out->fault = false;
    out->nrefs = 0;
    uint32_t ec = fault_bits(access, cpl, regs->nxe);

    /* Level 3: the PDPTE register (no memory reference, no A/D bits). */
    unsigned i3 = lin >> PAE_PDPTE_SHIFT;
    uint64_t pdpte = regs->pdpte[i3];
    if (explain) {
        out->levels[0] = (PaeLevel){ .level = PAE_LEVEL_PDPTE,
                                     .paddr = (regs->cr3 & PAE_CR3_PDPT_MASK) + 8u * i3,
                                     .before = pdpte, .after = pdpte,
                                     .from_register = true };
        out->nlevels = 1;
    }
    if (!(pdpte & PAE_P))
        return page_fault(out, lin, ec);
    /* Reserved PDPTE bits were refused at the CR3 load (#GP). */

    /* Level 2: the PDE. */
    uint64_t pde_pa = (pdpte & PAE_ADDR_4K) + 8u * ((lin >> PAE_PDE_SHIFT) & 511);
    uint64_t pde = physmem_read64_aligned(pm, pde_pa);
    add_ref(out, pde_pa, false);
    out->pde_pa = pde_pa;
    out->pde = pde;
    if (explain) {
        out->levels[1] = (PaeLevel){ .level = PAE_LEVEL_PDE, .paddr = pde_pa,
                                     .before = pde, .after = pde };
        out->nlevels = 2;
    }
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
        if (explain) {
            out->levels[2] = (PaeLevel){ .level = PAE_LEVEL_PTE, .paddr = pte_pa,
                                         .before = pte, .after = pte };
            out->nlevels = 3;
        }
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

    uint32_t bad = check_rights(rw, us, nx, access, cpl, regs->wp, regs->nxe);
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
            if (explain)
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
        if (explain)
            out->levels[1].after = pde;
    }
    uint64_t nleaf = leaf | PAE_A | (access == ACCESS_WRITE ? PAE_D : 0);
    if (nleaf != leaf) {
        physmem_write64(pm, leaf_pa, nleaf);
        add_ref(out, leaf_pa, true);
        if (large)
            out->pde = nleaf;
        if (explain)
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
    return walk_impl(regs, pm, lin, access, cpl, out, true);
}

/* The common case of an MMU miss, once a page has been touched: the
 * PDPTE is present, the PDE (and PTE) are present in frames that exist,
 * no reserved bit is set, the access is permitted, and the A bits (and D
 * on a write) are already set, so the walk changes no memory. Fills out
 * and returns true; otherwise returns false, and the caller runs the full
 * walk from the start. It has then changed no memory, and in out only
 * refs[0], pde, pde_pa (once it read the PDE) and refs[1] (once it read
 * the PTE of a 4 KiB walk): the full walk reads the same entries and
 * writes those same values there before it could use them.
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
} FastMasks;

/* need, need_leaf and bad for an access (a), user or not (u), CR0.WP (w)
 * and EFER.NXE (x), as the comment above derives them. */
#define FAST_NEED(a, u, w)                                                    \
    (PAE_P | PAE_A | ((u) ? PAE_US : 0) |                                     \
     ((a) == ACCESS_WRITE && ((u) || (w)) ? PAE_RW : 0))
#define FAST_MASKS(a, u, w, x)                                                \
    { FAST_NEED(a, u, w), FAST_NEED(a, u, w) | ((a) == ACCESS_WRITE ? PAE_D : 0), \
      PAE_RSVD_HIGH | (!(x) || (a) == ACCESS_EXEC ? PAE_XD : 0), 0 }
#define FAST_MASKS_UWX(a)                                                     \
    FAST_MASKS(a, 0, 0, 0), FAST_MASKS(a, 0, 0, 1), FAST_MASKS(a, 0, 1, 0),   \
    FAST_MASKS(a, 0, 1, 1), FAST_MASKS(a, 1, 0, 0), FAST_MASKS(a, 1, 0, 1),   \
    FAST_MASKS(a, 1, 1, 0), FAST_MASKS(a, 1, 1, 1)

/* Index: access << 3 | (cpl == 3) << 2 | CR0.WP << 1 | EFER.NXE. */
static const FastMasks fast_masks[3 * 8] = {
    FAST_MASKS_UWX(ACCESS_READ), FAST_MASKS_UWX(ACCESS_WRITE), FAST_MASKS_UWX(ACCESS_EXEC),
};

/* What the fast path sets: every field walk_impl sets on success. */
static inline __attribute__((always_inline)) void
fast_fill(PaeWalk *out, uint32_t lin, uint64_t all, uint64_t any, uint64_t leaf,
          uint64_t frame, uint32_t size)
{
    out->fault = false;
    out->frame = frame;
    out->page_size = size;
    out->paddr = frame | (lin & (size - 1));
    out->rw = (all & PAE_RW) != 0;
    out->us = (all & PAE_US) != 0;
    out->nx = (any & PAE_XD) != 0;
    out->global = (leaf & PAE_G) != 0;
    out->dirty = (leaf & PAE_D) != 0;
}

static inline __attribute__((always_inline)) bool
walk_fast(const PaeRegs *regs, const PhysMem *pm, uint32_t lin, Access access, int cpl,
          PaeWalk *out)
{
    uint64_t pdpte = regs->pdpte[lin >> PAE_PDPTE_SHIFT];
    if (!(pdpte & PAE_P))
        return false;
    uint64_t pd = pdpte & PAE_ADDR_4K;
    const uint8_t *pdf = physmem_frame_peek_base(pm, pd);
    if (!pdf)
        return false;
    unsigned pde_off = (lin >> (PAE_PDE_SHIFT - 3)) & (PAE_PAGE_4K - 8);
    uint64_t pde;
    memcpy(&pde, pdf + pde_off, 8);
    uint64_t pde_pa = pd + pde_off;
    out->refs[0] = (PaeRef){ .paddr = pde_pa, .write = false };
    out->pde = pde;
    out->pde_pa = pde_pa;

    unsigned fi = (unsigned)access << 3 | (unsigned)(cpl == 3) << 2 |
                  (unsigned)regs->wp << 1 | (unsigned)regs->nxe;
    const FastMasks *fm = &fast_masks[fi];
    if (__builtin_expect((pde & PAE_PS) != 0, 0)) {
        /* A 2 MiB page: the PDE is the leaf. */
        if ((~pde & fm->need_leaf) | (pde & (fm->bad | PAE_RSVD_PDE2M)))
            return false;
        out->nrefs = 1;
        fast_fill(out, lin, pde, pde, pde, pde & PAE_ADDR_2M, PAE_PAGE_2M);
        return true;
    }
    if ((~pde & fm->need) | (pde & fm->bad))
        return false;
    uint64_t pt = pde & PAE_ADDR_4K;
    const uint8_t *ptf = physmem_frame_peek_base(pm, pt);
    if (!ptf)
        return false;
    unsigned pte_off = (lin >> (PAGE_SHIFT - 3)) & (PAE_PAGE_4K - 8);
    uint64_t pte;
    memcpy(&pte, ptf + pte_off, 8);
    out->refs[1] = (PaeRef){ .paddr = pt + pte_off, .write = false };
    if ((~pte & fm->need_leaf) | (pte & fm->bad))
        return false;
    out->nrefs = 2;
    fast_fill(out, lin, pde & pte, pde | pte, pte, pte & PAE_ADDR_4K, PAE_PAGE_4K);
    return true;
}

/* The full walk without explanation, out of line so that the fast path
 * stays small. */
static __attribute__((noinline)) bool
walk_lean_full(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access, int cpl,
               PaeWalk *out)
{
    return walk_impl(regs, pm, lin, access, cpl, out, false);
}

bool pae_walk_lean(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access,
                   int cpl, PaeWalk *out)
{
    if (__builtin_expect(walk_fast(regs, pm, lin, access, cpl, out), 1))
        return true;
    return walk_lean_full(regs, pm, lin, access, cpl, out);
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
