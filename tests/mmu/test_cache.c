/* Cache model: hit/miss and victim sequences worked by hand, latencies by
 * level, uncached references, geometry errors, and random sequences
 * checked against a second, deliberately naive LRU model written here
 * (timestamps instead of recency order), for every associativity the
 * lookup has its own code for and some it has not, through every entry
 * point; every statistic (most are derived when read, cache.c) against
 * the naive model's counts, and the statistics arithmetic of
 * cache_state.h against its definition. Latencies of the P4 Northwood come
 * from REFERENCES.md (L1 2, L2 24, memory 316 clocks), not from the preset
 * loader's output. */
#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "preset/preset.h"
#include "mmu/cache.h"
#include "mmu/cache_priv.h"
#include "mmu/cache_state.h"
#include "mmu/pae.h"
#include "mmu/physmem.h"

#define MEM 100

/* ---- one level, 2 sets x 2 ways, 64-byte lines, worked by hand -------- */

/* Lines: set = (addr >> 6) & 1. A, B, C are in set 0; D, E in set 1. */
enum { A = 0x000, B = 0x080, C = 0x100, D = 0x040, E = 0x0C0 };
static const uint64_t tracked[] = { A, B, C, D, E };
#define NONE 0xFFFFFFFFu

typedef struct {
    uint64_t addr;
    bool hit;
    uint64_t victim;             /* the line evicted by this step, or NONE */
    uint64_t present[4];         /* tracked lines present afterwards (0-terminated after the first) */
    int npresent;
} Step;

START_TEST(two_by_two_by_hand)
{
    /* Expected per step (MRU first in the comments):
     *  1 A      miss          set0 [A]
     *  2 B      miss          set0 [B A]
     *  3 A      hit           set0 [A B]
     *  4 C      miss, evict B set0 [C A]
     *  5 D      miss          set1 [D]
     *  6 B      miss, evict A set0 [B C]
     *  7 C      hit           set0 [C B]
     *  8 A+8    miss, evict B set0 [A C]   (same line as A)
     *  9 E      miss          set1 [E D]
     * 10 D+63   hit           set1 [D E]   (last byte of D's line)
     * 11 C      hit           set0 [C A]
     * 12 B      miss, evict A set0 [B C]
     * 13 E+32   hit           set1 [E D]
     * 14 0x140  miss, evict D set1 [0x140 E]  (line 5: set 1) */
    static const Step steps[] = {
        { A, false, NONE, { A }, 1 },
        { B, false, NONE, { A, B }, 2 },
        { A, true, NONE, { A, B }, 2 },
        { C, false, B, { A, C }, 2 },
        { D, false, NONE, { A, C, D }, 3 },
        { B, false, A, { B, C, D }, 3 },
        { C, true, NONE, { B, C, D }, 3 },
        { A + 8, false, B, { A, C, D }, 3 },
        { E, false, NONE, { A, C, D, E }, 4 },
        { D + 63, true, NONE, { A, C, D, E }, 4 },
        { C, true, NONE, { A, C, D, E }, 4 },
        { B, false, A, { B, C, D, E }, 4 },
        { E + 32, true, NONE, { B, C, D, E }, 4 },
        { 0x140, false, D, { B, C, E }, 3 },
    };
    CacheGeom l1 = { .size = 256, .ways = 2, .line = 64, .latency = 1 };
    GError *err = NULL;
    CacheHier *c = cache_new(&l1, NULL, NULL, MEM, &err);
    ck_assert_ptr_nonnull(c);
    uint64_t evictions = 0, hits = 0, misses = 0;
    for (unsigned i = 0; i < G_N_ELEMENTS(steps); i++) {
        const Step *s = &steps[i];
        unsigned lat = cache_access(c, s->addr, false);
        ck_assert_msg(lat == (s->hit ? 1u : MEM), "step %u: latency %u", i + 1, lat);
        const CacheStats *st = cache_stats(c);
        hits += s->hit;
        misses += !s->hit;
        evictions += s->victim != NONE;
        ck_assert_uint_eq(st->level[0].hits, hits);
        ck_assert_uint_eq(st->level[0].misses, misses);
        ck_assert_msg(st->level[0].evictions == evictions, "step %u: evictions", i + 1);
        for (unsigned t = 0; t < G_N_ELEMENTS(tracked); t++) {
            bool want = false;
            for (int k = 0; k < s->npresent; k++)
                want = want || s->present[k] == tracked[t];
            ck_assert_msg(cache_contains(c, CACHE_L1, tracked[t]) == want,
                          "step %u: line 0x%lx present=%d, expected %d", i + 1,
                          (unsigned long)tracked[t], !want, want);
        }
        if (s->victim != NONE)
            ck_assert(!cache_contains(c, CACHE_L1, s->victim));
    }
    cache_free(c);
}
END_TEST

/* ---- latency by level -------------------------------------------------- */

START_TEST(latency_by_level)
{
    /* L1: 1 set x 2 ways; L2: 4 sets x 2 ways; L3: 8 sets x 2 ways. */
    CacheGeom l1 = { 128, 2, 64, 2 }, l2 = { 512, 2, 64, 10 }, l3 = { 1024, 2, 64, 30 };
    CacheHier *c = cache_new(&l1, &l2, &l3, MEM, NULL);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(cache_levels(c), 3);
    const uint64_t X = 0x0;
    CacheLevel from;
    ck_assert_uint_eq(cache_access_from(c, X, false, &from), MEM);     /* cold */
    ck_assert_int_eq(from, CACHE_MEM);
    ck_assert_uint_eq(cache_access_from(c, X, false, &from), 2);       /* L1 */
    ck_assert_int_eq(from, CACHE_L1);
    /* Two other lines push X out of the one-set L1; in L2 they sit in
     * sets 1 and 2, X stays in set 0. */
    cache_access(c, 0x40, false);
    cache_access(c, 0x80, false);
    ck_assert_int_eq(cache_probe(c, X), CACHE_L2);
    ck_assert_uint_eq(cache_access_from(c, X, false, &from), 10);      /* L2 only */
    ck_assert_int_eq(from, CACHE_L2);
    /* Lines 4 and 8 share L2 set 0 with X (and L1's only set): X leaves L1
     * and L2; in L3 (8 sets) line 4 is set 4, line 8 set 0 (one way left). */
    cache_access(c, 0x100, false);
    cache_access(c, 0x200, false);
    ck_assert(!cache_contains(c, CACHE_L1, X));
    ck_assert(!cache_contains(c, CACHE_L2, X));
    ck_assert_int_eq(cache_probe(c, X), CACHE_L3);
    ck_assert_uint_eq(cache_access(c, X, false), 30);                  /* L3 only */
    /* The L3 fill went to every level that missed: now an L1 hit. */
    ck_assert_uint_eq(cache_access(c, X, true), 2);
    cache_invalidate_all(c);
    ck_assert_int_eq(cache_probe(c, X), CACHE_MEM);
    ck_assert_uint_eq(cache_access(c, X, false), MEM);
    const CacheStats *st = cache_stats(c);
    ck_assert_uint_eq(st->writes, 1);
    ck_assert_uint_eq(st->accesses, 10);
    cache_free(c);
}
END_TEST

/* A 128-byte L2 line behind a 64-byte L1 line (the P4's sectored L2): the
 * neighbouring 64 bytes arrive with the miss. */
START_TEST(larger_l2_line)
{
    CacheGeom l1 = { 128, 2, 64, 2 }, l2 = { 1024, 2, 128, 10 };
    CacheHier *c = cache_new(&l1, &l2, NULL, MEM, NULL);
    ck_assert_uint_eq(cache_access(c, 0x1000, false), MEM);
    ck_assert_uint_eq(cache_access(c, 0x1040, false), 10);   /* other half: L2 */
    ck_assert_uint_eq(cache_access(c, 0x1080, false), MEM);  /* next L2 line */
    cache_free(c);
}
END_TEST

/* ---- uncached references ---------------------------------------------- */

START_TEST(uncached_never_fills)
{
    CacheGeom l1 = { 256, 2, 64, 1 }, l2 = { 1024, 2, 64, 5 };
    CacheHier *c = cache_new(&l1, &l2, NULL, MEM, NULL);
    ck_assert_uint_eq(cache_access_uncached(c, A, false), MEM);
    ck_assert_uint_eq(cache_access_uncached(c, A, false), MEM);
    ck_assert_int_eq(cache_probe(c, A), CACHE_MEM);
    const CacheStats *st = cache_stats(c);
    ck_assert_uint_eq(st->uncached, 2);
    ck_assert_uint_eq(st->level[0].hits + st->level[0].misses, 0);
    ck_assert_uint_eq(cache_access(c, A, false), MEM);       /* still cold */

    /* An uncached read of a cached line neither hits nor refreshes it:
     * set 0 holds [B A] (A LRU); reading A uncached leaves A the LRU, so C
     * evicts A, not B. */
    cache_access(c, B, false);
    ck_assert_uint_eq(cache_access_uncached(c, A, false), MEM);
    cache_access(c, C, false);
    ck_assert(!cache_contains(c, CACHE_L1, A));
    ck_assert(cache_contains(c, CACHE_L1, B));
    st = cache_stats(c);                             /* as of now (cache.h) */
    ck_assert_uint_eq(st->mem, 2 + 1 + 1 + 1 + 1);  /* 3 uncached + A, B, C */
    cache_free(c);
}
END_TEST

/* ---- a page walk's references on the P4 Northwood figures ------------- */

/* PDPT at 0x1000 -> PD at 0x2000 -> PT at 0x3000 -> frame 0x5000, A bits
 * already set so that a read walk makes exactly two reads (PDE, PTE). */
static PhysMem *tables(PaeRegs *regs, PaeRef pdpte_refs[4])
{
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x1000, 0x2000 | PAE_P);
    physmem_write64(pm, 0x2000, 0x3000 | PAE_P | PAE_RW | PAE_A);
    physmem_write64(pm, 0x3000 + 5 * 8, 0x5000 | PAE_P | PAE_RW | PAE_A);
    memset(regs, 0, sizeof *regs);
    ck_assert(pae_load_cr3(regs, pm, 0x1000, pdpte_refs));
    return pm;
}

static unsigned walk_cycles(CacheHier *c, const PaeRegs *regs, PhysMem *pm)
{
    PaeWalk w;
    ck_assert(pae_walk(regs, pm, 0x5000, ACCESS_READ, 0, &w));
    ck_assert_int_eq(w.nrefs, 2);
    unsigned cyc = 0;
    for (int i = 0; i < w.nrefs; i++)
        cyc += cache_access(c, w.refs[i].paddr, w.refs[i].write);
    return cyc;
}

START_TEST(walk_cost_depends_on_where_tables_are)
{
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    CacheHier *c = cache_new_from_preset(p, &err);
    ck_assert_ptr_nonnull(c);
    PaeRegs regs;
    PaeRef pdpte[4];
    PhysMem *pm = tables(&regs, pdpte);

    /* REFERENCES.md, P4 Northwood 2.8 GHz: L1 2, L2 24, memory 316. */
    ck_assert_uint_eq(walk_cycles(c, &regs, pm), 2 * 316);    /* tables in memory */
    ck_assert_uint_eq(walk_cycles(c, &regs, pm), 2 * 2);      /* in L1 */
    /* Evict them from the 8 KiB 4-way L1 (32 sets of 64 bytes: set 0 holds
     * both 0x2000 and 0x3000) with four lines of L1 set 0 that fall in
     * other L2 sets (L2: 512 sets of 128 bytes). */
    for (uint64_t k = 0; k < 4; k++)
        cache_access(c, 0x100000 + k * 2048, false);
    ck_assert_uint_eq(walk_cycles(c, &regs, pm), 2 * 24);     /* in L2 only */
    /* Evict them from L2 too: eight lines in each of their L2 sets. */
    for (uint64_t k = 1; k <= 8; k++) {
        cache_access(c, 0x2000 + k * 65536, false);
        cache_access(c, 0x3000 + k * 65536, false);
    }
    ck_assert_uint_eq(walk_cycles(c, &regs, pm), 2 * 316);

    /* MOV CR3 on this part: the four PDPTE reads are uncached, so they cost
     * memory latency even right after the PDPT line was read through the
     * caches. */
    cache_access(c, pdpte[0].paddr, false);
    unsigned cr3 = 0;
    for (int i = 0; i < 4; i++)
        cr3 += p->pdpte_load_uncached ? cache_access_uncached(c, pdpte[i].paddr, false)
                                      : cache_access(c, pdpte[i].paddr, false);
    ck_assert(p->pdpte_load_uncached);
    ck_assert_uint_eq(cr3, 4 * 316);
    physmem_free(pm);
    cache_free(c);
    preset_free(p);
}
END_TEST

/* ---- geometry errors ---------------------------------------------------- */

static void expect_geom_error(const CacheGeom *l1, const CacheGeom *l2,
                              const CacheGeom *l3, unsigned mem, const char *key,
                              const char *what)
{
    GError *err = NULL;
    CacheHier *c = cache_new(l1, l2, l3, mem, &err);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(err);
    ck_assert(g_error_matches(err, CACHE_ERROR, CACHE_ERROR_GEOMETRY));
    ck_assert_msg(strstr(err->message, key) && strstr(err->message, what),
                  "'%s' lacks '%s' or '%s'", err->message, key, what);
    g_error_free(err);
}

START_TEST(rejects_bad_geometry)
{
    CacheGeom ok = { 256, 2, 64, 1 };
    CacheGeom sets3 = { 384, 2, 64, 1 };         /* 3 sets */
    CacheGeom ways3 = { 256, 3, 64, 1 };         /* 3 x 64 does not divide 256 */
    CacheGeom line48 = { 192, 1, 48, 1 };
    CacheGeom lat0 = { 256, 2, 64, 0 };
    CacheGeom big = { 1024, 2, 64, 5 };
    expect_geom_error(&sets3, NULL, NULL, MEM, "l1d.size", "power of two");
    expect_geom_error(&ok, &ways3, NULL, MEM, "l2.ways", "divide");
    expect_geom_error(&line48, NULL, NULL, MEM, "l1d.line", "power of two");
    expect_geom_error(&ok, &lat0, NULL, MEM, "l2.latency", "at least 1");
    expect_geom_error(&ok, NULL, &big, MEM, "l3", "contiguous");
    expect_geom_error(&ok, NULL, NULL, 0, "memory.latency", "at least 1");
    /* No level at all: every reference is a memory reference. */
    CacheHier *c = cache_new(NULL, NULL, NULL, 7, NULL);
    ck_assert_uint_eq(cache_levels(c), 0);
    ck_assert_uint_eq(cache_access(c, 0x1234, false), 7);
    cache_free(c);
}
END_TEST

/* ---- against a naive model --------------------------------------------- */

typedef struct {
    uint64_t size, ways, line;
    uint64_t *tag;               /* sets * ways; UINT64_MAX: empty */
    uint64_t *stamp;             /* last use */
    uint64_t hits, misses, evictions;
} Naive;

static void naive_init(Naive *n, const CacheGeom *g)
{
    n->size = g->size, n->ways = g->ways, n->line = g->line;
    n->hits = n->misses = n->evictions = 0;
    uint64_t slots = g->size / g->line;
    n->tag = g_new(uint64_t, slots);
    n->stamp = g_new0(uint64_t, slots);
    for (uint64_t i = 0; i < slots; i++)
        n->tag[i] = UINT64_MAX;
}

/* true on a hit; on a miss fills an empty way, else the least recently
 * used one. */
static bool naive_access(Naive *n, uint64_t addr, uint64_t now)
{
    uint64_t sets = n->size / n->line / n->ways;
    uint64_t line = addr / n->line, set = line % sets;
    uint64_t *t = n->tag + set * n->ways, *s = n->stamp + set * n->ways;
    for (uint64_t w = 0; w < n->ways; w++)
        if (t[w] == line) {
            s[w] = now;
            n->hits++;
            return true;
        }
    n->misses++;
    uint64_t victim = n->ways;
    for (uint64_t w = 0; w < n->ways && victim == n->ways; w++)
        if (t[w] == UINT64_MAX)
            victim = w;
    if (victim == n->ways) {
        n->evictions++;
        victim = 0;
        for (uint64_t w = 1; w < n->ways; w++)
            if (s[w] < s[victim])
                victim = w;
    }
    t[victim] = line;
    s[victim] = now;
    return false;
}

static bool naive_contains(const Naive *n, uint64_t addr)
{
    uint64_t sets = n->size / n->line / n->ways;
    uint64_t line = addr / n->line, set = line % sets;
    for (uint64_t w = 0; w < n->ways; w++)
        if (n->tag[set * n->ways + w] == line)
            return true;
    return false;
}

START_TEST(matches_naive_lru)
{
    CacheGeom g[3] = { { 1024, 4, 32, 3 }, { 4096, 8, 64, 11 }, { 16384, 16, 64, 40 } };
    CacheHier *c = cache_new(&g[0], &g[1], &g[2], MEM, NULL);
    Naive n[3];
    for (int i = 0; i < 3; i++)
        naive_init(&n[i], &g[i]);
    uint64_t lcg = 12345, expect_cycles = 0;
    for (uint64_t k = 1; k <= 200000; k++) {
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        /* Mostly a 24 KiB working set, sometimes far away. */
        uint64_t addr = (lcg >> 33) % ((lcg & 0xF) ? 24576 : 1u << 22);
        unsigned want = MEM;
        for (int i = 0; i < 3; i++)
            if (naive_access(&n[i], addr, k)) {
                want = g[i].latency;
                break;
            }
        expect_cycles += want;
        ck_assert_uint_eq(cache_access(c, addr, k & 1), want);
    }
    const CacheStats *st = cache_stats(c);
    ck_assert_uint_eq(st->cycles, expect_cycles);
    ck_assert_uint_eq(st->level[0].hits + st->level[0].misses, st->accesses);
    ck_assert_uint_eq(st->level[1].hits + st->level[1].misses, st->level[0].misses);
    ck_assert_uint_eq(st->level[2].hits + st->level[2].misses, st->level[1].misses);
    ck_assert_uint_eq(st->mem, st->level[2].misses);
    for (int i = 0; i < 3; i++) {
        g_free(n[i].tag);
        g_free(n[i].stamp);
    }
    cache_free(c);
}
END_TEST

/* Every associativity the lookup has its own code for (4, 8, 16: cache.c)
 * and some it has not (1, 2, 3, 32), at every level, followed by every
 * kind of next step (memory; a last level of 4, 8 or 16 ways inline; a
 * call: cache.c's level_fns), with and without the AVX2 lookups of an
 * 8-way last level (each of 4, 8 and 16 ways above it, and a call),
 * reached through every
 * entry point: cache_access_fast (cache_priv.h, the inline path the MMU
 * uses), cache_access and cache_access_from. Each reference's cycles and
 * supplying level, every counter, and the lines present at the end must be
 * the naive model's. The sets are few and the working set spans L1 to
 * beyond L3, so hits land at every way and victims are valid and not. */
typedef struct {
    unsigned ways[3];
} Widths;

/* Whether cache_new can choose its AVX2 lookups on this host. */
static bool host_avx2(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

static const Widths widths[] = {
    { { 1, 2, 3 } }, { { 2, 4, 8 } }, { { 3, 8, 16 } }, { { 4, 8, 16 } },
    { { 8, 16, 4 } }, { { 16, 32, 8 } }, { { 4, 3, 32 } }, { { 32, 1, 16 } },
    { { 8, 4, 16 } }, { { 16, 4, 4 } }, { { 8, 8, 8 } }, { { 16, 8, 4 } },
    { { 4, 16, 8 } },
};

/* avx2: whether cache_new may choose its AVX2 lookups (cache_priv.h);
 * where the host has AVX2 it must then have chosen one for every last
 * level of 8 ways below L1 (and the portable ones otherwise). */
static void check_widths(const Widths *wd, unsigned nlevels, bool avx2)
{
    static const unsigned sets[3] = { 4, 8, 16 }, line[3] = { 32, 64, 64 };
    static const unsigned lat[3] = { 2, 9, 30 };
    CacheGeom g[3] = { { 0 } };
    for (unsigned i = 0; i < nlevels; i++)
        g[i] = (CacheGeom){ sets[i] * wd->ways[i] * line[i], wd->ways[i], line[i], lat[i] };
    cache_avx2_allowed = avx2;
    CacheHier *c = cache_new(&g[0], &g[1], &g[2], MEM, NULL);
    cache_avx2_allowed = true;
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(cache_levels(c), nlevels);
    ck_assert_int_eq(c->avx2, avx2 && host_avx2() && nlevels >= 2 && wd->ways[nlevels - 1] == 8);
    Naive n[3];
    for (unsigned i = 0; i < nlevels; i++)
        naive_init(&n[i], &g[i]);
    uint64_t span = 0;                            /* twice the largest level */
    for (unsigned i = 0; i < nlevels; i++)
        span = MAX(span, 2 * (uint64_t)g[i].size);
    uint64_t lcg = 777 + wd->ways[0], cycles = 0, writes = 0, mem = 0, uncached = 0;
    const uint64_t steps = 12000;
    for (uint64_t k = 1; k <= steps; k++) {
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        /* Mostly a few lines (hits in L1's ways), else the whole span. */
        uint64_t addr = (lcg >> 33) % ((lcg >> 20) & 3 ? 4 * line[0] * wd->ways[0] : span);
        bool write = (lcg >> 12) & 1;
        if (k % 7 == 0) {        /* now and then an uncached one: memory, no lookup */
            ck_assert_uint_eq(cache_access_uncached(c, addr, write), MEM);
            uncached++;
            mem++;
            cycles += MEM;
            writes += write;
        }
        unsigned want = MEM, want_from = CACHE_MEM;
        for (unsigned i = 0; i < nlevels; i++)
            if (naive_access(&n[i], addr, k)) {
                want = lat[i];
                want_from = i;
                break;
            }
        mem += want_from == CACHE_MEM;
        cycles += want;
        writes += write;
        CacheLevel from = CACHE_MEM;
        switch (k % 3) {
        case 0:
            ck_assert_uint_eq(cache_access_fast(c, addr, write), want);
            break;
        case 1:
            ck_assert_uint_eq(cache_access(c, addr, write), want);
            break;
        default:
            ck_assert_uint_eq(cache_access_from(c, addr, write, &from), want);
            ck_assert_uint_eq(from, want_from);
        }
    }
    const CacheStats *st = cache_stats(c);
    ck_assert_uint_eq(st->accesses, steps);
    ck_assert_uint_eq(st->writes, writes);
    ck_assert_uint_eq(st->mem, mem);
    ck_assert_uint_eq(st->uncached, uncached);
    ck_assert_uint_eq(st->cycles, cycles);
    for (unsigned i = 0; i < nlevels; i++) {
        ck_assert_uint_eq(st->level[i].hits, n[i].hits);
        ck_assert_uint_eq(st->level[i].misses, n[i].misses);
        ck_assert_uint_eq(st->level[i].evictions, n[i].evictions);
        ck_assert_uint_gt(n[i].evictions, 0);     /* the stream reached every victim */
        for (uint64_t a = 0; a < span; a += line[i])
            ck_assert_int_eq(cache_contains(c, (CacheLevel)i, a), naive_contains(&n[i], a));
        g_free(n[i].tag);
        g_free(n[i].stamp);
    }
    ck_assert_uint_gt(st->level[0].hits, steps / 2);
    cache_free(c);
}

START_TEST(each_width_matches_naive_lru)
{
    for (size_t i = 0; i < G_N_ELEMENTS(widths); i++)
        for (unsigned nlevels = 1; nlevels <= 3; nlevels++)
            for (int avx2 = 0; avx2 <= 1; avx2++)
                check_widths(&widths[i], nlevels, avx2);
}
END_TEST

/* ---- statistics arithmetic ------------------------------------------- */

/* The same stream of references, cached and uncached, for both runs. */
static void run_stream(CacheHier *c, uint64_t *lcg, unsigned n, uint64_t span)
{
    for (unsigned k = 0; k < n; k++) {
        *lcg = *lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t addr = (*lcg >> 33) % span;
        bool write = (*lcg >> 13) & 1;
        if ((*lcg >> 40) % 9 == 0)
            cache_access_uncached(c, addr, write);
        else
            cache_access_fast(c, addr, write);
    }
}

static void stats_expect(const CacheStats *got, const CacheStats *a, const CacheStats *b,
                         uint64_t times)
{
    /* got == a + times x b, counter by counter (cache_state.h). */
    for (unsigned l = 0; l < CACHE_MAX_LEVELS; l++) {
        ck_assert_uint_eq(got->level[l].hits, a->level[l].hits + times * b->level[l].hits);
        ck_assert_uint_eq(got->level[l].misses,
                          a->level[l].misses + times * b->level[l].misses);
        ck_assert_uint_eq(got->level[l].evictions,
                          a->level[l].evictions + times * b->level[l].evictions);
    }
    ck_assert_uint_eq(got->accesses, a->accesses + times * b->accesses);
    ck_assert_uint_eq(got->writes, a->writes + times * b->writes);
    ck_assert_uint_eq(got->mem, a->mem + times * b->mem);
    ck_assert_uint_eq(got->uncached, a->uncached + times * b->uncached);
    ck_assert_uint_eq(got->cycles, a->cycles + times * b->cycles);
}

/* cache_state_stats_add adds times x a delta to every statistic, and
 * cache_reset_stats zeroes them, both such that later references count on
 * from there: a hierarchy that was given the delta, then runs more, ends
 * with the statistics of an identical one that ran the same references
 * plus times x the delta. Evictions and fills of empty ways both occur (the
 * stream starts cold and overflows every level); with 0 to 3 levels. */
START_TEST(stats_add_and_reset)
{
    const CacheGeom g[3] = { { 512, 4, 32, 3 }, { 2048, 8, 64, 11 }, { 8192, 2, 64, 40 } };
    for (unsigned nl = 0; nl <= 3; nl++) {
        const CacheGeom *p[3] = { nl > 0 ? &g[0] : NULL, nl > 1 ? &g[1] : NULL,
                                  nl > 2 ? &g[2] : NULL };
        CacheHier *x = cache_new(p[0], p[1], p[2], MEM, NULL);
        CacheHier *y = cache_new(p[0], p[1], p[2], MEM, NULL);
        uint64_t lx = 99, ly = 99;
        run_stream(x, &lx, 3000, 32768);
        run_stream(y, &ly, 3000, 32768);
        CacheStats a = *cache_stats(y), b, d, zero = { 0 };
        run_stream(y, &ly, 2000, 32768);
        b = *cache_stats(y);
        cache_state_stats_diff(&d, &b, &a);
        ck_assert_uint_gt(d.uncached, 0);
        if (nl)
            ck_assert_uint_gt(d.level[nl - 1].evictions, 0);
        cache_state_stats_add(y, &d, 3);
        stats_expect(cache_stats(y), &b, &d, 3);
        /* Both run on: y stays x + 3 d (x ran the 2000 too). */
        run_stream(x, &lx, 2000, 32768);
        run_stream(x, &lx, 1500, 32768);
        run_stream(y, &ly, 1500, 32768);
        CacheStats xs = *cache_stats(x);
        stats_expect(cache_stats(y), &xs, &d, 3);
        /* Reset: all zero, then only what follows counts. */
        cache_reset_stats(y);
        stats_expect(cache_stats(y), &zero, &zero, 0);
        CacheStats x0 = *cache_stats(x), x1;
        run_stream(x, &lx, 1000, 32768);
        run_stream(y, &ly, 1000, 32768);
        x1 = *cache_stats(x);
        cache_state_stats_diff(&d, &x1, &x0);
        stats_expect(cache_stats(y), &zero, &d, 1);
        cache_free(x);
        cache_free(y);
    }
}
END_TEST

/* With no cache, every entry point costs memory's latency and counts it. */
START_TEST(no_cache_every_entry)
{
    CacheHier *c = cache_new(NULL, NULL, NULL, 9, NULL);
    CacheLevel from = CACHE_L1;
    ck_assert_uint_eq(cache_access_fast(c, 0, true), 9);
    ck_assert_uint_eq(cache_access_fast(c, UINT64_C(0xFFFFFFFFF), false), 9);
    ck_assert_uint_eq(cache_access(c, 0x40, false), 9);
    ck_assert_uint_eq(cache_access_from(c, 0x40, true, &from), 9);
    ck_assert_uint_eq(from, CACHE_MEM);
    ck_assert_uint_eq(cache_probe(c, 0), CACHE_MEM);
    const CacheStats *st = cache_stats(c);
    ck_assert_uint_eq(st->accesses, 4);
    ck_assert_uint_eq(st->writes, 2);
    ck_assert_uint_eq(st->mem, 4);
    ck_assert_uint_eq(st->cycles, 36);
    cache_free(c);
}
END_TEST

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, two_by_two_by_hand);
    tcase_add_test(tc, latency_by_level);
    tcase_add_test(tc, larger_l2_line);
    tcase_add_test(tc, uncached_never_fills);
    tcase_add_test(tc, walk_cost_depends_on_where_tables_are);
    tcase_add_test(tc, rejects_bad_geometry);
    tcase_add_test(tc, matches_naive_lru);
    tcase_add_test(tc, each_width_matches_naive_lru);
    tcase_add_test(tc, no_cache_every_entry);
    tcase_add_test(tc, stats_add_and_reset);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cache_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
