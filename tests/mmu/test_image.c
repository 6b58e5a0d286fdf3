/* Tests of the machine-image parser (src/mmu/image.c, format in
 * docs/image-format.md): good images load exactly, bad ones fail with a
 * message that names the file, the line and what was expected. */
#include <check.h>
#include <string.h>

#include "mmu/image.h"

static bool parse(const char *text, size_t len, PhysMem *pm, MachineImage *img, GError **err)
{
    return image_parse("test.img", text, len, pm, img, err);
}

START_TEST(test_good_image)
{
    static const char text[] =
        "# a header comment\n"
        "\n"
        "CR3   0x1020   # upper case, trailing comment\n"
        "cr0.wp 1\r\n"                              /* CRLF */
        "cr4.pge 0\n"
        "efer.nxe 1\n"
        "cr0.pg 1\n"
        "cr4.pae 1\n"
        "   # indented comment\n"
        "q 0x2000 0x0000000000003067\n"
        "Q 8200 18446744073709551615\n"             /* decimal: 0x2008, 2^64-1 */
        "d 0x3000 0xdeadbeef\n"
        "d 0x3004 4096\n"
        "q 0xffffffff8 0x1\n"                       /* the last 8 bytes of 64 GiB */
        "\tq\t0x4000\t010";                         /* tabs; 010 is ten; no final newline */
    PhysMem *pm = physmem_new();
    MachineImage img;
    GError *err = NULL;
    ck_assert_msg(parse(text, strlen(text), pm, &img, &err), "%s", err ? err->message : "");
    ck_assert_uint_eq(img.cr3, 0x1020);
    ck_assert(img.cr0_wp && !img.cr4_pge && img.efer_nxe && img.cr0_pg && img.cr4_pae);
    ck_assert_uint_eq(img.nstores, 6);
    ck_assert_uint_eq(physmem_read64(pm, 0x2000), 0x3067);
    ck_assert_uint_eq(physmem_read64(pm, 0x2008), UINT64_MAX);
    ck_assert_uint_eq(physmem_read64(pm, 0x3000), 0x00001000deadbeefULL);
    ck_assert_uint_eq(physmem_read64(pm, 0xffffffff8ULL), 1);
    ck_assert_uint_eq(physmem_read64(pm, 0x4000), 10);
    ck_assert_uint_eq(physmem_frames_used(pm), 4);
    physmem_free(pm);
}
END_TEST

START_TEST(test_defaults)
{
    PhysMem *pm = physmem_new();
    MachineImage img;
    ck_assert(parse("cr3 0", 5, pm, &img, NULL));
    ck_assert_uint_eq(img.cr3, 0);
    ck_assert(img.cr0_pg && img.cr4_pae && !img.cr0_wp && !img.cr4_pge && !img.efer_nxe);
    ck_assert_uint_eq(img.nstores, 0);
    ck_assert_uint_eq(physmem_frames_used(pm), 0);
    physmem_free(pm);
}
END_TEST

/* Malformed images: the error code, the line, and words the message must
 * contain (what was wrong and what was expected). */
static const struct {
    const char *text;
    ImageError code;
    unsigned line;               /* 0: a whole-file error */
    const char *says, *expected;
} bad[] = {
    { "cr3 0x1000\nfoo 1\n", IMAGE_ERROR_SYNTAX, 2, "unknown directive 'foo'", "expected cr3" },
    { "cr3 0x1000\n\n# c\nq 0x2000 0x12g\n", IMAGE_ERROR_SYNTAX, 4, "bad number '0x12g'", "expected 0x" },
    { "cr3 0x1000\nq 0x 1\n", IMAGE_ERROR_SYNTAX, 2, "bad number '0x'", "expected" },
    { "cr3 0x1000\nq 1e3 1\n", IMAGE_ERROR_SYNTAX, 2, "bad number '1e3'", "expected" },
    { "cr3 -1\n", IMAGE_ERROR_SYNTAX, 1, "bad number '-1'", "expected" },
    { "cr3 0x1000\nq 0x2000 0x10000000000000000\n", IMAGE_ERROR_SYNTAX, 2, "bad number", "expected" },
    { "cr3 0x1000\nq 0x2000 18446744073709551616\n", IMAGE_ERROR_SYNTAX, 2, "bad number", "expected" },
    { "cr3 0x1000\nq 0x2004 1\n", IMAGE_ERROR_RANGE, 2, "not 8-byte aligned", "expected a multiple of 8" },
    { "cr3 0x1000\nd 0x2002 1\n", IMAGE_ERROR_RANGE, 2, "not 4-byte aligned", "expected a multiple of 4" },
    { "cr3 0x1000\nq 0x1000000000 1\n", IMAGE_ERROR_RANGE, 2, "beyond the 36-bit", "expected at most 0xffffffff8" },
    { "cr3 0x1000\nd 0xffffffffffffff00 1\n", IMAGE_ERROR_RANGE, 2, "beyond the 36-bit", "expected at most 0xffffffffc" },
    { "cr3 0x100000000\n", IMAGE_ERROR_RANGE, 1, "does not fit in 32 bits", "expected at most 0xffffffff" },
    { "cr3 0x1000\nd 0x2000 0x100000000\n", IMAGE_ERROR_RANGE, 2, "does not fit in 32 bits", "expected at most" },
    { "cr3 0x1000\ncr0.wp 2\n", IMAGE_ERROR_RANGE, 2, "not a flag", "expected 0 or 1" },
    { "cr3 0x1000\ncr4.pae 2\n", IMAGE_ERROR_RANGE, 2, "not a flag", "expected 0 or 1" },
    { "cr3 0x1000\ncr4.pse 0\ncr4.pse 1\n", IMAGE_ERROR_DUPLICATE, 3, "already set at line 2", "cr4.pse" },
    { "cr3 0x1000\ncr0.pg 0\n", IMAGE_ERROR_RANGE, 2, "paging turned on", "expected 1" },
    { "cr3 0x1000\nefer.nxe 1\nEFER.NXE 0\n", IMAGE_ERROR_DUPLICATE, 3, "already set at line 2", "efer.nxe" },
    { "cr3 0x1000\ncr3 0x2000\n", IMAGE_ERROR_DUPLICATE, 2, "already set at line 1", "cr3" },
    { "cr3 0x1000\nq 0x2000 1\nd 0x2004 1\n", IMAGE_ERROR_DUPLICATE, 3, "overlaps the store at line 2", "expected" },
    { "cr3 0x1000\nd 0x2004 1\nq 0x2000 1\n", IMAGE_ERROR_DUPLICATE, 3, "overlaps the store at line 2", "expected" },
    { "cr3 0x1000\nq 0x2000 1 2\n", IMAGE_ERROR_SYNTAX, 2, "unexpected '2'", "expected end of line" },
    { "cr3 0x1000 # ok\nefer.nxe 1 1\n", IMAGE_ERROR_SYNTAX, 2, "unexpected '1'", "expected end of line" },
    { "cr3 0x1000\nq 0x2000\n", IMAGE_ERROR_SYNTAX, 2, "needs an address and a value", "expected 'q ADDR VALUE'" },
    { "cr3\n", IMAGE_ERROR_SYNTAX, 1, "needs a value", "expected 'cr3 VALUE'" },
    { "cr3 0x1000\r\nq 0x2000 1\r\nfoo\r\n", IMAGE_ERROR_SYNTAX, 3, "unknown directive 'foo'", "expected" },
    { "cr3 0x1000\nq=0x2000 1\n", IMAGE_ERROR_SYNTAX, 2, "unknown directive 'q=0x2000'", "expected" },
    { "# only comments\n\n", IMAGE_ERROR_MISSING, 0, "no cr3 directive", "expected a line such as 'cr3" },
    { "", IMAGE_ERROR_MISSING, 0, "no cr3 directive", "expected" },
    { "q 0x2000 1\n", IMAGE_ERROR_MISSING, 0, "no cr3 directive", "expected" },
};

START_TEST(test_malformed)
{
    PhysMem *pm = physmem_new();
    MachineImage img;
    GError *err = NULL;
    ck_assert_msg(!parse(bad[_i].text, strlen(bad[_i].text), pm, &img, &err),
                  "case %d parsed: %s", _i, bad[_i].text);
    ck_assert(err && err->domain == IMAGE_ERROR);
    ck_assert_msg(err->code == (int)bad[_i].code, "case %d: code %d, expected %d (%s)", _i,
                  err->code, bad[_i].code, err->message);
    g_autofree char *where = bad[_i].line ? g_strdup_printf("test.img:%u: ", bad[_i].line)
                                          : g_strdup("test.img: ");
    ck_assert_msg(g_str_has_prefix(err->message, where), "case %d: '%s' should start with '%s'",
                  _i, err->message, where);
    ck_assert_msg(strstr(err->message, bad[_i].says) && strstr(err->message, bad[_i].expected),
                  "case %d: '%s' should say '%s' and '%s'", _i, err->message, bad[_i].says,
                  bad[_i].expected);
    g_error_free(err);
    physmem_free(pm);
}
END_TEST

START_TEST(test_nul_byte)
{
    static const char text[] = "cr3 0x1000\nq 0x2000\0 1\n";
    PhysMem *pm = physmem_new();
    MachineImage img;
    GError *err = NULL;
    ck_assert(!parse(text, sizeof text - 1, pm, &img, &err));
    ck_assert_msg(g_str_has_prefix(err->message, "test.img:2: ") && strstr(err->message, "NUL"),
                  "%s", err->message);
    g_error_free(err);
    physmem_free(pm);
}
END_TEST

START_TEST(test_missing_file)
{
    PhysMem *pm = physmem_new();
    MachineImage img;
    GError *err = NULL;
    ck_assert(!image_load("/nonexistent/dir/tables.img", pm, &img, &err));
    ck_assert(g_error_matches(err, IMAGE_ERROR, IMAGE_ERROR_IO));
    ck_assert_msg(strstr(err->message, "/nonexistent/dir/tables.img"), "%s", err->message);
    g_error_free(err);
    physmem_free(pm);
}
END_TEST

START_TEST(test_cr3_load_after_all_stores)
{
    /* cr3 comes first in the file, the PDPT later: the MOV CR3 still sees
     * the PDPT, because it happens after every store. */
    static const char text[] =
        "cr3 0x5000\n"
        "efer.nxe 1\n"
        "q 0x5000 0x6001\n"
        "q 0x5018 0x7001\n"
        "q 0x6000 0x8067\n"
        "q 0x8008 0x8000000000009067\n";
    PhysMem *pm = physmem_new();
    MachineImage img;
    ck_assert(parse(text, strlen(text), pm, &img, NULL));
    PaeRegs regs;
    PaeRef refs[4];
    int bad_pdpte = 99;
    ck_assert(image_load_cr3(&img, pm, &regs, &bad_pdpte, refs));
    ck_assert_uint_eq(regs.cr3, 0x5000);
    ck_assert(regs.nxe && !regs.wp);
    ck_assert_uint_eq(regs.pdpte[0], 0x6001);
    ck_assert_uint_eq(regs.pdpte[3], 0x7001);
    ck_assert_uint_eq(refs[2].paddr, 0x5010);
    PaeWalk w;
    ck_assert(pae_walk(&regs, pm, 0x1234, ACCESS_READ, 3, &w));
    ck_assert_uint_eq(w.paddr, 0x9234);
    ck_assert(!pae_walk(&regs, pm, 0x1234, ACCESS_EXEC, 3, &w));
    ck_assert_uint_eq(w.error_code, 0x15);
    physmem_free(pm);
}
END_TEST

START_TEST(test_cr3_load_gp)
{
    /* PDPTE 2 has bit 5 (A) set: reserved in a PAE PDPTE, so the MOV CR3
     * raises #GP(0). That is not a parse error. */
    static const char text[] =
        "cr3 0x1000\ncr0.wp 1\n"
        "q 0x1000 0x2001\n"
        "q 0x1010 0x3021\n"
        "q 0x1018 0x4003\n";
    PhysMem *pm = physmem_new();
    MachineImage img;
    ck_assert(parse(text, strlen(text), pm, &img, NULL));
    PaeRegs regs;
    memset(&regs, 0xff, sizeof regs);
    int bad_pdpte = -7;
    ck_assert(!image_load_cr3(&img, pm, &regs, &bad_pdpte, NULL));
    ck_assert_int_eq(bad_pdpte, 2);
    ck_assert(regs.wp && !regs.nxe && regs.cr3 == 0);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(regs.pdpte[i], 0);
    physmem_free(pm);
}
END_TEST

START_TEST(test_cr3_load_legacy)
{
    /* cr4.pae 0: 32-bit paging. CR3 names the page directory; nothing is
     * loaded, so "PDPTEs" with reserved bits (bit 1 of the word at CR3)
     * are no #GP, the PDPTE registers stay zero and refs is not written
     * (SDM Vol. 3A §4.3). */
    static const char text[] =
        "cr3 0x1018\ncr4.pae 0\ncr4.pse 1\nefer.nxe 1\n"
        "d 0x1000 0x2003\n"
        "d 0x1004 0x2003\n";
    PhysMem *pm = physmem_new();
    MachineImage img;
    ck_assert(parse(text, strlen(text), pm, &img, NULL));
    ck_assert(!img.cr4_pae && img.cr4_pse && img.efer_nxe);
    ck_assert_int_eq(image_paging_mode(&img), PAGING_LEGACY);
    PaeRegs regs;
    memset(&regs, 0xff, sizeof regs);
    PaeRef refs[4];
    memset(refs, 0x5a, sizeof refs);
    int bad = -7;
    ck_assert(image_load_cr3(&img, pm, &regs, &bad, refs));
    ck_assert_int_eq(bad, -7);
    ck_assert_uint_eq(regs.cr3, 0x1018);
    ck_assert(regs.mode == PAGING_LEGACY && regs.pse && regs.nxe && !regs.wp);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(regs.pdpte[i], 0);
    ck_assert_uint_eq(refs[0].paddr, 0x5a5a5a5a5a5a5a5aULL);
    physmem_free(pm);
}
END_TEST

START_TEST(test_parse_number)
{
    static const struct { const char *s; bool ok; uint64_t v; } t[] = {
        { "0", true, 0 },
        { "4096", true, 4096 },
        { "010", true, 10 },
        { "0x0", true, 0 },
        { "0X1f", true, 0x1f },
        { "0xDeadBeef", true, 0xdeadbeef },
        { "18446744073709551615", true, UINT64_MAX },
        { "0xffffffffffffffff", true, UINT64_MAX },
        { "0x0000000000000000ff", true, 0xff },
        { "18446744073709551616", false, 0 },
        { "0x10000000000000000", false, 0 },
        { "", false, 0 },
        { "0x", false, 0 },
        { "-1", false, 0 },
        { "+1", false, 0 },
        { "1k", false, 0 },
        { "0x1g", false, 0 },
        { " 1", false, 0 },
        { "1 ", false, 0 },
        { "0b101", false, 0 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++) {
        uint64_t v = 12345;
        bool ok = image_parse_number(t[i].s, &v);
        ck_assert_msg(ok == t[i].ok, "'%s': %s", t[i].s, ok ? "accepted" : "refused");
        if (ok)
            ck_assert_msg(v == t[i].v, "'%s' -> %llu", t[i].s, (unsigned long long)v);
    }
}
END_TEST

START_TEST(test_bundled_images)
{
    /* Every bundled image parses; those named gp-* fault at the CR3 load and
     * no other does. */
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    ck_assert_msg(src, "VMSPLIT_SOURCE_DIR is not set");
    g_autofree char *dir = g_build_filename(src, "workloads", "images", NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    ck_assert_msg(d, "cannot open %s", dir);
    int n = 0;
    for (const char *name; (name = g_dir_read_name(d));) {
        if (!g_str_has_suffix(name, ".img"))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        PhysMem *pm = physmem_new();
        MachineImage img;
        GError *err = NULL;
        ck_assert_msg(image_load(path, pm, &img, &err), "%s", err ? err->message : "");
        ck_assert_msg(img.nstores > 0, "%s stores nothing", name);
        PaeRegs regs;
        bool loaded = image_load_cr3(&img, pm, &regs, NULL, NULL);
        ck_assert_msg(loaded == !g_str_has_prefix(name, "gp-"), "%s: CR3 load %s", name,
                      loaded ? "succeeded" : "faulted");
        physmem_free(pm);
        n++;
    }
    g_dir_close(d);
    ck_assert_int_ge(n, 8);
}
END_TEST

static Suite *image_suite(void)
{
    Suite *s = suite_create("image");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_good_image);
    tcase_add_test(tc, test_defaults);
    tcase_add_loop_test(tc, test_malformed, 0, G_N_ELEMENTS(bad));
    tcase_add_test(tc, test_nul_byte);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_parse_number);
    suite_add_tcase(s, tc);
    tc = tcase_create("load");
    tcase_add_test(tc, test_cr3_load_after_all_stores);
    tcase_add_test(tc, test_cr3_load_gp);
    tcase_add_test(tc, test_cr3_load_legacy);
    tcase_add_test(tc, test_bundled_images);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(image_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
