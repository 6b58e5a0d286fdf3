/* The PAE page walker: Intel SDM Vol. 3A §4.4 (PAE paging), §4.6 (access
 * rights), §4.7 (page-fault exceptions), §4.8 (accessed and dirty flags).
 *
 * A linear address splits 2:9:9:12 (or 2:9:21 for a 2 MiB page):
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

/* The rules of a paging mode that differ between modes, as data: the
 * reserved bits of each level (SDM §4.4.2, Tables 4-8 to 4-11 for PAE).
 * Every check of a reserved bit (the walk, the CR3 load, the fast walk's
 * masks, the machine-image loader, `vmsplit walk`'s explanation) reads it
 * from here through paging_reserved_bits. A second mode (32-bit paging,
 * issue 16) is a second table: no reserved bit below 4 GiB, PSE-36's
 * bits of a 4 MiB PDE, no XD, no top level loaded at MOV CR3. */
typedef struct {
    const char *name;
    uint64_t rsvd_top;           /* a present top-level entry loaded at MOV
                                  * CR3 (PAE: a PDPTE; #GP(0) if set), or 0 */
    uint64_t rsvd;               /* every present PDE and PTE */
    uint64_t rsvd_large;         /* further: a PDE that maps a large page */
    uint64_t xd;                 /* the execute-disable bit, reserved while
                                  * EFER.NXE = 0; 0 in a mode without one */
} PagingRules;

static const PagingRules pae_rules = {
    .name = "PAE",
    .rsvd_top = PAE_RSVD_PDPTE,
    .rsvd = PAE_RSVD_HIGH,
    .rsvd_large = PAE_RSVD_PDE2M,
    .xd = PAE_XD,
};

/* The reserved bits of a present PDE (large: mapping a large page) or
 * PTE under rules r with EFER.NXE = nxe. */
static inline uint64_t paging_reserved_bits(const PagingRules *r, bool large, bool nxe)
{
    return r->rsvd | (nxe ? 0 : r->xd) | (large ? r->rsvd_large : 0);
}

/* The paging-related control state the walker needs. */
typedef struct {
    uint32_t cr3;
    uint64_t pdpte[PAE_PTRS_PER_PDPT]; /* PDPTE registers (loaded by pae_load_cr3) */
    bool wp;                           /* CR0.WP */
    bool nxe;                          /* EFER.NXE */
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
    uint32_t page_size;          /* PAE_PAGE_4K or PAE_PAGE_2M */
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

/* MOV CR3 under PAE: load the four PDPTEs from CR3[31:5]. Returns false
 * (#GP(0)) if a present PDPTE has a reserved bit set; regs is then left
 * unchanged, as the SDM requires. refs, if not NULL, receives the four
 * 8-byte reads (the caller costs them; older parts do them uncached). */
bool pae_load_cr3(PaeRegs *regs, const PhysMem *pm, uint32_t cr3, PaeRef refs[4]);

/* Translate lin for an access at cpl (0..3; 3 is user). On success sets the
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
 * I/D for a fetch with NXE = 1. */
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

/* Human-readable decoding of an entry's flags ("P RW US A D PS G XD ..."),
 * into buf; returns buf. */
const char *pae_describe_entry(PaeLevelId level, uint64_t entry, char *buf, size_t len);

#endif
