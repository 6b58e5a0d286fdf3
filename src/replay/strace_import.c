/* The strace importer's state machine: per-pid state (previous syscall's
 * end, an unfinished call waiting for its resumption, the heap break), the
 * timeline (day wraps of -tt, accumulation of -r) and the statistics. Line
 * lexing is strace_parse.c, turning one call into event fields is
 * strace_event.c, the order of the output and its `switch` events is
 * uniproc_sched.c (shared with any importer of a per-task log). */
#include "replay/strace_import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/linereader.h"
#include "replay/strace_event.h"
#include "replay/uniproc_sched.h"

#define GAP_BINS 10000 /* 1 us bins for the median gap; the last one holds the rest */
#define DAY_NS (86400ull * 1000000000ull)
/* Events of other tasks held back while one runs (BLOCK order): about
 * 100 bytes each, so the importer's memory stays under 10 MB. */
#define MAX_HELD 65536

typedef struct {
    uint32_t pid;
    bool have_prev;          /* prev_end is known */
    uint64_t prev_end;       /* when the previous syscall returned (ns, timeline) */
    bool pending;            /* an unfinished call waits for its resumption */
    char pend_name[SYSCALL_NAME_MAX + 1];
    GString *pend_args;
    bool pend_has_time;
    uint64_t pend_start;
    bool pend_clone;         /* the pending call creates a task */
    bool pend_may_block;     /* ... or could sleep */
    bool announced;          /* ... and its child was already announced */
    uint32_t announced_child;
    bool brk_known;
    uint64_t brk;
} PidState;

struct StraceImporter {
    StraceImportOptions opt;
    char *name;
    StraceHeaderFn header_fn;
    StraceEventFn event_fn;
    void *ud;
    char *command;           /* for @command: the option, or the first execve's argv */
    char **header_extra;
    bool header_sent;
    GHashTable *pids;        /* pid -> PidState* */
    UniprocSched *sched;      /* orders events and writes the switches */
    bool now_known;          /* the current line's time on the timeline */
    uint64_t now;
    bool ts_seen;            /* the first line fixed the timestamp format */
    StraceTsKind ts_kind;
    bool ts_frac;
    uint64_t day_base, last_clock, rel_acc;
    bool saw_unprefixed, alias_set;
    uint32_t alias_from;
    unsigned pending_clones; /* unfinished, unannounced clone-family calls */
    GString *carry;          /* a line cut by "strace: Process N attached" */
    uint64_t carry_lineno;
    GString *scratch;
    uint64_t *gap_hist;
    StraceImportStats st;
};

void strace_import_options_init(StraceImportOptions *o)
{
    *o = (StraceImportOptions){
        .clock_mhz = STRACE_DEFAULT_CLOCK_MHZ,
        .ipc = STRACE_DEFAULT_IPC,
        .overhead_us = STRACE_DEFAULT_OVERHEAD_US,
        .block_us = STRACE_DEFAULT_BLOCK_US,
        .user_pages = STRACE_DEFAULT_USER_PAGES,
        .user_pattern = STRACE_DEFAULT_USER_PATTERN,
        .order = STRACE_ORDER_BLOCK,
        .slice_ms = STRACE_DEFAULT_SLICE_MS,
    };
}

void strace_import_stats_clear(StraceImportStats *s)
{
    for (int i = 0; i < STRACE_IMPORT_SHOWN; i++)
        g_free(s->shown[i]);
    if (s->unknown_names)
        g_hash_table_unref(s->unknown_names);
    memset(s, 0, sizeof *s);
}

static const char *ts_name(const StraceImporter *imp)
{
    switch (imp->ts_kind) {
    case STRACE_TS_CLOCK: return imp->ts_frac ? "tt" : "t (whole seconds: no user work derived)";
    case STRACE_TS_EPOCH: return "ttt";
    case STRACE_TS_RELATIVE: return "r";
    case STRACE_TS_NONE: break;
    }
    return "none (no user work derived)";
}

static bool timing(const StraceImporter *imp)
{
    return imp->ts_kind != STRACE_TS_NONE && imp->ts_frac;
}

static void send_header(StraceImporter *imp)
{
    if (imp->header_sent)
        return;
    imp->header_sent = true;
    const StraceImportOptions *o = &imp->opt;
    TraceHeader *h = trace_header_new();
    char *base = g_path_get_basename(imp->name);
    trace_header_set(h, "source", "strace");
    trace_header_set(h, "input", base);
    g_free(base);
    if (imp->command)
        trace_header_set(h, "command", imp->command);
    for (char **kv = imp->header_extra; kv && *kv; kv++) {
        char *eq = strchr(*kv, '=');
        if (!eq) /* the caller validates; see cmd_import_strace.c */
            continue;
        char *key = g_strndup(*kv, (gsize)(eq - *kv));
        trace_header_set(h, key, eq + 1);
        g_free(key);
    }
    trace_header_set_double(h, "clock-mhz", o->clock_mhz);
    trace_header_set_double(h, "ipc", o->ipc);
    trace_header_set_double(h, "overhead-us", o->overhead_us);
    trace_header_set_double(h, "block-us", o->block_us);
    trace_header_set_double(h, "user-pages", o->user_pages);
    trace_header_set(h, "user-pattern", trace_pattern_name(o->user_pattern));
    trace_header_set(h, "order", o->order == STRACE_ORDER_BLOCK ? "block" : "interleave");
    if (o->order == STRACE_ORDER_BLOCK)
        trace_header_set_double(h, "slice-ms", o->slice_ms);
    trace_header_set(h, "timestamps", ts_name(imp));
    imp->header_fn(h, imp->ud);
    trace_header_free(h);
}

/* The scheduler's output: count, then hand over. */
static void deliver(const TraceEvent *ev, void *ud)
{
    StraceImporter *imp = ud;
    send_header(imp);
    imp->st.events++;
    switch ((TraceEventKind)ev->kind) {
    case TRACE_EV_USER: imp->st.user_events++, imp->st.user_insns += ev->u.user.insns; break;
    case TRACE_EV_SYSCALL: imp->st.syscalls++; break;
    case TRACE_EV_FORK: imp->st.forks++; break;
    case TRACE_EV_EXEC: imp->st.execs++; break;
    case TRACE_EV_EXIT: imp->st.exits++; break;
    case TRACE_EV_SWITCH: imp->st.switches++; break;
    case TRACE_EV_SIGNAL: imp->st.signals++; break;
    default: break;
    }
    imp->event_fn(ev, imp->ud);
}

static void emit(StraceImporter *imp, const TraceEvent *ev)
{
    bool yields = ev->kind == TRACE_EV_SYSCALL && ev->u.sys.blocked;
    uniproc_sched_push(imp->sched, ev, yields, imp->now_known, imp->now);
}

/* ---------------- pids ---------------- */

static PidState *pid_new(StraceImporter *imp, uint32_t pid)
{
    PidState *ps = g_new0(PidState, 1);
    ps->pid = pid;
    ps->pend_args = g_string_new(NULL);
    g_hash_table_insert(imp->pids, GUINT_TO_POINTER(pid), ps);
    imp->st.pids++;
    return ps;
}

static void pid_free(gpointer p)
{
    PidState *ps = p;
    g_string_free(ps->pend_args, TRUE);
    g_free(ps);
}

static PidState *pid_get(StraceImporter *imp, uint32_t pid)
{
    return g_hash_table_lookup(imp->pids, GUINT_TO_POINTER(pid));
}

static void pending_clear(StraceImporter *imp, PidState *ps)
{
    if (ps->pending && ps->pend_clone && !ps->announced)
        imp->pending_clones--;
    ps->pending = ps->announced = false;
}

static StraceCall pending_call(const PidState *ps)
{
    StraceCall c = {0};
    c.name = (StraceText){ps->pend_name, strlen(ps->pend_name)};
    c.all_args = (StraceText){ps->pend_args->str, ps->pend_args->len};
    return c;
}

/* A pid's first line came while exactly one clone was in progress: it is
 * that clone's child. Announce it now so that its events follow its fork. */
static void announce_child(StraceImporter *imp, PidState *parent, PidState *child)
{
    StraceCall c = pending_call(parent);
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_FORK, parent->pid);
    ev.u.fork.child = child->pid;
    ev.u.fork.shared_vm = strace_call_shares_vm(&c);
    emit(imp, &ev);
    parent->announced = true;
    parent->announced_child = child->pid;
    imp->pending_clones--;
    child->have_prev = parent->pend_has_time;
    child->prev_end = parent->pend_start;
}

static PidState *pending_clone_owner(StraceImporter *imp)
{
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, imp->pids);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        PidState *ps = v;
        if (ps->pending && ps->pend_clone && !ps->announced)
            return ps;
    }
    g_assert_not_reached();
}

/* The pid state a line belongs to, created on first sight. strace -f
 * writing to stderr prints no prefix while one process is traced; the
 * first prefixed pid that is not a child being created is that process. */
static PidState *pid_for_line(StraceImporter *imp, const StraceLine *l)
{
    uint32_t pid = l->pid;
    if (!l->has_pid) {
        pid = imp->opt.default_pid;
        imp->saw_unprefixed = true;
    } else if (imp->alias_set && pid == imp->alias_from) {
        pid = imp->opt.default_pid;
    }
    PidState *ps = pid_get(imp, pid);
    if (ps)
        return ps;
    if (l->has_pid && imp->saw_unprefixed && !imp->alias_set && pid != imp->opt.default_pid) {
        PidState *dp = pid_get(imp, imp->opt.default_pid);
        bool resumes_default = l->kind == STRACE_RESUMED && dp && dp->pending &&
                               strlen(dp->pend_name) == l->name.len &&
                               memcmp(dp->pend_name, l->name.p, l->name.len) == 0;
        if (resumes_default || imp->pending_clones != 1) {
            imp->alias_set = true;
            imp->alias_from = pid;
            if (dp)
                return dp;
            pid = imp->opt.default_pid;
        }
    }
    PidState *parent = imp->pending_clones == 1 ? pending_clone_owner(imp) : NULL;
    ps = pid_new(imp, pid);
    if (parent)
        announce_child(imp, parent, ps);
    else
        imp->st.roots++;
    return ps;
}

/* ---------------- calls ---------------- */

/* User work between the pid's previous syscall and this one's start. */
static void user_work(StraceImporter *imp, PidState *ps, bool has_t, uint64_t start)
{
    if (!timing(imp) || !has_t || !ps->have_prev || start < ps->prev_end)
        return;
    uint64_t gap = start - ps->prev_end;
    imp->st.gaps++;
    imp->gap_hist[MIN(gap / 1000, (uint64_t)GAP_BINS - 1)]++;
    double work_ns = (double)gap - imp->opt.overhead_us * 1000.0;
    if (work_ns <= 0)
        return;
    double insns = round(work_ns * imp->opt.clock_mhz * imp->opt.ipc / 1000.0);
    if (insns < 1)
        return;
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_USER, ps->pid);
    ev.u.user.pages = imp->opt.user_pages;
    ev.u.user.pattern = (uint8_t)imp->opt.user_pattern;
    /* A gap longer than one event may hold is several events, together
     * the whole gap, up to STRACE_MAX_GAP_INSNS. */
    uint64_t left = (uint64_t)MIN(insns, (double)STRACE_MAX_GAP_INSNS);
    imp->st.gaps_capped += insns > (double)STRACE_MAX_GAP_INSNS;
    while (left) {
        ev.u.user.insns = MIN(left, TRACE_USER_INSNS_MAX);
        left -= ev.u.user.insns;
        emit(imp, &ev);
    }
}

static void state_events(StraceImporter *imp, PidState *ps, const StraceCall *c,
                         SyscallRole role, uint64_t end)
{
    TraceEvent ev;
    bool ok = strace_call_ok(c);
    if (role == SYSCALL_ROLE_CLONE && ok && c->ret > 0 && c->ret <= UINT32_MAX) {
        uint32_t child = (uint32_t)c->ret;
        if (ps->announced) {
            imp->st.misattributed += ps->announced_child != child;
        } else if (!pid_get(imp, child)) {
            trace_event_init(&ev, TRACE_EV_FORK, ps->pid);
            ev.u.fork.child = child;
            ev.u.fork.shared_vm = strace_call_shares_vm(c);
            emit(imp, &ev);
            PidState *cs = pid_new(imp, child);
            cs->have_prev = timing(imp);
            cs->prev_end = end;
        }
    } else if (role == SYSCALL_ROLE_EXEC && ok) {
        char *path = strace_call_exec_path(c);
        if (path && strlen(path) > TRACE_PATH_MAX)
            path[TRACE_PATH_MAX] = '\0';
        trace_event_init(&ev, TRACE_EV_EXEC, ps->pid);
        ev.u.exec.path = g_intern_string(path ? path : "");
        g_free(path);
        emit(imp, &ev);
        ps->brk_known = false;
    } else if ((role == SYSCALL_ROLE_MMAP || role == SYSCALL_ROLE_MUNMAP ||
                role == SYSCALL_ROLE_MPROTECT) && ok) {
        strace_call_to_map(c, role, ps->pid, &ev);
        emit(imp, &ev);
    } else if (role == SYSCALL_ROLE_BRK && ok && (!ps->brk_known || ps->brk != (uint64_t)c->ret)) {
        trace_event_init(&ev, TRACE_EV_BRK, ps->pid);
        ev.u.brk.addr = ps->brk = (uint64_t)c->ret;
        ps->brk_known = true;
        emit(imp, &ev);
    }
}

/* A finished call (complete line, joined pair, or lost half). */
static void complete_call(StraceImporter *imp, PidState *ps, StraceCall *c, bool has_t,
                          uint64_t start, bool has_dur, uint64_t dur)
{
    strace_call_split(c);
    TraceEvent ev;
    strace_call_to_syscall(c, ps->pid, &ev);
    ev.u.sys.dur_ns = has_dur ? dur : 0;
    const SyscallInfo *info = syscall_info(ev.u.sys.nr);
    ev.u.sys.blocked = info->may_block && has_dur && (double)dur >= imp->opt.block_us * 1000.0;
    SyscallRole role = (SyscallRole)info->role;
    if (role == SYSCALL_ROLE_EXEC && !imp->command && !imp->header_sent)
        imp->command = strace_call_exec_command(c);
    emit(imp, &ev);
    imp->st.bytes_in += ev.u.sys.in;
    imp->st.bytes_out += ev.u.sys.out;
    if (ev.u.sys.nr == SYSCALL_ID_UNKNOWN) {
        imp->st.unknown_syscalls++;
        gpointer n = g_hash_table_lookup(imp->st.unknown_names, ev.u.sys.name);
        g_hash_table_insert(imp->st.unknown_names, (gpointer)ev.u.sys.name,
                            GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
    }
    uint64_t end = start + (has_dur ? dur : 0);
    state_events(imp, ps, c, role, end);
    if (has_t && timing(imp)) {
        ps->have_prev = true;
        ps->prev_end = end;
    }
}

/* An unfinished call that will never be resumed: its entry happened, so
 * it is kept as a syscall with an unknown result. */
static void pending_lose(StraceImporter *imp, PidState *ps)
{
    if (!ps->pending)
        return;
    StraceCall c = pending_call(ps);
    c.ret_known = false; /* so no state event: no fork, exec or mapping */
    imp->st.unfinished_lost++;
    complete_call(imp, ps, &c, false, 0, false, 0);
    pending_clear(imp, ps);
}

static StraceCall line_call(const StraceLine *l, StraceText args)
{
    StraceCall c = {0};
    c.name = l->name;
    c.all_args = args;
    c.ret_known = l->ret_known;
    c.ret = l->ret;
    c.err = l->err;
    return c;
}

static void on_unfinished(StraceImporter *imp, PidState *ps, const StraceLine *l, bool has_t,
                          uint64_t t)
{
    pending_lose(imp, ps);
    user_work(imp, ps, has_t, t);
    memcpy(ps->pend_name, l->name.p, l->name.len);
    ps->pend_name[l->name.len] = '\0';
    g_string_assign(ps->pend_args, "");
    g_string_append_len(ps->pend_args, l->args.p, (gssize)l->args.len);
    ps->pending = true;
    ps->pend_has_time = has_t;
    ps->pend_start = t;
    unsigned id = syscall_lookup(l->name.p, l->name.len);
    ps->pend_clone = syscall_info(id)->role == SYSCALL_ROLE_CLONE;
    ps->pend_may_block = syscall_info(id)->may_block;
    imp->pending_clones += ps->pend_clone;
}

static void on_resumed(StraceImporter *imp, PidState *ps, const StraceLine *l, bool has_t,
                       uint64_t t)
{
    if (ps->pending && strlen(ps->pend_name) == l->name.len &&
        memcmp(ps->pend_name, l->name.p, l->name.len) == 0) {
        imp->st.joined++;
        g_string_assign(imp->scratch, ps->pend_args->str);
        if (imp->scratch->len && l->args.len)
            g_string_append_c(imp->scratch, ' ');
        g_string_append_len(imp->scratch, l->args.p, (gssize)l->args.len);
        StraceCall c = line_call(l, (StraceText){imp->scratch->str, imp->scratch->len});
        bool has_dur = l->has_dur;
        uint64_t dur = l->dur_ns;
        if (!has_dur && has_t && ps->pend_has_time && timing(imp) && t >= ps->pend_start) {
            has_dur = true; /* no -T: the two halves' timestamps bound the call */
            dur = t - ps->pend_start;
        }
        complete_call(imp, ps, &c, ps->pend_has_time, ps->pend_start, has_dur, dur);
        pending_clear(imp, ps);
        return;
    }
    pending_lose(imp, ps);
    imp->st.resumed_orphan++;
    uint64_t start = l->has_dur && t >= l->dur_ns ? t - l->dur_ns : t;
    user_work(imp, ps, has_t, start);
    /* The first half and its arguments are missing: argument positions
     * are unknown, so only return-value rules can count bytes. */
    StraceCall c = line_call(l, (StraceText){"", 0});
    complete_call(imp, ps, &c, has_t, start, l->has_dur, l->dur_ns);
}

/* ---------------- lines ---------------- */

static bool bad_line(StraceImporter *imp, uint64_t lineno, const char *line, size_t col,
                     const char *expected, GError **err)
{
    const char *at = line + MIN(col, strlen(line));
    char *msg = *at ? g_strdup_printf("%s:%" G_GUINT64_FORMAT ": expected %s, got '%.40s%s'",
                                      imp->name, lineno, expected, at,
                                      strlen(at) > 40 ? "..." : "")
                    : g_strdup_printf("%s:%" G_GUINT64_FORMAT ": expected %s, got the end of "
                                      "the line", imp->name, lineno, expected);
    imp->st.bad_lines++;
    if (imp->opt.strict) {
        g_set_error_literal(err, TRACE_ERROR, TRACE_ERROR_PARSE, msg);
        g_free(msg);
        return false;
    }
    if (imp->st.bad_lines <= STRACE_IMPORT_SHOWN)
        imp->st.shown[imp->st.bad_lines - 1] = msg;
    else
        g_free(msg);
    return true;
}

/* The line's time on the trace's timeline; false if its timestamp format
 * differs from the first line's. */
static bool line_time(StraceImporter *imp, const StraceLine *l, uint64_t *t)
{
    if (!imp->ts_seen) {
        imp->ts_seen = true;
        imp->ts_kind = l->ts;
        imp->ts_frac = l->ts_frac;
        imp->last_clock = l->ts_ns;
    } else if (l->ts != imp->ts_kind || l->ts_frac != imp->ts_frac) {
        return false;
    }
    switch (l->ts) {
    case STRACE_TS_NONE: *t = 0; break;
    case STRACE_TS_CLOCK:
        if (l->ts_ns + DAY_NS / 2 < imp->last_clock) /* past midnight */
            imp->day_base += DAY_NS;
        imp->last_clock = l->ts_ns;
        *t = imp->day_base + l->ts_ns;
        break;
    case STRACE_TS_EPOCH: *t = l->ts_ns; break;
    case STRACE_TS_RELATIVE: *t = imp->rel_acc += l->ts_ns; break;
    }
    return true;
}

/* "...|SIGCHLDstrace: Process 123 attached": strace's own message cut a
 * trace line in two (both went to stderr). Returns where it starts. */
static const char *attach_message(const char *line)
{
    const char *m = strstr(line, "strace: Process ");
    if (!m || m == line || !(g_str_has_suffix(m, " attached") || g_str_has_suffix(m, " detached")))
        return NULL;
    const char *p = m + strlen("strace: Process ");
    while (g_ascii_isdigit(*p))
        p++;
    return p > m + strlen("strace: Process ") && *p == ' ' ? m : NULL;
}

/* The running task has been inside an unfinished call for the blocked
 * threshold: on one CPU it would have slept and let another task run. */
static void yield_if_blocked(StraceImporter *imp, uint64_t t)
{
    uint32_t pid;
    uniproc_sched_tick(imp->sched, t);
    if (!uniproc_sched_running(imp->sched, &pid))
        return;
    PidState *ps = pid_get(imp, pid);
    if (ps && ps->pending && ps->pend_may_block && ps->pend_has_time && t >= ps->pend_start &&
        (double)(t - ps->pend_start) >= imp->opt.block_us * 1000.0)
        uniproc_sched_yield(imp->sched);
}

static const char *intern_text(StraceText s)
{
    char *tmp = g_strndup(s.p, s.len);
    const char *in = g_intern_string(tmp);
    g_free(tmp);
    return in;
}

static bool feed_line(StraceImporter *imp, const char *line, uint64_t lineno, GError **err)
{
    StraceLine l;
    const char *expected = NULL;
    size_t col = 0;
    uint64_t t = 0;
    if (!strace_parse_line(line, &l, &expected, &col))
        return bad_line(imp, lineno, line, col, expected, err);
    if (l.kind == STRACE_NOTE) {
        imp->st.notes++;
        return true;
    }
    if (!line_time(imp, &l, &t))
        return bad_line(imp, lineno, line, 0,
                        "a timestamp in the same format as the first line's", err);
    if (l.name.len > SYSCALL_NAME_MAX)
        return bad_line(imp, lineno, line, (size_t)(l.name.p - line),
                        "a name of at most 63 characters", err);
    bool has_t = l.ts != STRACE_TS_NONE;
    imp->now_known = has_t && timing(imp);
    imp->now = t;
    if (imp->now_known)
        yield_if_blocked(imp, t);
    PidState *ps = pid_for_line(imp, &l);
    StraceCall c;
    TraceEvent ev;
    switch (l.kind) {
    case STRACE_CALL:
        pending_lose(imp, ps);
        user_work(imp, ps, has_t, t);
        c = line_call(&l, l.args);
        complete_call(imp, ps, &c, has_t, t, l.has_dur, l.dur_ns);
        break;
    case STRACE_UNFINISHED: on_unfinished(imp, ps, &l, has_t, t); break;
    case STRACE_RESUMED: on_resumed(imp, ps, &l, has_t, t); break;
    case STRACE_DETACHED:
        imp->st.detached++;
        pending_lose(imp, ps);
        user_work(imp, ps, has_t, t);
        c = line_call(&l, l.args);
        c.ret_known = false;
        complete_call(imp, ps, &c, false, 0, false, 0);
        break;
    case STRACE_SIGNAL:
        trace_event_init(&ev, TRACE_EV_SIGNAL, ps->pid);
        ev.u.signal.name = intern_text(l.name);
        emit(imp, &ev);
        break;
    case STRACE_EXITED:
    case STRACE_KILLED:
        pending_lose(imp, ps);
        trace_event_init(&ev, TRACE_EV_EXIT, ps->pid);
        ev.u.exit.status = l.status;
        if (l.kind == STRACE_KILLED) {
            ev.u.exit.signal = intern_text(l.name);
            ev.u.exit.core = l.core;
        }
        emit(imp, &ev);
        pending_clear(imp, ps);
        g_hash_table_remove(imp->pids, GUINT_TO_POINTER(ps->pid));
        break;
    case STRACE_NOTE: break;
    }
    return true;
}

bool strace_importer_feed(StraceImporter *imp, const char *line, uint64_t lineno, GError **err)
{
    imp->st.lines++;
    if (imp->carry->len) {
        g_string_append(imp->carry, line);
        bool ok = feed_line(imp, imp->carry->str, imp->carry_lineno, err);
        g_string_truncate(imp->carry, 0);
        return ok;
    }
    const char *msg = attach_message(line);
    if (msg) {
        imp->st.notes++;
        g_string_append_len(imp->carry, line, msg - line);
        imp->carry_lineno = lineno;
        return true;
    }
    return feed_line(imp, line, lineno, err);
}

/* ---------------- life cycle ---------------- */

StraceImporter *strace_importer_new(const StraceImportOptions *o, const char *name,
                                    StraceHeaderFn header_fn, StraceEventFn event_fn, void *ud)
{
    StraceImporter *imp = g_new0(StraceImporter, 1);
    imp->opt = *o;
    imp->opt.command = NULL;      /* copies below */
    imp->opt.header_extra = NULL;
    imp->name = g_strdup(name);
    imp->header_fn = header_fn;
    imp->event_fn = event_fn;
    imp->ud = ud;
    imp->pids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, pid_free);
    imp->carry = g_string_new(NULL);
    imp->scratch = g_string_new(NULL);
    imp->gap_hist = g_new0(uint64_t, GAP_BINS);
    UniprocOrder order = o->order == STRACE_ORDER_BLOCK ? UNIPROC_ORDER_BLOCK
                                                        : UNIPROC_ORDER_INTERLEAVE;
    imp->sched = uniproc_sched_new(order, (uint64_t)(o->slice_ms * 1e6), MAX_HELD, deliver, imp);
    imp->st.unknown_names = g_hash_table_new(g_direct_hash, g_direct_equal);

    imp->command = g_strdup(o->command);
    imp->header_extra = g_strdupv(o->header_extra);
    return imp;
}

static int cmp_pid(gconstpointer a, gconstpointer b)
{
    uint32_t x = (*(PidState *const *)a)->pid, y = (*(PidState *const *)b)->pid;
    return x < y ? -1 : x > y;
}

void strace_importer_finish(StraceImporter *imp)
{
    if (imp->carry->len) { /* a cut line with no continuation */
        feed_line(imp, imp->carry->str, imp->carry_lineno, NULL);
        g_string_truncate(imp->carry, 0);
    }
    /* Calls still unfinished, in pid order so that output is deterministic. */
    GPtrArray *pending = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, imp->pids);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (((PidState *)v)->pending)
            g_ptr_array_add(pending, v);
    g_ptr_array_sort(pending, cmp_pid);
    for (guint i = 0; i < pending->len; i++)
        pending_lose(imp, pending->pdata[i]);
    g_ptr_array_free(pending, TRUE);
    uniproc_sched_flush(imp->sched);
    send_header(imp);

    uint64_t half = (imp->st.gaps + 1) / 2, seen = 0;
    for (unsigned b = 0; b < GAP_BINS && imp->st.gaps; b++) {
        seen += imp->gap_hist[b];
        if (seen >= half) {
            imp->st.gap_median_us = b + 0.5; /* the bin's middle: 1 us resolution */
            break;
        }
    }
}

const StraceImportStats *strace_importer_stats(const StraceImporter *imp) { return &imp->st; }

void strace_importer_take_stats(StraceImporter *imp, StraceImportStats *out)
{
    *out = imp->st;
    memset(&imp->st, 0, sizeof imp->st);
}

void strace_importer_free(StraceImporter *imp)
{
    if (!imp)
        return;
    strace_import_stats_clear(&imp->st);
    g_hash_table_unref(imp->pids);
    uniproc_sched_free(imp->sched);
    g_free(imp->command);
    g_strfreev(imp->header_extra);
    g_string_free(imp->carry, TRUE);
    g_string_free(imp->scratch, TRUE);
    g_free(imp->gap_hist);
    g_free(imp->name);
    g_free(imp);
}

bool strace_import_stream(const char *in, const StraceImportOptions *o,
                          StraceHeaderFn header_fn, StraceEventFn event_fn, void *ud,
                          StraceImportStats *stats, GError **err)
{
    LineReader *lr = linereader_open(in, err);
    if (!lr)
        return false;
    StraceImporter *imp = strace_importer_new(o, linereader_path(lr), header_fn, event_fn, ud);
    char *line;
    size_t len;
    GError *e = NULL;
    bool ok = true;
    while (ok && linereader_next(lr, &line, &len, &e)) {
        uint64_t no = linereader_lineno(lr);
        if (memchr(line, '\0', len)) {
            imp->st.lines++;
            ok = bad_line(imp, no, line, 0, "text without NUL bytes (binary data?)", err);
        } else {
            ok = strace_importer_feed(imp, line, no, err);
        }
    }
    if (e) {
        g_propagate_error(err, e);
        ok = false;
    }
    if (ok)
        strace_importer_finish(imp);
    if (stats)
        strace_importer_take_stats(imp, stats);
    strace_importer_free(imp);
    linereader_close(lr);
    return ok;
}

typedef struct {
    const char *path;
    TraceWriter *w;
    GError *error;
} FileSink;

static void sink_header(const TraceHeader *h, void *ud)
{
    FileSink *s = ud;
    s->w = trace_writer_open(s->path, h, &s->error);
}

static void sink_event(const TraceEvent *ev, void *ud)
{
    FileSink *s = ud;
    if (s->w)
        trace_writer_write(s->w, ev);
}

bool strace_import_file(const char *in, const char *out, const StraceImportOptions *o,
                        StraceImportStats *stats, GError **err)
{
    FileSink sink = {.path = out};
    bool ok = strace_import_stream(in, o, sink_header, sink_event, &sink, stats, err);
    if (sink.w && !trace_writer_close(sink.w, ok ? err : NULL))
        ok = false;
    if (sink.error) {
        if (ok)
            g_propagate_error(err, sink.error);
        else
            g_error_free(sink.error);
        ok = false;
    }
    return ok;
}
