/* End to end: `vmsplit sweep`, `merge` and `plot` run as a user runs them
 * (the built binary, path in argv[1]). A real kill (SIGKILL in the middle
 * of a tlbsim sweep over the bundled Lackey trace), a torn last line, then
 * a resume must give the uninterrupted run's CSV; -j 1 and -j 2 agree;
 * shards merged equal the unsharded run; bad input exits 2 with a message
 * naming what is wrong. The lowmem rows are checked against arithmetic
 * from the sources (REFERENCES.md), not against the model's own output. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *exe;
static char *tmpdir;

static void setup(void)
{
    tmpdir = g_dir_make_tmp("vmsplit-sweepcli-XXXXXX", NULL);
    ck_assert(tmpdir);
}

static void teardown(void)
{
    GDir *d = g_dir_open(tmpdir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
        char *p = g_build_filename(tmpdir, n, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(tmpdir);
    g_free(tmpdir);
}

static char *tpath(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

static char *trace(void)
{
    return g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "workloads", "memtraces",
                            "qsortwords.lackey.gz", NULL);
}

/* Run vmsplit with args (NULL-terminated); returns the exit status and
 * stderr in *err_out (may be NULL). */
static int run(char **err_out, const char *first, ...)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)exe);
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    char *errs = NULL;
    int status = -1;
    GError *e = NULL;
    ck_assert_msg(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                               NULL, NULL, NULL, &errs, &status, &e),
                  "%s", e ? e->message : "");
    g_ptr_array_unref(argv);
    if (err_out)
        *err_out = errs;
    else
        g_free(errs);
    ck_assert_msg(WIFEXITED(status), "vmsplit died (signal %d)", WTERMSIG(status));
    return WEXITSTATUS(status);
}

static char *slurp(const char *p)
{
    char *s = NULL;
    ck_assert_msg(g_file_get_contents(p, &s, NULL, NULL), "cannot read %s", p);
    return s;
}

/* The records (OUT.meta.json) of two CSVs are the same bytes. */
static void assert_same_record(const char *csv_a, const char *csv_b)
{
    char *ma = g_strconcat(csv_a, ".meta.json", NULL), *mb = g_strconcat(csv_b, ".meta.json", NULL);
    char *a = slurp(ma), *b = slurp(mb);
    ck_assert_str_eq(a, b);
    g_free(a);
    g_free(b);
    g_free(ma);
    g_free(mb);
}

static guint lines(const char *s)
{
    guint n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

#define TLB_ARGS "sweep", "--kind", "tlbsim", "--dtlb-entries", "8,16,32,64", \
                 "--policy", "lru,fifo", "--flush-every", "0,20000", "--max-refs", "150000", "-q"

START_TEST(test_kill_and_resume)
{
    char *tr = trace(), *full = tpath("full.csv"), *killed = tpath("killed.csv");
    ck_assert_int_eq(run(NULL, TLB_ARGS, "-j", "2", "-o", full, tr, NULL), 0);
    char *want = slurp(full);
    ck_assert_uint_eq(lines(want), 1 + 16);

    /* The same sweep, killed (SIGKILL: no chance to clean up) once its
     * first rows are on disk. */
    const char *argv[] = {exe, TLB_ARGS, "-j", "2", "-o", killed, tr, NULL};
    GPid pid;
    GError *e = NULL;
    ck_assert(g_spawn_async(NULL, (char **)argv, NULL,
                            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                            &pid, &e));
    guint rows = 0;
    for (int i = 0; i < 20000 && rows < 3; i++) {
        char *s = NULL;
        if (g_file_get_contents(killed, &s, NULL, NULL))
            rows = lines(s) >= 1 ? lines(s) - 1 : 0;
        g_free(s);
        g_usleep(500);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    g_spawn_close_pid(pid);
    char *part = slurp(killed);
    guint kept = lines(part) - 1;
    if (WIFSIGNALED(status))
        ck_assert_msg(kept < 16, "killed, yet all rows are there");
    /* And tear its last line, as a kill inside write() would. */
    gsize len = strlen(part);
    ck_assert(len > 10);
    ck_assert(truncate(killed, (off_t)(len - 7)) == 0);

    char *msg = NULL;
    ck_assert_int_eq(run(&msg, TLB_ARGS, "-j", "1", "-o", killed, tr, NULL), 0);
    g_free(msg);
    char *got = slurp(killed);
    ck_assert_str_eq(got, want);
    g_free(got);
    assert_same_record(full, killed);
    g_free(part);
    g_free(want);
    g_free(killed);
    g_free(full);
    g_free(tr);
}
END_TEST

START_TEST(test_shards_merge)
{
    char *tr = trace(), *full = tpath("full.csv");
    ck_assert_int_eq(run(NULL, TLB_ARGS, "-j", "1", "-o", full, tr, NULL), 0);
    char *p[3];
    for (int k = 0; k < 3; k++) {
        char *name = g_strdup_printf("part%d.csv", k + 1), *spec = g_strdup_printf("%d/3", k + 1);
        p[k] = tpath(name);
        ck_assert_int_eq(run(NULL, TLB_ARGS, "--shard", spec, "-o", p[k], tr, NULL), 0);
        g_free(name);
        g_free(spec);
    }
    char *merged = tpath("merged.csv");
    ck_assert_int_eq(run(NULL, "merge", p[2], p[0], p[1], "-o", merged, NULL), 0);
    char *a = slurp(full), *b = slurp(merged);
    ck_assert_str_eq(a, b);
    g_free(a);
    g_free(b);
    assert_same_record(full, merged);
    char *err = NULL;
    ck_assert_int_eq(run(&err, "merge", p[0], p[1], "-o", merged, NULL), 2);
    ck_assert_msg(strstr(err, "points are missing") && strstr(err, "3/3"), "%s", err);
    g_free(err);
    ck_assert_int_eq(run(&err, "merge", p[0], p[1], p[2], p[1], "-o", merged, NULL), 2);
    ck_assert_msg(strstr(err, "part2.csv:2: point (") && strstr(err, "is doubled"), "%s", err);
    g_free(err);
    for (int k = 0; k < 3; k++)
        g_free(p[k]);
    g_free(merged);
    g_free(full);
    g_free(tr);
}
END_TEST

/* Value of column col in the row whose first three fields are key. */
static char *field(const char *csv, const char *key, const char *col)
{
    char **ls = g_strsplit(csv, "\n", -1);
    char **head = g_strsplit(ls[0], ",", -1);
    int c = -1;
    for (int i = 0; head[i]; i++)
        if (!strcmp(head[i], col))
            c = i;
    ck_assert_msg(c >= 0, "no column %s", col);
    char *v = NULL;
    for (int i = 1; ls[i] && !v; i++)
        if (g_str_has_prefix(ls[i], key) && ls[i][strlen(key)] == ',') {
            char **f = g_strsplit(ls[i], ",", -1);
            v = g_strdup(f[c]);
            g_strfreev(f);
        }
    ck_assert_msg(v, "no row %s", key);
    g_strfreev(head);
    g_strfreev(ls);
    return v;
}

START_TEST(test_lowmem_sweep)
{
    char *a = tpath("a.csv"), *b = tpath("b.csv");
    ck_assert_int_eq(run(NULL, "sweep", "--kind", "lowmem", "--layouts", "3g1g,4g4g",
                         "--ram", "512M,1G,16G,64G", "--struct-page", "32,40", "-j", "1",
                         "-o", a, NULL), 0);
    ck_assert_int_eq(run(NULL, "sweep", "--kind=lowmem", "--layouts", "3g1g,4g4g",
                         "--ram", "512M,1024M,16G,65536M", "--struct-page", "32", "--struct-page",
                         "40", "-j", "2", "-o", b, NULL), 0);
    char *sa = slurp(a), *sb = slurp(b);
    ck_assert_str_eq(sa, sb);  /* -j and the spelling of sizes do not matter */
    /* Exactly one header row, the first line, and no comment line: what
     * any CSV reader expects. The definition is in the record beside it. */
    ck_assert(g_str_has_prefix(sa, "layout,struct_page,ram_mib,mem_total_kb,"));
    ck_assert_uint_eq(lines(sa), 1 + 16);
    ck_assert(!strstr(sa, "\n#") && !strstr(sa, "\nlayout,"));
    assert_same_record(a, b);
    char *ma = g_strconcat(a, ".meta.json", NULL);
    JsonParser *jp = json_parser_new();
    ck_assert(json_parser_load_from_file(jp, ma, NULL));
    JsonObject *rec = json_node_get_object(json_parser_get_root(jp));
    ck_assert_str_eq(json_object_get_string_member(rec, "schema"), "vmsplit.sweep-meta/1");
    ck_assert_str_eq(json_object_get_string_member(rec, "kind"), "lowmem");
    JsonObject *params = json_object_get_object_member(rec, "parameters");
    JsonArray *ram = json_object_get_array_member(params, "ram_mib");
    static const char *const want_ram[] = {"512", "1024", "16384", "65536"};
    ck_assert_uint_eq(json_array_get_length(ram), 4);
    for (guint i = 0; i < 4; i++)
        ck_assert_str_eq(json_array_get_string_element(ram, i), want_ram[i]);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(params, "layout")), 2);
    g_object_unref(jp);
    g_free(ma);
    /* mem_map: one struct page per 4 KiB frame; at 64 GiB (the PAE limit,
     * no frame above it) 16 Mi frames: 640 MiB at 40 B (LWN, "some 640
     * megabytes"), 512 MiB at 32 B (OLS 2004 slide). */
    char *v = field(sa, "3g1g,40,65536", "mem_map_kb");
    ck_assert_str_eq(v, "655360");
    g_free(v);
    v = field(sa, "4g4g,32,65536", "mem_map_kb");
    ck_assert_str_eq(v, "524288");
    g_free(v);
    /* 3G/1G maps at most 896 MiB directly (MAXMEM); 512 MiB has no highmem. */
    v = field(sa, "3g1g,40,512", "lowmem_limit_mib");
    ck_assert_str_eq(v, "896");
    g_free(v);
    v = field(sa, "3g1g,40,512", "high_total_kb");
    ck_assert_str_eq(v, "0");
    g_free(v);
    /* The mail: 4G/4G still boots with 64 GB. */
    v = field(sa, "4g4g,40,65536", "boots");
    ck_assert_str_eq(v, "1");
    g_free(v);
    /* Plot it, both formats. */
    char *img = tpath("lowmem");
    ck_assert_int_eq(run(NULL, "plot", a, "-o", img, NULL), 0);
    char *png = g_strconcat(img, ".png", NULL), *svg = g_strconcat(img, ".svg", NULL);
    char *s = slurp(png);
    ck_assert(memcmp(s, "\x89PNG\r\n\x1a\n", 8) == 0);
    g_free(s);
    s = slurp(svg);
    ck_assert(g_str_has_prefix(s, "<?xml") || g_str_has_prefix(s, "<svg"));
    g_free(s);
    g_free(png);
    g_free(svg);
    g_free(img);
    g_free(sa);
    g_free(sb);
    g_free(a);
    g_free(b);
}
END_TEST

START_TEST(test_tlbsim_figures)
{
    /* One point over the whole bundled trace: the reference counts are
     * those of workloads/memtraces/README.md (counted there with grep),
     * and --flush-every 20000 writes CR3 once per 20000 references. */
    char *tr = trace(), *out = tpath("t.csv");
    ck_assert_int_eq(run(NULL, "sweep", "--kind", "tlbsim", "--flush-every", "20000", "-q",
                         "-o", out, tr, NULL), 0);
    char *s = slurp(out);
    ck_assert_uint_eq(lines(s), 2);
    char *key = g_strconcat(tr, ",p4-northwood,preset,20000", NULL);
    static const struct {
        const char *col, *want;
    } w[] = {
        {"fetches", "931474"}, {"loads", "291314"}, {"stores", "269345"},
        {"modifies", "6138"}, {"refs", "1498271"}, {"cr3_writes", "74"},
        {"dtlb_entries", "0"}, {"max_refs", "0"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(w); i++) {
        char *v = field(s, key, w[i].col);
        ck_assert_msg(!strcmp(v, w[i].want), "%s = %s, expected %s", w[i].col, v, w[i].want);
        g_free(v);
    }
    g_free(key);
    g_free(s);
    g_free(out);
    g_free(tr);
}
END_TEST

START_TEST(test_bad_input)
{
    char *out = tpath("x.csv"), *err = NULL;
    static const struct {
        const char *args[10];
        const char *expect;
    } cases[] = {
        {{"sweep", "--kind", "pie", NULL}, "unknown sweep kind 'pie'"},
        {{"sweep", "--layouts", "3g1g", NULL}, "expected --kind"},
        {{"sweep", "--kind", "lowmem", "--ram", "1Q", "-o", NULL}, "--ram: expected a size"},
        {{"sweep", "--kind", "lowmem", "--ram", "1G", "--shard", "5/4", "-o", NULL}, "--shard"},
        {{"sweep", "--kind", "lowmem", "--layouts", "5g5g", "--ram", "1G", "-o", NULL}, "5g5g"},
        {{"sweep", "--kind", "lowmem", "--dtlb-entries", "16", "-o", NULL}, "dtlb-entries"},
        {{"sweep", "--kind", "lowmem", "-o", NULL}, "needs --ram"},
        {{"sweep", "--kind", "lowmem", "--ram", "1G", NULL}, "expected -o"},
        {{"sweep", "--kind", "tlbsim", "-o", NULL}, "needs at least one input file"},
        {{"sweep", "--kind", "tlbsim", "/nonexistent.lackey", "-o", NULL}, "/nonexistent.lackey"},
        {{"merge", "-o", NULL}, "expected SHARD.csv"},
        {{"plot", NULL}, "expected one CSV"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *a[12] = {NULL};
        size_t n = 0;
        for (; cases[i].args[n]; n++)
            a[n] = cases[i].args[n];
        if (n && !strcmp(a[n - 1], "-o"))
            a[n++] = out;
        ck_assert_int_eq(run(&err, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], NULL), 2);
        ck_assert_msg(strstr(err, cases[i].expect), "case %zu: %s", i, err);
        g_free(err);
    }
    /* A CSV with missing columns. */
    ck_assert(g_file_set_contents(out, "layout,syscalls_per_sec\n4g4g,100\n", -1, NULL));
    char *png = tpath("x.png");
    ck_assert_int_eq(run(&err, "plot", "--kind", "overhead", out, "-o", png, NULL), 2);
    ck_assert_msg(strstr(err, "x.csv:1: missing column(s) overhead_pct"), "%s", err);
    g_free(err);
    /* Resuming into a file from another sweep. */
    ck_assert_int_eq(run(NULL, "sweep", "--kind", "lowmem", "--ram", "1G", "-o", out, "-q", NULL), 2);
    g_unlink(out);
    ck_assert_int_eq(run(NULL, "sweep", "--kind", "lowmem", "--ram", "1G", "-o", out, "-q", NULL), 0);
    ck_assert_int_eq(run(&err, "sweep", "--kind", "lowmem", "--ram", "2G", "-o", out, NULL), 2);
    ck_assert_msg(strstr(err, "this CSV holds another sweep"), "%s", err);
    g_free(err);
    g_free(png);
    g_free(out);
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("sweep-cli");
    TCase *tc = tcase_create("sweep-cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kill_and_resume);
    tcase_add_test(tc, test_shards_merge);
    tcase_add_test(tc, test_lowmem_sweep);
    tcase_add_test(tc, test_tlbsim_figures);
    tcase_add_test(tc, test_bad_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-VMSPLIT\n", argv[0]);
        return 2;
    }
    exe = argv[1];
    SRunner *sr = srunner_create(cli_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
