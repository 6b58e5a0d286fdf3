/* `vmsplit import-capture`: the streams of one capture (a directory of
 * vmcap.PID.SEQ files written by the vmcap Valgrind tool, tools/vmcap/) to
 * one version-2 trace (workloads/FORMAT.md) holding the program's own
 * references, syscalls, process events and mappings.
 *
 * Two passes over the streams. The index pass reads every stream, checks
 * it is whole (a stream without its END record was cut, unless the image
 * ended in an execve whose new image is the pid's next stream), pairs each
 * syscall's entry with its exit and totals the references. The second pass
 * writes the trace:
 *   - every process image starts with `sys execve`, `exec "PATH"` and an
 *     `mmap` per mapping its exec made (capture_fold.h folds them);
 *   - user work between kernel entries is a `refs` event and its reference
 *     lines, in the tool's order;
 *   - each syscall is a `sys` event at its entry (name from the x86-64
 *     number, result, duration, fd/req/in/out from syscall_table.c's rules
 *     on the registers), followed by the state event of a successful call:
 *     fork (a thread's clone: `fork TID shared`), exit, mmap, munmap,
 *     mprotect, brk, and for mremap an munmap and an mmap;
 *   - one CPU: processes run one at a time (capture_import.c, "Schedule").
 * The ordering by timestamps is its own small scheduler rather than
 * uniproc_sched.c: uniproc_sched holds the events of waiting tasks in memory,
 * which a stream of references cannot afford, while per-process streams can
 * simply be read at the pace the schedule needs.
 *
 * What the capture cannot follow is counted and reported in the stats'
 * notes (an exec into a program Valgrind did not trace, a fork whose child
 * left no stream); a cut or damaged stream, or a process that ended
 * without an exit call when no signal was given for it, is an error naming
 * the stream file. Never a silently short trace. */
#ifndef VMSPLIT_REPLAY_CAPTURE_IMPORT_H
#define VMSPLIT_REPLAY_CAPTURE_IMPORT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    /* A syscall that can sleep (syscall_table's may_block) and lasted this
     * long is `blocked` and yields the CPU (as import-strace's --block-us). */
    uint64_t block_us;
    /* A process keeps the CPU for at most this many user instructions while
     * another waits, ending its slice at its next syscall. */
    uint64_t slice_insns;
    /* Folded room kept under each stack for its growth. */
    uint64_t stack_reserve;
    /* The signal to write for a process whose image ended without an exit
     * call (killed, or crashed); NULL makes that an error. */
    const char *killed_signal;
    /* References outside every mapping: false, an error; true, dropped,
     * counted and reported. */
    bool drop_unmapped;
    /* Header provenance: NULL takes a default (the root's command line,
     * the oldest stream's time, this host's name). */
    const char *command, *captured, *host, *window;
    /* A window: stop at the first syscall after this many reference lines
     * (0: the whole run). Processes still running then get no exit. */
    uint64_t window_lines;
    /* Extra header lines, "key=value" (NULL-terminated; may be NULL). */
    char **header_extra;
} CaptureImportOptions;

typedef struct {
    uint64_t streams, processes, threads, forks, execs, syscalls, switches;
    uint64_t refs_raw;    /* references before merging (the tool's count) */
    uint64_t refs_merged; /* reference lines written */
    uint64_t refs_written;/* references those lines stand for */
    uint64_t refs_blocks; /* refs events */
    uint64_t insns;       /* user instructions */
    uint64_t unmapped;    /* references outside every mapping (dropped) */
    uint64_t after_exit;  /* references of threads after their process's exit (left out) */
    bool window_hit;      /* the window ended the conversion before the capture's end */
    uint64_t killed;      /* processes ended without an exit call */
    uint64_t unknown_syscalls;
    uint64_t fold_peak;   /* most folded bytes one address space used */
    GString *notes;       /* what could not be followed, one line each */
} CaptureImportStats;

void capture_import_options_init(CaptureImportOptions *o);
void capture_import_stats_clear(CaptureImportStats *s);

/* Converts the capture in dir to out_path ("-" for standard output; gzip
 * when it ends in ".gz"). Fills *stats (clear it after use). With a window,
 * the conversion runs twice (the first time to count what the window holds,
 * for the header). */
bool capture_import_dir(const char *dir, const char *out_path, const CaptureImportOptions *o,
                        CaptureImportStats *stats, GError **err);

/* The name of x86-64 syscall nr (asm/unistd_64.h), or NULL
 * (capture_sysnames.c, generated). */
const char *capture_syscall_name(unsigned nr);

#endif
