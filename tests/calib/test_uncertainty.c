/* Uncertainty (src/calib/uncertainty.h, the claim's interval rule): the
 * same seed gives the same rows for any -j and any sharding (a sweep of
 * kind uncertainty over the null call and a db trace, merged shards byte
 * for byte equal to the whole run);
 * every accepted point still meets Linus Torvalds's getppid figures it was
 * projected onto; the central value lies inside its 90 % interval; a
 * different seed gives other points; quantiles and the interval verdict
 * against hand-made cases. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/uncertainty.h"
#include "report/claim.h"
#include "report/csv.h"
#include "report/merge.h"
#include "replay/gen.h"
#include "report/sweep.h"

#include "../replay/test_tmp.h"

#define N 12

static char *dir;

static void setup(void) { dir = test_tmpdir_new(); }
static void teardown(void) { test_tmpdir_free(dir); }

/* A fresh copy of a file: GCC 12 at -O3 flags a pointer stored through
 * g_file_get_contents as dangling (a false positive, fatal under -Werror;
 * tests/preset/test_preset.c does the same). */
static char *slurp(const char *path)
{
    char *t = test_slurp(path), *copy = g_strdup(t);
    g_free(t);
    return copy;
}

/* A small db trace in the test's directory: the workload of the rows that
 * are not the null call. */
static char *db_trace(void)
{
    char *path = g_build_filename(dir, "db.vmt", NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        GenOptions o;
        gen_options_init(&o);
        o.count = 60;
        ck_assert(gen_write(gen_find("db"), &o, path, NULL));
    }
    return path;
}

static char *run_sweep(const char *name, const char *seed, guint jobs, const char *shard)
{
    GError *err = NULL;
    SweepDef *d = sweep_def_new(sweep_runner_lookup("uncertainty", NULL));
    char *db = db_trace(), *wl = g_strconcat("none,", db, NULL);
    ck_assert(sweep_def_add_list(d, "workload", wl, &err));
    g_free(wl);
    g_free(db);
    GString *samples = g_string_new(NULL);
    for (int i = 0; i < N; i++)
        g_string_append_printf(samples, "%s%d", i ? "," : "", i);
    ck_assert(sweep_def_add_list(d, "seed", seed, &err));
    ck_assert(sweep_def_add_list(d, "sample", samples->str, &err));
    ck_assert(!shard || sweep_def_set_shard(d, shard, &err));
    ck_assert_msg(sweep_def_finish(d, &err), "%s", err ? err->message : "");
    char *path = g_build_filename(dir, name, NULL);
    SweepOptions o = { .jobs = jobs };
    SweepResult res;
    ck_assert_msg(sweep_run(d, path, &o, &res, &err), "%s", err ? err->message : "");
    ck_assert(res.complete);
    sweep_def_free(d);
    g_string_free(samples, TRUE);
    return path;
}

START_TEST(same_seed_same_rows)
{
    char *j1 = run_sweep("j1.csv", "1", 1, NULL), *j2 = run_sweep("j2.csv", "1", 2, NULL);
    char *s1 = run_sweep("s1.csv", "1", 2, "1/3"), *s2 = run_sweep("s2.csv", "1", 1, "2/3");
    char *s3 = run_sweep("s3.csv", "1", 2, "3/3"), *other = run_sweep("o.csv", "2", 2, NULL);
    char *merged = g_build_filename(dir, "merged.csv", NULL);
    const char *shards[] = { s3, s1, s2 };
    GError *err = NULL;
    MergeOptions mo = { false };
    MergeResult mr;
    ck_assert_msg(merge_csv_files(shards, 3, merged, &mo, &mr, &err), "%s",
                  err ? err->message : "");
    char *a = slurp(j1), *b = slurp(j2), *m = slurp(merged), *o = slurp(other);
    ck_assert_str_eq(a, b);
    ck_assert_str_eq(a, m);
    /* Another seed: the same header, other points. */
    const char *ra = strchr(strchr(a, '\n') + 1, '\n'), *ro = strchr(strchr(o, '\n') + 1, '\n');
    ck_assert_str_ne(ra, ro);
    g_free(a);
    g_free(b);
    g_free(m);
    g_free(o);
    g_free(merged);
    g_free(j1);
    g_free(j2);
    g_free(s1);
    g_free(s2);
    g_free(s3);
    g_free(other);
}
END_TEST

/* Every accepted point meets the fit rows it was projected onto (Linus's
 * 1761 and 641 cycles, within the 2 % of acceptance), while the estimates
 * the fit leaves open really vary: the 4g4g extra takes several values. */
START_TEST(points_meet_the_fit_rows)
{
    Preset *p = preset_load("p4-northwood", NULL);
    MeasurementSet *set = meas_load(NULL, NULL);
    ck_assert(p && set);
    double extra[N];
    unsigned used = 0;
    for (unsigned i = 0; i < N; i++) {
        UncPoint u;
        GError *err = NULL;
        ck_assert_msg(unc_point(p, set, 1, i, &u, &err), "%s", err ? err->message : "");
        ck_assert_ptr_nonnull(strstr(u.values, "cost.mov_cr3="));
        if (u.accepted) {
            ck_assert_msg(fabs(u.fig.int80_3g1g - 1761) <= 0.02 * 1761, "%g", u.fig.int80_3g1g);
            ck_assert_msg(fabs(u.fig.sysenter_3g1g - 641) <= 0.02 * 641, "%g", u.fig.sysenter_3g1g);
            extra[used++] = u.fig.int80_4g4g - u.fig.int80_3g1g;
        }
        unc_point_clear(&u);
    }
    ck_assert_uint_ge(used, N / 2);
    double lo = unc_quantile(extra, used, 0.05), hi = unc_quantile(extra, used, 0.95);
    ck_assert_msg(hi - lo > 100, "the extra hardly varies: %g..%g cycles", lo, hi);
    /* The central value (the preset as shipped) lies inside the interval. */
    UncFigures c;
    ck_assert(unc_figures(p, &c, NULL));
    double central = c.int80_4g4g - c.int80_3g1g;
    ck_assert_msg(central >= lo && central <= hi, "central %g outside %g..%g", central, lo, hi);
    meas_free(set);
    preset_free(p);
}
END_TEST

START_TEST(quantiles_by_hand)
{
    double v[] = { 5, 1, 4, 2, 3 };
    ck_assert(unc_quantile(v, 5, 0.5) == 3);
    ck_assert(unc_quantile(v, 5, 0) == 1 && unc_quantile(v, 5, 1) == 5);
    ck_assert(fabs(unc_quantile(v, 5, 0.1) - 1.4) < 1e-12);   /* 1 + 0.4 x (2 - 1) */
    double w[21];
    for (int i = 0; i < 21; i++)
        w[i] = 20 - i;
    ck_assert(fabs(unc_quantile(w, 21, 0.05) - 1) < 1e-12);
    ck_assert(fabs(unc_quantile(w, 21, 0.95) - 19) < 1e-12);
}
END_TEST

/* The interval rule against the band 2..4 (the +3 us statement). */
static const struct { double lo, hi; ClaimVerdict want; } cases[] = {
    { 2.5, 3.5, CLAIM_AGREES },     /* inside */
    { 2.0, 4.0, CLAIM_AGREES },     /* exactly the band */
    { 0.2, 1.4, CLAIM_DISAGREES },  /* below */
    { 4.1, 6.0, CLAIM_DISAGREES },  /* above */
    { 1.5, 2.5, CLAIM_UNDECIDED },  /* across the low end */
    { 3.5, 4.5, CLAIM_UNDECIDED },  /* across the high end */
    { 1.0, 5.0, CLAIM_UNDECIDED },  /* around the whole band */
    { 1.0, 2.0, CLAIM_UNDECIDED },  /* touching it */
};

START_TEST(interval_verdicts)
{
    ck_assert_msg(claim_verdict_interval(cases[_i].lo, cases[_i].hi, 2, 4) == cases[_i].want,
                  "%g..%g: %s, expected %s", cases[_i].lo, cases[_i].hi,
                  claim_verdict_names[claim_verdict_interval(cases[_i].lo, cases[_i].hi, 2, 4)],
                  claim_verdict_names[cases[_i].want]);
}
END_TEST

/* The PAE/non-PAE rule by hand: A agrees, D disagrees, U undecided. */
#define A CLAIM_AGREES
#define D CLAIM_DISAGREES
#define U CLAIM_UNDECIDED
static const struct { ClaimVerdict pae, nonpae, ratio, want; } pn_cases[] = {
    { A, A, A, A }, { A, A, D, A },          /* both extras in their bands */
    { D, D, A, CLAIM_PARTLY },               /* only the ratio: the clock may differ */
    { U, A, A, CLAIM_PARTLY },
    { D, A, D, D }, { A, D, D, D },          /* an extra and the ratio out */
    { D, D, U, U },                          /* the ratio straddles: undecided */
    { U, U, D, U }, { U, A, U, U },
};

START_TEST(pae_nonpae_verdicts)
{
    ClaimVerdict v = claim_verdict_pae_nonpae(pn_cases[_i].pae, pn_cases[_i].nonpae,
                                              pn_cases[_i].ratio);
    ck_assert_msg(v == pn_cases[_i].want, "case %d: %s, expected %s", _i, claim_verdict_names[v],
                  claim_verdict_names[pn_cases[_i].want]);
}
END_TEST
#undef A
#undef D
#undef U

int main(void)
{
    Suite *s = suite_create("uncertainty");
    TCase *tc = tcase_create("uncertainty");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_seed_same_rows);
    tcase_add_test(tc, points_meet_the_fit_rows);
    tcase_add_test(tc, quantiles_by_hand);
    tcase_add_loop_test(tc, interval_verdicts, 0, G_N_ELEMENTS(cases));
    tcase_add_loop_test(tc, pae_nonpae_verdicts, 0, G_N_ELEMENTS(pn_cases));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
