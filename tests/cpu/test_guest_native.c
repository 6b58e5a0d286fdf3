/* The host CPU as the oracle for the guest programs' expected constants:
 * each guest program (workloads/guest/NAME.asm, workloads/guest/tests/NAME.asm),
 * assembled with nasm and linked with `ld -m elf_i386` at build time
 * (tests/cpu/data/meson.build), runs natively here. The self-checking ones
 * must exit 0; a wrong hand-computed constant makes the real CPU disagree
 * and the program exit with the number of the failed check. failcheck
 * proves the harness can fail: it must exit 2 with its message.
 *
 * Arguments: the paths of the NAME.native executables. */
#include <check.h>
#include <glib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../test_prog.h"

static char **programs;
static int n_programs;

typedef struct {
    char *out, *err;
    int status;                  /* exit status, or -1 if killed by a signal */
} Run;

static Run run_native(const char *path)
{
    Run r = { 0 };
    const char *argv[] = { path, NULL };
    int wait_status;
    GError *e = NULL;
    gboolean ok = g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r.out,
                               &r.err, &wait_status, &e);
    ck_assert_msg(ok, "%s: cannot run natively: %s", path, e ? e->message : "?");
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    return r;
}

static char *program_name(const char *path)
{
    char *base = g_path_get_basename(path);
    char *dot = strstr(base, ".native");
    if (dot)
        *dot = '\0';
    return base;
}

START_TEST(test_program)
{
    const char *path = programs[_i];
    char *name = program_name(path);
    Run r = run_native(path);
    if (strcmp(name, "failcheck") == 0) {
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, "check 2 failed: cmp eax, 5\n");
    } else {
        ck_assert_msg(r.status == 0, "%s: exit status %d (the failed check's number): %s", name,
                      r.status, r.err);
        ck_assert_str_eq(r.err, "");
        if (strcmp(name, "hello") == 0)
            ck_assert_str_eq(r.out, "Hello from a vmsplit guest.\n");
        else if (strcmp(name, "dtlb64") == 0)   /* the host's own cycle count */
            ck_assert_msg(g_regex_match_simple("^64 cold pages after a CR3 write: [1-9][0-9]* "
                                               "cycles\n$", r.out, 0, 0), "%s", r.out);
        else
            ck_assert_str_eq(r.out, "");
    }
    g_free(r.out);
    g_free(r.err);
    g_free(name);
}
END_TEST

START_TEST(test_all_present)
{
    /* The programs meson passes: every self-checking program and failcheck. */
    const char *need[] = { "hello", "pageloop", "dtlb64", "arith", "shift", "muldiv", "string",
                           "control", "stack", "movx", "lea", "failcheck" };
    for (size_t k = 0; k < G_N_ELEMENTS(need); k++) {
        bool found = false;
        for (int i = 0; i < n_programs && !found; i++) {
            char *name = program_name(programs[i]);
            found = strcmp(name, need[k]) == 0;
            g_free(name);
        }
        ck_assert_msg(found, "%s.native not passed to the test", need[k]);
    }
}
END_TEST

int main(int argc, char **argv)
{
    char *why = NULL;
    if (!test_host_runs_i386(&why)) {
        printf("SKIP: %s: the guest programs' constants cannot be checked natively here\n", why);
        g_free(why);
        return TEST_EXIT_SKIP;
    }
    programs = argv + 1;
    n_programs = argc - 1;
    Suite *s = suite_create("guest_native");
    TCase *tc = tcase_create("native");
    tcase_add_test(tc, test_all_present);
    if (n_programs > 0)
        tcase_add_loop_test(tc, test_program, 0, n_programs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
