/* `vmsplit import-strace`: real `strace -f -tt -T` output to a vmsplit trace.
 *
 * What becomes what (workloads/FORMAT.md has the full story):
 *   - each syscall line (or unfinished/resumed pair, joined) -> a `sys` event
 *     with bytes in/out from syscall_table.h's rules and its -T duration;
 *   - the gap between a pid's previous syscall returning and its next one
 *     starting -> a `user` event of (gap - overhead) x clock x IPC
 *     instructions. Time inside a syscall (blocked or not) is never user work;
 *   - clone/fork/vfork -> `fork`, execve -> `exec`, mmap/munmap/mprotect/brk
 *     -> mapping events, "--- SIG" -> `signal`, "+++ exited/killed" -> `exit`;
 *   - the events are put in the order one CPU would run them (a task keeps
 *     the CPU until it blocks, exits or its slice ends; uniproc_sched.h), and
 *     a `switch` goes wherever the running pid changes.
 *
 * Lines that cannot be parsed are counted and the first few kept for the
 * report; with strict set the first one is an error. Unknown syscall names
 * pass through as `sys` events and are counted by name.
 *
 * Streaming: memory is per live pid (its unfinished call, if any), never
 * per line. */
#ifndef VMSPLIT_REPLAY_STRACE_IMPORT_H
#define VMSPLIT_REPLAY_STRACE_IMPORT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay/trace.h"
#include "replay/uniproc_sched.h"

/* Defaults, written into every imported trace's header. */
#define STRACE_DEFAULT_CLOCK_MHZ 2000.0 /* estimate: a 2010s-2020s server core; pass the
                                           traced machine's clock (/proc/cpuinfo) */
#define STRACE_DEFAULT_IPC 1.0          /* estimate: one instruction per cycle, a round
                                           middle for integer code on out-of-order cores */
#define STRACE_DEFAULT_OVERHEAD_US 0.0  /* no tracer overhead removed unless measured */
#define STRACE_DEFAULT_BLOCK_US 100.0   /* estimate: several ptrace round trips (about
                                           15-35 us each on the capture machine, README) */
#define STRACE_DEFAULT_USER_PAGES 16    /* estimate: stack, a little heap, the I/O buffer */
#define STRACE_DEFAULT_USER_PATTERN TRACE_PAT_HOT
#define STRACE_DEFAULT_SLICE_MS 100.0   /* Linux 2.6 kernel/sched.c: "default timeslice
                                           is 100 msecs" (DEF_TIMESLICE) */

/* --order: BLOCK, one CPU's schedule; INTERLEAVE, the log's own order
 * (the scheduler's two orders, uniproc_sched.h, under the option's name). */
typedef enum {
    STRACE_ORDER_BLOCK = UNIPROC_ORDER_BLOCK,
    STRACE_ORDER_INTERLEAVE = UNIPROC_ORDER_INTERLEAVE,
} StraceOrder;

typedef struct {
    double clock_mhz;        /* the traced machine's clock */
    double ipc;              /* instructions per cycle it sustained in user mode */
    double overhead_us;      /* tracer overhead per syscall, taken off every gap */
    double block_us;         /* a call at least this long is marked blocked */
    uint32_t user_pages;     /* working set of imported user work */
    TracePattern user_pattern;
    StraceOrder order;       /* BLOCK: one CPU's schedule (uniproc_sched.h); INTERLEAVE */
    double slice_ms;         /* time slice in BLOCK order */
    uint32_t default_pid;    /* pid for lines strace printed without one */
    bool strict;             /* the first unparseable line is an error */
    const char *command;     /* @command; NULL: taken from the first execve */
    char **header_extra;     /* NULL-terminated "key=value" strings, or NULL */
} StraceImportOptions;

void strace_import_options_init(StraceImportOptions *o);

#define STRACE_IMPORT_SHOWN 5 /* bad lines kept verbatim for the report */

/* The most user work one gap between a pid's calls becomes: 10^15
 * instructions, 1000 `user` events of TRACE_USER_INSNS_MAX (almost six
 * days of a 2 GHz CPU). A longer gap is a clock step or a damaged log,
 * not work; it is cut to this and counted (gaps_capped), so that a bad
 * timestamp cannot make billions of events. */
#define STRACE_MAX_GAP_INSNS (1000 * TRACE_USER_INSNS_MAX)

typedef struct {
    uint64_t lines, events, syscalls, user_events, user_insns;
    uint64_t pids;           /* distinct pids seen */
    uint64_t roots;          /* pids with no fork event (first process, attached, unknown parent) */
    uint64_t forks, execs, exits, signals, switches;
    uint64_t joined;         /* unfinished/resumed pairs joined */
    uint64_t unfinished_lost;/* unfinished calls never resumed (killed, end of trace) */
    uint64_t resumed_orphan; /* resumed halves without their first half */
    uint64_t detached;       /* calls in progress when strace detached */
    uint64_t unknown_syscalls;
    uint64_t bad_lines;      /* lines that could not be parsed */
    uint64_t notes;          /* strace's own remarks, recognised and skipped */
    uint64_t misattributed;  /* a child announced for the wrong pending clone */
    uint64_t bytes_in, bytes_out;
    uint64_t gaps;           /* user gaps measured */
    uint64_t gaps_capped;    /* gaps of more than STRACE_MAX_GAP_INSNS, cut to it */
    double gap_median_us;    /* median gap between a pid's syscalls, before overhead */
    char *shown[STRACE_IMPORT_SHOWN]; /* the first bad lines' messages */
    GHashTable *unknown_names;        /* interned name -> count (GUINT_TO_POINTER) */
} StraceImportStats;

void strace_import_stats_clear(StraceImportStats *s);

typedef void (*StraceHeaderFn)(const TraceHeader *h, void *ud);
typedef void (*StraceEventFn)(const TraceEvent *ev, void *ud);

typedef struct StraceImporter StraceImporter;

/* name labels messages ("app.strace"). header_fn is called once, before the
 * first event (or at finish for a trace without events). */
StraceImporter *strace_importer_new(const StraceImportOptions *o, const char *name,
                                    StraceHeaderFn header_fn, StraceEventFn event_fn, void *ud);
/* One line without its newline. False only with strict, on a bad line. */
bool strace_importer_feed(StraceImporter *imp, const char *line, uint64_t lineno, GError **err);
/* Ends the input: emits calls still unfinished, fills the statistics. */
void strace_importer_finish(StraceImporter *imp);
/* Valid until free; strace_importer_take_stats() hands them over. */
const StraceImportStats *strace_importer_stats(const StraceImporter *imp);
void strace_importer_take_stats(StraceImporter *imp, StraceImportStats *out);
void strace_importer_free(StraceImporter *imp);

/* Reads in ("-": stdin, gzip accepted) through an importer to the callbacks. */
bool strace_import_stream(const char *in, const StraceImportOptions *o,
                          StraceHeaderFn header_fn, StraceEventFn event_fn, void *ud,
                          StraceImportStats *stats, GError **err);
/* in -> trace file out ("-": stdout, ".gz": compressed). */
bool strace_import_file(const char *in, const char *out, const StraceImportOptions *o,
                        StraceImportStats *stats, GError **err);

#endif
