/* The capture importer (capture_import.h): index pass, one-CPU schedule,
 * and the writing of the version-2 trace. */
#include "replay/capture_import.h"

#include "config.h"
#include "replay/capture_fold.h"
#include "replay/capture_stream.h"
#include "replay/capture_priv.h"
#include "replay/capture_syscall.h"
#include "vmcap/vmcap_stream.h"

#include <errno.h>
#include <gio/gio.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* Limits of the format (workloads/FORMAT.md, version 2): a refs event holds
 * at most 10^7 lines; ours are cut at a smaller bound, at an `i` line, to
 * keep the block buffer small. */
#define BLOCK_LINES_SOFT (1u << 20)
#define BLOCK_LINES_HARD 10000000u
#define BLOCK_INSNS_MAX 1000000000000ull /* a refs event's INSNS: at most 10^12 */
#define X64_CLONE_THREAD 0x10000ull /* uapi/linux/sched.h */

/* ------------------------------------------------------------------ */
/* Processes and the schedule.                                          */

typedef struct Proc {
    uint32_t pid;
    GPtrArray *images;  /* Image*, by seq: each but the last ended in exec */
    guint image;        /* the one being read */
    CaptureStream *rd;
    guint sys_next;     /* the next CaptureSys of the image */
    CaptureFold *fold;
    bool created, done, exited, root;
    uint64_t ready_ns;  /* when it can run again (host time of the capture) */
    uint32_t tid;       /* the thread whose references the stream gives */
    GHashTable *threads;/* live thread ids */
    uint64_t brk_cur;
    bool brk_seen;
    char *execpath;
} Proc;

typedef struct {
    const CaptureImportOptions *o;
    CaptureImportStats *st;
    Out out;
    GHashTable *procs;  /* pid -> Proc* */
    GPtrArray *order;   /* Proc*, by first image start */
    uint32_t running;   /* trace pid of the last event; 0 none */
    bool any_event;
    /* the refs block being built for one thread */
    uint32_t blk_tid;
    uint64_t blk_insns;
    GString *blk;
    uint32_t blk_lines;
    uint64_t slice_insns; /* instructions since the process got the CPU */
    bool stop;            /* the window is full */
} Conv;

static void note(Conv *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void note(Conv *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_string_append_vprintf(c->st->notes, fmt, ap);
    g_string_append_c(c->st->notes, '\n');
    va_end(ap);
}

/* Every event goes through here: the running-pid rule needs a `switch`
 * before an event of another pid. */
static void emit(Conv *c, const TraceEvent *ev)
{
    if (c->any_event && ev->pid != c->running && ev->kind != TRACE_EV_SWITCH) {
        TraceEvent sw;
        trace_event_init(&sw, TRACE_EV_SWITCH, ev->pid);
        emit(c, &sw);
    }
    if (ev->kind == TRACE_EV_SWITCH)
        c->st->switches++;
    char line[TRACE_LINE_MAX];
    size_t n = trace_format_event(ev, line);
    g_string_append_len(c->out.buf, line, (gssize)n);
    g_string_append_c(c->out.buf, '\n');
    c->any_event = true;
    c->running = ev->kind == TRACE_EV_EXIT ? 0 : ev->pid;
    out_maybe_flush(&c->out);
}

static void blk_flush(Conv *c)
{
    if (c->blk_lines == 0)
        return;
    g_assert(c->blk_insns >= 1); /* every block starts with an `i` line */
    TraceEvent probe;
    trace_event_init(&probe, TRACE_EV_SWITCH, c->blk_tid);
    if (c->any_event && c->running != c->blk_tid)
        emit(c, &probe);
    g_string_append_printf(c->out.buf, "%" PRIu32 " refs %" PRIu64 " %" PRIu32 "\n", c->blk_tid,
                           c->blk_insns, c->blk_lines);
    g_string_append_len(c->out.buf, c->blk->str, (gssize)c->blk->len);
    c->any_event = true;
    c->running = c->blk_tid;
    c->st->refs_blocks++;
    c->st->insns += c->blk_insns;
    g_string_truncate(c->blk, 0);
    c->blk_lines = 0;
    c->blk_insns = 0;
    out_maybe_flush(&c->out);
}

static char *put_hex(char *p, uint64_t v)
{
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    *p++ = '0';
    *p++ = 'x';
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_dec(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static bool add_run(Conv *c, Proc *p, const CaptureRec *rec, GError **err)
{
    uint64_t folded;
    if (!capture_fold_addr(p->fold, rec->u.run.addr, &folded)) {
        if (!c->o->drop_unmapped) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                        "%s: byte %" G_GUINT64_FORMAT ": pid %" PRIu32 " %s 0x%" PRIx64
                        " outside every mapping the capture announced (--drop-unmapped drops "
                        "and counts such references)",
                        capture_stream_name(p->rd), capture_stream_offset(p->rd), p->tid,
                        rec->u.run.kind == CAP_RUN_INSN ? "fetches an instruction at"
                                                        : "references data at",
                        rec->u.run.addr);
            return false;
        }
        c->st->unmapped += rec->u.run.n;
        return true;
    }
    bool insn = rec->u.run.kind == CAP_RUN_INSN;
    if (c->blk_lines > 0 && (c->blk_tid != p->tid ||
                             (insn && c->blk_lines >= BLOCK_LINES_SOFT) ||
                             c->blk_lines >= BLOCK_LINES_HARD ||
                             (insn && c->blk_insns + rec->u.run.n > BLOCK_INSNS_MAX)))
        blk_flush(c);
    if (c->blk_lines == 0 && !insn) {
        /* data with no instruction before it in this block: cannot be a
         * refs event (INSNS >= 1); never produced by the tool */
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s: byte %" G_GUINT64_FORMAT ": a data run before any instruction of its block",
                    capture_stream_name(p->rd), capture_stream_offset(p->rd));
        return false;
    }
    c->blk_tid = p->tid;
    char line[64], *q = line;
    *q++ = "irwm"[rec->u.run.kind];
    *q++ = ' ';
    q = put_hex(q, folded);
    if (insn) {
        *q++ = ' ';
        q = put_dec(q, rec->u.run.n);
        c->blk_insns += rec->u.run.n;
        c->slice_insns += rec->u.run.n;
    } else {
        *q++ = ' ';
        q = put_dec(q, rec->u.run.size);
        if (rec->u.run.n != 1) {
            *q++ = ' ';
            q = put_dec(q, rec->u.run.n);
        }
    }
    *q++ = '\n';
    g_string_append_len(c->blk, line, q - line);
    c->blk_lines++;
    c->st->refs_merged++;
    c->st->refs_written += rec->u.run.n;
    return true;
}

static void emit_map_kind(Conv *c, TraceEventKind kind, uint32_t tid, uint64_t addr, uint64_t len,
                          unsigned prot, unsigned flags)
{
    TraceEvent ev;
    trace_event_init(&ev, kind, tid);
    ev.u.map.addr = addr;
    ev.u.map.len = len;
    ev.u.map.prot = (uint8_t)(prot & 7);
    ev.u.map.flags = (uint8_t)flags;
    emit(c, &ev);
}

/* A mapping the process made: folded, then one mmap event per folded piece. */
static bool map_range(Conv *c, Proc *p, uint32_t tid, uint64_t start, uint64_t len, unsigned prot,
                      unsigned flags, uint64_t grow, GError **err)
{
    if (len == 0)
        return true;
    if (!capture_fold_map(p->fold, start, len, grow, err)) {
        g_prefix_error(err, "pid %" PRIu32 ": ", p->pid);
        return false;
    }
    c->st->fold_peak = MAX(c->st->fold_peak, capture_fold_used(p->fold));
    CaptureFoldPiece pc[16];
    unsigned n = capture_fold_pieces(p->fold, start, len, pc, G_N_ELEMENTS(pc));
    /* A mapping with room to grow down is a stack: say so, as the replay's
     * stack growth needs it (later anonymous mappings fold above it). */
    for (unsigned i = 0; i < n; i++)
        emit_map_kind(c, TRACE_EV_MMAP, tid, pc[i].folded, pc[i].len, prot,
                      flags | (grow ? TRACE_MAP_STACK : 0));
    return true;
}

static void unmap_range(Conv *c, Proc *p, uint32_t tid, TraceEventKind kind, uint64_t start,
                        uint64_t len, unsigned prot)
{
    CaptureFoldPiece pc[64];
    unsigned n = capture_fold_pieces(p->fold, start, len, pc, G_N_ELEMENTS(pc));
    for (unsigned i = 0; i < n; i++)
        emit_map_kind(c, kind, tid, pc[i].folded, pc[i].len, prot, 0);
    if (kind == TRACE_EV_MUNMAP)
        capture_fold_unmap(p->fold, start, len);
}

static void emit_exec(Conv *c, Proc *p, const Image *im, const CaptureSys *s)
{
    TraceEvent ev;
    CaptureSys fake = {0};
    if (!s) { /* a root: Valgrind exec'd it before the capture began */
        fake.nr = X64_EXECVE;
        fake.t_entry = im->t_start;
        fake.tid = p->pid;
        fake.has_exit = true;
        fake.regs.strlen[0] = (uint32_t)strlen(im->exe);
        for (int i = 1; i < SYSCALL_NARGS; i++)
            fake.regs.strlen[i] = SYSCALL_STRLEN_UNKNOWN;
        s = &fake;
    }
    CaptureSys done = *s;
    done.has_exit = true; /* it succeeded: the new image is here */
    done.regs.ret = 0;
    /* Its duration is not known: Valgrind's own start-up of the new image
     * lies between the entry and the new stream's first record. */
    done.t_exit = done.t_entry;
    bool known;
    capture_syscall_event(&done, p->pid, c->o->block_us * 1000, &ev, &known);
    emit(c, &ev);
    c->st->syscalls++;
    trace_event_init(&ev, TRACE_EV_EXEC, p->pid);
    const char *path = p->execpath ? p->execpath : im->exe;
    char *cut = g_strndup(path, TRACE_PATH_MAX);
    ev.u.exec.path = g_intern_string(cut);
    g_free(cut);
    emit(c, &ev);
    c->st->execs++;
    g_clear_pointer(&p->execpath, g_free);
}

/* Opens image k of p and writes its exec, up to its first instruction:
 * the exec-time mappings. */
static bool start_image(Conv *c, Proc *p, guint k, const CaptureSys *exec_sys, GError **err)
{
    Image *im = g_ptr_array_index(p->images, k);
    capture_stream_close(p->rd);
    p->rd = capture_stream_open(im->path, err);
    if (!p->rd)
        return false;
    p->image = k;
    p->sys_next = 0;
    p->tid = p->pid;
    p->brk_seen = false;
    capture_fold_free(p->fold);
    p->fold = capture_fold_new();
    g_hash_table_remove_all(p->threads);
    g_hash_table_add(p->threads, GUINT_TO_POINTER(p->pid));
    emit_exec(c, p, im, exec_sys);
    return true;
}

static Proc *proc_of(Conv *c, uint32_t pid) { return g_hash_table_lookup(c->procs, GUINT_TO_POINTER(pid)); }

/* The state change a successful syscall made. */
static bool after_syscall(Conv *c, Proc *p, const CaptureSys *s, GError **err)
{
    const uint64_t *a = s->regs.args;
    int64_t ret = s->regs.ret;
    uint32_t tid = s->tid;
    TraceEvent ev;
    switch (s->nr) {
    case X64_MMAP: {
        unsigned flags = ((a[3] & 0x01) ? TRACE_MAP_SHARED : 0) | ((a[3] & 0x20) ? TRACE_MAP_ANON : 0);
        return map_range(c, p, tid, (uint64_t)ret, a[1], (unsigned)a[2], flags, 0, err);
    }
    case X64_MUNMAP:
        unmap_range(c, p, tid, TRACE_EV_MUNMAP, a[0], a[1], 0);
        return true;
    case X64_MPROTECT:
        unmap_range(c, p, tid, TRACE_EV_MPROTECT, a[0], a[1], (unsigned)a[2]);
        return true;
    case X64_MREMAP:
        /* moved or resized: the old range goes, the new one comes (its
         * pages fault again in the replay; the protection is not in the
         * registers: read-write, what mremap is used for by malloc) */
        unmap_range(c, p, tid, TRACE_EV_MUNMAP, a[0], a[1], 0);
        return map_range(c, p, tid, (uint64_t)ret, a[2], TRACE_PROT_READ | TRACE_PROT_WRITE,
                         TRACE_MAP_ANON, 0, err);
    case X64_BRK: {
        uint64_t b = (uint64_t)ret, folded;
        if (p->brk_seen && b == p->brk_cur)
            return true;
        p->brk_seen = true;
        p->brk_cur = b;
        if (capture_fold_addr(p->fold, b, &folded))
            ;
        else if (b > 0 && capture_fold_addr(p->fold, b - 1, &folded))
            folded++; /* the break at the end of the heap's last page */
        else
            return true;
        trace_event_init(&ev, TRACE_EV_BRK, tid);
        ev.u.brk.addr = folded;
        emit(c, &ev);
        return true;
    }
    case X64_CLONE:
    case X64_FORK:
    case X64_VFORK:
    case X64_CLONE3: {
        uint32_t child = (uint32_t)ret;
        Proc *cp = proc_of(c, child);
        trace_event_init(&ev, TRACE_EV_FORK, tid);
        ev.u.fork.child = child;
        if (cp && !cp->created) { /* a process: Valgrind gave it its own stream */
            cp->created = true;
            cp->fold = capture_fold_copy(p->fold);
            emit(c, &ev);
            c->st->forks++;
        } else if (s->nr == X64_CLONE && (a[0] & X64_CLONE_THREAD)) {
            ev.u.fork.shared_vm = true;
            emit(c, &ev);
            g_hash_table_add(p->threads, GUINT_TO_POINTER(child));
            c->st->threads++;
        } else {
            emit(c, &ev);
            c->st->forks++;
            note(c, "pid %" PRIu32 " forked pid %" PRIu32 ", which left no stream: its work is "
                 "not in the trace", tid, child);
        }
        return true;
    }
    default:
        return true;
    }
}

/* Folds what a successful mmap or the first brk maps before the `sys`
 * event is written, so that its result can be the folded address. */
static bool prefold(Conv *c, Proc *p, const CaptureSys *s, TraceEvent *ev, GError **err)
{
    uint64_t ret = (uint64_t)s->regs.ret, folded;
    if (s->nr == X64_MMAP) {
        if (!capture_fold_map(p->fold, ret, s->regs.args[1], 0, err)) {
            g_prefix_error(err, "pid %" PRIu32 ": ", p->pid);
            return false;
        }
    } else if (s->nr == X64_BRK && !p->brk_seen) {
        /* the heap: from the first break up to the highest this image
         * reaches, folded as one range so that it grows in place */
        const Image *im = g_ptr_array_index(p->images, p->image);
        uint64_t top = MAX(im->brk_max, ret);
        if (!capture_fold_map(p->fold, ret, MAX(top - ret, 1), 0, err)) {
            g_prefix_error(err, "pid %" PRIu32 ": ", p->pid);
            return false;
        }
    } else if (s->nr != X64_BRK) {
        return true;
    }
    c->st->fold_peak = MAX(c->st->fold_peak, capture_fold_used(p->fold));
    if (capture_fold_addr(p->fold, ret, &folded))
        ev->u.sys.ret = (int64_t)folded;
    else if (ret > 0 && capture_fold_addr(p->fold, ret - 1, &folded))
        ev->u.sys.ret = (int64_t)folded + 1;
    return true;
}

static void emit_exit(Conv *c, uint32_t tid, int32_t status, const char *sig)
{
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_EXIT, tid);
    ev.u.exit.status = status;
    ev.u.exit.signal = sig ? g_intern_string(sig) : NULL;
    emit(c, &ev);
}

/* A syscall entry: its `sys` event and state change. Returns whether the
 * process yields the CPU after it. */
static bool on_syscall(Conv *c, Proc *p, uint32_t tid, bool *yield, GError **err)
{
    Image *im = g_ptr_array_index(p->images, p->image);
    g_assert(p->sys_next < im->sys->len);
    const CaptureSys *s = &g_array_index(im->sys, CaptureSys, p->sys_next++);
    g_assert(s->tid == tid);
    blk_flush(c);
    if ((s->nr == X64_EXECVE || s->nr == X64_EXECVEAT) && !s->has_exit)
        return true; /* written with the new image, at the end of this stream */
    TraceEvent ev;
    bool known;
    capture_syscall_event(s, tid, c->o->block_us * 1000, &ev, &known);
    if (!known)
        c->st->unknown_syscalls++;
    if (ev.u.sys.ret_known && !capture_sys_failed(s) && !prefold(c, p, s, &ev, err))
        return false;
    emit(c, &ev);
    c->st->syscalls++;
    if (ev.u.sys.blocked) {
        *yield = true;
        p->ready_ns = s->t_exit;
    }
    if (s->nr == X64_EXIT || s->nr == X64_EXIT_GROUP) {
        emit_exit(c, tid, (int32_t)(s->regs.args[0] & 0xff), NULL);
        g_hash_table_remove(p->threads, GUINT_TO_POINTER(tid));
        if (s->nr == X64_EXIT_GROUP || g_hash_table_size(p->threads) == 0)
            p->exited = true;
        return true;
    }
    if (!s->has_exit || capture_sys_failed(s))
        return true;
    return after_syscall(c, p, s, err);
}

/* A thread id a record of p's stream names: the pid itself or a thread
 * one of its clone calls made (and that has not exited). Any other is
 * damage: its events would be written as another process's, into the
 * middle of that one's (found fuzzing: a stream whose PROC pid differed
 * from its threads' ids). */
static bool own_thread(Proc *p, uint32_t tid, GError **err)
{
    if (g_hash_table_contains(p->threads, GUINT_TO_POINTER(tid)))
        return true;
    g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                "%s: byte %" G_GUINT64_FORMAT ": thread %" PRIu32 " is not one of pid %" PRIu32
                "'s (a stream holds the records of its process's own threads: the pid and "
                "those its clone calls made)",
                capture_stream_name(p->rd), capture_stream_offset(p->rd), tid, p->pid);
    return false;
}

/* The end of an image's stream: the end record, or an exec. */
static bool on_image_end(Conv *c, Proc *p, bool has_end, bool *stop, GError **err)
{
    Image *im = g_ptr_array_index(p->images, p->image);
    blk_flush(c);
    if (!has_end) { /* ended in execve */
        const CaptureSys *s = &g_array_index(im->sys, CaptureSys, im->sys->len - 1);
        if (p->image + 1 < p->images->len)
            return start_image(c, p, p->image + 1, s, err);
        note(c, "pid %" PRIu32 " exec'd %s, which Valgrind did not follow (a setuid program, "
             "or one it cannot run): the process ends there in the trace", p->pid,
             p->execpath ? p->execpath : "(path unknown)");
        CaptureSys done = *s;
        done.has_exit = true;
        done.regs.ret = 0;
        TraceEvent ev;
        bool known;
        capture_syscall_event(&done, s->tid, c->o->block_us * 1000, &ev, &known);
        emit(c, &ev);
        c->st->syscalls++; /* counted as every sys event written (found fuzzing) */
        trace_event_init(&ev, TRACE_EV_EXEC, s->tid);
        ev.u.exec.path = g_intern_string(p->execpath ? p->execpath : "?");
        emit(c, &ev);
        c->st->execs++;
        *stop = true;
        p->done = true;
        return true;
    }
    *stop = true;
    p->done = true;
    if (!p->exited) {
        if (!c->o->killed_signal) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                        "%s: pid %" PRIu32 " ended without an exit call: killed by a signal or "
                        "crashed (give the signal with --killed-signal to write it so)",
                        im->path, p->pid);
            return false;
        }
        c->st->killed++;
        note(c, "pid %" PRIu32 " ended without an exit call (killed or crashed): written as %s",
             p->pid, c->o->killed_signal);
        emit_exit(c, p->tid, 0, c->o->killed_signal);
    }
    return true;
}

/* Runs p until it yields (a blocked syscall), its slice ends while another
 * process waits, or it ends. */
static bool run_proc(Conv *c, Proc *p, GError **err)
{
    CaptureRec rec;
    c->slice_insns = 0;
    for (;;) {
        if (!capture_stream_next(p->rd, &rec, err)) {
            if (err && *err)
                return false;
            bool stop = false;
            if (!on_image_end(c, p, false, &stop, err))
                return false;
            if (stop)
                return true;
            continue;
        }
        /* After exit_group (or the last thread's exit) the kernel kills the
         * other threads: what they still did under Valgrind is not the
         * program's. */
        if (p->exited && rec.kind != CAP_REC_END) {
            if (rec.kind == CAP_REC_RUN)
                c->st->after_exit += rec.u.run.n;
            continue;
        }
        switch ((CaptureRecKind)rec.kind) {
        case CAP_REC_RUN:
            if (!add_run(c, p, &rec, err))
                return false;
            break;
        case CAP_REC_THREAD:
            if (!own_thread(p, rec.u.thread.tid, err))
                return false;
            p->tid = rec.u.thread.tid;
            break;
        case CAP_REC_MAP: {
            unsigned flags = 0;
            if (rec.u.map.flags & VMCAP_MAP_ANON)
                flags |= TRACE_MAP_ANON;
            if (rec.u.map.flags & VMCAP_MAP_SHARED)
                flags |= TRACE_MAP_SHARED;
            /* a stack (the topmost anonymous mapping exec made) may grow down */
            uint64_t grow = (rec.u.map.flags & VMCAP_MAP_STACK) ? c->o->stack_reserve : 0;
            uint64_t dummy, end = rec.u.map.start + rec.u.map.len;
            const Image *im = g_ptr_array_index(p->images, p->image);
            if (capture_fold_addr(p->fold, rec.u.map.start, &dummy) &&
                capture_fold_addr(p->fold, end - 1, &dummy))
                break; /* inside what an earlier record announced */
            /* the mapping that holds (or ends at) the initial break
             * (Valgrind announces its brk segment's first page): reserve
             * the heap's folded room with it, so that the heap stays one
             * range */
            if (im->brk_min && im->brk_min >= rec.u.map.start && im->brk_min <= end &&
                im->brk_max > end && !capture_fold_map(p->fold, rec.u.map.start,
                                                       im->brk_max - rec.u.map.start, 0, err))
                return false;
            if (!map_range(c, p, p->pid, rec.u.map.start, rec.u.map.len, rec.u.map.prot, flags,
                           grow, err))
                return false;
            uint64_t fs;
            if (grow && capture_fold_addr(p->fold, rec.u.map.start, &fs))
                g_string_append_printf(c->out.buf,
                                       "# the stack: the mapping at 0x%" PRIx64 " (grows down "
                                       "into the %" PRIu64 " KiB below it)\n",
                                       fs & ~(uint64_t)(CAPTURE_PAGE - 1), grow / 1024);
            break;
        }
        case CAP_REC_EXECPATH:
            g_free(p->execpath);
            p->execpath = g_strdup(rec.u.execpath.path);
            break;
        case CAP_REC_SYS_PRE: {
            bool yield = false;
            uint64_t now = rec.u.pre.t_ns;
            if (!own_thread(p, rec.u.pre.tid, err) ||
                !on_syscall(c, p, rec.u.pre.tid, &yield, err))
                return false;
            if (c->o->window_lines && c->st->refs_merged >= c->o->window_lines) {
                c->stop = true;
                c->st->window_hit = true;
                return true;
            }
            if (!yield && c->slice_insns >= c->o->slice_insns) {
                yield = true; /* the slice is over: others may run */
                p->ready_ns = now;
            }
            if (yield)
                return true;
            break;
        }
        case CAP_REC_SIGNAL: {
            if (!own_thread(p, rec.u.signal.tid, err))
                return false;
            blk_flush(c);
            TraceEvent ev;
            trace_event_init(&ev, TRACE_EV_SIGNAL, rec.u.signal.tid);
            const char *abbrev = sigabbrev_np(rec.u.signal.signo);
            char name[32];
            if (abbrev)
                g_snprintf(name, sizeof name, "SIG%s", abbrev);
            else
                g_snprintf(name, sizeof name, "SIG%u", (unsigned)rec.u.signal.signo);
            ev.u.signal.name = g_intern_string(name);
            emit(c, &ev);
            break;
        }
        case CAP_REC_SYS_POST:
        case CAP_REC_PROC:
            break;
        case CAP_REC_END: {
            bool stop = false;
            if (!on_image_end(c, p, true, &stop, err))
                return false;
            if (stop)
                return true;
            break;
        }
        }
    }
}

static Proc *pick(Conv *c)
{
    Proc *best = NULL;
    for (guint i = 0; i < c->order->len; i++) {
        Proc *p = g_ptr_array_index(c->order, i);
        if (p->created && !p->done && (!best || p->ready_ns < best->ready_ns))
            best = p;
    }
    return best;
}

/* ------------------------------------------------------------------ */
/* Directory, header, driver.                                            */

static gint proc_cmp(gconstpointer a, gconstpointer b)
{
    const Proc *x = *(Proc *const *)a, *y = *(Proc *const *)b;
    const Image *ix = g_ptr_array_index(x->images, 0), *iy = g_ptr_array_index(y->images, 0);
    return ix->t_start < iy->t_start ? -1 : ix->t_start > iy->t_start;
}

static void proc_free(Proc *p)
{
    capture_stream_close(p->rd);
    capture_fold_free(p->fold);
    g_hash_table_destroy(p->threads);
    g_ptr_array_free(p->images, TRUE);
    g_free(p->execpath);
    g_free(p);
}

/* Groups the images by pid into processes; checks each chain. */
static bool make_procs(Conv *c, GPtrArray *ims, GError **err)
{
    for (guint i = 0; i < ims->len; i++) {
        Image *im = g_ptr_array_index(ims, i);
        Proc *p = proc_of(c, im->pid);
        if (!p) {
            p = g_new0(Proc, 1);
            p->pid = im->pid;
            p->images = g_ptr_array_new();
            p->threads = g_hash_table_new(g_direct_hash, g_direct_equal);
            g_hash_table_insert(c->procs, GUINT_TO_POINTER(p->pid), p);
            g_ptr_array_add(c->order, p);
        } else {
            Image *prev = g_ptr_array_index(p->images, p->images->len - 1);
            if (!prev->ends_in_exec) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                            "%s: pid %" PRIu32 " has a stream after %s, which did not end in an "
                            "exec (a reused pid?)", im->path, im->pid, prev->path);
                return false;
            }
        }
        g_ptr_array_add(p->images, im);
        im->proc = p;
    }
    g_ptr_array_sort(c->order, proc_cmp);
    for (guint i = 0; i < c->order->len; i++) {
        Proc *p = g_ptr_array_index(c->order, i);
        Image *first = g_ptr_array_index(p->images, 0);
        Proc *parent = proc_of(c, first->ppid);
        p->root = parent == NULL;
        p->created = p->root;
        p->ready_ns = first->t_start;
    }
    return true;
}

/* One conversion; hdr: the reference counts for the header (lines, raw),
 * or NULL for the whole capture's. */
static bool convert(const char *dir, const char *out_path, const CaptureImportOptions *o,
                    const uint64_t *hdr, CaptureImportStats *st, GError **err)
{
    memset(st, 0, sizeof *st);
    st->notes = g_string_new(NULL);
    time_t oldest;
    GPtrArray *ims = capture_images_list(dir, &oldest, err);
    if (!ims)
        return false;
    uint64_t raw = 0, runs = 0;
    for (guint i = 0; i < ims->len; i++) {
        Image *im = g_ptr_array_index(ims, i);
        if (!capture_image_index(im, err)) {
            g_ptr_array_free(ims, TRUE);
            return false;
        }
        raw += im->raw_refs;
        runs += im->runs;
    }
    st->streams = ims->len;
    st->refs_raw = raw;
    Conv c = {0};
    c.o = o;
    c.st = st;
    c.procs = g_hash_table_new(g_direct_hash, g_direct_equal);
    c.order = g_ptr_array_new_with_free_func((GDestroyNotify)proc_free);
    c.blk = g_string_sized_new(1 << 22);
    bool ok = make_procs(&c, ims, err);
    if (ok && !out_open(&c.out, out_path, err))
        ok = false;
    bool out_is_open = ok;
    if (ok) {
        Proc *root = g_ptr_array_index(c.order, 0);
        capture_write_header(&c.out, o, g_ptr_array_index(root->images, 0), hdr ? hdr[1] : raw,
                     hdr ? hdr[0] : runs, oldest);
        st->processes = c.order->len;
        for (guint i = 0; ok && i < c.order->len; i++) {
            Proc *p = g_ptr_array_index(c.order, i);
            if (p->root && i > 0)
                note(&c, "pid %" PRIu32 " has no parent in the capture: a second root", p->pid);
        }
        Proc *p;
        while (ok && !c.stop && (p = pick(&c))) {
            if (!p->rd) { /* its first turn: a root's start, or a forked child's */
                if (p->root) {
                    ok = start_image(&c, p, 0, NULL, err);
                } else {
                    Image *im = g_ptr_array_index(p->images, 0);
                    p->rd = capture_stream_open(im->path, err);
                    p->tid = p->pid;
                    g_hash_table_add(p->threads, GUINT_TO_POINTER(p->pid));
                    ok = p->rd != NULL;
                }
                if (!ok)
                    break;
            }
            ok = run_proc(&c, p, err);
        }
        for (guint i = 0; ok && !c.stop && i < c.order->len; i++) {
            Proc *q = g_ptr_array_index(c.order, i);
            if (!q->created)
                note(&c, "pid %" PRIu32 " left a stream but no captured process forked it: not in "
                     "the trace", q->pid);
        }
        if (ok && st->after_exit)
            note(&c, "%" PRIu64 " references of threads still running after their process's "
                 "exit_group were left out", st->after_exit);
        if (ok && !c.stop && st->refs_merged != runs && st->unmapped == 0 && !st->after_exit)
            note(&c, "%" PRIu64 " runs in the streams, %" PRIu64 " reference lines written",
                 runs, st->refs_merged);
    }
    if (out_is_open) {
        if (ok && st->unmapped)
            g_string_append_printf(c.out.buf, "# %" PRIu64 " references outside every mapping "
                                   "were dropped (--drop-unmapped)\n", st->unmapped);
        GError *e2 = NULL;
        if (!out_close(&c.out, ok ? err : &e2))
            ok = false;
        g_clear_error(&e2);
    }
    g_string_free(c.blk, TRUE);
    g_ptr_array_free(c.order, TRUE);
    g_hash_table_destroy(c.procs);
    g_ptr_array_free(ims, TRUE);
    return ok;
}

bool capture_import_dir(const char *dir, const char *out_path, const CaptureImportOptions *o,
                        CaptureImportStats *st, GError **err)
{
    if (!o->window_lines)
        return convert(dir, out_path, o, NULL, st, err);
    CaptureImportStats count;
    bool ok = convert(dir, "/dev/null", o, NULL, &count, err);
    uint64_t hdr[2] = {count.refs_merged, count.refs_written};
    bool hit = count.window_hit;
    capture_import_stats_clear(&count);
    if (!ok) {
        memset(st, 0, sizeof *st);
        return false;
    }
    if (!hit) { /* the whole capture fits: no window to speak of */
        CaptureImportOptions whole = *o;
        whole.window_lines = 0;
        return convert(dir, out_path, &whole, NULL, st, err);
    }
    return convert(dir, out_path, o, hdr, st, err);
}
