/* Tests of sparse physical memory (src/mmu/physmem.c): 36-bit addresses,
 * 4 KiB frames allocated on the first write, zeros elsewhere. Expected
 * values are worked by hand (little-endian byte order, as on x86). */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "mmu/physmem.h"

#define GIB (1ULL << 30)
#define TOP (64 * GIB)                  /* 2^36 */

START_TEST(test_unwritten_reads_zero)
{
    PhysMem *pm = physmem_new();
    uint64_t addrs[] = { 0, 0x1000, 0xabcdef, 4 * GIB, TOP - 8, TOP - 4096 };
    for (size_t i = 0; i < G_N_ELEMENTS(addrs); i++) {
        ck_assert_uint_eq(physmem_read8(pm, addrs[i]), 0);
        ck_assert_uint_eq(physmem_read16(pm, addrs[i]), 0);
        ck_assert_uint_eq(physmem_read32(pm, addrs[i]), 0);
        ck_assert_uint_eq(physmem_read64(pm, addrs[i]), 0);
        ck_assert_ptr_null(physmem_frame_peek(pm, addrs[i]));
    }
    uint8_t buf[9000];
    memset(buf, 0x5a, sizeof buf);
    physmem_read(pm, 0x12345, buf, sizeof buf);         /* spans three frames */
    for (size_t i = 0; i < sizeof buf; i++)
        ck_assert_uint_eq(buf[i], 0);
    /* Reading costs nothing. */
    ck_assert_uint_eq(physmem_frames_used(pm), 0);
    physmem_free(pm);
}
END_TEST

START_TEST(test_sizes_and_byte_order)
{
    PhysMem *pm = physmem_new();
    physmem_write64(pm, 0x2000, 0x1122334455667788ULL);
    ck_assert_uint_eq(physmem_read8(pm, 0x2000), 0x88);
    ck_assert_uint_eq(physmem_read8(pm, 0x2007), 0x11);
    ck_assert_uint_eq(physmem_read16(pm, 0x2002), 0x5566);
    ck_assert_uint_eq(physmem_read32(pm, 0x2004), 0x11223344);
    physmem_write8(pm, 0x2001, 0xaa);
    physmem_write16(pm, 0x2004, 0xbbcc);
    /* bytes 88 aa 66 55 cc bb 22 11 */
    ck_assert_uint_eq(physmem_read64(pm, 0x2000), 0x1122bbcc5566aa88ULL);
    ck_assert_uint_eq(physmem_frames_used(pm), 1);
    physmem_free(pm);
}
END_TEST

START_TEST(test_cross_frame_access)
{
    PhysMem *pm = physmem_new();
    /* A 64-bit write at 0x1ffc: four bytes in frame 1, four in frame 2. */
    physmem_write64(pm, 0x1ffc, 0x0102030405060708ULL);
    ck_assert_uint_eq(physmem_frames_used(pm), 2);
    ck_assert_uint_eq(physmem_read32(pm, 0x1ffc), 0x05060708);
    ck_assert_uint_eq(physmem_read32(pm, 0x2000), 0x01020304);
    ck_assert_uint_eq(physmem_read64(pm, 0x1ffc), 0x0102030405060708ULL);
    ck_assert_uint_eq(physmem_read16(pm, 0x1fff), 0x0405);     /* bytes 05 | 04 */
    /* A 32-bit read across into a frame never written. */
    physmem_write8(pm, 0x5fff, 0x7f);
    ck_assert_uint_eq(physmem_read32(pm, 0x5fff), 0x7f);
    ck_assert_uint_eq(physmem_read64(pm, 0x5ffd), 0x7f0000ULL);
    ck_assert_uint_eq(physmem_frames_used(pm), 3);
    /* A bulk write over three frames, read back at an offset. */
    uint8_t in[6000], out[6000];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 7 + 3);
    physmem_write(pm, 0x10f00, in, sizeof in);          /* 0x10f00..0x12670 */
    ck_assert_uint_eq(physmem_frames_used(pm), 6);
    physmem_read(pm, 0x10f00, out, sizeof out);
    ck_assert(!memcmp(in, out, sizeof in));
    ck_assert_uint_eq(physmem_read8(pm, 0x11000), in[0x100]);
    ck_assert_uint_eq(physmem_read8(pm, 0x12670), 0);   /* just past the end */
    physmem_free(pm);
}
END_TEST

START_TEST(test_top_of_64g_costs_one_frame)
{
    PhysMem *pm = physmem_new();
    physmem_write64(pm, TOP - 8, 0xfedcba9876543210ULL);
    ck_assert_uint_eq(physmem_frames_used(pm), 1);
    ck_assert_uint_eq(physmem_read64(pm, TOP - 8), 0xfedcba9876543210ULL);
    ck_assert_uint_eq(physmem_read8(pm, TOP - 1), 0xfe);
    ck_assert_uint_eq(physmem_read64(pm, TOP - 16), 0);
    ck_assert_ptr_nonnull(physmem_frame_peek(pm, TOP - 4096));
    ck_assert_ptr_null(physmem_frame_peek(pm, TOP - 4097));
    physmem_free(pm);
}
END_TEST

START_TEST(test_frames_used_counts_written_frames)
{
    PhysMem *pm = physmem_new();
    /* One byte in each 4 GiB of the 64 GiB space: 16 frames. */
    for (uint64_t g = 0; g < 16; g++)
        physmem_write8(pm, g * 4 * GIB + 0x123, (uint8_t)g);
    ck_assert_uint_eq(physmem_frames_used(pm), 16);
    /* More writes to the same frames, and reads of others, cost nothing. */
    for (uint64_t g = 0; g < 16; g++) {
        physmem_write32(pm, g * 4 * GIB + 0xff0, 0xffffffff);
        ck_assert_uint_eq(physmem_read8(pm, g * 4 * GIB + 0x123), g);
        ck_assert_uint_eq(physmem_read8(pm, g * 4 * GIB + 0x1123), 0);
    }
    ck_assert_uint_eq(physmem_frames_used(pm), 16);
    /* Writing zero is a write: the frame exists afterwards. */
    physmem_write8(pm, 0x777000, 0);
    ck_assert_uint_eq(physmem_frames_used(pm), 17);
    /* physmem_frame_get allocates, once. */
    uint8_t *f = physmem_frame_get(pm, 0x888abc);
    ck_assert_ptr_eq(f, physmem_frame_get(pm, 0x888000));
    ck_assert_ptr_eq(f, physmem_frame_peek(pm, 0x888fff));
    ck_assert_uint_eq(physmem_frames_used(pm), 18);
    f[0xabc] = 0x42;
    ck_assert_uint_eq(physmem_read8(pm, 0x888abc), 0x42);
    physmem_free(pm);
}
END_TEST

/* Chunks with no frame share one chunk of NULLs (physmem.h): a frame
 * written in one memory must not appear in another, nor at the same
 * offset of another 16 MiB of the same memory, and every lookup of an
 * address never written, inline or not, finds no frame. */
START_TEST(test_empty_chunks_shared_not_written)
{
    PhysMem *a = physmem_new(), *b = physmem_new();
    const uint64_t x = 0x123456000ull, other = x + (16ull << 20);
    ck_assert_ptr_null(physmem_frame_peek(a, x));
    ck_assert_ptr_null(physmem_frame_peek_inline(b, x));
    ck_assert_ptr_null(physmem_frame_peek_base(a, other));
    physmem_write32(a, x + 4, 0xdeadbeef);
    ck_assert_ptr_nonnull(physmem_frame_peek(a, x));
    ck_assert_ptr_eq(physmem_frame_peek_base(a, x), physmem_frame_peek_inline(a, x + 99));
    ck_assert_ptr_null(physmem_frame_peek(b, x));
    ck_assert_ptr_null(physmem_frame_peek_inline(b, x));
    ck_assert_ptr_null(physmem_frame_peek_base(a, other));
    ck_assert_ptr_null(physmem_frame_peek_base(a, x + PAGE_SIZE));
    ck_assert_uint_eq(physmem_read32(b, x + 4), 0);
    ck_assert_uint_eq(physmem_read32(a, x + 4), 0xdeadbeef);
    ck_assert_uint_eq(physmem_read64_aligned(b, other), 0);
    physmem_free(a);
    PhysMem *c = physmem_new();      /* after a's chunks are gone */
    ck_assert_ptr_null(physmem_frame_peek(c, x));
    ck_assert_uint_eq(physmem_frames_used(c), 0);
    physmem_free(b);
    physmem_free(c);
}
END_TEST

START_TEST(test_free_null)
{
    physmem_free(NULL);
}
END_TEST

static Suite *physmem_suite(void)
{
    Suite *s = suite_create("physmem");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_unwritten_reads_zero);
    tcase_add_test(tc, test_sizes_and_byte_order);
    tcase_add_test(tc, test_cross_frame_access);
    tcase_add_test(tc, test_top_of_64g_costs_one_frame);
    tcase_add_test(tc, test_frames_used_counts_written_frames);
    tcase_add_test(tc, test_free_null);
    tcase_add_test(tc, test_empty_chunks_shared_not_written);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(physmem_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
