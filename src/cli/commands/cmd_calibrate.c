/* vmsplit calibrate: fit a preset's ranged estimates to the published
 * measurements marked `fit` for it (src/calib/calibrate.h says how), print
 * the targets, the fitted parameters and what the data cannot separate,
 * and write the fitted preset. */
#include "calib/calibrate.h"
#include "cli/cli_util.h"
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

static const char *param_state(const CalibParam *p)
{
    if (!p->informed)
        return "no fit row depends on it: kept, range kept";
    if (p->separable)
        return p->value != p->prior ? "fitted, determined on its own" : "determined, at its prior";
    return p->value != p->prior ? "fitted within a combination: not separable, range kept"
                                : "in a combination, left at its prior: range kept";
}

static void print_result(const CalibResult *r, const MeasurementSet *set, const Preset *p,
                         double seconds)
{
    printf("vmsplit calibrate: %s against %s\n\n", p->name, set->path);
    printf("split (declared before fitting): %s\n\n", set->split_reason);
    printf("targets (fit rows)                    figure    before     model    error\n");
    for (unsigned i = 0; i < r->ntargets; i++) {
        const CalibTarget *t = &r->targets[i];
        printf("  %-32s %9.6g %9.6g %9.6g %+7.2f%%   %s\n", t->row->id, t->row->lo, t->start,
               t->model, 100 * t->error, meas_unit_name(t->row->unit));
    }
    printf("\nparameters                    range     prior   start  fitted\n");
    for (unsigned j = 0; j < r->nparams; j++) {
        const CalibParam *c = &r->params[j];
        char range[32];
        g_snprintf(range, sizeof range, "%u..%u", c->lo, c->hi);
        printf("  %-22s %11s %8u %7u %7u   %s\n", c->id, range, c->prior, c->start, c->value,
               param_state(c));
    }
    printf("\nwhat the fit rows determine (row echelon form of their Jacobian):\n");
    for (unsigned i = 0; i < r->ncombos; i++)
        printf("  %s = %.6g%s\n", r->combos[i].text, r->combos[i].value,
               r->combos[i].single ? "   (one parameter: determined)" : "");
    printf("  every parameter in a combination with others is not separable by these rows\n");
    printf("\n%u executed experiments, %u Gauss-Newton steps, %.2f s\n", r->runs, r->steps,
           seconds);
}

int cmd_calibrate(int argc, char **argv)
{
    char *cpu = NULL, *meas = NULL, *out = NULL, *profiles = NULL;
    GOptionEntry entries[] = {
        { "cpu", 'c', 0, G_OPTION_ARG_STRING, &cpu, "CPU preset name or .ini file (default " PRESET_DEFAULT ")", "P" },
        { "measurements", 0, 0, G_OPTION_ARG_FILENAME, &meas, "measurement set (default validation/measurements.ini)", "FILE" },
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the fitted preset here", "FITTED.ini" },
        { "profiles", 0, 0, G_OPTION_ARG_FILENAME, &profiles, "syscall profile table (default src/kernel_model/syscalls.ini)", "FILE" },
        { NULL },
    };
    GOptionContext *ctx = g_option_context_new("- fit a preset's ranged estimates to published measurements");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "The free parameters are the preset's estimates with 'range LO..HI' (presets/README.md);\n"
        "the targets are the measurement set's rows with role = fit and cpu = the preset's\n"
        "name. Each evaluation runs the rows' experiments on the model (the syscall through\n"
        "the layout's real stubs on the core). Bounded Gauss-Newton with a tiny ridge\n"
        "towards the prior: the rows decide what they determine, the prior the rest.\n"
        "Prints each target with the model's value and error, each parameter, and the\n"
        "combinations the rows determine: a parameter in a combination with others is not\n"
        "separable and keeps its range. -o writes the preset with the fitted values and\n"
        "'fitted:' comments (docs/calibration.md). Deterministic.");
    int rc = VMS_EXIT_USAGE;
    Preset *p = NULL;
    MeasurementSet *set = NULL;
    CalibResult *r = NULL;
    char *text = NULL;
    GError *err = NULL;
    if (!cli_parse(ctx, &argc, &argv, "calibrate"))
        goto done;
    if (argc != 1) {
        fprintf(stderr, "vmsplit calibrate: unexpected argument '%s' (see 'vmsplit calibrate --help')\n",
                argv[1]);
        goto done;
    }
    if (!(p = preset_load(cpu ? cpu : PRESET_DEFAULT, &err)) || !(set = meas_load(meas, &err))) {
        rc = cli_fail("calibrate", err);
        goto done;
    }
    gint64 t0 = g_get_monotonic_time();
    CalibConfig cfg = { .preset = p, .set = set, .profiles = profiles };
    if (!(r = calib_fit(&cfg, &err))) {
        rc = cli_fail("calibrate", err);
        goto done;
    }
    print_result(r, set, p, (double)(g_get_monotonic_time() - t0) / 1e6);
    if (out) {
        if (!g_file_get_contents(p->path, &text, NULL, &err)) {
            rc = cli_fail("calibrate", err);
            goto done;
        }
        char *fitted = calib_write_preset(r, text, set->path);
        bool ok = g_file_set_contents(out, fitted, -1, &err);
        g_free(fitted);
        if (!ok) {
            rc = cli_fail("calibrate", err);
            goto done;
        }
        printf("wrote %s\n", out);
    }
    rc = VMS_EXIT_OK;
done:
    g_free(text);
    calib_result_free(r);
    meas_free(set);
    preset_free(p);
    g_free(cpu);
    g_free(meas);
    g_free(out);
    g_free(profiles);
    g_option_context_free(ctx);
    return rc;
}
