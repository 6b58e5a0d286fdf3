/* Syscall profile table: the bundled file loads and says what its comments
 * say; bad files are errors naming the group and key. */
#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_model/profiles.h"

static char *write_tmp(const char *text)
{
    char *dir = g_dir_make_tmp("vmsplit-prof-XXXXXX", NULL);
    char *p = g_build_filename(dir, "p.ini", NULL);
    g_file_set_contents(p, text, -1, NULL);
    g_free(dir);
    return p;
}

START_TEST(bundled)
{
    GError *err = NULL;
    ProfileTable *t = profiles_load(NULL, &err);
    ck_assert_msg(t != NULL, "%s", err ? err->message : "");
    bool known;
    const SyscallProfile *p = profiles_find(t, "getppid", &known);
    ck_assert(known);
    ck_assert_uint_eq(p->nr, 64);        /* __NR_getppid on i386 */
    ck_assert_uint_eq(p->copy_in, 0);
    p = profiles_find(t, "read", &known);
    ck_assert_uint_eq(p->nr, 3);
    ck_assert_uint_eq(p->copy_out, COPY_ARG);
    p = profiles_find(t, "fsync", &known);
    ck_assert(p->blocks);
    p = profiles_find(t, "munmap", &known);
    ck_assert_int_eq(p->mm, MM_MUNMAP);
    p = profiles_find(t, "no_such_call", &known);
    ck_assert(!known);
    ck_assert_ptr_eq(p, profiles_generic(t));
    ck_assert_ptr_eq(profiles_by_nr(t, 64), profiles_find(t, "getppid", NULL));
    profiles_free(t);
}
END_TEST

static void expect_error(const char *text, const char *needle)
{
    char *p = write_tmp(text);
    GError *err = NULL;
    ck_assert_ptr_null(profiles_load(p, &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, needle) != NULL, "'%s' lacks '%s'", err->message, needle);
    ck_assert_msg(strstr(err->message, p) != NULL, "'%s' lacks the file name", err->message);
    g_error_free(err);
    g_free(p);
}

START_TEST(errors)
{
    expect_error("[generic]\ninsns = 10\n[read]\ninsns = 5\nfoo = 1\n", "[read] foo");
    expect_error("[generic]\ninsns = 10\n[read]\nkdata_pages = 1\n", "[read] insns");
    expect_error("[generic]\ninsns = -3\n", "[generic] insns");
    expect_error("[generic]\ninsns = 1\ncopy_in = lots\n", "copy_in");
    expect_error("[generic]\ninsns = 1\nmm = teleport\n", "mm");
    expect_error("[read]\ninsns = 1\n", "[generic]");
    expect_error("[generic\ninsns = 1\n", "p.ini");
    /* Ranges: low > high, a value outside, a malformed range. */
    expect_error("[generic]\ninsns = 20\ninsns_range = 60..10\n", "low > high");
    expect_error("[generic]\ninsns = 80\ninsns_range = 10..60\n", "inside insns_range 10..60");
    expect_error("[generic]\ninsns = 20\ninsns_range = 10-60\n", "[generic] insns_range");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profiles");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, bundled);
    tcase_add_test(tc, errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
