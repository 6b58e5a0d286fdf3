/* Published measurements as data (validation/measurements.ini, documented
 * at its top): each row a figure with its unit, the machine and clock it
 * was taken on, its source, the vmsplit experiment that reproduces it, and
 * its role: `fit` (calibration may move the preset's ranged estimates to
 * match it) or `check` (never fitted; the model's prediction is compared
 * with it by `vmsplit validate`). The file's [split] group says why the
 * rows were divided as they are, before any fit was made.
 *
 * An experiment is one of
 *   syscall NAME LAYOUT ENTRY    NAME from the profile table, ENTRY int80 or
 *                                sysenter: the mean latency of the call run
 *                                through the layout's real stubs on a booted
 *                                machine (kernel_model/measure.h)
 *   preset GROUP.KEY             the preset's own figure (a sourced or
 *                                estimated value checked against a
 *                                published one)
 *   guest NAME LAYOUT            the program workloads/guest/NAME.asm run
 *                                under the layout (`vmsplit run --layout`);
 *                                the figure is the last number it prints
 *                                (calib/exp_guest.h)
 *   none                         not reproduced yet (the row's note says
 *                                what is missing); listed, never evaluated
 * optionally against a `baseline` experiment with `combine = difference`
 * or `ratio`. Reading is strict: an unknown key, a bad unit, role or
 * experiment is an error naming the file, the line and what was expected. */
#ifndef VMSPLIT_CALIB_MEASUREMENTS_H
#define VMSPLIT_CALIB_MEASUREMENTS_H

#include <glib.h>
#include <stdbool.h>

#define CALIB_ERROR (calib_error_quark())
GQuark calib_error_quark(void);
typedef enum {
    CALIB_ERROR_PARSE,           /* bad input file: exit status 2 */
    CALIB_ERROR_INVALID,         /* a well-formed request that cannot be met */
} CalibError;

typedef enum { MEAS_UNIT_CYCLES, MEAS_UNIT_US, MEAS_UNIT_RATIO } MeasUnit;
typedef enum { MEAS_ROLE_FIT, MEAS_ROLE_CHECK } MeasRole;
typedef enum { EXP_NONE, EXP_SYSCALL, EXP_PRESET, EXP_GUEST } ExpKind;
typedef enum { COMBINE_NONE, COMBINE_DIFFERENCE, COMBINE_RATIO } ExpCombine;

typedef struct {
    ExpKind kind;
    char *syscall;               /* EXP_SYSCALL */
    char *layout;
    bool sysenter;
    bool legacy;                 /* built with legacy (non-PAE) paging */
    char *key;                   /* EXP_PRESET: "memory.latency" */
    char *program;               /* EXP_GUEST: "dtlb64" (and layout) */
} Experiment;

typedef struct {
    char *id;                    /* the group name */
    double lo, hi;               /* the figure; lo == hi unless given as LO..HI */
    MeasUnit unit;
    char *machine, *clock, *source, *quote, *note;
    char *cpu;                   /* the preset that models the machine */
    Experiment exp, baseline;
    ExpCombine combine;
    MeasRole role;
    int line;                    /* of the group header */
} Measurement;

typedef struct {
    char *path;
    char *split_reason;          /* [split] reason */
    GPtrArray *rows;             /* Measurement*, file order */
} MeasurementSet;

/* path NULL: the bundled validation/measurements.ini. */
MeasurementSet *meas_load(const char *path, GError **err);
void meas_free(MeasurementSet *s);

/* "syscall getppid 3g1g int80", "preset memory.latency", "none"; g_free. */
char *meas_experiment_text(const Experiment *e);
const char *meas_unit_name(MeasUnit u);

/* The distance of a model value from the figure, relative to it: 0 inside
 * LO..HI, else (v - nearest end) / nearest end. */
double meas_error(const Measurement *m, double v);

#endif
