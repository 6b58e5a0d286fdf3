/* Version 2 of the trace format (workloads/FORMAT.md, "Version 2"): refs
 * events and their reference lines. The canonical text written here by hand
 * reads as the events and references listed beside it and is written back
 * byte for byte; reference lines come to the caller in chunks of the size
 * it asks for, or are skipped (and still checked) by the next event; every
 * broken block is an error naming the file, the line and what was
 * expected; version-1 files cannot hold refs. */
#include <check.h>
#include <string.h>

#include "replay/trace.h"
#include "test_tmp.h"

static char *tmpdir;

static char *write_text(const char *name, const char *text)
{
    char *path = g_build_filename(tmpdir, name, NULL);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* 5 instructions on one page with three data runs among them, then a
 * syscall, then 2 instructions with one read-modify-write. */
static const char canonical[] =
    "#vmsplit-trace 2\n"
    "@source capture\n"
    "@refs-merged 7\n"
    "7 refs 5 5\n"
    "i 0x8048000 3\n"
    "r 0xbfff0ff0 4 2\n"
    "w 0x804a040 64\n"
    "i 0x8049ffe 2\n"
    "r 0x1000 1\n"
    "7 sys getppid 1\n"
    "7 refs 2 2\n"
    "i 0x3ffff000 2\n"
    "m 0x804a07c 4\n";

static const TraceRef expect_refs[] = {
    {0x8048000, 3, TRACE_REF_FETCH, 0}, {0xbfff0ff0, 2, TRACE_REF_READ, 4},
    {0x804a040, 1, TRACE_REF_WRITE, 64}, {0x8049ffe, 2, TRACE_REF_FETCH, 0},
    {0x1000, 1, TRACE_REF_READ, 1}, {0x3ffff000, 2, TRACE_REF_FETCH, 0},
    {0x804a07c, 1, TRACE_REF_MODIFY, 4},
};

static bool ref_eq(const TraceRef *a, const TraceRef *b)
{
    return a->addr == b->addr && a->n == b->n && a->kind == b->kind && a->size == b->size;
}

/* Reads path whole with chunks of `chunk` references, writes it to out
 * (version of the input), and checks events and references on the way. */
static void read_write(const char *path, const char *out, size_t chunk)
{
    GError *err = NULL;
    TraceReader *r = trace_reader_open(path, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    ck_assert_int_eq(trace_reader_version(r), 2);
    TraceWriter *w = trace_writer_open_version(out, trace_reader_header(r), 2, &err);
    ck_assert(w);
    TraceEvent ev;
    TraceRef buf[8];
    size_t nref = 0, nev = 0, n;
    while (trace_reader_next(r, &ev, &err)) {
        nev++;
        trace_writer_write(w, &ev);
        if (ev.kind != TRACE_EV_REFS)
            continue;
        size_t in_block = 0;
        while (trace_reader_refs(r, buf, chunk, &n, &err) && n) {
            ck_assert_uint_le(n, chunk);
            for (size_t k = 0; k < n; k++) {
                ck_assert(ref_eq(&buf[k], &expect_refs[nref + k]));
                trace_writer_write_ref(w, &buf[k]);
            }
            nref += n;
            in_block += n;
        }
        ck_assert_msg(!err, "%s", err ? err->message : "");
        ck_assert_uint_eq(in_block, ev.u.refs.nrefs);
    }
    ck_assert_msg(!err, "%s", err ? err->message : "");
    ck_assert_uint_eq(nev, 3);
    ck_assert_uint_eq(nref, G_N_ELEMENTS(expect_refs));
    trace_reader_close(r);
    ck_assert(trace_writer_close(w, &err));
}

START_TEST(test_v2_round_trip)
{
    g_autofree char *in = write_text("in.vmt", canonical);
    for (size_t chunk = 1; chunk <= 8; chunk += 3) {
        g_autofree char *out = g_build_filename(tmpdir, "out.vmt", NULL);
        read_write(in, out, chunk);
        g_autofree char *text = NULL;
        ck_assert(g_file_get_contents(out, &text, NULL, NULL));
        ck_assert_str_eq(text, canonical);
    }
}
END_TEST

/* A caller that reads no reference lines gets the events in order: the
 * reader skips the lines (checking them). */
START_TEST(test_v2_skip_refs)
{
    g_autofree char *in = write_text("in.vmt", canonical);
    GError *err = NULL;
    TraceReader *r = trace_reader_open(in, &err);
    TraceEvent ev;
    static const TraceEventKind kinds[] = {TRACE_EV_REFS, TRACE_EV_SYSCALL, TRACE_EV_REFS};
    size_t k = 0;
    while (trace_reader_next(r, &ev, &err))
        ck_assert_int_eq(ev.kind, kinds[k++]);
    ck_assert(!err);
    ck_assert_uint_eq(k, 3);
    trace_reader_close(r);
}
END_TEST

/* A version-1 file still reads and is still written as version 1. */
START_TEST(test_v1_unchanged)
{
    static const char v1[] = "#vmsplit-trace 1\n5 user 100 4 hot\n5 sys getppid 1\n";
    g_autofree char *in = write_text("v1.vmt", v1);
    g_autofree char *out = g_build_filename(tmpdir, "v1out.vmt", NULL);
    GError *err = NULL;
    TraceReader *r = trace_reader_open(in, &err);
    ck_assert_int_eq(trace_reader_version(r), 1);
    TraceWriter *w = trace_writer_open(out, NULL, &err);
    TraceEvent ev;
    while (trace_reader_next(r, &ev, &err))
        trace_writer_write(w, &ev);
    ck_assert(!err);
    trace_reader_close(r);
    ck_assert(trace_writer_close(w, &err));
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(out, &text, NULL, NULL));
    ck_assert_str_eq(text, v1);
}
END_TEST

typedef struct {
    const char *text;
    unsigned line;
    const char *expected;
} BadCase;

#define V2 "#vmsplit-trace 2\n"
static const BadCase bad_cases[] = {
    /* missing reference lines: another event, or the end of the file */
    {V2 "5 refs 3 2\ni 0x1000 3\n5 sys getppid 1\n", 4, "expected 1 more reference line"},
    {V2 "5 refs 3 2\ni 0x1000 3\n", 2, "expected 1 more reference line(s) (i/r/w/m ADDR ...) "
                                       "of the refs event at line 2, got the end of the file"},
    {V2 "5 refs 3 2\ni 0x1000 3\n# a comment is fine\n", 2, "got the end of the file"},
    /* bad kind, size, count */
    {V2 "5 refs 1 1\nx 0x1000 1\n", 3, "got 'x 0x1000 1'"},
    {V2 "5 refs 1 2\ni 0x1000 1\nl 0x1000 4\n", 4, "reference line(s) (i/r/w/m ADDR ...) of the refs event at line 2, got 'l 0x1000 4'"},
    {V2 "5 refs 1 2\ni 0x1000 1\nr 0x1000 0\n", 4, "a size in bytes (1 to 64), got '0'"},
    {V2 "5 refs 1 2\ni 0x1000 1\nw 0x1000 65\n", 4, "a size in bytes (1 to 64), got '65'"},
    {V2 "5 refs 1 2\ni 0x1000 1\nr 0x1000 4 0\n", 4, "a count N (1 to 2^32-1)"},
    {V2 "5 refs 1 1\ni 0x1000 0\n", 3, "an instruction count N (1 to 2^32-1), got '0'"},
    {V2 "5 refs 1 2\ni 0x1000 1\nr 0x100000000 4\n", 4, "an address"},
    {V2 "5 refs 1 2\ni 0x1000 1\nr 0x1000 4 2 9\n", 4, "the end of the line"},
    /* a reference crossing its page (a run may end past its 64-byte line:
     * test_unaligned_run) */
    {V2 "5 refs 1 2\ni 0x1000 1\nr 0x1ffe 4\n", 4, "within its 4 KiB page"},
    /* N = 0 in the event, INSNS = 0, counts that do not add up */
    {V2 "5 refs 1 0\n", 2, "a number of reference lines (1 to 10^7), got '0'"},
    {V2 "5 refs 0 1\ni 0x1000 1\n", 2, "an instruction count (1 to 10^12), got '0'"},
    {V2 "5 refs 4 2\ni 0x1000 1\ni 0x2000 2\n", 4, "add up to the refs event's INSNS (1 short)"},
    {V2 "5 refs 2 2\ni 0x1000 1\ni 0x2000 2\n", 4, "(this one goes over)"},
    /* reference lines outside a block */
    {V2 "i 0x1000 1\n", 2, "comes only after a refs event"},
    {V2 "5 refs 1 1\ni 0x1000 1\nr 0x1000 4\n", 4, "comes only after a refs event"},
    {V2 "5 sys getppid 1\nw 0x1000 4\n", 3, "comes only after a refs event"},
    /* version 1 cannot hold refs */
    {"#vmsplit-trace 1\n5 refs 1 1\ni 0x1000 1\n", 2, "a refs event needs '#vmsplit-trace 2'"},
    /* the running-pid rule applies to refs events */
    {V2 "5 refs 1 1\ni 0x1000 1\n6 refs 1 1\ni 0x1000 1\n", 4, "pid 6 while pid 5 runs"},
};

START_TEST(test_v2_errors)
{
    const BadCase *c = &bad_cases[_i];
    g_autofree char *name = g_strdup_printf("bad%d.vmt", _i);
    g_autofree char *path = write_text(name, c->text);
    GError *err = NULL;
    TraceReader *r = trace_reader_open(path, &err);
    ck_assert_msg(r, "case %d: %s", _i, err ? err->message : "");
    TraceEvent ev;
    TraceRef buf[2];
    size_t n;
    /* Half the cases read the references, half leave them to the reader. */
    while (!err && trace_reader_next(r, &ev, &err))
        if (ev.kind == TRACE_EV_REFS && _i % 2)
            while (trace_reader_refs(r, buf, 2, &n, &err) && n)
                ;
    trace_reader_close(r);
    ck_assert_msg(err, "case %d: no error", _i);
    g_autofree char *where = g_strdup_printf("%s:%u: ", path, c->line);
    ck_assert_msg(strstr(err->message, where), "case %d: '%s' lacks '%s'", _i, err->message,
                  where);
    ck_assert_msg(strstr(err->message, c->expected), "case %d: '%s' lacks '%s'", _i,
                  err->message, c->expected);
    ck_assert(err->domain == TRACE_ERROR && err->code == TRACE_ERROR_PARSE);
    g_error_free(err);
}
END_TEST

/* The reader's fast path (trace_parse_ref_fast) against trace_parse_ref:
 * every canonical line (random references, formatted by the writer's
 * function) takes the fast path and reads the same; hand-picked edge
 * lines and random one-byte mutations of canonical lines are accepted by
 * the fast path only if trace_parse_ref accepts them with the same
 * reference. */
static void check_agree(const char *text, size_t len)
{
    TraceRef a, b;
    char line[64];
    memcpy(line, text, len);         /* the reader's line: len bytes, then NUL */
    line[len] = '\0';
    if (!trace_parse_ref_fast(line, len, &a))
        return;
    GError *err = NULL;
    ck_assert_msg(strlen(line) == len && trace_parse_ref(line, &b, "x", 1, &err),
                  "fast path accepted '%s' (%s)", line, err ? err->message : "NUL");
    ck_assert_msg(ref_eq(&a, &b), "'%s' read differently", line);
}

/* An unaligned run: N references that start in ADDR's 64-byte line and
 * end in the next, as a program's unaligned loads and vmcap's merging make
 * them (a single such reference was always valid). */
START_TEST(test_unaligned_run)
{
    g_autofree char *in = write_text("u.vmt", V2 "5 refs 3 2\ni 0x1000 3\nw 0x103e 4 2\n");
    GError *err = NULL;
    TraceReader *r = trace_reader_open(in, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    TraceEvent ev;
    ck_assert(trace_reader_next(r, &ev, &err));
    TraceRef buf[4];
    size_t n = 0;
    ck_assert_msg(trace_reader_refs(r, buf, 4, &n, &err), "%s", err ? err->message : "");
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(buf[1].addr, 0x103e);
    ck_assert_uint_eq(buf[1].n, 2);
    ck_assert_uint_eq(buf[1].size, 4);
    ck_assert(!trace_reader_next(r, &ev, &err));
    ck_assert_msg(!err, "%s", err ? err->message : "");
    trace_reader_close(r);
}
END_TEST

START_TEST(test_fast_path_agrees)
{
    static const char *edge[] = {
        "i 0x1000 5 1", "r 0x1000 0", "r 0x1000 65", "r 0x1ffe 4", "r 0x103e 4 2",
        "r 0x103e 4 1", "i 0x1000 4294967296", "i 0x1000 4294967295", "r 0xffffffff 1",
        "r 0x100000000 1", "w 0x10 4 0", "m 0x10 64", "m 0x11 64", "r 0x1000 4 ", "r  0x1000 4",
        "R 0x1000 4", "r 0x1000 04", "r 0x 4", "r 0x1000", "i 0x1000", "x 0x1000 4",
        "r 0x0000000001000 4", "r 0xABC 4", "r 4096 4", "w 0x3c 4 3", "w 0x3d 4 3",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(edge); i++)
        check_agree(edge[i], strlen(edge[i]));
    uint32_t x = 7;
    char line[64];
    for (int i = 0; i < 20000; i++) {
        x = x * 1103515245u + 12345u;
        TraceRef r = { .addr = x, .kind = (uint8_t)(x >> 28) % TRACE_REF_KINDS };
        x = x * 1103515245u + 12345u;
        r.n = x % 4 == 0 ? x : 1 + x % 5;
        if (r.kind != TRACE_REF_FETCH) {
            r.size = (uint8_t)(1 + (x >> 8) % 64);
            r.addr &= ~63u;                      /* a run stays in its line */
            if (r.n > 1 && r.size > 8)
                r.size = 8;
            r.n = r.n ? r.n : 1;
        }
        r.n = r.n ? r.n : 1;
        size_t len = trace_format_ref(&r, line);
        TraceRef got;
        ck_assert_msg(trace_parse_ref_fast(line, len, &got) && ref_eq(&got, &r),
                      "canonical '%s' missed the fast path", line);
        check_agree(line, len);
        /* one byte changed, or the line cut */
        x = x * 1103515245u + 12345u;
        char mut[64];
        memcpy(mut, line, len + 1);
        mut[x % len] = " 0x19afgi\t-\0"[(x >> 16) % 13];
        check_agree(mut, len);
        check_agree(line, x % len);
    }
}
END_TEST

static void setup(void) { tmpdir = test_tmpdir_new(); }
static void teardown(void) { test_tmpdir_free(tmpdir); }

int main(void)
{
    Suite *s = suite_create("trace-v2");
    TCase *tc = tcase_create("v2");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_v2_round_trip);
    tcase_add_test(tc, test_v2_skip_refs);
    tcase_add_test(tc, test_v1_unchanged);
    tcase_add_test(tc, test_fast_path_agrees);
    tcase_add_test(tc, test_unaligned_run);
    tcase_add_loop_test(tc, test_v2_errors, 0, G_N_ELEMENTS(bad_cases));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
