/* Uncertainty: how far a modelled figure can move when the estimates the
 * measurements did not determine range over their declared ranges.
 *
 * Design. Point i of a sample is a scrambled Halton point: coordinate d is
 * the radical inverse of i + 1 in the d-th prime base with its digits
 * permuted by a permutation drawn from the seed (random digit scrambling,
 * which removes the correlation plain Halton points show between high
 * bases at small i). It depends only on i, the seed and the preset's
 * ranges, so any subset of points (a -j, a shard of a sweep) gives the
 * same values. Each
 * coordinate maps to one ranged parameter of the preset: a "range LO..HI"
 * to an integer spread evenly over LO..HI, "alternatives A,B" to one of
 * them (integer and boolean keys; a text key such as tlb.policy is held).
 *
 * Projection. A sampled point generally misses the `fit` measurements the
 * preset was calibrated to. It is moved back onto them by the calibration
 * itself (calib/calibrate.h) with the point as both start and prior: the
 * combinations the fit rows determine are restored, everything they leave
 * open stays as sampled. A point that cannot meet its fit rows within 2 %
 * inside the ranges is rejected (counted, not used).
 *
 * Figures. For each accepted point the null call (getppid) is run through
 * the real stubs under 3g1g and 4g4g, via int 0x80 and sysenter: the figures
 * the claim's latency statement rests on; and a workload trace can be
 * replayed under 3g1g and 4g4g for its overhead. Intervals are the 5th and
 * 95th percentiles of the accepted points (a 90 % interval). */
#ifndef VMSPLIT_CALIB_UNCERTAINTY_H
#define VMSPLIT_CALIB_UNCERTAINTY_H

#include "calib/measurements.h"
#include "mmu/pae.h"
#include "preset/preset.h"

/* The design's coordinates of point `index`: dims numbers in [0, 1), the
 * d-th the scrambled radical inverse of index + 1 in the d-th prime base.
 * unc_sample maps them onto a preset's ranges in the preset's order; other
 * models with ranged estimates (the lowmem model, kernel_model/lowmem.h)
 * map them onto theirs. */
#define UNC_MAX_DIMS 50
void unc_design_point(unsigned seed, unsigned index, unsigned dims, double *u);

/* The figures of one point, in cycles per call. */
#define UNC_FIGURES(X)                                                   \
    X(int80_3g1g, "getppid via int 0x80 under 3g1g, cycles")             \
    X(int80_4g4g, "getppid via int 0x80 under 4g4g, cycles")             \
    X(sysenter_3g1g, "getppid via sysenter under 3g1g, cycles")          \
    X(sysenter_4g4g, "getppid via sysenter under 4g4g, cycles")          \
    X(sysenter_3g1g_legacy, "getppid via sysenter under 3g1g, 32-bit paging, cycles") \
    X(sysenter_4g4g_legacy, "getppid via sysenter under 4g4g, 32-bit paging, cycles")

typedef struct {
#define X(name, desc) double name;
    UNC_FIGURES(X)
#undef X
} UncFigures;

typedef struct {
    bool accepted;               /* met the fit rows within 2 % */
    UncFigures fig;
    char *values;                /* "cost.mov_cr3=412;memory.pdpte_load_uncached=0;..." */
} UncPoint;

/* Point `index` of the design with `seed` for preset p (its fit rows from
 * set): the sampled preset moved back onto the fit rows. Thread-safe (p
 * and set are only read). */
typedef struct {
    Preset *preset;              /* the projected preset */
    bool accepted;
    char *values;                /* as UncPoint.values */
} UncSample;

bool unc_sample(const Preset *p, const MeasurementSet *set, unsigned seed, unsigned index,
                UncSample *out, GError **err);
void unc_sample_clear(UncSample *s);

/* The overhead of 4g4g over 3g1g (percent of the 3g1g cycles) of a trace
 * replayed on p (int 0x80 entry, 4 GiB) with both layouts' page tables
 * in paging mode `paging`. */
bool unc_overhead(const Preset *p, const char *trace, PagingMode paging, double *pct,
                  GError **err);

/* unc_sample and the null-call figures of the projected preset. */
bool unc_point(const Preset *p, const MeasurementSet *set, unsigned seed, unsigned index,
               UncPoint *out, GError **err);
void unc_point_clear(UncPoint *pt);

/* The figures of a preset as it is (the central values). */
bool unc_figures(const Preset *p, UncFigures *out, GError **err);

/* The q-quantile (0..1) of v[0..n) by linear interpolation between order
 * statistics (sorts v). */
double unc_quantile(double *v, unsigned n, double q);

/* A figure of a preset, for the tornado. */
typedef bool (*UncFigureFn)(const Preset *p, void *user, double *out, GError **err);

/* Tornado: for each sampled parameter, fn with that parameter at its low
 * and at its high end (range bounds, or the least and greatest
 * alternative), every other at the preset's value, projected onto the fit
 * rows as above (the parameter itself held). */
typedef struct {
    char *id;
    double low, high;            /* the figure at each end */
} UncSwing;

bool unc_tornado(const Preset *p, const MeasurementSet *set, UncFigureFn fn, void *user,
                 UncSwing **out, unsigned *n, GError **err);
void unc_tornado_free(UncSwing *s, unsigned n);
/* 0..3: the figures in UNC_FIGURES order; 4, 5: the 4g4g - 3g1g extra via
 * int 0x80, sysenter (cycles). */
double unc_figure_pick(const UncFigures *f, int which);

#endif
