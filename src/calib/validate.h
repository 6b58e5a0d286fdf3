/* Validation: every measurement of a set (calib/measurements.h) with the
 * model's figure beside it, on the preset its row names. `check` rows are
 * predictions (nothing was fitted to them); `fit` rows show how closely the
 * calibration met its targets and cannot count as agreement. Rows whose
 * experiment is `none` are listed with their note, not evaluated. */
#ifndef VMSPLIT_CALIB_VALIDATE_H
#define VMSPLIT_CALIB_VALIDATE_H

#include "calib/measurements.h"
#include "cpu/preset.h"

typedef struct {
    const Measurement *row;
    bool evaluated;              /* false: experiment none */
    double model;                /* in the row's unit */
    double error;                /* meas_error: relative, 0 inside a span */
} ValidationRow;

typedef struct {
    ValidationRow *rows;         /* in the set's order */
    unsigned n;
} Validation;

/* override: a preset used instead of the bundled one for the rows whose cpu
 * is its name (NULL: none). profiles: NULL for the bundled table. */
Validation *calib_validate(const MeasurementSet *set, const Preset *override,
                           const char *profiles, GError **err);
void calib_validation_free(Validation *v);

#endif
