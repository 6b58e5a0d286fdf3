/* The memory system of one core: TLB hierarchy + PAE walker + caches.
 * See mmu.h for the model. */
#include "mmu/mmu.h"

#include <glib.h>
#include <string.h>

/* Control-register bits the MMU cares about (SDM Vol. 3A §2.5). */
#define CR0_PG (1u << 31)
#define CR0_WP (1u << 16)
#define CR4_PAE (1u << 5)
#define CR4_PGE (1u << 7)
#define CR4_PCIDE (1u << 17)
#define EFER_NXE (1ULL << 11)

struct Mmu {
    PhysMem *pm;
    PaeRegs regs;
    uint32_t cr0, cr4;
    uint64_t efer;
    MmuStats stats;
};

Mmu *mmu_new(PhysMem *pm, const Preset *preset)
{
    (void)preset;
    Mmu *m = g_new0(Mmu, 1);
    m->pm = pm;
    return m;
}

void mmu_free(Mmu *m)
{
    g_free(m);
}

PhysMem *mmu_physmem(Mmu *m) { return m->pm; }
const MmuStats *mmu_stats(const Mmu *m) { return &m->stats; }
uint32_t mmu_cr3(const Mmu *m) { return m->regs.cr3; }
uint32_t mmu_cr0(const Mmu *m) { return m->cr0; }
uint32_t mmu_cr4(const Mmu *m) { return m->cr4; }
uint64_t mmu_efer(const Mmu *m) { return m->efer; }

static inline bool paging(const Mmu *m) { return (m->cr0 & CR0_PG) != 0; }

unsigned mmu_time_phys(Mmu *m, uint64_t pa, bool write)
{
    (void)pa;
    (void)write;
    unsigned c = 1;
    m->stats.cycles += c;
    return c;
}

static void flush_all(Mmu *m) { (void)m; }
static void flush_nonglobal(Mmu *m) { (void)m; }

static bool gp0(MmuFault *f)
{
    if (f)
        *f = (MmuFault){ .vector = VEC_GP, .error_code = 0, .cr2 = 0 };
    return false;
}

/* Load the PDPTE registers and cost the four reads. */
static bool load_pdptes(Mmu *m, uint32_t cr3, MmuFault *f)
{
    PaeRef refs[4];
    PaeRegs r = m->regs;
    if (!pae_load_cr3(&r, m->pm, cr3, refs))
        return gp0(f);
    m->regs = r;
    for (int i = 0; i < 4; i++)
        m->stats.cr3_cycles += mmu_time_phys(m, refs[i].paddr, false);
    return true;
}

bool mmu_write_cr3(Mmu *m, uint32_t cr3, MmuFault *f)
{
    m->stats.cr3_writes++;
    if (!paging(m)) {
        m->regs.cr3 = cr3;
        return true;
    }
    if (!load_pdptes(m, cr3, f))
        return false;
    flush_nonglobal(m);
    return true;
}

bool mmu_write_cr0(Mmu *m, uint32_t cr0, MmuFault *f)
{
    bool pg_on = (cr0 & CR0_PG) && !(m->cr0 & CR0_PG);
    if (pg_on) {
        /* vmsplit models PAE paging only: enabling paging without
         * CR4.PAE would be 32-bit paging, which is not modelled. */
        if (!(m->cr4 & CR4_PAE))
            return gp0(f);
        if (!load_pdptes(m, m->regs.cr3, f))
            return false;
    }
    if ((cr0 ^ m->cr0) & (CR0_PG | CR0_WP))
        flush_all(m);
    m->cr0 = cr0;
    m->regs.wp = (cr0 & CR0_WP) != 0;
    return true;
}

bool mmu_write_cr4(Mmu *m, uint32_t cr4, MmuFault *f)
{
    if (paging(m) && !(cr4 & CR4_PAE))
        return gp0(f);   /* leaving PAE with paging on is #GP (SDM §2.5) */
    if ((cr4 ^ m->cr4) & (CR4_PGE | CR4_PAE | CR4_PCIDE))
        flush_all(m);    /* §4.10.4.1: changing PGE invalidates everything */
    m->cr4 = cr4;
    return true;
}

void mmu_write_efer(Mmu *m, uint64_t efer)
{
    m->efer = efer;
    m->regs.nxe = (efer & EFER_NXE) != 0;
}

void mmu_invlpg(Mmu *m, uint32_t lin)
{
    (void)lin;
    m->stats.invlpgs++;
}

bool mmu_translate(Mmu *m, uint32_t lin, Access access, int cpl, uint64_t *pa,
                   MmuFault *f)
{
    if (!paging(m)) {
        *pa = lin;
        return true;
    }
    PaeWalk w;
    uint64_t before = m->stats.cycles;
    bool ok = pae_walk(&m->regs, m->pm, lin, access, cpl, &w);
    for (int i = 0; i < w.nrefs; i++)
        mmu_time_phys(m, w.refs[i].paddr, w.refs[i].write);
    m->stats.walks++;
    m->stats.walk_cycles += m->stats.cycles - before;
    if (!ok) {
        if (f)
            *f = (MmuFault){ .vector = w.vector, .error_code = w.error_code,
                             .cr2 = w.cr2 };
        return false;
    }
    *pa = w.paddr;
    return true;
}

/* Translate both halves of an access that may cross a page boundary. */
static bool translate_span(Mmu *m, uint32_t lin, unsigned size, Access access,
                           int cpl, uint64_t pa[2], unsigned *first, MmuFault *f)
{
    unsigned off = lin & (PAGE_SIZE - 1);
    *first = size;
    if (!mmu_translate(m, lin, access, cpl, &pa[0], f))
        return false;
    if (off + size > PAGE_SIZE) {
        *first = PAGE_SIZE - off;
        if (!mmu_translate(m, lin + *first, access, cpl, &pa[1], f))
            return false;
    }
    return true;
}

bool mmu_read(Mmu *m, uint32_t lin, unsigned size, Access access, int cpl,
              uint32_t *val, MmuFault *f)
{
    g_assert(size == 1 || size == 2 || size == 4);
    uint64_t pa[2];
    unsigned first;
    if (!translate_span(m, lin, size, access, cpl, pa, &first, f))
        return false;
    uint8_t b[4] = { 0 };
    physmem_read(m->pm, pa[0], b, first);
    m->stats.data_cycles += mmu_time_phys(m, pa[0], false);
    if (first < size) {
        physmem_read(m->pm, pa[1], b + first, size - first);
        m->stats.data_cycles += mmu_time_phys(m, pa[1], false);
    }
    uint32_t v = 0;
    memcpy(&v, b, size);
    *val = v;
    return true;
}

bool mmu_write(Mmu *m, uint32_t lin, unsigned size, int cpl, uint32_t val,
               MmuFault *f)
{
    g_assert(size == 1 || size == 2 || size == 4);
    uint64_t pa[2];
    unsigned first;
    if (!translate_span(m, lin, size, ACCESS_WRITE, cpl, pa, &first, f))
        return false;
    uint8_t b[4];
    memcpy(b, &val, 4);
    physmem_write(m->pm, pa[0], b, first);
    m->stats.data_cycles += mmu_time_phys(m, pa[0], true);
    if (first < size) {
        physmem_write(m->pm, pa[1], b + first, size - first);
        m->stats.data_cycles += mmu_time_phys(m, pa[1], true);
    }
    return true;
}
