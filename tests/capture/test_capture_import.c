/* The capture converter (capture_import.h) on streams written here byte by
 * byte from the stream format's specification (tools/vmcap/vmcap_stream.h),
 * not by the tool: a small process whose trace is worked out by hand
 * (mappings folded first fit from 0x10000 in order, the stack's 8 MiB
 * reserve below it, runs as reference lines, the syscall's fields), a fork,
 * and the bad captures: a stream cut inside a record, one without its end
 * record, one whose counts disagree, a process that ended without an exit
 * call (an error, or with a signal given, a counted exit by that signal),
 * a reference outside every mapping (an error, or dropped and counted).
 * Every error names the stream file. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <string.h>

#include "replay/capture_import.h"
#include "vmcap/vmcap_stream.h"
#include "../replay/test_tmp.h"

/* ---- a stream writer from the specification ---- */
typedef struct {
    GByteArray *b;
    uint64_t last_i, last_d, raw, runs;
} W;

static void le(W *w, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        g_byte_array_append(w->b, &c, 1);
    }
}
static void u8(W *w, unsigned v) { le(w, v, 1); }
static void uleb(W *w, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            c |= 0x80;
        g_byte_array_append(w->b, &c, 1);
    } while (v);
}
static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static void str(W *w, const char *s)
{
    le(w, strlen(s), 2);
    g_byte_array_append(w->b, (const guint8 *)s, (guint)strlen(s));
}

static W *w_new(uint32_t pid, uint32_t ppid, uint64_t t, const char *exe)
{
    W *w = g_new0(W, 1);
    w->b = g_byte_array_new();
    g_byte_array_append(w->b, (const guint8 *)VMCAP_MAGIC, VMCAP_MAGIC_LEN);
    u8(w, VMCAP_TAG_PROC), le(w, pid, 4), le(w, ppid, 4), le(w, t, 8), str(w, exe), str(w, exe);
    return w;
}
static void w_map(W *w, uint64_t a, uint64_t len, unsigned prot, unsigned flags)
{
    u8(w, VMCAP_TAG_MAP), le(w, a, 8), le(w, len, 8), u8(w, prot), u8(w, flags);
}
static void w_thread(W *w, uint32_t tid) { u8(w, VMCAP_TAG_THREAD), le(w, tid, 4); }
static void w_insn(W *w, uint64_t a, uint64_t n)
{
    u8(w, VMCAP_TAG_INSN), uleb(w, zz((int64_t)(a - w->last_i))), uleb(w, n);
    w->last_i = a, w->raw += n, w->runs++;
}
/* kind 0 read, 1 write, 2 modify; size a power of two up to 64 */
static void w_data(W *w, unsigned kind, uint64_t a, unsigned size, uint64_t n)
{
    unsigned code = 0;
    while ((1u << code) != size)
        code++;
    u8(w, VMCAP_TAG_DATA | kind << 5 | (n == 1 ? VMCAP_DATA_ONE : 0) | code);
    uleb(w, zz((int64_t)(a - w->last_d)));
    if (n != 1)
        uleb(w, n);
    w->last_d = a, w->raw += n, w->runs++;
}
static void w_pre(W *w, uint32_t tid, unsigned nr, uint64_t t, const uint64_t args[6])
{
    u8(w, VMCAP_TAG_SYS_PRE), le(w, tid, 4), le(w, nr, 2), le(w, t, 8);
    for (int i = 0; i < 6; i++)
        le(w, args ? args[i] : 0, 8);
    u8(w, 0);
}
static void w_post(W *w, uint32_t tid, unsigned nr, uint64_t t, int64_t res)
{
    u8(w, VMCAP_TAG_SYS_POST), le(w, tid, 4), le(w, nr, 2), le(w, t, 8), le(w, (uint64_t)res, 8);
}
static void w_end(W *w, uint64_t t)
{
    u8(w, VMCAP_TAG_END), le(w, t, 8), le(w, w->raw, 8), le(w, w->runs, 8);
}
static void w_save(W *w, const char *dir, const char *name)
{
    char *p = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(p, (const char *)w->b->data, w->b->len, NULL));
    g_free(p);
    g_byte_array_free(w->b, TRUE);
    g_free(w);
}

/* The process every test starts from: pid 1000, a code page, an anonymous
 * data page, a stack; user work, getppid, user work with a reference below
 * the stack (growth), exit_group(3). */
static W *small_process(void)
{
    W *w = w_new(1000, 1, 5000000, "/bin/small");
    w_map(w, 0x400000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_X, 0);
    w_map(w, 0x600000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_W, VMCAP_MAP_ANON);
    w_map(w, 0x7ffd0000, 0x2000, VMCAP_PROT_R | VMCAP_PROT_W, VMCAP_MAP_ANON | VMCAP_MAP_STACK);
    w_thread(w, 1000);
    w_insn(w, 0x400010, 5);
    w_data(w, 0, 0x600008, 8, 2);
    w_data(w, 1, 0x7ffd1ff0, 8, 1);
    w_pre(w, 1000, 110, 6000000, NULL); /* getppid */
    w_post(w, 1000, 110, 6002500, 1);
    u8(w, VMCAP_TAG_SIGNAL), le(w, 1000, 4), u8(w, 10); /* SIGUSR1 to a handler */
    w_insn(w, 0x400100, 3);
    w_data(w, 2, 0x7ffcfff8, 4, 1);     /* 8 bytes below the stack mapping */
    const uint64_t status[6] = {3};
    w_pre(w, 1000, 231, 7000000, status); /* exit_group(3) */
    return w;
}

static char *convert(const char *dir, const CaptureImportOptions *o, CaptureImportStats *st,
                     GError **err)
{
    char *out = g_build_filename(dir, "out.vmt", NULL);
    char *text = NULL;
    if (capture_import_dir(dir, out, o, st, err))
        ck_assert(g_file_get_contents(out, &text, NULL, NULL));
    g_free(out);
    return text;
}

START_TEST(test_hand_worked)
{
    char *dir = test_tmpdir_new();
    W *w = small_process();
    w_end(w, 7100000);
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    o.captured = "2026-12-04", o.host = "test";
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, &o, &st, &err);
    ck_assert_msg(text, "%s", err ? err->message : "?");
    const char *expect =
        "1000 sys execve 0 in=11\n"
        "1000 exec \"/bin/small\"\n"
        "1000 mmap 0x10000 4096 r-x\n"
        "1000 mmap 0x11000 4096 rw- anon\n"
        "1000 mmap 0x812000 8192 rw- anon stack\n"   /* 0x12000 + the 8 MiB reserve */
        "# the stack: the mapping at 0x812000 (grows down into the 8192 KiB below it)\n"
        "1000 refs 5 3\n"
        "i 0x10010 5\n"
        "r 0x11008 8 2\n"
        "w 0x813ff0 8\n"
        "1000 sys getppid 1 dur=2.5\n"
        "1000 signal SIGUSR1\n"
        "1000 refs 3 2\n"
        "i 0x10100 3\n"
        "m 0x811ff8 4\n"                        /* the stack grew one page */
        "1000 sys exit_group ?\n"
        "1000 exit 3\n";
    char *body = strstr(text, "1000 sys execve");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body, expect);
    ck_assert(g_str_has_prefix(text, "#vmsplit-trace 2\n@source capture\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n@refs-raw 12\n"));   /* 5+2+1+3+1 */
    ck_assert_ptr_nonnull(strstr(text, "\n@refs-merged 5\n"));
    ck_assert_uint_eq(st.refs_raw, 12);
    ck_assert_uint_eq(st.refs_merged, 5);
    ck_assert_uint_eq(st.insns, 8);
    g_free(text);
    capture_import_stats_clear(&st);
    test_tmpdir_free(dir);
}
END_TEST

/* A window: the lines up to the first syscall after 2 reference lines; the
 * header counts what the window holds, not the whole capture. */
START_TEST(test_window)
{
    char *dir = test_tmpdir_new();
    W *w = small_process();
    w_end(w, 7100000);
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    o.window_lines = 2;
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, &o, &st, &err);
    ck_assert_msg(text, "%s", err ? err->message : "?");
    ck_assert(g_str_has_suffix(text, "w 0x813ff0 8\n1000 sys getppid 1 dur=2.5\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n@refs-merged 3\n@refs-raw 8\n")); /* 5 + 2 + 1 */
    ck_assert_ptr_nonnull(strstr(text, "\n@window the first 2 reference lines"));
    g_free(text);
    capture_import_stats_clear(&st);
    test_tmpdir_free(dir);
}
END_TEST

/* A parent forks a child and waits for it: the fork comes before the
 * child's events, the wait (blocked: it lasted 2 ms) yields the CPU to the
 * child, which inherits the parent's folding. */
START_TEST(test_fork)
{
    char *dir = test_tmpdir_new();
    W *p = w_new(2000, 1, 1000, "/bin/parent");
    w_map(p, 0x400000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_X, 0);
    w_map(p, 0x600000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_W, VMCAP_MAP_ANON);
    w_thread(p, 2000);
    w_insn(p, 0x400000, 2);
    const uint64_t clone_args[6] = {0x1200011}; /* SIGCHLD|CLONE_CHILD_SETTID|CLEARTID */
    w_pre(p, 2000, 56, 10000, clone_args);
    w_post(p, 2000, 56, 20000, 2001);
    w_insn(p, 0x400010, 1);
    w_pre(p, 2000, 61, 30000, NULL); /* wait4 */
    w_post(p, 2000, 61, 2030000, 2001);
    w_insn(p, 0x400020, 1);
    w_pre(p, 2000, 231, 2040000, NULL);
    w_end(p, 2050000);
    w_save(p, dir, "vmcap.2000.0");
    W *c = w_new(2001, 2000, 25000, "/bin/parent");
    w_thread(c, 2001);
    w_post(c, 2001, 56, 26000, 0); /* the child's side of clone: no entry */
    w_insn(c, 0x400010, 4);
    w_data(c, 1, 0x600100, 4, 1);
    w_pre(c, 2001, 231, 40000, NULL);
    w_end(c, 50000);
    w_save(c, dir, "vmcap.2001.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, &o, &st, &err);
    ck_assert_msg(text, "%s", err ? err->message : "?");
    const char *expect =
        "2000 sys clone 2001 dur=10\n"
        "2000 fork 2001\n"
        "2000 refs 1 1\n"
        "i 0x10010 1\n"
        "2000 sys wait4 2001 dur=2000 blocked\n"
        "2001 switch\n"
        "2001 refs 4 2\n"
        "i 0x10010 4\n"
        "w 0x11100 4\n"
        "2001 sys exit_group ?\n"
        "2001 exit 0\n"
        "2000 switch\n"
        "2000 refs 1 1\n"
        "i 0x10020 1\n"
        "2000 sys exit_group ?\n"
        "2000 exit 0\n";
    char *body = strstr(text, "2000 sys clone");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body, expect);
    ck_assert_uint_eq(st.processes, 2);
    ck_assert_uint_eq(st.forks, 1);
    g_free(text);
    capture_import_stats_clear(&st);
    test_tmpdir_free(dir);
}
END_TEST

/* Threads of one process: a clone with CLONE_THREAD is `fork TID shared`;
 * the stream's thread records become switches; what a thread still does
 * after its process's exit_group is left out, and said. */
START_TEST(test_threads)
{
    char *dir = test_tmpdir_new();
    W *w = w_new(3000, 1, 1000, "/bin/threads");
    w_map(w, 0x400000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_X, 0);
    w_map(w, 0x600000, 0x2000, VMCAP_PROT_R | VMCAP_PROT_W, VMCAP_MAP_ANON);
    w_thread(w, 3000);
    w_insn(w, 0x400000, 2);
    const uint64_t clone_args[6] = {0x3d0f00}; /* glibc's pthread_create flags */
    w_pre(w, 3000, 56, 10000, clone_args);
    w_post(w, 3000, 56, 11000, 3001);
    w_thread(w, 3001);
    w_insn(w, 0x400100, 3);
    w_data(w, 1, 0x601000, 8, 1);
    w_thread(w, 3000);
    w_insn(w, 0x400010, 1);
    const uint64_t status[6] = {7};
    w_pre(w, 3000, 231, 20000, status); /* exit_group(7) */
    w_thread(w, 3001);
    w_insn(w, 0x400108, 4); /* after the exit_group: left out */
    w_end(w, 30000);
    w_save(w, dir, "vmcap.3000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, &o, &st, &err);
    ck_assert_msg(text, "%s", err ? err->message : "?");
    const char *expect =
        "3000 sys clone 3001 dur=1\n"
        "3000 fork 3001 shared\n"
        "3001 switch\n"
        "3001 refs 3 2\n"
        "i 0x10100 3\n"
        "w 0x12000 8\n"
        "3000 switch\n"
        "3000 refs 1 1\n"
        "i 0x10010 1\n"
        "3000 sys exit_group ?\n"
        "3000 exit 7\n";
    char *body = strstr(text, "3000 sys clone");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body, expect);
    ck_assert_uint_eq(st.threads, 1);
    ck_assert_uint_eq(st.after_exit, 4);
    ck_assert_ptr_nonnull(strstr(st.notes->str, "4 references of threads still running after"));
    g_free(text);
    capture_import_stats_clear(&st);
    test_tmpdir_free(dir);
}
END_TEST

/* Converts dir and expects an error naming file and holding what. */
static void expect_error(const char *dir, const CaptureImportOptions *o, const char *file,
                         const char *what)
{
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, o, &st, &err);
    ck_assert_msg(text == NULL, "converted a bad capture");
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, file) && strstr(err->message, what), "%s", err->message);
    g_error_free(err);
    capture_import_stats_clear(&st);
}

START_TEST(test_cut_inside_record)
{
    char *dir = test_tmpdir_new();
    W *w = small_process();
    w_end(w, 7100000);
    g_byte_array_set_size(w->b, w->b->len - 30); /* cut inside exit_group's entry */
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, "vmcap.1000.0", "ends inside a syscall entry record");
    test_tmpdir_free(dir);
}
END_TEST

/* A stream holds one process image, its PROC record first
 * (vmcap_stream.h); a second PROC record is damage (fuzzing found that
 * its strings replaced the first's). */
START_TEST(test_second_proc_record)
{
    char *dir = test_tmpdir_new();
    W *w = small_process();
    W *again = w_new(1000, 1, 7050000, "/bin/other");
    g_byte_array_append(w->b, again->b->data + VMCAP_MAGIC_LEN, again->b->len - VMCAP_MAGIC_LEN);
    w_end(w, 7100000);
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, "vmcap.1000.0", "a second process record");
    g_byte_array_free(again->b, TRUE);
    g_free(again);
    test_tmpdir_free(dir);
}
END_TEST

/* A stream holds the records of its process's own threads: the pid and
 * those its clone calls made. A THREAD record for another id (here 77)
 * would have its work written as another process's (fuzzing found a
 * stream whose PROC pid differed from its threads' ids, its events then
 * interleaved with a real pid's). */
START_TEST(test_foreign_thread)
{
    char *dir = test_tmpdir_new();
    W *w = w_new(1000, 1, 5000000, "/bin/small");
    w_map(w, 0x400000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_X, 0);
    w_thread(w, 1000);
    w_insn(w, 0x400010, 5);
    w_thread(w, 77);
    w_insn(w, 0x400020, 1);
    w_pre(w, 1000, 231, 7000000, NULL);
    w_end(w, 7100000);
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, "vmcap.1000.0", "thread 77 is not one of pid 1000's");
    test_tmpdir_free(dir);
}
END_TEST

/* An exec Valgrind did not follow (the image's stream ends in execve and
 * the pid has no next stream): the execve is written as a sys event, and
 * counted with the others (it was not: the statistics said one syscall
 * fewer than the trace held). Hand-counted: getppid, then execve. */
START_TEST(test_unfollowed_exec_counted)
{
    char *dir = test_tmpdir_new();
    W *w = w_new(1000, 1, 5000000, "/bin/small");
    w_map(w, 0x400000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_X, 0);
    w_thread(w, 1000);
    w_insn(w, 0x400010, 5);
    w_pre(w, 1000, 110, 6000000, NULL); /* getppid */
    w_post(w, 1000, 110, 6002500, 1);
    w_insn(w, 0x400020, 2);
    w_pre(w, 1000, 59, 6100000, NULL);  /* execve, no end record: the image ends */
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, &o, &st, &err);
    ck_assert_msg(text, "%s", err ? err->message : "?");
    unsigned sys = 0;
    for (const char *p = text; (p = strstr(p, " sys ")); p++)
        sys++;
    ck_assert_uint_eq(sys, 3);          /* the image's own exec at its start, getppid, execve */
    ck_assert_uint_eq(st.syscalls, sys);
    ck_assert_ptr_nonnull(strstr(st.notes->str, "Valgrind did not follow"));
    capture_import_stats_clear(&st);
    g_free(text);
    test_tmpdir_free(dir);
}
END_TEST

START_TEST(test_no_end_record)
{
    char *dir = test_tmpdir_new();
    W *w = small_process(); /* no END: Valgrind died, or the disk filled */
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, "vmcap.1000.0", "without its end record");
    test_tmpdir_free(dir);
}
END_TEST

START_TEST(test_counts_disagree)
{
    char *dir = test_tmpdir_new();
    W *w = small_process();
    w->raw += 1;
    w_end(w, 7100000);
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, "vmcap.1000.0", "damaged");
    test_tmpdir_free(dir);
}
END_TEST

/* A program that crashed: Valgrind's shutdown wrote the end record, but no
 * exit call came (nor any syscall at all). */
START_TEST(test_crashed)
{
    char *dir = test_tmpdir_new();
    W *w = w_new(1000, 1, 5000000, "/bin/crash");
    w_map(w, 0x400000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_X, 0);
    w_thread(w, 1000);
    w_insn(w, 0x400010, 5);
    w_end(w, 7100000);
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, "vmcap.1000.0", "ended without an exit call");
    o.killed_signal = "SIGSEGV";
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, &o, &st, &err);
    ck_assert_msg(text, "%s", err ? err->message : "?");
    ck_assert(g_str_has_suffix(text, "i 0x10010 5\n1000 exit SIGSEGV\n"));
    ck_assert_uint_eq(st.killed, 1);
    ck_assert_ptr_nonnull(strstr(st.notes->str, "pid 1000 ended without an exit call"));
    g_free(text);
    capture_import_stats_clear(&st);
    test_tmpdir_free(dir);
}
END_TEST

START_TEST(test_unmapped)
{
    char *dir = test_tmpdir_new();
    W *w = w_new(1000, 1, 5000000, "/bin/stray");
    w_map(w, 0x400000, 0x1000, VMCAP_PROT_R | VMCAP_PROT_X, 0);
    w_thread(w, 1000);
    w_insn(w, 0x400010, 5);
    w_data(w, 0, 0x900000, 8, 3); /* nothing is mapped there */
    w_pre(w, 1000, 231, 7000000, NULL);
    w_end(w, 7100000);
    w_save(w, dir, "vmcap.1000.0");
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, "vmcap.1000.0", "0x900000 outside every mapping");
    o.drop_unmapped = true;
    CaptureImportStats st;
    GError *err = NULL;
    char *text = convert(dir, &o, &st, &err);
    ck_assert_msg(text, "%s", err ? err->message : "?");
    ck_assert_uint_eq(st.unmapped, 3);
    ck_assert_ptr_nonnull(strstr(text, "1000 refs 5 1\ni 0x10010 5\n"));
    ck_assert_ptr_nonnull(strstr(text, "# 3 references outside every mapping were dropped"));
    g_free(text);
    capture_import_stats_clear(&st);
    test_tmpdir_free(dir);
}
END_TEST

START_TEST(test_empty_dir)
{
    char *dir = test_tmpdir_new();
    CaptureImportOptions o;
    capture_import_options_init(&o);
    expect_error(dir, &o, dir, "no vmcap.PID.SEQ streams");
    test_tmpdir_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("capture-import");
    TCase *tc = tcase_create("import");
    tcase_add_test(tc, test_hand_worked);
    tcase_add_test(tc, test_fork);
    tcase_add_test(tc, test_window);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_cut_inside_record);
    tcase_add_test(tc, test_second_proc_record);
    tcase_add_test(tc, test_foreign_thread);
    tcase_add_test(tc, test_unfollowed_exec_counted);
    tcase_add_test(tc, test_no_end_record);
    tcase_add_test(tc, test_counts_disagree);
    tcase_add_test(tc, test_crashed);
    tcase_add_test(tc, test_unmapped);
    tcase_add_test(tc, test_empty_dir);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
