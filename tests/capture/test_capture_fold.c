/* Folding 64-bit addresses into the i686 user window (capture_fold.h),
 * checked against the properties the format promises rather than against
 * particular folded numbers: a sequence of references through several
 * mappings keeps its number of distinct pages, its order of first touch
 * (the folded page sequence is the original renamed one-to-one) and its
 * page offsets; every folded address lies in the window; a mapping's pages
 * stay adjacent; a fixed mapping inside a reserved span reuses the span's
 * addresses; a stack's reserve folds growth below it; freed space is
 * reused; a program larger than the window is an error. */
#include <check.h>
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "replay/capture_fold.h"

/* x86-64-looking mappings: a PIE binary, a heap, a library, a stack. */
static const uint64_t maps[][2] = {
    {0x555555554000ull, 0x5000},   {0x555555559000ull, 0x21000}, {0x7ffff7dd0000ull, 0x1d0000},
    {0x7ffff7fc0000ull, 0x4000},   {0x7ffffffde000ull, 0x21000},
};

static CaptureFold *fold_with_maps(void)
{
    CaptureFold *f = capture_fold_new();
    for (unsigned i = 0; i < G_N_ELEMENTS(maps); i++)
        ck_assert(capture_fold_map(f, maps[i][0], maps[i][1], 0, NULL));
    return f;
}

START_TEST(test_pages_order_offsets)
{
    CaptureFold *f = fold_with_maps();
    GRand *rnd = g_rand_new_with_seed(18);
    GHashTable *orig_to_fold = g_hash_table_new(g_int64_hash, g_int64_equal);
    GHashTable *fold_to_orig = g_hash_table_new(g_int64_hash, g_int64_equal);
    GArray *first_orig = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GArray *first_fold = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GHashTable *seen_o = g_hash_table_new(g_int64_hash, g_int64_equal);
    GHashTable *seen_f = g_hash_table_new(g_int64_hash, g_int64_equal);
    static uint64_t keys[2][20000];
    for (int i = 0; i < 20000; i++) {
        unsigned m = (unsigned)g_rand_int_range(rnd, 0, G_N_ELEMENTS(maps));
        uint64_t a = maps[m][0] + (uint64_t)g_rand_int_range(rnd, 0, (gint32)maps[m][1]);
        uint64_t fa;
        ck_assert(capture_fold_addr(f, a, &fa));
        ck_assert_uint_ge(fa, CAPTURE_FOLD_LOW);
        ck_assert_uint_lt(fa, CAPTURE_FOLD_HIGH);
        ck_assert_uint_eq(fa & 0xfff, a & 0xfff); /* offsets survive */
        keys[0][i] = a >> 12;
        keys[1][i] = fa >> 12;
        uint64_t *po = g_hash_table_lookup(orig_to_fold, &keys[0][i]);
        uint64_t *pf = g_hash_table_lookup(fold_to_orig, &keys[1][i]);
        /* one-to-one on pages: the same page always folds to the same page,
         * and no two pages fold to one */
        if (po)
            ck_assert_uint_eq(*po, keys[1][i]);
        else
            g_hash_table_insert(orig_to_fold, &keys[0][i], &keys[1][i]);
        if (pf)
            ck_assert_uint_eq(*pf, keys[0][i]);
        else
            g_hash_table_insert(fold_to_orig, &keys[1][i], &keys[0][i]);
        if (g_hash_table_add(seen_o, &keys[0][i]))
            g_array_append_val(first_orig, keys[0][i]);
        if (g_hash_table_add(seen_f, &keys[1][i]))
            g_array_append_val(first_fold, keys[1][i]);
    }
    /* same number of distinct pages, same order of first touch */
    ck_assert_uint_eq(first_orig->len, first_fold->len);
    for (guint i = 0; i < first_orig->len; i++) {
        uint64_t *fp = g_hash_table_lookup(orig_to_fold, &g_array_index(first_orig, uint64_t, i));
        ck_assert_uint_eq(*fp, g_array_index(first_fold, uint64_t, i));
    }
    g_hash_table_destroy(orig_to_fold), g_hash_table_destroy(fold_to_orig);
    g_hash_table_destroy(seen_o), g_hash_table_destroy(seen_f);
    g_array_free(first_orig, TRUE), g_array_free(first_fold, TRUE);
    g_rand_free(rnd);
    capture_fold_free(f);
}
END_TEST

START_TEST(test_mapping_stays_adjacent)
{
    CaptureFold *f = fold_with_maps();
    for (unsigned m = 0; m < G_N_ELEMENTS(maps); m++) {
        uint64_t base, fa;
        ck_assert(capture_fold_addr(f, maps[m][0], &base));
        for (uint64_t off = 0; off < maps[m][1]; off += 4096) {
            ck_assert(capture_fold_addr(f, maps[m][0] + off, &fa));
            ck_assert_uint_eq(fa, base + off);
        }
        CaptureFoldPiece pc[4];
        ck_assert_uint_eq(capture_fold_pieces(f, maps[m][0], maps[m][1], pc, 4), 1);
        ck_assert_uint_eq(pc[0].folded, base);
        ck_assert_uint_eq(pc[0].len, maps[m][1]);
    }
    uint64_t x;
    ck_assert(!capture_fold_addr(f, 0x1000, &x)); /* no mapping there */
    capture_fold_free(f);
}
END_TEST

/* ld.so reserves a library's whole span, then maps its segments MAP_FIXED
 * inside it: the segments keep the span's folded addresses. */
START_TEST(test_fixed_inside_reserved)
{
    CaptureFold *f = capture_fold_new();
    ck_assert(capture_fold_map(f, 0x7f0000000000ull, 0x10000, 0, NULL));
    uint64_t span, seg;
    ck_assert(capture_fold_addr(f, 0x7f0000000000ull, &span));
    uint64_t used = capture_fold_used(f);
    ck_assert(capture_fold_map(f, 0x7f0000003000ull, 0x2000, 0, NULL));
    ck_assert_uint_eq(capture_fold_used(f), used);
    ck_assert(capture_fold_addr(f, 0x7f0000003010ull, &seg));
    ck_assert_uint_eq(seg, span + 0x3010);
    capture_fold_free(f);
}
END_TEST

START_TEST(test_stack_reserve)
{
    CaptureFold *f = capture_fold_new();
    ck_assert(capture_fold_map(f, 0x7ffffffde000ull, 0x21000, 8u << 20, NULL));
    uint64_t top, below;
    ck_assert(capture_fold_addr(f, 0x7ffffffde000ull, &top));
    ck_assert(capture_fold_addr(f, 0x7ffffffde000ull - 0x5008, &below));
    ck_assert_uint_eq(below, top - 0x5008);
    ck_assert(!capture_fold_addr(f, 0x7ffffffde000ull - (8u << 20) - 1, &below));
    capture_fold_free(f);
}
END_TEST

START_TEST(test_unmap_frees_and_splits)
{
    CaptureFold *f = capture_fold_new();
    ck_assert(capture_fold_map(f, 0x10000000ull, 0x10000, 0, NULL));
    uint64_t a, b;
    ck_assert(capture_fold_addr(f, 0x1000f000ull, &b));
    capture_fold_unmap(f, 0x10004000ull, 0x4000); /* a hole in the middle */
    ck_assert(!capture_fold_addr(f, 0x10005000ull, &a));
    ck_assert(capture_fold_addr(f, 0x1000f000ull, &a));
    ck_assert_uint_eq(a, b); /* the rest did not move */
    CaptureFoldPiece pc[4];
    ck_assert_uint_eq(capture_fold_pieces(f, 0x10000000ull, 0x10000, pc, 4), 2);
    /* the freed space serves the next mapping of its size */
    ck_assert(capture_fold_map(f, 0x20000000ull, 0x4000, 0, NULL));
    ck_assert(capture_fold_addr(f, 0x20000000ull, &a));
    ck_assert(capture_fold_addr(f, 0x10000000ull, &b));
    ck_assert_uint_eq(a, b + 0x4000);
    capture_fold_free(f);
}
END_TEST

START_TEST(test_too_large)
{
    CaptureFold *f = capture_fold_new();
    GError *err = NULL;
    ck_assert(capture_fold_map(f, 0x10000000ull, 0x30000000ull, 0, NULL));
    ck_assert(!capture_fold_map(f, 0x7f0000000000ull, 0x20000000ull, 0, &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, "folded user window"), "%s", err->message);
    g_error_free(err);
    /* a fork copies: the copy maps independently */
    CaptureFold *c = capture_fold_copy(f);
    capture_fold_unmap(c, 0x10000000ull, 0x30000000ull);
    uint64_t x;
    ck_assert(capture_fold_addr(f, 0x10000000ull, &x));
    ck_assert(!capture_fold_addr(c, 0x10000000ull, &x));
    capture_fold_free(c);
    capture_fold_free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("capture-fold");
    TCase *tc = tcase_create("fold");
    tcase_add_test(tc, test_pages_order_offsets);
    tcase_add_test(tc, test_mapping_stays_adjacent);
    tcase_add_test(tc, test_fixed_inside_reserved);
    tcase_add_test(tc, test_stack_reserve);
    tcase_add_test(tc, test_unmap_frees_and_splits);
    tcase_add_test(tc, test_too_large);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
