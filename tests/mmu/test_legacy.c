/* Tests of the walker in 32-bit paging (CR4.PAE = 0; src/mmu/pae.c with
 * legacy_rules) against the Intel SDM.
 *
 * The expectations come from an oracle written in this file from the
 * prose of Intel SDM Vol. 3A §4.3 (32-bit paging, Tables 4-4 to 4-6),
 * §4.6 (access rights), §4.7 (page-fault error code) and §4.8 (accessed
 * and dirty flags), quoted beside the code. The oracle never calls the
 * implementation and uses its own bit masks, not pae.h's (so a wrong
 * constant in pae.h cannot make both sides agree). It is the PAE suite's
 * (test_pae.c) counterpart: the same permission matrix over PDE x PTE
 * rights x CPL x access x CR0.WP (x EFER.NXE, which must change nothing
 * here), 4 MiB pages, PSE off, reserved bits, error codes, A/D updates and
 * memory references, the fast walk checked by the same oracle. */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "mmu/pae.h"
#include "mmu/pae_priv.h"
#include "mmu/physmem.h"

/* ---- the oracle's own constants, from SDM Vol. 3A Tables 4-4..4-6 ---- */

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
#define E_AVL BITS(11, 9)        /* "Ignored" */

#define EC_P 0x01u
#define EC_W 0x02u
#define EC_U 0x04u
#define EC_RSVD 0x08u
#define EC_ID 0x10u

/* Table 4-4: a 4 MiB PDE. "Bits (M-1):32 of physical address of the
 * 4-MByte page" in bits (M-20):13, "Reserved (must be 0)" in bits
 * 21:(M-19); with MAXPHYADDR M = 36: address 35:32 in PDE 16:13, bits
 * 21:17 reserved. "Bits 31:22 of physical address" in PDE 31:22. Tables
 * 4-5 and 4-6 (a PDE that references a page table, a PTE) have no
 * reserved bit. */
#define SDM_RSVD_4M BITS(21, 17)
#define SDM_4M_ADDR_LOW BITS(31, 22)
#define SDM_4M_ADDR_HIGH BITS(16, 13)

/* Same rule as the PAE suite (see test_pae.c, issue 2): a protection
 * fault of a 4 KiB walk sets the PDE's A bit (SDM §6.15 footnote). */
#define SDM_PF_PROTECTION_SETS_PDE_A 1

/* ---- one walk case and what the SDM says about it ---- */

typedef enum {
    LEAF_4K,                     /* PDE -> page table -> 4 KiB page */
    LEAF_4M,                     /* CR4.PSE = 1, PDE.PS = 1: a 4 MiB page */
    LEAF_PS_NO_PSE,              /* CR4.PSE = 0, PDE.PS = 1: PS ignored, a table */
} Leaf;

typedef struct {
    Leaf leaf;
    uint32_t pde, pte;           /* entry values in memory (pte unused for 4M) */
    Access access;
    int cpl;
    bool wp, nxe, pse;
    uint32_t lin;
} Case;

typedef struct {
    bool fault;
    uint32_t ec;
    int nlevels;                 /* 1 PDE, 2 + PTE */
    uint32_t pde_after, pte_after;
    bool rw, us;
    uint64_t frame;
    uint32_t size;
} Expect;

static bool is_large(const Case *c) { return c->leaf == LEAF_4M; }

/* §4.6, for 32-bit paging (CR4.SMEP/SMAP are 0: no such bits in 2003). */
static bool sdm_allowed(bool all_rw, bool all_us, Access access, int cpl, bool wp)
{
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
             * fetched from any linear address with a valid translation." */
            return true;
        }
    }
    switch (access) {
    case ACCESS_READ:
        /* "Data may be read from any linear address with a valid translation
         * for which the U/S flag (bit 2) is 1 in every paging-structure entry
         * controlling the translation." */
        return all_us;
    case ACCESS_WRITE:
        /* "... for which both the R/W flag and the U/S flag are 1 in every
         * paging-structure entry controlling the translation." */
        return all_us && all_rw;
    case ACCESS_EXEC:
        /* "For 32-bit paging or if IA32_EFER.NXE = 0, instructions may be
         * fetched from any linear address with a valid translation for which
         * the U/S flag is 1 in every paging-structure entry controlling the
         * translation." */
        return all_us;
    }
    return false;
}

/* §4.7: W/R and U/S describe the access; "I/D flag (bit 4). This flag is
 * 1 if (1) the access causing the page-fault exception was an instruction
 * fetch; and (2) either (a) CR4.SMEP = 1; or (b) both (i) CR4.PAE = 1
 * (either PAE paging or IA-32e paging is in use); and (ii) IA32_EFER.NXE
 * = 1. Otherwise, the flag is 0." CR4.PAE = 0 here: never. */
static uint32_t sdm_access_bits(Access access, int cpl)
{
    return (access == ACCESS_WRITE ? EC_W : 0) | (cpl == 3 ? EC_U : 0);
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
    uint32_t acc = sdm_access_bits(c->access, c->cpl);
    /* §4.3: "If CR4.PSE = 1 and the PDE's PS flag is 1, the PDE maps a
     * 4-MByte page"; "If CR4.PSE = 0 or the PDE's PS flag is 0, a 4-KByte
     * naturally aligned page table is located at the physical address
     * specified in bits 31:12 of the PDE." */
    bool large = c->pse && (c->pde & E_PS);
    ck_assert(large == is_large(c));           /* the case is built consistently */
    if (!(c->pde & E_P))
        return sdm_fault(e, acc);
    if (large && (c->pde & SDM_RSVD_4M))
        return sdm_fault(e, acc | EC_P | EC_RSVD);
    if (!large) {
        e.nlevels = 2;
        if (!(c->pte & E_P))
            return sdm_fault(e, acc);
    }
    e.rw = (c->pde & E_RW) && (large || (c->pte & E_RW));
    e.us = (c->pde & E_US) && (large || (c->pte & E_US));
    if (!sdm_allowed(e.rw, e.us, c->access, c->cpl, c->wp)) {
        if (SDM_PF_PROTECTION_SETS_PDE_A && !large)
            e.pde_after |= E_A;
        return sdm_fault(e, acc | EC_P);
    }
    /* §4.8: A in every entry used; D in the leaf on a write. */
    bool write = c->access == ACCESS_WRITE;
    e.pde_after |= E_A;
    if (large) {
        e.pde_after |= write ? E_D : 0;
        /* "Bits 39:32 [here 35:32] ... from the PDE (bits 16:13)"; "Bits
         * 31:22 are from the PDE"; "Bits 21:0 are from the original linear
         * address." */
        e.frame = (c->pde & SDM_4M_ADDR_LOW) | ((uint64_t)((c->pde & SDM_4M_ADDR_HIGH) >> 13) << 32);
        e.size = 0x400000u;
    } else {
        e.pte_after |= E_A | (write ? E_D : 0);
        e.frame = c->pte & 0xFFFFF000u;
        e.size = 0x1000u;
    }
    return e;
}

/* ---- the machine each case runs on ---- */

/* CR3's PWT and PCD set: Table 4-3, "Ignored" for the directory's place. */
#define CR3 (0x00003000u | 0x18u)
#define PD_BASE 0x00003000u
#define PT_BASE 0x7ffff000u
#define FRAME_4K 0x87654000u
#define FRAME_4M 0x87400000u

static uint32_t pde_addr(uint32_t lin) { return PD_BASE + 4 * (lin >> 22); }
static uint32_t pte_addr(uint32_t lin) { return PT_BASE + 4 * ((lin >> 12) & 1023); }

/* Flags nibble: bit 0 P, bit 1 R/W, bit 2 U/S, bit 3 one of the "Ignored"
 * bits 11:9 (no XD in 32-bit paging: a change to it must show nothing). */
static uint32_t flags_of(unsigned nib)
{
    return (nib & 1 ? E_P : 0) | (nib & 2 ? E_RW : 0) | (nib & 4 ? E_US : 0) |
           (nib & 8 ? BIT(10) : 0);
}

/* Sentinels beside every entry the walk may touch: a 4-byte A/D write
 * must leave them alone. */
#define SENTINEL 0x5A5A5A5Au

static void machine_build(PhysMem *pm, const Case *c)
{
    physmem_write32(pm, pde_addr(c->lin), c->pde);
    if (!is_large(c))
        physmem_write32(pm, pte_addr(c->lin), c->pte);
}

static void sentinels(PhysMem *pm, uint32_t entry, bool write)
{
    uint32_t page = entry & ~0xFFFu, off = entry & 0xFFFu;
    if (off >= 4 && write)
        physmem_write32(pm, page + off - 4, SENTINEL);
    if (off + 4 < 0x1000 && write)
        physmem_write32(pm, page + off + 4, SENTINEL);
    if (!write) {
        if (off >= 4)
            ck_assert_uint_eq(physmem_read32(pm, page + off - 4), SENTINEL);
        if (off + 4 < 0x1000)
            ck_assert_uint_eq(physmem_read32(pm, page + off + 4), SENTINEL);
    }
}

static char *case_describe(const Case *c)
{
    static const char *const acc[] = { "read", "write", "exec" };
    static const char *const leaf[] = { "4K", "4M", "PS-without-PSE" };
    return g_strdup_printf("[%s lin=0x%08x PDE=0x%08x PTE=0x%08x %s CPL%d WP=%d NXE=%d PSE=%d]",
                           leaf[c->leaf], c->lin, c->pde, c->pte, acc[c->access], c->cpl,
                           c->wp, c->nxe, c->pse);
}

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            ck_abort_msg(__VA_ARGS__);                                        \
    } while (0)

static void case_check_levels(const PaeWalk *w, const Case *c, const Expect *e,
                              const char *what)
{
    CHECK(w->nlevels == e->nlevels, "%s: %d levels, expected %d", what, w->nlevels,
          e->nlevels);
    CHECK(w->levels[0].level == PAE_LEVEL_PDE && !w->levels[0].from_register &&
              w->levels[0].paddr == pde_addr(c->lin) && w->levels[0].before == c->pde &&
              w->levels[0].after == e->pde_after, "%s: PDE level", what);
    if (e->nlevels == 2)
        CHECK(w->levels[1].level == PAE_LEVEL_PTE && w->levels[1].paddr == pte_addr(c->lin) &&
                  w->levels[1].before == c->pte && w->levels[1].after == e->pte_after,
              "%s: PTE level", what);
}

/* Memory references: one read per entry, in walk order (no PDPTE level,
 * no register), then one locked write per entry whose A/D bits the walk
 * changed. */
static void case_check_refs(const PaeWalk *w, const Case *c, const Expect *e, const char *what)
{
    int nreads = e->nlevels;
    bool pde_w = e->pde_after != c->pde, pte_w = !is_large(c) && e->pte_after != c->pte;
    CHECK(w->nrefs == nreads + pde_w + pte_w, "%s: %d refs, expected %d", what, w->nrefs,
          nreads + pde_w + pte_w);
    CHECK(w->refs[0].paddr == pde_addr(c->lin) && !w->refs[0].write, "%s: ref 0", what);
    if (nreads >= 2)
        CHECK(w->refs[1].paddr == pte_addr(c->lin) && !w->refs[1].write, "%s: ref 1", what);
    bool seen_pde_w = false, seen_pte_w = false;
    for (int i = nreads; i < w->nrefs; i++) {
        CHECK(w->refs[i].write, "%s: ref %d should be an A/D write", what, i);
        seen_pde_w |= w->refs[i].paddr == pde_addr(c->lin);
        seen_pte_w |= !is_large(c) && w->refs[i].paddr == pte_addr(c->lin);
    }
    CHECK(seen_pde_w == pde_w && seen_pte_w == pte_w, "%s: A/D write refs", what);
}

static PaeRegs regs_of(const Case *c)
{
    return (PaeRegs){ .cr3 = CR3, .wp = c->wp, .nxe = c->nxe, .mode = PAGING_LEGACY,
                      .pse = c->pse };
}

/* The MMU's order: the fast walk (pae_priv.h) first, the walk when it
 * declines; the fast walk's PaeFast turned into what the walk reports. */
static bool walk_lean(const PaeRegs *regs, PhysMem *pm, uint32_t lin, Access access, int cpl,
                      PaeWalk *out)
{
    PaeFast f;
    if (!pae_walk_fast(regs, pm, NULL, NULL, lin, access, cpl, &f))
        return pae_walk(regs, pm, lin, access, cpl, out);
    uint32_t size = f.large ? 0x400000u : 0x1000u;
    out->fault = false;
    out->nrefs = f.large ? 1 : 2;
    out->refs[0] = (PaeRef){ .paddr = f.pde_pa, .write = false };
    out->refs[1] = (PaeRef){ .paddr = f.pte_pa, .write = false };
    out->pde = f.pde;
    out->pde_pa = f.pde_pa;
    out->frame = f.frame;
    out->page_size = size;
    out->paddr = f.frame | (lin & (size - 1));
    out->rw = (f.all & E_RW) != 0;
    out->us = (f.all & E_US) != 0;
    out->nx = false;
    out->global = (f.leaf & E_G) != 0;
    out->dirty = (f.leaf & E_D) != 0;
    return true;
}

static void case_walk_check(PhysMem *pm, const Case *c, bool lean)
{
    Expect e = sdm_expect(c);
    g_autofree char *desc = case_describe(c);
    g_autofree char *what = g_strconcat(lean ? "lean " : "", desc, NULL);
    machine_build(pm, c);
    sentinels(pm, pde_addr(c->lin), true);
    if (!is_large(c))
        sentinels(pm, pte_addr(c->lin), true);
    machine_build(pm, c);        /* the sentinels may have hit the other entry */
    size_t frames = physmem_frames_used(pm);
    PaeRegs regs = regs_of(c);

    PaeWalk w;
    memset(&w, 0xa5, sizeof w);
    bool ok = lean ? walk_lean(&regs, pm, c->lin, c->access, c->cpl, &w)
                   : pae_walk(&regs, pm, c->lin, c->access, c->cpl, &w);

    CHECK(ok == !e.fault && w.fault == e.fault, "%s: fault=%d, SDM says %d", what, w.fault,
          e.fault);
    if (e.fault) {
        CHECK(w.vector == 14, "%s: vector %u", what, w.vector);
        CHECK(w.error_code == e.ec, "%s: error code 0x%x, SDM says 0x%x", what, w.error_code,
              e.ec);
        CHECK(w.cr2 == c->lin, "%s: CR2 0x%x", what, w.cr2);
    } else {
        CHECK(w.paddr == (e.frame | (c->lin & (e.size - 1))), "%s: paddr 0x%llx", what,
              (unsigned long long)w.paddr);
        CHECK(w.frame == e.frame && w.page_size == e.size, "%s: frame/size", what);
        CHECK(w.rw == e.rw && w.us == e.us && !w.nx, "%s: rights rw=%d us=%d nx=%d", what,
              w.rw, w.us, w.nx);
        uint32_t leaf = is_large(c) ? e.pde_after : e.pte_after;
        CHECK(w.dirty == ((leaf & E_D) != 0) && w.global == ((leaf & E_G) != 0),
              "%s: dirty/global", what);
        CHECK(w.pde == e.pde_after && w.pde_pa == pde_addr(c->lin), "%s: pde 0x%llx", what,
              (unsigned long long)w.pde);
    }
    uint32_t pde_now = physmem_read32(pm, pde_addr(c->lin));
    CHECK(pde_now == e.pde_after, "%s: PDE after 0x%08x, SDM says 0x%08x", what, pde_now,
          e.pde_after);
    if (!is_large(c)) {
        uint32_t pte_now = physmem_read32(pm, pte_addr(c->lin));
        CHECK(pte_now == e.pte_after, "%s: PTE after 0x%08x, SDM says 0x%08x", what, pte_now,
              e.pte_after);
    }
    /* The neighbours of each entry: 4-byte entries, 4-byte writes. */
    if ((pde_addr(c->lin) & ~0xFFFu) != (pte_addr(c->lin) & ~0xFFFu)) {
        sentinels(pm, pde_addr(c->lin), false);
        if (!is_large(c))
            sentinels(pm, pte_addr(c->lin), false);
    }
    CHECK(physmem_frames_used(pm) == frames, "%s: the walk allocated memory", what);
    if (!lean)
        case_check_levels(&w, c, &e, what);
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

static const uint32_t matrix_ad[] = { 0, E_A, E_A | E_D };

/* Iteration i (0..71) fixes the leaf (4 KiB, 4 MiB, PS without PSE),
 * access, user or supervisor, CR0.WP and EFER.NXE; the loop covers P, R/W,
 * U/S and an ignored bit of each level, the A/D bits the entries start
 * with, and CPL 0, 1 and 2 for supervisor accesses. PWT, PCD and G are set
 * so that a change to them would show. */
START_TEST(test_permission_matrix)
{
    Case c = { .leaf = (Leaf)(_i % 3), .access = (Access)((_i / 3) % 3) };
    int rest = _i / 9;
    bool user = rest & 1;
    c.wp = (rest >> 1) & 1;
    c.nxe = (rest >> 2) & 1;
    c.pse = c.leaf == LEAF_4M;
    unsigned npte = c.leaf == LEAF_4M ? 1 : 16;
    PhysMem *pm = physmem_new();
    for (unsigned ad = 0; ad < G_N_ELEMENTS(matrix_ad); ad++)
        for (unsigned pde = 0; pde < 16; pde++)
            for (unsigned pte = 0; pte < npte; pte++) {
                c.cpl = user ? 3 : (int)((pde + pte + ad) % 3);
                c.lin = matrix_lins[(pde * 16 + pte + ad) % G_N_ELEMENTS(matrix_lins)];
                switch (c.leaf) {
                case LEAF_4M:
                    c.pde = FRAME_4M | E_PS | E_G | E_PCD | flags_of(pde) | matrix_ad[ad];
                    c.pte = 0;
                    break;
                case LEAF_PS_NO_PSE:
                    /* PS set and CR4.PSE = 0: bits 31:12 name the table. */
                    c.pde = PT_BASE | E_PS | E_PWT | flags_of(pde) | matrix_ad[ad];
                    c.pte = FRAME_4K | E_G | E_PCD | E_PWT | flags_of(pte) | matrix_ad[ad];
                    break;
                default:
                    c.pde = PT_BASE | E_PWT | flags_of(pde) | matrix_ad[ad];
                    c.pte = FRAME_4K | E_G | E_PCD | E_PWT | flags_of(pte) | matrix_ad[ad];
                    break;
                }
                case_check_on(pm, &c);
            }
    physmem_free(pm);
}
END_TEST

/* The rights rule with no XD (nx = false, as the walk passes it in 32-bit
 * paging) on every combination, against the oracle. */
START_TEST(test_check_rights_exhaustive)
{
    for (unsigned m = 0; m < 32; m++) {
        bool rw = m & 1, us = m & 2, wp = m & 4, nxe = m & 8;
        int cpl = m & 16 ? 3 : 0;
        for (int a = ACCESS_READ; a <= ACCESS_EXEC; a++) {
            bool ok = sdm_allowed(rw, us, (Access)a, cpl, wp);
            /* The walk passes nxe && rules.xd = false in 32-bit paging. */
            bool eff_nxe = nxe && legacy_rules.xd;
            uint32_t want = ok ? 0 : EC_P | sdm_access_bits((Access)a, cpl);
            uint32_t got = pae_check_rights(rw, us, false, (Access)a, cpl, wp, eff_nxe);
            ck_assert_msg(got == want, "rw=%d us=%d access=%d cpl=%d wp=%d nxe=%d: 0x%x, SDM "
                          "says 0x%x", rw, us, a, cpl, wp, nxe, got, want);
        }
    }
}
END_TEST

/* ---- reserved bits (Tables 4-4 to 4-6) ---- */

static void bit_case(Leaf leaf, bool in_pte, int bit, bool nxe, Access acc, int cpl)
{
    Case c = { .leaf = leaf, .access = acc, .cpl = cpl, .wp = true, .nxe = nxe,
               .pse = leaf == LEAF_4M, .lin = 0x0804a123 };
    uint32_t rights = E_P | E_RW | E_US | E_A | E_D;
    c.pde = leaf == LEAF_4M ? FRAME_4M | E_PS | rights
                            : PT_BASE | (leaf == LEAF_PS_NO_PSE ? E_PS : 0) | rights;
    c.pte = leaf == LEAF_4M ? 0 : FRAME_4K | rights;
    if (in_pte)
        c.pte |= (uint32_t)BIT(bit);
    else
        c.pde |= (uint32_t)BIT(bit);
    case_check(&c);
}

START_TEST(test_rsvd_4m_pde_bits_21_17)
{
    for (int bit = 17; bit <= 21; bit++)
        for (int a = 0; a < 3; a++) {
            bit_case(LEAF_4M, false, bit, a == 2, (Access)a, a == 1 ? 3 : 0);
            Case c = { .leaf = LEAF_4M, .pse = true, .access = (Access)a, .cpl = 3,
                       .pde = FRAME_4M | E_PS | E_P | (uint32_t)BIT(bit) };
            ck_assert_uint_eq(sdm_expect(&c).ec & (EC_P | EC_RSVD), EC_P | EC_RSVD);
        }
    /* Hand-worked: bit 21 set, user write: P|W|U|RSVD = 0xf. */
    PhysMem *pm = physmem_new();
    physmem_write32(pm, 0x3000 + 4 * 2, 0x00800000u | BIT(21) | 0x87);
    PaeRegs regs = { .cr3 = 0x3000, .mode = PAGING_LEGACY, .pse = true };
    PaeWalk w;
    ck_assert(!pae_walk(&regs, pm, 0x00812345, ACCESS_WRITE, 3, &w));
    ck_assert_uint_eq(w.error_code, 0xf);
    physmem_free(pm);
}
END_TEST

START_TEST(test_no_reserved_bits_4k)
{
    /* Tables 4-5 and 4-6: every bit of a PDE that references a page table
     * and of a PTE is an address bit, a flag or ignored: none faults. */
    for (int bit = 1; bit < 32; bit++) {
        /* A PDE's bits 31:12 would move its table away from the PTE the
         * case writes: the PTE's cover address bits (the frame moves). */
        if (bit != 7 && bit < 12) {  /* PDE.PS: a 4 MiB page with PSE (tests below) */
            bit_case(LEAF_4K, false, bit, false, ACCESS_WRITE, 3);
            bit_case(LEAF_PS_NO_PSE, false, bit, true, ACCESS_EXEC, 3);
        }
        bit_case(LEAF_4K, true, bit, true, ACCESS_READ, 0);
        bit_case(LEAF_PS_NO_PSE, true, bit, false, ACCESS_WRITE, 3);
    }
    bit_case(LEAF_4K, true, 7, false, ACCESS_READ, 3);   /* PAT in a PTE */
}
END_TEST

START_TEST(test_4m_pde_not_reserved_bits)
{
    /* 12 (PAT), 16:13 (address bits 35:32), 11:9 ignored, PWT, PCD, G. */
    int ok_bits[] = { 3, 4, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    for (size_t i = 0; i < G_N_ELEMENTS(ok_bits); i++)
        for (int a = 0; a < 3; a++)
            bit_case(LEAF_4M, false, ok_bits[i], false, (Access)a, 3);
}
END_TEST

START_TEST(test_pse36_address_bits)
{
    /* Every value of PDE bits 16:13: the page at (value << 32) | 31:22. */
    PhysMem *pm = physmem_new();
    PaeRegs regs = { .cr3 = 0x3000, .mode = PAGING_LEGACY, .pse = true };
    for (uint32_t hi = 0; hi < 16; hi++) {
        physmem_write32(pm, 0x3000 + 4 * 0x3ff, 0xFFC00000u | hi << 13 | 0xE7);
        PaeWalk w;
        ck_assert(pae_walk(&regs, pm, 0xFFFABCDEu, ACCESS_READ, 0, &w));
        ck_assert_uint_eq(w.paddr, (uint64_t)hi << 32 | 0xFFFABCDEu);
        ck_assert_uint_eq(w.page_size, 0x400000u);
        PaeFast f;
        ck_assert(pae_walk_fast(&regs, pm, NULL, NULL, 0xFFFABCDEu, ACCESS_READ, 0, &f));
        ck_assert_uint_eq(f.frame, (uint64_t)hi << 32 | 0xFFC00000u);
    }
    physmem_free(pm);
}
END_TEST

START_TEST(test_rsvd_not_checked_when_not_present)
{
    for (int a = 0; a < 3; a++) {
        Case c = { .leaf = LEAF_4M, .pse = true, .access = (Access)a, .cpl = 3,
                   .lin = 0xbffff123, .pde = (uint32_t)~E_P };   /* PS and bits 21:17 set */
        Expect e = sdm_expect(&c);
        ck_assert(e.fault && !(e.ec & (EC_P | EC_RSVD)));
        case_check(&c);
    }
}
END_TEST

START_TEST(test_rsvd_priority)
{
    /* A reserved bit of a 4 MiB PDE wins over a U/S violation: no
     * translation, so no access-rights check. */
    Case c = { .leaf = LEAF_4M, .pse = true, .access = ACCESS_READ, .cpl = 3,
               .lin = 0x0804a123, .pde = FRAME_4M | E_PS | E_P | E_RW | (uint32_t)BIT(18) };
    ck_assert_uint_eq(sdm_expect(&c).ec, EC_P | EC_RSVD | EC_U);
    case_check(&c);
    /* A not-present PTE wins over a U/S violation in the PDE. */
    c = (Case){ .leaf = LEAF_4K, .access = ACCESS_WRITE, .cpl = 3, .lin = 0x0804a123,
                .pde = PT_BASE | E_P | E_RW, .pte = FRAME_4K | E_RW | E_US };
    ck_assert_uint_eq(sdm_expect(&c).ec, EC_W | EC_U);
    case_check(&c);
}
END_TEST

/* ---- CR3, no PDPTEs, PSE (§4.3) ---- */

START_TEST(test_cr3_names_the_directory)
{
    /* CR3[31:12] is the directory; bits 11:0 (PWT, PCD, ignored) do not
     * move it. Each low bit set in turn. */
    PhysMem *pm = physmem_new();
    physmem_write32(pm, 0x5000 + 4 * 1, 0x6000 | 0x67);
    physmem_write32(pm, 0x6000 + 4 * 2, 0x9000 | 0x67);
    for (int bit = -1; bit < 12; bit++) {
        PaeRegs regs = { .cr3 = 0x5000u | (bit >= 0 ? 1u << bit : 0), .mode = PAGING_LEGACY };
        PaeWalk w;
        ck_assert(pae_walk(&regs, pm, 0x00402abc, ACCESS_READ, 3, &w));
        ck_assert_uint_eq(w.paddr, 0x9abc);
        ck_assert_int_eq(w.nlevels, 2);
        ck_assert_uint_eq(w.levels[0].paddr, 0x5004);
        ck_assert(!w.levels[0].from_register);
    }
    physmem_free(pm);
}
END_TEST

START_TEST(test_pdpte_registers_unused)
{
    /* Whatever the PDPTE registers hold, a 32-bit walk reads the
     * directory at CR3: garbage in them changes nothing. */
    PhysMem *pm = physmem_new();
    physmem_write32(pm, 0x5000, 0x6000 | 0x27);
    physmem_write32(pm, 0x6000, 0x7000 | 0x27);
    PaeRegs regs = { .cr3 = 0x5000, .mode = PAGING_LEGACY,
                     .pdpte = { 0, ~0ULL, 0x1234567, 0xFFFFFFFF00000001ULL } };
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x123, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x7123);
    ck_assert_int_eq(w.nrefs, 2);
    physmem_free(pm);
}
END_TEST

START_TEST(test_pse_selects_ps)
{
    /* One PDE with PS set: with PSE a 4 MiB page at its bits 31:22; without
     * PSE a table at its bits 31:12 (§4.3). */
    PhysMem *pm = physmem_new();
    physmem_write32(pm, 0x5000 + 4 * 4, 0x00C0A000u | 0xA7);   /* PS|A|US|RW|P */
    physmem_write32(pm, 0x00C0A000u + 4 * 0x12, 0x00ABC000u | 0x27);
    PaeRegs regs = { .cr3 = 0x5000, .mode = PAGING_LEGACY, .pse = true };
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x01012345, ACCESS_READ, 3, &w));
    /* Bits 16:13 of 0xA000 are 0x5: address bits 35:32 (PSE-36). */
    ck_assert_uint_eq(w.paddr, 0x500C00000ULL | 0x012345);
    regs.pse = false;
    ck_assert(pae_walk(&regs, pm, 0x01012345, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x00ABC345u);
    ck_assert_uint_eq(w.page_size, 0x1000u);
    physmem_free(pm);
}
END_TEST

/* ---- A/D updates and memory references (§4.8) ---- */

START_TEST(test_refs_ad_writes_only_when_bits_change)
{
    for (int a = 0; a < 3; a++)
        for (unsigned ad = 0; ad < 3; ad++) {
            Case c = { .leaf = LEAF_4K, .access = (Access)a, .cpl = 3, .wp = true,
                       .lin = 0x40201ffc };
            c.pde = PT_BASE | E_P | E_RW | E_US | matrix_ad[ad];
            c.pte = FRAME_4K | E_P | E_RW | E_US | matrix_ad[(ad + 1) % 3];
            case_check(&c);
            c.leaf = LEAF_4M;
            c.pse = true;
            c.pde = FRAME_4M | E_PS | E_P | E_RW | E_US | matrix_ad[ad];
            c.pte = 0;
            case_check(&c);
        }
}
END_TEST

START_TEST(test_ad_write_is_four_bytes)
{
    /* Hand-worked: PDE 0 and PTE 0 in the first 4 bytes of their tables,
     * PDE 1 and PTE 1 right after; a write sets A in PDE 0 and A|D in PTE 0
     * and leaves the neighbours as they were. */
    PhysMem *pm = physmem_new();
    physmem_write32(pm, 0x5000, 0x6007);
    physmem_write32(pm, 0x5004, 0xFFFFFFFEu);
    physmem_write32(pm, 0x6000, 0x7007);
    physmem_write32(pm, 0x6004, 0xFFFFFFFEu);
    PaeRegs regs = { .cr3 = 0x5000, .mode = PAGING_LEGACY };
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x10, ACCESS_WRITE, 3, &w));
    ck_assert_uint_eq(physmem_read32(pm, 0x5000), 0x6027);
    ck_assert_uint_eq(physmem_read32(pm, 0x6000), 0x7067);
    ck_assert_uint_eq(physmem_read32(pm, 0x5004), 0xFFFFFFFEu);
    ck_assert_uint_eq(physmem_read32(pm, 0x6004), 0xFFFFFFFEu);
    ck_assert_uint_eq(physmem_read64(pm, 0x5000), 0xFFFFFFFE00006027ULL);
    physmem_free(pm);
}
END_TEST

START_TEST(test_cr2_is_the_linear_address)
{
    uint32_t lins[] = { 0, 0xfff, 0x00400000, 0xdeadbeef, 0xffffffff };
    for (size_t i = 0; i < G_N_ELEMENTS(lins); i++) {
        Case c = { .leaf = LEAF_4K, .access = ACCESS_READ, .cpl = 3, .lin = lins[i],
                   .pde = PT_BASE | E_P | E_RW | E_US, .pte = FRAME_4K };
        case_check(&c);
    }
}
END_TEST

START_TEST(test_id_bit_never)
{
    /* §4.7: I/D needs CR4.PAE = 1 (or SMEP): never in 32-bit paging, not
     * even with EFER.NXE = 1. A fetch at CPL 3 from a not-present page
     * and from a supervisor page. */
    PhysMem *pm = physmem_new();
    physmem_write32(pm, 0x5000, 0x6003);                  /* supervisor PDE */
    physmem_write32(pm, 0x6000, 0x7007);
    PaeRegs regs = { .cr3 = 0x5000, .mode = PAGING_LEGACY, .nxe = true };
    PaeWalk w;
    ck_assert(!pae_walk(&regs, pm, 0x00400000, ACCESS_EXEC, 3, &w));
    ck_assert_uint_eq(w.error_code, EC_U);
    ck_assert(!pae_walk(&regs, pm, 0x00000000, ACCESS_EXEC, 3, &w));
    ck_assert_uint_eq(w.error_code, EC_P | EC_U);
    /* Bit 31 of an entry is an address bit, not XD: a fetch from a frame
     * above 2 GiB works. */
    physmem_write32(pm, 0x5000, 0x6007);
    physmem_write32(pm, 0x6000, 0x80007007u);
    ck_assert(pae_walk(&regs, pm, 0x00000010, ACCESS_EXEC, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x80007010u);
    physmem_free(pm);
}
END_TEST

START_TEST(test_unwritten_table_frames)
{
    /* A directory or page table never written reads as zeros: not
     * present, no allocation, in both walks. */
    PhysMem *pm = physmem_new();
    PaeRegs regs = { .cr3 = 0x5000, .mode = PAGING_LEGACY };
    PaeWalk w;
    PaeFast f;
    ck_assert(!pae_walk(&regs, pm, 0x1234, ACCESS_READ, 0, &w));
    ck_assert(!pae_walk_fast(&regs, pm, NULL, NULL, 0x1234, ACCESS_READ, 0, &f));
    physmem_write32(pm, 0x5000, 0x9027);                  /* table at 0x9000: unwritten */
    ck_assert(!pae_walk(&regs, pm, 0x1234, ACCESS_READ, 0, &w));
    ck_assert_uint_eq(w.error_code, 0);
    ck_assert(!pae_walk_fast(&regs, pm, NULL, NULL, 0x1234, ACCESS_READ, 0, &f));
    ck_assert_uint_eq(physmem_frames_used(pm), 1);
    physmem_free(pm);
}
END_TEST

/* splitmix64, for the hint test's random walks. */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

START_TEST(test_frame_hints_match_unhinted)
{
    /* The fast walk with the MMU's frame hints gives what it gives without
     * them, across directories (CR3 changes), tables, 4 MiB pages and
     * CR4.PSE. */
    PhysMem *pm = physmem_new();
    for (uint32_t d = 0; d < 2; d++)
        for (uint32_t i = 0; i < 8; i++) {
            uint32_t pd = 0x10000 + d * 0x1000;
            uint32_t e = i & 1 ? (0x01000000u * (i + 1)) | 0xE7       /* 4 MiB */
                               : (0x20000 + 0x1000 * i) | 0x67;
            physmem_write32(pm, pd + 4 * i, e);
            for (uint32_t j = 0; j < 8; j++)
                physmem_write32(pm, 0x20000 + 0x1000 * i + 4 * j, (0x100000 + 0x1000 * j) | 0x67);
        }
    PaeHints h = { { PAE_NO_HINT, NULL }, { PAE_NO_HINT, NULL } };
    uint64_t s = 1;
    for (int k = 0; k < 20000; k++) {
        PaeRegs regs = { .cr3 = 0x10000 + (uint32_t)(rnd(&s) & 1) * 0x1000,
                         .mode = PAGING_LEGACY, .pse = rnd(&s) & 1, .wp = true };
        uint32_t lin = (uint32_t)(rnd(&s) % 8) << 22 | (uint32_t)(rnd(&s) % 8) << 12 |
                       (uint32_t)(rnd(&s) & 0xfff);
        Access a = (Access)(rnd(&s) % 3);
        PaeFast x, y;
        memset(&x, 0, sizeof x);
        memset(&y, 0, sizeof y);
        bool ok1 = pae_walk_fast(&regs, pm, &h, NULL, lin, a, 3, &x);
        bool ok2 = pae_walk_fast(&regs, pm, NULL, NULL, lin, a, 3, &y);
        ck_assert_int_eq(ok1, ok2);
        if (ok1)
            ck_assert(!memcmp(&x, &y, sizeof x));
    }
    physmem_free(pm);
}
END_TEST

START_TEST(test_describe_entry)
{
    char buf[160];
    /* A 4 MiB PDE with PSE-36 bits: the address includes bits 35:32. */
    paging_describe_entry(&legacy_rules, PAE_LEVEL_PDE, 0x00C06000u | 0xE7, true, buf,
                          sizeof buf);
    ck_assert_str_eq(buf, "P RW US A D PS addr=0x300c00000");
    /* The same PDE without PSE: a table at bits 31:12, PS ignored. */
    paging_describe_entry(&legacy_rules, PAE_LEVEL_PDE, 0x00C06000u | 0xE7, false, buf,
                          sizeof buf);
    ck_assert_str_eq(buf, "P RW US A D PS(ignored) addr=0x000c06000");
    paging_describe_entry(&legacy_rules, PAE_LEVEL_PTE, 0x12345000u | 0x1E3, true, buf,
                          sizeof buf);
    ck_assert_str_eq(buf, "P RW A D PAT G addr=0x012345000");
}
END_TEST

static Suite *legacy_suite(void)
{
    Suite *s = suite_create("legacy");
    TCase *tc = tcase_create("walk");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_permission_matrix, 0, 72);
    tcase_add_test(tc, test_check_rights_exhaustive);
    tcase_add_test(tc, test_rsvd_4m_pde_bits_21_17);
    tcase_add_test(tc, test_no_reserved_bits_4k);
    tcase_add_test(tc, test_4m_pde_not_reserved_bits);
    tcase_add_test(tc, test_pse36_address_bits);
    tcase_add_test(tc, test_rsvd_not_checked_when_not_present);
    tcase_add_test(tc, test_rsvd_priority);
    tcase_add_test(tc, test_cr3_names_the_directory);
    tcase_add_test(tc, test_pdpte_registers_unused);
    tcase_add_test(tc, test_pse_selects_ps);
    tcase_add_test(tc, test_refs_ad_writes_only_when_bits_change);
    tcase_add_test(tc, test_ad_write_is_four_bytes);
    tcase_add_test(tc, test_cr2_is_the_linear_address);
    tcase_add_test(tc, test_id_bit_never);
    tcase_add_test(tc, test_unwritten_table_frames);
    tcase_add_test(tc, test_frame_hints_match_unhinted);
    tcase_add_test(tc, test_describe_entry);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(legacy_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
