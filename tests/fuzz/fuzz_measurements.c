/* Published measurements (validation/measurements.ini, src/calib/
 * measurements.c), loaded from a file as `vmsplit calibrate/validate
 * --measurements FILE` does. A loaded set must keep the promises of
 * measurements.h that calibrate and validate rely on: a [split] reason,
 * each row with its required fields, a positive finite figure or span
 * LO..HI with LO <= HI, a known unit and role, a `fit` row only with a
 * syscall experiment, unit ratio exactly with combine = ratio, a
 * combination only with a baseline. Each experiment is written back as
 * text (validate's output) and meas_error is evaluated. */
#include "fuzz.h"

#include <math.h>
#include <string.h>

#include "calib/measurements.h"

static void check_experiment(const Experiment *x)
{
    switch (x->kind) {
    case EXP_SYSCALL:
        g_assert(x->syscall && *x->syscall && x->layout && *x->layout);
        break;
    case EXP_PRESET:
        g_assert(x->key && strchr(x->key, '.'));
        break;
    case EXP_GUEST:
        g_assert(x->program && *x->program && x->layout && *x->layout);
        break;
    case EXP_NONE:
        break;
    default:
        g_assert_not_reached();
    }
    char *text = meas_experiment_text(x);
    g_assert(text && *text);
    g_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".ini");
    GError *e = NULL;
    MeasurementSet *s = meas_load(path, &e);
    if (!s) {
        g_assert(e && e->domain == CALIB_ERROR && e->code == CALIB_ERROR_PARSE);
        fuzz_check_error(e);
        return 0;
    }
    g_assert(s->split_reason != NULL);
    for (guint i = 0; i < s->rows->len; i++) {
        const Measurement *m = g_ptr_array_index(s->rows, i);
        g_assert(m->id && m->machine && m->clock && m->source && m->cpu);
        g_assert(isfinite(m->lo) && isfinite(m->hi) && m->lo > 0 && m->lo <= m->hi);
        g_assert(m->unit <= MEAS_UNIT_RATIO && meas_unit_name(m->unit));
        g_assert(m->role == MEAS_ROLE_FIT || m->role == MEAS_ROLE_CHECK);
        g_assert(m->role != MEAS_ROLE_FIT || m->exp.kind == EXP_SYSCALL);
        g_assert((m->unit == MEAS_UNIT_RATIO) == (m->combine == COMBINE_RATIO));
        check_experiment(&m->exp);
        if (m->combine != COMBINE_NONE)
            check_experiment(&m->baseline);
        g_assert(meas_error(m, m->lo) == 0 && meas_error(m, m->hi) == 0);
        g_assert(meas_error(m, m->lo / 2) < 0 && meas_error(m, m->hi * 2) > 0);
    }
    meas_free(s);
    return 0;
}
