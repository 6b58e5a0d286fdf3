/* The experiment `guest NAME LAYOUT` (calib/measurements.h): a program of
 * workloads/guest/ that measures itself on the model, as a published
 * figure was measured on hardware -- with RDTSC around the code in
 * question -- and prints the result. The program (the object the build
 * assembled from workloads/guest/NAME.asm) runs as `vmsplit run --layout
 * LAYOUT --cpu P` runs it (kernel_model/guestprog.h: task 0 of a booted
 * machine, its system calls through the layout's stubs, 4 GiB RAM); it must
 * exit 0, and the figure is the last decimal number it writes to fd 1. */
#ifndef VMSPLIT_CALIB_EXP_GUEST_H
#define VMSPLIT_CALIB_EXP_GUEST_H

#include "preset/preset.h"

#include <glib.h>
#include <stdbool.h>

/* The program's object: VMSPLIT_BUILD_DIR/workloads/guest/NAME.o, or
 * $VMSPLIT_GUEST_DIR/NAME.o. g_free. */
char *calib_guest_object(const char *name);

/* Runs it; false (err, CALIB_ERROR) if the object is missing, the layout
 * unknown, the program faults, exits non-zero or prints no number. */
bool calib_run_guest(const Preset *p, const char *name, const char *layout, double *out,
                     GError **err);

#endif
