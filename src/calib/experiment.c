/* Running a measurement's experiment: see experiment.h. */
#include "calib/experiment.h"

#include "calib/exp_guest.h"
#include "kernel_model/layout.h"
#include "kernel_model/measure.h"

#define GiB (1ULL << 30)

/* Cycles per call (syscall) or the preset's figure (preset). */
static bool run_one(const Preset *p, const ProfileTable *t, const Experiment *e, double *out,
                    GError **err)
{
    if (e->kind == EXP_NONE) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_INVALID,
                    "experiment 'none': this measurement is not reproduced by the model yet");
        return false;
    }
    if (e->kind == EXP_GUEST)
        return calib_run_guest(p, e->program, e->layout, out, err);
    if (e->kind == EXP_PRESET) {
        unsigned v = 0;
        if (!preset_get_uint(p, e->key, &v)) {
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE,
                        "preset %s: no such integer key; expected GROUP.KEY as in "
                        "presets/README.md", e->key);
            return false;
        }
        *out = v;
        return true;
    }
    bool known = false;
    const SyscallProfile *prof = profiles_find(t, e->syscall, &known);
    const Layout *l = layout_find(e->layout);
    if (!known || !l) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE,
                    "syscall %s %s: unknown %s; expected a syscall of the profile table and a "
                    "layout (3g1g, 4g4g, kpti...)", e->syscall, e->layout,
                    known ? "layout" : "syscall");
        return false;
    }
    MachineConfig mc = { .preset = p,
                         .layout = layout_with_paging(l, e->legacy ? PAGING_LEGACY : PAGING_PAE),
                         .ram = 4 * GiB, .sysenter = e->sysenter };
    SyscallCall call = { .profile = prof, .user_buf = 0x10000000, .switch_to = -1,
                         .bytes_in = prof->copy_in == COPY_ARG ? 0 : prof->copy_in,
                         .bytes_out = prof->copy_out == COPY_ARG ? 0 : prof->copy_out };
    SyscallCost sum = { 0 };
    if (!measure_repeat(&mc, &call, CALIB_WARMUP, CALIB_CALLS, &sum, err))
        return false;
    *out = (double)sum.cycles / CALIB_CALLS;
    return true;
}

bool calib_measure(const Preset *p, const ProfileTable *t, const Measurement *m, double *out,
                   GError **err)
{
    double a = 0, b = 0;
    if (!run_one(p, t, &m->exp, &a, err) ||
        (m->combine != COMBINE_NONE && !run_one(p, t, &m->baseline, &b, err)))
        return false;
    /* A preset figure is already in the row's unit; a syscall's is cycles. */
    if (m->unit == MEAS_UNIT_US && m->exp.kind == EXP_SYSCALL) {
        a /= p->clock_mhz;
        b /= p->clock_mhz;
    }
    switch (m->combine) {
    case COMBINE_NONE: *out = a; break;
    case COMBINE_DIFFERENCE: *out = a - b; break;
    case COMBINE_RATIO: *out = b > 0 ? a / b : 0; break;
    }
    return true;
}
