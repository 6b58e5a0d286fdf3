/* Tests of the PAE walker (src/mmu/pae.c) against the Intel SDM.
 *
 * The expectations come from an oracle written in this file from the prose
 * of Intel SDM Vol. 3A §4.4 (PAE paging), §4.6 (access rights), §4.7
 * (page-fault error code) and §4.8 (accessed and dirty flags), quoted
 * beside the code. The oracle never calls the implementation, and it uses
 * its own bit masks rather than the walker's (so a wrong constant in pae.h
 * cannot make both sides agree). */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "mmu/pae.h"
#include "mmu/pae_priv.h"
#include "mmu/physmem.h"

/* splitmix64, for the hint test's random walks. */
static uint64_t hint_rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ---- the oracle's own constants, from SDM Vol. 3A Tables 4-8..4-11 ---- */

#define BIT(n) (1ULL << (n))
#define BITS(hi, lo) ((~0ULL >> (63 - (hi))) & ~(BIT(lo) - 1))   /* bits hi:lo */

#define E_P BIT(0)
#define E_RW BIT(1)
#define E_US BIT(2)
#define E_PWT BIT(3)
#define E_PCD BIT(4)
#define E_A BIT(5)
#define E_D BIT(6)
#define E_PS BIT(7)
#define E_G BIT(8)
#define E_XD BIT(63)

/* §4.7, Figure 4-12: the page-fault error code. */
#define EC_P 0x01u
#define EC_W 0x02u
#define EC_U 0x04u
#define EC_RSVD 0x08u
#define EC_ID 0x10u

/* MAXPHYADDR = 36 (the PAE parts vmsplit models). */
#define SDM_RSVD_PDE_PTE BITS(62, 36)        /* Tables 4-9..4-11: "Reserved (must be 0)" 62:M */
#define SDM_RSVD_2M BITS(20, 13)             /* Table 4-9: PDE that maps a 2 MiB page */
#define SDM_RSVD_PDPTE (BITS(2, 1) | BITS(8, 5) | BITS(63, 36))   /* Table 4-8 */

/* DISPUTED RULE, reported to the lead (issue 2). SDM Vol. 3A §6.15
 * (Interrupt 14, page-fault exception), footnote: "If a page fault is
 * caused by a page-level protection violation, the access flag in the
 * page-directory entry is set when the fault occurs. The behavior of IA-32
 * processors regarding the access flag in the corresponding page-table
 * entry is model specific and not architecturally defined." The issue and
 * pae.c say a faulting walk changes no entry. With 1, the matrix asserts
 * the SDM footnote for 4 KiB walks (PDE.A set, one PDE write reference, on
 * a protection-violation #PF); with 0 it asserts the rule (no
 * change on any fault). The model follows the SDM: 1. */
#ifndef SDM_PF_PROTECTION_SETS_PDE_A
#define SDM_PF_PROTECTION_SETS_PDE_A 1
#endif

/* ---- one walk case and what the SDM says about it ---- */

typedef struct {
    bool large;                  /* leaf is a 2 MiB PDE (PS=1) */
    bool pdpte_p;
    uint64_t pde, pte;           /* entry values in memory (pte unused when large) */
    Access access;
    int cpl;
    bool wp, nxe;
    uint32_t lin;
} Case;

typedef struct {
    bool fault;
    uint32_t ec;
    bool protection;             /* the fault is an access-rights violation */
    int nlevels;                 /* levels the walk reads: 1 PDPTE, 2 +PDE, 3 +PTE */
    uint64_t pde_after, pte_after;
    bool rw, us, xd;             /* combined rights, on success */
} Expect;

/* §4.6: "accesses made while CPL < 3 are supervisor-mode accesses, while
 * accesses made while CPL = 3 are user-mode accesses." (PaeRegs has no
 * CR4.SMEP or CR4.SMAP: both are 0, as on every PAE part of 2003.) */
static bool sdm_allowed(bool all_rw, bool all_us, bool any_xd, Access access, int cpl,
                        bool wp, bool nxe)
{
    /* "If the U/S flag (bit 2) is 0 in at least one of the paging-structure
     * entries, the address is a supervisor-mode address. Otherwise, the
     * address is a user-mode address." */
    bool user_address = all_us;
    if (cpl < 3) {
        switch (access) {
        case ACCESS_READ:
            /* "Data may be read from any linear address with a valid translation." */
            return true;
        case ACCESS_WRITE:
            /* "If CR0.WP = 0, data may be written to any linear address with a
             * valid translation. If CR0.WP = 1, data may be written to any
             * linear address with a valid translation for which the R/W flag
             * (bit 1) is 1 in every paging-structure entry controlling the
             * translation." */
            return !wp || all_rw;
        case ACCESS_EXEC:
            /* "For 32-bit paging or if IA32_EFER.NXE = 0, instructions may be
             * fetched from any linear address with a valid translation. For
             * PAE paging or IA-32e paging with IA32_EFER.NXE = 1, instructions
             * may be fetched from any linear address with a valid translation
             * for which the XD flag (bit 63) is 0 in every paging-structure
             * entry controlling the translation." */
            return !nxe || !any_xd;
        }
    }
    /* User mode (CPL = 3). */
    switch (access) {
    case ACCESS_READ:
        /* "Data may be read from any linear address with a valid translation
         * for which the U/S flag (bit 2) is 1 in every paging-structure entry
         * controlling the translation." */
        return user_address;
    case ACCESS_WRITE:
        /* "Data may be written to any linear address with a valid translation
         * for which both the R/W flag and the U/S flag are 1 in every
         * paging-structure entry controlling the translation." (CR0.WP plays
         * no part in user-mode accesses.) */
        return user_address && all_rw;
    case ACCESS_EXEC:
        /* "For 32-bit paging or if IA32_EFER.NXE = 0, instructions may be
         * fetched from any linear address with a valid translation for which
         * the U/S flag is 1 in every paging-structure entry controlling the
         * translation. For PAE paging or IA-32e paging with IA32_EFER.NXE = 1,
         * instructions may be fetched from any linear address with a valid
         * translation for which the U/S flag is 1 and the XD flag is 0 in
         * every paging-structure entry controlling the translation." */
        return user_address && (!nxe || !any_xd);
    }
    return false;
}

/* §4.7: "W/R flag (bit 1). If the access causing the page-fault exception
 * was a write, this flag is 1; otherwise, it is 0." "U/S flag (bit 2). If a
 * user-mode access caused the page-fault exception, this flag is 1; it is 0
 * if a supervisor-mode access did so." "I/D flag (bit 4). [...] CR4.PAE = 1
 * and IA32_EFER.NXE = 1: If the access causing the page-fault exception was
 * an instruction fetch, this flag is 1; otherwise, it is 0." These describe
 * the access, whatever caused the fault. */
static uint32_t sdm_access_bits(Access access, int cpl, bool nxe)
{
    return (access == ACCESS_WRITE ? EC_W : 0) | (cpl == 3 ? EC_U : 0) |
           (access == ACCESS_EXEC && nxe ? EC_ID : 0);
}

/* §4.4.2: "If IA32_EFER.NXE = 0 and the P flag of a PDE or a PTE is 1, the
 * XD flag (bit 63) is reserved." Reserved bits are checked only in entries
 * with P=1. */
static bool sdm_reserved(uint64_t e, bool is_2m_pde, bool nxe)
{
    uint64_t rsvd = SDM_RSVD_PDE_PTE | (nxe ? 0 : E_XD) | (is_2m_pde ? SDM_RSVD_2M : 0);
    return (e & rsvd) != 0;
}

static Expect sdm_fault(Expect e, uint32_t ec)
{
    e.fault = true;
    e.ec = ec;
    return e;
}

static Expect sdm_expect(const Case *c)
{
    Expect e = { .pde_after = c->pde, .pte_after = c->pte, .nlevels = 1 };
    uint32_t acc = sdm_access_bits(c->access, c->cpl, c->nxe);
    /* §4.7 "P flag (bit 0). This flag is 0 if there is no translation for the
     * linear address because the P flag was 0 in one of the paging-structure
     * entries used to translate that address." "RSVD flag (bit 3). This flag
     * is 1 if there is no translation for the linear address because a
     * reserved bit was set in one of the paging-structure entries used to
     * translate that address. (Because reserved bits are not checked in a
     * paging-structure entry whose P flag is 0, bit 3 of the error code can
     * be set only if bit 0 is also set.)" The walk stops at the first entry
     * that gives no translation. */
    if (!c->pdpte_p)
        return sdm_fault(e, acc);
    e.nlevels = 2;
    if (!(c->pde & E_P))
        return sdm_fault(e, acc);
    if (sdm_reserved(c->pde, c->large, c->nxe))
        return sdm_fault(e, acc | EC_P | EC_RSVD);
    if (!c->large) {
        e.nlevels = 3;
        if (!(c->pte & E_P))
            return sdm_fault(e, acc);
        if (sdm_reserved(c->pte, false, c->nxe))
            return sdm_fault(e, acc | EC_P | EC_RSVD);
    }
    /* The PAE PDPTE has no R/W, U/S or XD (reserved there, Table 4-8): the
     * entries controlling the rights are the PDE and, for 4 KiB, the PTE. */
    e.rw = (c->pde & E_RW) && (c->large || (c->pte & E_RW));
    e.us = (c->pde & E_US) && (c->large || (c->pte & E_US));
    e.xd = (c->pde & E_XD) || (!c->large && (c->pte & E_XD));
    if (!sdm_allowed(e.rw, e.us, e.xd, c->access, c->cpl, c->wp, c->nxe)) {
        e.protection = true;
        if (SDM_PF_PROTECTION_SETS_PDE_A && !c->large)
            e.pde_after |= E_A;
        return sdm_fault(e, acc | EC_P);   /* "1: page-level protection violation" */
    }
    /* §4.8: "Whenever the processor uses a paging-structure entry as part of
     * linear-address translation, it sets the accessed flag in that entry (if
     * it is not already set). Whenever there is a write to a linear address,
     * the processor sets the dirty flag (if it is not already set) in the
     * paging-structure entry that identifies the final physical address for
     * the linear address (either a PTE or a PDE in which the PS flag is 1)." */
    bool write = c->access == ACCESS_WRITE;
    e.pde_after |= E_A;
    if (c->large)
        e.pde_after |= write ? E_D : 0;
    else
        e.pte_after |= E_A | (write ? E_D : 0);
    return e;
}

/* ---- the machine each case runs on ---- */

#define CR3 0x00001020u                 /* PDPT at 0x1020: CR3[31:5], not page aligned */
#define PDPT_BASE 0x1020ULL
#define PD_BASE 0x00002000ULL
#define PT_BASE 0x7ffff000ULL
#define FRAME_4K 0x876543000ULL         /* above 4 GiB: 36-bit PAE frames */
#define FRAME_2M 0x876400000ULL

static uint64_t pdpte_addr(uint32_t lin) { return PDPT_BASE + 8 * (lin >> 30); }
static uint64_t pde_addr(uint32_t lin) { return PD_BASE + 8 * ((lin >> 21) & 511); }
static uint64_t pte_addr(uint32_t lin) { return PT_BASE + 8 * ((lin >> 12) & 511); }

/* Flags nibble: bit 0 P, bit 1 R/W, bit 2 U/S, bit 3 XD. */
static uint64_t flags_of(unsigned nib)
{
    return (nib & 1 ? E_P : 0) | (nib & 2 ? E_RW : 0) | (nib & 4 ? E_US : 0) |
           (nib & 8 ? E_XD : 0);
}

static void machine_build(PhysMem *pm, const Case *c)
{
    /* Not present PDPTE: the PD address with P clear (its bits are ignored). */
    physmem_write64(pm, pdpte_addr(c->lin), PD_BASE | (c->pdpte_p ? E_P : 0));
    physmem_write64(pm, pde_addr(c->lin), c->pde);
    if (!c->large)
        physmem_write64(pm, pte_addr(c->lin), c->pte);
}

static char *case_describe(const Case *c)
{
    static const char *const acc[] = { "read", "write", "exec" };
    return g_strdup_printf("[%s lin=0x%08x PDPTE.P=%d PDE=0x%016llx PTE=0x%016llx %s CPL%d "
                           "WP=%d NXE=%d]",
                           c->large ? "2M" : "4K", c->lin, c->pdpte_p,
                           (unsigned long long)c->pde, (unsigned long long)c->pte,
                           acc[c->access], c->cpl, c->wp, c->nxe);
}

/* Like ck_assert_msg, but calls into Check only on failure: a passing
 * ck_assert records its location with the parent process, and the matrix
 * makes a few hundred thousand checks. */
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            ck_abort_msg(__VA_ARGS__);                                        \
    } while (0)

static void case_check_levels(const PaeWalk *w, const Case *c, const Expect *e,
                              uint64_t pdpte_mem, const char *what)
{
    CHECK(w->nlevels == e->nlevels, "%s: %d levels, expected %d", what, w->nlevels,
                  e->nlevels);
    CHECK(w->levels[0].level == PAE_LEVEL_PDPTE && w->levels[0].from_register &&
                  w->levels[0].paddr == pdpte_addr(c->lin) && w->levels[0].before == pdpte_mem &&
                  w->levels[0].after == pdpte_mem, "%s: PDPTE level", what);
    if (e->nlevels >= 2)
        CHECK(w->levels[1].level == PAE_LEVEL_PDE && !w->levels[1].from_register &&
                      w->levels[1].paddr == pde_addr(c->lin) && w->levels[1].before == c->pde &&
                      w->levels[1].after == e->pde_after, "%s: PDE level", what);
    if (e->nlevels == 3)
        CHECK(w->levels[2].level == PAE_LEVEL_PTE && w->levels[2].paddr == pte_addr(c->lin) &&
                      w->levels[2].before == c->pte && w->levels[2].after == e->pte_after,
                      "%s: PTE level", what);
}

/* Memory references: one read per entry fetched from memory (the PDPTE
 * comes from its register), in walk order; then one locked write per entry
 * whose A/D bits the walk changed, and no other. */
static void case_check_refs(const PaeWalk *w, const Case *c, const Expect *e,
                            const char *what)
{
    int nreads = e->nlevels - 1;
    bool pde_w = e->pde_after != c->pde, pte_w = !c->large && e->pte_after != c->pte;
    CHECK(w->nrefs == nreads + pde_w + pte_w, "%s: %d refs, expected %d", what, w->nrefs,
                  nreads + pde_w + pte_w);
    if (nreads >= 1)
        CHECK(w->refs[0].paddr == pde_addr(c->lin) && !w->refs[0].write, "%s: ref 0", what);
    if (nreads >= 2)
        CHECK(w->refs[1].paddr == pte_addr(c->lin) && !w->refs[1].write, "%s: ref 1", what);
    bool seen_pde_w = false, seen_pte_w = false;
    for (int i = nreads; i < w->nrefs; i++) {
        CHECK(w->refs[i].write, "%s: ref %d should be an A/D write", what, i);
        seen_pde_w |= w->refs[i].paddr == pde_addr(c->lin);
        seen_pte_w |= !c->large && w->refs[i].paddr == pte_addr(c->lin);
    }
    CHECK(seen_pde_w == pde_w && seen_pte_w == pte_w, "%s: A/D write refs", what);
}

/* The MMU's order: the fast walk (pae_priv.h), and the walk when it
 * declines. A fast walk's PaeFast is turned into what the walk reports
 * (no levels) as its fields are documented, so that the oracle checks
 * the fast walk too: present, permitted entries whose A/D bits are
 * already set. */
static bool walk_lean(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access, int cpl,
                      PaeWalk *out)
{
    PaeFast f;
    if (!pae_walk_fast(regs, pm, NULL, NULL, lin, access, cpl, &f))
        return pae_walk(regs, pm, lin, access, cpl, out);
    uint32_t size = f.large ? PAE_PAGE_2M : PAE_PAGE_4K;
    out->fault = false;
    out->nrefs = f.large ? 1 : 2;
    out->refs[0] = (PaeRef){ .paddr = f.pde_pa, .write = false };
    out->refs[1] = (PaeRef){ .paddr = f.pte_pa, .write = false };
    out->pde = f.pde;
    out->pde_pa = f.pde_pa;
    out->frame = f.frame;
    out->page_size = size;
    out->paddr = f.frame | (lin & (size - 1));
    out->rw = (f.all & PAE_RW) != 0;
    out->us = (f.all & PAE_US) != 0;
    out->nx = (f.any & PAE_XD) != 0;
    out->global = (f.leaf & PAE_G) != 0;
    out->dirty = (f.leaf & PAE_D) != 0;
    return true;
}

/* Run one case on pm with pae_walk (lean: walk_lean, the fast walk first)
 * and compare everything the walker reports with the oracle. pm may hold entries of earlier cases: every entry this walk can
 * read (the PDPTE, PDE and PTE slots of c->lin) is written here first. */
static void case_walk_check(PhysMem *pm, const Case *c, bool lean)
{
    Expect e = sdm_expect(c);
    g_autofree char *desc = case_describe(c);
    g_autofree char *what = g_strconcat(lean ? "lean " : "", desc, NULL);
    machine_build(pm, c);
    size_t frames = physmem_frames_used(pm);
    uint64_t pdpte_mem = physmem_read64(pm, pdpte_addr(c->lin));
    PaeRegs regs = { .wp = c->wp, .nxe = c->nxe };
    CHECK(pae_load_cr3(&regs, pm, CR3, NULL), "%s: CR3 load failed", what);

    PaeWalk w;
    memset(&w, 0xa5, sizeof w);
    bool ok = lean ? walk_lean(&regs, pm, c->lin, c->access, c->cpl, &w)
                   : pae_walk(&regs, pm, c->lin, c->access, c->cpl, &w);

    CHECK(ok == !e.fault && w.fault == e.fault, "%s: fault=%d, SDM says %d", what,
                  w.fault, e.fault);
    if (e.fault) {
        CHECK(w.vector == 14, "%s: vector %u", what, w.vector);
        CHECK(w.error_code == e.ec, "%s: error code 0x%x, SDM says 0x%x", what,
                      w.error_code, e.ec);
        CHECK(w.cr2 == c->lin, "%s: CR2 0x%x", what, w.cr2);
    } else {
        uint64_t frame = c->large ? FRAME_2M : FRAME_4K;
        uint32_t size = c->large ? 0x200000u : 0x1000u;
        CHECK(w.paddr == (frame | (c->lin & (size - 1))), "%s: paddr 0x%llx", what,
                      (unsigned long long)w.paddr);
        CHECK(w.frame == frame && w.page_size == size, "%s: frame/size", what);
        CHECK(w.rw == e.rw && w.us == e.us && w.nx == (c->nxe && e.xd),
                      "%s: combined rights rw=%d us=%d nx=%d", what, w.rw, w.us, w.nx);
        uint64_t leaf = c->large ? e.pde_after : e.pte_after;
        CHECK(w.dirty == ((leaf & E_D) != 0) && w.global == ((leaf & E_G) != 0),
                      "%s: dirty/global", what);
        /* What a paging-structure cache keeps: the PDE after the walk. */
        CHECK(w.pde == e.pde_after && w.pde_pa == pde_addr(c->lin), "%s: pde 0x%016llx",
              what, (unsigned long long)w.pde);
    }
    /* Memory after the walk: exactly the SDM's A/D changes, nothing else. */
    uint64_t pde_now = physmem_read64(pm, pde_addr(c->lin));
    CHECK(pde_now == e.pde_after, "%s: PDE after 0x%016llx, SDM says 0x%016llx", what,
                  (unsigned long long)pde_now, (unsigned long long)e.pde_after);
    if (!c->large) {
        uint64_t pte_now = physmem_read64(pm, pte_addr(c->lin));
        CHECK(pte_now == e.pte_after, "%s: PTE after 0x%016llx, SDM says 0x%016llx",
                      what, (unsigned long long)pte_now, (unsigned long long)e.pte_after);
    }
    CHECK(physmem_read64(pm, pdpte_addr(c->lin)) == pdpte_mem,
                  "%s: the PDPT changed (PAE PDPTEs have no A/D bits)", what);
    CHECK(physmem_frames_used(pm) == frames, "%s: the walk allocated memory", what);

    /* Levels, as reported for explanation (pae_walk only). */
    if (!lean)
        case_check_levels(&w, c, &e, pdpte_mem, what);
    case_check_refs(&w, c, &e, what);
}

static void case_check_on(PhysMem *pm, const Case *c)
{
    case_walk_check(pm, c, false);
    case_walk_check(pm, c, true);
}

static void case_check(const Case *c)
{
    PhysMem *pm = physmem_new();
    case_check_on(pm, c);
    physmem_free(pm);
}

/* ---- the permission matrix ---- */

static const uint32_t matrix_lins[] = {
    0x0804a123, 0x7fe3b5c9, 0xbfffffff, 0xc0345678, 0x00000000, 0xffffffff, 0x40201ffc,
};

/* A/D bits the matrix's entries start with: none (the walk sets them),
 * A only (a write must still set D), or both (a walk that changes nothing:
 * pae_the fast walk when the access is permitted). */
static const uint64_t matrix_ad[] = { 0, E_A, E_A | E_D };

/* Iteration i (0..47) fixes the leaf size, access, user or supervisor,
 * CR0.WP and EFER.NXE; the loop covers P, R/W, U/S and XD of every level
 * (PDPTE: only P exists), the A/D bits the entries start with, and CPL 0,
 * 1 and 2 for supervisor accesses. Other bits (PCD, PWT, G) are set so
 * that a change to them would show. */
START_TEST(test_permission_matrix)
{
    Case c = { .large = _i & 1, .access = (Access)((_i >> 1) % 3) };
    int rest = (_i >> 1) / 3;
    bool user = rest & 1;
    c.wp = (rest >> 1) & 1;
    c.nxe = (rest >> 2) & 1;
    unsigned npte = c.large ? 1 : 16;
    PhysMem *pm = physmem_new();
    for (unsigned ad = 0; ad < G_N_ELEMENTS(matrix_ad); ad++)
        for (unsigned pdpte_p = 0; pdpte_p < 2; pdpte_p++)
            for (unsigned pde = 0; pde < 16; pde++)
                for (unsigned pte = 0; pte < npte; pte++) {
                    c.pdpte_p = pdpte_p;
                    c.cpl = user ? 3 : (int)((pde + pte + ad) % 3);
                    c.lin = matrix_lins[(pdpte_p + pde * 16 + pte + ad) %
                                        G_N_ELEMENTS(matrix_lins)];
                    if (c.large) {
                        c.pde = FRAME_2M | E_PS | E_G | E_PCD | flags_of(pde) | matrix_ad[ad];
                        c.pte = 0;
                    } else {
                        c.pde = PT_BASE | E_PWT | flags_of(pde) | matrix_ad[ad];
                        c.pte = FRAME_4K | E_G | E_PCD | E_PWT | flags_of(pte) | matrix_ad[ad];
                    }
                    case_check_on(pm, &c);
                }
    physmem_free(pm);
}
END_TEST

/* pae_check_rights (the TLB-hit path) on every combination, against the
 * same SDM rules. */
START_TEST(test_check_rights_exhaustive)
{
    for (unsigned m = 0; m < 64; m++) {
        bool rw = m & 1, us = m & 2, nx = m & 4, wp = m & 8, nxe = m & 16;
        int cpl = m & 32 ? 3 : 0;
        for (int a = ACCESS_READ; a <= ACCESS_EXEC; a++) {
            bool ok = sdm_allowed(rw, us, nx, (Access)a, cpl, wp, nxe);
            uint32_t want = ok ? 0 : EC_P | sdm_access_bits((Access)a, cpl, nxe);
            uint32_t got = pae_check_rights(rw, us, nx, (Access)a, cpl, wp, nxe);
            ck_assert_msg(got == want, "rw=%d us=%d nx=%d access=%d cpl=%d wp=%d nxe=%d: "
                          "0x%x, SDM says 0x%x", rw, us, nx, a, cpl, wp, nxe, got, want);
        }
    }
}
END_TEST

/* ---- reserved bits (§4.4.2) ---- */

/* Set one bit in the PDE or PTE of an otherwise good mapping and compare. */
static void rsvd_case(bool large, bool in_pte, int bit, bool nxe, Access acc, int cpl)
{
    Case c = { .large = large, .pdpte_p = true, .access = acc, .cpl = cpl, .wp = true,
               .nxe = nxe, .lin = 0x0804a123 };
    uint64_t rights = E_P | E_RW | E_US | E_A | E_D;
    c.pde = large ? FRAME_2M | E_PS | rights : PT_BASE | rights;
    c.pte = large ? 0 : FRAME_4K | rights;
    if (in_pte)
        c.pte |= BIT(bit);
    else
        c.pde |= BIT(bit);
    case_check(&c);
}

START_TEST(test_rsvd_high_bits_each_level)
{
    /* Bits 62:36 lie above MAXPHYADDR: reserved in every PDE and PTE. */
    for (int bit = 36; bit <= 62; bit++) {
        rsvd_case(false, false, bit, true, ACCESS_READ, 0);     /* PDE -> PT */
        rsvd_case(false, true, bit, true, ACCESS_WRITE, 3);     /* PTE */
        rsvd_case(true, false, bit, false, ACCESS_EXEC, 3);     /* 2 MiB PDE */
        Case c = { .large = false, .pdpte_p = true, .access = ACCESS_READ, .lin = 0x1000,
                   .pde = PT_BASE | E_P | BIT(bit), .pte = FRAME_4K | E_P };
        ck_assert(sdm_expect(&c).ec == (EC_P | EC_RSVD));       /* the oracle agrees */
    }
}
END_TEST

START_TEST(test_rsvd_bit63_only_without_nxe)
{
    for (int nxe = 0; nxe < 2; nxe++)
        for (int a = 0; a < 3; a++) {
            rsvd_case(false, false, 63, nxe, (Access)a, 0);
            rsvd_case(false, true, 63, nxe, (Access)a, 3);
            rsvd_case(true, false, 63, nxe, (Access)a, 0);
        }
    /* Hand-worked: XD in the PTE with NXE=0, user read: P|U|RSVD = 0xd. */
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1000, 0x2001);
    physmem_write64(pm, 0x2000, 0x3007);
    physmem_write64(pm, 0x3000, 0x8000000000004007ULL);
    PaeRegs regs = { 0 };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    PaeWalk w;
    ck_assert(!pae_walk(&regs, pm, 0x00000123, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.error_code, 0xd);
    regs.nxe = true;
    ck_assert(pae_walk(&regs, pm, 0x00000123, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x4123);
    physmem_free(pm);
}
END_TEST

START_TEST(test_rsvd_2m_pde_bits_20_13)
{
    for (int bit = 13; bit <= 20; bit++)
        for (int a = 0; a < 3; a++)
            rsvd_case(true, false, bit, true, (Access)a, a == 1 ? 3 : 0);
    /* Bit 12 of a 2 MiB PDE is PAT, not reserved. */
    rsvd_case(true, false, 12, true, ACCESS_READ, 0);
    /* Bits 20:12 are address bits in a PDE that points to a page table:
     * a page table at 0x1ff000 (bits 20:12 all set) is fine. */
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1000, 0x2001);
    physmem_write64(pm, 0x2000, 0x1ff067);
    physmem_write64(pm, 0x1ff000, 0x4067);
    PaeRegs regs = { 0 };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x00000321, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x4321);
    physmem_free(pm);
}
END_TEST

START_TEST(test_not_reserved_bits)
{
    /* PWT, PCD, G (ignored in a PDE that points to a page table), the
     * available bits 11:9 and PAT (PTE bit 7): no fault at any level. */
    int ok_bits[] = { 3, 4, 8, 9, 10, 11 };
    for (size_t i = 0; i < G_N_ELEMENTS(ok_bits); i++) {
        rsvd_case(false, false, ok_bits[i], false, ACCESS_WRITE, 3);
        rsvd_case(false, true, ok_bits[i], false, ACCESS_WRITE, 3);
    }
    rsvd_case(false, true, 7, false, ACCESS_READ, 3);   /* PAT in a PTE */
    /* Bits 35:12 are address bits: the top of the 36-bit space. */
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1000, 0xffffff001ULL);             /* PD at 64 GiB - 4 KiB */
    physmem_write64(pm, 0xffffff000ULL, 0xfffffe067ULL);     /* PT just below */
    physmem_write64(pm, 0xfffffe000ULL, 0xffffff067ULL);     /* the last frame */
    PaeRegs regs = { 0 };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x00000abc, ACCESS_WRITE, 3, &w));
    ck_assert_uint_eq(w.paddr, 0xffffffabcULL);
    physmem_free(pm);
}
END_TEST

START_TEST(test_rsvd_not_checked_when_not_present)
{
    /* §4.7: reserved bits are not checked in an entry whose P flag is 0. */
    for (int a = 0; a < 3; a++)
        for (int in_pte = 0; in_pte < 2; in_pte++) {
            Case c = { .pdpte_p = true, .access = (Access)a, .cpl = 3, .nxe = false,
                       .lin = 0xbffff123 };
            c.pde = in_pte ? PT_BASE | E_P | E_RW | E_US : ~E_P;
            c.pte = in_pte ? ~E_P : 0;
            Expect e = sdm_expect(&c);
            ck_assert(e.fault && !(e.ec & (EC_P | EC_RSVD)));
            case_check(&c);
        }
}
END_TEST

START_TEST(test_rsvd_priority)
{
    /* A reserved bit in the PDE ends the walk before the PTE is read, even
     * when the PTE is not present. */
    Case c = { .pdpte_p = true, .access = ACCESS_READ, .cpl = 3, .lin = 0x0804a123,
               .pde = PT_BASE | E_P | E_RW | E_US | BIT(40), .pte = 0 };
    ck_assert_uint_eq(sdm_expect(&c).ec, EC_P | EC_RSVD | EC_U);
    case_check(&c);
    /* A reserved bit in the PTE wins over a U/S violation in the PDE: there
     * is no translation, so no access-rights check. */
    c.pde = PT_BASE | E_P | E_RW;
    c.pte = FRAME_4K | E_P | E_RW | E_US | BIT(50);
    ck_assert_uint_eq(sdm_expect(&c).ec, EC_P | EC_RSVD | EC_U);
    case_check(&c);
    /* A not-present PTE wins over a U/S violation in the PDE: P=0. */
    c.pte = FRAME_4K;
    ck_assert_uint_eq(sdm_expect(&c).ec, EC_U);
    case_check(&c);
}
END_TEST

/* ---- the PDPTE registers (§4.4.1) ---- */

static void pdpt_write(PhysMem *pm, uint64_t base, const uint64_t e[4])
{
    for (int i = 0; i < 4; i++)
        physmem_write64(pm, base + 8 * (uint64_t)i, e[i]);
}

START_TEST(test_pdpte_reserved_gp)
{
    /* "If any of the PDPTEs sets both the P flag (bit 0) and any reserved
     * bit, the MOV to CR3 instruction causes a general-protection exception
     * (#GP(0)) and the PDPTEs are not loaded." Reserved: 2:1, 8:5, 63:36. */
    const uint64_t good[4] = { 0x10001, 0x11001 | E_PWT, 0x12001 | E_PCD, 0x13001 };
    const uint64_t other[4] = { 0x20001, 0, 0x22001, 0x23001 };
    for (int bit = 0; bit < 64; bit++) {
        bool rsvd = (SDM_RSVD_PDPTE & BIT(bit)) != 0;
        for (int i = 0; i < 4; i++) {
            PhysMem *pm = physmem_new();
            pdpt_write(pm, 0x20000, other);
            PaeRegs regs = { .wp = true };
            ck_assert(pae_load_cr3(&regs, pm, 0x20000, NULL));
            PaeRegs saved = regs;
            uint64_t e[4];
            memcpy(e, good, sizeof e);
            e[i] |= BIT(bit);
            pdpt_write(pm, 0x1000, e);
            bool ok = pae_load_cr3(&regs, pm, 0x1000, NULL);
            ck_assert_msg(ok == !rsvd, "PDPTE %d bit %d: load %s", i, bit, ok ? "ok" : "#GP");
            if (ok)
                ck_assert(regs.cr3 == 0x1000 && !memcmp(regs.pdpte, e, sizeof e));
            else
                ck_assert_msg(!memcmp(&regs, &saved, sizeof regs),
                              "PDPTE %d bit %d: #GP must leave the registers unchanged", i, bit);
            /* The same bit in a PDPTE that is not present is ignored. */
            e[i] &= ~E_P;
            pdpt_write(pm, 0x1000, e);
            ck_assert_msg(pae_load_cr3(&regs, pm, 0x1000, NULL),
                          "not-present PDPTE %d with bit %d refused", i, bit);
            ck_assert(!memcmp(regs.pdpte, e, sizeof e));
            physmem_free(pm);
        }
    }
}
END_TEST

START_TEST(test_pdpte_not_present_ignores_other_bits)
{
    PhysMem *pm = physmem_new();
    const uint64_t e[4] = { ~E_P, ~E_P, ~E_P, ~E_P };
    pdpt_write(pm, 0x1000, e);
    PaeRegs regs = { .nxe = true };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    PaeWalk w;
    uint32_t lins[] = { 0x00000000, 0x40000000, 0x80000abc, 0xffffffff };
    for (int i = 0; i < 4; i++) {
        ck_assert(!pae_walk(&regs, pm, lins[i], ACCESS_EXEC, 3, &w));
        ck_assert_uint_eq(w.vector, 14);
        ck_assert_uint_eq(w.error_code, EC_U | EC_ID);      /* P=0: not present */
        ck_assert_uint_eq(w.cr2, lins[i]);
        ck_assert_int_eq(w.nrefs, 0);                       /* the register, no memory */
        ck_assert_int_eq(w.nlevels, 1);
    }
    physmem_free(pm);
}
END_TEST

START_TEST(test_pdpte_register_semantics)
{
    /* §4.4.1: walks use the PDPTE registers loaded at MOV CR3; a write to
     * the PDPT in memory takes effect only at the next load. */
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1000, 0x2001);            /* PDPTE 0 -> PD 0x2000 */
    physmem_write64(pm, 0x2000, 0x3067);            /* PDE 0 -> PT 0x3000 */
    physmem_write64(pm, 0x3008, 0x5067);            /* PTE 1 -> 0x5000 */
    physmem_write64(pm, 0x6000, 0x7067);            /* PD 0x6000: PDE 0 -> PT 0x7000 */
    physmem_write64(pm, 0x7008, 0x9067);            /* PTE 1 -> 0x9000 */
    PaeRegs regs = { .wp = true };
    PaeRef refs[4];
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, refs));
    for (int i = 0; i < 4; i++)
        ck_assert(refs[i].paddr == 0x1000 + 8 * (uint64_t)i && !refs[i].write);
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x1abc, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x5abc);

    physmem_write64(pm, 0x1000, 0x6001);            /* repoint PDPTE 0 in memory */
    ck_assert(pae_walk(&regs, pm, 0x1abc, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x5abc);             /* still the register */
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    ck_assert(pae_walk(&regs, pm, 0x1abc, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x9abc);             /* after the reload */

    physmem_write64(pm, 0x1000, 0);                 /* clear it in memory */
    ck_assert(pae_walk(&regs, pm, 0x1abc, ACCESS_WRITE, 3, &w));
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    ck_assert(!pae_walk(&regs, pm, 0x1abc, ACCESS_WRITE, 3, &w));
    ck_assert_uint_eq(w.error_code, EC_W | EC_U);

    /* A bad PDPTE written to memory: walks go on with the old registers,
     * and the next MOV CR3 faults and leaves them as they were. */
    physmem_write64(pm, 0x1000, 0x2001);
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    physmem_write64(pm, 0x1000, 0x2003);            /* R/W: reserved in a PDPTE */
    ck_assert(pae_walk(&regs, pm, 0x1abc, ACCESS_READ, 0, &w));
    PaeRegs saved = regs;
    ck_assert(!pae_load_cr3(&regs, pm, 0x1000, NULL));
    ck_assert(!memcmp(&saved, &regs, sizeof regs));
    ck_assert(pae_walk(&regs, pm, 0x1abc, ACCESS_READ, 0, &w));
    ck_assert_uint_eq(w.paddr, 0x5abc);
    physmem_free(pm);
}
END_TEST

START_TEST(test_cr3_low_bits_ignored)
{
    /* Table 4-7: CR3 bits 4:0 are ignored; the PDPT is 32-byte aligned. */
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1020, 0x2001);
    physmem_write64(pm, 0x2000, 0x3067);
    physmem_write64(pm, 0x3000, 0x4067);
    PaeRegs regs = { 0 };
    PaeRef refs[4];
    ck_assert(pae_load_cr3(&regs, pm, 0x103f, refs));
    ck_assert_uint_eq(regs.cr3, 0x103f);
    ck_assert_uint_eq(refs[0].paddr, 0x1020);
    ck_assert_uint_eq(refs[3].paddr, 0x1038);
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x00000fff, ACCESS_READ, 0, &w));
    ck_assert_uint_eq(w.paddr, 0x4fff);
    ck_assert_uint_eq(w.levels[0].paddr, 0x1020);
    physmem_free(pm);
}
END_TEST

/* ---- A/D updates and memory references (§4.8) ---- */

START_TEST(test_refs_ad_writes_only_when_bits_change)
{
    struct { uint64_t pde, pte; Access acc; int nrefs; uint64_t pde_after, pte_after; } t[] = {
        /* A already set everywhere, read: just the two reads. */
        { 0x3027, 0x4025, ACCESS_READ, 2, 0x3027, 0x4025 },
        /* Write to a clean page: PTE gets D (one write), PDE unchanged. */
        { 0x3027, 0x4027, ACCESS_WRITE, 3, 0x3027, 0x4067 },
        /* Write to a dirty page: nothing to write. */
        { 0x3027, 0x4067, ACCESS_WRITE, 2, 0x3027, 0x4067 },
        /* Fresh PDE and PTE, fetch: A in both, no D. */
        { 0x3007, 0x4005, ACCESS_EXEC, 4, 0x3027, 0x4025 },
        /* Fresh everything, write: A in the PDE, A and D in the PTE. */
        { 0x3007, 0x4007, ACCESS_WRITE, 4, 0x3027, 0x4067 },
        /* D in a PDE that points to a page table is ignored: kept, not set. */
        { 0x3047, 0x4027, ACCESS_WRITE, 4, 0x3067, 0x4067 },
        { 0x3027, 0x4025, ACCESS_READ, 2, 0x3027, 0x4025 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++) {
        PhysMem *pm = physmem_new();
        physmem_write64(pm, 0x1000, 0x2001);
        physmem_write64(pm, 0x2000, t[i].pde);
        physmem_write64(pm, 0x3000, t[i].pte);
        PaeRegs regs = { .wp = true };
        ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
        PaeWalk w;
        ck_assert_msg(pae_walk(&regs, pm, 0x123, t[i].acc, 3, &w), "row %zu", i);
        ck_assert_msg(w.nrefs == t[i].nrefs, "row %zu: %d refs", i, w.nrefs);
        ck_assert_uint_eq(physmem_read64(pm, 0x2000), t[i].pde_after);
        ck_assert_uint_eq(physmem_read64(pm, 0x3000), t[i].pte_after);
        /* Walk again: steady state, reads only (pae_the fast walk). */
        ck_assert(pae_walk(&regs, pm, 0x123, t[i].acc, 3, &w));
        ck_assert_int_eq(w.nrefs, 2);
        ck_assert(walk_lean(&regs, pm, 0x123, t[i].acc, 3, &w));
        ck_assert_int_eq(w.nrefs, 2);
        ck_assert(w.refs[0].paddr == 0x2000 && !w.refs[0].write);
        ck_assert(w.refs[1].paddr == 0x3000 && !w.refs[1].write);
        ck_assert_uint_eq(w.paddr, 0x4123);
        ck_assert_uint_eq(physmem_read64(pm, 0x2000), t[i].pde_after);
        ck_assert_uint_eq(physmem_read64(pm, 0x3000), t[i].pte_after);
        physmem_free(pm);
    }
}
END_TEST

START_TEST(test_refs_2m)
{
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1018, 0x2001);                    /* PDPTE 3 */
    physmem_write64(pm, 0x2008, 0x8000000000600083ULL);     /* PDE 1: P RW PS XD, 2 MiB at 0x600000 */
    PaeRegs regs = { .nxe = true, .wp = true };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0xc0345678, ACCESS_READ, 0, &w));
    ck_assert_uint_eq(w.paddr, 0x745678);
    ck_assert_uint_eq(w.page_size, 0x200000);
    ck_assert_int_eq(w.nrefs, 2);                           /* read PDE, write A */
    ck_assert(w.refs[0].paddr == 0x2008 && !w.refs[0].write);
    ck_assert(w.refs[1].paddr == 0x2008 && w.refs[1].write);
    ck_assert_uint_eq(physmem_read64(pm, 0x2008), 0x80000000006000a3ULL);
    ck_assert(pae_walk(&regs, pm, 0xc0345678, ACCESS_WRITE, 0, &w));
    ck_assert_int_eq(w.nrefs, 2);                           /* read PDE, write D */
    ck_assert_uint_eq(physmem_read64(pm, 0x2008), 0x80000000006000e3ULL);
    ck_assert(pae_walk(&regs, pm, 0xc0345678, ACCESS_WRITE, 0, &w));
    ck_assert_int_eq(w.nrefs, 1);
    ck_assert(!pae_walk(&regs, pm, 0xc0345678, ACCESS_EXEC, 0, &w));
    ck_assert_uint_eq(w.error_code, EC_P | EC_ID);
    /* The same through walk_lean: A and D now set, a 2 MiB fast walk. */
    ck_assert(walk_lean(&regs, pm, 0xc0345678, ACCESS_WRITE, 0, &w));
    ck_assert_uint_eq(w.paddr, 0x745678);
    ck_assert_uint_eq(w.page_size, 0x200000);
    ck_assert(w.rw && !w.us && w.nx && w.dirty && !w.global);
    ck_assert(w.pde == 0x80000000006000e3ULL && w.pde_pa == 0x2008);
    ck_assert_int_eq(w.nrefs, 1);
    ck_assert(w.refs[0].paddr == 0x2008 && !w.refs[0].write);
    ck_assert(!walk_lean(&regs, pm, 0xc0345678, ACCESS_EXEC, 0, &w));
    ck_assert_uint_eq(w.error_code, EC_P | EC_ID);
    ck_assert(!walk_lean(&regs, pm, 0xc0345678, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.error_code, EC_P | EC_U);
    ck_assert_int_eq(w.nrefs, 1);
    ck_assert_uint_eq(physmem_read64(pm, 0x2008), 0x80000000006000e3ULL);
    physmem_free(pm);
}
END_TEST

START_TEST(test_cr2_is_the_linear_address)
{
    /* CR2 gets the full 32-bit linear address, offset bits included, for a
     * fault at each level. */
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1000, 0x2001);                /* PDPTE 0 present, 1..3 not */
    physmem_write64(pm, 0x2000, 0x3067);                /* PDE 0 -> PT; PDE 1 not present */
    physmem_write64(pm, 0x3000, 0x4065);                /* PTE 0 read-only; PTE 1 not present */
    PaeRegs regs = { .wp = true };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    uint32_t lins[] = { 0xfffffffc, 0x40000001, 0x00200fff, 0x00001abc, 0x00000ffe };
    for (size_t i = 0; i < G_N_ELEMENTS(lins); i++) {
        PaeWalk w;
        ck_assert(!pae_walk(&regs, pm, lins[i], ACCESS_WRITE, 0, &w));
        ck_assert_uint_eq(w.cr2, lins[i]);
    }
    physmem_free(pm);
}
END_TEST

START_TEST(test_id_bit_only_with_nxe)
{
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1000, 0x2001);
    PaeRegs regs = { 0 };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    PaeWalk w;
    /* Not present PDE; fetch with NXE=0: no I/D; with NXE=1: I/D. */
    ck_assert(!pae_walk(&regs, pm, 0x1000, ACCESS_EXEC, 0, &w));
    ck_assert_uint_eq(w.error_code, 0);
    ck_assert(!pae_walk(&regs, pm, 0x1000, ACCESS_EXEC, 3, &w));
    ck_assert_uint_eq(w.error_code, EC_U);
    regs.nxe = true;
    ck_assert(!pae_walk(&regs, pm, 0x1000, ACCESS_EXEC, 0, &w));
    ck_assert_uint_eq(w.error_code, EC_ID);
    ck_assert(!pae_walk(&regs, pm, 0x1000, ACCESS_EXEC, 3, &w));
    ck_assert_uint_eq(w.error_code, EC_U | EC_ID);
    /* Data accesses never set I/D. */
    ck_assert(!pae_walk(&regs, pm, 0x1000, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.error_code, EC_U);
    physmem_free(pm);
}
END_TEST

/* A paging structure in a frame never written reads as zeros: not
 * present. Hand-worked, on both walkers. */
START_TEST(test_unwritten_table_frames)
{
    for (int lean = 0; lean < 2; lean++) {
        PhysMem *pm = physmem_new();
        physmem_write64(pm, 0x1000, 0x2001);            /* PD at 0x2000: never written */
        PaeRegs regs = { .wp = true };
        ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
        PaeWalk w;
        size_t frames = physmem_frames_used(pm);
        bool ok = lean ? walk_lean(&regs, pm, 0x123, ACCESS_READ, 3, &w)
                       : pae_walk(&regs, pm, 0x123, ACCESS_READ, 3, &w);
        ck_assert(!ok && w.fault);
        ck_assert_uint_eq(w.error_code, EC_U);          /* P=0, user read */
        ck_assert_uint_eq(w.cr2, 0x123);
        ck_assert_int_eq(w.nrefs, 1);
        ck_assert(w.refs[0].paddr == 0x2000 && !w.refs[0].write);
        ck_assert_uint_eq(physmem_frames_used(pm), frames);

        physmem_write64(pm, 0x2000, 0x3067);            /* PT at 0x3000: never written */
        frames = physmem_frames_used(pm);
        ok = lean ? walk_lean(&regs, pm, 0x123, ACCESS_WRITE, 3, &w)
                  : pae_walk(&regs, pm, 0x123, ACCESS_WRITE, 3, &w);
        ck_assert(!ok);
        ck_assert_uint_eq(w.error_code, EC_W | EC_U);
        ck_assert_int_eq(w.nrefs, 2);
        ck_assert(w.refs[1].paddr == 0x3000 && !w.refs[1].write);
        ck_assert_uint_eq(physmem_frames_used(pm), frames);
        ck_assert_uint_eq(physmem_read64(pm, 0x2000), 0x3067);

        physmem_write64(pm, 0x3000, 0x4067);
        ok = lean ? walk_lean(&regs, pm, 0x123, ACCESS_WRITE, 3, &w)
                  : pae_walk(&regs, pm, 0x123, ACCESS_WRITE, 3, &w);
        ck_assert(ok);
        ck_assert_uint_eq(w.paddr, 0x4123);
        ck_assert_int_eq(w.nrefs, 2);
        physmem_free(pm);
    }
    /* A PDPT in a frame never written: four not-present PDPTEs. And one in
     * the last 32 bytes of a frame. */
    PhysMem *pm = physmem_new();
    PaeRegs regs = { 0 };
    PaeRef refs[4];
    ck_assert(pae_load_cr3(&regs, pm, 0x5000, refs));
    ck_assert(regs.pdpte[0] == 0 && regs.pdpte[1] == 0 && regs.pdpte[2] == 0 &&
              regs.pdpte[3] == 0);
    ck_assert(refs[0].paddr == 0x5000 && refs[3].paddr == 0x5018 && !refs[3].write);
    ck_assert_uint_eq(physmem_frames_used(pm), 0);
    const uint64_t e[4] = { 0x2001, 0x3001, 0, 0x4001 | E_PCD };
    pdpt_write(pm, 0x6fe0, e);
    ck_assert(pae_load_cr3(&regs, pm, 0x6fe0, refs));
    ck_assert(!memcmp(regs.pdpte, e, sizeof e));
    ck_assert(refs[0].paddr == 0x6fe0 && refs[3].paddr == 0x6ff8);
    physmem_free(pm);
}
END_TEST

/* The MMU's frame hints (pae_priv.h, PaeHints) are a host-speed
 * shortcut: the hinted fast walk must give exactly what the unhinted one
 * gives, whichever tables the walks go through in turn, while entries
 * change under it and while table frames that did not exist come to
 * exist. Two page directories (PDPTEs 0 and 1), the second first in a
 * frame never written; three page tables, the third first never written;
 * every page's PTE rewritten now and then (present or not, A, D, R/W,
 * U/S, XD); a 2 MiB page. */
START_TEST(test_frame_hints_match_unhinted)
{
    PhysMem *pm = physmem_new();
    const uint64_t e[4] = { 0x2001, 0x3001, 0, 0 };
    pdpt_write(pm, 0x1000, e);
    PaeRegs regs = { .wp = true, .nxe = true };
    ck_assert(pae_load_cr3(&regs, pm, 0x1000, NULL));
    for (unsigned t = 0; t < 3; t++)
        physmem_write64(pm, 0x2000 + 8 * t, (0x10000 + 0x1000 * t) | E_P | E_RW | E_US | E_A);
    physmem_write64(pm, 0x2000 + 8 * 3, 0x40000000 | E_P | E_RW | E_US | E_A | E_D | E_PS);
    uint64_t seed = 11;
    for (unsigned i = 0; i < 2 * 512; i++)       /* tables 0 and 1 */
        physmem_write64(pm, 0x10000 + 8 * i, (0x100000 + 0x1000ull * i) | E_P | E_A | E_US);
    PaeHints hints = { { PAE_NO_HINT, NULL }, { PAE_NO_HINT, NULL } };
    unsigned agree = 0;
    for (int step = 0; step < 20000; step++) {
        uint64_t x = hint_rnd(&seed);
        if (step == 5000) {
            /* PD 1 and table 2 come to exist, right after walks that
             * found them absent: the next walks through them must see
             * them (a hint may not remember an absent frame). */
            PaeFast w;
            ck_assert(!pae_walk_fast(&regs, pm, &hints, pae_fast_masks_for(&regs, 0), 2u << 21, ACCESS_READ, 0, &w));
            ck_assert(!pae_walk_fast(&regs, pm, &hints, pae_fast_masks_for(&regs, 0), 1u << 30, ACCESS_READ, 0, &w));
            physmem_write64(pm, 0x3000, 0x12000 | E_P | E_RW | E_US | E_A);
            for (unsigned i = 0; i < 512; i++)
                physmem_write64(pm, 0x12000 + 8 * i, (0x300000 + 0x1000ull * i) | E_P | E_A);
            ck_assert(pae_walk_fast(&regs, pm, &hints, pae_fast_masks_for(&regs, 0), 1u << 30, ACCESS_READ, 0, &w));
            ck_assert(pae_walk_fast(&regs, pm, &hints, pae_fast_masks_for(&regs, 0), 2u << 21, ACCESS_READ, 0, &w));
        }
        if (x % 7 == 0) {                         /* an entry changes */
            unsigned i = (unsigned)((x >> 8) % (3 * 512));
            uint64_t y = hint_rnd(&seed);
            uint64_t pte = (0x100000 + 0x1000ull * i) | (y & (E_P | E_RW | E_US | E_A | E_D));
            if ((y >> 20) % 4 == 0)
                pte |= E_XD;
            physmem_write64(pm, 0x10000 + 8 * i, pte);
            continue;
        }
        uint32_t pdpt = (uint32_t)((x >> 8) % 2), pde = (uint32_t)((x >> 12) % 4);
        uint32_t lin = pdpt << 30 | pde << 21 | (uint32_t)((x >> 16) & 0x1FFFFF);
        Access acc = (Access)((x >> 40) % 3);
        int cpl = (x >> 44) % 2 ? 3 : 0;
        PaeFast a, b;
        memset(&a, 0xAB, sizeof a);
        memset(&b, 0xAB, sizeof b);
        bool oa = pae_walk_fast(&regs, pm, &hints, pae_fast_masks_for(&regs, cpl), lin, acc, cpl, &a);
        bool ob = pae_walk_fast(&regs, pm, NULL, NULL, lin, acc, cpl, &b);
        ck_assert_int_eq(oa, ob);
        ck_assert(memcmp(&a, &b, sizeof a) == 0);
        agree += oa;
    }
    ck_assert_uint_gt(agree, 3000);
    /* A hint is only ever a frame that exists. */
    ck_assert(hints.pt.host == physmem_frame_peek(pm, hints.pt.base));
    ck_assert(hints.pd.base & PAE_P);            /* keyed by a present PDPTE */
    ck_assert(hints.pd.host == physmem_frame_peek(pm, hints.pd.base & PAE_ADDR_4K));
    physmem_free(pm);
}
END_TEST

START_TEST(test_describe_entry)
{
    char buf[128];
    pae_describe_entry(PAE_LEVEL_PTE, 0x8000000123456fe7ULL, buf, sizeof buf);
    /* PTE bit 7 is PAT, not PS. */
    ck_assert_msg(strstr(buf, "PAT") && !strstr(buf, "PS") && strstr(buf, "XD") &&
                  strstr(buf, "G") && strstr(buf, "123456000"), "%s", buf);
    pae_describe_entry(PAE_LEVEL_PDE, 0x00000000002001e3ULL, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "PS") && strstr(buf, "200000"), "%s", buf);
    pae_describe_entry(PAE_LEVEL_PDPTE, 0x0000000000c0b019ULL, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "PWT") && strstr(buf, "PCD") && strstr(buf, "c0b000"), "%s", buf);
    /* A tiny buffer is truncated, not overrun. */
    char small[6];
    pae_describe_entry(PAE_LEVEL_PTE, 0x8000000123456fe7ULL, small, sizeof small);
    ck_assert_uint_lt(strlen(small), sizeof small);
}
END_TEST

static Suite *pae_suite(void)
{
    Suite *s = suite_create("pae");
    TCase *tc = tcase_create("matrix");
    tcase_add_loop_test(tc, test_permission_matrix, 0, 48);
    tcase_add_test(tc, test_check_rights_exhaustive);
    suite_add_tcase(s, tc);
    tc = tcase_create("reserved");
    tcase_add_test(tc, test_rsvd_high_bits_each_level);
    tcase_add_test(tc, test_rsvd_bit63_only_without_nxe);
    tcase_add_test(tc, test_rsvd_2m_pde_bits_20_13);
    tcase_add_test(tc, test_not_reserved_bits);
    tcase_add_test(tc, test_rsvd_not_checked_when_not_present);
    tcase_add_test(tc, test_rsvd_priority);
    suite_add_tcase(s, tc);
    tc = tcase_create("pdpte");
    tcase_add_test(tc, test_pdpte_reserved_gp);
    tcase_add_test(tc, test_pdpte_not_present_ignores_other_bits);
    tcase_add_test(tc, test_pdpte_register_semantics);
    tcase_add_test(tc, test_cr3_low_bits_ignored);
    suite_add_tcase(s, tc);
    tc = tcase_create("refs");
    tcase_add_test(tc, test_refs_ad_writes_only_when_bits_change);
    tcase_add_test(tc, test_refs_2m);
    tcase_add_test(tc, test_cr2_is_the_linear_address);
    tcase_add_test(tc, test_id_bit_only_with_nxe);
    tcase_add_test(tc, test_unwritten_table_frames);
    tcase_add_test(tc, test_frame_hints_match_unhinted);
    tcase_add_test(tc, test_describe_entry);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(pae_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
