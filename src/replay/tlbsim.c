/* tlbsim: see tlbsim.h. */
#include "replay/tlbsim.h"
#include "replay/lackey.h"

#include <string.h>

#define PDPT_PA 0x0ULL                /* page 0: see tlbsim.h */
#define TABLES_PA 0x100000000ULL      /* page directories and tables */
#define USER_TABLE (PAE_P | PAE_RW | PAE_US | PAE_A)
#define USER_PAGE (PAE_P | PAE_RW | PAE_US)

struct TlbSim {
    PhysMem *pm;
    Mmu *mmu;
    TlbSimCounters c;
    uint64_t next_table;
    bool large;
    uint8_t *mapped;             /* one bit per 4 KiB page (or 2 MiB page) */
    uint64_t first_bad;
    char first_bad_text[81];
};

static uint64_t alloc_table(TlbSim *s)
{
    uint64_t pa = s->next_table;
    s->next_table += PAGE_SIZE;
    physmem_frame_get(s->pm, pa);       /* zeroed */
    return pa;
}

/* Build the identity mapping of the page holding lin, if not yet mapped. */
static void ensure_mapped(TlbSim *s, uint32_t lin)
{
    uint32_t page = s->large ? lin >> PAE_PDE_SHIFT : lin >> PAGE_SHIFT;
    if (s->mapped[page >> 3] & (1u << (page & 7)))
        return;
    s->mapped[page >> 3] |= (uint8_t)(1u << (page & 7));
    s->c.pages_mapped++;
    uint64_t pd = physmem_read64(s->pm, PDPT_PA + 8 * (lin >> PAE_PDPTE_SHIFT)) & PAE_ADDR_4K;
    uint64_t pde_pa = pd + 8 * ((lin >> PAE_PDE_SHIFT) & 511);
    if (s->large) {
        uint64_t frame = lin & ~(uint64_t)(PAE_PAGE_2M - 1);
        physmem_write64(s->pm, pde_pa, frame | USER_PAGE | PAE_PS);
        return;
    }
    uint64_t pde = physmem_read64(s->pm, pde_pa);
    if (!(pde & PAE_P)) {
        pde = alloc_table(s) | USER_TABLE;
        physmem_write64(s->pm, pde_pa, pde);
    }
    uint64_t pte_pa = (pde & PAE_ADDR_4K) + 8 * ((lin >> PAGE_SHIFT) & 511);
    physmem_write64(s->pm, pte_pa, (lin & PAE_ADDR_4K) | USER_PAGE);
}

static bool setup(TlbSim *s, const TlbSimConfig *cfg, GError **err)
{
    s->pm = physmem_new();
    s->large = cfg->large_pages;
    s->mapped = g_malloc0(s->large ? (1u << 11) / 8 : (1u << 20) / 8);
    s->next_table = TABLES_PA;
    for (int i = 0; i < 4; i++)
        physmem_write64(s->pm, PDPT_PA + 8 * i, alloc_table(s) | PAE_P);
    s->mmu = mmu_new_full(s->pm, cfg->preset, cfg->tlb, cfg->seed, err);
    if (!s->mmu)
        return false;
    MmuFault f;
    /* CR4.PAE, then CR3, then CR0.PG|WP: the order a kernel uses. */
    bool ok = mmu_write_cr4(s->mmu, 1u << 5, &f) && mmu_write_cr3(s->mmu, PDPT_PA, &f) &&
              mmu_write_cr0(s->mmu, (1u << 31) | (1u << 16) | 1u, &f);
    g_assert(ok);
    mmu_reset_stats(s->mmu);     /* report the trace, not the set-up */
    return true;
}

/* One access of one page. The map is built before the walk, so a
 * reference never faults. */
static void touch(TlbSim *s, uint32_t lin, Access access)
{
    ensure_mapped(s, lin);
    uint64_t pa;
    MmuFault f;
    bool ok = mmu_translate(s->mmu, lin, access, 3, &pa, &f);
    g_assert(ok);
    if (access != ACCESS_EXEC)
        mmu_time_phys(s->mmu, pa, access == ACCESS_WRITE);
}

static void reference(TlbSim *s, const LackeyRef *r)
{
    uint64_t a = r->addr;
    if (a > UINT32_MAX) {
        s->c.folded++;
        a &= UINT32_MAX;
    }
    uint32_t lin = (uint32_t)a;
    uint32_t last = (uint32_t)(lin + r->size - 1);
    unsigned shift = s->large ? PAE_PDE_SHIFT : PAGE_SHIFT;
    bool cross = (last >> shift) != (lin >> shift) && last > lin;
    s->c.page_crossings += cross;
    Access acc[2];
    int nacc = 1;
    switch (r->kind) {
    case LACKEY_I: acc[0] = ACCESS_EXEC; s->c.fetches++; break;
    case LACKEY_L: acc[0] = ACCESS_READ; s->c.loads++; break;
    case LACKEY_S: acc[0] = ACCESS_WRITE; s->c.stores++; break;
    case LACKEY_M: acc[0] = ACCESS_READ; acc[1] = ACCESS_WRITE; nacc = 2; s->c.modifies++; break;
    }
    for (int i = 0; i < nacc; i++) {
        touch(s, lin, acc[i]);
        if (cross)
            touch(s, last & ~((1u << shift) - 1), acc[i]);
    }
}

TlbSim *tlbsim_run(const TlbSimConfig *cfg, GError **err)
{
    TlbSim *s = g_new0(TlbSim, 1);
    LackeyReader *r = NULL;
    if (!setup(s, cfg, err))
        goto fail;
    r = lackey_open(cfg->trace, cfg->skip_bad, err);
    if (!r)
        goto fail;
    LackeyRef ref;
    int rc;
    while ((rc = lackey_next(r, &ref, err)) == 1) {
        reference(s, &ref);
        s->c.refs++;
        if (cfg->flush_every && s->c.refs % cfg->flush_every == 0) {
            MmuFault f;
            mmu_write_cr3(s->mmu, PDPT_PA, &f);
        }
        if (cfg->max_refs && s->c.refs >= cfg->max_refs)
            break;
    }
    if (rc < 0)
        goto fail;
    s->c.bad_lines = lackey_bad_lines(r);
    const char *text;
    s->first_bad = lackey_first_bad_line(r, &text);
    g_strlcpy(s->first_bad_text, text, sizeof s->first_bad_text);
    lackey_close(r);
    const MmuStats *ms = mmu_stats(s->mmu);
    s->c.cr3_writes = ms->cr3_writes;
    s->c.walks = ms->walks;
    s->c.walk_cycles = ms->walk_cycles;
    s->c.data_cycles = ms->data_cycles;
    s->c.cr3_cycles = ms->cr3_cycles;
    s->c.cycles = ms->cycles;
    return s;
fail:
    lackey_close(r);
    tlbsim_free(s);
    return NULL;
}

void tlbsim_free(TlbSim *s)
{
    if (!s)
        return;
    mmu_free(s->mmu);
    physmem_free(s->pm);
    g_free(s->mapped);
    g_free(s);
}

const TlbSimCounters *tlbsim_counters(const TlbSim *s) { return &s->c; }
Mmu *tlbsim_mmu(TlbSim *s) { return s->mmu; }
uint64_t tlbsim_first_bad(const TlbSim *s, const char **text)
{
    if (text)
        *text = s->first_bad_text;
    return s->first_bad;
}

static const struct { const char *name, *desc; size_t off; } counters[] = {
#define X(n, d) { #n, d, offsetof(TlbSimCounters, n) },
    TLBSIM_COUNTERS(X)
#undef X
};

size_t tlbsim_counter_count(void) { return G_N_ELEMENTS(counters); }
const char *tlbsim_counter_name(size_t i) { return counters[i].name; }
const char *tlbsim_counter_desc(size_t i) { return counters[i].desc; }
uint64_t tlbsim_counter_value(const TlbSimCounters *c, size_t i)
{
    return *(const uint64_t *)((const char *)c + counters[i].off);
}
