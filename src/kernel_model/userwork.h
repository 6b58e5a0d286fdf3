/* The user-work loop (stubs/user.asm, user_work) fast-forwarded exactly.
 *
 * The loop steps a cursor through a working set and wraps, so its address
 * sequence repeats every P = ceil(bytes / stride) iterations. Timing in
 * vmsplit depends on the addresses, never on the data, so the memory
 * system (TLBs, PDE cache, caches, replacement state, A/D bits: the
 * canonical snapshot of mmu_state.h, plus the core's front end) moves
 * from one period boundary to the next by the same deterministic function.
 * userwork_fast_forward runs whole periods on the core until the state at
 * a boundary equals the state q periods earlier (Brent's cycle detection;
 * q = 1 is a fixed point, the usual case; a cyclic stream longer than a
 * fully associative LRU TLB repeats its way assignment only every few
 * periods). From then on every block of q periods counts exactly what the
 * last one did, and m blocks are skipped at once:
 *   - every statistic (core cycles and instructions, MMU, TLB hierarchy
 *     and arrays, caches) gets m times that block's delta;
 *   - the working set gets what the skipped iterations would have added:
 *     the word first visited with ECX = c receives
 *       M c - P M (M - 1) / 2   (mod 2^32; M = m q periods skipped)
 *     written to physical memory on the host side, not as modelled
 *     references (those are already in the deltas);
 *   - ECX drops by M P; EBX is back at the start, as after any period;
 *     EAX holds the last word stored.
 * The memory system is left in the state the block started from, which
 * is the state the skipped blocks would have left (its raw LRU clocks
 * are older, but they are compared only by rank). The rest of the run
 * (1 to q P iterations, with the final DEC and JNZ) runs too, its last
 * iteration on the core, so the flags and registers at the end come from
 * real execution.
 *
 * The iterations are made as the references the core would make for
 * them, without interpreting the loop (userwork_refs.h), but for the
 * run's first iteration on each of the loop's pages and its last
 * iteration: those on the core show that none of the pages faults and
 * what the core itself charges an iteration.
 *
 * A cycle found is kept per loop (CR3, va, bytes, stride): the state its
 * block starts from, its length and its block's counts. A later run of the
 * same loop compares its state at each boundary with that start and, on a
 * match, skips at once: the loop's future is a function of that state and
 * its parameters, so it is in the same cycle. Statistics being reset in
 * between changes nothing (the counts kept are deltas). The match may
 * ignore what the loop provably never reaches: in a true-LRU TLB array or
 * cache level where the learned block only hit, entries and lines below
 * the loop's own (which must be on top, in the learned order) may differ
 * in content and order, as different system calls before the loop leave
 * them (mmu_state_part_equivalent; the proof is in tlb/tlb_state.c).
 *
 * The caches enter a snapshot only through the sets the loop can touch
 * (its frames and their PDEs and PTEs: code fetches are not looked up in
 * the caches, mmu.h, and the caches neither prefetch nor write back): the
 * other sets neither change nor matter while the loop runs, and lines a
 * kernel path left elsewhere do not keep a later run from reusing a cycle.
 *
 * When no cycle appears nothing is skipped, which is always correct: the
 * random TLB policy draws from its generator on every eviction, so a
 * working set that evicts never repeats its state. Strides below 4 (the
 * words would overlap) and TLB policies that cannot encode their state
 * canonically are not fast-forwarded either. */
#ifndef VMSPLIT_KERNEL_MODEL_USERWORK_H
#define VMSPLIT_KERNEL_MODEL_USERWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"

/* What was fast-forwarded (machine_fast_forward_skips). */
typedef struct {
    uint64_t runs;               /* loop runs that skipped periods */
    uint64_t periods;            /* periods skipped */
    uint64_t insns;              /* instructions accounted without running */
    uint64_t reused;             /* runs that skipped with a cycle an earlier run found */
    uint64_t periods_run;        /* periods run while looking for a cycle */
    uint64_t insns_refs;         /* instructions run as references, not on the core
                                  * (userwork_refs.h) */
} UserWorkSkips;

/* The caller runs the core: exactly steps steps; true if they all ran and
 * the core is at the loop head again in user mode. On false the caller
 * finds out why (a fault, a breakpoint) from its own state. */
typedef bool (*UserWorkRunFn)(void *user, uint64_t steps);

/* Host buffers for snapshots, kept from one run to the next so that a
 * replay does not allocate a snapshot per event. No modelled state. */
typedef struct UserWorkScratch UserWorkScratch;
UserWorkScratch *userwork_scratch_new(void);
void userwork_scratch_free(UserWorkScratch *s);

typedef struct {
    Cpu *cpu;
    uint32_t code_lo, code_hi;   /* the loop's code (its ITLB entries count) */
    uint32_t va, bytes, stride;  /* the working set, as the loop got them */
    UserWorkRunFn run;
    void *user;
    UserWorkScratch *scratch;
} UserWork;

/* Whether handing a run of iters iterations to userwork_fast_forward can
 * gain anything: a stride of at least 4 (narrower words overlap) and at
 * least USERWORK_MIN_ITERS iterations, enough that those made as
 * references (all but the core's few) repay what the fast-forward costs
 * a run before it makes any. Host-speed only; no modelled figure changes;
 * tests/replay/test_replay_ffwd.c (docs/speed.md gives the measurement). */
#define USERWORK_MIN_ITERS 32
bool userwork_worth(uint64_t iters, uint32_t stride);

/* With the core at the loop head (the .loop label), ECX iterations to go
 * (at least one) and EBX at va: run and skip as above (a run too short to
 * skip a period, or whose state cannot be compared, only has its
 * iterations made as references). On true the core is at the loop head
 * with at least one iteration to go, to be run normally. False if w->run
 * returned false. */
bool userwork_fast_forward(const UserWork *w, UserWorkSkips *skips);

#endif
