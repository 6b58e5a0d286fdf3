/* vmsplit compare --uncertainty N: the compared figures' 90 % intervals.
 *
 * The design is the one `vmsplit syscall --uncertainty` and `vmsplit
 * claim` sample (calib/uncertainty.h: N points of a scrambled Halton
 * design, seed 1, the estimates the calibration left open spread over
 * their ranges, each point moved back onto the preset's fit rows and
 * rejected if it cannot meet them). It runs as a sweep of kind
 * uncertainty-replay (report/runner_uncertainty.c): one row per (point,
 * layout), the trace replayed through that layout on the point's preset,
 * -j points at a time. A row depends only on its point, so the intervals
 * are the same for any -j; with --uncertainty-csv FILE the rows are kept,
 * and a FILE that already holds the sweep (a rerun, or shards made with
 * `vmsplit sweep --kind uncertainty-replay ... --shard K/N` and merged) is
 * read instead of recomputed.
 *
 * Every figure is taken per point (the overhead and the extra cycles
 * against the first layout of the same point), and its interval is the
 * 5th to 95th percentile over the accepted points. The central values are
 * the ordinary compare's: the preset as shipped. */
#ifndef VMSPLIT_CLI_CMD_COMPARE_H
#define VMSPLIT_CLI_CMD_COMPARE_H

#include "replay/replay.h"

#include <json-glib/json-glib.h>
#include <stdio.h>

typedef struct {
    const char *cpu;             /* preset name or .ini, as the sweep takes it */
    const char *trace;
    char **layouts;              /* the first is the baseline */
    bool sysenter;
    const char *paging;          /* "pae" or "legacy" (ptformat names) */
    uint64_t ram;
    double clock_mhz;            /* the preset's (not a sampled figure) */
    unsigned points, jobs;
    const char *csv;             /* keep the design's rows here; NULL: a temporary file */
    bool progress;
} CompareUncConfig;

typedef struct CompareUnc CompareUnc;

CompareUnc *compare_unc_run(const CompareUncConfig *cfg, GError **err);
void compare_unc_free(CompareUnc *u);

/* After replay_print_compare: each figure as central [p5, p95]. */
void compare_unc_print_text(const CompareUnc *u, ReplayResult *const *r, size_t n, FILE *out);
/* Inside layout i's object of the comparison array: "interval_90". */
void compare_unc_json_layout(const CompareUnc *u, size_t i, JsonBuilder *b);
/* At the top level: "uncertainty" (points, accepted, seed). */
void compare_unc_json(const CompareUnc *u, JsonBuilder *b);
/* The compare's CSV with the interval columns appended (one header). */
void compare_unc_print_csv(const CompareUnc *u, ReplayResult *const *r, size_t n, FILE *out);

#endif
