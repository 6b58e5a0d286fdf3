/* A generated workload at a syscall rate it really reaches.
 *
 * `--rate R` means: replayed on the chosen CPU under the classic 3G/1G
 * split (the kernel the workload's rate is stated for), in the paging mode
 * it will run in (PAE unless the target says legacy), the workload makes
 * R system calls per second of simulated time, kernel time included. The
 * user work per syscall that gives it is not clock / R: the kernel's share
 * of each syscall and the user work's own cycles per instruction (TLB and
 * cache misses) both count. gen_rate_solve finds it by replaying:
 *
 *   per syscall, time = k + c x u   (k: everything but user work; c: the
 *                                    user time one more unit of u adds per
 *                                    syscall: cycles per instruction / clock
 *                                    x the share of syscalls that follow
 *                                    user work; u: the generator's user
 *                                    instructions per syscall)
 *
 * One replay at a guess u0 measures k and c; the next guess is
 * u = (1/R - k) / c. Both drift a little with u (fast-forwarded loops, the
 * working set's TLB footprint), so it repeats until the realised rate is
 * within GEN_RATE_TOLERANCE of R, at most GEN_RATE_MAX_ROUNDS replays.
 * A rate above what the kernel part alone allows (1/k) is an error that
 * says the most the workload can do on that CPU.
 *
 * The paging mode matters: the same user work costs fewer cycles under
 * legacy 32-bit paging on workloads with a TLB footprint (a 2-level walk,
 * 4-byte entries), e.g. gen:db on p4-northwood at 200,000/s solved under
 * PAE realises 208,201/s under legacy 3g1g (4 % high), so a sweep's legacy
 * point is solved in legacy mode (report/runner_replay.c).
 *
 * Deterministic: the generators and the replay are, so the same options
 * give the same user_insns on every host. */
#ifndef VMSPLIT_REPLAY_GEN_RATE_H
#define VMSPLIT_REPLAY_GEN_RATE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "mmu/pae.h"
#include "preset/preset.h"
#include "replay/gen.h"

#define GEN_RATE_TOLERANCE 0.005     /* 0.5 %: well inside the 5 % users are promised */
#define GEN_RATE_MAX_ROUNDS 8

typedef struct {
    double rate;                 /* syscalls per simulated second to reach */
    const Preset *preset;        /* the CPU it is reached on */
    bool sysenter;               /* kernel entry: sysenter, else int 0x80 */
    PagingMode paging;           /* 3g1g's page tables: PAGING_PAE (0) or legacy */
} GenRateTarget;

typedef struct {
    uint64_t user_insns;         /* per syscall: give it to the generator */
    double realised;             /* syscalls per second the last replay reached */
    unsigned rounds;             /* replays it took */
} GenRateResult;

/* Solve for gen with options o (count, seed, pages... as they will be
 * used; o's own rate and user_insns are ignored). */
bool gen_rate_solve(const Generator *gen, const GenOptions *o, const GenRateTarget *t,
                    GenRateResult *res, GError **err);

/* The realised rate of one trace replayed under 3g1g on preset p, in
 * paging mode `paging`:
 * syscalls per simulated second; sets *kernel_s (seconds per syscall not
 * spent in user work), *user_s_per_insn, and the totals of syscalls and
 * user instructions. */
bool gen_rate_measure(const char *trace, const Preset *p, bool sysenter, PagingMode paging,
                      double *rate, double *kernel_s, double *user_s_per_insn, uint64_t *syscalls,
                      uint64_t *user_insns, GError **err);

#endif
