/* vmsplit claim: the seeds' figures, each reproduced, explained or refuted
 * by the model, with the workloads and plots behind the verdicts.
 *
 *  1. A canonical set of workloads (the generators: null, pipe, fileio, db,
 *     net, compute; and the bundled real traces) replayed on p4-northwood
 *     under 3g1g and 4g4g: syscall rate, time under each, overhead and the
 *     two biggest contributors to it.
 *  2. Every quantitative statement of the two seeds (and one published
 *     KPTI anchor), what the model says, the rule and the verdict; a
 *     statement whose figure the preset was fitted to (a `fit` row of
 *     validation/measurements.ini) is marked FIT TARGET, not agreement.
 *     With uncertainty (ClaimConfig.uncertainty points of the design in
 *     calib/uncertainty.h, run as a sweep into uncertainty.csv) the null
 *     call's 4G/4G extra gets a 90 % interval and an interval verdict, and
 *     a tornado (tornado.csv) names the estimates that decide it; the
 *     lowmem statements get theirs over the lowmem model's ranged
 *     estimates and the KPTI one over skylake's (claim_intervals.c).
 *  3. The plots (lowmem against RAM, per-syscall latency stacked by part,
 *     overhead against syscall rate, 4g4g/kpti/kpti-pcid against rate)
 *     and the CSVs behind them, in an output folder.
 *
 * Every number is computed by the model in this run; the statements' own
 * figures are quoted from the seeds and compared, never fed in. */
#ifndef VMSPLIT_REPORT_CLAIM_H
#define VMSPLIT_REPORT_CLAIM_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct {
    bool quick;                  /* a reduced set: small counts, two small real traces */
    const char *outdir;          /* plots and CSVs; created if missing */
    bool plots;                  /* run gnuplot (false: CSVs only) */
    int jobs;                    /* replays in parallel */
    int uncertainty;             /* points of the uncertainty design; 0: none */
    bool sample_captures;        /* also replay the captured programs (the typical
                                  * workloads) at every point: their overheads get
                                  * intervals (minutes) */
    int paging;                  /* PagingMode (kernel_model/ptformat.h) of section 1's
                                  * replays (and the statements drawn from them: typical,
                                  * micro) and the per-syscall plot; 0: PAE. The other
                                  * statements keep the modes they name */
} ClaimConfig;

/* A statement's verdict under its rule (src/report/claim_statements.c
 * lists the statements and their rules as a table). A statement whose
 * figure the preset was calibrated to is printed as a FIT TARGET instead,
 * and not counted. */
typedef enum {
    CLAIM_AGREES,
    CLAIM_PARTLY,                /* agrees in part (the rule says which part) */
    CLAIM_DISAGREES,
    CLAIM_UNDECIDED,             /* the figure's 90 % interval straddles the rule's band */
    CLAIM_NVERDICTS,
} ClaimVerdict;
extern const char *const claim_verdict_names[CLAIM_NVERDICTS];

/* The interval rule: AGREES if [lo, hi] lies inside [band_lo, band_hi],
 * DISAGREES if the two do not meet, UNDECIDED otherwise. */
ClaimVerdict claim_verdict_interval(double lo, double hi, double band_lo, double band_hi);

/* The "+3 usecs on PAE and +1 usec on non-PAE" rule from the interval
 * verdicts of PAE's extra (band 2..4 us), non-PAE's (0.5..1.5 us) and
 * their ratio (2..4): AGREES if both extras agree; else PARTLY if the
 * ratio (clock-independent) agrees; DISAGREES if an extra and the ratio
 * disagree; else UNDECIDED. */
ClaimVerdict claim_verdict_pae_nonpae(ClaimVerdict pae, ClaimVerdict nonpae, ClaimVerdict ratio);

/* Prints the report to out. False (err) on bad configuration or a guest
 * fault; a statement the model refutes is not an error. */
bool claim_run(const ClaimConfig *cfg, FILE *out, GError **err);

#endif
