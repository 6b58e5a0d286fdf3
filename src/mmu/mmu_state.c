/* Snapshots, statistics arithmetic and a side-effect-free translation of
 * the memory system: see mmu_state.h. */
#include "mmu/mmu_state.h"

#include <string.h>

#include "mmu/cache_state.h"
#include "mmu/mmu_priv.h"

bool mmu_state_comparable(const Mmu *m)
{
    return tlb_state_comparable(m->tlb);
}

/* The PDE and PTE (0 when absent) that map lin, and their addresses. */
static void paging_entries(const Mmu *m, uint32_t lin, uint64_t e[4])
{
    memset(e, 0, 4 * sizeof *e);
    uint64_t pdpte = m->regs.pdpte[lin >> PAE_PDPTE_SHIFT];
    if (!(pdpte & PAE_P))
        return;
    e[0] = (pdpte & PAE_ADDR_4K) + ((lin >> PAE_PDE_SHIFT) & (PAE_PTRS_PER_PD - 1)) * 8;
    e[1] = physmem_read64(m->pm, e[0]);
    if (!(e[1] & PAE_P) || (e[1] & PAE_PS))
        return;
    e[2] = (e[1] & PAE_ADDR_4K) + ((lin >> PAGE_SHIFT) & (PAE_PTRS_PER_PT - 1)) * 8;
    e[3] = physmem_read64(m->pm, e[2]);
}

bool mmu_state_peek(const Mmu *m, uint32_t lin, uint64_t *pa)
{
    if (!m->paging) {
        *pa = lin;
        return true;
    }
    uint64_t e[4];
    paging_entries(m, lin, e);
    if ((e[1] & (PAE_P | PAE_PS)) == (PAE_P | PAE_PS)) {
        *pa = (e[1] & PAE_ADDR_2M) | (lin & (PAE_PAGE_2M - 1));
        return true;
    }
    if (!(e[3] & PAE_P))
        return false;
    *pa = (e[3] & PAE_ADDR_4K) | (lin & (PAGE_SIZE - 1));
    return true;
}

bool mmu_state_peek_cached(const Mmu *m, uint32_t lin, MmuPeekCache *pc, uint64_t *pa)
{
    uint32_t page = lin & ~(uint32_t)(PAGE_SIZE - 1);
    if (page != pc->page) {
        if (!mmu_state_peek(m, page, &pc->frame))
            return false;
        pc->page = page;
    }
    *pa = pc->frame | (lin & (PAGE_SIZE - 1));
    return true;
}

static void append_control(const Mmu *m, GByteArray *out)
{
    uint64_t c[10] = { m->cr0, m->regs.cr3, m->cr4, m->efer, m->pcid,
                       (uint64_t)m->paging | (uint64_t)m->regs.wp << 1 |
                           (uint64_t)m->regs.nxe << 2,
                       m->regs.pdpte[0], m->regs.pdpte[1], m->regs.pdpte[2],
                       m->regs.pdpte[3] };
    g_byte_array_append(out, (const guint8 *)c, sizeof c);
}

static void append_paging(const Mmu *m, const MmuRange *ranges, size_t nranges,
                          GByteArray *out)
{
    append_control(m, out);
    for (size_t i = 0; m->paging && i < nranges; i++) {
        uint64_t hi = ranges[i].hi ? ranges[i].hi : 1ULL << 32;
        g_assert(hi > ranges[i].lo);
        for (uint64_t p = ranges[i].lo & ~(uint64_t)(PAGE_SIZE - 1); p < hi; p += PAGE_SIZE) {
            uint64_t e[4];
            paging_entries(m, (uint32_t)p, e);
            g_byte_array_append(out, (const guint8 *)e, sizeof e);
        }
    }
}

/* What the references to the ranges can touch in the caches: each page's
 * frame (4 KiB of it under a 2 MiB page) and its PDE and PTE, which a walk
 * reads and sets A/D bits in. */
static GArray *cache_spans(const Mmu *m, const MmuRange *ranges, size_t nranges)
{
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(CacheSpan));
    for (size_t i = 0; i < nranges; i++) {
        uint64_t hi = ranges[i].hi ? ranges[i].hi : 1ULL << 32;
        for (uint64_t p = ranges[i].lo & ~(uint64_t)(PAGE_SIZE - 1); p < hi; p += PAGE_SIZE) {
            uint64_t pa;
            if (m->paging) {
                uint64_t e[4];
                paging_entries(m, (uint32_t)p, e);
                CacheSpan ent[2] = { { e[0], 8 }, { e[2], e[2] ? 8 : 0 } };
                g_array_append_vals(spans, ent, 2);
            }
            if (mmu_state_peek(m, (uint32_t)p, &pa)) {
                CacheSpan f = { pa, PAGE_SIZE };
                g_array_append_val(spans, f);
            }
        }
    }
    return spans;
}

static void append_cache_sets(const Mmu *m, unsigned level, const MmuRange *ranges,
                              size_t nranges, GByteArray *out)
{
    GArray *spans = cache_spans(m, ranges, nranges);
    cache_state_append_sets(m->cache, level, (const CacheSpan *)spans->data, spans->len, out);
    g_array_free(spans, TRUE);
}

unsigned mmu_state_nparts(const Mmu *m)
{
    return 1 + tlb_state_nparts(m->tlb) + cache_levels(m->cache);
}

void mmu_state_append_part(const Mmu *m, unsigned part, const MmuRange *ranges,
                           size_t nranges, GByteArray *out)
{
    unsigned nt = tlb_state_nparts(m->tlb);
    g_assert(part < mmu_state_nparts(m));
    if (part == 0)
        append_paging(m, ranges, nranges, out);
    else if (part <= nt)
        tlb_state_append_part(m->tlb, part - 1, out);
    else
        append_cache_sets(m, part - 1 - nt, ranges, nranges, out);
}

bool mmu_state_part_moved(const Mmu *m, unsigned part, const MmuStatsAll *d)
{
    unsigned nt = tlb_state_nparts(m->tlb);
    g_assert(part < mmu_state_nparts(m));
    if (part == 0)
        return true;
    if (part <= nt)
        return tlb_state_part_moved(m->tlb, part - 1, &d->tlb);
    return cache_state_level_moved(&d->cache, part - 1 - nt);
}

/* The physical bytes of the words (a word across a page boundary in two
 * pieces); NULL if one is not mapped. */
static GArray *word_spans(const Mmu *m, const MmuWords *w)
{
    GArray *spans = g_array_sized_new(FALSE, FALSE, sizeof(CacheSpan), (guint)w->n);
    MmuPeekCache pc = MMU_PEEK_CACHE_INIT;
    for (uint64_t k = 0; k < w->n; k++) {
        uint32_t lin = w->va + (uint32_t)(k * w->stride);
        uint32_t in_page = PAGE_SIZE - (lin & (PAGE_SIZE - 1));
        uint32_t first = in_page < 4 ? in_page : 4;
        uint64_t pa;
        if (!mmu_state_peek_cached(m, lin, &pc, &pa)) {
            g_array_free(spans, TRUE);
            return NULL;
        }
        CacheSpan s = { pa, first };
        g_array_append_val(spans, s);
        if (first < 4) {
            if (!mmu_state_peek_cached(m, lin + first, &pc, &pa)) {
                g_array_free(spans, TRUE);
                return NULL;
            }
            s = (CacheSpan){ pa, 4 - first };
            g_array_append_val(spans, s);
        }
    }
    return spans;
}

bool mmu_state_part_equivalent(const Mmu *m, unsigned part, const MmuRange *ranges,
                               size_t nranges, const MmuWords *words, const MmuStatsAll *d,
                               const GByteArray *start, const GByteArray *now)
{
    unsigned nt = tlb_state_nparts(m->tlb);
    g_assert(part < mmu_state_nparts(m));
    if (part == 0)
        return false;
    if (part <= nt) {
        unsigned i = part - 1;
        if (i >= d->tlb.narrays)                 /* the PDE cache */
            return false;
        TlbSpan *spans = g_new(TlbSpan, nranges + 1);
        for (size_t k = 0; k < nranges; k++)
            spans[k] = (TlbSpan){ ranges[k].lo, ranges[k].hi ? ranges[k].hi : 1ULL << 32 };
        bool ok = tlb_state_part_equivalent(m->tlb, i, &d->tlb.array[i], m->pcid, spans,
                                            nranges, start, now);
        g_free(spans);
        return ok;
    }
    GArray *spans = d->mmu.walks ? cache_spans(m, ranges, nranges) : word_spans(m, words);
    if (!spans)
        return false;
    bool ok = cache_state_sets_equivalent(m->cache, part - 1 - nt,
                                          (const CacheSpan *)spans->data, spans->len,
                                          &d->cache, start, now);
    g_array_free(spans, TRUE);
    return ok;
}

/* ---- statistics ---- */

G_STATIC_ASSERT(sizeof(MmuStats) == 7 * sizeof(uint64_t));   /* the 7 below */

void mmu_state_stats_get(const Mmu *m, MmuStatsAll *out)
{
    memset(out, 0, sizeof *out);
    out->mmu = m->stats;
    out->cache = *cache_stats(m->cache);
    tlb_state_stats_get(m->tlb, &out->tlb);
}

void mmu_state_stats_diff(MmuStatsAll *d, const MmuStatsAll *a, const MmuStatsAll *b)
{
    memset(d, 0, sizeof *d);
    d->mmu = (MmuStats){
        .cycles = a->mmu.cycles - b->mmu.cycles,
        .walk_cycles = a->mmu.walk_cycles - b->mmu.walk_cycles,
        .walks = a->mmu.walks - b->mmu.walks,
        .data_cycles = a->mmu.data_cycles - b->mmu.data_cycles,
        .cr3_writes = a->mmu.cr3_writes - b->mmu.cr3_writes,
        .cr3_cycles = a->mmu.cr3_cycles - b->mmu.cr3_cycles,
        .invlpgs = a->mmu.invlpgs - b->mmu.invlpgs,
    };
    cache_state_stats_diff(&d->cache, &a->cache, &b->cache);
    tlb_state_stats_diff(&d->tlb, &a->tlb, &b->tlb);
}

void mmu_state_stats_add(Mmu *m, const MmuStatsAll *d, uint64_t times)
{
    MmuStats *s = &m->stats;
    s->cycles += times * d->mmu.cycles;
    s->walk_cycles += times * d->mmu.walk_cycles;
    s->walks += times * d->mmu.walks;
    s->data_cycles += times * d->mmu.data_cycles;
    s->cr3_writes += times * d->mmu.cr3_writes;
    s->cr3_cycles += times * d->mmu.cr3_cycles;
    s->invlpgs += times * d->mmu.invlpgs;
    cache_state_stats_add(m->cache, &d->cache, times);
    tlb_state_stats_add(m->tlb, &d->tlb, times);
}
