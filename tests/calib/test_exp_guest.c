/* The experiment `guest NAME LAYOUT` (src/calib/exp_guest.h) and its one
 * program, workloads/guest/dtlb64.asm (Ingo Molnar's 64 cold dTLB misses).
 *
 * Expectations worked out by hand from the program's design, not from the
 * model's output: each of the 64 pages was never touched, and its PTE is
 * in a cache line of its own, so each load is a page walk whose PTE read
 * goes to memory, then a data read that goes to memory too: two memory
 * latencies (the preset's memory.latency) per page, plus a few cycles of
 * the walk's start, the PDE (a cache hit after the first page) and the
 * loop's four instructions -- at most 16 per page. That holds on every
 * preset whatever its latency. The CR3 write before the loop cannot matter
 * for pages the TLB never held: 3g1g (no CR3 write) gives the same figure
 * as 4g4g. The reader accepts `guest NAME LAYOUT` and names the file and
 * line of a malformed one. */
#include "calib/exp_guest.h"
#include "calib/experiment.h"
#include "calib/measurements.h"
#include "calib/validate.h"

#include <check.h>
#include <string.h>

#include "../replay/test_tmp.h"

static char *dir;

static void setup(void) { dir = test_tmpdir_new(); }
static void teardown(void) { test_tmpdir_free(dir); }

static double dtlb64(const char *cpu, const char *layout, unsigned *latency)
{
    Preset *p = preset_load(cpu, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert(preset_get_uint(p, "memory.latency", latency));
    GError *err = NULL;
    double v = 0;
    ck_assert_msg(calib_run_guest(p, "dtlb64", layout, &v, &err), "%s", err ? err->message : "");
    preset_free(p);
    return v;
}

START_TEST(two_memory_latencies_per_page)
{
    static const char *const cpus[] = { "p4-northwood", "core2", "p3-coppermine" };
    for (size_t i = 0; i < G_N_ELEMENTS(cpus); i++) {
        unsigned lat = 0;
        double v = dtlb64(cpus[i], "4g4g", &lat);
        ck_assert_msg(v >= 64.0 * 2 * lat && v <= 64.0 * (2 * lat + 16),
                      "%s: %g cycles for 64 pages at %u cycles per memory access", cpus[i], v,
                      lat);
        ck_assert(dtlb64(cpus[i], "3g1g", &lat) == v);
    }
}
END_TEST

START_TEST(bad_programs)
{
    Preset *p = preset_load("p4-northwood", NULL);
    GError *err = NULL;
    double v;
    ck_assert(!calib_run_guest(p, "no-such-program", "4g4g", &v, &err));
    ck_assert(g_error_matches(err, CALIB_ERROR, CALIB_ERROR_PARSE));
    ck_assert_ptr_nonnull(strstr(err->message, "no-such-program.o"));
    g_clear_error(&err);
    ck_assert(!calib_run_guest(p, "dtlb64", "5g5g", &v, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "unknown layout"));
    g_clear_error(&err);
    /* hello prints no number: not a measurement. */
    ck_assert(!calib_run_guest(p, "hello", "3g1g", &v, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "printed no number"));
    g_clear_error(&err);
    preset_free(p);
}
END_TEST

#define ROW(exp)                                                                      \
    "[split]\nreason = test\n\n[r]\nfigure = 25000\nunit = cycles\nmachine = m\n"     \
    "clock = not stated\nsource = s\ncpu = p4-northwood\nexperiment = " exp "\nrole = check\n"

START_TEST(reader)
{
    char *path = g_build_filename(dir, "m.ini", NULL);
    ck_assert(g_file_set_contents(path, ROW("guest dtlb64 4g4g"), -1, NULL));
    GError *err = NULL;
    MeasurementSet *s = meas_load(path, &err);
    ck_assert_msg(s != NULL, "%s", err ? err->message : "");
    const Measurement *m = g_ptr_array_index(s->rows, 0);
    ck_assert(m->exp.kind == EXP_GUEST);
    ck_assert_str_eq(m->exp.program, "dtlb64");
    ck_assert_str_eq(m->exp.layout, "4g4g");
    char *text = meas_experiment_text(&m->exp);
    ck_assert_str_eq(text, "guest dtlb64 4g4g");
    g_free(text);
    /* calib_measure runs it as validate does. */
    Preset *p = preset_load("p4-northwood", NULL);
    double v = 0;
    ck_assert(calib_measure(p, NULL, m, &v, &err));
    ck_assert(v > 64 * 2 * 316);
    preset_free(p);
    meas_free(s);

    /* A row not reproduced yet is listed, not run. */
    ck_assert(g_file_set_contents(path, ROW("none"), -1, NULL));
    s = meas_load(path, &err);
    ck_assert_ptr_nonnull(s);
    Validation *val = calib_validate(s, NULL, NULL, 2, 1, &err);
    ck_assert(val && val->n == 1 && !val->rows[0].evaluated && !val->rows[0].has_interval);
    calib_validation_free(val);
    meas_free(s);

    ck_assert(g_file_set_contents(path, ROW("guest dtlb64"), -1, NULL));
    ck_assert_ptr_null(meas_load(path, &err));
    ck_assert(g_error_matches(err, CALIB_ERROR, CALIB_ERROR_PARSE));
    ck_assert_ptr_nonnull(strstr(err->message, "m.ini:"));
    ck_assert_ptr_nonnull(strstr(err->message, "'guest NAME LAYOUT'"));
    g_clear_error(&err);
    g_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exp-guest");
    TCase *tc = tcase_create("exp-guest");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, two_memory_latencies_per_page);
    tcase_add_test(tc, bad_programs);
    tcase_add_test(tc, reader);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
