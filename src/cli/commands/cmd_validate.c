/* vmsplit validate: every published measurement with the model's figure
 * and the error (src/calib/validate.h). */
#include "calib/validate.h"
#include "cli/cli_util.h"
#include "cli/commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Four significant digits, but whole numbers from 10 000 up (a cycle
 * count of 40962 reads better than 4.096e+04). */
static void fmt(char *buf, size_t n, double v)
{
    g_snprintf(buf, n, fabs(v) >= 1e4 ? "%.0f" : "%.4g", v);
}

static void print_rows(const Validation *v, MeasRole role)
{
    for (unsigned i = 0; i < v->n; i++) {
        const ValidationRow *r = &v->rows[i];
        const Measurement *m = r->row;
        if (m->role != role)
            continue;
        char fig[48];
        if (m->lo == m->hi)
            g_snprintf(fig, sizeof fig, "%.6g", m->lo);
        else
            g_snprintf(fig, sizeof fig, "%.6g..%.6g", m->lo, m->hi);
        char iv[48] = "", lo[24], hi[24], model[24];
        if (r->has_interval) {
            fmt(lo, sizeof lo, r->lo);
            fmt(hi, sizeof hi, r->hi);
            g_snprintf(iv, sizeof iv, "%s..%s", lo, hi);
        }
        fmt(model, sizeof model, r->model);
        if (r->evaluated)
            printf("  %-36s %-14s %13s %10s %17s %+8.1f%%  %-7s %s\n", m->id, m->cpu, fig,
                   model, iv, 100 * r->error, meas_unit_name(m->unit), m->machine);
        else
            printf("  %-36s %-14s %13s %10s %17s %9s  %-7s %s\n", m->id, m->cpu, fig, "-", "", "-",
                   meas_unit_name(m->unit), "not reproduced yet (experiment none)");
    }
}

static void print_json(const Validation *v)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_array(b);
    for (unsigned i = 0; i < v->n; i++) {
        const ValidationRow *r = &v->rows[i];
        const Measurement *m = r->row;
        char *exp = meas_experiment_text(&m->exp);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "id");
        json_builder_add_string_value(b, m->id);
        json_builder_set_member_name(b, "role");
        json_builder_add_string_value(b, m->role == MEAS_ROLE_FIT ? "fit" : "check");
        json_builder_set_member_name(b, "cpu");
        json_builder_add_string_value(b, m->cpu);
        json_builder_set_member_name(b, "unit");
        json_builder_add_string_value(b, meas_unit_name(m->unit));
        json_builder_set_member_name(b, "figure_low");
        json_builder_add_double_value(b, m->lo);
        json_builder_set_member_name(b, "figure_high");
        json_builder_add_double_value(b, m->hi);
        json_builder_set_member_name(b, "experiment");
        json_builder_add_string_value(b, exp);
        json_builder_set_member_name(b, "source");
        json_builder_add_string_value(b, m->source);
        if (r->evaluated) {
            json_builder_set_member_name(b, "model");
            json_builder_add_double_value(b, r->model);
            json_builder_set_member_name(b, "error");
            json_builder_add_double_value(b, r->error);
        }
        if (r->has_interval) {
            json_builder_set_member_name(b, "interval_low");
            json_builder_add_double_value(b, r->lo);
            json_builder_set_member_name(b, "interval_high");
            json_builder_add_double_value(b, r->hi);
            json_builder_set_member_name(b, "interval_points");
            json_builder_add_int_value(b, r->points);
        }
        json_builder_end_object(b);
        g_free(exp);
    }
    json_builder_end_array(b);
    cli_print_json(b);
}

int cmd_validate(int argc, char **argv)
{
    char *cpu = NULL, *meas = NULL, *profiles = NULL;
    gboolean json = FALSE;
    int samples = 32;
    GOptionEntry entries[] = {
        { "measurements", 0, 0, G_OPTION_ARG_FILENAME, &meas, "measurement set (default validation/measurements.ini)", "FILE" },
        { "cpu", 'c', 0, G_OPTION_ARG_STRING, &cpu, "use this preset file for the rows that name its preset (e.g. a freshly fitted one)", "P" },
        { "profiles", 0, 0, G_OPTION_ARG_FILENAME, &profiles, "syscall profile table (default src/kernel_model/syscalls.ini)", "FILE" },
        { "uncertainty", 'u', 0, G_OPTION_ARG_INT, &samples, "points of the uncertainty design per preset for the 90 % intervals (default 32; 0: none)", "N" },
        { "json", 0, 0, G_OPTION_ARG_NONE, &json, "print JSON", NULL },
        { NULL },
    };
    GOptionContext *ctx = g_option_context_new("- every published measurement against the model");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Runs each row's experiment on the preset it names and prints the published figure,\n"
        "the model's and the error (relative; 0 inside a published span). 'check' rows were\n"
        "never fitted: they are the model's predictions. 'fit' rows are calibration targets\n"
        "and cannot count as agreement. Rows with experiment none are listed, not run.\n"
        "The interval: the row on --uncertainty N points of the uncertainty design of its\n"
        "preset (the estimates the fit left open sampled over their ranges, each point\n"
        "moved back onto the fit rows; seed 1), 5th to 95th percentile.");
    int rc = VMS_EXIT_USAGE;
    Preset *p = NULL;
    MeasurementSet *set = NULL;
    Validation *v = NULL;
    GError *err = NULL;
    if (!cli_parse(ctx, &argc, &argv, "validate"))
        goto done;
    if (argc != 1 || samples < 0 || samples > 4096) {
        fprintf(stderr, "vmsplit validate: no arguments expected and --uncertainty from 0 to 4096 "
                        "(see 'vmsplit validate --help')\n");
        goto done;
    }
    if ((cpu && !(p = preset_load(cpu, &err))) || !(set = meas_load(meas, &err)) ||
        !(v = calib_validate(set, p, profiles, (unsigned)samples, 1, &err))) {
        rc = cli_fail("validate", err);
        goto done;
    }
    if (json) {
        print_json(v);
    } else {
        printf("vmsplit validate: %s\n\nsplit (declared before fitting): %s\n\n", set->path,
               set->split_reason);
        printf("  %-36s %-14s %13s %10s %17s %9s  %-7s %s\n", "measurement", "preset",
               "published", "model", samples ? "90 % interval" : "", "error", "unit", "machine");
        printf("checks (predictions: never fitted)\n");
        print_rows(v, MEAS_ROLE_CHECK);
        printf("fit targets (calibration met these; not agreement)\n");
        print_rows(v, MEAS_ROLE_FIT);
    }
    rc = VMS_EXIT_OK;
done:
    calib_validation_free(v);
    meas_free(set);
    preset_free(p);
    g_free(cpu);
    g_free(meas);
    g_free(profiles);
    g_option_context_free(ctx);
    return rc;
}
