/* Replay: drive one booted machine (kernel_model/machine.h) through a
 * vmsplit trace (trace.h), event by event:
 *
 *   user      the task's user-mode working-set loop (stubs/user.asm) runs
 *             the event's instructions over its pages: after a flush its
 *             TLB entries walk again, which is part of what 4G/4G costs
 *   syscall   the call runs from user mode through the layout's stubs; its
 *             body follows the profile (syscalls.ini) with the trace's byte
 *             counts; a blocked call followed by a switch switches inside
 *             the call, as the scheduler would
 *   switch    a timer interrupt whose handler schedules the task (pids the
 *             trace never forked become tasks when first seen)
 *   fork      a new task (page tables, kernel stack); exit frees it
 *   mmap...   counted (their syscalls carry the cost); a successful munmap
 *             or mprotect, or a brk that moves the break down, makes its
 *             syscall end with __flush_tlb(), a CR3 reload, as Linux 2.6
 *             i386 does on a uniprocessor (kernel_model/body.c); the model's
 *             working set is its own region, so no pages come or go
 *
 * Lowmem occupancy follows the replay: page tables and kernel stacks per
 * task, slab per syscall (released by close and at exit), against the lowmem
 * the lowmem model leaves free after boot for the layout and RAM.
 *
 * Every figure comes from the machine's counters. Memory does not grow with
 * the trace: per-syscall latencies go into fixed histograms. */
#ifndef VMSPLIT_REPLAY_REPLAY_H
#define VMSPLIT_REPLAY_REPLAY_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "preset/preset.h"
#include "kernel_model/layout.h"
#include "kernel_model/lowmem.h"
#include "kernel_model/measure.h"
#include "kernel_model/usermm.h"
#include "kernel_model/userwork.h"
#include "replay/latency_hist.h"
#include "tlb/hierarchy.h"
#include "tlb/tlb_stats.h"

typedef struct {
    const Preset *preset;
    const Layout *layout;
    uint64_t ram;                /* installed RAM, bytes */
    bool sysenter;               /* enter with sysenter instead of int 0x80 */
    const char *profiles;        /* syscall profile table; NULL: bundled */
    const char *fault_profiles;  /* page-fault profiles (v2 traces); NULL: bundled faults.ini */
    const char *stubs;           /* entry/exit stubs; NULL: the layout's */
    uint32_t struct_page;        /* lowmem model; 0: its default */
    bool progress;               /* a progress line on stderr */
    const TlbHierConfig *tlb;    /* TLB geometry override; NULL: the preset's */
    bool no_fast_forward;        /* run every user-work instruction (machine.h) */
    bool no_host_shortcuts;      /* no decoded cache, no MMU memos (machine.h) */
} ReplayConfig;

/* Totals of one replay, defined once for every output. */
#define REPLAY_TOTALS(X)                                                        \
    X(cycles, "simulated cycles in all")                                       \
    X(user_cycles, "cycles of user work")                                      \
    X(syscall_cycles, "cycles of system calls, user mode to user mode")        \
    X(switch_cycles, "cycles of context switches (timer interrupt + schedule)") \
    X(insns, "instructions")                                                   \
    X(user_insns, "user-mode instructions")                                    \
    X(events, "trace events")                                                  \
    X(syscalls, "system calls")                                                \
    X(unknown_syscalls, "system calls with no profile (generic profile used)") \
    X(switches, "context switches")                                            \
    X(forks, "forks")                                                          \
    X(exits, "exits")                                                          \
    X(map_events, "mmap/munmap/mprotect/brk events")                           \
    X(mm_flushes, "TLB flushes (__flush_tlb) by munmap, mprotect, brk shrinking") \
    X(cr3_writes, "CR3 writes")                                                \
    X(cr3_cycles, "cycles of MOV CR3 and its PDPTE loads")                     \
    X(walks, "page walks")                                                     \
    X(walk_cycles, "cycles of page walks")                                     \
    X(kmaps, "kmap_atomic calls (4g4g uaccess)")                               \
    X(copied, "bytes copied to and from user space")                           \
    X(lowmem_start_free, "free lowmem after boot, bytes")                      \
    X(lowmem_peak, "peak lowmem the replay allocated, bytes")                  \
    X(lowmem_end, "lowmem allocated at the end, bytes")

typedef struct {
#define X(name, desc) uint64_t name;
    REPLAY_TOTALS(X)
#undef X
    int64_t lowmem_exhausted_at; /* event index, -1 if never */
} ReplayTotals;

typedef struct {
    const char *name;            /* interned */
    bool known;                  /* has its own profile */
    SyscallCost sum;
    LatencyHist hist;
} ReplaySyscall;

typedef struct ReplayResult ReplayResult;

ReplayResult *replay_run(const ReplayConfig *cfg, const char *trace, GError **err);

/* Several replays, at most `parallel` at a time, each on its own thread
 * (replays share nothing but read-only presets). Each job gets its result
 * or its error. */
typedef struct {
    ReplayConfig cfg;
    const char *trace;
    ReplayResult *result;
    GError *err;
} ReplayJob;
void replay_run_jobs(ReplayJob *jobs, size_t n, unsigned parallel);
void replay_result_free(ReplayResult *r);

const ReplayTotals *replay_totals(const ReplayResult *r);
const TlbStats *replay_tlb(const ReplayResult *r);
const ReplayConfig *replay_config(const ReplayResult *r);
double replay_seconds(const ReplayResult *r);     /* simulated */
double replay_host_seconds(const ReplayResult *r);
/* What the user-work fast-forward skipped (in no output: the figures are
 * the same without it). */
const UserWorkSkips *replay_fast_forward(const ReplayResult *r);
/* Per syscall name, sorted by total cycles, descending. */
guint replay_nsyscalls(const ReplayResult *r);
const ReplaySyscall *replay_syscall(const ReplayResult *r, guint i);

size_t replay_total_count(void);
const char *replay_total_name(size_t i);
const char *replay_total_desc(size_t i);
uint64_t replay_total_value(const ReplayTotals *t, size_t i);

/* Version-2 traces: the programs' own references (replay_refs.h) and
 * their page faults (kernel_model/usermm.h). has_refs is false for a
 * version-1 trace: then every figure here is 0 and no output shows them. */
typedef struct {
    bool has_refs;
    uint64_t events, lines, refs, insns;
    uint64_t cycles;             /* of the refs work, faults excluded (in user_cycles) */
    uint64_t walk_cycles;        /* of those: TLB refills */
    uint64_t collisions;
    UserMmStats faults;
    /* Every syscall that returned to its own task: the EAX the program saw
     * against the trace's return value (kept for every trace, shown by
     * no output; the tests check it). */
    uint64_t results_checked, results_wrong;
} ReplayRefs;
const ReplayRefs *replay_refs(const ReplayResult *r);
/* Cycles of page faults: every fault's run plus the TLB flushes forks and
 * execs made. */
uint64_t replay_fault_cycles(const ReplayResult *r);

/* Where a replay's cycles went, by part (exclusive; they sum to cycles):
 * the syscalls' entry/exit, CR3 writes, TLB refills, uaccess and body
 * (measure.h), user work (without the next part) and context switches;
 * then, for version-2 traces, the refills of the programs' own references
 * and the page faults. */
#define REPLAY_NPARTS 9
#define REPLAY_PART_REFILLS 7
#define REPLAY_PART_FAULTS 8
extern const char *const replay_part_names[REPLAY_NPARTS];
void replay_breakdown(const ReplayResult *r, double parts[REPLAY_NPARTS]);

/* Outputs (replay_report.c). */
void replay_print_text(const ReplayResult *r, const char *trace, FILE *out);
void replay_to_json(const ReplayResult *r, JsonBuilder *b);
void replay_print_csv_header(FILE *out);
void replay_print_csv(const ReplayResult *r, FILE *out);   /* the rows, no header */
/* The replay's summary row (syscall "ALL": all syscalls, the rate, and
 * against base, if not NULL, the overhead and the extra cycles by part). */
void replay_print_csv_summary(const ReplayResult *r, const ReplayResult *base, FILE *out);
/* Side by side (compare): the first result is the baseline. */
void replay_print_compare(ReplayResult *const *r, size_t n, const char *trace, FILE *out);

#endif
