/* End-to-end: run the built `vmsplit meminfo` as a user would and check
 * its output and exit status. The binary's path is argv[1] (meson passes
 * vmsplit_exe).
 *
 * Expected figures are independent of the model's code: 60 GiB of highmem
 * for a 64 GiB machine (all RAM from 4 GiB to the 36-bit limit; the seed
 * mail shows 62914556 kB, one page less), 16 Mi pages x 40 B of mem_map. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

static const char *vmsplit;

typedef struct {
    int status;
    char *out, *err;
} Run;

static Run run_argv(const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)vmsplit);
    g_ptr_array_add(argv, "meminfo");
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, NULL);
    Run r = {0};
    GError *err = NULL;
    int wait = 0;
    ck_assert_msg(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &r.out, &r.err, &wait, &err),
                  "spawn %s: %s", vmsplit, err ? err->message : "");
    ck_assert(WIFEXITED(wait));
    r.status = WEXITSTATUS(wait);
    g_ptr_array_free(argv, TRUE);
    return r;
}

static void run_free(Run *r)
{
    g_free(r->out);
    g_free(r->err);
}

#define RUN(...) run_argv((const char *const[]){__VA_ARGS__, NULL})

START_TEST(test_meminfo_text_64g_4g4g)
{
    Run r = RUN("--ram", "64G", "--layout", "4g4g");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "MemTotal:"));
    ck_assert_ptr_nonnull(strstr(r.out, "LowTotal:"));
    ck_assert_ptr_nonnull(strstr(r.out, "HighTotal:     62914560 kB"));
    ck_assert_ptr_nonnull(strstr(r.out, "mem_map: 655360 kB (16777216 pages x 40 B)"));
    ck_assert_ptr_nonnull(strstr(r.out, "boots: yes"));
    ck_assert_ptr_nonnull(strstr(r.out, "lowmem left after boot"));
    run_free(&r);
}
END_TEST

START_TEST(test_meminfo_json)
{
    Run r = RUN("--ram", "65536M", "--layout", "4g4g", "--json");
    ck_assert_int_eq(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_data(p, r.out, -1, &err), "%s", r.out);
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_str_eq(json_object_get_string_member(o, "layout"), "4g4g");
    JsonObject *mi = json_object_get_object_member(o, "meminfo_kB");
    ck_assert_int_eq(json_object_get_int_member(mi, "HighTotal"), 62914560);
    ck_assert_int_eq(json_object_get_int_member(mi, "MemTotal"),
                     json_object_get_int_member(mi, "LowTotal") + 62914560);
    ck_assert(json_object_get_boolean_member(o, "boots"));
    JsonArray *res = json_object_get_array_member(o, "reservations");
    JsonObject *first = json_array_get_object_element(res, 0);
    ck_assert_str_eq(json_object_get_string_member(first, "name"), "mem_map");
    ck_assert_int_eq(json_object_get_int_member(first, "bytes"), 16777216LL * 40);
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *it = json_array_get_object_element(res, i);
        ck_assert(strlen(json_object_get_string_member(it, "source")) > 10);
    }
    run_free(&r);
}
END_TEST

START_TEST(test_meminfo_does_not_boot_is_exit_0)
{
    /* 64 GiB under 3G/1G with the 56 B struct page that makes the seed's
     * "mem_map nearly 1 GB" literal: 896 MiB of mem_map. */
    Run r = RUN("--ram", "64G", "--layout", "3g1g", "--struct-page", "56");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "does not boot"));
    run_free(&r);
    Run j = RUN("--ram", "64G", "--layout", "3g1g", "--struct-page", "56", "--json");
    ck_assert_int_eq(j.status, 0);
    ck_assert_ptr_nonnull(strstr(j.out, "\"boots\" : false"));
    run_free(&j);
}
END_TEST

START_TEST(test_meminfo_bad_input)
{
    static const struct { const char *a[6]; const char *want; } bad[] = {
        {{"--ram", "64G", "--layout", "5g5g", NULL}, "unknown layout '5g5g'"},
        {{"--ram", "12Q", "--layout", "3g1g", NULL}, "bad --ram '12Q'"},
        {{"--ram", "-4G", "--layout", "3g1g", NULL}, "bad --ram"},
        {{"--ram", "0", "--layout", "3g1g", NULL}, "bad --ram"},
        {{"--ram", "1M", "--layout", "3g1g", NULL}, "too small"},
        {{"--layout", "3g1g", NULL}, "--ram SIZE or --e820 FILE is required"},
        {{"--ram", "4G", NULL}, "--layout NAME is required"},
        {{"--ram", "4G", "--layout", "3g1g", "--struct-page", "x"}, "--struct-page: expected a whole number from 16 to 256, got 'x'"},
        {{"--ram", "4G", "--layout", "3g1g", "--struct-page", "4096"}, "--struct-page: expected a whole number from 16 to 256"},
        {{"--ram", "4G", "--layout", "3g1g", "--e820", "/nonexistent.e820"}, "give --ram or --e820"},
        {{"--e820", "/nonexistent/x.e820", "--layout", "3g1g", NULL}, "x.e820"},
        {{"--bogus", NULL}, "vmsplit meminfo"},
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *args[8] = {NULL};
        for (unsigned k = 0; k < 6 && bad[i].a[k]; k++)
            args[k] = bad[i].a[k];
        Run r = run_argv(args);
        ck_assert_msg(r.status == 2, "case %u: status %d", i, r.status);
        ck_assert_msg(strstr(r.err, bad[i].want), "case %u: stderr '%s'", i, r.err);
        run_free(&r);
    }
}
END_TEST

START_TEST(test_meminfo_e820_file)
{
    g_autofree char *dir = g_dir_make_tmp("vmsplit-meminfo-XXXXXX", NULL);
    ck_assert_ptr_nonnull(dir);
    g_autofree char *good = g_build_filename(dir, "good.e820", NULL);
    g_autofree char *bad = g_build_filename(dir, "bad.e820", NULL);
    /* 2 GiB below the hole, 2 GiB above 4 GiB: under 3g1g, highmem is
     * everything from 896 MiB: (2048 - 896) + 2048 MiB = 3200 MiB. */
    ck_assert(g_file_set_contents(good,
        "0 0x9f000 usable\n1M 2G\n2G 4G reserved\n4G 6G usable\n", -1, NULL));
    ck_assert(g_file_set_contents(bad, "0 0x9f000\n1M oops\n", -1, NULL));
    const char *a1[] = {"--e820", good, "--layout", "3g1g", NULL};
    Run r = run_argv(a1);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "HighTotal:      3276800 kB"), "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "(from --e820)"));
    run_free(&r);
    const char *a2[] = {"--e820", bad, "--layout", "3g1g", NULL};
    r = run_argv(a2);
    ck_assert_int_eq(r.status, 2);
    g_autofree char *want = g_strdup_printf("%s:2:", bad);
    ck_assert_msg(strstr(r.err, want), "stderr '%s'", r.err);
    run_free(&r);
    g_unlink(good);
    g_unlink(bad);
    g_rmdir(dir);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-VMSPLIT\n", argv[0]);
        return EXIT_FAILURE;
    }
    vmsplit = argv[1];
    Suite *s = suite_create("meminfo-cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_meminfo_text_64g_4g4g);
    tcase_add_test(tc, test_meminfo_json);
    tcase_add_test(tc, test_meminfo_does_not_boot_is_exit_0);
    tcase_add_test(tc, test_meminfo_bad_input);
    tcase_add_test(tc, test_meminfo_e820_file);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
