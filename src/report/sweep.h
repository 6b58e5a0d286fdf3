/* Parameter sweeps: the cartesian product of a runner's parameter lists,
 * one CSV row per point, run in parallel, resumable, shardable.
 *
 * A sweep definition (SweepDef) is a runner (sweep_runner.h) plus one list
 * of canonical values per parameter. Points are numbered in odometer order:
 * the runner's first parameter varies slowest, its last fastest. That
 * number fixes the order of rows in every CSV, so the file is the same
 * whatever -j is, and merged shards equal the unsharded run byte for byte.
 *
 * The CSV is plain RFC 4180: its first line is the header (parameter
 * columns, then the runner's figures), then the rows. The parameter
 * columns are the point's key: resume skips points already present and
 * merge checks that no point is missing or doubled. The definition itself
 * (kind, every parameter list, the shard) is recorded beside the CSV in a
 * sidecar, OUT.meta.json (sweep_record.c; docs/sweep.md says why not in the
 * CSV). CSVs written before the sidecar existed carry the definition in a
 * first comment line instead,
 *
 *   # vmsplit-sweep v1 kind=lowmem layout=3g1g,4g4g struct_page=32 ram_mib=1024,2048
 *
 * which is still read; resuming such a file converts it (the line moves to
 * the sidecar) and merging it writes the new form.
 *
 * Nothing is lost: each finished point's row is appended and flushed (and
 * fsync'ed with SweepOptions.fsync) before the next one is reported; rows
 * land in completion order and, once every point is present, the file is
 * rewritten in point order (temporary file + rename). A rerun with the same
 * output reads the file, refuses one from another sweep, cuts a torn last
 * line, and runs only the missing points. */
#ifndef VMSPLIT_REPORT_SWEEP_H
#define VMSPLIT_REPORT_SWEEP_H

#include "report/csv.h"
#include "report/sweep_runner.h"

#include <glib.h>
#include <stdbool.h>

/* Above this a sweep is surely a mistake in the lists (and its CSV would
 * not fit comfortably in memory for the final sort). */
#define SWEEP_MAX_POINTS 1000000u

typedef struct SweepDef SweepDef;

SweepDef *sweep_def_new(const SweepRunner *r);
void sweep_def_free(SweepDef *d);
/* Add a comma-separated list of values to a parameter (by its option or
 * column name), making each canonical and checking it. */
bool sweep_def_add_list(SweepDef *d, const char *param, const char *list, GError **err);
/* Add one value (for SWEEP_PARAM_PATH from positional arguments: a path
 * may contain commas). */
bool sweep_def_add_value(SweepDef *d, const char *param, const char *value, GError **err);
/* "K/N", 1 <= K <= N: this run covers the points whose number modulo N is
 * K-1 (round robin, so that slow and fast points spread evenly). */
bool sweep_def_set_shard(SweepDef *d, const char *spec, GError **err);
/* Fill absent lists from defaults; error for a required one, a repeated
 * value, or too many points. Must be called before the queries below. */
bool sweep_def_finish(SweepDef *d, GError **err);

const SweepRunner *sweep_def_runner(const SweepDef *d);
guint sweep_def_n_points(const SweepDef *d);      /* whole sweep */
guint sweep_def_shard_k(const SweepDef *d);       /* 1-based; 1 of 1 unsharded */
guint sweep_def_shard_n(const SweepDef *d);
bool sweep_def_in_shard(const SweepDef *d, guint index);
/* Values of point `index` (n_params pointers into d, valid while d lives). */
void sweep_def_point(const SweepDef *d, guint index, const char **values);
/* Number of the point with these parameter values, or -1 if none. */
int sweep_def_find(const SweepDef *d, const char *const *values);
/* CSV header: parameter columns then figures (NULL-terminated, g_strfreev). */
char **sweep_def_header(const SweepDef *d);
/* The header line of the sweep's CSV, with its '\n'. */
char *sweep_def_csv_head(const SweepDef *d);
/* Values recorded by sweep_record.c: taken verbatim (they were canonical
 * when written; no check() runs, so that a merge needs neither the traces
 * nor the presets), only a repeated value is an error. */
bool sweep_def_add_recorded(SweepDef *d, const char *column, const char *value,
                            GError **err);
guint sweep_def_n_values(const SweepDef *d, size_t param);
const char *sweep_def_value(const SweepDef *d, size_t param, guint j);
/* One line for messages: "kind=lowmem layout=3g1g,4g4g ram_mib=1024"
 * (values %-escaped), with " shard=K/N" if asked and sharded. */
char *sweep_def_describe(const SweepDef *d, bool with_shard);
bool sweep_def_equal(const SweepDef *a, const SweepDef *b, bool ignore_shard);
/* "layout=3g1g, ram_mib=1024" for messages. */
char *sweep_def_describe_point(const SweepDef *d, const char *const *values);

typedef struct {
    guint jobs;          /* worker threads; 0: number of cores */
    bool progress;       /* progress bar + ETA on stderr (caller checks TTY) */
    bool fsync;          /* fsync after each row, not only fflush */
    guint stop_after;    /* tests: stop (as if killed) once this many new
                          * rows are written; 0: never */
} SweepOptions;

typedef struct {
    guint total;         /* points in this shard */
    guint resumed;       /* found in the existing CSV */
    guint computed;      /* computed and written by this run */
    bool repaired;       /* a torn last line was cut off */
    bool complete;       /* every point of the shard is in the file */
} SweepResult;

/* Run (or resume) the sweep into out_path. False with err set on bad input,
 * an unusable existing file or a failing point (rows written before the
 * failure stay, so a rerun resumes). Stopping via stop_after is not an
 * error: res->complete is false. */
bool sweep_run(const SweepDef *d, const char *out_path, const SweepOptions *o,
               SweepResult *res, GError **err);

/* ---- the record of a sweep beside its CSV (sweep_record.c) ------------- */

/* OUT.meta.json for OUT: the name appended, so that any CSV name works. */
char *sweep_record_path(const char *csv_path);
/* The sidecar's JSON text ("schema": SWEEP_RECORD_SCHEMA). */
#define SWEEP_RECORD_SCHEMA "vmsplit.sweep-meta/1"
char *sweep_record_to_json(const SweepDef *d, bool with_shard);
/* Parse a sidecar's text; `where` names it in errors. */
SweepDef *sweep_record_from_json(const char *text, gsize len, const char *where,
                                 GError **err);
/* Write csv_path's sidecar (temporary file + rename; fsync'ed if durable);
 * without with_shard it records the whole sweep (a merge's output). */
bool sweep_record_write(const SweepDef *d, const char *csv_path, bool with_shard,
                        bool durable, GError **err);

typedef enum {
    SWEEP_RECORD_NONE,       /* neither a sidecar nor a sweep comment line */
    SWEEP_RECORD_SIDECAR,    /* OUT.meta.json */
    SWEEP_RECORD_LEGACY,     /* "# vmsplit-sweep v1 ..." as the CSV's line 1 */
} SweepRecordSource;
/* The definition of the sweep that wrote t (read from t->path): from the
 * sidecar if there is one, else from a legacy comment line. NULL with err
 * unset and *src = SWEEP_RECORD_NONE if there is neither; NULL with err set
 * if the one there is cannot be read. */
SweepDef *sweep_record_read(const CsvTable *t, SweepRecordSource *src, GError **err);
/* The same, but NULL with an error (naming the missing sidecar) when there
 * is none: for merge and resume, which need it. */
SweepDef *sweep_def_from_table(const CsvTable *t, GError **err);
/* Only the kind ("lowmem"), for plot: NULL with err unset if there is no
 * record; an unreadable sidecar is an error. The kind need not be known to
 * this build. */
char *sweep_record_kind(const CsvTable *t, GError **err);
/* Give t (a sweep CSV read from disk) the parameter columns its header
 * lacks because it was written before they existed: each such column whose
 * value in d is the parameter's single default is inserted at its place,
 * the default in every row; *added counts them (the caller rewrites the
 * file if it keeps it). Other missing columns are left for the header
 * check to report. */
bool sweep_record_fill_columns(CsvTable *t, const SweepDef *d, guint *added, GError **err);
/* Parse a legacy comment line's text (after '#'); path and line name it in
 * errors. NULL with err unset if the line is not a sweep line at all. */
SweepDef *sweep_def_from_comment(const char *text, const char *path, guint line,
                                 GError **err);

#endif
