/* The order in which imported events leave an importer: one CPU's
 * schedule made from a log of many. Not tied to one log format: the strace
 * importer (strace_import.c) drives it today, and any importer of a
 * per-task event log can (push each event, tick the log's clock, yield
 * when a task blocks, flush at the end).
 *
 * A tracer on a multi-CPU machine (strace -f) interleaves the lines of
 * tasks that ran at the same time. Emitting them in that order would put a
 * context switch wherever two lines interleave (hundreds for a
 * three-process pipeline),
 * far more than the one CPU a replay simulates would make. In BLOCK order
 * (the default) a task keeps the CPU until it yields, as under a
 * uniprocessor scheduler:
 *   - it made a blocked syscall, or a syscall still in progress has lasted
 *     the blocked threshold (the importer calls uniproc_sched_yield());
 *   - it exited;
 *   - its time slice ran out while others waited (slice_ns of the log's
 *     time; Linux 2.6's default timeslice is 100 ms, kernel/sched.c
 *     DEF_TIMESLICE);
 *   - too many events of others wait (max_held), which bounds memory.
 * The next task is the one whose oldest waiting event came first in the
 * log. A task's own events never change order, and a fork always precedes
 * its child's events. There is no wake-up preemption (2.6 preempts when the
 * woken task's dynamic priority is better, which a log does not tell), so
 * BLOCK gives a lower bound on switches. INTERLEAVE keeps the log's order
 * exactly: an upper bound.
 *
 * The scheduler writes the `switch` events. */
#ifndef VMSPLIT_REPLAY_UNIPROC_SCHED_H
#define VMSPLIT_REPLAY_UNIPROC_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/trace.h"

typedef enum { UNIPROC_ORDER_BLOCK, UNIPROC_ORDER_INTERLEAVE } UniprocOrder;

typedef void (*UniprocSchedOut)(const TraceEvent *ev, void *ud);

typedef struct UniprocSched UniprocSched;

UniprocSched *uniproc_sched_new(UniprocOrder order, uint64_t slice_ns, size_t max_held,
                              UniprocSchedOut out, void *ud);
void uniproc_sched_free(UniprocSched *s);

/* An event at log time now (has_time false: the log has no timestamps).
 * yields: the task gives up the CPU after it (a blocked syscall). */
void uniproc_sched_push(UniprocSched *s, const TraceEvent *ev, bool yields, bool has_time,
                       uint64_t now);
/* The log reached time now: lets a time slice expire. */
void uniproc_sched_tick(UniprocSched *s, uint64_t now);
/* The running task yields (it is blocked in a syscall not yet finished). */
void uniproc_sched_yield(UniprocSched *s);
/* The running task, if one holds the CPU and has not yielded. */
bool uniproc_sched_running(const UniprocSched *s, uint32_t *pid);
/* End of the log: everything waiting goes out. */
void uniproc_sched_flush(UniprocSched *s);

#endif
