/* vmsplit import-strace.
 *
 * Hand-written excerpts (tests/replay/data/NAME.strace) against traces
 * derived from them by hand (data/NAME.vmt): with a 1 MHz clock and IPC 1
 * every user event holds the gap in microseconds, so each line of the
 * expected trace can be checked with a pencil. The real captures in
 * workloads/traces/ against what their construction guarantees (4 MiB
 * copied, 6 requests served by 6 threads, a 3-process pipeline) and against
 * counts taken from the raw text with plain substring tests. The CLI end to
 * end: exit codes, --strict, stdin and stdout. */
#include <check.h>
#include <gio/gio.h>
#include <string.h>

#include "replay/linereader.h"
#include "replay/strace_import.h"
#include "replay/syscall_table.h"
#include "replay/trace.h"
#include "test_tmp.h"

static const char *vmsplit_exe;
static char *tmpdir;

static char *data_path(const char *name)
{
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    ck_assert_msg(src, "VMSPLIT_SOURCE_DIR not set");
    return g_build_filename(src, "tests", "replay", "data", name, NULL);
}

static void hand_options(StraceImportOptions *o, StraceOrder order)
{
    strace_import_options_init(o);
    o->clock_mhz = 1; /* 1 instruction per microsecond of gap */
    o->ipc = 1;
    o->overhead_us = 0;
    o->block_us = 100;
    o->user_pages = 4;
    o->user_pattern = TRACE_PAT_SEQ;
    o->order = order;
}

/* Imports data/<in> and compares the trace text with data/<expected>. */
static void check_import(const char *in, const char *expected, StraceOrder order, uint32_t pid,
                         StraceImportStats *st)
{
    g_autofree char *src = data_path(in), *exp = data_path(expected);
    g_autofree char *out = g_build_filename(tmpdir, "out.vmt", NULL);
    StraceImportOptions o;
    hand_options(&o, order);
    o.default_pid = pid;
    GError *err = NULL;
    ck_assert_msg(strace_import_file(src, out, &o, st, &err), "%s", err ? err->message : "?");
    g_autofree char *got = test_slurp(out), *want = test_slurp(exp);
    ck_assert_str_eq(got, want);
}

START_TEST(test_pairs_interleave)
{
    StraceImportStats st = {0};
    check_import("pairs.strace", "pairs.interleave.vmt", STRACE_ORDER_INTERLEAVE, 0, &st);
    /* Counted by hand in pairs.strace. */
    ck_assert_uint_eq(st.lines, 17);
    ck_assert_uint_eq(st.syscalls, 12);
    ck_assert_uint_eq(st.joined, 2);
    ck_assert_uint_eq(st.pids, 2);
    ck_assert_uint_eq(st.forks, 1);
    ck_assert_uint_eq(st.exits, 2);
    ck_assert_uint_eq(st.signals, 1);
    ck_assert_uint_eq(st.switches, 4);
    ck_assert_uint_eq(st.unknown_syscalls, 1);
    ck_assert_uint_eq(GPOINTER_TO_UINT(g_hash_table_lookup(st.unknown_names,
                                                          g_intern_string("frobnicate"))), 1);
    ck_assert_uint_eq(st.bad_lines, 0);
    ck_assert_uint_eq(st.bytes_in, 9 + 65536 + 8);
    ck_assert_uint_eq(st.bytes_out, 16 + 4);
    ck_assert_uint_eq(st.user_insns, 200 + 90 + 580 + 50 + 70 + 100 + 200 + 95 + 110 + 93 + 97);
    strace_import_stats_clear(&st);
}
END_TEST

START_TEST(test_pairs_block)
{
    StraceImportStats st = {0};
    check_import("pairs.strace", "pairs.block.vmt", STRACE_ORDER_BLOCK, 0, &st);
    ck_assert_uint_eq(st.switches, 2);
    ck_assert_uint_eq(st.syscalls, 12);
    strace_import_stats_clear(&st);
}
END_TEST

START_TEST(test_stderr_form_ttt)
{
    StraceImportStats st = {0};
    check_import("stderr.strace", "stderr.vmt", STRACE_ORDER_INTERLEAVE, 0, &st);
    ck_assert_uint_eq(st.joined, 2);
    ck_assert_uint_eq(st.pids, 2);
    ck_assert_uint_eq(st.notes, 1); /* "strace: Process 601 attached" */
    ck_assert_uint_eq(st.bad_lines, 0);
    strace_import_stats_clear(&st);
}
END_TEST

START_TEST(test_relative_no_f_no_T)
{
    StraceImportStats st = {0};
    check_import("relative.strace", "relative.vmt", STRACE_ORDER_INTERLEAVE, 42, &st);
    ck_assert_uint_eq(st.syscalls, 6);
    ck_assert_uint_eq(st.roots, 1);
    strace_import_stats_clear(&st);
}
END_TEST

/* ---- importer fed line by line ---- */

typedef struct {
    GArray *events;
    char *timestamps;
} Collect;

static void on_header(const TraceHeader *h, void *ud)
{
    Collect *c = ud;
    c->timestamps = g_strdup(trace_header_get(h, "timestamps"));
}

static void on_event(const TraceEvent *ev, void *ud)
{
    g_array_append_val(((Collect *)ud)->events, *ev);
}

static void feed(const char *const *lines, StraceOrder order, Collect *c, StraceImportStats *st)
{
    StraceImportOptions o;
    hand_options(&o, order);
    c->events = g_array_new(FALSE, FALSE, sizeof(TraceEvent));
    StraceImporter *imp = strace_importer_new(&o, "inline", on_header, on_event, c);
    for (unsigned i = 0; lines[i]; i++)
        ck_assert(strace_importer_feed(imp, lines[i], i + 1, NULL));
    strace_importer_finish(imp);
    strace_importer_take_stats(imp, st);
    strace_importer_free(imp);
}

static void collect_free(Collect *c)
{
    g_array_free(c->events, TRUE);
    g_free(c->timestamps);
}

#define EV(c, i) (&g_array_index((c).events, TraceEvent, i))

/* -tt without -T: a split call's duration comes from its halves. */
START_TEST(test_tt_without_T)
{
    static const char *const lines[] = {
        "800  10:00:00.000000 read(0,  <unfinished ...>",
        "801  10:00:00.000100 getpid() = 801",
        "800  10:00:00.000500 <... read resumed>\"x\", 1) = 1",
        NULL,
    };
    Collect c = {0};
    StraceImportStats st = {0};
    feed(lines, STRACE_ORDER_INTERLEAVE, &c, &st);
    ck_assert_uint_eq(c.events->len, 3);
    ck_assert_str_eq(EV(c, 0)->u.sys.name, "getpid");
    ck_assert_uint_eq(EV(c, 1)->kind, TRACE_EV_SWITCH);
    ck_assert_uint_eq(EV(c, 1)->pid, 800);
    const TraceSyscall *r = &EV(c, 2)->u.sys;
    ck_assert_str_eq(r->name, "read");
    ck_assert_uint_eq(r->dur_ns, 500000);
    ck_assert(r->blocked);
    ck_assert_uint_eq(r->out, 1);
    ck_assert_uint_eq(st.roots, 2);
    ck_assert_str_eq(c.timestamps, "tt");
    collect_free(&c);
    strace_import_stats_clear(&st);
}
END_TEST

/* No timestamps at all: syscalls, but no user work can be derived. */
START_TEST(test_no_timestamps)
{
    static const char *const lines[] = {
        "getpid() = 5",
        "write(1, \"hi\\n\", 3) = 3",
        "exit_group(0) = ?",
        "+++ exited with 0 +++",
        NULL,
    };
    Collect c = {0};
    StraceImportStats st = {0};
    feed(lines, STRACE_ORDER_BLOCK, &c, &st);
    ck_assert_uint_eq(c.events->len, 4);
    ck_assert_uint_eq(st.user_events, 0);
    ck_assert_uint_eq(EV(c, 1)->u.sys.in, 3);
    ck_assert_uint_eq(EV(c, 3)->kind, TRACE_EV_EXIT);
    ck_assert(g_str_has_prefix(c.timestamps, "none"));
    collect_free(&c);
    strace_import_stats_clear(&st);
}
END_TEST

/* A child whose first line comes before its parent's clone returns is
 * announced at once: its fork precedes its events, the parent's
 * `sys clone` comes later and no second fork is made. */
START_TEST(test_child_before_clone_returns)
{
    static const char *const lines[] = {
        "900  10:00:00.000000 getpid() = 900 <0.000010>",
        "900  10:00:00.000100 clone(child_stack=NULL, flags=CLONE_VM|CLONE_VFORK|SIGCHLD "
        "<unfinished ...>",
        "901  10:00:00.000200 getpid() = 901 <0.000010>",
        "900  10:00:00.000300 <... clone resumed>) = 901 <0.000200>",
        "901  10:00:00.000400 exit_group(0) = ?",
        "901  10:00:00.000450 +++ exited with 0 +++",
        NULL,
    };
    Collect c = {0};
    StraceImportStats st = {0};
    feed(lines, STRACE_ORDER_INTERLEAVE, &c, &st);
    int fork_at = -1, child_first = -1, clone_at = -1;
    for (guint i = 0; i < c.events->len; i++) {
        const TraceEvent *e = EV(c, i);
        if (e->kind == TRACE_EV_FORK) {
            ck_assert_int_eq(fork_at, -1);
            fork_at = (int)i;
            ck_assert_uint_eq(e->pid, 900);
            ck_assert_uint_eq(e->u.fork.child, 901);
            ck_assert(e->u.fork.shared_vm);
        }
        if (e->pid == 901 && child_first < 0)
            child_first = (int)i;
        if (e->kind == TRACE_EV_SYSCALL && !strcmp(e->u.sys.name, "clone"))
            clone_at = (int)i;
    }
    ck_assert_int_ge(fork_at, 0);
    ck_assert_int_lt(fork_at, child_first);
    ck_assert_int_gt(clone_at, child_first);
    ck_assert_uint_eq(st.forks, 1);
    ck_assert_uint_eq(st.roots, 1);
    ck_assert_uint_eq(st.joined, 1);
    collect_free(&c);
    strace_import_stats_clear(&st);
}
END_TEST

/* ---- bad lines: counted and shown, fatal only with strict ---- */

START_TEST(test_malformed_counted)
{
    g_autofree char *src = data_path("malformed.strace");
    g_autofree char *out = g_build_filename(tmpdir, "m.vmt", NULL);
    StraceImportOptions o;
    hand_options(&o, STRACE_ORDER_BLOCK);
    StraceImportStats st = {0};
    GError *err = NULL;
    ck_assert_msg(strace_import_file(src, out, &o, &st, &err), "%s", err ? err->message : "");
    /* Lines 2, 3, 5, 6, 7, 9 and 12 (cut, no newline) are bad. */
    ck_assert_uint_eq(st.lines, 12);
    ck_assert_uint_eq(st.bad_lines, 7);
    ck_assert_uint_eq(st.syscalls, 4);
    ck_assert_uint_eq(st.exits, 1);
    const unsigned lines[] = {2, 3, 5, 6, 7};
    for (int i = 0; i < STRACE_IMPORT_SHOWN; i++) {
        g_autofree char *at = g_strdup_printf("malformed.strace:%u: expected ", lines[i]);
        ck_assert_msg(st.shown[i] && strstr(st.shown[i], at), "shown[%d] = %s", i, st.shown[i]);
    }
    ck_assert(strstr(st.shown[0], "')' closing the arguments"));
    ck_assert(strstr(st.shown[3], "a return value"));
    strace_import_stats_clear(&st);
    /* The output is a valid trace with the good lines' events. */
    TraceReader *r = trace_reader_open(out, &err);
    ck_assert(r);
    TraceEvent ev;
    unsigned n = 0;
    while (trace_reader_next(r, &ev, &err))
        n++;
    ck_assert(!err);
    ck_assert_uint_eq(n, 4 + 3 + 1); /* 4 syscalls, 3 user gaps, 1 exit */
    trace_reader_close(r);

    o.strict = true;
    ck_assert(!strace_import_file(src, out, &o, &st, &err));
    ck_assert(err && strstr(err->message, "malformed.strace:2: expected ')' closing"));
    ck_assert_uint_eq(st.lines, 2);
    g_error_free(err);
    strace_import_stats_clear(&st);
}
END_TEST

/* The same excerpt gzipped here (GZlibCompressor), under the same name. */
START_TEST(test_gzip_input)
{
    g_autofree char *src = data_path("pairs.strace"), *text = test_slurp(src);
    GZlibCompressor *z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
    guint8 buf[16384];
    gsize nr, nw;
    ck_assert_int_eq(g_converter_convert(G_CONVERTER(z), text, strlen(text), buf, sizeof buf,
                                         G_CONVERTER_INPUT_AT_END, &nr, &nw, NULL),
                     G_CONVERTER_FINISHED);
    g_object_unref(z);
    g_autofree char *gz = g_build_filename(tmpdir, "pairs.strace", NULL);
    ck_assert(g_file_set_contents(gz, (char *)buf, (gssize)nw, NULL));
    g_autofree char *out = g_build_filename(tmpdir, "gz.vmt", NULL);
    StraceImportOptions o;
    hand_options(&o, STRACE_ORDER_INTERLEAVE);
    ck_assert(strace_import_file(gz, out, &o, NULL, NULL));
    g_autofree char *exp = data_path("pairs.interleave.vmt");
    g_autofree char *got = test_slurp(out), *want = test_slurp(exp);
    ck_assert_str_eq(got, want);
}
END_TEST

/* ---- the real captures ---- */

typedef struct {
    uint64_t syscalls, resumed, exits, signals;
} RawCounts;

/* Counts from the raw text with plain substring tests, not the parser. */
static RawCounts raw_counts(const char *path, uint64_t *pwrite_sum)
{
    RawCounts rc = {0};
    GError *err = NULL;
    LineReader *lr = linereader_open(path, &err);
    ck_assert_msg(lr, "%s", err ? err->message : "");
    char *line;
    size_t len;
    *pwrite_sum = 0;
    while (linereader_next(lr, &line, &len, &err)) {
        if (strstr(line, "+++ exited with") || strstr(line, "+++ killed by"))
            rc.exits++;
        else if (strstr(line, " --- SIG"))
            rc.signals++;
        else if (strstr(line, " resumed>"))
            rc.resumed++;
        else if (!strstr(line, " +++ ") && !strstr(line, " --- "))
            rc.syscalls++;
        const char *eq = strrchr(line, '=');
        if (strstr(line, " pwrite64(") && eq)
            *pwrite_sum += g_ascii_strtoull(eq + 1, NULL, 10);
    }
    ck_assert(!err);
    linereader_close(lr);
    return rc;
}

typedef struct {
    GArray *events;
} Sink;

static void sink_header(const TraceHeader *h, void *ud)
{
    (void)h;
    (void)ud;
}

static void sink_event(const TraceEvent *ev, void *ud)
{
    g_array_append_val(((Sink *)ud)->events, *ev);
}

static char *capture_path(const char *name)
{
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    g_autofree char *base = g_strconcat(name, ".strace", NULL);
    char *p = g_build_filename(src, "workloads", "traces", base, NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
        return p;
    g_free(p);
    g_autofree char *gz = g_strconcat(name, ".strace.gz", NULL);
    p = g_build_filename(src, "workloads", "traces", gz, NULL);
    ck_assert_msg(g_file_test(p, G_FILE_TEST_EXISTS), "no capture %s", name);
    return p;
}

typedef struct {
    GArray *events;
    StraceImportStats st;
} Imported;

static Imported import_capture(const char *path, StraceOrder order)
{
    StraceImportOptions o;
    strace_import_options_init(&o);
    o.order = order;
    o.overhead_us = 30;
    Sink s = {g_array_new(FALSE, FALSE, sizeof(TraceEvent))};
    Imported im = {0};
    GError *err = NULL;
    ck_assert_msg(strace_import_stream(path, &o, sink_header, sink_event, &s, &im.st, &err), "%s",
                  err ? err->message : "");
    im.events = s.events;
    return im;
}

/* Writes the events and reads them back: the running-pid rule must hold. */
static void check_valid_trace(const Imported *im)
{
    g_autofree char *out = g_build_filename(tmpdir, "capture.vmt.gz", NULL);
    GError *err = NULL;
    TraceWriter *w = trace_writer_open(out, NULL, &err);
    for (guint i = 0; i < im->events->len; i++)
        trace_writer_write(w, &g_array_index(im->events, TraceEvent, i));
    ck_assert(trace_writer_close(w, &err));
    TraceReader *r = trace_reader_open(out, &err);
    ck_assert(r);
    TraceEvent ev;
    guint n = 0;
    while (trace_reader_next(r, &ev, &err)) {
        ck_assert(trace_event_equal(&ev, &g_array_index(im->events, TraceEvent, n)));
        n++;
    }
    ck_assert_msg(!err, "%s", err ? err->message : "");
    ck_assert_uint_eq(n, im->events->len);
    trace_reader_close(r);
}

/* Each pid's own events, in order, leaving out switches. */
static GHashTable *per_pid(GArray *events)
{
    GHashTable *t = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                          (GDestroyNotify)g_ptr_array_unref);
    for (guint i = 0; i < events->len; i++) {
        TraceEvent *e = &g_array_index(events, TraceEvent, i);
        if (e->kind == TRACE_EV_SWITCH)
            continue;
        GPtrArray *a = g_hash_table_lookup(t, GUINT_TO_POINTER(e->pid));
        if (!a) {
            a = g_ptr_array_new();
            g_hash_table_insert(t, GUINT_TO_POINTER(e->pid), a);
        }
        g_ptr_array_add(a, e);
    }
    return t;
}

static const char *const captures[] = {"cp", "dd", "sqlite", "pipeline", "http", "calib"};

START_TEST(test_capture_counts)
{
    g_autofree char *path = capture_path(captures[_i]);
    uint64_t pwrite_sum;
    RawCounts rc = raw_counts(path, &pwrite_sum);
    Imported bl = import_capture(path, STRACE_ORDER_BLOCK);
    Imported il = import_capture(path, STRACE_ORDER_INTERLEAVE);
    for (int k = 0; k < 2; k++) {
        const StraceImportStats *st = k ? &il.st : &bl.st;
        ck_assert_uint_eq(st->bad_lines, 0);
        ck_assert_uint_eq(st->syscalls, rc.syscalls);
        ck_assert_uint_eq(st->joined, rc.resumed);
        ck_assert_uint_eq(st->exits, rc.exits);
        ck_assert_uint_eq(st->signals, rc.signals);
    }
    check_valid_trace(&bl);
    check_valid_trace(&il);
    /* One CPU's order changes no task's own sequence and never adds switches. */
    ck_assert_uint_le(bl.st.switches, il.st.switches);
    GHashTable *a = per_pid(bl.events), *b = per_pid(il.events);
    ck_assert_uint_eq(g_hash_table_size(a), g_hash_table_size(b));
    GHashTableIter it;
    gpointer pid, seq;
    g_hash_table_iter_init(&it, a);
    while (g_hash_table_iter_next(&it, &pid, &seq)) {
        GPtrArray *x = seq, *y = g_hash_table_lookup(b, pid);
        ck_assert(y && x->len == y->len);
        for (guint i = 0; i < x->len; i++)
            ck_assert(trace_event_equal(x->pdata[i], y->pdata[i]));
    }
    g_hash_table_unref(a);
    g_hash_table_unref(b);
    if (!strcmp(captures[_i], "sqlite")) {
        uint64_t in = 0;
        for (guint i = 0; i < bl.events->len; i++) {
            TraceEvent *e = &g_array_index(bl.events, TraceEvent, i);
            if (e->kind == TRACE_EV_SYSCALL && !strcmp(e->u.sys.name, "pwrite64"))
                in += e->u.sys.in;
        }
        ck_assert_uint_gt(pwrite_sum, 0);
        ck_assert_uint_eq(in, pwrite_sum);
    }
    for (int k = 0; k < 2; k++) {
        strace_import_stats_clear(k ? &il.st : &bl.st);
        g_array_free(k ? il.events : bl.events, TRUE);
    }
}
END_TEST

static uint64_t sum_of(GArray *ev, const char *name, uint64_t req, bool in)
{
    uint64_t s = 0;
    for (guint i = 0; i < ev->len; i++) {
        TraceEvent *e = &g_array_index(ev, TraceEvent, i);
        if (e->kind == TRACE_EV_SYSCALL && !strcmp(e->u.sys.name, name) &&
            (!req || e->u.sys.req == req))
            s += in ? e->u.sys.in : e->u.sys.out;
    }
    return s;
}

/* What the captures' construction fixes (scripts/capture-traces). */
START_TEST(test_capture_facts)
{
    g_autofree char *dd = capture_path("dd"), *cp = capture_path("cp");
    g_autofree char *http = capture_path("http"), *pipe = capture_path("pipeline");
    Imported im = import_capture(dd, STRACE_ORDER_BLOCK);
    /* dd bs=64k of a 4 MiB file: 4194304 bytes read into user space and
     * written back out of it. */
    ck_assert_uint_eq(sum_of(im.events, "read", 65536, false), 4194304);
    ck_assert_uint_eq(sum_of(im.events, "write", 65536, true), 4194304);
    strace_import_stats_clear(&im.st);
    g_array_free(im.events, TRUE);

    /* cp: copy_file_range moves the 4 MiB inside the kernel. */
    im = import_capture(cp, STRACE_ORDER_BLOCK);
    uint64_t moved = 0;
    for (guint i = 0; i < im.events->len; i++) {
        TraceEvent *e = &g_array_index(im.events, TraceEvent, i);
        if (e->kind == TRACE_EV_SYSCALL && !strcmp(e->u.sys.name, "copy_file_range")) {
            moved += (uint64_t)e->u.sys.ret;
            ck_assert(e->u.sys.in == 0 && e->u.sys.out == 0);
        }
    }
    ck_assert_uint_eq(moved, 4194304);
    strace_import_stats_clear(&im.st);
    g_array_free(im.events, TRUE);

    /* http: 6 requests, each served by its own thread; 3 of them sent the
     * 27019-byte data.txt. */
    im = import_capture(http, STRACE_ORDER_BLOCK);
    ck_assert_uint_eq(im.st.forks, 6);
    ck_assert_uint_eq(im.st.pids, 7);
    ck_assert_uint_eq(im.st.roots, 1);
    unsigned big = 0, recv = 0;
    for (guint i = 0; i < im.events->len; i++) {
        TraceEvent *e = &g_array_index(im.events, TraceEvent, i);
        if (e->kind == TRACE_EV_FORK)
            ck_assert(e->u.fork.shared_vm);
        if (e->kind == TRACE_EV_SYSCALL && !strcmp(e->u.sys.name, "sendto") && e->u.sys.ret == 27019)
            big++;
        if (e->kind == TRACE_EV_SYSCALL && !strcmp(e->u.sys.name, "recvfrom"))
            recv++;
    }
    ck_assert_uint_eq(big, 3);
    ck_assert_uint_eq(recv, 6);
    strace_import_stats_clear(&im.st);
    g_array_free(im.events, TRUE);

    /* sh -c 'seq | sort | head': three children, each a copy, four
     * programs; head exits after 3 lines while sort still has ~100 KB for a
     * 64 KiB pipe, so sort dies of SIGPIPE. */
    im = import_capture(pipe, STRACE_ORDER_BLOCK);
    ck_assert_uint_eq(im.st.forks, 3);
    ck_assert_uint_eq(im.st.execs, 4);
    ck_assert_uint_eq(im.st.exits, 4);
    ck_assert_uint_eq(im.st.pids, 4);
    unsigned sigpipe_deaths = 0;
    for (guint i = 0; i < im.events->len; i++) {
        TraceEvent *e = &g_array_index(im.events, TraceEvent, i);
        if (e->kind == TRACE_EV_FORK)
            ck_assert(!e->u.fork.shared_vm);
        if (e->kind == TRACE_EV_EXIT && e->u.exit.signal == g_intern_string("SIGPIPE"))
            sigpipe_deaths++;
    }
    ck_assert_uint_eq(sigpipe_deaths, 1);
    strace_import_stats_clear(&im.st);
    g_array_free(im.events, TRUE);
}
END_TEST

/* ---- the command line ---- */

static int run_cli(const char *const *args, const char *stdin_path, char **out, char **err)
{
    GSubprocessLauncher *l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                       G_SUBPROCESS_FLAGS_STDERR_PIPE);
    if (stdin_path)
        g_subprocess_launcher_set_stdin_file_path(l, stdin_path);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)vmsplit_exe);
    g_ptr_array_add(argv, (gpointer) "import-strace");
    for (unsigned i = 0; args[i]; i++)
        g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    GError *e = NULL;
    GSubprocess *p = g_subprocess_launcher_spawnv(l, (const char *const *)argv->pdata, &e);
    ck_assert_msg(p, "%s", e ? e->message : "");
    ck_assert(g_subprocess_communicate_utf8(p, NULL, NULL, out, err, &e));
    int status = g_subprocess_get_exit_status(p);
    g_object_unref(p);
    g_object_unref(l);
    g_ptr_array_free(argv, TRUE);
    return status;
}

START_TEST(test_cli)
{
    g_autofree char *bad = data_path("malformed.strace"), *pairs = data_path("pairs.strace");
    g_autofree char *rel = data_path("relative.strace"), *rel_exp = data_path("relative.vmt");
    g_autofree char *pairs_exp = data_path("pairs.interleave.vmt");
    g_autofree char *out = g_build_filename(tmpdir, "cli.vmt", NULL);
    char *o = NULL, *e = NULL;
    ck_assert_msg(vmsplit_exe, "usage: test-strace-import PATH-TO-VMSPLIT");

    const char *strict[] = {"--strict", "-o", out, bad, NULL};
    ck_assert_int_eq(run_cli(strict, NULL, &o, &e), 2);
    ck_assert_msg(strstr(e, "malformed.strace:2: expected ')' closing the arguments"), "%s", e);
    g_free(o), g_free(e);

    const char *lenient[] = {"-o", out, bad, NULL};
    ck_assert_int_eq(run_cli(lenient, NULL, &o, &e), 0);
    ck_assert_msg(strstr(e, "lines not imported: 7"), "%s", e);
    ck_assert_msg(strstr(e, "malformed.strace:3: expected"), "%s", e);
    ck_assert_msg(strstr(e, "... and 2 more"), "%s", e);
    g_free(o), g_free(e);

    const char *badopt[] = {"--ipc", "-1", pairs, NULL};
    ck_assert_int_eq(run_cli(badopt, NULL, &o, &e), 2);
    ck_assert_msg(strstr(e, "--ipc: expected a positive number"), "%s", e);
    g_free(o), g_free(e);

    const char *missing[] = {"/nonexistent/app.strace", NULL};
    ck_assert_int_eq(run_cli(missing, NULL, &o, &e), 2);
    ck_assert_msg(strstr(e, "/nonexistent/app.strace"), "%s", e);
    g_free(o), g_free(e);

    const char *full[] = {"--clock-mhz", "1", "--ipc", "1", "--user-pages", "4",
                          "--user-pattern", "seq", "--order", "interleave", "-o", out, pairs, NULL};
    ck_assert_int_eq(run_cli(full, NULL, &o, &e), 0);
    ck_assert_msg(strstr(e, "17 lines -> 34 events"), "%s", e);
    g_autofree char *got = NULL, *want = test_slurp(pairs_exp);
    got = test_slurp(out);
    ck_assert_str_eq(got, want);
    g_free(o), g_free(e);

    /* Standard output, and --pid for a log without -f. */
    const char *to_stdout[] = {"--clock-mhz", "1", "--user-pages", "4", "--user-pattern", "seq",
                               "--order", "interleave", "--pid", "42", rel, NULL};
    ck_assert_int_eq(run_cli(to_stdout, NULL, &o, &e), 0);
    g_autofree char *rel_want = test_slurp(rel_exp);
    ck_assert_str_eq(o, rel_want);
    g_free(o), g_free(e);

    /* Standard input: the same events, the input named <stdin>. */
    const char *from_stdin[] = {"--clock-mhz", "1", "--user-pages", "4", "--user-pattern", "seq",
                                "--order", "interleave", "--pid", "42", "-", NULL};
    ck_assert_int_eq(run_cli(from_stdin, rel, &o, &e), 0);
    ck_assert(strstr(o, "@input <stdin>\n"));
    ck_assert_str_eq(strstr(o, "42 sys execve"), strstr(rel_want, "42 sys execve"));
    g_free(o), g_free(e);
}
END_TEST

static void setup(void)
{
    tmpdir = test_tmpdir_new();
}

static void teardown(void)
{
    test_tmpdir_free(tmpdir);
}

int main(int argc, char **argv)
{
    vmsplit_exe = argc > 1 ? argv[1] : NULL;
    Suite *s = suite_create("strace-import");
    TCase *tc = tcase_create("import");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pairs_interleave);
    tcase_add_test(tc, test_pairs_block);
    tcase_add_test(tc, test_stderr_form_ttt);
    tcase_add_test(tc, test_relative_no_f_no_T);
    tcase_add_test(tc, test_tt_without_T);
    tcase_add_test(tc, test_no_timestamps);
    tcase_add_test(tc, test_child_before_clone_returns);
    tcase_add_test(tc, test_malformed_counted);
    tcase_add_test(tc, test_gzip_input);
    tcase_add_loop_test(tc, test_capture_counts, 0, G_N_ELEMENTS(captures));
    tcase_add_test(tc, test_capture_facts);
    tcase_add_test(tc, test_cli);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
