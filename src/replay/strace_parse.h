/* Lexing one line of strace output, nothing more: which pid, when, what
 * kind of line, and for syscalls the name, the raw argument text, the return
 * value, errno name and duration. No state across lines; joining
 * unfinished/resumed pairs and deriving events is strace_import.c's job.
 *
 * Accepted (strace 4.x to 6.x):
 *   prefix      "[pid  1234] " (-f to stderr), "1234  " (-f -o FILE), none
 *   timestamp   -t "09:15:03", -tt "09:15:03.634268", -ttt "1700000000.634268",
 *               -r "     0.000123", none; up to 9 decimals (ns modes)
 *   -i          "[00007f0dc52ad000] " instruction pointer, skipped
 *   calls       name(args) = ret [ERRNO (text)] [(extra)] [<duration>]
 *               name(args <unfinished ...>      <... name resumed>args) = ...
 *               name(args <detached ...>
 *   events      --- SIGCHLD {...} ---           +++ exited with N +++
 *               +++ killed by SIGKILL [(core dumped)] +++
 *   notes       --- stopped by SIGSTOP ---, +++ superseded by execve ... +++,
 *               [ Process PID=N runs in 32 bit mode. ], "strace: ..." lines
 * A timestamp whose integer part is >= 1e8 is -ttt (seconds since 1970,
 * i.e. after 1973), a smaller one -r (seconds since the previous line). */
#ifndef VMSPLIT_REPLAY_STRACE_PARSE_H
#define VMSPLIT_REPLAY_STRACE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    STRACE_CALL,       /* a complete syscall line */
    STRACE_UNFINISHED, /* the first half of a call another pid's line interrupted */
    STRACE_RESUMED,    /* its second half */
    STRACE_DETACHED,   /* strace detached while the call was in progress */
    STRACE_SIGNAL,     /* a signal delivered */
    STRACE_EXITED,     /* the pid exited with a status */
    STRACE_KILLED,     /* the pid was killed by a signal */
    STRACE_NOTE,       /* strace's remark; carries no event */
} StraceLineKind;

typedef enum {
    STRACE_TS_NONE,
    STRACE_TS_CLOCK,    /* -t / -tt: time of day */
    STRACE_TS_EPOCH,    /* -ttt: seconds since 1970 */
    STRACE_TS_RELATIVE, /* -r: seconds since the previous line */
} StraceTsKind;

typedef struct {
    const char *p;
    size_t len;
} StraceText;

typedef struct {
    StraceLineKind kind;
    bool has_pid;
    uint32_t pid;
    StraceTsKind ts;
    bool ts_frac;       /* the timestamp had decimals (-tt rather than -t) */
    uint64_t ts_ns;     /* CLOCK: since midnight; EPOCH: since 1970; RELATIVE: delta */
    StraceText name;    /* syscall name (calls) or signal name (SIGNAL, KILLED) */
    StraceText args;    /* argument text: whole (CALL), the part before the marker
                           (UNFINISHED, DETACHED) or after "resumed>" (RESUMED) */
    bool ret_known;     /* false for "= ?" */
    int64_t ret;
    StraceText err;     /* "ENOENT", "ERESTARTSYS"; len 0 when none */
    bool has_dur;       /* -T "<0.000018>" present */
    uint64_t dur_ns;
    int32_t status;     /* EXITED */
    bool core;          /* KILLED with "(core dumped)" */
} StraceLine;

/* Parses line (NUL-terminated). On failure returns false with *expected
 * set to what was expected and *col to the 0-based column where. */
bool strace_parse_line(const char *line, StraceLine *out, const char **expected, size_t *col);

/* Splits argument text at top-level commas (outside quotes, brackets,
 * braces, parentheses and comments), trimming blanks. Fills at most max
 * slices and returns how many arguments there are. */
unsigned strace_split_args(StraceText args, StraceText *out, unsigned max);

/* An argument's integer value: 123, -1, 0x1f, 0755 (octal), NULL (0),
 * AT_FDCWD (-100), "[16]" and "[128 => 16]" (16: the value after the call),
 * "3</etc/passwd>" (-y decoration). False if it is none of those. */
bool strace_arg_int(StraceText a, int64_t *v);
/* True unless the argument is NULL or 0. */
bool strace_arg_nonnull(StraceText a);
/* A quoted string's decoded length; *truncated when strace cut it ("..."...).
 * False if a is not a quoted string. */
bool strace_arg_strlen(StraceText a, size_t *len, bool *truncated);
/* The decoded bytes of a quoted string (g_free them), NULL if a is not
 * one. */
char *strace_arg_unquote(StraceText a, bool *truncated);
/* True if flag occurs in a as a whole symbol ("CLONE_VM" in
 * "flags=CLONE_VM|CLONE_FS", not in "CLONE_VMX"). */
bool strace_text_has_symbol(StraceText a, const char *flag);

#endif
