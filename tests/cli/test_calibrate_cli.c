/* vmsplit calibrate and validate end to end (the binary is argv[1]):
 * calibrate writes p4-northwood exactly as shipped and names the sums the
 * getppid rows determine; bad measurement files and presets without fit
 * rows exit 2 with the file and line; validate lists every measurement
 * (JSON included) and splits checks from fit targets; presets show prints
 * the ranges; syscall --uncertainty gives intervals. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *vmsplit;

static int run(char **out, char **err, const char *a1, const char *a2, const char *a3,
               const char *a4, const char *a5)
{
    const char *argv[] = { vmsplit, a1, a2, a3, a4, a5, NULL };
    int status = -1;
    ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, NULL));
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static char *source_file(const char *rel)
{
    char *p = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), rel, NULL);
    char *text = NULL;
    ck_assert_msg(g_file_get_contents(p, &text, NULL, NULL), "cannot read %s", p);
    g_free(p);
    return text;
}

START_TEST(calibrate_reproduces_p4)
{
    char *dir = g_dir_make_tmp("vmsplit-calib-XXXXXX", NULL);
    char *fitted = g_build_filename(dir, "p4-northwood.ini", NULL);
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run(&out, &err, "calibrate", "--cpu", "p4-northwood", "-o", fitted), 0);
    ck_assert_ptr_nonnull(strstr(out, "int_gate + iret"));
    ck_assert_ptr_nonnull(strstr(out, "sysenter + sysexit"));
    ck_assert_ptr_nonnull(strstr(out, "not separable"));
    ck_assert_ptr_nonnull(strstr(out, "p4-getppid-int80"));
    ck_assert_ptr_nonnull(strstr(out, "split (declared before fitting)"));
    char *written = NULL, *shipped = source_file("presets/p4-northwood.ini");
    ck_assert(g_file_get_contents(fitted, &written, NULL, NULL));
    ck_assert_msg(!strcmp(written, shipped), "calibrate's output differs from the shipped preset");
    g_free(written);
    g_free(shipped);
    g_free(out);
    g_free(err);
    g_unlink(fitted);
    g_rmdir(dir);
    g_free(fitted);
    g_free(dir);
}
END_TEST

START_TEST(bad_input)
{
    char *dir = g_dir_make_tmp("vmsplit-calib-XXXXXX", NULL);
    char *bad = g_build_filename(dir, "m.ini", NULL);
    ck_assert(g_file_set_contents(bad, "[split]\nreason = r\n[x]\nfigure = many\n", -1, NULL));
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run(&out, &err, "calibrate", "--measurements", bad, NULL, NULL), 2);
    char *where = g_strdup_printf("%s:3: [x]: lacks unit", bad);
    ck_assert_msg(strstr(err, where), "%s", err);
    g_free(where);
    g_free(out);
    g_free(err);
    ck_assert_int_eq(run(&out, &err, "validate", "--measurements", bad, NULL, NULL), 2);
    ck_assert_ptr_nonnull(strstr(err, bad));
    g_free(out);
    g_free(err);
    /* No fit rows for this CPU: nothing to calibrate. */
    ck_assert_int_eq(run(&out, &err, "calibrate", "--cpu", "skylake", NULL, NULL), 2);
    ck_assert_ptr_nonnull(strstr(err, "no fit measurements for this CPU"));
    g_free(out);
    g_free(err);
    g_unlink(bad);
    g_rmdir(dir);
    g_free(bad);
    g_free(dir);
}
END_TEST

START_TEST(validate_lists_every_row)
{
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run(&out, &err, "validate", NULL, NULL, NULL, NULL), 0);
    const char *checks = strstr(out, "checks (predictions");
    const char *fits = strstr(out, "fit targets");
    ck_assert(checks && fits && checks < fits);
    ck_assert_ptr_nonnull(strstr(checks, "ingo-4g4g-null-ratio"));
    ck_assert(strstr(fits, "p4-getppid-int80") && strstr(fits, "p4-getppid-sysenter"));
    /* Ingo Molnar's 64 cold dTLB misses: run by its guest program. */
    const char *dtlb = strstr(checks, "ingo-64-dtlb-misses");
    ck_assert(dtlb && dtlb < fits);
    char *line = g_strndup(dtlb, (gsize)(strchr(dtlb, '\n') - dtlb));
    ck_assert_msg(strstr(line, "25000") && strstr(line, "%  cycles"), "%s", line);
    g_free(line);
    ck_assert_ptr_null(strstr(out, "not reproduced yet"));
    g_free(out);
    g_free(err);
    ck_assert_int_eq(run(&out, &err, "validate", "--json", NULL, NULL, NULL), 0);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    JsonArray *a = json_node_get_array(json_parser_get_root(p));
    unsigned fit = 0;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);
        if (!strcmp(json_object_get_string_member(o, "role"), "fit")) {
            fit++;
            /* The fit met its targets within the rounding of whole cycles. */
            ck_assert(json_object_get_double_member(o, "error") < 0.005 &&
                      json_object_get_double_member(o, "error") > -0.005);
        }
    }
    ck_assert_uint_eq(fit, 2);
    g_object_unref(p);
    g_free(out);
    g_free(err);
    ck_assert_int_eq(run(&out, &err, "presets", "show", "p4-northwood", NULL, NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "fitted: range 100..1500 prior 250;"));
    ck_assert_ptr_nonnull(strstr(out, "estimate: range 60..700;"));
    g_free(out);
    g_free(err);
}
END_TEST

/* vmsplit syscall --uncertainty: intervals per layout; under 3g1g every
 * sampled point was moved back onto Linus's 1761 cycles (0.629 us at
 * 2.8 GHz), so its interval stays there within the 2 % of acceptance,
 * while the 4g4g extra, which rests on open estimates, spreads. */
START_TEST(syscall_intervals)
{
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run(&out, &err, "syscall", "--uncertainty", "6", "--layouts", "3g1g,4g4g"), 0);
    ck_assert_ptr_nonnull(strstr(out, "latency 90%"));
    ck_assert_ptr_nonnull(strstr(out, "extra 90%"));
    g_free(out);
    g_free(err);
    const char *argv[] = { vmsplit, "syscall", "--uncertainty", "6", "--layouts", "3g1g,4g4g",
                           "--json", NULL };
    int status = -1;
    ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                           &status, NULL));
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    JsonArray *a = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)),
                                                "layouts");
    JsonObject *l3 = json_array_get_object_element(a, 0), *l4 = json_array_get_object_element(a, 1);
    double us = 1761 / 2800.0;
    ck_assert(json_object_get_double_member(l3, "latency_us_p5") >= 0.98 * us);
    ck_assert(json_object_get_double_member(l3, "latency_us_p95") <= 1.02 * us);
    ck_assert(json_object_get_double_member(l4, "extra_us_p95") -
              json_object_get_double_member(l4, "extra_us_p5") > 0.1);
    g_object_unref(p);
    g_free(out);
    g_free(err);
    ck_assert_int_eq(run(&out, &err, "syscall", "--uncertainty", "-3", NULL, NULL), 2);
    g_free(out);
    g_free(err);
}
END_TEST

int main(int argc, char **argv)
{
    g_assert(argc == 2);
    vmsplit = argv[1];
    Suite *s = suite_create("calibrate-cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, calibrate_reproduces_p4);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, validate_lists_every_row);
    tcase_add_test(tc, syscall_intervals);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
