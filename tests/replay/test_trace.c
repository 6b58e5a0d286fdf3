/* The trace format (workloads/FORMAT.md): events written then read back are
 * the same events; a canonical text read then written is the same text; a
 * non-canonical one comes out as the canonical text written here by hand;
 * gzip input (compressed here independently of the writer) reads the same;
 * every bad line is an error naming the file, the line and what was
 * expected. */
#include <check.h>
#include <gio/gio.h>
#include <stdint.h>
#include <string.h>

#include "replay/syscall_table.h"
#include "replay/trace.h"
#include "test_tmp.h"

static char *tmpdir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

static char *write_text(const char *name, const char *text)
{
    char *path = tmp_path(name);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* ---- hand-made events covering every kind and field ---- */

static TraceEvent sys_ev(uint32_t pid, const char *name, int64_t ret)
{
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_SYSCALL, pid);
    ev.u.sys.name = g_intern_string(name);
    ev.u.sys.nr = (uint16_t)syscall_lookup(name, strlen(name));
    ev.u.sys.ret = ret;
    return ev;
}

static guint sample_events(TraceEvent *e)
{
    guint n = 0;
    trace_event_init(&e[n], TRACE_EV_USER, 100);
    e[n].u.user.insns = 123456, e[n].u.user.pages = 16, e[n].u.user.pattern = TRACE_PAT_HOT;
    n++;
    e[n] = sys_ev(100, "read", 832);
    e[n].u.sys.fd = 3, e[n].u.sys.req = 832, e[n].u.sys.out = 832, e[n].u.sys.dur_ns = 18000;
    n++;
    e[n] = sys_ev(100, "openat", -1);
    e[n].u.sys.err = g_intern_string("ENOENT"), e[n].u.sys.fd = -100, e[n].u.sys.in = 19;
    e[n].u.sys.dur_ns = 14500;
    n++;
    e[n] = sys_ev(100, "futex", 0);
    e[n].u.sys.ret_known = false, e[n].u.sys.err = g_intern_string("ERESTARTSYS");
    e[n].u.sys.op = g_intern_string("FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME");
    e[n].u.sys.in = 4, e[n].u.sys.blocked = true, e[n].u.sys.dur_ns = 1234567;
    n++;
    e[n] = sys_ev(100, "frobnicate", 0); /* not in the table */
    n++;
    e[n] = sys_ev(100, "write", INT64_MIN);
    e[n].u.sys.fd = INT32_MAX, e[n].u.sys.in = UINT64_MAX, e[n].u.sys.dur_ns = 1;
    n++;
    e[n] = sys_ev(100, "lseek", INT64_MAX);
    e[n].u.sys.fd = INT32_MIN + 1, e[n].u.sys.dur_ns = UINT64_MAX;
    n++;
    trace_event_init(&e[n], TRACE_EV_MMAP, 100);
    e[n].u.map.addr = 0x7f0dc52ad000, e[n].u.map.len = 8192;
    e[n].u.map.prot = TRACE_PROT_READ | TRACE_PROT_WRITE, e[n].u.map.flags = TRACE_MAP_ANON;
    n++;
    trace_event_init(&e[n], TRACE_EV_MMAP, 100);
    e[n].u.map.addr = 0x1000, e[n].u.map.len = 4096;
    e[n].u.map.prot = TRACE_PROT_READ | TRACE_PROT_EXEC, e[n].u.map.flags = TRACE_MAP_SHARED;
    n++;
    trace_event_init(&e[n], TRACE_EV_MUNMAP, 100);
    e[n].u.map.addr = 0x7f0dc52ad000, e[n].u.map.len = 8192;
    n++;
    trace_event_init(&e[n], TRACE_EV_MPROTECT, 100);
    e[n].u.map.addr = 0x1000, e[n].u.map.len = 4096, e[n].u.map.prot = TRACE_PROT_READ;
    n++;
    trace_event_init(&e[n], TRACE_EV_BRK, 100);
    e[n].u.brk.addr = 0x558e60e7b000;
    n++;
    trace_event_init(&e[n], TRACE_EV_EXEC, 100);
    e[n].u.exec.path = g_intern_string("/usr/bin/with space\"quote\\ and\ttab\x7f\xc3\xa9");
    n++;
    trace_event_init(&e[n], TRACE_EV_SIGNAL, 100);
    e[n].u.signal.name = g_intern_string("SIGCHLD");
    n++;
    trace_event_init(&e[n], TRACE_EV_FORK, 100);
    e[n].u.fork.child = 101;
    n++;
    trace_event_init(&e[n], TRACE_EV_FORK, 100);
    e[n].u.fork.child = UINT32_MAX, e[n].u.fork.shared_vm = true;
    n++;
    trace_event_init(&e[n], TRACE_EV_EXIT, 100);
    e[n].u.exit.status = 0;
    n++;
    trace_event_init(&e[n], TRACE_EV_SWITCH, 101);
    n++;
    trace_event_init(&e[n], TRACE_EV_USER, 101);
    e[n].u.user.insns = TRACE_USER_INSNS_MAX, e[n].u.user.pages = UINT32_MAX, e[n].u.user.pattern = TRACE_PAT_SEQ;
    n++;
    trace_event_init(&e[n], TRACE_EV_EXIT, 101);
    e[n].u.exit.signal = g_intern_string("SIGSEGV"), e[n].u.exit.core = true;
    n++;
    trace_event_init(&e[n], TRACE_EV_SWITCH, UINT32_MAX);
    n++;
    trace_event_init(&e[n], TRACE_EV_USER, UINT32_MAX);
    e[n].u.user.insns = 0, e[n].u.user.pages = 1, e[n].u.user.pattern = TRACE_PAT_RAND;
    n++;
    trace_event_init(&e[n], TRACE_EV_EXIT, UINT32_MAX);
    e[n].u.exit.status = -1;
    n++;
    return n;
}

static void check_read_back(const char *path, const TraceEvent *e, guint n)
{
    GError *err = NULL;
    TraceReader *r = trace_reader_open(path, &err);
    ck_assert_msg(r, "%s", err ? err->message : "?");
    ck_assert_str_eq(trace_header_get(trace_reader_header(r), "source"), "test");
    ck_assert_str_eq(trace_header_get(trace_reader_header(r), "x-unknown-key"), "kept as is");
    TraceEvent ev;
    guint i = 0;
    while (trace_reader_next(r, &ev, &err)) {
        ck_assert_uint_lt(i, n);
        char a[TRACE_LINE_MAX], b[TRACE_LINE_MAX];
        trace_format_event(&e[i], a);
        trace_format_event(&ev, b);
        ck_assert_msg(trace_event_equal(&e[i], &ev), "event %u: wrote '%s', read '%s'", i, a, b);
        i++;
    }
    ck_assert_msg(err == NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(i, n);
    trace_reader_close(r);
}

static void write_events(const char *path, const TraceEvent *e, guint n)
{
    TraceHeader *h = trace_header_new();
    trace_header_set(h, "source", "test");
    trace_header_set(h, "x-unknown-key", "kept as is");
    GError *err = NULL;
    TraceWriter *w = trace_writer_open(path, h, &err);
    ck_assert_msg(w, "%s", err ? err->message : "?");
    trace_writer_comment(w, "a comment the reader skips");
    for (guint i = 0; i < n; i++) {
        trace_writer_write(w, &e[i]);
        if (i == n / 2)
            trace_writer_comment(w, "another one, mid-stream");
    }
    ck_assert(trace_writer_close(w, &err));
    trace_header_free(h);
}

START_TEST(test_round_trip_events)
{
    TraceEvent e[64];
    guint n = sample_events(e);
    g_autofree char *path = tmp_path("round.vmt");
    write_events(path, e, n);
    check_read_back(path, e, n);
}
END_TEST

START_TEST(test_round_trip_gzip_writer)
{
    TraceEvent e[64];
    guint n = sample_events(e);
    g_autofree char *path = tmp_path("round.vmt.gz");
    write_events(path, e, n);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    ck_assert(g_file_get_contents(path, &bytes, &len, NULL));
    ck_assert_uint_ge(len, 2);
    ck_assert_uint_eq((guint8)bytes[0], 0x1f); /* gzip magic (RFC 1952) */
    ck_assert_uint_eq((guint8)bytes[1], 0x8b);
    check_read_back(path, e, n);
}
END_TEST

/* A canonical trace, written by hand from FORMAT.md. */
static const char canonical[] =
    "#vmsplit-trace 1\n"
    "@source hand\n"
    "@clock-mhz 2445.404\n"
    "@empty\n"
    "100 user 4000 16 hot\n"
    "100 sys read 832 fd=3 req=832 out=832 dur=18.5\n"
    "100 sys openat -1 err=ENOENT fd=-100 in=19 dur=14\n"
    "100 sys futex ? err=ERESTARTSYS in=4 dur=1000.001 blocked op=FUTEX_WAIT_PRIVATE\n"
    "100 sys getppid 99\n"
    "100 mmap 0x7f0dc52ad000 8192 rw- anon\n"
    "100 mmap 0x10000 4096 r-x shared anon\n"
    "100 munmap 0x7f0dc52ad000 8192\n"
    "100 mprotect 0x10000 4096 ---\n"
    "100 brk 0x558e60e7b000\n"
    "100 exec \"/bin/a b\\\"c\\\\\\t\\303\\251\"\n"
    "100 signal SIGCHLD\n"
    "100 fork 101 shared\n"
    "101 switch\n"
    "101 exit SIGKILL\n"
    "100 switch\n"
    "100 exit 3\n";

START_TEST(test_canonical_text_round_trip)
{
    g_autofree char *in = write_text("canon.vmt", canonical);
    g_autofree char *out = tmp_path("canon.out.vmt");
    GError *err = NULL;
    TraceReader *r = trace_reader_open(in, &err);
    ck_assert_msg(r, "%s", err ? err->message : "?");
    TraceWriter *w = trace_writer_open(out, trace_reader_header(r), &err);
    ck_assert(w);
    TraceEvent ev;
    guint n = 0;
    while (trace_reader_next(r, &ev, &err)) {
        /* Spot checks against the hand-written lines. */
        if (n == 1) {
            ck_assert_str_eq(ev.u.sys.name, "read");
            ck_assert_uint_eq(ev.u.sys.nr, syscall_lookup("read", 4));
            ck_assert_int_eq(ev.u.sys.ret, 832);
            ck_assert_int_eq(ev.u.sys.fd, 3);
            ck_assert_uint_eq(ev.u.sys.dur_ns, 18500);
            ck_assert(ev.u.sys.err == NULL && !ev.u.sys.blocked);
        } else if (n == 3) {
            ck_assert(!ev.u.sys.ret_known && ev.u.sys.blocked);
            ck_assert_uint_eq(ev.u.sys.dur_ns, 1000001);
            ck_assert(ev.u.sys.op == g_intern_string("FUTEX_WAIT_PRIVATE"));
        } else if (n == 4) {
            ck_assert_int_eq(ev.u.sys.fd, TRACE_FD_NONE);
        } else if (n == 10) {
            ck_assert_str_eq(ev.u.exec.path, "/bin/a b\"c\\\t\xc3\xa9");
        }
        trace_writer_write(w, &ev);
        n++;
    }
    ck_assert_msg(!err, "%s", err ? err->message : "");
    ck_assert_uint_eq(n, 17);
    ck_assert(trace_writer_close(w, &err));
    ck_assert_str_eq(trace_header_get(trace_reader_header(r), "empty"), "");
    trace_reader_close(r);
    g_autofree char *text = test_slurp(out);
    ck_assert_str_eq(text, canonical);
}
END_TEST

START_TEST(test_non_canonical_normalised)
{
    static const char in_text[] =
        "#vmsplit-trace 1\r\n"
        "# a comment before the header ends\n"
        "@source hand\n"
        "\n"
        "  # an indented comment\n"
        "7\tuser  0x10 1\tseq\n"
        "7 sys read 0x10 out=16 fd=3 req=0x10 dur=2.500 blocked\r\n"
        "7 mmap 4096 0x2000 rwx anon shared\n"
        "7 exit 0\n";
    static const char expected[] =
        "#vmsplit-trace 1\n"
        "@source hand\n"
        "7 user 16 1 seq\n"
        "7 sys read 16 fd=3 req=16 out=16 dur=2.5 blocked\n"
        "7 mmap 0x1000 8192 rwx shared anon\n"
        "7 exit 0\n";
    g_autofree char *in = write_text("noncanon.vmt", in_text);
    g_autofree char *out = tmp_path("noncanon.out.vmt");
    GError *err = NULL;
    TraceReader *r = trace_reader_open(in, &err);
    ck_assert_msg(r, "%s", err ? err->message : "?");
    TraceWriter *w = trace_writer_open(out, trace_reader_header(r), &err);
    TraceEvent ev;
    while (trace_reader_next(r, &ev, &err))
        trace_writer_write(w, &ev);
    ck_assert_msg(!err, "%s", err ? err->message : "");
    ck_assert(trace_writer_close(w, NULL));
    trace_reader_close(r);
    g_autofree char *text = test_slurp(out);
    ck_assert_str_eq(text, expected);
}
END_TEST

/* gzip made here with GZlibCompressor, not by the writer, under a name
 * without ".gz": the reader must go by the magic bytes. */
START_TEST(test_gzip_input_detected)
{
    GZlibCompressor *z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
    guint8 out[8192];
    gsize nread = 0, nwritten = 0;
    GConverterResult res = g_converter_convert(G_CONVERTER(z), canonical, strlen(canonical),
                                               out, sizeof out, G_CONVERTER_INPUT_AT_END,
                                               &nread, &nwritten, NULL);
    ck_assert_int_eq(res, G_CONVERTER_FINISHED);
    g_object_unref(z);
    g_autofree char *gz = tmp_path("compressed.vmt");
    ck_assert(g_file_set_contents(gz, (const char *)out, (gssize)nwritten, NULL));
    g_autofree char *plain = write_text("plain.vmt", canonical);

    GError *err = NULL;
    TraceReader *a = trace_reader_open(plain, &err), *b = trace_reader_open(gz, &err);
    ck_assert(a && b);
    ck_assert_str_eq(trace_header_get(trace_reader_header(b), "clock-mhz"), "2445.404");
    TraceEvent ea, eb;
    guint n = 0;
    for (;;) {
        bool ga = trace_reader_next(a, &ea, &err), gb = trace_reader_next(b, &eb, &err);
        ck_assert_int_eq(ga, gb);
        if (!ga)
            break;
        ck_assert(trace_event_equal(&ea, &eb));
        n++;
    }
    ck_assert(!err);
    ck_assert_uint_eq(n, 17);
    trace_reader_close(a);
    trace_reader_close(b);
}
END_TEST

/* ---- errors: each names file, line and what was expected ---- */

typedef struct {
    const char *text;
    unsigned line;
    const char *expected; /* a substring of the message */
    int code;
} BadCase;

static const BadCase bad_cases[] = {
    {"", 1, "empty file", TRACE_ERROR_PARSE},
    {"100 user 1 1 seq\n", 1, "'#vmsplit-trace 1' as the first line", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 3\n", 1, "version '3' (this vmsplit reads versions 1 and 2)",
     TRACE_ERROR_VERSION},
    {"#vmsplit-trace 1\n@Bad key\n", 2, "header line", TRACE_ERROR_PARSE},
    /* found by tests/fuzz (trace): the CR was dropped with a g_critical */
    {"#vmsplit-trace 1\n@source a\rb\n", 2, "header value without a carriage return",
     TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 user 100 0 hot\n", 2, "working set in pages (1 or more), got '0'",
     TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 user 100 4 zigzag\n", 2, "access pattern", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 user 18446744073709551616 4 hot\n", 2, "instruction count",
     TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n# c\n5 frob\n", 3, "event kind", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\nx sys read 1\n", 2, "PID KIND", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 sys read\n", 2, "return value (a number or ?), got the end",
     TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 sys read 3 fd=3 fd=4\n", 2, "at most once", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 sys read 3 dur=1.2345\n", 2, "3 decimals", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 sys read 3 size=4\n", 2, "err=, fd=", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 sys read 3 blocked=1\n", 2, "err=, fd=", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 sys read 3 fd=-2147483648\n", 2, "fd=N", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 exec /bin/sh\n", 2, "quoted path", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 exec \"/bin/sh\n", 2, "quoted path", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 exec \"/bin/\\000sh\"\n", 2, "quoted path", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 exec \"/bin/sh\" x\n", 2, "the end of the line", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 mmap 0x1000 4096 rwz\n", 2, "protection", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 mmap 0x1000 4096 rw- private\n", 2, "'shared', 'anon'",
     TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 munmap 0x1000\n", 2, "a length", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 exit\n", 2, "exit status or a signal name", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 exit SIGKILL dumped\n", 2, "'core'", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 fork 6 thread\n", 2, "'shared'", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 switch now\n", 2, "the end of the line", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 signal\n", 2, "signal name", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 brk\n", 2, "break address", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 user 1 1 seq\n7 user 1 1 seq\n", 3,
     "pid 7 while pid 5 runs (expected '7 switch' first)", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 exit 0\n5 user 1 1 seq\n", 3,
     "after the running pid exited (expected '5 switch' first)", TRACE_ERROR_PARSE},
    {"#vmsplit-trace 1\n5 user 1 1 seq\n@late header\n", 3, "before the first event",
     TRACE_ERROR_PARSE},
};

START_TEST(test_reader_errors)
{
    const BadCase *c = &bad_cases[_i];
    g_autofree char *name = g_strdup_printf("bad%d.vmt", _i);
    g_autofree char *path = write_text(name, c->text);
    GError *err = NULL;
    TraceReader *r = trace_reader_open(path, &err);
    if (r) {
        TraceEvent ev;
        while (trace_reader_next(r, &ev, &err))
            ;
        trace_reader_close(r);
    }
    ck_assert_msg(err, "case %d: no error", _i);
    g_autofree char *where = g_strdup_printf("%s:%u: ", path, c->line);
    ck_assert_msg(strstr(err->message, where), "case %d: '%s' lacks '%s'", _i, err->message, where);
    ck_assert_msg(strstr(err->message, c->expected), "case %d: '%s' lacks '%s'", _i,
                  err->message, c->expected);
    ck_assert_msg(err->domain == TRACE_ERROR && err->code == c->code, "case %d: %s", _i,
                  err->message);
    g_error_free(err);
}
END_TEST

/* The reader's memo of parsed lines (trace_reader.c) against
 * trace_parse_event of each line on its own: repeated lines, lines of one
 * length that differ in a byte (one memo slot: same length and last
 * byte), leading blanks, a long line, every kind; and the one-pid rule
 * still applied to a line the memo answers. */
START_TEST(test_reader_memo)
{
    static const char *lines[] = {
        "1000 user 20 2 hot", "1000 sys getppid 999", "1000 user 20 2 hot",
        "1000 sys getppid 999", "1000 user 21 2 hot", "1000 user 20 2 hot",
        "1000 user 20 3 hot", "1000 user 30 2 hot", "  1000 user 20 2 hot",
        "1000 sys getppid 998", "1000 sys getpid 9999", "1000 sys getppid 999",
        "1000 sys read 5 fd=3 req=65536 out=65536 dur=17", "1000 sys read 5 fd=3 req=65536 "
        "out=65536 dur=17 in=3 err=EAGAIN op=F_SETFL blocked", "1000 mmap 0x1000 8192 rw- anon",
        "1000 sys read 5 fd=3 req=65536 out=65536 dur=18", "1000 brk 0x2000",
        "1000 brk 0x3000", "1000 user 20 2 hot", "1000 signal SIGCHLD", "1000 fork 1001",
        "1001 switch", "1001 user 20 2 hot", "1001 sys getppid 999", "1000 switch",
        "1000 sys getppid 999", "1000 exit 0",
    };
    GString *text = g_string_new("#vmsplit-trace 1\n@count 1\n");
    for (size_t i = 0; i < G_N_ELEMENTS(lines); i++)
        g_string_append_printf(text, "%s\n", lines[i]);
    g_autofree char *path = write_text("memo.vmt", text->str);
    g_string_free(text, TRUE);
    GError *err = NULL;
    TraceReader *r = trace_reader_open(path, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
        TraceEvent got, want;
        ck_assert_msg(trace_reader_next(r, &got, &err), "line %zu: %s", i,
                      err ? err->message : "end");
        ck_assert_msg(trace_parse_event(lines[i], &want, "x", 1, NULL), "%s", lines[i]);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "line %zu: %s", i, lines[i]);
    }
    TraceEvent ev;
    ck_assert(!trace_reader_next(r, &ev, &err) && !err);
    trace_reader_close(r);

    g_autofree char *bad = write_text("memo-bad.vmt", "#vmsplit-trace 1\n1 user 5 1 seq\n"
                                      "1 user 5 1 seq\n1 exit 0\n1 user 5 1 seq\n");
    r = trace_reader_open(bad, &err);
    ck_assert(r);
    for (int i = 0; i < 3; i++)
        ck_assert(trace_reader_next(r, &ev, &err));
    ck_assert(!trace_reader_next(r, &ev, &err));
    ck_assert(err && strstr(err->message, ":5: ") && strstr(err->message, "exited"));
    g_error_free(err);
    trace_reader_close(r);
}
END_TEST

START_TEST(test_missing_file)
{
    GError *err = NULL;
    ck_assert(trace_reader_open("/nonexistent/x.vmt", &err) == NULL);
    ck_assert(err && strstr(err->message, "/nonexistent/x.vmt"));
    g_error_free(err);
}
END_TEST

START_TEST(test_header_numbers)
{
    TraceHeader *h = trace_header_new();
    trace_header_set_double(h, "a", 2445.404);
    trace_header_set_double(h, "b", 100);
    trace_header_set_double(h, "c", 0.1);
    trace_header_set(h, "d", "fast");
    ck_assert_str_eq(trace_header_get(h, "a"), "2445.404");
    ck_assert_str_eq(trace_header_get(h, "b"), "100");
    ck_assert_str_eq(trace_header_get(h, "c"), "0.1");
    double v = 0;
    GError *err = NULL;
    ck_assert(trace_header_get_double(h, "a", 0, &v, &err) && v == 2445.404);
    ck_assert(trace_header_get_double(h, "zz", 7.5, &v, &err) && v == 7.5);
    ck_assert(!trace_header_get_double(h, "d", 0, &v, &err));
    ck_assert(strstr(err->message, "@d: expected a number, got 'fast'"));
    g_error_free(err);
    trace_header_set(h, "a", "1");
    ck_assert_uint_eq(trace_header_size(h), 4);
    const char *k, *val;
    trace_header_nth(h, 0, &k, &val);
    ck_assert_str_eq(k, "a");
    ck_assert_str_eq(val, "1");
    trace_header_free(h);
}
END_TEST

/* ---- single lines: names and numbers at their limits ---- */

static bool parse_line(const char *line, TraceEvent *ev, GError **err)
{
    return trace_parse_event(line, ev, "line.vmt", 7, err);
}

/* Every name in the syscall table reads back as that entry (its id, the
 * interned name), the first time and again once it has been seen; names
 * the table lacks get id 0, even when they share length, first and last
 * letter with a known one; a token with a bad character is refused even
 * right after a good name of the same shape. */
START_TEST(test_syscall_names)
{
    for (int pass = 0; pass < 2; pass++)
        for (unsigned id = 1; id < syscall_table_size(); id++) {
            const char *name = syscall_info(id)->name;
            g_autofree char *line = g_strdup_printf("1 sys %s 0", name);
            TraceEvent ev;
            GError *err = NULL;
            ck_assert_msg(parse_line(line, &ev, &err), "%s", err ? err->message : line);
            ck_assert_uint_eq(ev.u.sys.nr, id);
            ck_assert_ptr_eq(ev.u.sys.name, g_intern_string(name));
        }
    static const struct { const char *line; const char *name; bool known; } seq[] = {
        {"1 sys read 0", "read", true},   {"1 sys rend 0", "rend", false},
        {"1 sys read 0", "read", true},   {"1 sys re$d 0", NULL, false},
        {"1 sys read 0", "read", true},   {"1 sys frob 0", "frob", false},
        {"1 sys blah 0", "blah", false},  {"1 sys frob 0", "frob", false},
        {"1 sys readv 0", "readv", true}, {"1 sys rea 0", "rea", false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(seq); i++) {
        TraceEvent ev;
        GError *err = NULL;
        bool ok = parse_line(seq[i].line, &ev, &err);
        if (!seq[i].name) {
            ck_assert_msg(!ok && strstr(err->message, "line.vmt:7: expected a syscall name, got "
                                                      "'re$d'"), "%s", seq[i].line);
            g_error_free(err);
            continue;
        }
        ck_assert_msg(ok, "%s", seq[i].line);
        ck_assert_ptr_eq(ev.u.sys.name, g_intern_string(seq[i].name));
        if (seq[i].known)
            ck_assert_str_eq(syscall_info(ev.u.sys.nr)->name, seq[i].name);
        else
            ck_assert_uint_eq(ev.u.sys.nr, SYSCALL_ID_UNKNOWN);
    }
}
END_TEST

/* Unsigned 64-bit fields (here in=) take every value up to 2^64 - 1 in
 * decimal or hex, leading zeros allowed, and refuse 2^64 and beyond. A
 * user event's INSNS stops at TRACE_USER_INSNS_MAX (FORMAT.md). */
START_TEST(test_number_limits)
{
    static const struct { const char *text; bool ok; uint64_t v; } insns[] = {
        {"0", true, 0},
        {"9999999999999999999", true, 9999999999999999999ull},     /* 19 digits */
        {"10000000000000000000", true, 10000000000000000000ull},   /* 20 digits */
        {"18446744073709551615", true, UINT64_MAX},
        {"000000000000000000000000018446744073709551615", true, UINT64_MAX},
        {"0000000000000000000000000000000000000000042", true, 42},
        {"18446744073709551616", false, 0},
        {"18446744073709551620", false, 0},
        {"99999999999999999999", false, 0},
        {"184467440737095516150", false, 0},
        {"0x0", true, 0},
        {"0xffffffffffffffff", true, UINT64_MAX},
        {"0XFFFFFFFFFFFFFFFF", true, UINT64_MAX},
        {"0x00000000000000000000abcDEF", true, 0xabcdef},
        {"0x10000000000000000", false, 0},
        {"0x", false, 0},
        {"0xg", false, 0},
        {"12a", false, 0},
        {"-1", false, 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(insns); i++) {
        g_autofree char *line = g_strdup_printf("1 sys read 0 in=%s", insns[i].text);
        TraceEvent ev;
        GError *err = NULL;
        bool ok = parse_line(line, &ev, &err);
        ck_assert_msg(ok == insns[i].ok, "%s: %s", line, err ? err->message : "accepted");
        if (ok)
            ck_assert_msg(ev.u.sys.in == insns[i].v, "%s", line);
        else
            ck_assert(strstr(err->message, "expected in=BYTES"));
        g_clear_error(&err);
    }
    static const struct { const char *line; bool ok; } more[] = {
        {"4294967295 user 1 4294967295 hot", true},
        {"4294967296 user 1 1 hot", false},
        {"1 user 1000000000000 1 hot", true},
        {"1 user 0xe8d4a51000 1 hot", true},
        {"1 user 1000000000001 1 hot", false},
        {"1 user 18446744073709551615 1 hot", false},
        {"1 user 1 4294967296 hot", false},
        {"1 sys read -9223372036854775808", true},
        {"1 sys read -9223372036854775809", false},
        {"1 sys read 9223372036854775807", true},
        {"1 sys read 9223372036854775808", false},
        {"1 sys read 0 dur=18446744073709551.615", true},
        {"1 sys read 0 dur=18446744073709551.616", false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(more); i++) {
        TraceEvent ev;
        GError *err = NULL;
        ck_assert_msg(parse_line(more[i].line, &ev, &err) == more[i].ok, "%s", more[i].line);
        g_clear_error(&err);
    }
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

int main(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("format");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_round_trip_events);
    tcase_add_test(tc, test_reader_memo);
    tcase_add_test(tc, test_round_trip_gzip_writer);
    tcase_add_test(tc, test_canonical_text_round_trip);
    tcase_add_test(tc, test_non_canonical_normalised);
    tcase_add_test(tc, test_gzip_input_detected);
    tcase_add_loop_test(tc, test_reader_errors, 0, G_N_ELEMENTS(bad_cases));
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_header_numbers);
    tcase_add_test(tc, test_syscall_names);
    tcase_add_test(tc, test_number_limits);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
