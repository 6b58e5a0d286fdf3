/* The latency histogram (src/replay/latency_hist.h) against its definition
 * computed from the sorted samples: the q-quantile is the ceil(q n)-th
 * smallest sample x truncated to its bucket's lower bound, which is x
 * itself below 128 and x with all but its 7 top bits cleared above. */
#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "replay/latency_hist.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* x with all but its 7 top bits cleared (x itself below 128). */
static uint64_t top7(uint64_t x)
{
    if (x < 128)
        return x;
    int msb = 63 - __builtin_clzll(x);
    return x >> (msb - 6) << (msb - 6);
}

static uint64_t expected(uint64_t *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp_u64);
    size_t rank = (size_t)ceil(q * (double)n);
    return top7(v[(rank ? rank : 1) - 1]);
}

/* Samples drawn by kind k: exact range, a narrow band (one system call's
 * latencies), a spread over many powers of two, the largest values. */
static uint64_t draw(GRand *g, int k)
{
    switch (k) {
    case 0: return (uint64_t)g_rand_int_range(g, 0, 128);
    case 1: return 1700 + (uint64_t)g_rand_int_range(g, 0, 900);
    case 2: return (uint64_t)g_rand_int(g) << g_rand_int_range(g, 0, 32);
    default: return UINT64_MAX - (uint64_t)g_rand_int(g);
    }
}

START_TEST(test_quantiles_match_definition)
{
    static const double qs[] = { 0.001, 0.01, 0.5, 0.9, 0.99, 1.0 };
    GRand *g = g_rand_new_with_seed(7 + (guint32)_i);
    for (int round = 0; round < 40; round++) {
        size_t n = 1 + (size_t)g_rand_int_range(g, 0, 3000);
        uint64_t *v = g_new(uint64_t, n);
        LatencyHist h = { 0 };
        for (size_t i = 0; i < n; i++) {
            /* _i picks the mix: one kind, or all kinds together */
            v[i] = draw(g, _i < 4 ? _i : g_rand_int_range(g, 0, 4));
            lhist_add(&h, v[i]);
        }
        ck_assert_uint_eq(h.n, n);
        for (size_t k = 0; k < G_N_ELEMENTS(qs); k++) {
            uint64_t want = expected(v, n, qs[k]), got = lhist_quantile(&h, qs[k]);
            ck_assert_msg(got == want, "mix %d, n %zu, q %.3f: %" G_GUINT64_FORMAT
                          " != %" G_GUINT64_FORMAT, _i, n, qs[k], got, want);
        }
        lhist_clear(&h);
        g_free(v);
    }
    g_rand_free(g);
}
END_TEST

START_TEST(test_empty_and_clear)
{
    LatencyHist h = { 0 };
    ck_assert_uint_eq(lhist_quantile(&h, 0.5), 0);
    lhist_add(&h, 5000);
    lhist_add(&h, 3);
    ck_assert_uint_eq(lhist_quantile(&h, 0.5), 3);
    ck_assert_uint_eq(lhist_quantile(&h, 1.0), top7(5000));
    lhist_clear(&h);
    ck_assert_uint_eq(h.n, 0);
    ck_assert_uint_eq(lhist_quantile(&h, 0.99), 0);
    lhist_add(&h, 1u << 20);                 /* usable again after a clear */
    ck_assert_uint_eq(lhist_quantile(&h, 0.5), 1u << 20);
    lhist_clear(&h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("latency_hist");
    TCase *tc = tcase_create("hist");
    tcase_add_loop_test(tc, test_quantiles_match_definition, 0, 5);
    tcase_add_test(tc, test_empty_and_clear);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
