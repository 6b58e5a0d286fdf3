/* --paging pae|legacy end to end (the binary is argv[1]): every command
 * that takes it refuses a mode it does not know and, under legacy paging,
 * more than 4 GiB of RAM, with exit status 2 and a message naming --ram
 * and --paging; the JSON names the mode; a legacy null call goes through
 * the stubs with the CR3 writes of its layout's design (4g4g: 2). */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *vmsplit;

static int run(char **out, char **err, const char *const *args)
{
    const char *argv[16] = { vmsplit };
    size_t n = 1;
    for (; args[n - 1]; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    int status = -1;
    ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, NULL));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(ram_beyond_4g)
{
    static const char *cmds[][8] = {
        { "syscall", "--paging", "legacy", "--ram", "8G", NULL },
        { "replay", "--paging", "legacy", "--ram", "8G", "workloads/traces/pipeline.vmt", NULL },
        { "compare", "--paging", "legacy", "--ram", "8G", "workloads/traces/pipeline.vmt", NULL },
    };
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run(&out, &err, cmds[_i]), 2);
    ck_assert_msg(strstr(err, "--ram") && strstr(err, "--paging") && strstr(err, "4 GiB"), "%s",
                  err);
    ck_assert_str_eq(out, "");
    g_free(out);
    g_free(err);
}
END_TEST

START_TEST(unknown_mode)
{
    static const char *cmds[][6] = {
        { "syscall", "--paging", "pse36", NULL },
        { "replay", "--paging", "pse36", "workloads/traces/pipeline.vmt", NULL },
        { "claim", "--paging", "pse36", NULL },
    };
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run(&out, &err, cmds[_i]), 2);
    ck_assert_msg(strstr(err, "--paging") && strstr(err, "legacy") && strstr(err, "pse36"), "%s",
                  err);
    g_free(out);
    g_free(err);
}
END_TEST

/* gen --rate R --paging legacy: the trace replayed under legacy 3g1g
 * realises R within 5 % (issue 17's promise, in the mode it was solved
 * for). */
START_TEST(gen_rate_legacy)
{
    char *dir = g_dir_make_tmp("vmsplit-paging-XXXXXX", NULL);
    char *trace = g_build_filename(dir, "db.vmt", NULL);
    const char *gen[] = { "gen", "db", "--count", "300", "--rate", "20000", "--paging", "legacy",
                          "-o", trace, NULL };
    const char *rep[] = { "replay", "--paging", "legacy", "--json", trace, NULL };
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run(&out, &err, gen), 0);
    ck_assert_ptr_nonnull(strstr(err, "32-bit paging"));
    g_free(out), g_free(err);
    ck_assert_int_eq(run(&out, &err, rep), 0);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonObject *r0 = json_array_get_object_element(json_object_get_array_member(root, "replays"), 0);
    JsonObject *tot = json_object_get_object_member(r0, "totals");
    double rate = (double)json_object_get_int_member(tot, "syscalls") /
                  json_object_get_double_member(r0, "seconds");
    ck_assert_msg(fabs(rate - 20000) <= 0.05 * 20000, "realised %g", rate);
    g_object_unref(p);
    g_free(out), g_free(err);
    g_unlink(trace);
    g_rmdir(dir);
    g_free(trace);
    g_free(dir);
}
END_TEST

/* A 4 GiB legacy machine runs; its JSON says legacy; 4g4g writes CR3
 * twice per null call, 3g1g never (the patch's design), as under PAE. */
START_TEST(legacy_syscall_json)
{
    const char *args[] = { "syscall", "--paging", "legacy", "--layouts", "3g1g,4g4g", "-n", "20",
                           "--json", NULL };
    char *out = NULL, *err = NULL;
    ck_assert_msg(run(&out, &err, args) == 0, "%s", err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_str_eq(json_object_get_string_member(o, "paging"), "legacy");
    JsonArray *a = json_object_get_array_member(o, "layouts");
    ck_assert_uint_eq(json_array_get_length(a), 2);
    ck_assert_int_eq((int)json_object_get_double_member(json_array_get_object_element(a, 0),
                                                        "cr3_writes"), 0);
    ck_assert_int_eq((int)json_object_get_double_member(json_array_get_object_element(a, 1),
                                                        "cr3_writes"), 2);
    g_object_unref(p);
    g_free(out);
    g_free(err);
    /* The default is PAE, and says so. */
    const char *def[] = { "syscall", "--layouts", "3g1g", "-n", "5", "--json", NULL };
    ck_assert_int_eq(run(&out, &err, def), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"paging\" : \"pae\""));
    g_free(out);
    g_free(err);
}
END_TEST

/* sweep --kind replay takes paging as a parameter and writes it as a
 * column; the legacy point's 4g4g overhead on the null generator is below
 * the PAE point's (no PDPTE loads at its two MOV CR3 per call). */
/* The text's cr3 line says what MOV CR3 does in the mode: the four PDPTE
 * loads under PAE (SDM Vol. 3A 4.4.1), none under 32-bit paging. */
START_TEST(syscall_text_cr3)
{
    static const char *const modes[] = { "pae", "legacy" };
    for (int m = 0; m < 2; m++) {
        const char *args[] = { "syscall", "--layouts", "4g4g", "--count", "5", "--paging",
                               modes[m], NULL };
        char *out = NULL, *err = NULL;
        ck_assert_msg(run(&out, &err, args) == 0, "%s", err);
        char **lines = g_strsplit(out, "\n", -1);
        const char *cr3 = NULL;
        for (char **l = lines; *l; l++)
            if (g_str_has_prefix(*l, "cr3 "))
                cr3 = *l;
        ck_assert_msg(cr3, "no cr3 line in:\n%s", out);
        bool four = strstr(cr3, "four PDPTE loads") != NULL;
        ck_assert_msg(four == (m == 0), "--paging %s: '%s'", modes[m], cr3);
        if (m == 1)
            ck_assert_msg(strstr(cr3, "no PDPTE"), "'%s'", cr3);
        g_strfreev(lines);
        g_free(out);
        g_free(err);
    }
}
END_TEST

START_TEST(sweep_paging_column)
{
    char *dir = g_dir_make_tmp("vmsplit-paging-XXXXXX", NULL);
    char *csv = g_build_filename(dir, "s.csv", NULL);
    const char *args[] = { "sweep", "--kind", "replay", "--workloads", "gen:null", "--layouts",
                           "4g4g", "--paging", "pae,legacy", "--count", "40", "-q", "-o", csv,
                           NULL };
    char *out = NULL, *err = NULL;
    ck_assert_msg(run(&out, &err, args) == 0, "%s", err);
    char *text = NULL;
    ck_assert(g_file_get_contents(csv, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    int h = 0;                       /* the header: the first line not a # comment */
    while (lines[h] && lines[h][0] == '#')
        h++;
    ck_assert_ptr_nonnull(lines[h]);
    char **head = g_strsplit(lines[h], ",", -1);
    int pcol = -1, ocol = -1;
    for (int i = 0; head[i]; i++) {
        if (!strcmp(head[i], "paging"))
            pcol = i;
        if (!strcmp(head[i], "overhead_pct"))
            ocol = i;
    }
    ck_assert_int_ge(pcol, 0);
    ck_assert_int_ge(ocol, 0);
    double over[2] = { -1, -1 };
    for (int r = h + 1; r < h + 3; r++) {
        ck_assert_ptr_nonnull(lines[r]);
        char **f = g_strsplit(lines[r], ",", -1);
        int m = !strcmp(f[pcol], "legacy");
        ck_assert(m || !strcmp(f[pcol], "pae"));
        over[m] = g_ascii_strtod(f[ocol], NULL);
        g_strfreev(f);
    }
    ck_assert_msg(over[0] > 0 && over[1] > 0 && over[1] < over[0], "pae %.2f legacy %.2f",
                  over[0], over[1]);
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
    g_remove(csv);
    g_rmdir(dir);
    g_free(csv);
    g_free(dir);
    g_free(out);
    g_free(err);
}
END_TEST

int main(int argc, char **argv)
{
    vmsplit = argc > 1 ? argv[1] : "build/vmsplit";
    Suite *s = suite_create("paging-cli");
    TCase *tc = tcase_create("paging");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, ram_beyond_4g, 0, 3);
    tcase_add_loop_test(tc, unknown_mode, 0, 3);
    tcase_add_test(tc, legacy_syscall_json);
    tcase_add_test(tc, gen_rate_legacy);
    tcase_add_test(tc, sweep_paging_column);
    tcase_add_test(tc, syscall_text_cr3);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
