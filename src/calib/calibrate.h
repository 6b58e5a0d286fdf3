/* Calibration: fit a preset's ranged estimates to the `fit` rows of a
 * measurement set by running the executed model (calib/experiment.h), and
 * say which parameters the rows determine and which they cannot separate.
 *
 * Method (docs/calibration.md). The free parameters are the preset's
 * integer keys with a declared range (presets/README.md, "Ranges"); each is
 * scaled to its range, x = (value - prior) / (high - low), where prior is
 * the estimate the file gives ("prior N" once fitted). The objective is
 *
 *     sum over fit rows (model - figure)^2 / figure^2  +  lambda |x|^2
 *
 * with lambda = 1e-6: the rows decide every combination of parameters they
 * depend on, and the tiny ridge term decides only what they leave open,
 * keeping it at the prior (or spreading a determined change over a
 * combination's members in proportion to their ranges squared). It is
 * minimised by bounded Gauss-Newton steps: the Jacobian from finite
 * differences of executed runs, a step solved on the parameters not held
 * at a bound, a parameter that would leave its range held at the bound and
 * the step solved again; values rounded to whole cycles after each step,
 * until a step changes none. The model is linear in the cycle costs, so
 * two or three steps converge. Deterministic: no random numbers, the same
 * start and data give the same result.
 *
 * Identifiability: at the solution the rows' Jacobian (model units per
 * cycle of each parameter) is reduced to row echelon form, columns taken
 * in order of influence (derivative times range). Each non-zero row is a
 * combination the data determine ("int_gate + iret + io + 6 branch"); one
 * with a single parameter determines that parameter. A parameter in a
 * combination with others is not separable: the fit moves it only as the
 * ridge splits the combination, and it keeps its range. A parameter no fit
 * row depends on keeps its prior. */
#ifndef VMSPLIT_CALIB_CALIBRATE_H
#define VMSPLIT_CALIB_CALIBRATE_H

#include "calib/measurements.h"
#include "preset/preset.h"

/* At most this many fit rows per CPU (bit masks below). */
#define CALIB_MAX_ROWS 32

typedef struct {
    char *id;                    /* "cost.int_gate" */
    unsigned lo, hi, prior;
    unsigned start, value;       /* where the fit began and ended */
    bool informed;               /* some fit row depends on it */
    bool separable;              /* determined on its own */
    unsigned rows;               /* bit i: fit row i depends on it */
    unsigned combos;             /* bit i: it appears in combination i */
} CalibParam;

typedef struct {
    char *text;                  /* "int_gate + iret + io + 6 branch" */
    double value;                /* the combination at the fitted values */
    bool single;                 /* one parameter */
} CalibCombo;

typedef struct {
    const Measurement *row;
    double start, model;         /* the model's figure before and after */
    double error;                /* meas_error at the fit */
} CalibTarget;

typedef struct {
    Preset *fitted;              /* the preset with the fitted values */
    CalibParam *params;
    unsigned nparams;
    CalibTarget *targets;        /* the fit rows for this CPU */
    unsigned ntargets;
    CalibCombo *combos;
    unsigned ncombos;
    unsigned runs;               /* executed model runs (experiments) */
    unsigned steps;              /* Gauss-Newton steps taken */
} CalibResult;

typedef struct {
    const Preset *preset;        /* its name selects the rows (Measurement.cpu) */
    const MeasurementSet *set;
    const char *profiles;        /* syscall profile table; NULL: the bundled one */
    /* Optional: fit only these ids (NULL-terminated); others are held. */
    const char *const *only;
    /* Optional: start from these values (same order as the fitted
     * parameters, i.e. the preset's ranges in file order, filtered by
     * `only`) instead of the preset's. */
    const unsigned *start;
    /* Optional: the centre of the ridge instead of the priors the preset
     * declares (same order as start). The uncertainty analysis passes a
     * sampled point as both start and prior, so the fit moves it as little
     * as it can while meeting the fit rows. */
    const unsigned *prior;
} CalibConfig;

/* False (err) if the preset has no fit rows or no ranged parameter, or an
 * experiment fails. */
CalibResult *calib_fit(const CalibConfig *cfg, GError **err);
void calib_result_free(CalibResult *r);

/* The preset file's text with every parameter the fit moved rewritten:
 * the fitted value, and its comment turned into "fitted: COMBINATION =
 * VALUE to ROWS (FILE); prior N; estimate was: ORIGINAL", range kept.
 * Everything else is left as written. g_free. */
char *calib_write_preset(const CalibResult *r, const char *text, const char *meas_path);

#endif
