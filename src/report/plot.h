/* `vmsplit plot`: graphs of sweep and compare CSVs, drawn by gnuplot with
 * the scripts in plots/ (which also run by hand, see docs/sweep.md).
 *
 * Each plot kind names its script, the columns it needs (checked before
 * gnuplot runs, so a CSV with missing columns is a clear error naming the
 * file), and how to pick x, y and the grouping from the CSV. The driver
 * passes the script a few variables (csv, out, groupcols, and per kind
 * xcol/ycol/labels) with `gnuplot -e`; the scripts fall back to defaults
 * when run by hand.
 *
 * gnuplot is found at run time: $VMSPLIT_GNUPLOT, else `gnuplot` on PATH.
 * Scripts: $VMSPLIT_PLOTS_DIR, else the source tree's plots/, else the
 * installed data directory. */
#ifndef VMSPLIT_REPORT_PLOT_H
#define VMSPLIT_REPORT_PLOT_H

#include "report/csv.h"

#include <glib.h>
#include <stdbool.h>

typedef struct PlotKind {
    const char *name;        /* --kind: "lowmem" */
    const char *script;      /* file in plots/: "lowmem.gp" */
    const char *summary;
    const char *const *required;  /* columns the script reads */
} PlotKind;

/* NULL-terminated, in the order (overhead, tlb, latency, lowmem,
 * kpti). */
const PlotKind *const *plot_kind_all(void);
const PlotKind *plot_kind_lookup(const char *name, GError **err);
/* The kind a CSV calls for: from its sweep record (sweep.h: OUT.meta.json
 * beside it, or a legacy comment line; kind=lowmem -> lowmem, tlbsim ->
 * tlb), else from its columns. */
const PlotKind *plot_kind_detect(const CsvTable *t, GError **err);

/* Absolute paths, newly allocated; NULL with an error saying what to
 * install or set. */
char *plot_find_gnuplot(GError **err);
char *plot_find_script(const PlotKind *k, GError **err);

typedef struct {
    const char *kind;        /* NULL: detect */
    const char *title;       /* NULL: the script's */
    bool verbose;            /* pass gnuplot's messages through */
} PlotOptions;

/* Whether out names an image plot_csv can write (below); else an error
 * naming the extension. */
bool plot_output_ok(const char *out, GError **err);

/* Plot csv_path into out: "x.png" (pngcairo), "x.svg", "x.pdf" (pdfcairo),
 * or with no extension both "x.png" and "x.svg". Any other extension is an
 * error, before anything runs. */
bool plot_csv(const char *csv_path, const char *out, const PlotOptions *o, GError **err);

#endif
