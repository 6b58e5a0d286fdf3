/* strace line lexing and the byte rules, against expectations written by
 * hand: the fields of each line as strace's manual describes them, and the
 * bytes each call copies from the i686 ABI sizes listed in
 * workloads/FORMAT.md (struct stat64 96, struct sigaction 20, struct
 * pollfd 8, struct epoll_event 12, struct iovec 8, ...). */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "replay/strace_event.h"
#include "replay/strace_parse.h"
#include "replay/syscall_table.h"

#define NS(s) ((uint64_t)(s) * 1000000000ull)

typedef struct {
    const char *line;
    StraceLineKind kind;
    int64_t pid;          /* -1: no pid prefix */
    StraceTsKind ts;
    uint64_t ts_ns;
    const char *name;     /* NULL: not checked */
    const char *args;     /* NULL: not checked */
    int ret_known;        /* -1: not a call with a result */
    int64_t ret;
    const char *err;      /* "" : none */
    int64_t dur_ns;       /* -1: no -T */
} ParseCase;

static const ParseCase parse_cases[] = {
    {"1234  10:20:30.123456 read(3, \"x\", 1) = 1 <0.000015>", STRACE_CALL, 1234,
     STRACE_TS_CLOCK, NS(10 * 3600 + 20 * 60 + 30) + 123456000, "read", "3, \"x\", 1", 1, 1, "",
     15000},
    {"[pid    99] 1700000000.000001 close(3) = 0", STRACE_CALL, 99, STRACE_TS_EPOCH,
     NS(1700000000) + 1000, "close", "3", 1, 0, "", -1},
    {"     0.000123 getpid() = 5", STRACE_CALL, -1, STRACE_TS_RELATIVE, 123000, "getpid", "", 1,
     5, "", -1},
    {"09:15:03 brk(NULL) = 0x55f0d00a7000 <0.000018>", STRACE_CALL, -1, STRACE_TS_CLOCK,
     NS(9 * 3600 + 15 * 60 + 3), "brk", "NULL", 1, 0x55f0d00a7000, "", 18000},
    {"getppid() = 1", STRACE_CALL, -1, STRACE_TS_NONE, 0, "getppid", "", 1, 1, "", -1},
    {"7 read(3,  <unfinished ...>", STRACE_UNFINISHED, 7, STRACE_TS_NONE, 0, "read", "3,", -1, 0,
     "", -1},
    {"7 <... read resumed>\"abc\", 10) = 3 <0.5>", STRACE_RESUMED, 7, STRACE_TS_NONE, 0, "read",
     "\"abc\", 10", 1, 3, "", 500000000},
    {"7 <... clone3 resumed> => {parent_tid=[11800]}, 88) = 11800 <0.000136>", STRACE_RESUMED, 7,
     STRACE_TS_NONE, 0, "clone3", "=> {parent_tid=[11800]}, 88", 1, 11800, "", 136000},
    {"7 poll([{fd=3, events=POLLIN}], 1, 500 <detached ...>", STRACE_DETACHED, 7, STRACE_TS_NONE,
     0, "poll", "[{fd=3, events=POLLIN}], 1, 500", -1, 0, "", -1},
    {"7 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---", STRACE_SIGNAL, 7, STRACE_TS_NONE,
     0, "SIGCHLD", NULL, -1, 0, "", -1},
    {"7 --- stopped by SIGSTOP ---", STRACE_NOTE, 7, STRACE_TS_NONE, 0, NULL, NULL, -1, 0, "", -1},
    {"7 +++ superseded by execve in pid 8 +++", STRACE_NOTE, 7, STRACE_TS_NONE, 0, NULL, NULL, -1,
     0, "", -1},
    {"[ Process PID=7 runs in 32 bit mode. ]", STRACE_NOTE, -1, STRACE_TS_NONE, 0, NULL, NULL, -1,
     0, "", -1},
    {"strace: Process 7 attached", STRACE_NOTE, -1, STRACE_TS_NONE, 0, NULL, NULL, -1, 0, "", -1},
    {"7 nanosleep({tv_sec=1, tv_nsec=0}, NULL) = ? ERESTARTSYS (To be restarted if SA_RESTART "
     "is set) <0.100000>", STRACE_CALL, 7, STRACE_TS_NONE, 0, "nanosleep", NULL, 0, 0,
     "ERESTARTSYS", 100000000},
    /* a string holding ") = 3 (" and a comment-like text must not end the arguments */
    {"7 openat(AT_FDCWD, \"a) = 3 (b/* x\", O_RDONLY) = -1 ENOENT (No such file or directory) "
     "<0.000010>", STRACE_CALL, 7, STRACE_TS_NONE, 0, "openat",
     "AT_FDCWD, \"a) = 3 (b/* x\", O_RDONLY", 1, -1, "ENOENT", 10000},
    {"7 [00007f0dc52ad000] getpid() = 7", STRACE_CALL, 7, STRACE_TS_NONE, 0, "getpid", "", 1, 7,
     "", -1},
    {"7 openat(AT_FDCWD, \"/etc/passwd\", O_RDONLY) = 3</etc/passwd> <0.000020>", STRACE_CALL, 7,
     STRACE_TS_NONE, 0, "openat", NULL, 1, 3, "", 20000},
    {"7 execve(\"/bin/x\", [\"x\"], 0x7ffc /* 3 vars */) = 0", STRACE_CALL, 7, STRACE_TS_NONE, 0,
     "execve", "\"/bin/x\", [\"x\"], 0x7ffc /* 3 vars */", 1, 0, "", -1},
    {"7 exit_group(0) = ?", STRACE_CALL, 7, STRACE_TS_NONE, 0, "exit_group", "0", 0, 0, "", -1},
    {"7 10:00:00.000001 futex(0x1, FUTEX_WAIT, 0, {tv_sec=1, tv_nsec=0}) = -1 ETIMEDOUT "
     "(Connection timed out) <1.000123456>", STRACE_CALL, 7, STRACE_TS_CLOCK, NS(36000) + 1000, "futex", NULL,
     1, -1, "ETIMEDOUT", 1000123456},
    {"7 poll([{fd=3, events=POLLIN}], 1, 500) = 0 (Timeout) <0.500675>", STRACE_CALL, 7,
     STRACE_TS_NONE, 0, "poll", NULL, 1, 0, "", 500675000},
};

START_TEST(test_parse_line)
{
    const ParseCase *c = &parse_cases[_i];
    StraceLine l;
    const char *expected = NULL;
    size_t col = 0;
    ck_assert_msg(strace_parse_line(c->line, &l, &expected, &col), "case %d: %s at %zu", _i,
                  expected, col);
    ck_assert_int_eq(l.kind, c->kind);
    ck_assert_int_eq(l.has_pid, c->pid >= 0);
    if (c->pid >= 0)
        ck_assert_uint_eq(l.pid, (uint32_t)c->pid);
    ck_assert_int_eq(l.ts, c->ts);
    ck_assert_uint_eq(l.ts_ns, c->ts_ns);
    if (c->name)
        ck_assert_msg(l.name.len == strlen(c->name) && !memcmp(l.name.p, c->name, l.name.len),
                      "case %d: name '%.*s'", _i, (int)l.name.len, l.name.p);
    if (c->args)
        ck_assert_msg(l.args.len == strlen(c->args) && !memcmp(l.args.p, c->args, l.args.len),
                      "case %d: args '%.*s'", _i, (int)l.args.len, l.args.p);
    if (c->ret_known >= 0) {
        ck_assert_int_eq(l.ret_known, c->ret_known);
        if (c->ret_known)
            ck_assert_int_eq(l.ret, c->ret);
        ck_assert_msg(l.err.len == strlen(c->err) && (!l.err.len || !memcmp(l.err.p, c->err, l.err.len)),
                      "case %d: err '%.*s'", _i, (int)l.err.len, l.err.p);
    }
    ck_assert_int_eq(l.has_dur, c->dur_ns >= 0);
    if (c->dur_ns >= 0)
        ck_assert_uint_eq(l.dur_ns, (uint64_t)c->dur_ns);
}
END_TEST

typedef struct {
    const char *line;
    const char *expected; /* substring of what the parser says it expected */
} BadParse;

static const BadParse bad_parse[] = {
    {"7 read(3, \"abc", "')' closing the arguments"},
    {"7 read(3, \"abc\"..., 4096", "')' closing the arguments"},
    {"7 this is not a syscall", "a syscall 'name('"},
    {"7 10:00:00.0004", "a timestamp"},
    {"7 write(1, \"x\", 1) = oops", "a return value"},
    {"7 write(1, \"x\", 1)", "' = ' and a return value"},
    {"7 +++ exited with x +++", "'+++ exited with N +++'"},
    {"7 +++ killed by 9 +++", "killed by SIGNAME"},
    {"7 --- SIGCHLD {si_signo=SIGCHLD}", "' ---' ending"},
    {"7 <... read resumed", "'<... NAME resumed>'"},
    {"[pid x] read(3) = 1", "'[pid N]'"},
};

START_TEST(test_parse_bad_line)
{
    StraceLine l;
    const char *expected = NULL;
    size_t col = 0;
    ck_assert_msg(!strace_parse_line(bad_parse[_i].line, &l, &expected, &col), "case %d parsed",
                  _i);
    ck_assert_msg(expected && strstr(expected, bad_parse[_i].expected), "case %d: '%s'", _i,
                  expected);
}
END_TEST

START_TEST(test_args_and_values)
{
    StraceText a[8];
    const char *text = "3, \"a,b\\\"c\", [{iov_base=\"x,y\", iov_len=3}], {a=1, b=(2, 3)}, NULL "
                       "/* c, d */, [128 => 16]";
    unsigned n = strace_split_args((StraceText){text, strlen(text)}, a, 8);
    ck_assert_uint_eq(n, 6);
    ck_assert(a[1].len == 8 && !memcmp(a[1].p, "\"a,b\\\"c\"", 8));
    ck_assert(a[4].len == 15 && !memcmp(a[4].p, "NULL /* c, d */", 15));
    int64_t v;
    ck_assert(strace_arg_int(a[0], &v) && v == 3);
    ck_assert(strace_arg_int(a[5], &v) && v == 16);
    const struct { const char *t; int ok; int64_t v; } ints[] = {
        {"NULL", 1, 0}, {"AT_FDCWD", 1, -100}, {"-1", 1, -1}, {"0x1f", 1, 31}, {"0755", 1, 0755},
        {"[16]", 1, 16}, {"3</etc/passwd>", 1, 3}, {"O_RDONLY", 0, 0}, {"8192*1024", 0, 0},
        {"0", 1, 0},
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(ints); i++) {
        bool ok = strace_arg_int((StraceText){ints[i].t, strlen(ints[i].t)}, &v);
        ck_assert_msg(ok == (bool)ints[i].ok && (!ok || v == ints[i].v), "'%s'", ints[i].t);
    }
    size_t len;
    bool cut;
    const char *s1 = "\"\\177ELF\\2\\1\\1\\0\\x41\\n\\\\\"...";
    ck_assert(strace_arg_strlen((StraceText){s1, strlen(s1)}, &len, &cut));
    ck_assert_uint_eq(len, 11); /* 0177 E L F 2 1 1 0 'A' '\n' '\\' */
    ck_assert(cut);
    char *u = strace_arg_unquote((StraceText){"\"a\\tb\"", 6}, &cut);
    ck_assert_str_eq(u, "a\tb");
    ck_assert(!cut);
    g_free(u);
    const char *flags = "flags=CLONE_VMX|CLONE_VM|SIGCHLD";
    ck_assert(strace_text_has_symbol((StraceText){flags, strlen(flags)}, "CLONE_VM"));
    const char *flags2 = "flags=CLONE_VFORK|CLONE_VMX";
    ck_assert(!strace_text_has_symbol((StraceText){flags2, strlen(flags2)}, "CLONE_VM"));
}
END_TEST

/* ---- bytes, fd, req and op of one call, by hand from the i686 ABI ---- */

typedef struct {
    const char *line;
    uint64_t in, out;
    int64_t fd;       /* TRACE_FD_NONE: none */
    uint64_t req;
    const char *op;   /* NULL: none */
} BytesCase;

#define NOFD ((int64_t)TRACE_FD_NONE)

static const BytesCase bytes_cases[] = {
    /* path "/etc/passwd" (11 + 1) in, struct stat64 (96) out */
    {"newfstatat(AT_FDCWD, \"/etc/passwd\", {st_mode=S_IFREG|0644, st_size=1234, ...}, 0) = 0",
     12, 96, -100, 0, NULL},
    /* failed: the path was copied in, nothing out */
    {"newfstatat(AT_FDCWD, \"/nope\", 0x7ffd, 0) = -1 ENOENT (No such file or directory)", 6, 0,
     -100, 0, NULL},
    {"read(3, \"\\177ELF\\2\\1\\1\\0\"..., 832) = 832", 0, 832, 3, 832, NULL},
    /* 3 bytes + 2 struct iovec of 8 */
    {"writev(1, [{iov_base=\"a\", iov_len=1}, {iov_base=\"bc\", iov_len=2}], 2) = 3", 19, 0, 1, 0,
     NULL},
    {"readv(3, [{iov_base=\"abc\", iov_len=3}], 1) = 3", 8, 3, 3, 0, NULL},
    {"recvfrom(4, \"GET / HTTP/1.1\\r\\n\"..., 8192, 0, NULL, NULL) = 89", 0, 89, 4, 8192, NULL},
    /* + the 16-byte sockaddr_in the kernel wrote back */
    {"recvfrom(5, \"x\", 10, 0, {sa_family=AF_INET, sin_port=htons(53), "
     "sin_addr=inet_addr(\"1.1.1.1\")}, [128 => 16]) = 1", 0, 17, 5, 10, NULL},
    {"sendto(4, \"HTTP/1.0 200 OK\\r\\n\"..., 184, 0, NULL, 0) = 184", 184, 0, 4, 184, NULL},
    /* 1 event x struct epoll_event (12) */
    {"epoll_wait(5, [{events=EPOLLIN, data={u32=7, u64=7}}], 64, -1) = 1", 0, 12, 5, 0, NULL},
    /* 2 struct pollfd (8) each way */
    {"poll([{fd=3, events=POLLIN}, {fd=4, events=POLLIN}], 2, 500) = 1 ([{fd=3, revents=POLLIN}])",
     16, 16, NOFD, 0, NULL},
    /* nfds 8 -> one 32-bit word (4) for the one non-NULL set, + timeval 8 in */
    {"select(8, [3 7], NULL, NULL, {tv_sec=1, tv_usec=0}) = 1 (in [3], left {tv_sec=0, "
     "tv_usec=999})", 12, 4, NOFD, 0, NULL},
    {"futex(0x23e5040, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, NULL, "
     "FUTEX_BITSET_MATCH_ANY) = 0", 4, 0, NOFD, 0, "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME"},
    {"futex(0x23e5040, FUTEX_WAKE_PRIVATE, 1) = 1", 0, 0, NOFD, 0, "FUTEX_WAKE_PRIVATE"},
    {"rt_sigaction(SIGINT, {sa_handler=0x55, sa_mask=[], sa_flags=SA_RESTORER, sa_restorer=0x7f}, "
     "NULL, 8) = 0", 20, 0, NOFD, 0, "SIGINT"},
    {"rt_sigprocmask(SIG_BLOCK, ~[], [], 8) = 0", 8, 8, NOFD, 0, "SIG_BLOCK"},
    {"wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 501", 0, 4, NOFD, 0, NULL},
    {"pipe2([3, 4], O_CLOEXEC) = 0", 0, 8, NOFD, 0, NULL},
    /* sendfile: the data stays in the kernel; only the loff_t moves */
    {"sendfile(4, 5, NULL, 27019) = 27019", 0, 0, 4, 27019, NULL},
    {"sendfile(4, 5, [0] => [27019], 27019) = 27019", 8, 8, 4, 27019, NULL},
    {"copy_file_range(3, NULL, 4, NULL, 9223372035781033984, 0) = 4194304", 0, 0, 3,
     9223372035781033984ull, NULL},
    {"openat(AT_FDCWD, \"/etc/ld.so.cache\", O_RDONLY|O_CLOEXEC) = 3", 17, 0, -100, 0, NULL},
    {"execve(\"/usr/bin/cp\", [\"cp\", \"a\", \"b\"], 0x7ffc /* 37 vars */) = 0", 12, 0, NOFD, 0,
     NULL},
    /* struct new_utsname: 6 x 65 */
    {"uname({sysname=\"Linux\", nodename=\"vm\", ...}) = 0", 0, 390, NOFD, 0, NULL},
    {"clock_gettime(CLOCK_MONOTONIC, {tv_sec=1, tv_nsec=2}) = 0", 0, 8, NOFD, 0, "CLOCK_MONOTONIC"},
    {"getdents64(3, 0x55 /* 20 entries */, 32768) = 640", 0, 640, 3, 32768, NULL},
    {"accept4(3, {sa_family=AF_INET, sin_port=htons(41660)}, [16], SOCK_CLOEXEC) = 4", 0, 16, 3, 0,
     NULL},
    {"connect(3, {sa_family=AF_UNIX, sun_path=\"/var/run/nscd/socket\"}, 110) = -1 ENOENT (No "
     "such file or directory)", 110, 0, 3, 0, NULL},
    {"ioctl(5, TCGETS, 0x7fa5c17fe210) = -1 ENOTTY (Inappropriate ioctl for device)", 0, 0, 5, 0,
     "TCGETS"},
    {"ioctl(4, BTRFS_IOC_CLONE or FICLONE, 3) = -1 EOPNOTSUPP (Operation not supported)", 0, 0, 4,
     0, "BTRFS_IOC_CLONE"},
    /* struct statx: 256 */
    {"statx(AT_FDCWD, \"/tmp\", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_BASIC_STATS}) = 0",
     5, 256, -100, 0, NULL},
    {"getcwd(\"/tmp/cap\", 4096) = 9", 0, 9, NOFD, 4096, NULL},
    {"clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f, stack_size=0x9000}, 88)"
     " = 1234", 88, 0, NOFD, 0, NULL},
    {"mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000",
     0, 0, -1, 8192, NULL},
    {"frobnicate(1, \"abc\") = 0", 0, 0, NOFD, 0, NULL},
};

START_TEST(test_bytes)
{
    const BytesCase *c = &bytes_cases[_i];
    StraceLine l;
    const char *expected;
    size_t col;
    ck_assert_msg(strace_parse_line(c->line, &l, &expected, &col), "case %d: %s", _i, expected);
    StraceCall call = {.name = l.name, .all_args = l.args, .ret_known = l.ret_known,
                       .ret = l.ret, .err = l.err};
    strace_call_split(&call);
    TraceEvent ev;
    strace_call_to_syscall(&call, 1, &ev);
    const TraceSyscall *s = &ev.u.sys;
    ck_assert_msg(s->in == c->in && s->out == c->out,
                  "case %d (%s): in %" G_GUINT64_FORMAT " out %" G_GUINT64_FORMAT, _i, s->name,
                  s->in, s->out);
    ck_assert_msg(s->fd == c->fd, "case %d: fd %d", _i, s->fd);
    ck_assert_msg(s->req == c->req, "case %d: req %" G_GUINT64_FORMAT, _i, s->req);
    ck_assert_msg(g_strcmp0(s->op, c->op) == 0, "case %d: op %s", _i, s->op);
    ck_assert_msg(s->op == NULL || s->op == g_intern_string(c->op), "op not interned");
}
END_TEST

START_TEST(test_table)
{
    /* Every name resolves to its own entry, and unknown names to 0. */
    for (unsigned id = 1; id < syscall_table_size(); id++) {
        const char *n = syscall_info(id)->name;
        ck_assert_uint_eq(syscall_lookup(n, strlen(n)), id);
    }
    ck_assert_uint_eq(syscall_lookup("frobnicate", 10), SYSCALL_ID_UNKNOWN);
    ck_assert_uint_eq(syscall_lookup("readx", 4), syscall_lookup("read", 4));
    /* The calls that can sleep and those that cannot (brk allocates, close
     * releases; neither waits for another task). */
    const char *sleepers[] = {"read", "wait4", "futex", "poll", "epoll_wait", "nanosleep", "accept4"};
    const char *sprinters[] = {"brk", "mmap", "close", "getpid", "rseq", "rt_sigprocmask"};
    for (unsigned i = 0; i < G_N_ELEMENTS(sleepers); i++)
        ck_assert(syscall_info(syscall_lookup(sleepers[i], strlen(sleepers[i])))->may_block);
    for (unsigned i = 0; i < G_N_ELEMENTS(sprinters); i++)
        ck_assert(!syscall_info(syscall_lookup(sprinters[i], strlen(sprinters[i])))->may_block);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("strace-parse");
    TCase *tc = tcase_create("lines");
    tcase_add_loop_test(tc, test_parse_line, 0, G_N_ELEMENTS(parse_cases));
    tcase_add_loop_test(tc, test_parse_bad_line, 0, G_N_ELEMENTS(bad_parse));
    tcase_add_test(tc, test_args_and_values);
    tcase_add_loop_test(tc, test_bytes, 0, G_N_ELEMENTS(bytes_cases));
    tcase_add_test(tc, test_table);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
