/* vmsplit traces: what a replay consumes, one event per line.
 *
 * A trace is the life of a few processes told as events: user work (N
 * instructions over a working set), syscalls (name, bytes copied to and from
 * user space, return value, duration), process events (fork, exec, exit,
 * signal, context switch) and mapping changes (mmap, munmap, mprotect, brk).
 * The text format is specified in workloads/FORMAT.md; this header is the C
 * view of it.
 *
 * Reading is streaming: trace_reader_next() fills a caller-owned TraceEvent
 * and keeps nothing per event, so memory stays flat however long the trace.
 * Strings in events (syscall, errno and signal names, exec paths) are
 * interned with g_intern_string(): compare them by pointer, keep them as long
 * as you like, never free them.
 *
 * The writer produces the canonical text; reading a canonical trace and
 * writing it back gives the same bytes, and writing events then reading them
 * back gives the same events (tests/replay/test_trace.c).
 *
 *   TraceReader *r = trace_reader_open("app.vmt.gz", &err);
 *   TraceEvent ev;
 *   while (trace_reader_next(r, &ev, &err))
 *       switch (ev.kind) { case TRACE_EV_SYSCALL: ... }
 *   if (err) ... ; // false with err unset is the end of the trace
 *   trace_reader_close(r);
 */
#ifndef VMSPLIT_REPLAY_TRACE_H
#define VMSPLIT_REPLAY_TRACE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define TRACE_FORMAT_VERSION 2       /* the newest version this build reads */
#define TRACE_VERSION_PREFIX "#vmsplit-trace"

/* Errors: a file that cannot be opened or read (IO), a line that does not
 * follow the format (PARSE: the message names file, line and what was
 * expected), a version this build does not read (VERSION). */
#define TRACE_ERROR (trace_error_quark())
GQuark trace_error_quark(void);
typedef enum { TRACE_ERROR_IO, TRACE_ERROR_PARSE, TRACE_ERROR_VERSION } TraceErrorCode;

typedef enum {
    TRACE_EV_USER,     /* user-mode work between syscalls */
    TRACE_EV_SYSCALL,  /* one kernel entry/exit through the syscall path */
    TRACE_EV_FORK,     /* pid created child (copy or shared address space) */
    TRACE_EV_EXEC,     /* pid replaced its address space with a new program */
    TRACE_EV_EXIT,     /* pid ended: exit status or killing signal */
    TRACE_EV_SWITCH,   /* the CPU switches to pid (context switch) */
    TRACE_EV_SIGNAL,   /* a signal delivered to pid */
    TRACE_EV_MMAP,     /* [addr, addr+len) mapped with prot */
    TRACE_EV_MUNMAP,   /* [addr, addr+len) unmapped */
    TRACE_EV_MPROTECT, /* [addr, addr+len) changed to prot */
    TRACE_EV_BRK,      /* the heap break moved to addr */
    TRACE_EV_REFS,     /* version 2: user work with its memory references */
    TRACE_EV_COUNT
} TraceEventKind;

/* How user work walks its working set (see FORMAT.md): sequential sweep,
 * uniform random pages, or a skewed hot set. */
typedef enum { TRACE_PAT_SEQ, TRACE_PAT_RAND, TRACE_PAT_HOT, TRACE_PAT_COUNT } TracePattern;

#define TRACE_PROT_READ 0x1u
#define TRACE_PROT_WRITE 0x2u
#define TRACE_PROT_EXEC 0x4u
#define TRACE_MAP_SHARED 0x1u /* MAP_SHARED rather than private */
#define TRACE_MAP_ANON 0x2u   /* anonymous rather than file-backed */
#define TRACE_MAP_STACK 0x4u  /* a process's stack: grows down (FORMAT.md, version 2) */

/* sys.fd when the syscall has no file-descriptor argument. Not -1: -1 and
 * AT_FDCWD (-100) are real argument values worth keeping. */
#define TRACE_FD_NONE INT32_MIN

typedef struct {
    const char *name;   /* interned; "read", or any unknown name as written */
    uint16_t nr;        /* syscall_table id (SYSCALL_ID_UNKNOWN if not known) */
    bool ret_known;     /* false: strace printed '?' (exit, killed, ERESTART*) */
    bool blocked;       /* the task slept in the call (importer's judgement) */
    int32_t fd;         /* fd argument, or TRACE_FD_NONE */
    int64_t ret;        /* return value as the program saw it (-1 on error) */
    const char *err;    /* interned errno name ("EAGAIN"), NULL on success */
    const char *op;     /* interned operation of multiplexed calls
                           ("FUTEX_WAIT_PRIVATE", "F_SETFL", "TCGETS"), or NULL */
    uint64_t req;       /* bytes requested (count/length argument), 0 if none */
    uint64_t in;        /* bytes copied from user space into the kernel */
    uint64_t out;       /* bytes copied from the kernel out to user space */
    uint64_t dur_ns;    /* wall time inside the call, 0 if unknown */
} TraceSyscall;

/* The largest INSNS of a `user` event (FORMAT.md): 10^12 instructions,
 * six minutes of one 2.8 GHz CPU at one instruction a cycle without a
 * system call. A replay runs it in ECX-sized runs of the user loop, fast-
 * forwarded (kernel_model/userwork.h), in 0.01-0.03 s of host time;
 * without a fast-forward (a random TLB policy) at the core's speed, hours.
 * A trace's sums stay far from 2^64 cycles. Longer work is several events
 * (the strace importer splits it). The reader rejects more. */
#define TRACE_USER_INSNS_MAX 1000000000000ULL

typedef struct {
    uint8_t kind;  /* TraceEventKind */
    uint32_t pid;
    union {
        struct { uint64_t insns; uint32_t pages; uint8_t pattern; } user;
        TraceSyscall sys;
        struct { uint32_t child; bool shared_vm; } fork;
        struct { const char *path; } exec;  /* interned, TRACE_PATH_MAX bytes at most */
        struct { int32_t status; const char *signal; bool core; } exit;
        struct { const char *name; } signal;                 /* interned "SIGCHLD" */
        struct { uint64_t addr, len; uint8_t prot, flags; } map; /* mmap/munmap/mprotect */
        struct { uint64_t addr; } brk;
        struct { uint64_t insns; uint32_t nrefs; } refs;   /* the lines follow */
    } u;
} TraceEvent;

/* ---- Version 2: the reference lines of a `refs` event ----
 * `i ADDR N`: N instructions fetched from ADDR's page (the first at ADDR);
 * `r|w|m ADDR SIZE [N]`: N loads, stores or read-modify-writes of SIZE
 * bytes (1..64), all in ADDR's 64-byte line. ADDR is a folded i686 user
 * address. FORMAT.md has the rules. */
typedef enum { TRACE_REF_FETCH, TRACE_REF_READ, TRACE_REF_WRITE, TRACE_REF_MODIFY,
               TRACE_REF_KINDS } TraceRefKind;

#define TRACE_REF_SIZE_MAX 64
#define TRACE_REFS_INSNS_MAX 1000000000000ULL   /* 10^12 per event */
#define TRACE_REFS_NREFS_MAX 10000000u          /* 10^7 lines per event */

typedef struct {
    uint32_t addr;
    uint32_t n;                  /* 1 .. 2^32-1 */
    uint8_t kind;                /* TraceRefKind */
    uint8_t size;                /* data: 1..64; fetch: 0 */
} TraceRef;

/* Parses one reference line (no newline); name/lineno label the error. */
bool trace_parse_ref(const char *line, TraceRef *ref, const char *name, uint64_t lineno,
                     GError **err);
/* The same for a line of len bytes in the common spelling (what the
 * writer writes), without a message: false for anything else, including
 * every line trace_parse_ref rejects. The reader tries it first. */
bool trace_parse_ref_fast(const char *line, size_t len, TraceRef *ref);
/* Its canonical line into buf (TRACE_LINE_MAX bytes); returns the length. */
size_t trace_format_ref(const TraceRef *ref, char *buf);

/* Initialisers that fill the defaults a kind needs (fd none, strings NULL). */
void trace_event_init(TraceEvent *ev, TraceEventKind kind, uint32_t pid);
bool trace_event_equal(const TraceEvent *a, const TraceEvent *b);

const char *trace_kind_name(TraceEventKind kind);
const char *trace_pattern_name(TracePattern p);
bool trace_pattern_parse(const char *s, TracePattern *out);

/* ---- Header: ordered "@key value" metadata lines. ----
 * Keys written by vmsplit (FORMAT.md lists them): source, command,
 * captured, host, clock-mhz, ipc, overhead-us, block-us, user-pages,
 * user-pattern, timestamps. Unknown keys are kept and written back. */
typedef struct TraceHeader TraceHeader;

TraceHeader *trace_header_new(void);
void trace_header_free(TraceHeader *h);
/* Sets (or replaces) key. Keys are [a-z0-9-]+; values one line, no NUL. */
void trace_header_set(TraceHeader *h, const char *key, const char *value);
void trace_header_set_double(TraceHeader *h, const char *key, double value);
const char *trace_header_get(const TraceHeader *h, const char *key);
/* The value parsed as a number, or def when the key is absent. A present
 * but non-numeric value is an error naming the key. */
bool trace_header_get_double(const TraceHeader *h, const char *key, double def,
                             double *out, GError **err);
guint trace_header_size(const TraceHeader *h);
void trace_header_nth(const TraceHeader *h, guint i, const char **key, const char **value);

/* ---- Reader ---- */
typedef struct TraceReader TraceReader;

/* Opens path ("-" for standard input; gzip detected by its magic bytes) and
 * reads the version line and the header. */
TraceReader *trace_reader_open(const char *path, GError **err);
const TraceHeader *trace_reader_header(const TraceReader *r);
/* Next event: true and *ev filled; false with *err unset at the end; false
 * with *err set on a bad line or an I/O error. Besides each line's grammar
 * the reader checks FORMAT.md's running-pid rule: an event of a pid other
 * than the running one needs a `switch` first. */
bool trace_reader_next(TraceReader *r, TraceEvent *ev, GError **err);
/* After trace_reader_next returned a `refs` event: its reference lines,
 * at most max at a time, into buf. *n gets how many (0 once the block is
 * over); false with err set on a bad or missing line (file:line, what was
 * expected) or when the `i` lines' counts do not add up to INSNS. Memory
 * stays bounded by the caller's buffer however long the block. Lines the
 * caller does not ask for are read (and checked) by the next
 * trace_reader_next. */
bool trace_reader_refs(TraceReader *r, TraceRef *buf, size_t max, size_t *n, GError **err);
/* The line of reference k of the last chunk trace_reader_refs returned. */
uint64_t trace_reader_ref_line(const TraceReader *r, size_t k);
/* The file's version (1 or 2). */
int trace_reader_version(const TraceReader *r);
/* Line number of the last line read (1-based), for the caller's messages. */
uint64_t trace_reader_line(const TraceReader *r);
const char *trace_reader_name(const TraceReader *r);
void trace_reader_close(TraceReader *r);

/* Parses one event line (no newline). name/lineno only label the error.
 * Exposed so the tests and tools can check single lines. */
bool trace_parse_event(const char *line, TraceEvent *ev, const char *name,
                       uint64_t lineno, GError **err);

/* ---- Writer ---- */
typedef struct TraceWriter TraceWriter;

/* Creates path ("-" for standard output; gzip-compressed when path ends in
 * ".gz") and writes the version line and header (which may be NULL). */
TraceWriter *trace_writer_open(const char *path, const TraceHeader *h, GError **err);
/* The same for a given version: 1 (what trace_writer_open writes, so that
 * version-1 traces round-trip byte for byte) or 2 (needed for `refs`). */
TraceWriter *trace_writer_open_version(const char *path, const TraceHeader *h, int version,
                                       GError **err);
/* One reference line of the `refs` event written last (version 2 only);
 * the caller writes exactly its NREFS lines after it. */
void trace_writer_write_ref(TraceWriter *w, const TraceRef *ref);
/* Events go through a buffer; I/O errors are kept and reported by close.
 * The writer trusts its caller: names must follow FORMAT.md ([A-Za-z0-9_|],
 * syscall names up to 63 characters) and events the running-pid rule, or
 * the reader will reject the file. */
void trace_writer_write(TraceWriter *w, const TraceEvent *ev);
/* A "# text" comment line (text must not contain a newline). */
void trace_writer_comment(TraceWriter *w, const char *text);
/* Flushes, finishes the gzip stream, closes; false if anything failed. Frees w. */
bool trace_writer_close(TraceWriter *w, GError **err);

/* Formats one event as its canonical line (no newline) into buf; returns the
 * length. buf needs TRACE_LINE_MAX bytes; exec paths longer than the limit
 * are rejected by the parser, so every event read fits. */
#define TRACE_LINE_MAX 16384
#define TRACE_PATH_MAX 4000 /* exec paths; escaped (4 bytes per byte at worst) they fit */
size_t trace_format_event(const TraceEvent *ev, char *buf);

#endif
