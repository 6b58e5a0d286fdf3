/* The self-checking guest programs (workloads/guest/tests/NAME.asm, each
 * comparing results with hand-worked constants and exiting with the number
 * of the first failed check) and hello.asm, run in the simulated core under
 * the `vmsplit run` environment. Each must exit 0 with nothing on stderr;
 * hello must print its line.
 *
 * Arguments: the guest objects (build-dir/workloads/guest/...NAME.o). */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "preset/preset.h"
#include "cpu/runenv.h"

static char **objects;
static int n_objects;

static void run_guest(const char *path, const Preset *p)
{
    GString *out = g_string_new(NULL), *err_out = g_string_new(NULL);
    RunEnvOptions opt = { .preset = p, .out = out, .err = err_out };
    GError *err = NULL;
    RunEnv *e = runenv_new(&opt, &err);
    ck_assert_msg(e, "%s", err ? err->message : "?");
    ck_assert_msg(runenv_load(e, path, &err), "%s", err ? err->message : "?");
    RunEnvState st = runenv_run(e, 20000000);
    char *fault = st == RUNENV_FAULTED ? runenv_describe_fault(e) : g_strdup("");
    ck_assert_msg(st == RUNENV_EXITED, "%s: did not exit (state %d) %s", path, st, fault);
    ck_assert_msg(runenv_exit_status(e) == 0, "%s: exit status %d: %s", path,
                  runenv_exit_status(e), err_out->str);
    ck_assert_str_eq(err_out->str, "");
    if (g_str_has_suffix(path, "/hello.o"))
        ck_assert_str_eq(out->str, "Hello from a vmsplit guest.\n");
    ck_assert_uint_gt(cpu_insns_user(runenv_cpu(e)), 0);
    g_free(fault);
    runenv_free(e);
    g_string_free(out, TRUE);
    g_string_free(err_out, TRUE);
}

START_TEST(test_guest_no_preset)
{
    run_guest(objects[_i], NULL);
}
END_TEST

START_TEST(test_guest_p4)
{
    GError *err = NULL;
    Preset *p = preset_load("p4-northwood", &err);
    ck_assert_msg(p, "%s", err ? err->message : "?");
    run_guest(objects[_i], p);
    preset_free(p);
}
END_TEST

int main(int argc, char **argv)
{
    objects = argv + 1;
    n_objects = argc - 1;
    Suite *s = suite_create("cpu_guest");
    TCase *t = tcase_create("guest");
    tcase_set_timeout(t, 60);
    tcase_add_loop_test(t, test_guest_no_preset, 0, n_objects);
    tcase_add_loop_test(t, test_guest_p4, 0, n_objects);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
