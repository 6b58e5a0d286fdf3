/* textfile (src/textfile/textfile.h) and the readers that share its check.
 *
 * Expected values worked by hand: the line of the first NUL in literal
 * buffers; for each reader that reads a text input whole (memory map,
 * preset, measurements, syscall profiles, fault profiles), its bundled
 * file with one NUL byte put into line K must be refused naming
 * "PATH:K: a NUL byte", while the same file without it loads. Before the
 * check, the map lost every range after a NUL and a preset key the digits
 * after one, silently or under a message about something else. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/measurements.h"
#include "kernel_model/lowmem.h"
#include "kernel_model/profiles.h"
#include "kernel_model/usermm.h"
#include "preset/preset.h"
#include "textfile/textfile.h"

static char *tmpdir;

START_TEST(nul_line_by_hand)
{
    static const struct {
        const char *text;
        gsize len;
        guint line;
    } cases[] = {
        { "", 0, 0 },
        { "abc\ndef\n", 8, 0 },
        { "\0", 1, 1 },
        { "a\0b\n", 4, 1 },
        { "a\nb\n\0\n", 6, 3 },
        { "a\n\nb\0c\0", 7, 3 },     /* the first NUL counts */
        { "a\nb", 2, 0 },            /* the length bounds the search: */
        { "a\nb\0", 3, 0 },          /* a NUL past it is not the text's */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
        ck_assert_msg(textfile_nul_line(cases[i].text, cases[i].len) == cases[i].line,
                      "case %zu: %u, expected %u", i,
                      textfile_nul_line(cases[i].text, cases[i].len), cases[i].line);
    GError *e = NULL;
    ck_assert(textfile_check("x = 1\n", 6, "f.ini", G_IO_ERROR, G_IO_ERROR_INVALID_DATA, &e));
    ck_assert_ptr_null(e);
    ck_assert(!textfile_check("x = 1\ny\0\n", 10, "f.ini", G_IO_ERROR,
                              G_IO_ERROR_INVALID_DATA, &e));
    ck_assert(g_error_matches(e, G_IO_ERROR, G_IO_ERROR_INVALID_DATA));
    ck_assert_str_eq(e->message, "f.ini:2: a NUL byte (expected a text file)");
    g_error_free(e);
}
END_TEST

/* The file at src (relative to the source tree) with a NUL byte put after
 * the first `col` bytes of its line `line`, written to the scratch
 * directory as name; returns its path. */
static char *with_nul(const char *src, const char *name, guint line, gsize col)
{
    char *in = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), src, NULL);
    char *text = NULL;
    gsize len = 0;
    ck_assert(g_file_get_contents(in, &text, &len, NULL));
    const char *p = text;
    for (guint l = 1; l < line; l++) {
        p = strchr(p, '\n');
        ck_assert_msg(p != NULL, "%s has fewer than %u lines", src, line);
        p++;
    }
    gsize at = (gsize)(p - text) + col;
    ck_assert(at <= len);
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, (const guint8 *)text, (guint)at);
    g_byte_array_append(b, (const guint8 *)"", 1);
    g_byte_array_append(b, (const guint8 *)text + at, (guint)(len - at));
    char *out = g_build_filename(tmpdir, name, NULL);
    ck_assert(g_file_set_contents(out, (const char *)b->data, b->len, NULL));
    g_byte_array_free(b, TRUE);
    g_free(text);
    g_free(in);
    return out;
}

/* err refuses path at line. */
static void refused_at(GError *err, const char *path, guint line)
{
    ck_assert_ptr_nonnull(err);
    char *want = g_strdup_printf("%s:%u: a NUL byte", path, line);
    ck_assert_msg(g_str_has_prefix(err->message, want), "'%s', expected '%s...'",
                  err->message, want);
    g_free(want);
    g_error_free(err);
}

/* The line of the first occurrence of needle in a source file. */
static guint line_of(const char *src, const char *needle)
{
    char *in = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), src, NULL);
    char *text = NULL;
    ck_assert(g_file_get_contents(in, &text, NULL, NULL));
    const char *at = strstr(text, needle);
    ck_assert_msg(at != NULL, "'%s' not in %s", needle, src);
    guint line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    g_free(text);
    g_free(in);
    return line;
}

START_TEST(memory_map)
{
    /* two ranges, 636 KiB and 1 MiB..1 GiB; the NUL inside the second */
    const char map[] = "0 0x9f000 usable\n0x100000\0 0x40000000 usable\n";
    char *path = g_build_filename(tmpdir, "map.e820", NULL);
    ck_assert(g_file_set_contents(path, map, sizeof map - 1, NULL));
    LowmemMap m;
    GError *e = NULL;
    ck_assert(!lowmem_map_load(&m, path, &e));
    refused_at(e, path, 2);
    /* without it: both ranges */
    const char good[] = "0 0x9f000 usable\n0x100000 0x40000000 usable\n";
    ck_assert(g_file_set_contents(path, good, sizeof good - 1, NULL));
    ck_assert(lowmem_map_load(&m, path, NULL));
    ck_assert_uint_eq(lowmem_map_ram_bytes(&m), 0x9f000 + 0x40000000 - 0x100000);
    g_free(path);
}
END_TEST

START_TEST(preset)
{
    /* "int_gate = 7" then NUL then "35": was read as 7 */
    guint line = line_of("presets/p4-northwood.ini", "int_gate = 735");
    char *path = with_nul("presets/p4-northwood.ini", "p4.ini", line, strlen("int_gate = 7"));
    GError *e = NULL;
    ck_assert_ptr_null(preset_load(path, &e));
    refused_at(e, path, line);
    g_free(path);
    char *ok = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "presets/p4-northwood.ini", NULL);
    Preset *p = preset_load(ok, NULL);
    ck_assert_ptr_nonnull(p);
    preset_free(p);
    g_free(ok);
}
END_TEST

START_TEST(measurements)
{
    const char *src = "validation/measurements.ini";
    guint line = line_of(src, "\nfigure") + 1;
    char *path = with_nul(src, "meas.ini", line, 3);
    GError *e = NULL;
    ck_assert_ptr_null(meas_load(path, &e));
    refused_at(e, path, line);
    g_free(path);
}
END_TEST

START_TEST(syscall_profiles)
{
    const char *src = "src/kernel_model/syscalls.ini";
    guint line = line_of(src, "\ninsns") + 1;
    char *path = with_nul(src, "syscalls.ini", line, 2);
    GError *e = NULL;
    ck_assert_ptr_null(profiles_load(path, &e));
    refused_at(e, path, line);
    g_free(path);
}
END_TEST

START_TEST(fault_profiles)
{
    const char *src = "src/kernel_model/faults.ini";
    guint line = line_of(src, "[cow-reuse]");   /* a NUL before a group's name */
    char *path = with_nul(src, "faults.ini", line, 0);
    UserFaultProfile prof[UFAULT_KINDS];
    GError *e = NULL;
    ck_assert(!usermm_profiles_load(path, prof, &e));
    refused_at(e, path, line);
    g_free(path);
}
END_TEST

int main(void)
{
    tmpdir = g_dir_make_tmp("vmsplit-textfile-XXXXXX", NULL);
    Suite *s = suite_create("textfile");
    TCase *tc = tcase_create("textfile");
    tcase_add_test(tc, nul_line_by_hand);
    tcase_add_test(tc, memory_map);
    tcase_add_test(tc, preset);
    tcase_add_test(tc, measurements);
    tcase_add_test(tc, syscall_profiles);
    tcase_add_test(tc, fault_profiles);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
    (void)!system(cmd);
    g_free(cmd);
    g_free(tmpdir);
    return failed ? 1 : 0;
}
