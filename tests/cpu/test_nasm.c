/* Run-time nasm (src/cpu/nasm.c): `vmsplit run PROGRAM.asm` assembles with
 * it. The object must be the one whose bytes tests/cpu/test_elfload.c works
 * out by hand; errors must carry nasm's own file:line diagnostics. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/elfload.h"
#include "cpu/nasm.h"

static char *source_path(const char *rel)
{
    const char *s = g_getenv("VMSPLIT_SOURCE_DIR");
    ck_assert_msg(s != NULL, "VMSPLIT_SOURCE_DIR not set");
    return g_build_filename(s, rel, NULL);
}

START_TEST(test_nasm_assemble)
{
    char *src = source_path("tests/cpu/data/reloc.asm");
    GError *e = NULL;
    char *obj = nasm_assemble(src, &e);
    ck_assert_msg(obj != NULL, "%s", e ? e->message : "?");
    ck_assert(g_str_has_suffix(obj, "/reloc.o"));
    /* Linked as in test_elfload.c: .text at 0x401000, .data at 0x402000,
     * ext_func = 0x500000. call ext_func: 0x500000 - 4 - 0x401001 =
     * 0x000FEFFB; mov eax, [counter]: 0x402000 + 4. */
    static const ElfAddr sections[] = { { ".text", 0x401000 }, { ".data", 0x402000 } };
    static const ElfAddr externs[] = { { "ext_func", 0x500000 }, { "ext_data", 0xC0100000 } };
    ElfLoadOptions lo = { .base = 0x403000, .sections = sections, .n_sections = 2,
                          .externs = externs, .n_externs = 2 };
    GError *le = NULL;
    ElfObject *o = elfload_file(obj, &lo, &le);
    ck_assert_msg(o != NULL, "%s", le ? le->message : "?");
    const ElfSegment *t = elfload_segment_by_name(o, ".text");
    ck_assert(t != NULL);
    static const uint8_t head[10] = { 0xE8, 0xFB, 0xEF, 0x0F, 0x00, 0xA1, 0x04, 0x20, 0x40, 0x00 };
    ck_assert_mem_eq(t->bytes, head, sizeof head);
    elfload_free(o);
    char *dir = g_path_get_dirname(obj);
    nasm_remove_output(obj);
    ck_assert(!g_file_test(obj, G_FILE_TEST_EXISTS));
    ck_assert(!g_file_test(dir, G_FILE_TEST_EXISTS));
    g_free(dir);
    g_free(obj);
    g_free(src);
}
END_TEST

START_TEST(test_nasm_errors)
{
    char *dir = g_dir_make_tmp("vmsplit-nasmtest-XXXXXX", NULL);
    char *src = g_build_filename(dir, "bad.asm", NULL);
    ck_assert(g_file_set_contents(src, "BITS 32\n    mov eax,\n", -1, NULL));
    GError *e = NULL;
    ck_assert(nasm_assemble(src, &e) == NULL);
    ck_assert(e && e->domain == NASM_ERROR && e->code == NASM_ERROR_FAILED);
    ck_assert_msg(g_str_has_prefix(e->message, src), "%s", e->message);
    char *where = g_strconcat(src, ":2: error", NULL);            /* nasm's own diagnostic */
    ck_assert_msg(strstr(e->message, where), "%s", e->message);
    g_free(where);
    g_clear_error(&e);
    g_unlink(src);
    ck_assert(nasm_assemble(src, &e) == NULL);                   /* now missing */
    ck_assert(e && e->code == NASM_ERROR_INPUT);
    ck_assert(g_str_has_prefix(e->message, src));
    g_clear_error(&e);
    g_rmdir(dir);
    g_free(src);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nasm");
    TCase *tc = tcase_create("nasm");
    tcase_add_test(tc, test_nasm_assemble);
    tcase_add_test(tc, test_nasm_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
