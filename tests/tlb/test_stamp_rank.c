/* stamp_rank (src/tlb/stamp_rank.h), the order behind the canonical LRU
 * and PDE-cache snapshots, against its definition counted directly: the
 * rank of i is the number of j with (stamp j, j) < (stamp i, i). Inputs:
 * sorted, reversed, rotated (a stream's set), ties (never-touched ways
 * share stamp 0), and pseudo-random permutations of 1 to 1536 entries. */
#include <check.h>
#include <glib.h>
#include <stdlib.h>

#include "tlb/policy.h"
#include "tlb/stamp_rank.h"

static void check_ranks(const uint64_t *st, unsigned n)
{
    uint16_t *buf = g_new(uint16_t, 3 * (size_t)n + 1);
    unsigned *bounds = g_new(unsigned, n + 1);
    stamp_rank(st, n, buf, buf + n, buf + 2 * n, bounds);
    for (unsigned i = 0; i < n; i++) {
        unsigned older = 0;
        for (unsigned j = 0; j < n; j++)
            older += st[j] < st[i] || (st[j] == st[i] && j < i);
        ck_assert_msg(buf[i] == older, "n %u: rank of %u is %u, expected %u", n, i, buf[i],
                      older);
    }
    g_free(bounds);
    g_free(buf);
}

START_TEST(shapes)
{
    static const unsigned sizes[] = { 1, 2, 3, 4, 8, 12, 16, 63, 64, 65, 1536 };
    uint64_t seed = 42;
    for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
        unsigned n = sizes[k];
        uint64_t *st = g_new(uint64_t, n);
        for (unsigned i = 0; i < n; i++)                 /* sorted */
            st[i] = 100 + i;
        check_ranks(st, n);
        for (unsigned i = 0; i < n; i++)                 /* reversed */
            st[i] = 100 + n - i;
        check_ranks(st, n);
        for (unsigned i = 0; i < n; i++)                 /* rotated by n / 3 */
            st[i] = 100 + (i + n - n / 3) % n;
        check_ranks(st, n);
        for (unsigned i = 0; i < n; i++)                 /* ties: half never touched */
            st[i] = i % 2 ? 0 : 50 + (i * 7) % 13;
        check_ranks(st, n);
        for (int r = 0; r < 5; r++) {                    /* random */
            for (unsigned i = 0; i < n; i++)
                st[i] = tlb_splitmix64(&seed) % (2 * n + 1);
            check_ranks(st, n);
        }
        g_free(st);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tlb-stamp-rank");
    TCase *t = tcase_create("rank");
    tcase_add_test(t, shapes);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
