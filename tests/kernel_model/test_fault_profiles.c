/* Page-fault profile table (faults.ini, usermm_profiles_load): the bundled
 * file loads with the figures it states; a damaged file is an error naming
 * the file, the group and what was expected, never a silently accepted
 * value. The bad cases are those the old sscanf("%u-%u") reader accepted
 * (a negative bound, text after the range) and those it did not check (an
 * unknown group, more kernel data pages than the model has). */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_model/usermm.h"

/* A valid table whose [anon-read] group is `first` (the other four as in
 * the bundled file). */
static char *table(const char *first)
{
    return g_strconcat(first,
                       "[demand-zero]\ninsns = 600\nkdata_pages = 6\nrange = 400-1200\n"
                       "[file]\ninsns = 600\nkdata_pages = 6\nrange = 400-1500\n"
                       "[cow-copy]\ninsns = 700\nkdata_pages = 7\nrange = 500-1500\n"
                       "[cow-reuse]\ninsns = 300\nkdata_pages = 3\nrange = 200-600\n", NULL);
}

static bool load_text(const char *text, UserFaultProfile *prof, GError **err)
{
    char *dir = g_dir_make_tmp("vmsplit-faults-XXXXXX", NULL);
    char *p = g_build_filename(dir, "f.ini", NULL);
    ck_assert(g_file_set_contents(p, text, -1, NULL));
    bool ok = usermm_profiles_load(p, prof, err);
    g_unlink(p);
    g_rmdir(dir);
    g_free(p);
    g_free(dir);
    return ok;
}

static void expect_error(const char *first, const char *fragment)
{
    char *text = table(first);
    UserFaultProfile prof[UFAULT_KINDS];
    GError *e = NULL;
    ck_assert_msg(!load_text(text, prof, &e), "accepted:\n%s", text);
    ck_assert_msg(strstr(e->message, "f.ini") && strstr(e->message, fragment),
                  "'%s' lacks the file or '%s'", e->message, fragment);
    g_error_free(e);
    g_free(text);
}

START_TEST(bundled)
{
    UserFaultProfile prof[UFAULT_KINDS];
    GError *e = NULL;
    ck_assert_msg(usermm_profiles_load(NULL, prof, &e), "%s", e ? e->message : "");
    /* src/kernel_model/faults.ini's figures */
    ck_assert_uint_eq(prof[UFAULT_ANON_READ].insns, 250);
    ck_assert_uint_eq(prof[UFAULT_ANON_READ].kdata_pages, 3);
    ck_assert_uint_eq(prof[UFAULT_DEMAND_ZERO].insns, 600);
    ck_assert_uint_eq(prof[UFAULT_COW_COPY].insns, 700);
    ck_assert_uint_eq(prof[UFAULT_COW_COPY].kdata_pages, 7);
    ck_assert_uint_eq(prof[UFAULT_COW_REUSE].insns, 300);
}
END_TEST

START_TEST(valid_edges)
{
    UserFaultProfile prof[UFAULT_KINDS];
    char *text = table("[anon-read]\ninsns = 0\nkdata_pages = 16\nrange = 0-0\n");
    ck_assert(load_text(text, prof, NULL));
    ck_assert_uint_eq(prof[UFAULT_ANON_READ].insns, 0);
    ck_assert_uint_eq(prof[UFAULT_ANON_READ].kdata_pages, 16);
    g_free(text);
}
END_TEST

START_TEST(errors)
{
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 3\nrange = -1-500\n",
                 "[anon-read] range: expected LOW-HIGH");
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 3\nrange = 150-500junk\n",
                 "got '150-500junk'");
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 3\nrange = 150--1\n", "range");
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 3\nrange = 300-500\n",
                 "around insns 250");
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 3\n", "got 'nothing'");
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 17\nrange = 150-500\n",
                 "[anon-read] kdata_pages: expected a number (0 to 16)");
    expect_error("[anon-read]\ninsns = 1000001\nkdata_pages = 3\nrange = 150-500\n",
                 "insns: expected a number (0 to 1000000)");
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 3\nrange = 150-500\nfoo = 1\n",
                 "unknown key 'foo'");
    expect_error("[anon-read]\ninsns = 250\nkdata_pages = 3\nrange = 150-500\n"
                 "[anon_read]\ninsns = 1\n",
                 "unknown profile [anon_read] (expected anon-read, demand-zero, file, "
                 "cow-copy, cow-reuse)");
    expect_error("[anon-read\n", "f.ini");
    expect_error("", "no [anon-read] profile");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fault-profiles");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, bundled);
    tcase_add_test(tc, valid_edges);
    tcase_add_test(tc, errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
