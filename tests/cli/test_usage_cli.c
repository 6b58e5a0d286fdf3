/* The CLI's own conventions, end to end (the binary is argv[1]):
 * `vmsplit help CMD` is CMD's --help for every command the top-level help
 * lists, each usage line names "vmsplit CMD", an unknown command is exit 2;
 * numeric and name arguments out of their domain are exit 2 with a message
 * that says what was expected. */
#include <check.h>

#include "report/csv.h"
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *vmsplit;

/* argv after the binary; status, stdout and stderr. */
static int run(const char *const *args, char **out, char **err)
{
    GPtrArray *a = g_ptr_array_new();
    g_ptr_array_add(a, (char *)vmsplit);
    for (; *args; args++)
        g_ptr_array_add(a, (char *)*args);
    g_ptr_array_add(a, NULL);
    int status = -1;
    ck_assert(g_spawn_sync(NULL, (char **)a->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, NULL));
    g_ptr_array_free(a, TRUE);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The command names of the top-level help: the lines after "Commands:"
 * that start with two blanks, up to the first blank line. */
static GPtrArray *command_names(void)
{
    const char *args[] = {"--help", NULL};
    char *out, *err;
    ck_assert_int_eq(run(args, &out, &err), 0);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    char **lines = g_strsplit(out, "\n", -1);
    bool in = false;
    for (char **l = lines; *l; l++) {
        if (!strcmp(*l, "Commands:")) {
            in = true;
            continue;
        }
        if (in && !**l)
            break;
        if (in && g_str_has_prefix(*l, "  ")) {
            char **w = g_strsplit_set(g_strstrip(*l), " ", 2);
            g_ptr_array_add(names, g_strdup(w[0]));
            g_strfreev(w);
        }
    }
    g_strfreev(lines);
    g_free(out);
    g_free(err);
    return names;
}

START_TEST(help_command_is_its_help)
{
    GPtrArray *names = command_names();
    ck_assert_uint_ge(names->len, 14);
    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        const char *a1[] = {"help", name, NULL}, *a2[] = {name, "--help", NULL};
        char *o1, *e1, *o2, *e2;
        ck_assert_msg(run(a1, &o1, &e1) == 0, "vmsplit help %s: %s", name, e1);
        ck_assert_msg(run(a2, &o2, &e2) == 0, "vmsplit %s --help: %s", name, e2);
        ck_assert_str_eq(o1, o2);
        char *usage = g_strdup_printf("Usage:\n  vmsplit %s ", name);
        ck_assert_msg(g_str_has_prefix(o1, usage), "vmsplit help %s starts '%.40s'", name, o1);
        g_free(usage);
        g_free(o1), g_free(e1), g_free(o2), g_free(e2);
    }
    g_ptr_array_unref(names);
    const char *bad[] = {"help", "nosuchcommand", NULL};
    char *out, *err;
    ck_assert_int_eq(run(bad, &out, &err), 2);
    ck_assert(strstr(err, "unknown command 'nosuchcommand'"));
    g_free(out), g_free(err);
}
END_TEST

/* docs/options.md's table: long name -> letter ("" for none). */
static GHashTable *options_table(void)
{
    char *path = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "docs", "options.md", NULL);
    char *text = NULL;
    ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    GHashTable *letters = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        if (!g_str_has_prefix(*l, "| `--"))
            continue;
        char **cells = g_strsplit(*l, "|", -1);
        ck_assert_msg(g_strv_length(cells) >= 6, "options.md: short row '%s'", *l);
        char *name = g_strstrip(g_strdup(cells[1])), *letter = g_strstrip(g_strdup(cells[2]));
        /* "`--cpu`" -> "cpu", "`-c`" -> "c" */
        char *n = g_strndup(name + 3, strlen(name) - 4);
        char *c = *letter ? g_strndup(letter + 2, strlen(letter) - 3) : g_strdup("");
        ck_assert_msg(!g_hash_table_contains(t, n), "options.md lists --%s twice", n);
        if (*c) {
            /* One letter, one option; a plural is the same option
             * (--layout in one command, --layouts in another: -l). */
            const char *other = g_hash_table_lookup(letters, c);
            char *plural = other ? g_strconcat(other, "s", NULL) : NULL;
            ck_assert_msg(!other || !strcmp(plural, n), "options.md gives -%s to --%s and --%s",
                          c, other, n);
            g_free(plural);
            g_hash_table_insert(letters, g_strdup(c), g_strdup(n));
        }
        g_hash_table_insert(t, n, c);
        g_free(name), g_free(letter);
        g_strfreev(cells);
    }
    g_strfreev(lines);
    g_hash_table_unref(letters);
    g_free(text);
    g_free(path);
    ck_assert_uint_gt(g_hash_table_size(t), 40);
    return t;
}

/* Every option of every command (its --help: "  -x, --name=ARG  text" or
 * "  --name ..."; sweep's per-kind parameters "    --name  text", which
 * have no letters) is in the table with the table's letter. */
START_TEST(one_vocabulary)
{
    GHashTable *table = options_table();
    GPtrArray *names = command_names();
    GRegex *re = g_regex_new("^  ( *)(-([a-zA-Z]), )?--([a-z0-9-]+)", 0, 0, NULL);
    unsigned seen = 0;
    for (guint i = 0; i < names->len; i++) {
        const char *cmd = names->pdata[i];
        const char *a[] = {cmd, "--help", NULL};
        char *out, *err;
        ck_assert_int_eq(run(a, &out, &err), 0);
        char **lines = g_strsplit(out, "\n", -1);
        bool in_options = false;
        for (char **l = lines; *l; l++) {
            /* Option lists end where the description starts (the first
             * line that is not indented); sweep lists its kinds' params in
             * its description, indented, after "--kind KIND:" lines. */
            if (g_str_has_suffix(*l, "Options:"))
                in_options = true;
            else if (!**l)
                in_options = false;
            GMatchInfo *m = NULL;
            if ((in_options || !strcmp(cmd, "sweep")) && g_regex_match(re, *l, 0, &m)) {
                char *indent = g_match_info_fetch(m, 1), *letter = g_match_info_fetch(m, 3);
                char *name = g_match_info_fetch(m, 4);
                /* sweep's "  --kind NAME: ..." lines head a kind's list */
                bool kind_head = !strcmp(cmd, "sweep") && g_str_has_prefix(*l, "  --kind ");
                if (strcmp(name, "help") && !kind_head) {
                    const char *want = g_hash_table_lookup(table, name);
                    ck_assert_msg(want, "vmsplit %s --%s is not in docs/options.md", cmd, name);
                    if (!*indent)   /* sweep's kind params have no letters */
                        ck_assert_msg(!strcmp(letter ? letter : "", want),
                                      "vmsplit %s: --%s has letter '%s', docs/options.md '%s'",
                                      cmd, name, letter ? letter : "", want);
                    seen++;
                }
                g_free(indent), g_free(letter), g_free(name);
            }
            g_match_info_free(m);
        }
        g_strfreev(lines);
        g_free(out), g_free(err);
    }
    ck_assert_uint_gt(seen, 100);
    g_regex_unref(re);
    g_ptr_array_unref(names);
    g_hash_table_unref(table);
}
END_TEST

/* The man page documents every option of every command: a ".SS CMD"
 * subsection per command holding each "--name" of its --help (regenerate
 * with scripts/man-options). */
START_TEST(man_page_complete)
{
    char *path = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "docs", "vmsplit.1", NULL);
    char *man = NULL;
    ck_assert(g_file_get_contents(path, &man, NULL, NULL));
    GPtrArray *names = command_names();
    GRegex *re = g_regex_new("^  (-[a-zA-Z], )?--([a-z0-9-]+)", 0, 0, NULL);
    for (guint i = 0; i < names->len; i++) {
        const char *cmd = names->pdata[i];
        char *head = g_strdup_printf("\n.SS %s\n", cmd);
        const char *sec = strstr(man, head);
        ck_assert_msg(sec, "docs/vmsplit.1 has no '.SS %s' (run scripts/man-options)", cmd);
        sec += strlen(head);
        const char *end = strstr(sec, "\n.S");
        char *body = end ? g_strndup(sec, (gsize)(end - sec)) : g_strdup(sec);
        const char *a[] = {cmd, "--help", NULL};
        char *out, *err;
        ck_assert_int_eq(run(a, &out, &err), 0);
        char **lines = g_strsplit(out, "\n", -1);
        bool in_options = false;
        for (char **l = lines; *l; l++) {
            if (g_str_has_suffix(*l, "Options:"))
                in_options = true;
            else if (!**l)
                in_options = false;
            GMatchInfo *m = NULL;
            if (in_options && g_regex_match(re, *l, 0, &m)) {
                char *name = g_match_info_fetch(m, 2);
                GString *want = g_string_new("\\-\\-");
                for (const char *c = name; *c; c++)
                    *c == '-' ? g_string_append(want, "\\-") : g_string_append_c(want, *c);
                if (strcmp(name, "help"))
                    ck_assert_msg(strstr(body, want->str), "docs/vmsplit.1, .SS %s: no --%s "
                                  "(run scripts/man-options)", cmd, name);
                g_string_free(want, TRUE);
                g_free(name);
            }
            g_match_info_free(m);
        }
        g_strfreev(lines);
        g_free(out), g_free(err), g_free(body), g_free(head);
    }
    g_regex_unref(re);
    g_ptr_array_unref(names);
    g_free(man);
    g_free(path);
}
END_TEST

START_TEST(bad_arguments_are_exit_2)
{
    char *src = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "workloads", "guest",
                                 "hello.asm", NULL);
    const char *neg[] = {"run", "--max-insns", "-1", src, NULL};
    char *out, *err;
    ck_assert_int_eq(run(neg, &out, &err), 2);
    ck_assert_msg(strstr(err, "--max-insns") && strstr(err, "'-1'"), "%s", err);
    g_free(out), g_free(err);
    /* An unknown syscall name lists the known ones. */
    const char *sys[] = {"syscall", "--count", "5", "nosuchcall", NULL};
    ck_assert_int_eq(run(sys, &out, &err), 2);
    ck_assert_msg(strstr(err, "'nosuchcall'") && strstr(err, "getppid") && strstr(err, "read"),
                  "%s", err);
    g_free(out), g_free(err);
    g_free(src);
}
END_TEST

/* Garbage in is never success out: an empty file, a truncated gzip and a
 * file of the wrong kind, given to every command that reads one, are exit
 * 2 with a message that names the file. */
static char *tmp_file(const char *dir, const char *name, const void *data, gsize len)
{
    char *p = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(p, data, (gssize)len, NULL));
    return p;
}

/* text repeated n times, gzip-compressed, cut to half its length. */
static char *truncated_gzip(const char *dir, const char *name, const char *text, unsigned n)
{
    GString *plain = g_string_new(NULL);
    for (unsigned i = 0; i < n; i++)
        g_string_append(plain, text);
    GZlibCompressor *z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
    gsize cap = plain->len + 1024, got_in = 0, got_out = 0;
    char *buf = g_malloc(cap);
    GConverterResult r = g_converter_convert(G_CONVERTER(z), plain->str, plain->len, buf, cap,
                                             G_CONVERTER_INPUT_AT_END, &got_in, &got_out, NULL);
    ck_assert(r == G_CONVERTER_FINISHED);
    char *p = tmp_file(dir, name, buf, got_out / 2);
    g_object_unref(z);
    g_free(buf);
    g_string_free(plain, TRUE);
    return p;
}

START_TEST(bad_inputs_are_exit_2)
{
    char *dir = g_dir_make_tmp("vmsplit-bad-XXXXXX", NULL);
    char *empty = tmp_file(dir, "empty.vmt", "", 0);
    char *text = tmp_file(dir, "prose.txt", "hello world\nthis is not a trace\n", 31);
    char *tr_gz = truncated_gzip(dir, "cut.vmt.gz", "1 user 1000 4 hot\n1 sys getppid 0\n", 4000);
    char *lk_gz = truncated_gzip(dir, "cut.lackey.gz", "I  04000000,3\n L 05000000,4\n", 4000);
    char *st_gz = truncated_gzip(dir, "cut.strace.gz",
                                 "123 12:00:00.000000 getppid() = 1 <0.000010>\n", 4000);
    char *out = g_build_filename(dir, "out.png", NULL);
    struct { const char *args[10]; } cases[] = {
        {{"replay", empty}}, {{"replay", text}}, {{"replay", tr_gz}},
        {{"compare", empty}}, {{"compare", text}}, {{"compare", tr_gz}},
        {{"tlbsim", empty}}, {{"tlbsim", text}}, {{"tlbsim", lk_gz}}, {{"tlbsim", "--skip-bad", text}},
        {{"import-strace", empty}}, {{"import-strace", text}}, {{"import-strace", st_gz}},
        {{"walk", "--mem", empty, "--access", "read", "--cpl", "0", "0x1000"}},
        {{"walk", "--mem", text, "--access", "read", "--cpl", "0", "0x1000"}},
        {{"meminfo", "--e820", empty, "--layout", "3g1g"}},
        {{"meminfo", "--e820", text, "--layout", "3g1g"}},
        {{"plot", empty, "-o", out}}, {{"plot", text, "-o", out}},
        {{"presets", "show", text}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *o, *e;
        int st = run(cases[i].args, &o, &e);
        const char *file = NULL;
        for (const char *const *a = cases[i].args; *a; a++)
            if (!file && g_str_has_prefix(*a, dir))
                file = *a;
        ck_assert_msg(st == 2, "vmsplit %s %s: exit %d, stderr '%s'", cases[i].args[0], file, st, e);
        char *base = g_path_get_basename(file);
        ck_assert_msg(strstr(e, base), "vmsplit %s %s: stderr does not name the file: '%s'",
                      cases[i].args[0], file, e);
        g_free(base);
        g_free(o), g_free(e);
    }
    char *files[] = {empty, text, tr_gz, lk_gz, st_gz, out};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_remove(files[i]);
        g_free(files[i]);
    }
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

/* Results that cannot be written to standard output (a full disk, here
 * /dev/full: every write fails with ENOSPC) end in status 2 with a message,
 * never in status 0 with the results lost. Output to a file (-o) had that
 * check already; stdout had none. */
START_TEST(stdout_write_failure_is_exit_2)
{
    static const char *const cases[][6] = {
        {"meminfo", "--layout", "3g1g", "--ram", "1G", NULL},
        {"meminfo", "--layout", "3g1g", "--ram", "1G", "--json"},
        {"presets", NULL},
        {"--version", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GPtrArray *a = g_ptr_array_new();
        g_ptr_array_add(a, (char *)vmsplit);
        for (const char *const *w = cases[i]; *w && w < cases[i] + 6; w++)
            g_ptr_array_add(a, (char *)*w);
        g_ptr_array_add(a, NULL);
        /* stdout: /dev/full; stderr: a pipe we read */
        int full = open("/dev/full", O_WRONLY);
        ck_assert_int_ge(full, 0);
        int errp[2];
        ck_assert_int_eq(pipe(errp), 0);
        GPid pid;
        GError *e = NULL;
        ck_assert_msg(g_spawn_async_with_fds(NULL, (char **)a->pdata, NULL,
                                             G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, -1,
                                             full, errp[1], &e), "%s", e ? e->message : "");
        close(full);
        close(errp[1]);
        GString *err = g_string_new(NULL);
        char buf[512];
        ssize_t n;
        while ((n = read(errp[0], buf, sizeof buf)) > 0)
            g_string_append_len(err, buf, n);
        close(errp[0]);
        int status = 0;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        g_spawn_close_pid(pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2,
                      "vmsplit %s: status %d, stderr '%s'", cases[i][0], status, err->str);
        ck_assert_msg(strstr(err->str, "standard output"), "vmsplit %s: stderr '%s'",
                      cases[i][0], err->str);
        g_string_free(err, TRUE);
        g_ptr_array_free(a, TRUE);
    }
}
END_TEST

/* Every command that prints JSON prints one object that parses and names
 * its schema, "vmsplit.CMD/N". */
START_TEST(json_has_schema)
{
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    char *dir = g_dir_make_tmp("vmsplit-json-XXXXXX", NULL);
    char *tr = g_build_filename(dir, "null.vmt", NULL);
    const char *gen[] = {"gen", "null", "--count", "20", "-o", tr, NULL};
    char *o, *e;
    ck_assert_int_eq(run(gen, &o, &e), 0);
    g_free(o), g_free(e);
    char *lk = g_build_filename(src, "workloads", "memtraces", "qsortwords.lackey.gz", NULL);
    char *img = g_build_filename(src, "workloads", "images", "user-4k.img", NULL);
    char *asmf = g_build_filename(src, "workloads", "guest", "hello.asm", NULL);
    char *gtr = g_build_filename(dir, "gen.vmt", NULL), *scsv = g_build_filename(dir, "s.csv", NULL);
    char *cdir = g_build_filename(dir, "claim", NULL);
    struct { const char *cmd; const char *args[12]; } cases[] = {
        {"replay", {"replay", "--json", "--no-progress", tr}},
        {"compare", {"compare", "--json", "--no-progress", tr}},
        {"syscall", {"syscall", "--json", "--count", "5"}},
        {"tlbsim", {"tlbsim", "--json", "--max-refs", "2000", lk}},
        {"meminfo", {"meminfo", "--json", "--ram", "4G", "--layout", "3g1g"}},
        {"walk", {"walk", "--json", "--mem", img, "--access", "write", "--cpl", "3", "0x0804a123"}},
        {"run", {"run", "--json", asmf}},
        {"presets", {"presets", "show", "p4-northwood", "--json"}},
        {"gen", {"gen", "null", "--count", "10", "--json", "-o", gtr}},
        {"claim", {"claim", "--quick", "--json", "--no-plots", "-u", "0", "-o", cdir}},
        {"sweep", {"sweep", "--kind", "lowmem", "--layouts", "3g1g", "--ram", "1G", "-q",
                   "--json", "-o", scsv}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        int st = run(cases[i].args, &o, &e);
        ck_assert_msg(st == 0 || (st == 1 && !strcmp(cases[i].cmd, "walk")),
                      "vmsplit %s --json: exit %d: %s", cases[i].cmd, st, e);
        JsonParser *p = json_parser_new();
        GError *err = NULL;
        ck_assert_msg(json_parser_load_from_data(p, o, -1, &err), "vmsplit %s --json: %s",
                      cases[i].cmd, err ? err->message : "");
        JsonNode *root = json_parser_get_root(p);
        ck_assert_msg(JSON_NODE_HOLDS_OBJECT(root), "vmsplit %s --json: not an object",
                      cases[i].cmd);
        JsonObject *obj = json_node_get_object(root);
        char *want = g_strdup_printf("vmsplit.%s/", cases[i].cmd);
        ck_assert_msg(json_object_has_member(obj, "schema") &&
                      g_str_has_prefix(json_object_get_string_member(obj, "schema"), want),
                      "vmsplit %s --json: no schema '%s...'", cases[i].cmd, want);
        g_free(want);
        g_object_unref(p);
        g_free(o), g_free(e);
    }
    g_remove(tr), g_remove(gtr), g_remove(scsv);
    char *rm = g_strdup_printf("rm -rf '%s'", cdir);
    ck_assert_int_eq(system(rm), 0);
    g_free(rm), g_free(cdir);
    g_rmdir(dir);
    g_free(tr), g_free(dir), g_free(lk), g_free(img), g_free(asmf), g_free(gtr), g_free(scsv);
}
END_TEST

/* A unit (or the thing counted) in a column name: one of these tokens
 * between underscores. */
static bool has_unit(const char *col)
{
    static const char *const units[] = {
        "cycles", "us", "ns", "kb", "mib", "bytes", "mhz", "pct", "insns", "calls", "count",
        "walks", "writes", "dropped", "kmaps", "refs", "lines", "pages", "syscalls", NULL,
    };
    char **w = g_strsplit(col, "_", -1);
    bool ok = false;
    for (char **p = w; *p && !ok; p++)
        ok = g_strv_contains(units, *p);
    g_strfreev(w);
    return ok;
}

/* Every --csv: exactly one header row, every row as wide as it, and every
 * numeric column that is not a 0/1 flag names its unit. */
START_TEST(csv_one_header_units)
{
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    char *dir = g_dir_make_tmp("vmsplit-csv-XXXXXX", NULL);
    char *tr = g_build_filename(dir, "null.vmt", NULL);
    const char *gen[] = {"gen", "null", "--count", "20", "-o", tr, NULL};
    char *o, *e;
    ck_assert_int_eq(run(gen, &o, &e), 0);
    g_free(o), g_free(e);
    char *lk = g_build_filename(src, "workloads", "memtraces", "qsortwords.lackey.gz", NULL);
    char *g2 = g_build_filename(dir, "g2.vmt", NULL), *sw = g_build_filename(dir, "sw.csv", NULL);
    char *cl = g_build_filename(dir, "claim", NULL);
    struct { const char *cmd; bool units; const char *args[10]; } cases[] = {
        {"syscall", true, {"syscall", "--csv", "--count", "5"}},
        {"meminfo", true, {"meminfo", "--csv", "--ram", "64G", "--layout", "4g4g"}},
        {"replay", true, {"replay", "--csv", "--no-progress", tr}},
        {"compare", true, {"compare", "--csv", "--no-progress", "--layouts", "3g1g,4g4g,kpti", tr}},
        {"tlbsim", false, {"tlbsim", "--csv", "--max-refs", "2000", lk}},
        {"gen", true, {"gen", "null", "--count", "20", "--csv", "-o", g2}},
        {"sweep", true, {"sweep", "--kind", "lowmem", "--ram", "1G,2G", "--quiet", "--csv", "-o", sw}},
        /* claim: each row's interval is in the unit its interval_unit column names */
        {"claim", false, {"claim", "--quick", "--no-plots", "--uncertainty", "2", "--csv", "-o", cl}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        ck_assert_msg(run(cases[i].args, &o, &e) == 0, "vmsplit %s --csv: %s", cases[i].cmd, e);
        /* The project's strict reader: quoted fields, every record as wide
         * as the header (else an error naming the line). */
        GError *ce = NULL;
        CsvTable *t = csv_read_buffer(cases[i].cmd, o, strlen(o), CSV_READ_STRICT, &ce);
        ck_assert_msg(t, "vmsplit %s --csv: %s", cases[i].cmd, ce ? ce->message : "?");
        ck_assert_msg(t->rows->len >= 1, "vmsplit %s --csv: no row", cases[i].cmd);
        guint w = t->header->len;
        for (guint r = 0; r < t->rows->len; r++) {
            bool again = true;
            for (guint c = 0; c < w; c++)
                again = again && !strcmp(csv_table_get(t, r, c), g_ptr_array_index(t->header, c));
            ck_assert_msg(!again, "vmsplit %s --csv: header again in row %u", cases[i].cmd, r + 1);
            for (guint c = 0; cases[i].units && c < w; c++) {
                const char *f = csv_table_get(t, r, c), *head = g_ptr_array_index(t->header, c);
                char *end = NULL;
                double v = g_ascii_strtod(f, &end);
                bool numeric = *f && end && !*end;
                bool flag = numeric && (v == 0 || v == 1) && !has_unit(head);
                /* a flag column is 0/1 in every row: checked on this row only */
                if (numeric && !flag)
                    ck_assert_msg(has_unit(head), "vmsplit %s --csv: column '%s' has no unit",
                                  cases[i].cmd, head);
            }
            /* claim: an interval's row names its unit */
            int lo = csv_table_column(t, "interval_90_lo"), un = csv_table_column(t, "interval_unit");
            if (lo >= 0)
                ck_assert_msg(un >= 0 && (!*csv_table_get(t, r, (guint)lo) ||
                                          *csv_table_get(t, r, (guint)un)),
                              "vmsplit %s --csv: row %u has an interval without its unit",
                              cases[i].cmd, r + 1);
        }
        csv_table_free(t);
        g_free(o), g_free(e);
    }
    g_remove(tr);
    char *rm = g_strdup_printf("rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
    g_free(rm);
    g_free(tr), g_free(dir), g_free(lk), g_free(g2), g_free(sw), g_free(cl);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s VMSPLIT\n", argv[0]);
        return 2;
    }
    vmsplit = argv[1];
    Suite *s = suite_create("usage-cli");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, help_command_is_its_help);
    tcase_add_test(tc, bad_arguments_are_exit_2);
    tcase_add_test(tc, one_vocabulary);
    tcase_add_test(tc, man_page_complete);
    tcase_add_test(tc, bad_inputs_are_exit_2);
    tcase_add_test(tc, stdout_write_failure_is_exit_2);
    tcase_add_test(tc, json_has_schema);
    tcase_add_test(tc, csv_one_header_units);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
