/* Calibration (src/calib): the measurement file is read as REFERENCES.md
 * states its figures and bad files are rejected with file:line messages;
 * identifiability: values planted in a preset produce the fit figures
 * through the executed model, and calibration from perturbed starts
 * recovers the separable parameters, reports the others as combinations
 * and recovers those combinations; the shipped p4-northwood is what
 * calibrate makes from its priors and meets Linus Torvalds's getppid
 * figures; relative errors of spans by hand. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/calibrate.h"
#include "calib/experiment.h"
#include "calib/measurements.h"
#include "calib/validate.h"

#include "../replay/test_tmp.h"

static char *dir;

static void setup(void) { dir = test_tmpdir_new(); }
static void teardown(void) { test_tmpdir_free(dir); }

static char *write_file(const char *name, const char *text)
{
    char *p = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(p, text, -1, NULL));
    return p;
}

static const Measurement *row(const MeasurementSet *s, const char *id)
{
    for (guint i = 0; i < s->rows->len; i++) {
        const Measurement *m = g_ptr_array_index(s->rows, i);
        if (!strcmp(m->id, id))
            return m;
    }
    ck_abort_msg("no row %s", id);
    return NULL;
}

/* ---- the bundled measurements ------------------------------------------- */

/* The figures as REFERENCES.md gives them; the split is declared; only
 * the two P4 getppid rows are fit rows (the declared split). */
START_TEST(bundled_measurements)
{
    GError *err = NULL;
    MeasurementSet *s = meas_load(NULL, &err);
    ck_assert_msg(s != NULL, "%s", err ? err->message : "");
    ck_assert(s->split_reason && strstr(s->split_reason, "before the first fit"));
    const Measurement *m = row(s, "p4-getppid-int80");
    ck_assert(m->lo == 1761 && m->hi == 1761 && m->role == MEAS_ROLE_FIT);
    ck_assert(m->exp.kind == EXP_SYSCALL && !m->exp.sysenter && !strcmp(m->exp.layout, "3g1g"));
    m = row(s, "p4-getppid-sysenter");
    ck_assert(m->lo == 641 && m->role == MEAS_ROLE_FIT && m->exp.sysenter);
    m = row(s, "p4-gettimeofday-int80-minus-sysenter");
    ck_assert(fabs(m->lo - (2415.698224 - 1280.425844)) < 1e-6);
    ck_assert_int_eq(m->combine, COMBINE_DIFFERENCE);
    m = row(s, "ingo-4g4g-null-ratio");
    ck_assert(fabs(m->lo - 3.9 / 0.7) < 1e-3 && m->unit == MEAS_UNIT_RATIO);
    m = row(s, "p3-lmbench-null");
    ck_assert(m->lo == 256 && m->hi == 460);   /* 0.32 us x 800 MHz .. 0.46 us x 1 GHz */
    unsigned fits = 0;
    for (guint i = 0; i < s->rows->len; i++) {
        const Measurement *r = g_ptr_array_index(s->rows, i);
        fits += r->role == MEAS_ROLE_FIT;
        ck_assert_msg(r->role == MEAS_ROLE_CHECK || !strstr(r->exp.layout, "4g4g"),
                      "%s: a 4G/4G figure must stay a check", r->id);
        ck_assert(r->source && *r->source && r->machine && *r->machine && r->clock);
    }
    ck_assert_uint_eq(fits, 2);
    meas_free(s);
}
END_TEST

typedef struct {
    const char *what, *from, *to;
    const char *must[2];
} Broken;

#define ROW "[a]\nfigure = 100\nunit = cycles\nmachine = m\nclock = not stated\nsource = s\n" \
            "cpu = p4-northwood\nexperiment = syscall getppid 3g1g int80\nrole = check\n"
#define SPLIT "[split]\nreason = because\n"

static const Broken broken[] = {
    { "unknown key", "role = check\n", "role = check\ncolour = red\n", { ":12: [a] colour", "unknown key" } },
    { "bad unit", "unit = cycles", "unit = ns", { ":5: [a] unit", "'ns'; expected cycles, us or ratio" } },
    { "bad role", "role = check", "role = maybe", { ":11: [a] role", "expected fit or check" } },
    { "bad figure", "figure = 100", "figure = 9..3", { ":4: [a] figure", "LO <= HI" } },
    { "bad experiment", "syscall getppid 3g1g int80", "syscall getppid 3g1g", { ":10: [a] experiment", "expected 'syscall NAME LAYOUT" } },
    { "fit by a preset figure", "experiment = syscall getppid 3g1g int80\nrole = check",
      "experiment = preset memory.latency\nrole = fit", { ":11: [a] role", "only an executed run can be fitted" } },
    { "combine without baseline", "role = check\n", "role = check\ncombine = ratio\n", { ":12: [a] combine", "without a baseline" } },
    { "missing key", "clock = not stated\n", "", { ":3: [a]", "lacks clock" } },
    { "no split", SPLIT, "", { "[split]", "declared before fitting" } },
};

START_TEST(broken_measurements)
{
    const Broken *b = &broken[_i];
    char *text = g_strconcat(SPLIT, ROW, NULL);
    const char *at = strstr(text, b->from);
    ck_assert_msg(at, "%s: '%s' not in the text", b->what, b->from);
    char *edited = g_strdup_printf("%.*s%s%s", (int)(at - text), text, b->to, at + strlen(b->from));
    char *p = write_file("m.ini", edited);
    GError *err = NULL;
    ck_assert_ptr_null(meas_load(p, &err));
    ck_assert(err && err->code == CALIB_ERROR_PARSE);
    ck_assert_msg(g_str_has_prefix(err->message, p), "%s: %s", b->what, err->message);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(strstr(err->message, b->must[i]), "%s: '%s' lacks '%s'", b->what,
                      err->message, b->must[i]);
    g_error_free(err);
    g_free(p);
    g_free(edited);
    g_free(text);
}
END_TEST

/* meas_error by hand: relative to the figure, 0 inside a span, relative
 * to the nearest end outside it. */
START_TEST(relative_error)
{
    Measurement m = { .lo = 200, .hi = 200 };
    ck_assert(fabs(meas_error(&m, 250) - 0.25) < 1e-12);
    ck_assert(fabs(meas_error(&m, 150) + 0.25) < 1e-12);
    m.hi = 400;
    ck_assert(meas_error(&m, 300) == 0);
    ck_assert(fabs(meas_error(&m, 500) - 0.25) < 1e-12);
    ck_assert(fabs(meas_error(&m, 100) + 0.5) < 1e-12);
}
END_TEST

/* ---- identifiability ----------------------------------------------------- */

static const char *const free_ids[] = { "cost.int_gate", "cost.iret", "cost.mov_cr3",
                                        "cost.sysenter", "cost.sysexit", NULL };
static const unsigned planted[] = { 600, 400, 300, 150, 100 };

/* The fit figures as the model gives them with the planted values: the
 * null call through int 0x80 under 3g1g and 4g4g, and through sysenter. */
static char *planted_measurements(const Preset *p4)
{
    static const char *exps[][2] = { { "i3", "syscall getppid 3g1g int80" },
                                     { "i4", "syscall getppid 4g4g int80" },
                                     { "s3", "syscall getppid 3g1g sysenter" } };
    Preset *q = preset_copy(p4);
    for (int j = 0; free_ids[j]; j++)
        ck_assert(preset_set_uint(q, free_ids[j], planted[j]));
    ProfileTable *t = profiles_load(NULL, NULL);
    ck_assert_ptr_nonnull(t);
    GString *s = g_string_new(SPLIT);
    for (size_t i = 0; i < G_N_ELEMENTS(exps); i++) {
        Measurement m = { .exp = { .kind = EXP_SYSCALL, .syscall = "getppid",
                                   .layout = strstr(exps[i][1], "4g4g") ? "4g4g" : "3g1g",
                                   .sysenter = strstr(exps[i][1], "sysenter") != NULL } };
        double v = 0;
        GError *err = NULL;
        ck_assert_msg(calib_measure(q, t, &m, &v, &err), "%s", err ? err->message : "");
        g_string_append_printf(s, "[%s]\nfigure = %.3f\nunit = cycles\nmachine = planted\n"
                               "clock = not stated\nsource = test\ncpu = p4-northwood\n"
                               "experiment = %s\nrole = fit\n", exps[i][0], v, exps[i][1]);
    }
    profiles_free(t);
    preset_free(q);
    return g_string_free(s, FALSE);
}

static const CalibParam *param(const CalibResult *r, const char *id)
{
    for (unsigned j = 0; j < r->nparams; j++)
        if (!strcmp(r->params[j].id, id))
            return &r->params[j];
    ck_abort_msg("no parameter %s", id);
    return NULL;
}

static const CalibCombo *combo_with(const CalibResult *r, const char *text)
{
    for (unsigned i = 0; i < r->ncombos; i++)
        if (!strcmp(r->combos[i].text, text))
            return &r->combos[i];
    ck_abort_msg("no combination '%s'", text);
    return NULL;
}

START_TEST(identifiability)
{
    static const unsigned starts[][5] = {
        { 250, 250, 125, 62, 62 },       /* the preset's estimates */
        { 1500, 100, 60, 20, 500 },      /* range ends */
        { 900, 1200, 700, 400, 30 },
    };
    Preset *p4 = preset_load("p4-northwood", NULL);
    ck_assert_ptr_nonnull(p4);
    char *text = planted_measurements(p4);
    char *path = write_file("planted.ini", text);
    MeasurementSet *set = meas_load(path, NULL);
    ck_assert_ptr_nonnull(set);
    unsigned first[5] = { 0 };
    for (size_t s = 0; s < G_N_ELEMENTS(starts); s++) {
        CalibConfig cfg = { .preset = p4, .set = set, .only = free_ids, .start = starts[s] };
        GError *err = NULL;
        CalibResult *r = calib_fit(&cfg, &err);
        ck_assert_msg(r != NULL, "%s", err ? err->message : "");
        ck_assert_uint_eq(r->nparams, 5);
        /* Separable: 4g4g - 3g1g through int 0x80 is the two MOV CR3. */
        const CalibParam *cr3 = param(r, "cost.mov_cr3");
        ck_assert(cr3->informed && cr3->separable);
        ck_assert_msg(abs((int)cr3->value - 300) <= 1, "mov_cr3 %u from start %zu", cr3->value, s);
        ck_assert(combo_with(r, "mov_cr3")->single);
        /* Not separable: only the sums; recovered as sums. */
        const CalibCombo *gate = combo_with(r, "int_gate + iret");
        const CalibCombo *sys = combo_with(r, "sysenter + sysexit");
        ck_assert(!gate->single && !sys->single);
        ck_assert_msg(fabs(gate->value - 1000) <= 2, "int_gate + iret = %g", gate->value);
        ck_assert_msg(fabs(sys->value - 250) <= 2, "sysenter + sysexit = %g", sys->value);
        ck_assert(!param(r, "cost.int_gate")->separable && !param(r, "cost.iret")->separable);
        ck_assert(!param(r, "cost.sysenter")->separable && !param(r, "cost.sysexit")->separable);
        ck_assert_uint_eq(r->ncombos, 3);
        for (unsigned i = 0; i < r->ntargets; i++)
            ck_assert_msg(fabs(r->targets[i].error) < 2e-3, "%s: %g", r->targets[i].row->id,
                          r->targets[i].error);
        /* The same answer from every start: the data and the priors decide. */
        for (unsigned j = 0; j < 5; j++) {
            if (s == 0)
                first[j] = r->params[j].value;
            ck_assert_msg(abs((int)r->params[j].value - (int)first[j]) <= 1,
                          "%s: %u from start %zu, %u from the first", r->params[j].id,
                          r->params[j].value, s, first[j]);
        }
        calib_result_free(r);
    }
    meas_free(set);
    g_free(path);
    g_free(text);
    preset_free(p4);
}
END_TEST

/* ---- the shipped preset --------------------------------------------------- */

/* p4-northwood ships fitted: calibrating it from its priors gives its
 * values, writing the result reproduces the file byte for byte, and the
 * fitted model meets Linus Torvalds's figures (1761 and 641 cycles). */
START_TEST(shipped_p4_is_reproduced)
{
    Preset *p4 = preset_load("p4-northwood", NULL);
    ck_assert_ptr_nonnull(p4);
    MeasurementSet *set = meas_load(NULL, NULL);
    ck_assert_ptr_nonnull(set);
    unsigned *priors = g_new0(unsigned, p4->nranges);
    unsigned n = 0;
    for (unsigned i = 0; i < p4->nranges; i++) {
        const PresetRange *r = &p4->ranges[i];
        if (r->kind != PRESET_RANGE_SPAN)
            continue;
        unsigned v = 0;
        ck_assert(preset_get_uint(p4, r->id, &v));
        priors[n++] = r->has_prior ? r->prior : v;
    }
    CalibConfig cfg = { .preset = p4, .set = set, .start = priors };
    GError *err = NULL;
    CalibResult *r = calib_fit(&cfg, &err);
    ck_assert_msg(r != NULL, "%s", err ? err->message : "");
    for (unsigned j = 0; j < r->nparams; j++) {
        unsigned shipped = 0;
        ck_assert(preset_get_uint(p4, r->params[j].id, &shipped));
        ck_assert_msg(r->params[j].value == shipped, "%s: calibrate gives %u, shipped %u",
                      r->params[j].id, r->params[j].value, shipped);
    }
    ck_assert_uint_eq(r->ntargets, 2);
    for (unsigned i = 0; i < r->ntargets; i++)
        ck_assert_msg(fabs(r->targets[i].model - r->targets[i].row->lo) <= 2, "%s: %g",
                      r->targets[i].row->id, r->targets[i].model);
    char *text = NULL;
    ck_assert(g_file_get_contents(p4->path, &text, NULL, NULL));
    char *again = calib_write_preset(r, text, set->path);
    ck_assert_msg(!strcmp(again, text), "calibrate's preset differs from presets/p4-northwood.ini");
    g_free(again);
    g_free(text);
    calib_result_free(r);
    g_free(priors);
    meas_free(set);
    preset_free(p4);
}
END_TEST

/* Validation lists every row; experiment none is not run; a check row on
 * another CPU uses that CPU's preset; every evaluated row has an interval,
 * and the fit rows' intervals stay on their targets. */
START_TEST(validation_rows)
{
    MeasurementSet *set = meas_load(NULL, NULL);
    ck_assert_ptr_nonnull(set);
    GError *err = NULL;
    Validation *v = calib_validate(set, NULL, NULL, 8, 1, &err);
    ck_assert_msg(v != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(v->n, set->rows->len);
    for (unsigned i = 0; i < v->n; i++) {
        const ValidationRow *r = &v->rows[i];
        ck_assert(r->evaluated == (r->row->exp.kind != EXP_NONE));
        ck_assert(r->has_interval == r->evaluated);
        if (r->evaluated)
            ck_assert(isfinite(r->model) && r->model > 0 && r->lo <= r->hi && r->points > 0);
        /* Every sampled point was moved back onto the fit rows: their
         * intervals stay within the 2 % of acceptance of Linus's figures. */
        if (r->row->role == MEAS_ROLE_FIT)
            ck_assert_msg(r->lo >= 0.98 * r->row->lo && r->hi <= 1.02 * r->row->hi,
                          "%s: %g..%g", r->row->id, r->lo, r->hi);
        if (!strcmp(r->row->id, "ingo-l2-miss"))
            ck_assert(r->model == 316);   /* the preset's MemLat figure */
    }
    calib_validation_free(v);
    meas_free(set);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("calib");
    TCase *tc = tcase_create("calib");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, bundled_measurements);
    tcase_add_loop_test(tc, broken_measurements, 0, G_N_ELEMENTS(broken));
    tcase_add_test(tc, relative_error);
    tcase_add_test(tc, identifiability);
    tcase_add_test(tc, shipped_p4_is_reproduced);
    tcase_add_test(tc, validation_rows);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
