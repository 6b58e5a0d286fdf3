/* Merging shard CSVs (see merge.h). */
#include "report/merge.h"
#include "report/csv.h"
#include "report/sweep.h"

#include <string.h>

/* Where a point was seen, for "doubled" messages. */
typedef struct {
    guint file;
    guint line;
} Seen;

typedef struct {
    CsvTable **tables;
    SweepDef **defs;
    guint n;
    SweepDef *def;           /* the first file's; the others must agree */
    Seen *seen;              /* per point; file == 0: absent (files 1-based) */
    char **rows;             /* per point: the row's text */
} Merge;

static bool check_header(const Merge *m, guint i, GError **err)
{
    char **want = sweep_def_header(m->def);
    const CsvTable *t = m->tables[i];
    bool ok = t->header->len == g_strv_length(want);
    for (guint c = 0; ok && c < t->header->len; c++)
        ok = !strcmp(t->header->pdata[c], want[c]);
    if (!ok) {
        char *w = g_strjoinv(",", want);
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_MISMATCH,
                    "%s:%u: the header differs from %s's; expected '%s'", t->path,
                    t->comments->len + 1, m->tables[0]->path, w);
        g_free(w);
    }
    g_strfreev(want);
    return ok;
}

static bool load_inputs(Merge *m, const char *const *inputs, GError **err)
{
    for (guint i = 0; i < m->n; i++) {
        m->tables[i] = csv_read_file(inputs[i], CSV_READ_STRICT, err);
        if (!m->tables[i])
            return false;
        m->defs[i] = sweep_def_from_table(m->tables[i], err);
        if (!m->defs[i])
            return false;
        if (i == 0) {
            m->def = m->defs[0];
        } else if (!sweep_def_equal(m->def, m->defs[i], true)) {
            char *a = sweep_def_describe(m->def, false);
            char *b = sweep_def_describe(m->defs[i], false);
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_MISMATCH,
                        "%s: not the same sweep as %s\n  %s: %s\n  %s: %s",
                        inputs[i], inputs[0], inputs[0], a, inputs[i], b);
            g_free(a);
            g_free(b);
            return false;
        }
        /* A shard written before a parameter existed ran its default:
         * its rows gain the column, as the merged CSV has it. */
        guint added = 0;
        if (!sweep_record_fill_columns(m->tables[i], m->defs[i], &added, err) ||
            !check_header(m, i, err))
            return false;
    }
    return true;
}

static bool take_rows(Merge *m, guint i, GError **err)
{
    const CsvTable *t = m->tables[i];
    const SweepRunner *r = sweep_def_runner(m->def);
    for (guint k = 0; k < t->rows->len; k++) {
        const char *const *fields = (const char *const *)((GPtrArray *)t->rows->pdata[k])->pdata;
        guint line = g_array_index(t->row_lines, guint, k);
        int idx = sweep_def_find(m->def, fields);
        if (idx < 0 || !sweep_def_in_shard(m->defs[i], (guint)idx)) {
            char *desc = sweep_def_describe_point(m->def, fields);
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_POINTS,
                        "%s:%u: point (%s) is not part of the %s", t->path, line, desc,
                        idx < 0 ? "sweep" : "file's shard");
            g_free(desc);
            return false;
        }
        Seen *s = &m->seen[idx];
        if (s->file) {
            char *desc = sweep_def_describe_point(m->def, fields);
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_POINTS,
                        "%s:%u: point (%s) is doubled: already at %s:%u", t->path, line,
                        desc, m->tables[s->file - 1]->path, s->line);
            g_free(desc);
            return false;
        }
        s->file = i + 1;
        s->line = line;
        GString *row = g_string_new(NULL);
        csv_append_record(row, fields, r->n_params + r->n_figures);
        m->rows[idx] = g_string_free(row, FALSE);
    }
    return true;
}

/* Error listing the first few missing points and, when every input is a
 * shard of the same N, which shards have none of their points. */
static void missing_error(const Merge *m, guint missing, GError **err)
{
    guint n = sweep_def_n_points(m->def);
    const SweepRunner *r = sweep_def_runner(m->def);
    GString *msg = g_string_new(NULL);
    g_string_printf(msg, "%u of the sweep's %u points are missing, e.g.:", missing, n);
    const char **values = g_new0(const char *, r->n_params);
    guint shown = 0;
    for (guint i = 0; i < n && shown < 5; i++) {
        if (m->seen[i].file)
            continue;
        sweep_def_point(m->def, i, values);
        char *desc = sweep_def_describe_point(m->def, values);
        g_string_append_printf(msg, "\n  point %u (%s)", i, desc);
        g_free(desc);
        shown++;
    }
    g_free(values);
    guint sn = sweep_def_shard_n(m->defs[0]);
    bool same_n = sn > 1;
    for (guint i = 0; i < m->n; i++)
        same_n = same_n && sweep_def_shard_n(m->defs[i]) == sn;
    if (same_n) {
        g_string_append(msg, "\nshards with no file among the inputs:");
        for (guint k = 1; k <= sn; k++) {
            bool have = false;
            for (guint i = 0; i < m->n; i++)
                have = have || sweep_def_shard_k(m->defs[i]) == k;
            if (!have)
                g_string_append_printf(msg, " %u/%u", k, sn);
        }
    }
    g_string_append(msg, "\n(run the missing points with 'vmsplit sweep ... --shard K/N' "
                         "on the same file to resume it, or pass --partial)");
    g_set_error_literal(err, REPORT_ERROR, REPORT_ERROR_POINTS, msg->str);
    g_string_free(msg, TRUE);
}

static bool write_output(const Merge *m, const char *out_path, MergeResult *res,
                         GError **err)
{
    /* The record first (unsharded: the merged file is the whole sweep's),
     * as a sweep writes it, so that a CSV never lacks its record. */
    bool ok = sweep_record_write(m->def, out_path, false, false, err);
    if (!ok)
        return false;
    char *head = sweep_def_csv_head(m->def);
    GString *all = g_string_new(head);
    g_free(head);
    for (guint i = 0; i < sweep_def_n_points(m->def); i++)
        if (m->rows[i]) {
            g_string_append(all, m->rows[i]);
            res->present++;
        }
    ok = g_file_set_contents_full(out_path, all->str, (gssize)all->len,
                                  G_FILE_SET_CONTENTS_CONSISTENT, 0644, err);
    g_string_free(all, TRUE);
    return ok;
}

bool merge_csv_files(const char *const *inputs, guint n_inputs, const char *out_path,
                     const MergeOptions *o, MergeResult *res, GError **err)
{
    memset(res, 0, sizeof *res);
    if (n_inputs == 0) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "no input CSV to merge");
        return false;
    }
    Merge m = {g_new0(CsvTable *, n_inputs), g_new0(SweepDef *, n_inputs), n_inputs,
               NULL, NULL, NULL};
    bool ok = load_inputs(&m, inputs, err);
    guint n = ok ? sweep_def_n_points(m.def) : 0;
    if (ok) {
        m.seen = g_new0(Seen, n);
        m.rows = g_new0(char *, n);
        res->points = n;
    }
    for (guint i = 0; ok && i < n_inputs; i++)
        ok = take_rows(&m, i, err);
    if (ok) {
        guint missing = 0;
        for (guint i = 0; i < n; i++)
            missing += m.seen[i].file == 0;
        if (missing && !o->allow_missing) {
            missing_error(&m, missing, err);
            ok = false;
        }
    }
    if (ok)
        ok = write_output(&m, out_path, res, err);
    for (guint i = 0; i < n_inputs; i++) {
        csv_table_free(m.tables[i]);
        sweep_def_free(m.defs[i]);
    }
    for (guint i = 0; m.rows && i < n; i++)
        g_free(m.rows[i]);
    g_free(m.rows);
    g_free(m.seen);
    g_free(m.tables);
    g_free(m.defs);
    return ok;
}
