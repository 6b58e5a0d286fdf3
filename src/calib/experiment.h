/* Running a measurement's experiment on the model (calib/measurements.h):
 * `syscall NAME LAYOUT ENTRY` boots a machine with the preset and the
 * layout, runs the call through the layout's real NASM stubs on the core
 * (kernel_model/measure.h: measure_repeat, as `vmsplit syscall` does) and
 * takes the mean cycles per call; `preset GROUP.KEY` reads the preset;
 * `guest NAME LAYOUT` runs a program that times itself (calib/exp_guest.h).
 * The value is converted to the row's unit (us at the preset's clock) and
 * combined with the baseline's (difference or ratio). Deterministic: the
 * same preset gives the same value. */
#ifndef VMSPLIT_CALIB_EXPERIMENT_H
#define VMSPLIT_CALIB_EXPERIMENT_H

#include "calib/measurements.h"
#include "preset/preset.h"
#include "kernel_model/profiles.h"

/* Calls measured after the warm-up ones: the model is in its steady state
 * after a few calls, so the mean is exact well before this. */
#define CALIB_CALLS 20
#define CALIB_WARMUP 10

/* The row's figure as the model gives it on preset p, in the row's unit.
 * False (err) for an experiment `none`, an unknown syscall, layout or key,
 * or a guest fault. */
bool calib_measure(const Preset *p, const ProfileTable *t, const Measurement *m, double *out,
                   GError **err);

#endif
