/* The page walker of both 32-bit paging modes: Intel SDM Vol. 3A §4.3
 * (32-bit paging, CR4.PAE = 0), §4.4 (PAE paging), §4.6 (access rights),
 * §4.7 (page-fault exceptions), §4.8 (accessed and dirty flags). The
 * modes differ only in the data of their PagingRules (below); one walk
 * reads the mode's table.
 *
 * 32-bit paging splits a linear address 10:10:12 (10:22 for a 4 MiB page
 * with CR4.PSE), and CR3 names the page directory. Under PAE it splits
 * 2:9:9:12 (or 2:9:21 for a 2 MiB page):
 *
 *   31 30 29        21 20        12 11          0
 *  +-----+-----------+------------+-------------+
 *  |PDPTE|    PDE    |    PTE     |   offset    |
 *  +-----+-----------+------------+-------------+
 *
 * MOV CR3 loads the four PDPTEs into registers (pae_load_cr3); walks read
 * the PDPTE level from those registers, never from memory, so a write to the
 * PDPT takes effect only at the next CR3 load (§4.4.1). Every other
 * paging-structure read, and every A/D write, is returned to the caller as a
 * PaeRef so that a cache model can time it without the walker knowing
 * about caches.
 *
 * The walker is pure with respect to the TLB: it neither looks one up nor
 * fills one. The caller (src/mmu/mmu.c) does that with the PaeWalk result.
 * It has two entry points: pae_walk, and the fast walk of pae_priv.h (the
 * MMU's common miss, a permitted walk that changes no memory). */
#ifndef VMSPLIT_MMU_PAE_H
#define VMSPLIT_MMU_PAE_H

#include <stdbool.h>
#include <stdint.h>

#include "mmu/physmem.h"

/* Geometry (Linux pgtable-3level_types.h names; SDM §4.4.2). */
#define PAE_PDPTE_SHIFT 30       /* PGDIR_SHIFT */
#define PAE_PTRS_PER_PDPT 4      /* PTRS_PER_PGD */
#define PAE_PDE_SHIFT 21         /* PMD_SHIFT */
#define PAE_PTRS_PER_PD 512      /* PTRS_PER_PMD */
#define PAE_PTRS_PER_PT 512      /* PTRS_PER_PTE */
#define PAE_PAGE_4K (1u << 12)
#define PAE_PAGE_2M (1u << 21)

/* Entry bits (SDM Tables 4-8, 4-9, 4-10, 4-11). */
#define PAE_P (1ULL << 0)        /* present */
#define PAE_RW (1ULL << 1)       /* writable (not in PDPTE: reserved there) */
#define PAE_US (1ULL << 2)       /* user (not in PDPTE: reserved there) */
#define PAE_PWT (1ULL << 3)
#define PAE_PCD (1ULL << 4)
#define PAE_A (1ULL << 5)        /* accessed (PDE, PTE) */
#define PAE_D (1ULL << 6)        /* dirty (leaf only) */
#define PAE_PS (1ULL << 7)       /* PDE: 2 MiB page; PTE: PAT */
#define PAE_G (1ULL << 8)        /* global (leaf, honoured with CR4.PGE) */
#define PAE_XD (1ULL << 63)      /* execute-disable when EFER.NXE=1 */

/* Physical address fields. */
#define PAE_ADDR_4K 0x0000000FFFFFF000ULL   /* bits 35:12 */
#define PAE_ADDR_2M 0x0000000FFFE00000ULL   /* bits 35:21 */
#define PAE_CR3_PDPT_MASK 0xFFFFFFE0u       /* CR3[31:5], §4.4.1 */

/* Reserved bits: the paging mode's rules (PagingRules, below). */
#define PAE_RSVD_HIGH 0x7FFFFFF000000000ULL /* bits 62:36 of PDE/PTE (MAXPHYADDR = 36) */
#define PAE_RSVD_PDE2M 0x00000000001FE000ULL /* bits 20:13 of a 2 MiB PDE */
/* PDPTE: bits 2:1, 8:5 and 63:36 (Table 4-8); checked at the CR3 load. */
#define PAE_RSVD_PDPTE 0xFFFFFFF0000001E6ULL

/* #PF error code (SDM §4.7, Figure 4-12). */
#define PF_ERR_P (1u << 0)       /* 0: not present; 1: protection or RSVD */
#define PF_ERR_W (1u << 1)       /* the access was a write */
#define PF_ERR_U (1u << 2)       /* the access was made at CPL 3 */
#define PF_ERR_RSVD (1u << 3)    /* a reserved bit was set */
#define PF_ERR_ID (1u << 4)      /* instruction fetch (only with NXE=1) */

#define VEC_GP 13
#define VEC_PF 14

typedef enum {
    ACCESS_READ = 0,
    ACCESS_WRITE = 1,
    ACCESS_EXEC = 2,             /* instruction fetch */
} Access;

/* 32-bit paging (CR4.PAE = 0), SDM §4.3, Tables 4-4 to 4-6: 10:10:12, or
 * 10:22 for a 4 MiB page (CR4.PSE = 1 and PDE.PS = 1); 4-byte entries;
 * CR3[31:12] is the page directory. A 4 MiB PDE holds address bits 31:22
 * in its bits 31:22 and, with PSE-36 (MAXPHYADDR = 36 here), bits 35:32
 * in its bits 16:13; bit 21 and bits 20:17 (above MAXPHYADDR) are
 * reserved. A 4 KiB PDE or PTE has no reserved bit. */
#define LEG_PDE_SHIFT 22
#define LEG_PTRS_PER_PD 1024
#define LEG_PTRS_PER_PT 1024
#define LEG_PAGE_4M (1u << 22)
#define LEG_ADDR_4M 0x00000000FFC00000ULL   /* PDE bits 31:22 */
#define LEG_PSE36_BITS 0x000000000001E000ULL /* PDE bits 16:13: address 35:32 */
#define LEG_PSE36_SHIFT 19                  /* 13 + 19 = 32 */
#define LEG_RSVD_PDE4M 0x00000000003E0000ULL /* bits 21 and 20:17 (MAXPHYADDR 36) */
#define LEG_CR3_PD_MASK 0xFFFFF000u         /* CR3[31:12], Table 4-3 */

/* The paging mode, selected by CR4.PAE while CR0.PG = 1 (SDM §4.1.1).
 * PAE is 0 so that a zeroed PaeRegs is PAE paging, as before 32-bit
 * paging was modelled. */
typedef enum { PAGING_PAE = 0, PAGING_LEGACY = 1 } PagingMode;
#define PAGING_NMODES 2

/* The rules of a paging mode, as data: its structure (levels, entry size,
 * index bits, large page, whether a top level is loaded at MOV CR3) and
 * its reserved bits per level (SDM §4.3 Tables 4-4 to 4-6 for 32-bit
 * paging, §4.4.2 Tables 4-8 to 4-11 for PAE). The one walk and the one
 * fast walk (pae.c, pae_priv.h) read the mode's table; so do the CR3 load,
 * the fast walk's masks, the machine-image loader and `vmsplit walk`'s
 * explanation (every check of a reserved bit goes through
 * paging_reserved_bits). The walker's types keep their Pae prefix (PaeRegs,
 * PaeWalk, pae_walk ...): they were named when PAE was the only mode, a
 * dozen modules use them, and they now serve both modes through this
 * table. */
typedef struct {
    const char *name;
    PagingMode mode;
    bool top_loaded;             /* MOV CR3 loads a top level into registers
                                  * (PAE: the four PDPTEs); else CR3 names
                                  * the page directory itself */
    unsigned entry_bytes;        /* size of a PDE/PTE: 8 (PAE) or 4 */
    unsigned pde_shift;          /* linear bits below a PDE's index: 21 or 22 */
    unsigned index_bits;         /* bits of a PDE (and PTE) index: 9 or 10 */
    uint32_t cr3_base_mask;      /* the top level's base in CR3 */
    bool ps_needs_pse;           /* PDE.PS maps a large page only with CR4.PSE
                                  * (32-bit paging); PAE honours it always */
    uint32_t large_page;         /* bytes of a large page */
    uint64_t addr_large;         /* a large PDE's address bits (low part) */
    uint64_t addr_large_high;    /* PSE-36: PDE bits giving address bits 35:32 */
    uint64_t rsvd_top;           /* a present top-level entry loaded at MOV
                                  * CR3 (PAE: a PDPTE; #GP(0) if set), or 0 */
    uint64_t rsvd;               /* every present PDE and PTE */
    uint64_t rsvd_large;         /* further: a PDE that maps a large page */
    uint64_t xd;                 /* the execute-disable bit, reserved while
                                  * EFER.NXE = 0; 0 in a mode without one */
} PagingRules;

static const PagingRules pae_rules = {
    .name = "PAE",
    .mode = PAGING_PAE,
    .top_loaded = true,
    .entry_bytes = 8,
    .pde_shift = PAE_PDE_SHIFT,
    .index_bits = 9,
    .cr3_base_mask = PAE_CR3_PDPT_MASK,
    .ps_needs_pse = false,
    .large_page = PAE_PAGE_2M,
    .addr_large = PAE_ADDR_2M,
    .addr_large_high = 0,
    .rsvd_top = PAE_RSVD_PDPTE,
    .rsvd = PAE_RSVD_HIGH,
    .rsvd_large = PAE_RSVD_PDE2M,
    .xd = PAE_XD,
};

static const PagingRules legacy_rules = {
    .name = "32-bit",
    .mode = PAGING_LEGACY,
    .top_loaded = false,
    .entry_bytes = 4,
    .pde_shift = LEG_PDE_SHIFT,
    .index_bits = 10,
    .cr3_base_mask = LEG_CR3_PD_MASK,
    .ps_needs_pse = true,
    .large_page = LEG_PAGE_4M,
    .addr_large = LEG_ADDR_4M,
    .addr_large_high = LEG_PSE36_BITS,
    .rsvd_top = 0,
    .rsvd = 0,
    .rsvd_large = LEG_RSVD_PDE4M,
    .xd = 0,
};

/* The rules of mode m. */
static inline __attribute__((always_inline)) const PagingRules *paging_rules(PagingMode m)
{
    return m == PAGING_LEGACY ? &legacy_rules : &pae_rules;
}

/* The reserved bits of a present PDE (large: mapping a large page) or
 * PTE under rules r with EFER.NXE = nxe. */
static inline uint64_t paging_reserved_bits(const PagingRules *r, bool large, bool nxe)
{
    return r->rsvd | (nxe ? 0 : r->xd) | (large ? r->rsvd_large : 0);
}

/* Whether a present PDE maps a large page under rules r with CR4.PSE =
 * pse (32-bit paging ignores PS without PSE: the PDE references a page
 * table). */
static inline __attribute__((always_inline)) bool paging_pde_large(const PagingRules *r,
                                                                  uint64_t pde, bool pse)
{
    return (pde & PAE_PS) && (!r->ps_needs_pse || pse);
}

/* The physical base of the large page a PDE maps under rules r. */
static inline __attribute__((always_inline)) uint64_t paging_large_frame(const PagingRules *r,
                                                                        uint64_t pde)
{
    return (pde & r->addr_large) | ((pde & r->addr_large_high) << LEG_PSE36_SHIFT);
}

/* Where the entry of index bits at shift lies in the table at base. */
static inline __attribute__((always_inline)) uint64_t paging_entry_pa(const PagingRules *r,
                                                                     uint64_t base, uint32_t lin,
                                                                     unsigned shift)
{
    return base + (uint64_t)r->entry_bytes * ((lin >> shift) & ((1u << r->index_bits) - 1));
}

/* The paging-related control state the walker needs. */
typedef struct {
    uint32_t cr3;
    uint64_t pdpte[PAE_PTRS_PER_PDPT]; /* PDPTE registers (loaded by pae_load_cr3);
                                        * unused in 32-bit paging */
    bool wp;                           /* CR0.WP */
    bool nxe;                          /* EFER.NXE (no effect in 32-bit paging) */
    PagingMode mode;                   /* CR4.PAE: which rules the walk reads */
    bool pse;                          /* CR4.PSE (32-bit paging's 4 MiB pages) */
} PaeRegs;

/* One physical memory reference made by the walker. */
typedef struct {
    uint64_t paddr;
    bool write;                  /* an A/D update (locked read-modify-write) */
} PaeRef;

/* One level of a walk, for explanation ("vmsplit walk"). */
typedef enum { PAE_LEVEL_PDPTE = 3, PAE_LEVEL_PDE = 2, PAE_LEVEL_PTE = 1 } PaeLevelId;

typedef struct {
    PaeLevelId level;
    uint64_t paddr;              /* where the entry lives */
    uint64_t before;             /* its value when the walk read it */
    uint64_t after;              /* after A/D updates (== before on a fault) */
    bool from_register;          /* PDPTE: read from the PDPTE register */
} PaeLevel;

#define PAE_MAX_REFS 6

typedef struct {
    /* Outcome. */
    bool fault;
    uint8_t vector;              /* VEC_PF */
    uint32_t error_code;
    uint32_t cr2;                /* the faulting linear address */

    /* Translation (valid when !fault). */
    uint64_t paddr;
    uint64_t frame;              /* physical base of the page */
    uint32_t page_size;          /* PAE_PAGE_4K, or the mode's large page
                                  * (PAE_PAGE_2M, LEG_PAGE_4M) */
    bool rw, us, nx;             /* rights combined over PDE and PTE */
    bool global;                 /* G bit of the leaf */
    bool dirty;                  /* D bit of the leaf after the walk */
    uint64_t pde, pde_pa;        /* the PDE after the walk and where it lives
                                  * (valid when the walk reached it): what a
                                  * paging-structure cache keeps */

    /* Explanation and timing. */
    int nlevels;
    PaeLevel levels[3];
    int nrefs;
    PaeRef refs[PAE_MAX_REFS];
} PaeWalk;

/* MOV CR3 under PAE: load the four PDPTEs from CR3[31:5] (32-bit paging
 * loads nothing at MOV CR3: the caller only stores CR3 and sets mode). Returns false
 * (#GP(0)) if a present PDPTE has a reserved bit set; regs is then left
 * unchanged, as the SDM requires. refs, if not NULL, receives the four
 * 8-byte reads (the caller costs them; older parts do them uncached). */
bool pae_load_cr3(PaeRegs *regs, const PhysMem *pm, uint32_t cr3, PaeRef refs[4]);

/* Translate lin for an access at cpl (0..3; 3 is user) under the rules of
 * regs->mode. On success sets the
 * A bits (and D on a write) in memory and fills out. A not-present or
 * reserved-bit fault changes no memory; a protection fault of a 4 KiB walk
 * sets the PDE's A bit (SDM §6.15 footnote), nothing else. Returns
 * !out->fault. */
bool pae_walk(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access,
              int cpl, PaeWalk *out);

/* The access rights of §4.6, the same in every paging mode, on the rights
 * combined over the levels (a page is writable only if R/W is set at
 * every level, user-accessible only if U/S is set at every level,
 * execute-disabled if XD is set at any level): whether an access at cpl
 * (3 is user) is permitted, with CR0.WP = wp and EFER.NXE = nxe. The one
 * statement of the rule: the walk, the MMU's TLB-hit check, its memos'
 * answers and the fast walk's masks (pae_priv.h) all derive from it. */
static inline bool paging_rights_ok(bool rw, bool us, bool nx, Access access, int cpl,
                                    bool wp, bool nxe)
{
    bool user = cpl == 3;
    if (user && !us)
        return false;
    if (access == ACCESS_WRITE)
        return rw || (!user && !wp);
    if (access == ACCESS_EXEC)
        return !(nxe && nx);
    return true;
}

/* The #PF error code's access bits for an access at cpl (§4.7): W, U, and
 * I/D for a fetch with NXE = 1 (pass nxe = false in 32-bit paging, which
 * has no execute-disable: I/D is never set there). */
static inline uint32_t paging_fault_code(Access access, int cpl, bool nxe)
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

/* paging_rights_ok as the walk reports it: 0 if permitted, else the #PF
 * error code of a protection fault. */
static inline uint32_t paging_rights_fault(bool rw, bool us, bool nx, Access access, int cpl,
                                           bool wp, bool nxe)
{
    if (paging_rights_ok(rw, us, nx, access, cpl, wp, nxe))
        return 0;
    return PF_ERR_P | paging_fault_code(access, cpl, nxe);
}

/* paging_rights_fault out of line (tests). */
uint32_t pae_check_rights(bool rw, bool us, bool nx, Access access, int cpl,
                          bool wp, bool nxe);

/* Human-readable decoding of an entry's flags ("P RW US A D PS G XD ...")
 * and the address it holds, under rules r with CR4.PSE = pse, into buf;
 * returns buf. pae_describe_entry: the same under PAE. */
const char *paging_describe_entry(const PagingRules *r, PaeLevelId level, uint64_t entry,
                                  bool pse, char *buf, size_t len);
const char *pae_describe_entry(PaeLevelId level, uint64_t entry, char *buf, size_t len);

#endif
