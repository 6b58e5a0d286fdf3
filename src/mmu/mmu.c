/* The memory system of one core: TLB hierarchy + PAE walker + caches.
 * See mmu.h for the model and what is charged where. */
#include "mmu/mmu.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "mmu/mmu_priv.h"
#include "mmu/pae_priv.h"
#include "tlb/hier_priv.h"

/* For the steps of the miss path (see walk_and_fill). */
#define MMU_INLINE inline __attribute__((always_inline))

/* The walker's masks for each CPL (Mmu.fast_masks), after regs.wp or
 * regs.nxe is set. */
static void set_fast_masks(Mmu *m)
{
    for (int cpl = 0; cpl < 4; cpl++)
        m->fast_masks[cpl] = pae_fast_masks_for(&m->regs, cpl);
}

/* The paging mode's state, from CR4 and EFER: which rules the walk reads
 * (CR4.PAE), CR4.PSE, execute-disable in effect (EFER.NXE, under PAE
 * only: 32-bit paging has no XD, SDM §4.3), the TLB size of a large page
 * and the PDE cache's key; then the fast walk's masks. Called wherever
 * CR4 or EFER is set. */
static void set_mode(Mmu *m)
{
    bool pae = (m->cr4 & CR4_PAE) != 0;
    m->regs.mode = pae ? PAGING_PAE : PAGING_LEGACY;
    m->regs.pse = (m->cr4 & CR4_PSE) != 0;
    m->regs.nxe = pae && (m->efer & EFER_NXE);
    m->large_size = (uint8_t)(pae ? TLB_PAGE_2M : TLB_PAGE_4M);
    m->pde_region_mask = pae ? ~0u : ~(uint32_t)(1u << PAE_PDE_SHIFT);
    set_fast_masks(m);
}

/* Without a preset: a plain 64-entry 4-way I/D pair holding every page
 * size, no caches (every reference costs 1 cycle). For unit tests. */
static void default_tlb_config(TlbHierConfig *c)
{
    memset(c, 0, sizeof *c);
    TlbGeom g = { .entries = 64, .ways = 4,
                  .page_sizes = PRESET_PG_4K | PRESET_PG_2M | PRESET_PG_4M };
    c->itlb_4k = g;
    c->dtlb_4k = g;
    c->policy = "lru";
}

Mmu *mmu_new_full(PhysMem *pm, const Preset *preset, const TlbHierConfig *tlb,
                  uint64_t seed, GError **err)
{
    TlbHierConfig cfg;
    if (tlb)
        cfg = *tlb;
    else if (preset)
        tlb_hier_config_from_preset(&cfg, preset);
    else
        default_tlb_config(&cfg);
    /* Aligned as its memos are (mmu_fast.h): malloc's 16 bytes would
     * put every memo across two host cache lines. */
    Mmu *m;
    if (posix_memalign((void **)&m, _Alignof(Mmu), sizeof *m) != 0)
        g_error("mmu_new: out of memory");
    memset(m, 0, sizeof *m);
    m->pm = pm;
    m->hints.pd.base = m->hints.pt.base = PAE_NO_HINT;
    set_mode(m);
    m->tlb = tlb_hier_new_config(&cfg, seed, err);
    if (!m->tlb)
        goto fail;
    mmu_set_shortcuts(m, true);
    m->fast.cache = preset ? cache_new_from_preset(preset, err) : cache_new(NULL, NULL, NULL, 1, err);
    if (!m->fast.cache)
        goto fail;
    if (preset) {
        m->pdpte_uncached = preset->pdpte_load_uncached;
        m->walk_base = preset->cost.page_walk_base;
    }
    return m;
fail:
    mmu_free(m);
    return NULL;
}

Mmu *mmu_new(PhysMem *pm, const Preset *preset)
{
    GError *err = NULL;
    Mmu *m = mmu_new_full(pm, preset, NULL, 1, &err);
    if (!m)
        g_error("mmu_new: %s", err->message);
    return m;
}

void mmu_free(Mmu *m)
{
    if (!m)
        return;
    if (m->tlb)
        tlb_hier_free(m->tlb);
    if (m->fast.cache)
        cache_free(m->fast.cache);
    free(m);
}

PhysMem *mmu_physmem(Mmu *m) { return m->pm; }
TlbHierarchy *mmu_tlb(Mmu *m) { return m->tlb; }
CacheHier *mmu_cache(Mmu *m) { return m->fast.cache; }
const MmuStats *mmu_stats(const Mmu *m) { return &m->fast.stats; }

void mmu_reset_stats(Mmu *m)
{
    memset(&m->fast.stats, 0, sizeof m->fast.stats);
    tlb_hier_stats_reset(m->tlb);
    cache_reset_stats(m->fast.cache);
}
/* Forget every memo: what a hit means changed (PCID, CR0.WP/PG, CR4,
 * EFER.NXE) without any TLB slot changing (see MmuMemo). */
static void memo_clear(Mmu *m)
{
    for (unsigned side = 0; side < 2; side++)
        for (unsigned i = 0; i < (1u << MEMO_BITS); i++)
            m->fast.memo[side][i].key[0] = m->fast.memo[side][i].key[1] = MEMO_NONE;
}

void mmu_set_shortcuts(Mmu *m, bool on)
{
    m->no_memo = !on;
    for (unsigned side = 0; side < 2; side++) {
        m->only[side] = on && m->tlb ? tlb_hier_only_array(m->tlb, side) : NULL;
        m->fast.hit_lat[side] = m->tlb ? tlb_hier_token_latency(m->tlb, side) : 0;
    }
    m->fast.exec_apart = !m->tlb || tlb_hier_insn_hits_apart(m->tlb);
    memo_clear(m);
}

uint32_t mmu_cr3(const Mmu *m) { return m->regs.cr3; }
uint32_t mmu_cr0(const Mmu *m) { return m->cr0; }
uint32_t mmu_cr4(const Mmu *m) { return m->cr4; }
uint64_t mmu_efer(const Mmu *m) { return m->efer; }
uint16_t mmu_pcid(const Mmu *m) { return m->pcid; }

static inline bool paging(const Mmu *m) { return m->paging; }

static inline unsigned time_phys(Mmu *m, uint64_t pa, bool write)
{
    unsigned c = cache_access_fast(m->fast.cache, pa, write);
    m->fast.stats.cycles += c;
    m->fast.stats.data_cycles += c;
    return c;
}

unsigned mmu_time_phys(Mmu *m, uint64_t pa, bool write)
{
    return time_phys(m, pa, write);
}

static bool gp0(MmuFault *f)
{
    if (f)
        *f = (MmuFault){ .vector = VEC_GP, .error_code = 0, .cr2 = 0 };
    return false;
}

/* Load the PDPTE registers from cr3 (with CR4 = cr4) and cost the four
 * reads (PAE paging only). */
static bool load_pdptes(Mmu *m, uint32_t cr3, uint32_t cr4, MmuFault *f)
{
    PaeRef refs[4];
    PaeRegs r = m->regs;
    uint32_t base = (cr4 & CR4_PCIDE) ? cr3 & ~CR3_PCID_MASK : cr3;
    if (!pae_load_cr3(&r, m->pm, base, refs))
        return gp0(f);
    r.cr3 = cr3;
    m->regs = r;
    for (int i = 0; i < 4; i++) {
        unsigned c = m->pdpte_uncached ? cache_access_uncached(m->fast.cache, refs[i].paddr, false)
                                       : cache_access(m->fast.cache, refs[i].paddr, false);
        m->fast.stats.cycles += c;
        m->fast.stats.cr3_cycles += c;
    }
    return true;
}

bool mmu_write_cr3(Mmu *m, uint32_t cr3, MmuFault *f)
{
    m->fast.stats.cr3_writes++;
    if (!paging(m)) {
        /* With paging off nothing is loaded or flushed, but the PCID is
         * still CR3[11:0] (it tags the entries made once paging is on). */
        m->regs.cr3 = cr3;
        m->pcid = (m->cr4 & CR4_PCIDE) ? cr3 & CR3_PCID_MASK : 0;
        return true;
    }
    /* PAE loads the PDPTE registers (§4.4.1); 32-bit paging loads
     * nothing and references no memory: CR3 names the page directory,
     * read by each walk (§4.3). */
    if (m->cr4 & CR4_PAE) {
        if (!load_pdptes(m, cr3, m->cr4, f))
            return false;
    } else {
        m->regs.cr3 = cr3;
    }
    if (m->cr4 & CR4_PCIDE) {
        m->pcid = cr3 & CR3_PCID_MASK;     /* no-flush write (see mmu.h) */
        memo_clear(m);                     /* hits now mean this PCID's */
    } else
        tlb_hier_flush_nonglobal(m->tlb, 0);
    return true;
}

bool mmu_write_cr0(Mmu *m, uint32_t cr0, MmuFault *f)
{
    /* SDM Vol. 3A §2.5 (CR0.PG): "setting the PG flag when the PE flag
     * is clear causes a general-protection exception (#GP)". */
    if ((cr0 & CR0_PG) && !(cr0 & CR0_PE))
        return gp0(f);
    /* §4.4.1: if PAE paging would be in use after a MOV to CR0 that
     * modifies CR0.CD, NW or PG, the PDPTEs are loaded from CR3 (#GP(0),
     * nothing changed, if a present one has a reserved bit). 32-bit
     * paging loads nothing (§4.1.2 allows PG to be set with either mode). */
    if ((cr0 & CR0_PG) && (m->cr4 & CR4_PAE) && ((cr0 ^ m->cr0) & (CR0_PG | CR0_CD | CR0_NW)))
        if (!load_pdptes(m, m->regs.cr3, m->cr4, f))
            return false;
    if ((cr0 ^ m->cr0) & (CR0_PG | CR0_WP))
        tlb_hier_flush_all(m->tlb);
    m->cr0 = cr0;
    m->paging = (cr0 & CR0_PG) != 0;
    m->regs.wp = (cr0 & CR0_WP) != 0;
    set_fast_masks(m);
    memo_clear(m);
    return true;
}

bool mmu_write_cr4(Mmu *m, uint32_t cr4, MmuFault *f)
{
    /* §4.1.2: with paging on, MOV to CR4 moves between 32-bit and PAE
     * paging by changing CR4.PAE (only IA-32e paging refuses to clear
     * it, and this core has none). §4.4.1: if PAE paging would be in use
     * after a MOV to CR4 that modifies CR4.PAE, PGE or PSE, the PDPTEs are
     * loaded from CR3 (#GP(0), nothing changed, if a present one has a
     * reserved bit). */
    uint32_t changed = cr4 ^ m->cr4;
    if (paging(m) && (cr4 & CR4_PAE) && (changed & (CR4_PAE | CR4_PGE | CR4_PSE)))
        if (!load_pdptes(m, m->regs.cr3, cr4, f))
            return false;
    /* §4.10.4.1: a change of CR4.PGE (or PCIDE) invalidates every TLB and
     * paging-structure-cache entry, global ones too; a change of CR4.PAE
     * every entry of the current PCID (here: all, as the PCID is a
     * what-if). A change of CR4.PSE alone invalidates nothing. */
    if (changed & (CR4_PGE | CR4_PAE | CR4_PCIDE))
        tlb_hier_flush_all(m->tlb);
    m->cr4 = cr4;
    m->pcid = (cr4 & CR4_PCIDE) ? m->regs.cr3 & CR3_PCID_MASK : 0;
    set_mode(m);
    memo_clear(m);
    return true;
}

void mmu_write_efer(Mmu *m, uint64_t efer)
{
    m->efer = efer;
    set_mode(m);
    memo_clear(m);
}

void mmu_invlpg(Mmu *m, uint32_t lin)
{
    m->fast.stats.invlpgs++;
    tlb_hier_invlpg(m->tlb, lin, m->pcid);
}

void mmu_flush_pcid(Mmu *m, uint16_t pcid)
{
    tlb_hier_flush_pcid(m->tlb, pcid);
}

/* Set memo mm, whose token is set, for the page of lin at cpl: ok, the
 * accesses it answers (memo_ok); host: the page's frame, which exists. */
static MMU_INLINE void memo_set(MmuMemo *mm, uint32_t lin, int cpl, unsigned ok, uint64_t pa,
                                uint8_t *host)
{
    uint32_t key = mmu_memo_key(lin, cpl);
    /* ok's bit for each key: READ or EXEC (bits 0, 2) for key[0], WRITE
     * for key[1]. */
    mm->key[0] = ok & (1u << ACCESS_READ | 1u << ACCESS_EXEC) ? key : MEMO_NONE;
    mm->key[1] = ok & 1u << ACCESS_WRITE ? key : MEMO_NONE;
    mm->pa = pa;
    mm->host = host;
}

/* memo_set with the token k (the TLB's, tlb_token.h) for the hit. */
static MMU_INLINE void memo_put_ok(Mmu *m, const TlbHitToken *k, uint32_t lin, Access access,
                                   int cpl, unsigned ok, uint64_t pa, uint8_t *host)
{
    MmuMemo *mm = mmu_memo_at(m, lin, access);
    mm->tok = *k;
    memo_set(mm, lin, cpl, ok, pa, host);
}

/* The memo's `ok`: the rights rule (paging_rights_ok) for each access the
 * side makes, and for a write the dirty bit tlb_hit_fast requires. */
static MMU_INLINE unsigned memo_ok(const Mmu *m, Access access, int cpl, bool us, bool rw,
                                   bool nx, bool dirty)
{
    bool wp = m->regs.wp, nxe = m->regs.nxe;
    if (access == ACCESS_EXEC)
        return (unsigned)paging_rights_ok(rw, us, nx, ACCESS_EXEC, cpl, wp, nxe) << ACCESS_EXEC;
    return (unsigned)paging_rights_ok(rw, us, nx, ACCESS_READ, cpl, wp, nxe) << ACCESS_READ |
           (unsigned)(dirty && paging_rights_ok(rw, us, nx, ACCESS_WRITE, cpl, wp, nxe))
               << ACCESS_WRITE;
}

/* Remember entry e (in a first-level array, just hit or filled) for the
 * page of lin at cpl; host: the page's frame, or NULL to look it up. No
 * memo when the TLB gives no token for it (the entry is not in the array
 * the hit path probes, or that array's hits are not taken inline), or its
 * frame does not exist (see MmuMemo in mmu_fast.h). */
static MMU_INLINE void memo_make(Mmu *m, uint32_t lin, Access access, int cpl,
                                 const TlbEntry *e, uint8_t *host)
{
    TlbHitToken k;
    if (m->no_memo || !tlb_hier_hit_token(m->tlb, access, cpl, e, &k))
        return;
    uint64_t pa = tlb_entry_paddr(e, lin) & PAGE_MASK;
    if (!host && !(host = (uint8_t *)physmem_frame_peek_inline(m->pm, pa)))
        return;
    memo_put_ok(m, &k, lin, access, cpl, memo_ok(m, access, cpl, e->us, e->rw, e->nx, e->dirty),
                pa, host);
}

/* The walk's memory references, timed through the caches. A PDE-cache
 * hit supplies the PDE: its read is not made. The walk itself still reads
 * memory for the value, which equals the cached one as long as software
 * invalidates after changing a PDE. */
static uint64_t time_walk_refs(Mmu *m, const PaeWalk *w, bool pde_cached, uint64_t pde_pa)
{
    uint64_t c = 0;
    for (int i = 0; i < w->nrefs; i++) {
        if (pde_cached && !w->refs[i].write && w->refs[i].paddr == pde_pa)
            continue;
        c += cache_access_fast(m->fast.cache, w->refs[i].paddr, w->refs[i].write);
    }
    return c;
}

/* The entry the fast walk w of lin makes (tlb_entry_from_walk's, from a
 * PaeFast); global: its G bit with CR4.PGE. */
static MMU_INLINE TlbEntry fast_entry(const Mmu *m, const PaeFast *w, uint32_t lin, bool global)
{
    return (TlbEntry){
        .frame = w->frame,
        .vpn = lin >> tlb_page_shift(w->large ? (TlbPageSize)m->large_size : TLB_PAGE_4K),
        .pcid = m->pcid,
        .page_size = (uint8_t)(w->large ? m->large_size : TLB_PAGE_4K),
        .rw = (w->all & PAE_RW) != 0, .us = (w->all & PAE_US) != 0,
        .nx = (w->any & PAE_XD) != 0,
        .dirty = (w->leaf & PAE_D) != 0,
        .global = global,
    };
}

/* A TLB miss: walk, time the walk's references, fill. *l1: the filled
 * first-level entry (tlb_hier_fill), or NULL. Inline into its three
 * callers: the miss path is most of what a TLB-missing workload costs the
 * host, and the calls and copies between its steps were a third of it. */
static MMU_INLINE bool walk_and_fill(Mmu *m, uint32_t lin, Access access, int cpl,
                                     TlbEntry *e, MmuFault *f, const TlbEntry **l1)
{
    uint64_t pde, pde_pa;
    /* The PDE cache keys by bits 31:21 (PAE's PDE); masked, a 32-bit
     * paging PDE's 4 MiB region is one key (Mmu.pde_region_mask). */
    uint32_t pde_key = lin & m->pde_region_mask;
    bool pde_cached = tlb_hier_pde_lookup(m->tlb, pde_key, m->pcid, &pde, &pde_pa);
    uint64_t c = m->walk_base;
    bool pge = (m->cr4 & CR4_PGE) != 0;
    PaeFast fw;
    if (G_LIKELY(pae_walk_fast(&m->regs, m->pm, NULL, NULL, lin, access, cpl, &fw))) {
        /* The fast walk, inline (pae_priv.h): its references are reads,
         * the PDE and (a 4 KiB page) the PTE; time_walk_refs unrolled. */
        if (!(pde_cached && fw.pde_pa == pde_pa))
            c += cache_access_fast(m->fast.cache, fw.pde_pa, false);
        if (!fw.large && !(pde_cached && fw.pte_pa == pde_pa))
            c += cache_access_fast(m->fast.cache, fw.pte_pa, false);
        m->fast.stats.walks++;
        m->fast.stats.walk_cycles += c;
        m->fast.stats.cycles += c;
        if (!fw.large && !pde_cached)
            tlb_hier_pde_fill(m->tlb, pde_key, m->pcid, fw.pde, fw.pde_pa);
        *e = fast_entry(m, &fw, lin, (fw.leaf & PAE_G) && pge);
    } else {
        /* The fast walk declined, having changed nothing: the walk. */
        PaeWalk w;
        bool ok = pae_walk(&m->regs, m->pm, lin, access, cpl, &w);
        c += time_walk_refs(m, &w, pde_cached, pde_pa);
        m->fast.stats.walks++;
        m->fast.stats.walk_cycles += c;
        m->fast.stats.cycles += c;
        if (!ok) {
            if (f)
                *f = (MmuFault){ .vector = w.vector, .error_code = w.error_code, .cr2 = w.cr2 };
            return false;
        }
        if (w.page_size == PAE_PAGE_4K && !pde_cached)
            tlb_hier_pde_fill(m->tlb, pde_key, m->pcid, w.pde, w.pde_pa);
        tlb_entry_from_walk_inline(e, lin, &w, m->pcid, pge);
    }
    *l1 = tlb_hier_fill(m->tlb, access, cpl, e);
    return true;
}

/* The common miss in a side's only array: the array (tlb_hier_only_array)
 * has no entry for the page (tlb_hier_hit_fast_m just probed it and said
 * so), and the walker's fast path succeeds. Then it does what
 * translate_rest would, step for step, without the steps that cannot
 * apply: the lookup is counted as tlb_hier_lookup_rest counts it
 * (tlb_hier_count_miss: no other array to ask, no extra cycles); no PDE
 * cache to look up or fill; the walk's two reads timed as walk_and_fill
 * times them; the entry built as tlb_entry_from_walk builds it, and filled
 * as tlb_hier_fill fills it: by tlb_hier_fill_missed for a 4 KiB page
 * that is not global (the TLB's fill without its duplicate search, which
 * hands back the token for a hit in the new entry: the memo is made from
 * the walk's bits, ONLY_MEMO_MADE), by tlb_hier_fill otherwise; no rights
 * check (the fast walk permitted the access). With memos off
 * (mmu_set_shortcuts: Mmu.only is NULL) it is not taken: the general path
 * is then the reference it is tested against. Returns ONLY_NOT_TAKEN having
 * changed nothing when the case does not apply: the caller goes on to
 * translate_rest. */
typedef enum {
    ONLY_NOT_TAKEN,                    /* not taken: nothing changed */
    ONLY_FILLED,                /* taken: *l1 is the filled entry, or NULL */
    ONLY_MEMO_MADE,                  /* taken, the memo made if the frame
                                  * exists: *host is the frame, or NULL */
} OnlyArrayMiss;

/* memo_ok for the page a successful fast walk of lin just filled, less
 * what that success implies (pae_priv.h): it permitted the access (so U/S
 * at every level for a user access, R/W where a write needs it, no XD on
 * a fetch) and, on a write, found D set. So a read or write also permits
 * a read, and only a read's write bit is left to work out by the rule. */
static MMU_INLINE unsigned memo_ok_walked(const Mmu *m, Access access, int cpl,
                                          const PaeFast *w)
{
    bool rw = (w->all & PAE_RW) != 0, dirty = (w->leaf & PAE_D) != 0;
    /* us = true: the read's success says U/S was there if it was needed. */
    return access == ACCESS_EXEC    ? 1u << ACCESS_EXEC
           : access == ACCESS_WRITE ? 1u << ACCESS_READ | 1u << ACCESS_WRITE
                                    : 1u << ACCESS_READ |
                                          (unsigned)(dirty && paging_rights_ok(rw, true, false,
                                                                               ACCESS_WRITE, cpl,
                                                                               m->regs.wp,
                                                                               m->regs.nxe))
                                              << ACCESS_WRITE;
}

static MMU_INLINE OnlyArrayMiss miss_only_array(Mmu *m, uint32_t lin, Access access, int cpl,
                                   bool missed, uint64_t *pa, const TlbEntry **l1,
                                   uint8_t **host)
{
    TlbHierarchy *h = m->tlb;
    Tlb *t = m->only[access == ACCESS_EXEC];
    PaeFast w;
    /* missed: tlb_hier_hit_fast_m just found no entry for the page in
     * the side's small array, which t is when set (what
     * tlb_hier_fill_missed requires). */
    const PaeFastMasks *fm = m->fast_masks[cpl];
    if (!fm)
        __builtin_unreachable();  /* always set (set_fast_masks): the walk
                                   * need not test it */
    if (!missed || !t ||
        !pae_walk_fast(&m->regs, m->pm, &m->hints, fm, lin, access, cpl, &w))
        return ONLY_NOT_TAKEN;
    tlb_hier_count_miss(h, t, access, cpl);
    uint64_t c = m->walk_base + cache_access_fast(m->fast.cache, w.pde_pa, false);
    if (!w.large)
        c += cache_access_fast(m->fast.cache, w.pte_pa, false);
    m->fast.stats.walks++;
    m->fast.stats.walk_cycles += c;
    m->fast.stats.cycles += c;
    bool global = (w.leaf & PAE_G) && (m->cr4 & CR4_PGE);
    if (G_LIKELY(!w.large && !global)) {
        TlbHitToken k;
        tlb_hier_fill_missed(h, t, access, cpl, fast_entry(m, &w, lin, false), &k);
        uint8_t *fr = (uint8_t *)physmem_frame_peek_base(m->pm, w.frame);
        *pa = w.frame | (lin & (PAGE_SIZE - 1));
        *host = fr;
        if (G_LIKELY(fr))
            memo_put_ok(m, &k, lin, access, cpl, memo_ok_walked(m, access, cpl, &w), w.frame, fr);
        return ONLY_MEMO_MADE;
    }
    TlbEntry e = fast_entry(m, &w, lin, global);
    *l1 = tlb_hier_fill(h, access, cpl, &e);
    *pa = tlb_entry_paddr(&e, lin);
    return ONLY_FILLED;
}

/* mmu_translate after the hit path found no usable first-level hit (or
 * with paging off): the rest of the lookup, and the walk. *l1: the
 * first-level entry a walk just filled, or NULL. */
static MMU_INLINE bool translate_rest(Mmu *m, uint32_t lin, Access access, int cpl,
                                      uint64_t *pa, const TlbEntry **l1, MmuFault *f)
{
    *l1 = NULL;
    if (!paging(m)) {
        *pa = lin;
        return true;
    }
    TlbEntry e;
    unsigned extra = 0;
    TlbResult r = tlb_hier_lookup_rest(m->tlb, lin, access, cpl, m->pcid, &e, &extra);
    m->fast.stats.cycles += extra;
    /* A hit whose cached rights refuse the access re-walks: the SDM lets
     * the processor fault on cached rights, and re-walking gives the same
     * fault whenever software kept the TLB coherent. */
    if (!tlb_result_hit(r) || !mmu_rights_ok(&e, access, cpl, &m->regs)) {
        if (!walk_and_fill(m, lin, access, cpl, &e, f, l1))
            return false;
    }
    *pa = tlb_entry_paddr(&e, lin);
    return true;
}

/* A first-level hit whose cached rights refuse the access: re-walk, as
 * translate_rest does. */
static bool translate_rewalk(Mmu *m, uint32_t lin, Access access, int cpl, uint64_t *pa,
                             MmuFault *f)
{
    TlbEntry e;
    const TlbEntry *l1;
    if (!walk_and_fill(m, lin, access, cpl, &e, f, &l1))
        return false;
    *pa = tlb_entry_paddr(&e, lin);
    return true;
}

/* mmu_translate_lookup for one access type. */
static MMU_INLINE bool translate_lookup(Mmu *m, uint32_t lin, Access access, int cpl,
                                        uint64_t *pa, MmuFault *f)
{
    unsigned extra;
    bool missed = false;         /* set by tlb_hier_hit_fast_m */
    const TlbEntry *e;
    if (G_LIKELY(m->paging) &&
        G_LIKELY((e = tlb_hier_hit_fast_m(m->tlb, lin, access, cpl, m->pcid, &extra, &missed)))) {
        m->fast.stats.cycles += extra;
        if (G_UNLIKELY(!mmu_rights_ok(e, access, cpl, &m->regs)))
            return translate_rewalk(m, lin, access, cpl, pa, f);
        *pa = tlb_entry_paddr(e, lin);
    } else {
        uint8_t *host;
        OnlyArrayMiss k = m->paging ? miss_only_array(m, lin, access, cpl, missed, pa, &e, &host) : ONLY_NOT_TAKEN;
        if (k == ONLY_MEMO_MADE)
            return true;         /* the memo is made */
        if (k == ONLY_NOT_TAKEN && !translate_rest(m, lin, access, cpl, pa, &e, f))
            return false;
    }
    /* A hit, or a walk whose rights check passed for this access and
     * whose fill left the entry where the next hit will find it. */
    if (e)
        memo_make(m, lin, access, cpl, e, NULL);
    return true;
}

/* A copy per access type, as mmu_access_lookup (mmu_fast.h picks one). */
bool mmu_translate_lookup_read(Mmu *m, uint32_t lin, int cpl, uint64_t *pa, MmuFault *f)
{
    return translate_lookup(m, lin, ACCESS_READ, cpl, pa, f);
}

bool mmu_translate_lookup_write(Mmu *m, uint32_t lin, int cpl, uint64_t *pa, MmuFault *f)
{
    return translate_lookup(m, lin, ACCESS_WRITE, cpl, pa, f);
}

bool mmu_translate_lookup_exec(Mmu *m, uint32_t lin, int cpl, uint64_t *pa, MmuFault *f)
{
    return translate_lookup(m, lin, ACCESS_EXEC, cpl, pa, f);
}

bool mmu_translate(Mmu *m, uint32_t lin, Access access, int cpl, uint64_t *pa,
                   MmuFault *f)
{
    return mmu_translate_fast(m, lin, access, cpl, pa, f);
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

static inline void time_data(Mmu *m, uint64_t pa, Access access)
{
    if (access != ACCESS_EXEC)   /* no instruction-cache model: see mmu.h */
        time_phys(m, pa, access == ACCESS_WRITE);
}

static uint8_t *mmu_host_absent(Mmu *m, uint64_t pa, Access access)
{
    static const uint8_t zero_page[PAGE_SIZE];
    if (access == ACCESS_WRITE)
        return physmem_frame_get(m->pm, pa);
    return (uint8_t *)zero_page;
}

static inline uint8_t *host_of(Mmu *m, uint64_t pa, Access access)
{
    uint8_t *fr = (uint8_t *)physmem_frame_peek_inline(m->pm, pa);
    if (G_UNLIKELY(!fr))
        fr = mmu_host_absent(m, pa, access);
    return fr + (pa & (PAGE_SIZE - 1));
}

uint8_t *mmu_access(Mmu *m, uint32_t lin, Access access, int cpl, MmuFault *f)
{
    uint64_t pa;
    if (!mmu_translate_fast(m, lin, access, cpl, &pa, f))
        return NULL;
    time_data(m, pa, access);
    return host_of(m, pa, access);
}

/* mmu_access_lookup for one access type. */
static MMU_INLINE uint8_t *access_lookup(Mmu *m, uint32_t lin, Access access, int cpl,
                                         MmuFault *f)
{
    unsigned extra;
    bool missed = false;         /* set by tlb_hier_hit_fast_m */
    const TlbEntry *e;
    uint64_t pa;
    uint8_t *fr;
    OnlyArrayMiss k;
    if (G_LIKELY(m->paging) &&
        G_LIKELY((e = tlb_hier_hit_fast_m(m->tlb, lin, access, cpl, m->pcid, &extra, &missed)))) {
        m->fast.stats.cycles += extra;
        if (G_LIKELY(mmu_rights_ok(e, access, cpl, &m->regs))) {
            pa = tlb_entry_paddr(e, lin);
        } else {
            e = NULL;
            if (!translate_rewalk(m, lin, access, cpl, &pa, f))
                return NULL;
        }
    } else if (m->paging && (k = miss_only_array(m, lin, access, cpl, missed, &pa, &e, &fr)) != ONLY_NOT_TAKEN) {
        if (k == ONLY_MEMO_MADE) {
            /* Built in place, memo made: only the frame and the data
             * reference are left. */
            if (G_UNLIKELY(!fr))
                fr = mmu_host_absent(m, pa, access);
            time_data(m, pa, access);
            return fr + (pa & (PAGE_SIZE - 1));
        }
    } else if (!translate_rest(m, lin, access, cpl, &pa, &e, f)) {
        return NULL;
    }
    fr = (uint8_t *)physmem_frame_peek_inline(m->pm, pa);
    if (G_UNLIKELY(!fr))
        fr = mmu_host_absent(m, pa, access);
    else if (e)
        memo_make(m, lin, access, cpl, e, fr);
    time_data(m, pa, access);
    return fr + (pa & (PAGE_SIZE - 1));
}

/* A copy of the path per access type: its tests of the type (rights,
 * memo bits, the walker's masks, counters' indices, the cache reference)
 * are then constants. pageloop's miss: 23 host instructions fewer.
 * mmu_access_lookup (mmu_fast.h) picks the copy inline, so a caller with
 * a constant type calls its copy straight away. */
uint8_t *mmu_access_lookup_read(Mmu *m, uint32_t lin, int cpl, MmuFault *f)
{
    return access_lookup(m, lin, ACCESS_READ, cpl, f);
}

uint8_t *mmu_access_lookup_write(Mmu *m, uint32_t lin, int cpl, MmuFault *f)
{
    return access_lookup(m, lin, ACCESS_WRITE, cpl, f);
}

uint8_t *mmu_access_lookup_exec(Mmu *m, uint32_t lin, int cpl, MmuFault *f)
{
    return access_lookup(m, lin, ACCESS_EXEC, cpl, f);
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
    time_data(m, pa[0], access);
    if (first < size) {
        physmem_read(m->pm, pa[1], b + first, size - first);
        time_data(m, pa[1], access);
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
    time_data(m, pa[0], ACCESS_WRITE);
    if (first < size) {
        physmem_write(m->pm, pa[1], b + first, size - first);
        time_data(m, pa[1], ACCESS_WRITE);
    }
    return true;
}
