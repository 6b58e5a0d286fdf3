/* vmsplit gen: the workload generators.
 *
 * Every generator's trace reads back through trace_reader (so it follows
 * FORMAT.md, the running-pid rule included), is byte-identical for a seed,
 * and holds what its documentation promises, checked against figures worked
 * by hand: the user instructions a --rate gives, the lmbench pipe's
 * alternation, gzip's read/write rhythm, PostgreSQL protocol message sizes,
 * SPECweb99 file sizes. The CLI end to end for bad input (exit 2). */
#include <check.h>
#include <gio/gio.h>
#include <math.h>
#include <string.h>

#include "preset/preset.h"
#include "replay/gen.h"
#include "replay/gen_rate.h"
#include "replay/trace.h"
#include "test_tmp.h"

static const char *vmsplit_exe;
static char *tmpdir;

/* Writes gen NAME with the options into tmpdir/file and returns the path. */
static char *gen_file(const char *name, const GenOptions *o, const char *file)
{
    const Generator *gen = gen_find(name);
    ck_assert_msg(gen, "no generator %s", name);
    char *path = g_build_filename(tmpdir, file, NULL);
    GError *err = NULL;
    ck_assert_msg(gen_write(gen, o, path, &err), "%s", err ? err->message : "?");
    return path;
}

static void opts(GenOptions *o, uint64_t count, uint64_t seed)
{
    gen_options_init(o);
    o->count = count;
    o->seed = seed;
}

/* What a trace holds, read back with the reader. */
typedef struct {
    uint64_t events, sys, user, user_insns, switches, blocked;
    uint64_t user_min, user_max;
    GHashTable *by_name; /* interned name -> count */
    GHashTable *pids;
    GArray *evs;         /* every event, when keep */
} Summary;

static void summarize(const char *path, Summary *s, bool keep)
{
    memset(s, 0, sizeof *s);
    s->user_min = UINT64_MAX;
    s->by_name = g_hash_table_new(NULL, NULL);
    s->pids = g_hash_table_new(NULL, NULL);
    s->evs = keep ? g_array_new(FALSE, FALSE, sizeof(TraceEvent)) : NULL;
    GError *err = NULL;
    TraceReader *r = trace_reader_open(path, &err);
    ck_assert_msg(r, "%s", err ? err->message : "?");
    TraceEvent ev;
    while (trace_reader_next(r, &ev, &err)) {
        s->events++;
        g_hash_table_add(s->pids, GUINT_TO_POINTER(ev.pid));
        if (keep)
            g_array_append_val(s->evs, ev);
        if (ev.kind == TRACE_EV_SYSCALL) {
            s->sys++;
            s->blocked += ev.u.sys.blocked;
            gpointer k = (gpointer)ev.u.sys.name;
            g_hash_table_insert(s->by_name, k,
                                GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(s->by_name, k)) + 1));
        } else if (ev.kind == TRACE_EV_USER) {
            s->user++;
            s->user_insns += ev.u.user.insns;
            s->user_min = MIN(s->user_min, ev.u.user.insns);
            s->user_max = MAX(s->user_max, ev.u.user.insns);
        } else if (ev.kind == TRACE_EV_SWITCH) {
            s->switches++;
        }
    }
    ck_assert_msg(!err, "%s", err ? err->message : "");
    trace_reader_close(r);
}

static unsigned count_of(const Summary *s, const char *name)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(s->by_name, g_intern_string(name)));
}

static void summary_clear(Summary *s)
{
    g_hash_table_destroy(s->by_name);
    g_hash_table_destroy(s->pids);
    if (s->evs)
        g_array_free(s->evs, TRUE);
}

/* Setup syscalls each generator documents (not counted by --count). */
static const struct { const char *name; unsigned setup; bool random; } gens[] = {
    {"null", 0, false}, {"pipe", 3, false}, {"fileio", 1, true},
    {"db", 0, true},    {"net", 0, true},   {"compute", 1, false},
};

START_TEST(test_deterministic)
{
    const char *name = gens[_i].name;
    GenOptions o;
    opts(&o, 3000, 42);
    g_autofree char *a = gen_file(name, &o, "a.vmt"), *b = gen_file(name, &o, "b.vmt");
    o.seed = 43;
    g_autofree char *c = gen_file(name, &o, "c.vmt");
    char *ta = NULL, *tb = NULL, *tc = NULL;
    ck_assert(g_file_get_contents(a, &ta, NULL, NULL) && g_file_get_contents(b, &tb, NULL, NULL) &&
              g_file_get_contents(c, &tc, NULL, NULL));
    ck_assert_str_eq(ta, tb);
    /* Past the header (which names the seed): the events differ exactly when
     * the generator draws random numbers. */
    char *ea = strstr(ta, "\n1000 "), *ec = strstr(tc, "\n1000 ");
    ck_assert(ea && ec);
    bool differ = strcmp(ea, ec) != 0;
    g_free(ta), g_free(tb), g_free(tc);
    ck_assert_msg(differ == gens[_i].random, "%s: seed changes events: %d", name, differ);
}
END_TEST

/* Every trace reads back; --count loop syscalls each after one user event. */
START_TEST(test_reads_back)
{
    const char *name = gens[_i].name;
    GenOptions o;
    opts(&o, 5000, 7);
    g_autofree char *path = gen_file(name, &o, "r.vmt.gz");
    Summary s;
    summarize(path, &s, false);
    ck_assert_uint_eq(s.sys, 5000 + gens[_i].setup);
    ck_assert_uint_eq(s.user, 5000);
    ck_assert_uint_eq(s.user_min, gen_find(name)->default_user_insns);
    ck_assert_uint_eq(s.user_max, gen_find(name)->default_user_insns);
    summary_clear(&s);
}
END_TEST

START_TEST(test_null_count)
{
    GenOptions o;
    opts(&o, 1000, 1);
    g_autofree char *path = gen_file("null", &o, "null.vmt");
    Summary s;
    summarize(path, &s, false);
    ck_assert_uint_eq(count_of(&s, "getppid"), 1000);
    ck_assert_uint_eq(s.sys, 1000);
    ck_assert_uint_eq(s.events, 2000); /* 1000 x (user, sys), nothing else */
    ck_assert_uint_eq(g_hash_table_size(s.pids), 1);
    ck_assert_uint_eq(s.user_insns, 1000 * 20);
    summary_clear(&s);
}
END_TEST

/* lmbench lat_pipe on one CPU: after setup (pipe, pipe, clone), each switch
 * goes to the other pid, right after a blocked read of the one leaving. */
START_TEST(test_pipe_alternates)
{
    GenOptions o;
    opts(&o, 401, 1);
    g_autofree char *path = gen_file("pipe", &o, "pipe.vmt");
    Summary s;
    summarize(path, &s, true);
    ck_assert_uint_eq(g_hash_table_size(s.pids), 2);
    ck_assert_uint_eq(count_of(&s, "pipe"), 2);
    ck_assert_uint_eq(count_of(&s, "clone"), 1);
    /* 401 loop calls: parent write and blocked read, switch, child read,
     * then 199 halves of (write, blocked read) each followed by a switch,
     * 3 + 2 x 199 = 401; the switch after the last half is not written
     * (the trace ends there): 1 + 198 switches, 1 + 199 blocked reads. */
    ck_assert_uint_eq(s.switches, 199);
    ck_assert_uint_eq(count_of(&s, "read") + count_of(&s, "write"), 401);
    uint32_t running = 1000, expect_next = 1001;
    const TraceEvent *prev = NULL;
    for (guint i = 0; i < s.evs->len; i++) {
        const TraceEvent *e = &g_array_index(s.evs, TraceEvent, i);
        if (e->kind == TRACE_EV_SWITCH) {
            ck_assert_uint_eq(e->pid, expect_next);
            ck_assert(prev && prev->kind == TRACE_EV_SYSCALL && prev->pid == running);
            ck_assert_str_eq(prev->u.sys.name, "read");
            ck_assert(prev->u.sys.blocked);
            expect_next = running;
            running = e->pid;
        } else if (e->kind == TRACE_EV_SYSCALL && e->u.sys.blocked) {
            ck_assert_str_eq(e->u.sys.name, "read");
        }
        if (e->kind == TRACE_EV_SYSCALL && (!strcmp(e->u.sys.name, "read") ||
                                             !strcmp(e->u.sys.name, "write"))) {
            ck_assert_int_eq(e->u.sys.ret, 1);
            ck_assert_uint_eq(e->u.sys.in + e->u.sys.out, 1);
        }
        prev = e;
    }
    ck_assert_uint_eq(s.blocked, 200);
    summary_clear(&s);
}
END_TEST

/* The user work per syscall from --user-insns and --rate, worked by hand:
 * insns = clock (MHz) x 10^6 x IPC / rate, rounded to nearest. */
static const struct {
    uint64_t insns; double rate, clock, ipc; uint64_t expect;
} user_cases[] = {
    {12345, 0, 2000, 1, 12345},
    {0, 50000, 2000, 1, 40000},      /* 2e9 / 5e4 */
    {0, 3000, 1000, 1, 333333},      /* 1e9 / 3000 = 333 333.3 */
    {0, 7, 2.8, 1.5, 600000},        /* 2.8e6 x 1.5 / 7 */
    {0, 1500, 1, 1, 667},            /* 1e6 / 1500 = 666.7 */
};

START_TEST(test_user_work)
{
    GenOptions o;
    opts(&o, 1000, 1);
    o.have_user_insns = user_cases[_i].rate == 0;
    o.user_insns = user_cases[_i].insns;
    o.rate = user_cases[_i].rate;
    o.clock_mhz = user_cases[_i].clock;
    o.ipc = user_cases[_i].ipc;
    o.pages = 9;
    o.have_pattern = true;
    o.pattern = TRACE_PAT_SEQ;
    for (unsigned k = 0; k < G_N_ELEMENTS(gens); k++) {
        g_autofree char *path = gen_file(gens[k].name, &o, "u.vmt");
        Summary s;
        summarize(path, &s, true);
        ck_assert_uint_eq(s.user, 1000);
        ck_assert_uint_eq(s.user_insns, 1000 * user_cases[_i].expect);
        for (guint i = 0; i < s.evs->len; i++) {
            const TraceEvent *e = &g_array_index(s.evs, TraceEvent, i);
            if (e->kind != TRACE_EV_USER)
                continue;
            ck_assert_uint_eq(e->u.user.insns, user_cases[_i].expect);
            ck_assert_uint_eq(e->u.user.pages, 9);
            ck_assert_uint_eq(e->u.user.pattern, TRACE_PAT_SEQ);
            /* each user event is followed by a syscall of the same pid */
            const TraceEvent *n = &g_array_index(s.evs, TraceEvent, i + 1);
            ck_assert(n->kind == TRACE_EV_SYSCALL && n->pid == e->pid);
        }
        summary_clear(&s);
    }
}
END_TEST

/* --user-insns 0: no user events at all. */
START_TEST(test_no_user_work)
{
    GenOptions o;
    opts(&o, 100, 1);
    o.have_user_insns = true;
    o.user_insns = 0;
    g_autofree char *path = gen_file("null", &o, "z.vmt");
    Summary s;
    summarize(path, &s, false);
    ck_assert_uint_eq(s.user, 0);
    ck_assert_uint_eq(s.events, 100);
    summary_clear(&s);
}
END_TEST

/* fileio, sequential over a 4-page file: every fifth loop call rewinds;
 * every transfer is one 4096-byte page; nothing blocks. */
START_TEST(test_fileio)
{
    GenOptions o;
    opts(&o, 1000, 3);
    char *p[] = {"file-pages=4", "read-pct=25", NULL};
    o.params = p;
    g_autofree char *path = gen_file("fileio", &o, "f.vmt");
    Summary s;
    summarize(path, &s, true);
    ck_assert_uint_eq(count_of(&s, "lseek"), 200);
    ck_assert_uint_eq(count_of(&s, "read") + count_of(&s, "write"), 800);
    /* 25 % reads: 200 expected; a binomial(800, 0.25) stays within 5 sigma
     * (sigma = 12.2) of it. */
    ck_assert_int_le(ABS((int)count_of(&s, "read") - 200), 61);
    ck_assert_uint_eq(s.blocked, 0);
    unsigned since = 0;
    for (guint i = 0; i < s.evs->len; i++) {
        const TraceEvent *e = &g_array_index(s.evs, TraceEvent, i);
        if (e->kind != TRACE_EV_SYSCALL || !strcmp(e->u.sys.name, "openat"))
            continue;
        if (!strcmp(e->u.sys.name, "lseek")) {
            ck_assert_uint_eq(since, 4);
            since = 0;
            continue;
        }
        since++;
        ck_assert_int_eq(e->u.sys.ret, 4096);
        ck_assert_uint_eq(e->u.sys.req, 4096);
        ck_assert_uint_eq(e->u.sys.in + e->u.sys.out, 4096);
        ck_assert_uint_eq(e->u.sys.name[0] == 'r' ? e->u.sys.out : e->u.sys.in, 4096);
    }
    summary_clear(&s);

    char *r[] = {"random=1", "read-pct=100", NULL};
    o.params = r;
    g_autofree char *path2 = gen_file("fileio", &o, "f2.vmt");
    summarize(path2, &s, false);
    ck_assert_uint_eq(count_of(&s, "pread64"), 1000);
    summary_clear(&s);
}
END_TEST

/* gzip: ratio 3 gives read, read, write, read, write (input 32 KiB per
 * read, a 16 KiB write per 48 KiB read); ratio 2 read, write, read, write. */
START_TEST(test_compute_rhythm)
{
    GenOptions o;
    opts(&o, 10, 1);
    g_autofree char *path = gen_file("compute", &o, "c.vmt");
    Summary s;
    summarize(path, &s, true);
    GString *seq = g_string_new(NULL);
    for (guint i = 0; i < s.evs->len; i++) {
        const TraceEvent *e = &g_array_index(s.evs, TraceEvent, i);
        if (e->kind == TRACE_EV_SYSCALL && strcmp(e->u.sys.name, "openat"))
            g_string_append_c(seq, e->u.sys.name[0]);
    }
    ck_assert_str_eq(seq->str, "rrwrwrrwrw");
    g_string_free(seq, TRUE);
    summary_clear(&s);
    char *p[] = {"ratio=2", NULL};
    o.params = p;
    g_autofree char *path2 = gen_file("compute", &o, "c2.vmt");
    summarize(path2, &s, false);
    ck_assert_uint_eq(count_of(&s, "read"), 5);
    ck_assert_uint_eq(count_of(&s, "write"), 5);
    summary_clear(&s);
}
END_TEST

/* PostgreSQL protocol 3.0 sizes worked by hand: "BEGIN;" as a Query is
 * 'Q' + int32 + 6 chars + NUL = 12; its reply CommandComplete "BEGIN" (11)
 * + ReadyForQuery (6) = 17; "END;" 10, reply "COMMIT" 12 + 6 = 18; UPDATE
 * replies 14 + 6 = 20; INSERT 16 + 6 = 22. */
START_TEST(test_db)
{
    GenOptions o;
    opts(&o, 20000, 5);
    g_autofree char *path = gen_file("db", &o, "db.vmt");
    Summary s;
    summarize(path, &s, true);
    ck_assert_uint_eq(g_hash_table_size(s.pids), 4);
    uint64_t waits = 0, wakes = 0, fsyncs = 0, sends[32] = {0};
    for (guint i = 0; i < s.evs->len; i++) {
        const TraceEvent *e = &g_array_index(s.evs, TraceEvent, i);
        if (e->kind != TRACE_EV_SYSCALL)
            continue;
        const TraceSyscall *y = &e->u.sys;
        if (!strcmp(y->name, "futex")) {
            bool wait = !strcmp(y->op, "FUTEX_WAIT");
            waits += wait, wakes += !wait;
            ck_assert(y->blocked == wait);
            ck_assert_uint_eq(y->in, wait ? 4 : 0);
        } else if (!strcmp(y->name, "fsync")) {
            fsyncs++;
            ck_assert(y->blocked);
        } else if (!strcmp(y->name, "pread64") || !strcmp(y->name, "pwrite64")) {
            ck_assert_int_eq(y->ret, 8192);
            ck_assert_uint_eq(y->in + y->out, 8192);
        } else if (!strcmp(y->name, "recvfrom")) {
            ck_assert(y->blocked);
            ck_assert_uint_eq(y->out, (uint64_t)y->ret);
        } else if (!strcmp(y->name, "sendto") && y->ret < 32) {
            sends[y->ret]++;
        }
        /* a blocked call hands the CPU over (4 backends) */
        if (y->blocked && i + 1 < s.evs->len)
            ck_assert_uint_eq(g_array_index(s.evs, TraceEvent, i + 1).kind, TRACE_EV_SWITCH);
    }
    /* Every wait gets its wake, except waits still pending at the end. */
    ck_assert_uint_gt(waits, 0);
    ck_assert_uint_le(wakes, waits);
    ck_assert_uint_le(waits - wakes, 3);
    /* 7 statements per transaction, one fsync each commit. */
    uint64_t txns = count_of(&s, "fsync");
    ck_assert_uint_eq(fsyncs, txns);
    ck_assert_uint_ge(sends[17], txns);       /* BEGIN replies */
    ck_assert_uint_le(sends[17], txns + 4);
    ck_assert_uint_ge(sends[20], 3 * txns);   /* three UPDATEs */
    ck_assert_uint_ge(sends[22], txns);       /* INSERT */
    ck_assert_uint_ge(sends[18], txns - 4);   /* COMMIT (some may not have sent yet) */
    /* every statement is a recvfrom then a sendto */
    ck_assert_uint_ge(count_of(&s, "recvfrom"), count_of(&s, "sendto"));
    ck_assert_uint_le(count_of(&s, "recvfrom") - count_of(&s, "sendto"), 4);
    summary_clear(&s);

    /* One backend: no lock contention, no switches. */
    char *p[] = {"procs=1", NULL};
    o.params = p;
    g_autofree char *path1 = gen_file("db", &o, "db1.vmt");
    summarize(path1, &s, false);
    ck_assert_uint_eq(count_of(&s, "futex"), 0);
    ck_assert_uint_eq(s.switches, 0);
    ck_assert_uint_eq(g_hash_table_size(s.pids), 1);
    summary_clear(&s);
}
END_TEST

/* net: sendfile64 sizes are SPECweb99 files, k x 10^c x 1024 / 10 bytes
 * (k 1-9, class c 0-3); class 3 (>= 102 400 bytes) is about 1 %. */
START_TEST(test_net)
{
    GenOptions o;
    opts(&o, 40000, 9);
    char *p[] = {"not-modified-pct=0", NULL};
    o.params = p;
    g_autofree char *path = gen_file("net", &o, "net.vmt");
    Summary s;
    summarize(path, &s, true);
    ck_assert_uint_eq(count_of(&s, "epoll_wait"), 10000);
    ck_assert_uint_eq(count_of(&s, "sendto"), 0);
    uint64_t files = 0, big = 0, small = 0;
    for (guint i = 0; i < s.evs->len; i++) {
        const TraceEvent *e = &g_array_index(s.evs, TraceEvent, i);
        if (e->kind != TRACE_EV_SYSCALL || strcmp(e->u.sys.name, "sendfile64"))
            continue;
        uint64_t n = (uint64_t)e->u.sys.ret, c = 1;
        bool ok = false;
        for (unsigned cls = 0; cls < 4; cls++, c *= 10)
            for (unsigned k = 1; k <= 9; k++)
                ok |= n == k * c * 1024 / 10;
        ck_assert_msg(ok, "sendfile64 of %" G_GUINT64_FORMAT " bytes", n);
        ck_assert_uint_eq(e->u.sys.in, 8);
        files++, big += n >= 102400, small += n < 1024;
    }
    ck_assert_uint_eq(files, 10000);
    /* 1 % and 35 %, within 5 sigma of a binomial over 10 000 draws. */
    ck_assert_int_le(ABS((int)big - 100), 50);
    ck_assert_int_le(ABS((int)small - 3500), 239);
    summary_clear(&s);
}
END_TEST

/* ---- the command line ---- */

static int run_cli(const char *const *args, char **out, char **err)
{
    GSubprocessLauncher *l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                       G_SUBPROCESS_FLAGS_STDERR_PIPE);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)vmsplit_exe);
    g_ptr_array_add(argv, (gpointer) "gen");
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

static const struct { const char *args[8]; const char *message; } bad_cli[] = {
    {{NULL}, "expected a generator NAME"},
    {{"frob", NULL}, "unknown generator 'frob'"},
    {{"null", "--count", "0", NULL}, "--count: expected"},
    {{"null", "--count", "12x", NULL}, "--count: expected"},
    {{"null", "--rate", "1000", "--user-insns", "5", NULL}, "both given"},
    {{"null", "--rate", "-3", NULL}, "--rate: expected a positive number"},
    {{"null", "--clock-mhz", "0", "--rate", "5", NULL}, "--clock-mhz: expected"},
    {{"null", "--pages", "0", NULL}, "--pages: expected"},
    {{"null", "--pattern", "zigzag", NULL}, "--pattern: expected seq, rand or hot"},
    {{"null", "--param", "bytes=2", NULL}, "a parameter of 'null' (none)"},
    {{"fileio", "--param", "read-pct=150", NULL}, "--param read-pct: expected a number from 0 to 100"},
    {{"db", "--param", "procs=2.5", NULL}, "--param procs: expected a whole number"},
    {{"db", "-p", "frob", NULL}, "expected KEY=VALUE"},
    {{"null", "-o", "/nonexistent/dir/x.vmt", NULL}, "/nonexistent/dir/x.vmt"},
    {{"null", "--count", "50", "--rate", "50000000", NULL}, "out of reach for null on p4-northwood"},
    {{"null", "--cpu", "core2", NULL}, "expected --rate without --clock-mhz"},
    {{"null", "--rate", "1000", "--cpu", "nosuchcpu", NULL}, "nosuchcpu"},
};

/* --rate R is realised: every generator, solved on two CPUs, replayed
 * from the written trace under 3g1g, makes R syscalls per simulated
 * second within 5 % (the promise; the solver aims at 0.5 %). The target
 * is the expectation; the replay that checks it is independent of the
 * solver's own last replay (a fresh trace file, a fresh machine). */
static const char *const rate_cpus[] = {"p4-northwood", "core2"};

START_TEST(test_rate_realised)
{
    const char *name = gens[_i / 2].name, *cpu = rate_cpus[_i % 2];
    GError *err = NULL;
    Preset *p = preset_load(cpu, &err);
    ck_assert_msg(p, "%s", err ? err->message : "");
    GenOptions o;
    opts(&o, 300, 1);
    GenRateTarget t = { .rate = 10000, .preset = p };
    GenRateResult res;
    ck_assert_msg(gen_rate_solve(gen_find(name), &o, &t, &res, &err), "%s on %s: %s", name, cpu,
                  err ? err->message : "");
    o.have_user_insns = true;
    o.user_insns = res.user_insns;
    g_autofree char *path = gen_file(name, &o, "rate.vmt");
    double rate, k, c;
    uint64_t n, u;
    ck_assert(gen_rate_measure(path, p, false, PAGING_PAE, &rate, &k, &c, &n, &u, &err));
    ck_assert_msg(fabs(rate / 10000 - 1) < 0.05, "%s on %s: %.1f syscalls/s for --rate 10000",
                  name, cpu, rate);
    /* Not the nominal conversion: the kernel's share of 1/R leaves less
     * than clock / R user instructions per syscall. */
    ck_assert_uint_lt(res.user_insns, (uint64_t)(p->clock_mhz * 1e6 / 10000));
    preset_free(p);
}
END_TEST

START_TEST(test_cli_bad)
{
    ck_assert_msg(vmsplit_exe, "usage: test-gen PATH-TO-VMSPLIT");
    char *o = NULL, *e = NULL;
    ck_assert_int_eq(run_cli(bad_cli[_i].args, &o, &e), 2);
    ck_assert_msg(strstr(e, bad_cli[_i].message), "got: %s", e);
    g_free(o), g_free(e);
}
END_TEST

START_TEST(test_cli_good)
{
    ck_assert_msg(vmsplit_exe, "usage: test-gen PATH-TO-VMSPLIT");
    char *o = NULL, *e = NULL;
    const char *args[] = {"pipe", "--count", "8", "--seed", "3", "--user-insns", "100", NULL};
    ck_assert_int_eq(run_cli(args, &o, &e), 0);
    GenOptions opt;
    opts(&opt, 8, 3);
    opt.have_user_insns = true;
    opt.user_insns = 100;
    g_autofree char *path = gen_file("pipe", &opt, "p.vmt");
    g_autofree char *want = test_slurp(path);
    ck_assert_str_eq(o, want);
    ck_assert(strstr(o, "@source gen:pipe\n"));
    g_free(o), g_free(e);
    const char *help[] = {"--help", NULL};
    ck_assert_int_eq(run_cli(help, &o, &e), 0);
    for (const Generator *const *g = gen_registry; *g; g++)
        ck_assert_msg(strstr(o, (*g)->summary), "--help lacks %s", (*g)->name);
    ck_assert(strstr(o, "lat_syscall null"));
    g_free(o), g_free(e);
}
END_TEST

static void setup(void) { tmpdir = test_tmpdir_new(); }
static void teardown(void) { test_tmpdir_free(tmpdir); }

int main(int argc, char **argv)
{
    vmsplit_exe = argc > 1 ? argv[1] : NULL;
    Suite *s = suite_create("gen");
    TCase *tc = tcase_create("gen");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_deterministic, 0, G_N_ELEMENTS(gens));
    tcase_add_loop_test(tc, test_reads_back, 0, G_N_ELEMENTS(gens));
    tcase_add_test(tc, test_null_count);
    tcase_add_test(tc, test_pipe_alternates);
    tcase_add_loop_test(tc, test_user_work, 0, G_N_ELEMENTS(user_cases));
    tcase_add_test(tc, test_no_user_work);
    tcase_add_test(tc, test_fileio);
    tcase_add_test(tc, test_compute_rhythm);
    tcase_add_test(tc, test_db);
    tcase_add_test(tc, test_net);
    tcase_add_loop_test(tc, test_cli_bad, 0, G_N_ELEMENTS(bad_cli));
    tcase_add_test(tc, test_cli_good);
    tcase_add_loop_test(tc, test_rate_realised, 0, 2 * G_N_ELEMENTS(gens));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
