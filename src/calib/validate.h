/* Validation: every measurement of a set (calib/measurements.h) with the
 * model's figure beside it, on the preset its row names. `check` rows are
 * predictions (nothing was fitted to them); `fit` rows show how closely the
 * calibration met its targets and cannot count as agreement. Rows whose
 * experiment is `none` are listed with their note, not evaluated.
 *
 * With samples > 0 every row also gets a 90 % interval: the row evaluated
 * on that many points of the uncertainty design (calib/uncertainty.h) of
 * its preset, each moved back onto the preset's fit rows; the 5th and 95th
 * percentiles of the accepted points. */
#ifndef VMSPLIT_CALIB_VALIDATE_H
#define VMSPLIT_CALIB_VALIDATE_H

#include "calib/measurements.h"
#include "preset/preset.h"

typedef struct {
    const Measurement *row;
    bool evaluated;              /* false: experiment none */
    double model;                /* in the row's unit */
    double error;                /* meas_error: relative, 0 inside a span */
    bool has_interval;
    double lo, hi;               /* 90 % interval over the sampled points */
    unsigned points;             /* accepted points it was taken over */
} ValidationRow;

typedef struct {
    ValidationRow *rows;         /* in the set's order */
    unsigned n;
} Validation;

/* override: a preset used instead of the bundled one for the rows whose cpu
 * is its name (NULL: none). profiles: NULL for the bundled table. */
Validation *calib_validate(const MeasurementSet *set, const Preset *override,
                           const char *profiles, unsigned samples, unsigned seed, GError **err);
void calib_validation_free(Validation *v);

#endif
