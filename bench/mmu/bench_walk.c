/* Walker benchmark: host nanoseconds per pae_walk() on warm page tables.
 *
 * Page tables are built once, every page is walked once with a write so
 * that A and D are already set (steady state: a walk then makes reads
 * only, as in a long simulation where TLB refills dominate), and then a
 * fixed pseudo-random sequence of linear addresses is walked. Each
 * configuration runs RUNS times; the median is reported, with the spread.
 *
 *   4 KiB leaves: 4096 pages over 8 page tables (16 MiB), PDE + PTE reads
 *   2 MiB leaves: 512 pages in one page directory (1 GiB), PDE read only
 *
 * physmem_read64 alone is measured too: a 4 KiB walk makes two of them,
 * so it says how much of a walk is the sparse-memory lookup.
 *
 * Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the development
 * machine is shared, and wall-clock time there counts the time the process
 * waits for a core. The wall-clock median is printed beside it.
 *
 * This is a benchmark (meson benchmark(), 'meson test --benchmark'), never
 * a test: it prints figures and asserts nothing about speed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mmu/pae.h"
#include "mmu/physmem.h"

#include "../bench_util.h"

#define RUNS 7
#define WALKS_PER_RUN 2000000u
#define NADDR 8192u                     /* power of two */

typedef struct {
    double cpu, wall;            /* ns */
} Stamp;

static Stamp now(void)
{
    struct timespec c, w;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    clock_gettime(CLOCK_MONOTONIC, &w);
    return (Stamp){ c.tv_sec * 1e9 + c.tv_nsec, w.tv_sec * 1e9 + w.tv_nsec };
}

/* Per-operation cost since t0, CPU and wall. */
static Stamp since(Stamp t0, unsigned n)
{
    Stamp t1 = now();
    return (Stamp){ (t1.cpu - t0.cpu) / n, (t1.wall - t0.wall) / n };
}

static void median_of(const Stamp *s, double *cpu, double *wall)
{
    double c[RUNS], w[RUNS];
    for (int r = 0; r < RUNS; r++) {
        c[r] = s[r].cpu;
        w[r] = s[r].wall;
    }
    qsort(c, RUNS, sizeof c[0], bench_cmp_double);
    qsort(w, RUNS, sizeof w[0], bench_cmp_double);
    cpu[0] = c[0];
    cpu[1] = c[RUNS / 2];
    cpu[2] = c[RUNS - 1];
    *wall = w[RUNS / 2];
}

/* xorshift32: a fixed, portable address sequence. */
static uint32_t rng_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* User space 0x08000000.. with 4 KiB pages (PDPTE 0), kernel space
 * 0xc0000000.. with 2 MiB pages (PDPTE 3). */
static void build_tables(PhysMem *pm)
{
    physmem_write64(pm, 0x1000, 0x2001);                    /* PDPTE 0 -> PD 0x2000 */
    physmem_write64(pm, 0x1018, 0x3001);                    /* PDPTE 3 -> PD 0x3000 */
    for (unsigned t = 0; t < 8; t++) {                      /* PDEs 0x40.. -> PTs */
        uint64_t pt = 0x100000 + 0x1000 * (uint64_t)t;
        physmem_write64(pm, 0x2000 + 8 * (0x40 + t), pt | 0x7);
        for (unsigned i = 0; i < 512; i++)                  /* frames above 4 GiB */
            physmem_write64(pm, pt + 8 * i, (0x100000000ULL + ((uint64_t)(t * 512 + i) << 12)) | 0x7);
    }
    for (unsigned i = 0; i < 512; i++)                      /* 2 MiB kernel pages, G */
        physmem_write64(pm, 0x3000 + 8 * i, ((uint64_t)i << 21) | 0x183);
}

typedef struct {
    const char *name;
    uint32_t base, span;         /* linear range walked */
    Access access;
    int cpl;
} Config;

static Stamp run_walks(const PaeRegs *regs, PhysMem *pm, const uint32_t *lin, Access acc,
                       int cpl, uint64_t *sum, unsigned *faults)
{
    PaeWalk w;
    Stamp t0 = now();
    for (unsigned i = 0; i < WALKS_PER_RUN; i++) {
        if (!pae_walk(regs, pm, lin[i & (NADDR - 1)], acc, cpl, &w))
            (*faults)++;
        *sum += w.paddr;
    }
    return since(t0, WALKS_PER_RUN);
}

static void bench_config(const Config *c, const PaeRegs *regs, PhysMem *pm)
{
    uint32_t *lin = malloc(NADDR * sizeof *lin);
    uint32_t seed = 2463534242u;
    for (unsigned i = 0; i < NADDR; i++)
        lin[i] = c->base + rng_next(&seed) % c->span;
    PaeWalk w;
    for (unsigned i = 0; i < NADDR; i++)                    /* set A and D everywhere */
        pae_walk(regs, pm, lin[i], ACCESS_WRITE, c->cpl, &w);
    uint64_t sum = 0;
    unsigned faults = 0;
    Stamp t[RUNS];
    run_walks(regs, pm, lin, c->access, c->cpl, &sum, &faults);     /* host-cache warm-up */
    for (int r = 0; r < RUNS; r++)
        t[r] = run_walks(regs, pm, lin, c->access, c->cpl, &sum, &faults);
    double cpu[3], wall;
    median_of(t, cpu, &wall);
    printf("%-34s median %6.2f ns/walk (%5.1f M walks/s)  min %6.2f max %6.2f  wall %6.2f  "
           "faults %u [sum %llx]\n",
           c->name, cpu[1], 1e3 / cpu[1], cpu[0], cpu[2], wall, faults, (unsigned long long)sum);
    free(lin);
}

/* The sparse-memory lookup alone, on the same page-table frames. */
static void bench_physmem(const PhysMem *pm)
{
    uint64_t *pa = malloc(NADDR * sizeof *pa);
    uint32_t seed = 88172645u;
    for (unsigned i = 0; i < NADDR; i++)
        pa[i] = 0x100000 + (rng_next(&seed) % (8 * 4096)) / 8 * 8;
    Stamp t[RUNS];
    uint64_t sum = 0;
    for (int r = 0; r < RUNS; r++) {
        Stamp t0 = now();
        for (unsigned i = 0; i < WALKS_PER_RUN; i++)
            sum += physmem_read64(pm, pa[i & (NADDR - 1)]);
        t[r] = since(t0, WALKS_PER_RUN);
    }
    double cpu[3], wall;
    median_of(t, cpu, &wall);
    printf("%-34s median %6.2f ns/read                    min %6.2f max %6.2f  wall %6.2f  "
           "[sum %llx]\n",
           "physmem_read64 (page-table frames)", cpu[1], cpu[0], cpu[2], wall,
           (unsigned long long)sum);
    free(pa);
}

int main(void)
{
    PhysMem *pm = physmem_new();
    build_tables(pm);
    PaeRegs regs = { .wp = true, .nxe = true };
    if (!pae_load_cr3(&regs, pm, 0x1000, NULL)) {
        fprintf(stderr, "bench-walk: CR3 load failed\n");
        return 1;
    }
    static const Config configs[] = {
        { "4 KiB leaf, read, CPL 3", 0x08000000u, 8 * 512 * 4096u, ACCESS_READ, 3 },
        { "4 KiB leaf, write (D set), CPL 3", 0x08000000u, 8 * 512 * 4096u, ACCESS_WRITE, 3 },
        { "2 MiB leaf, read, CPL 0", 0xc0000000u, 0x40000000u, ACCESS_READ, 0 },
        { "2 MiB leaf, exec, CPL 0", 0xc0000000u, 0x40000000u, ACCESS_EXEC, 0 },
    };
    printf("pae_walk on warm page tables, A/D already set; %u walks per run, median of %d runs\n"
           "(thread CPU time; 'wall' is the wall-clock median)\n",
           WALKS_PER_RUN, RUNS);
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        bench_config(&configs[i], &regs, pm);
    bench_physmem(pm);
    physmem_free(pm);
    return 0;
}
