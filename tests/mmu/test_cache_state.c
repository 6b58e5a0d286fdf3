/* The cache's snapshots (cache_state.h) against their definitions: the
 * sets appended for some spans are exactly the sets their lines map to, in
 * set order, as maximal runs, each set with its tags as the level holds
 * them; and cache_state_sets_equivalent answers what its definition,
 * written out here set by set over the tag arrays, answers. Random spans
 * (overlapping, unsorted, wrapping round the sets, covering every set,
 * empty) over levels of one set, of the P4's geometry, and of more sets
 * than fit the snapshot's bitmap on the stack. */
#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "mmu/cache.h"
#include "mmu/cache_priv.h"
#include "mmu/cache_state.h"

#define MEM 100
#define MAX_SPANS 12

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 17;
}

typedef struct {
    CacheGeom l1, l2;
} Geoms;

static const Geoms geoms[] = {
    { { 256, 4, 64, 2 }, { 1024, 8, 128, 9 } },        /* 1 set, then 1 set */
    { { 8192, 4, 64, 2 }, { 512 * 1024, 8, 128, 24 } }, /* the P4 Northwood */
    { { 4096, 2, 16, 2 }, { 1 << 20, 4, 16, 9 } },     /* 16384 sets: a bitmap on the heap */
    { { 2048, 8, 32, 2 }, { 8192, 4, 64, 9 } },        /* a wide L1 (cache_priv.h) */
};

/* Random spans within [0, range): some short, some long, some empty. */
static size_t random_spans(uint64_t *s, uint64_t range, CacheSpan *out)
{
    size_t n = 1 + rng(s) % MAX_SPANS;
    for (size_t i = 0; i < n; i++) {
        uint64_t pa = rng(s) % range;
        uint64_t len = rng(s) % 4 == 0 ? rng(s) % (range / 2) : rng(s) % 300;
        if (rng(s) % 10 == 0)
            len = 0;
        out[i] = (CacheSpan){ pa, len };
    }
    return n;
}

static void run_refs(CacheHier *c, uint64_t *s, unsigned n, uint64_t range)
{
    for (unsigned k = 0; k < n; k++)
        cache_access(c, rng(s) % range, false);
}

/* The sets the spans' lines map to, line by line. */
static bool *sets_of(const Level *L, const CacheSpan *spans, size_t n)
{
    bool *in = g_new0(bool, L->nsets);
    for (size_t i = 0; i < n; i++) {
        if (!spans[i].len)
            continue;
        uint64_t first = spans[i].pa >> L->line_shift;
        uint64_t last = (spans[i].pa + spans[i].len - 1) >> L->line_shift;
        for (uint64_t line = first; line <= last && line - first < L->nsets; line++)
            in[line & L->set_mask] = true;
    }
    return in;
}

static bool line_in_spans(const Level *L, const CacheSpan *spans, size_t n, uint64_t line)
{
    for (size_t i = 0; i < n; i++)
        if (spans[i].len && line >= spans[i].pa >> L->line_shift &&
            line <= (spans[i].pa + spans[i].len - 1) >> L->line_shift)
            return true;
    return false;
}

/* Decode a snapshot of level L and check it against the level itself. */
static void check_snapshot(const Level *L, const CacheSpan *spans, size_t n,
                           const GByteArray *snap)
{
    bool *want = sets_of(L, spans, n), *got = g_new0(bool, L->nsets);
    size_t row = L->row_words * sizeof(uint64_t), at = 0;    /* padding included */
    uint64_t end = 0;                    /* one past the previous run */
    bool first_run = true;
    while (at < snap->len) {
        uint64_t head[2];
        ck_assert_uint_ge(snap->len - at, sizeof head);
        memcpy(head, snap->data + at, sizeof head);
        at += sizeof head;
        ck_assert_uint_ge(head[1], 1);
        ck_assert_uint_le(head[0] + head[1], L->nsets);
        /* In set order, and maximal: a gap before each run. */
        ck_assert(first_run || head[0] > end);
        first_run = false;
        end = head[0] + head[1];
        ck_assert_uint_ge(snap->len - at, head[1] * row);
        ck_assert(!memcmp(snap->data + at, cache_level_set(L, head[0]), head[1] * row));
        at += head[1] * row;
        for (uint64_t set = head[0]; set < end; set++)
            got[set] = true;
    }
    ck_assert(!memcmp(want, got, L->nsets * sizeof *got));
    g_free(want);
    g_free(got);
}

START_TEST(snapshot_lists_the_spans_sets)
{
    const Geoms *g = &geoms[_i];
    CacheHier *c = cache_new(&g->l1, &g->l2, NULL, MEM, NULL);
    uint64_t s = 7 + _i, range = 4 * (uint64_t)g->l2.size;
    GByteArray *snap = g_byte_array_new();
    for (unsigned round = 0; round < 300; round++) {
        run_refs(c, &s, 50, range);
        CacheSpan spans[MAX_SPANS];
        size_t n = random_spans(&s, range, spans);
        for (unsigned level = 0; level < 2; level++) {
            g_byte_array_set_size(snap, 0);
            cache_state_append_sets(c, level, spans, n, snap);
            check_snapshot(&c->lv[level], spans, n, snap);
        }
    }
    g_byte_array_free(snap, TRUE);
    cache_free(c);
}
END_TEST

/* cache_state_sets_equivalent's definition, over the tag arrays of level
 * `level`: in each set of the spans, start's most recent lines within the
 * spans (down to the first that is not, or an empty way) are now's, in the
 * same order. A way of L1 holds its line's address, of the others its
 * line's number (cache_priv.h), decoded here on its own. */
static bool equivalent_by_definition(const Level *a, const Level *b, unsigned level,
                                     const CacheSpan *spans, size_t n)
{
    bool *in = sets_of(a, spans, n), ok = true;
    for (uint64_t set = 0; ok && set < a->nsets; set++) {
        if (!in[set])
            continue;
        for (unsigned w = 0; w < a->ways; w++) {
            uint64_t x = cache_level_set(a, set)[w];
            uint64_t line = level == 0 ? x >> a->line_shift : x;
            if (x == CACHE_TAG_INVALID || !line_in_spans(a, spans, n, line))
                break;
            if (x != cache_level_set(b, set)[w]) {
                ok = false;
                break;
            }
        }
    }
    g_free(in);
    return ok;
}

/* Two hierarchies run the same references, then one runs a few more, in
 * a small range so that they sometimes change the spans' lines and
 * sometimes only others; the answer must be the definition's, and both
 * answers must occur. A level that missed is never equivalent; one not
 * looked up always is. */
START_TEST(equivalence_matches_definition)
{
    const Geoms *g = &geoms[_i];
    uint64_t range = 4 * (uint64_t)g->l2.size;
    unsigned answers[2] = { 0, 0 };
    uint64_t s = 1000 + _i;
    GByteArray *x = g_byte_array_new(), *y = g_byte_array_new();
    for (unsigned round = 0; round < 200; round++) {
        CacheHier *a = cache_new(&g->l1, &g->l2, NULL, MEM, NULL);
        CacheHier *b = cache_new(&g->l1, &g->l2, NULL, MEM, NULL);
        uint64_t sa = s, sb = s;
        run_refs(a, &sa, 400, range);
        run_refs(b, &sb, 400, range);
        s = sa;
        uint64_t base = rng(&s) % range;
        for (unsigned k = rng(&s) % 4; k > 0; k--)
            cache_access(b, base + rng(&s) % (4 * g->l1.line), false);
        CacheSpan spans[MAX_SPANS];
        size_t n = random_spans(&s, range, spans);
        if (round % 2)                   /* often the span of b's references */
            spans[0] = (CacheSpan){ base, 2 * g->l1.line };
        for (unsigned level = 0; level < 2; level++) {
            g_byte_array_set_size(x, 0);
            g_byte_array_set_size(y, 0);
            cache_state_append_sets(a, level, spans, n, x);
            cache_state_append_sets(b, level, spans, n, y);
            CacheStats d = { 0 };
            d.level[level].hits = 1;
            bool want = equivalent_by_definition(&a->lv[level], &b->lv[level], level, spans, n);
            ck_assert_int_eq(cache_state_sets_equivalent(a, level, spans, n, &d, x, y), want);
            answers[want]++;
            d.level[level].misses = 1;
            ck_assert(!cache_state_sets_equivalent(a, level, spans, n, &d, x, y));
            d = (CacheStats){ 0 };
            ck_assert(cache_state_sets_equivalent(a, level, spans, n, &d, x, y));
        }
        cache_free(a);
        cache_free(b);
    }
    ck_assert_uint_gt(answers[0], 0);
    ck_assert_uint_gt(answers[1], 0);
    g_byte_array_free(x, TRUE);
    g_byte_array_free(y, TRUE);
}
END_TEST

static Suite *cache_state_suite(void)
{
    Suite *s = suite_create("cache_state");
    TCase *tc = tcase_create("snapshots");
    tcase_add_loop_test(tc, snapshot_lists_the_spans_sets, 0, G_N_ELEMENTS(geoms));
    tcase_add_loop_test(tc, equivalence_matches_definition, 0, G_N_ELEMENTS(geoms));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cache_state_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
