/* CSV reading and writing (src/report/csv.h) against RFC 4180's rules,
 * written out by hand: quoting, doubled quotes, CRLF, fields spanning
 * lines, and the errors (file:line) for malformed and torn files. */
#include "report/csv.h"

#include <check.h>
#include <string.h>

static CsvTable *read_str(const char *s, CsvReadFlags f, GError **err)
{
    return csv_read_buffer("t.csv", s, strlen(s), f, err);
}

START_TEST(test_write_quoting)
{
    /* RFC 4180 §2.6-2.7: fields with commas, quotes or line breaks are
     * quoted and inner quotes doubled; vmsplit also quotes leading or
     * trailing blanks (kept by readers that trim) and a leading '#' (not
     * a comment). */
    const char *f[] = {"plain", "with,comma", "say \"hi\"", "", " lead", "a\nb", "#x", "1.5"};
    GString *s = g_string_new(NULL);
    csv_append_record(s, f, G_N_ELEMENTS(f));
    ck_assert_str_eq(s->str,
                     "plain,\"with,comma\",\"say \"\"hi\"\"\",,\" lead\",\"a\nb\",\"#x\",1.5\n");
    g_string_free(s, TRUE);
    /* A lone empty field must not read back as a blank line. */
    const char *e[] = {""};
    s = g_string_new(NULL);
    csv_append_record(s, e, 1);
    ck_assert_str_eq(s->str, "\"\"\n");
    g_string_free(s, TRUE);
}
END_TEST

START_TEST(test_roundtrip)
{
    const char *f[] = {"plain", "with,comma", "say \"hi\"", "", " lead", "a\nb", "#x"};
    GString *s = g_string_new("c1,c2,c3,c4,c5,c6,c7\n");
    csv_append_record(s, f, G_N_ELEMENTS(f));
    g_string_append(s, "1,2,3,4,5,6,7\n");
    GError *err = NULL;
    CsvTable *t = read_str(s->str, CSV_READ_STRICT, &err);
    ck_assert_msg(t, "%s", err ? err->message : "");
    ck_assert_uint_eq(t->rows->len, 2);
    for (guint i = 0; i < G_N_ELEMENTS(f); i++)
        ck_assert_str_eq(csv_table_get(t, 0, i), f[i]);
    /* The first row starts on line 2 and spans two lines (the "a\nb"
     * field), so the second starts on line 4. */
    ck_assert_uint_eq(g_array_index(t->row_lines, guint, 0), 2);
    ck_assert_uint_eq(g_array_index(t->row_lines, guint, 1), 4);
    ck_assert(!t->torn);
    ck_assert_uint_eq(t->complete_len, s->len);
    csv_table_free(t);
    g_string_free(s, TRUE);
}
END_TEST

START_TEST(test_rfc4180_example)
{
    /* RFC 4180 §2 examples: CRLF line ends, a quoted field with a CRLF. */
    const char *in = "h1,h2,h3\r\n\"aaa\",\"b\r\nbb\",\"ccc\"\r\nzzz,yyy,xxx\r\n";
    GError *err = NULL;
    CsvTable *t = read_str(in, CSV_READ_STRICT, &err);
    ck_assert_msg(t, "%s", err ? err->message : "");
    ck_assert_uint_eq(t->rows->len, 2);
    ck_assert_str_eq(csv_table_get(t, 0, 0), "aaa");
    ck_assert_str_eq(csv_table_get(t, 0, 1), "b\r\nbb");
    ck_assert_str_eq(csv_table_get(t, 0, 2), "ccc");
    ck_assert_str_eq(csv_table_get(t, 1, 2), "xxx");
    ck_assert_int_eq(csv_table_column(t, "h2"), 1);
    ck_assert_int_eq(csv_table_column(t, "nope"), -1);
    csv_table_free(t);
}
END_TEST

START_TEST(test_comments_and_blank_lines)
{
    const char *in = "# first\n#second\n\na,b\n1,2\n\n# later, skipped\n3,4\n";
    GError *err = NULL;
    CsvTable *t = read_str(in, CSV_READ_STRICT, &err);
    ck_assert_msg(t, "%s", err ? err->message : "");
    ck_assert_uint_eq(t->comments->len, 2);
    ck_assert_str_eq(t->comments->pdata[0], " first");
    ck_assert_str_eq(t->comments->pdata[1], "second");
    ck_assert_uint_eq(t->rows->len, 2);
    ck_assert_uint_eq(g_array_index(t->row_lines, guint, 1), 8);
    csv_table_free(t);
}
END_TEST

START_TEST(test_torn)
{
    GError *err = NULL;
    /* Cut in the middle of the third line. */
    const char *in = "a,b\n1,2\n3,";
    CsvTable *t = read_str(in, CSV_READ_STRICT, &err);
    ck_assert(!t);
    ck_assert_msg(strstr(err->message, "t.csv:3:"), "%s", err->message);
    g_clear_error(&err);
    t = read_str(in, CSV_READ_ALLOW_TORN, &err);
    ck_assert(t);
    ck_assert(t->torn);
    ck_assert_uint_eq(t->rows->len, 1);
    ck_assert_uint_eq(t->complete_len, 8);  /* "a,b\n1,2\n" */
    csv_table_free(t);
    /* Cut inside a quoted field that holds a newline. */
    t = read_str("a,b\n1,\"x\ny", CSV_READ_ALLOW_TORN, &err);
    ck_assert(t && t->torn && t->rows->len == 0 && t->complete_len == 4);
    csv_table_free(t);
    /* A whole last record without its newline is torn too: vmsplit always
     * ends a record with one. */
    t = read_str("a,b\n1,2", CSV_READ_ALLOW_TORN, &err);
    ck_assert(t && t->torn && t->rows->len == 0);
    csv_table_free(t);
    /* A torn comment before any header. */
    t = read_str("# vmsplit-sw", CSV_READ_ALLOW_TORN | CSV_READ_ALLOW_EMPTY, &err);
    ck_assert(t && t->torn && !t->header && t->complete_len == 0);
    csv_table_free(t);
}
END_TEST

START_TEST(test_errors_name_line)
{
    static const struct {
        const char *in;
        const char *expect;
    } cases[] = {
        {"a,b\n1,2\n1,2,3\n", "t.csv:3: expected 2 fields as in the header, found 3"},
        {"a,b\n1\n", "t.csv:2: expected 2 fields as in the header, found 1"},
        {"a,b\n1,x\"y\n", "t.csv:2: a '\"' inside an unquoted field"},
        {"a,b\n\"1\"x,2\n", "t.csv:2: expected ',' or the end of the line after a closing quote"},
        {"a,b,a\n", "t.csv:1: column 'a' appears twice"},
        {"", "t.csv:1: expected a header line"},
        {"# only a comment\n", "t.csv:2: expected a header line"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *err = NULL;
        CsvTable *t = read_str(cases[i].in, CSV_READ_STRICT, &err);
        ck_assert_msg(!t, "case %zu parsed", i);
        ck_assert_msg(g_str_has_prefix(err->message, cases[i].expect), "case %zu: %s", i,
                      err->message);
        g_error_free(err);
    }
}
END_TEST

START_TEST(test_require)
{
    GError *err = NULL;
    CsvTable *t = read_str("# c\nx,y\n1,2\n", CSV_READ_STRICT, &err);
    const char *ok[] = {"x", "y", NULL};
    ck_assert(csv_table_require(t, ok, &err));
    const char *bad[] = {"x", "overhead_pct", "layout", NULL};
    ck_assert(!csv_table_require(t, bad, &err));
    ck_assert_str_eq(err->message, "t.csv:2: missing column(s) overhead_pct, layout in the header");
    g_error_free(err);
    csv_table_free(t);
}
END_TEST

START_TEST(test_missing_file)
{
    GError *err = NULL;
    ck_assert(!csv_read_file("/nonexistent/x.csv", CSV_READ_STRICT, &err));
    ck_assert(g_error_matches(err, REPORT_ERROR, REPORT_ERROR_IO));
    ck_assert(strstr(err->message, "/nonexistent/x.csv"));
    g_error_free(err);
}
END_TEST

static Suite *csv_suite(void)
{
    Suite *s = suite_create("csv");
    TCase *tc = tcase_create("csv");
    tcase_add_test(tc, test_write_quoting);
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_rfc4180_example);
    tcase_add_test(tc, test_comments_and_blank_lines);
    tcase_add_test(tc, test_torn);
    tcase_add_test(tc, test_errors_name_line);
    tcase_add_test(tc, test_require);
    tcase_add_test(tc, test_missing_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(csv_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
