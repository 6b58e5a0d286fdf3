/* Lackey reader and line reader: hand-written inputs with known contents,
 * gzip and plain giving the same references, errors naming the line. */
#include <check.h>
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/lackey.h"
#include "replay/linereader.h"

static char *write_tmp(const char *name, const char *text)
{
    char *dir = g_dir_make_tmp("vmsplit-lackey-XXXXXX", NULL);
    char *path = g_build_filename(dir, name, NULL);
    g_file_set_contents(path, text, -1, NULL);
    g_free(dir);
    return path;
}

static const char *sample =
    "==123== Lackey, an example Valgrind tool\n"
    "I  04001230,3\n"
    " L 1ffefffd28,8\n"
    " S bffff000,4\n"
    " M 0804a010,16\n"
    "==123== done\n";

START_TEST(reads_each_kind)
{
    char *p = write_tmp("t.lackey", sample);
    GError *err = NULL;
    LackeyReader *r = lackey_open(p, false, &err);
    ck_assert_ptr_nonnull(r);
    LackeyRef ref;
    static const LackeyRef want[] = {
        { LACKEY_I, 0x04001230, 3 },
        { LACKEY_L, 0x1ffefffd28ULL, 8 },
        { LACKEY_S, 0xbffff000, 4 },
        { LACKEY_M, 0x0804a010, 16 },
    };
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_int_eq(lackey_next(r, &ref, &err), 1);
        ck_assert_int_eq(ref.kind, want[i].kind);
        ck_assert_uint_eq(ref.addr, want[i].addr);
        ck_assert_uint_eq(ref.size, want[i].size);
    }
    ck_assert_int_eq(lackey_next(r, &ref, &err), 0);
    ck_assert_ptr_null(err);
    ck_assert_uint_eq(lackey_skipped_messages(r), 2);
    ck_assert_uint_eq(lackey_lines(r), 6);
    lackey_close(r);
    g_free(p);
}
END_TEST

START_TEST(bad_line_names_line)
{
    char *p = write_tmp("bad.lackey", "I  04001230,3\n L zz,4\n");
    GError *err = NULL;
    LackeyReader *r = lackey_open(p, false, &err);
    LackeyRef ref;
    ck_assert_int_eq(lackey_next(r, &ref, &err), 1);
    ck_assert_int_eq(lackey_next(r, &ref, &err), -1);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, "bad.lackey:2:") != NULL, "%s", err->message);
    ck_assert_msg(strstr(err->message, "expected") != NULL, "%s", err->message);
    g_error_free(err);
    lackey_close(r);
    g_free(p);
}
END_TEST

START_TEST(skip_bad_counts)
{
    char *p = write_tmp("bad.lackey", "garbage\nI  10,1\n L 20,\n S 30,2\n");
    GError *err = NULL;
    LackeyReader *r = lackey_open(p, true, &err);
    LackeyRef ref;
    int n = 0;
    while (lackey_next(r, &ref, &err) == 1)
        n++;
    ck_assert_ptr_null(err);
    ck_assert_int_eq(n, 2);
    ck_assert_uint_eq(lackey_bad_lines(r), 2);
    const char *text;
    ck_assert_uint_eq(lackey_first_bad_line(r, &text), 1);
    ck_assert_str_eq(text, "garbage");
    lackey_close(r);
    g_free(p);
}
END_TEST

/* The same text read plain and gzip-compressed gives the same lines. */
START_TEST(gzip_same_as_plain)
{
    char *p = write_tmp("t.lackey", sample);
    char *gz = g_strconcat(p, ".gz", NULL);
    char *cmd = g_strdup_printf("gzip -c '%s' > '%s'", p, gz);
    ck_assert_int_eq(system(cmd), 0);
    GError *err = NULL;
    LineReader *a = linereader_open(p, &err), *b = linereader_open(gz, &err);
    ck_assert(!linereader_is_gzip(a));
    ck_assert(linereader_is_gzip(b));
    char *la, *lb;
    size_t na, nb;
    int lines = 0;
    while (linereader_next(a, &la, &na, &err)) {
        ck_assert(linereader_next(b, &lb, &nb, &err));
        ck_assert_str_eq(la, lb);
        lines++;
    }
    ck_assert(!linereader_next(b, &lb, &nb, &err));
    ck_assert_ptr_null(err);
    ck_assert_int_eq(lines, 6);
    linereader_close(a);
    linereader_close(b);
    g_free(cmd);
    g_free(gz);
    g_free(p);
}
END_TEST

/* Lines longer than one read chunk, CRLF endings, a last line without a
 * newline. */
START_TEST(long_lines_and_crlf)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 300000; k++)
            g_string_append_c(s, (char)('a' + i));
        g_string_append(s, "\r\n");
    }
    g_string_append(s, "tail");
    char *p = write_tmp("long.txt", s->str);
    GError *err = NULL;
    LineReader *lr = linereader_open(p, &err);
    char *l;
    size_t n;
    for (int i = 0; i < 3; i++) {
        ck_assert(linereader_next(lr, &l, &n, &err));
        ck_assert_uint_eq(n, 300000);
        ck_assert_int_eq(l[0], 'a' + i);
        ck_assert_int_eq(l[n - 1], 'a' + i);
    }
    ck_assert(linereader_next(lr, &l, &n, &err));
    ck_assert_str_eq(l, "tail");
    ck_assert_uint_eq(linereader_lineno(lr), 4);
    ck_assert(!linereader_next(lr, &l, &n, &err));
    ck_assert_ptr_null(err);
    linereader_close(lr);
    g_string_free(s, TRUE);
    g_free(p);
}
END_TEST

START_TEST(missing_file)
{
    GError *err = NULL;
    ck_assert_ptr_null(linereader_open("/nonexistent/x.lackey", &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, "/nonexistent/x.lackey") != NULL, "%s", err->message);
    g_error_free(err);
}
END_TEST

/* The bundled real trace: line counts from `zcat | awk` (see
 * workloads/memtraces/README.md). */
START_TEST(bundled_trace_counts)
{
    char *p = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "workloads", "memtraces",
                               "qsortwords.lackey.gz", NULL);
    GError *err = NULL;
    LackeyReader *r = lackey_open(p, false, &err);
    ck_assert_ptr_nonnull(r);
    uint64_t n[256] = { 0 };
    LackeyRef ref;
    int rc;
    while ((rc = lackey_next(r, &ref, &err)) == 1)
        n[ref.kind]++;
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(n['I'], 931474);
    ck_assert_uint_eq(n['L'], 291314);
    ck_assert_uint_eq(n['S'], 269345);
    ck_assert_uint_eq(n['M'], 6138);
    ck_assert_uint_eq(lackey_skipped_messages(r), 25);
    lackey_close(r);
    g_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lackey");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, reads_each_kind);
    tcase_add_test(tc, bad_line_names_line);
    tcase_add_test(tc, skip_bad_counts);
    tcase_add_test(tc, gzip_same_as_plain);
    tcase_add_test(tc, long_lines_and_crlf);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, bundled_trace_counts);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
