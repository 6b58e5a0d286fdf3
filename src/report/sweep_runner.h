/* Point runners: what one sweep point computes. The sweep engine (sweep.h)
 * knows nothing about lowmem, TLBs or replays; it enumerates parameter
 * combinations and hands each one to a runner, which returns the figures
 * for that point's CSV row. Adding a kind of sweep is one file
 * (runner_<kind>.c defining a SweepRunner) plus one line in the table in
 * sweep_runner.c.
 *
 * A runner declares
 *   - its parameters: the CLI option (--ram), the CSV column (ram_mib), the
 *     type, and how a value is made canonical (sizes become an integer in
 *     the column's unit, names are checked), so that "1G" and "1024M" are
 *     the same point for resume and merge;
 *   - its figures: the CSV columns it fills, in order;
 *   - prepare/finish (optional): per-sweep state shared by all points, e.g.
 *     a preset loaded once; it must be safe to read from several threads;
 *   - run_point: computes one point. It is called from worker threads at
 *     the same time for different points, so it must only read shared
 *     state. A failure is bad input (a trace that does not parse) and stops
 *     the sweep; an architectural outcome (a machine that does not boot) is
 *     a figure, not a failure. */
#ifndef VMSPLIT_REPORT_SWEEP_RUNNER_H
#define VMSPLIT_REPORT_SWEEP_RUNNER_H

#include "kernel_model/ptformat.h"
#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SWEEP_PARAM_NAME,   /* a word; check() validates it (layout, policy) */
    SWEEP_PARAM_UINT,   /* decimal integer >= 0 */
    SWEEP_PARAM_SIZE,   /* "64G", "896M", "4096K", bytes; stored in `unit` */
    SWEEP_PARAM_PATH,   /* an input file; taken from positional arguments */
} SweepParamType;

typedef struct SweepParam {
    const char *option;      /* long option without "--": "layouts" */
    const char *column;      /* CSV column: "layout" */
    SweepParamType type;
    uint64_t unit;           /* SWEEP_PARAM_SIZE: bytes per stored unit */
    const char *defaults;    /* comma list used when the option is absent;
                              * NULL: the option is required */
    const char *help;        /* for --help */
    /* Optional: reject a bad value early (before any point runs), naming
     * what was expected. For SWEEP_PARAM_NAME the value is as given. */
    bool (*check)(const char *value, GError **err);
} SweepParam;

/* One point: parameter values, canonical text, in the runner's order. */
typedef struct {
    guint index;             /* position in the full sweep (0-based) */
    const char *const *values;
} SweepPoint;

typedef struct SweepRunner {
    const char *kind;        /* "lowmem": --kind and the sweep's record */
    const char *summary;
    const SweepParam *params;
    size_t n_params;
    const char *const *figures;  /* CSV columns filled by run_point */
    size_t n_figures;
    /* Optional. Returns the shared context passed to run_point (may be
     * NULL when nothing is shared). */
    void *(*prepare)(GError **err);
    void (*finish)(void *ctx);
    /* Fill out[0 .. n_figures-1] with newly allocated strings (g_free'd by
     * the caller). Deterministic: the same point gives the same text, so
     * that the CSV does not depend on -j. */
    bool (*run_point)(void *ctx, const SweepPoint *pt, char **out, GError **err);
} SweepRunner;

/* NULL-terminated table of the built-in runners (sweep_runner.c). */
const SweepRunner *const *sweep_runner_all(void);
/* NULL with an error listing the known kinds. */
const SweepRunner *sweep_runner_lookup(const char *kind, GError **err);
/* Add a runner beyond the built-in table (tests; a program embedding the
 * library). Not thread-safe: call before any sweep runs. */
void sweep_runner_register(const SweepRunner *r);
/* Index of a parameter by column name, or -1. */
int sweep_runner_param(const SweepRunner *r, const char *column);

/* Helpers for runners: numbers formatted the same way on every host and
 * locale ("%.6f"-style fixed decimals for doubles). */
char *sweep_format_uint(uint64_t v);
char *sweep_format_double(double v, int decimals);

/* Checks (SweepParam.check) that several runners share (sweep_checks.c):
 * a preset name or file, a layout, a kernel entry (int80 or sysenter),
 * installed RAM in MiB (32M to 64G), a paging mode (pae or legacy). */
bool sweep_check_preset(const char *value, GError **err);
bool sweep_check_layout(const char *value, GError **err);
bool sweep_check_entry(const char *value, GError **err);
bool sweep_check_ram(const char *value, GError **err);
bool sweep_check_paging(const char *value, GError **err);
/* A point's installed RAM (MiB, as its column holds it) within what paging
 * format f addresses (32-bit paging: 4 GiB). */
bool sweep_check_ram_in_mode(const char *ram_mib, const PageTableFormat *f, GError **err);

#endif
