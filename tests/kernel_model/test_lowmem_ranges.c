/* The lowmem model's ranged estimates (lowmem.h: lowmem_estimates), which
 * vmsplit claim samples for its lowmem statements' intervals.
 *
 *   - every estimate's default lies in its range, and the defaults are the
 *     model's (struct page 40 B, TOLM 0xEB000000, the 2464 KiB image);
 *   - the TOLM and the image reach the model: the default map equals the
 *     one built with the default TOLM; a larger image takes exactly its
 *     difference (page-rounded) out of LowTotal;
 *   - worked by hand, why the boot statement is UNDECIDED over the range:
 *     with 64 GiB of RAM, mem_map is 16 Mi frames x struct page. At 40 B
 *     that is 640 MiB of the 896 MiB 3G/1G lowmem and the kernel boots;
 *     at 56 B (the range's top, the mail's "nearly 1 GB") it is 896 MiB,
 *     all of lowmem, and it cannot;
 *   - a lower TOLM moves 4G/4G's lowmem (its limit, 3936 MiB, is above
 *     the hole) by the hole's growth (at 64 GiB, where the RAM above 4 GiB
 *     is capped at the PAE limit, mem_map stays 16 Mi frames); 3G/1G's
 *     lowmem RAM (896 MiB, below the hole) stays, and at 32 GiB it loses
 *     only the struct pages of the frames the hole pushes above 4 GiB:
 *     448 MiB / 4 KiB x 40 B = 4480 KiB, plus their buddy-bitmap bits. */
#include "kernel_model/layout_mem.h"
#include "kernel_model/lowmem.h"

#include <check.h>
#include <string.h>

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static LowmemReport report(const char *layout, uint64_t ram, uint64_t tolm, uint32_t sp,
                           uint64_t image)
{
    LowmemMap m;
    LowmemReport r;
    LowmemParams p = { .struct_page_bytes = sp, .image_bytes = image };
    ck_assert(lowmem_map_default_tolm(&m, ram, tolm, NULL));
    ck_assert(lowmem_compute(layout_mem_find(layout), &m, &p, &r, NULL));
    return r;
}

START_TEST(defaults_in_ranges)
{
    for (int d = 0; d < LOWMEM_NEST; d++) {
        const LowmemEstimate *e = &lowmem_estimates[d];
        ck_assert_msg(e->lo < e->hi && e->lo <= e->value && e->value <= e->hi, "%s", e->name);
        ck_assert(e->why && strlen(e->why) > 20);
    }
    ck_assert_uint_eq(lowmem_estimates[LOWMEM_EST_STRUCT_PAGE].value, 40);
    ck_assert_uint_eq(lowmem_estimates[LOWMEM_EST_TOLM].value << 20, 0xEB000000ULL);
    ck_assert_uint_eq(lowmem_estimates[LOWMEM_EST_IMAGE].value, 1635 + 486 + 343);
}
END_TEST

START_TEST(estimates_reach_the_model)
{
    LowmemMap a, b;
    ck_assert(lowmem_map_default(&a, 64 * GiB, NULL));
    ck_assert(lowmem_map_default_tolm(&b, 64 * GiB, LOWMEM_DEFAULT_TOLM, NULL));
    ck_assert(a.n == b.n && !memcmp(a.range, b.range, a.n * sizeof a.range[0]));

    LowmemReport r0 = report("3g1g", 4 * GiB, LOWMEM_DEFAULT_TOLM, 0, 0);
    LowmemReport r1 = report("3g1g", 4 * GiB, LOWMEM_DEFAULT_TOLM, 0, 4096 * 1024);
    ck_assert_uint_eq(lowmem_report_item(&r1, "kernel image")->bytes, 4 * MiB);
    ck_assert_uint_eq(r0.low_total_kb - r1.low_total_kb, (4 * MiB - 2464 * 1024) / 1024);
}
END_TEST

START_TEST(boot_at_the_ends_of_struct_page)
{
    LowmemReport r40 = report("3g1g", 64 * GiB, LOWMEM_DEFAULT_TOLM, 40, 0);
    LowmemReport r56 = report("3g1g", 64 * GiB, LOWMEM_DEFAULT_TOLM, 56, 0);
    ck_assert_uint_eq(r40.mem_map_bytes, 16 * MiB * 40);
    ck_assert_uint_eq(r56.mem_map_bytes, 896 * MiB);
    ck_assert(r40.boots);
    ck_assert(!r56.boots);
    /* Where it turns: 52 B leave 896 - 832 - 8 (hashes) - ~8 (bitmaps,
     * tables, image) MiB, under the 64 MiB floor; 48 B leave about 110. */
    ck_assert(report("3g1g", 64 * GiB, LOWMEM_DEFAULT_TOLM, 48, 0).boots);
    ck_assert(!report("3g1g", 64 * GiB, LOWMEM_DEFAULT_TOLM, 52, 0).boots);
}
END_TEST

START_TEST(tolm_moves_4g4g_only)
{
    uint64_t lo = 3392 * MiB, hi = 3840 * MiB;
    LowmemReport a = report("4g4g", 64 * GiB, lo, 0, 0), b = report("4g4g", 64 * GiB, hi, 0, 0);
    ck_assert_uint_eq((b.low_total_kb - a.low_total_kb) * 1024, hi - lo);
    LowmemReport c = report("3g1g", 32 * GiB, lo, 0, 0), d = report("3g1g", 32 * GiB, hi, 0, 0);
    ck_assert_uint_eq(c.low_ram_pages, d.low_ram_pages);
    uint64_t grown = (hi - lo) / 4096 * 40 / 1024;
    ck_assert_msg(d.low_total_kb - c.low_total_kb >= grown &&
                  d.low_total_kb - c.low_total_kb <= grown + 64, "%" G_GUINT64_FORMAT " kB",
                  d.low_total_kb - c.low_total_kb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lowmem-ranges");
    TCase *tc = tcase_create("lowmem-ranges");
    tcase_add_test(tc, defaults_in_ranges);
    tcase_add_test(tc, estimates_reach_the_model);
    tcase_add_test(tc, boot_at_the_ends_of_struct_page);
    tcase_add_test(tc, tolm_moves_4g4g_only);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
