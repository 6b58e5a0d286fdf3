/* Helpers shared by the replay tests: a scratch directory per test and
 * reading a whole small file. */
#ifndef VMSPLIT_TESTS_REPLAY_TEST_TMP_H
#define VMSPLIT_TESTS_REPLAY_TEST_TMP_H

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>

static inline char *test_tmpdir_new(void)
{
    char *dir = g_dir_make_tmp("vmsplit-replay-XXXXXX", NULL);
    ck_assert(dir);
    return dir;
}

/* Removes dir and the files in it, and frees the name. */
static inline void test_tmpdir_free(char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, n, NULL);
        g_remove(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(dir);
    g_free(dir);
}

/* The contents of a small text file (g_free it). */
static inline char *test_slurp(const char *path)
{
    char *s = NULL;
    ck_assert_msg(g_file_get_contents(path, &s, NULL, NULL), "cannot read %s", path);
    return s;
}

#endif
