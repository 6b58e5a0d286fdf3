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

/* The entry at pa, of the mode's size. */
static uint64_t entry_at(const PagingRules *r, const PhysMem *pm, uint64_t pa)
{
    return r->entry_bytes == 8 ? physmem_read64(pm, pa) : physmem_read32(pm, pa);
}

/* The PDE and PTE (0 when absent) that map lin, and their addresses, in
 * the current paging mode (pae.h's PagingRules); *large: the PDE maps a
 * large page. */
static void paging_entries(const Mmu *m, uint32_t lin, uint64_t e[4], bool *large)
{
    const PagingRules *r = paging_rules(m->regs.mode);
    memset(e, 0, 4 * sizeof *e);
    *large = false;
    uint64_t pd;
    if (r->top_loaded) {
        uint64_t pdpte = m->regs.pdpte[lin >> PAE_PDPTE_SHIFT];
        if (!(pdpte & PAE_P))
            return;
        pd = pdpte & PAE_ADDR_4K;
    } else {
        pd = m->regs.cr3 & r->cr3_base_mask;
    }
    e[0] = paging_entry_pa(r, pd, lin, r->pde_shift);
    e[1] = entry_at(r, m->pm, e[0]);
    if (!(e[1] & PAE_P))
        return;
    if (paging_pde_large(r, e[1], m->regs.pse)) {
        *large = true;
        return;
    }
    e[2] = paging_entry_pa(r, e[1] & PAE_ADDR_4K, lin, PAGE_SHIFT);
    e[3] = entry_at(r, m->pm, e[2]);
}

/* The translation of lin from paging_entries' e and large. */
static bool entries_translate(const Mmu *m, uint32_t lin, const uint64_t e[4], bool large,
                              uint64_t *pa)
{
    const PagingRules *r = paging_rules(m->regs.mode);
    if (large) {
        *pa = paging_large_frame(r, e[1]) | (lin & (r->large_page - 1));
        return true;
    }
    if (!(e[3] & PAE_P))
        return false;
    *pa = (e[3] & PAE_ADDR_4K) | (lin & (PAGE_SIZE - 1));
    return true;
}

bool mmu_state_peek(const Mmu *m, uint32_t lin, uint64_t *pa)
{
    if (!m->paging) {
        *pa = lin;
        return true;
    }
    uint64_t e[4];
    bool large;
    paging_entries(m, lin, e, &large);
    return entries_translate(m, lin, e, large, pa);
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
            bool large;
            paging_entries(m, (uint32_t)p, e, &large);
            g_byte_array_append(out, (const guint8 *)e, sizeof e);
        }
    }
}

/* A list of physical spans being built. Only the union of their bytes
 * matters to its readers (cache_state_append_sets marks the sets of their
 * lines, cache_state_sets_equivalent merges their lines into runs), so a
 * span that starts inside or right after the one before of its kind is
 * merged into it: the union, hence every line and set, is unchanged. The
 * kinds (PDE, PTE, frame) are kept apart so that each merges with its own
 * neighbour: consecutive pages share a PDE and have adjacent PTEs. */
typedef struct {
    CacheSpan *v;
    size_t n, cap;
    uint64_t gap;                /* a gap up to this merges too (word_spans) */
    size_t last[3];              /* per kind the index of its last span, or SIZE_MAX */
} SpanList;

static void spans_init(SpanList *l, size_t cap)
{
    l->v = g_new(CacheSpan, cap);
    l->n = 0;
    l->cap = cap;
    l->gap = 0;
    l->last[0] = l->last[1] = l->last[2] = SIZE_MAX;
}

static inline void spans_add(SpanList *l, unsigned kind, uint64_t pa, uint64_t len)
{
    if (!len)
        return;
    size_t i = l->last[kind];
    if (i != SIZE_MAX && pa >= l->v[i].pa && pa <= l->v[i].pa + l->v[i].len + l->gap) {
        l->v[i].len = MAX(l->v[i].len, pa + len - l->v[i].pa);
        return;
    }
    if (l->n == l->cap) {
        l->cap *= 2;
        l->v = g_renew(CacheSpan, l->v, l->cap);
    }
    l->v[l->n] = (CacheSpan){ pa, len };
    l->last[kind] = l->n++;
}

/* What the references to the ranges can touch in the caches: each page's
 * frame (4 KiB of it under a 2 MiB page) and its PDE and PTE, which a walk
 * reads and sets A/D bits in. (Zero-length spans, an absent PTE, were
 * always skipped by the readers; they are not added.) */
static void cache_spans(const Mmu *m, const MmuRange *ranges, size_t nranges, SpanList *l)
{
    spans_init(l, 16);
    for (size_t i = 0; i < nranges; i++) {
        uint64_t hi = ranges[i].hi ? ranges[i].hi : 1ULL << 32;
        for (uint64_t p = ranges[i].lo & ~(uint64_t)(PAGE_SIZE - 1); p < hi; p += PAGE_SIZE) {
            if (!m->paging) {
                spans_add(l, 2, p, PAGE_SIZE);
                continue;
            }
            uint64_t e[4], pa;
            bool large;
            unsigned bytes = paging_rules(m->regs.mode)->entry_bytes;
            paging_entries(m, (uint32_t)p, e, &large);
            spans_add(l, 0, e[0], bytes);
            spans_add(l, 1, e[2], e[2] ? bytes : 0);
            /* mmu_state_peek's translation, from the same entries. */
            if (entries_translate(m, (uint32_t)p, e, large, &pa))
                spans_add(l, 2, pa, PAGE_SIZE);
        }
    }
}

struct MmuStateSpans {
    SpanList pages, words;       /* cache_spans, word_spans */
    bool pages_valid, words_valid, words_mapped;
};

MmuStateSpans *mmu_state_spans_new(void)
{
    return g_new0(MmuStateSpans, 1);
}

void mmu_state_spans_free(MmuStateSpans *sc)
{
    if (!sc)
        return;
    g_free(sc->pages.v);
    g_free(sc->words.v);
    g_free(sc);
}

void mmu_state_spans_reset(MmuStateSpans *sc)
{
    if (sc)
        sc->pages_valid = sc->words_valid = false;
}

/* cache_spans, from sc if it holds them. */
static const SpanList *pages_spans(const Mmu *m, const MmuRange *ranges, size_t nranges,
                                   MmuStateSpans *sc, SpanList *own)
{
    if (!sc) {
        cache_spans(m, ranges, nranges, own);
        return own;
    }
    if (!sc->pages_valid) {
        g_free(sc->pages.v);
        cache_spans(m, ranges, nranges, &sc->pages);
        sc->pages_valid = true;
    }
    return &sc->pages;
}

static void append_cache_sets(const Mmu *m, unsigned level, const MmuRange *ranges,
                              size_t nranges, MmuStateSpans *sc, GByteArray *out)
{
    SpanList own = { 0 };
    const SpanList *l = pages_spans(m, ranges, nranges, sc, &own);
    cache_state_append_sets(m->fast.cache, level, l->v, l->n, out);
    g_free(own.v);
}

unsigned mmu_state_nparts(const Mmu *m)
{
    return 1 + tlb_state_nparts(m->tlb) + cache_levels(m->fast.cache);
}

void mmu_state_append_part(const Mmu *m, unsigned part, const MmuRange *ranges,
                           size_t nranges, MmuStateSpans *sc, GByteArray *out)
{
    unsigned nt = tlb_state_nparts(m->tlb);
    g_assert(part < mmu_state_nparts(m));
    if (part == 0)
        append_paging(m, ranges, nranges, out);
    else if (part <= nt)
        tlb_state_append_part(m->tlb, part - 1, out);
    else
        append_cache_sets(m, part - 1 - nt, ranges, nranges, sc, out);
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
 * pieces), merged as SpanList does; false if one is not mapped. Each
 * page is translated once, and its words are added as one span where
 * they would merge into one anyway. */
static bool word_spans(const Mmu *m, const MmuWords *w, SpanList *l)
{
    spans_init(l, (size_t)MIN(w->n, 4096) + 1);
    /* Words a stride apart merge across a gap shorter than every level's
     * line, which leaves each level's set of lines as it was: a byte of
     * such a gap [e, s) whose line were neither that of byte e - 1 (the
     * span before) nor that of byte s (the span after) would have its
     * whole line inside the gap, which is shorter than a line. */
    l->gap = ((uint64_t)1 << cache_state_min_line_shift(m->fast.cache)) - 1;
    uint64_t k = 0;
    while (k < w->n) {
        uint32_t lin = w->va + (uint32_t)(k * w->stride);
        uint32_t off = lin & (PAGE_SIZE - 1);
        uint64_t pa;
        if (off > PAGE_SIZE - 4) {               /* across a page boundary */
            uint32_t first = PAGE_SIZE - off;
            if (!mmu_state_peek(m, lin, &pa))
                return false;
            spans_add(l, 2, pa, first);
            if (!mmu_state_peek(m, lin + first, &pa))
                return false;
            spans_add(l, 2, pa, 4 - first);
            k++;
            continue;
        }
        if (!mmu_state_peek(m, lin, &pa))
            return false;
        /* Words k .. k + c - 1 lie whole in this page. */
        uint64_t c = w->stride ? (PAGE_SIZE - 4 - off) / w->stride + 1 : w->n - k;
        c = MIN(c, w->n - k);
        if (w->stride <= 4 + l->gap)            /* each merges with the one before */
            spans_add(l, 2, pa, (c - 1) * w->stride + 4);
        else
            for (uint64_t j = 0; j < c; j++)
                spans_add(l, 2, pa + j * w->stride, 4);
        k += c;
    }
    return true;
}

bool mmu_state_part_equivalent(const Mmu *m, unsigned part, const MmuRange *ranges,
                               size_t nranges, const MmuWords *words, const MmuStatsAll *d,
                               MmuStateSpans *sc, const GByteArray *start,
                               const GByteArray *now)
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
    SpanList own = { 0 };
    const SpanList *l;
    bool ok = true;
    if (d->mmu.walks)
        l = pages_spans(m, ranges, nranges, sc, &own);
    else if (!sc) {
        ok = word_spans(m, words, &own);
        l = &own;
    } else {
        if (!sc->words_valid) {
            g_free(sc->words.v);
            sc->words_mapped = word_spans(m, words, &sc->words);
            sc->words_valid = true;
        }
        ok = sc->words_mapped;
        l = &sc->words;
    }
    ok = ok && cache_state_sets_equivalent(m->fast.cache, part - 1 - nt, l->v, l->n, &d->cache,
                                           start, now);
    g_free(own.v);
    return ok;
}

/* ---- statistics ---- */

G_STATIC_ASSERT(sizeof(MmuStats) == 7 * sizeof(uint64_t));   /* the 7 below */

void mmu_state_stats_get(const Mmu *m, MmuStatsAll *out)
{
    memset(out, 0, sizeof *out);
    out->mmu = m->fast.stats;
    out->cache = *cache_stats(m->fast.cache);
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
    MmuStats *s = &m->fast.stats;
    s->cycles += times * d->mmu.cycles;
    s->walk_cycles += times * d->mmu.walk_cycles;
    s->walks += times * d->mmu.walks;
    s->data_cycles += times * d->mmu.data_cycles;
    s->cr3_writes += times * d->mmu.cr3_writes;
    s->cr3_cycles += times * d->mmu.cr3_cycles;
    s->invlpgs += times * d->mmu.invlpgs;
    cache_state_stats_add(m->fast.cache, &d->cache, times);
    tlb_state_stats_add(m->tlb, &d->tlb, times);
}
