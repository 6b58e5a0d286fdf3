/* `vmsplit merge`: combine the CSVs of a sharded sweep (sweep.h) into the
 * file the unsharded sweep would have written.
 *
 * Every input must carry the same sweep record (its OUT.meta.json, or the
 * legacy comment line; shards aside) and the same
 * header; every row must be a point of that sweep (and of its file's
 * shard), no point may appear twice, and, unless allow_missing, every point
 * must be present. Errors name the file and line (and for a doubled point
 * both places). The output holds the rows in point order and its record
 * is the unsharded sweep's, so both equal an unsharded run's byte for byte
 * (legacy inputs included: merging one old CSV converts it). */
#ifndef VMSPLIT_REPORT_MERGE_H
#define VMSPLIT_REPORT_MERGE_H

#include <glib.h>
#include <stdbool.h>

typedef struct {
    bool allow_missing;   /* write what there is; report the gaps */
} MergeOptions;

typedef struct {
    guint points;         /* in the whole sweep */
    guint present;        /* written to the output */
} MergeResult;

bool merge_csv_files(const char *const *inputs, guint n_inputs, const char *out_path,
                     const MergeOptions *o, MergeResult *res, GError **err);

#endif
