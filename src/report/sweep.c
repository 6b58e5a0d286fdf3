/* The sweep engine (see sweep.h): resume from an existing CSV, run the
 * missing points on a GThreadPool, append each row as it finishes, and put
 * the rows in point order once the shard is complete.
 *
 * Threads: workers only call the runner and push a result on an async
 * queue; the calling thread is the only writer of the file and of the
 * progress line, so rows can never interleave. */
#include "report/sweep.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    guint index;
    bool skipped;            /* cancelled before it ran */
    bool ok;
    char **figures;
    GError *error;
} PointResult;

typedef struct {
    const SweepDef *def;
    void *ctx;
    GAsyncQueue *results;
    gint cancel;
} Shared;

/* The output file and what it holds. */
typedef struct {
    const char *path;
    FILE *f;
    bool fsync;
    GHashTable *rows;        /* point index -> row text (with '\n') */
    GArray *order;           /* guint: point indices in file order */
} Out;

static void result_free(PointResult *r)
{
    g_strfreev(r->figures);
    if (r->error)
        g_error_free(r->error);
    g_free(r);
}

static void worker(gpointer data, gpointer user)
{
    Shared *sh = user;
    const SweepRunner *run = sweep_def_runner(sh->def);
    PointResult *r = g_new0(PointResult, 1);
    r->index = GPOINTER_TO_UINT(data) - 1;
    if (g_atomic_int_get(&sh->cancel)) {
        r->skipped = true;
    } else {
        const char **values = g_new0(const char *, run->n_params + 1);
        sweep_def_point(sh->def, r->index, values);
        SweepPoint pt = {r->index, values};
        r->figures = g_new0(char *, run->n_figures + 1);
        r->ok = run->run_point(sh->ctx, &pt, r->figures, &r->error);
        if (r->ok)
            for (size_t i = 0; i < run->n_figures; i++)
                g_assert(r->figures[i] != NULL);
        else
            g_assert(r->error != NULL);
        g_free(values);
    }
    g_async_queue_push(sh->results, r);
}

/* ---- progress line ---------------------------------------------------- */

typedef struct {
    bool on;
    guint total, done, computed;
    gint64 start, last_draw;
} Progress;

static void progress_draw(Progress *p, bool final)
{
    if (!p->on)
        return;
    gint64 now = g_get_monotonic_time();
    if (!final && now - p->last_draw < 100000)  /* at most 10 redraws/s */
        return;
    p->last_draw = now;
    enum { WIDTH = 30 };
    guint fill = p->total ? (guint)((guint64)WIDTH * p->done / p->total) : WIDTH;
    char bar[WIDTH + 1];
    for (guint i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    char eta[32] = "--:--";
    if (p->computed > 0 && p->done < p->total) {
        double per = (double)(now - p->start) / 1e6 / p->computed;
        guint64 s = (guint64)(per * (p->total - p->done) + 0.5);
        g_snprintf(eta, sizeof eta, "%" G_GUINT64_FORMAT ":%02u:%02u", s / 3600,
                   (unsigned)(s / 60 % 60), (unsigned)(s % 60));
    } else if (p->done == p->total) {
        g_strlcpy(eta, "done", sizeof eta);
    }
    fprintf(stderr, "\r[%s] %u/%u %3u%%  ETA %s ", bar, p->done, p->total,
            p->total ? (unsigned)(100ull * p->done / p->total) : 100u, eta);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* ---- the output file ------------------------------------------------------ */

static bool io_error(const char *path, const char *what, GError **err)
{
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO, "%s: cannot %s: %s", path, what,
                g_strerror(errno));
    return false;
}

static bool out_put(Out *w, const char *text, GError **err)
{
    if (fputs(text, w->f) == EOF || fflush(w->f) != 0)
        return io_error(w->path, "write", err);
    if (w->fsync && fsync(fileno(w->f)) != 0)
        return io_error(w->path, "fsync", err);
    return true;
}

static bool out_add_row(Out *w, const SweepDef *d, guint index, char **figures,
                        GError **err)
{
    const SweepRunner *r = sweep_def_runner(d);
    const char **fields = g_new0(const char *, r->n_params + r->n_figures);
    sweep_def_point(d, index, fields);
    for (size_t i = 0; i < r->n_figures; i++)
        fields[r->n_params + i] = figures[i];
    GString *line = g_string_new(NULL);
    csv_append_record(line, fields, r->n_params + r->n_figures);
    g_free(fields);
    bool ok = out_put(w, line->str, err);
    if (ok) {
        g_hash_table_insert(w->rows, GUINT_TO_POINTER(index), g_string_free(line, FALSE));
        g_array_append_val(w->order, index);
    } else {
        g_string_free(line, TRUE);
    }
    return ok;
}

/* Take the rows of an existing CSV of the same sweep. */
static bool out_take_rows(Out *w, const SweepDef *d, const CsvTable *t, GError **err)
{
    const SweepRunner *r = sweep_def_runner(d);
    GHashTable *line_of = g_hash_table_new(NULL, NULL);
    bool ok = true;
    for (guint i = 0; ok && i < t->rows->len; i++) {
        GPtrArray *row = t->rows->pdata[i];
        guint line = g_array_index(t->row_lines, guint, i);
        int idx = sweep_def_find(d, (const char *const *)row->pdata);
        if (idx < 0 || !sweep_def_in_shard(d, (guint)idx)) {
            char *desc = sweep_def_describe_point(d, (const char *const *)row->pdata);
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_POINTS,
                        "%s:%u: point (%s) is not part of this sweep%s", w->path, line,
                        desc, idx >= 0 ? "'s shard" : "");
            g_free(desc);
            ok = false;
        } else if (g_hash_table_contains(line_of, GINT_TO_POINTER(idx))) {
            char *desc = sweep_def_describe_point(d, (const char *const *)row->pdata);
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_POINTS,
                        "%s:%u: point (%s) appears twice (also at line %u)", w->path,
                        line, desc,
                        GPOINTER_TO_UINT(g_hash_table_lookup(line_of, GINT_TO_POINTER(idx))));
            g_free(desc);
            ok = false;
        } else {
            g_hash_table_insert(line_of, GINT_TO_POINTER(idx), GUINT_TO_POINTER(line));
            GString *s = g_string_new(NULL);
            csv_append_record(s, (const char *const *)row->pdata, r->n_params + r->n_figures);
            guint index = (guint)idx;
            g_hash_table_insert(w->rows, GUINT_TO_POINTER(index), g_string_free(s, FALSE));
            g_array_append_val(w->order, index);
        }
    }
    g_hash_table_unref(line_of);
    return ok;
}

/* Check the recorded definition `old` and the file's header against d. */
static bool check_same_sweep(const SweepDef *d, const SweepDef *old, const CsvTable *t,
                             GError **err)
{
    if (!sweep_def_equal(d, old, false)) {
        char *a = sweep_def_describe(old, true), *b = sweep_def_describe(d, true);
        char *side = sweep_record_path(t->path);
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_MISMATCH,
                    "%s: this CSV holds another sweep; refusing to mix them "
                    "(use another -o, or delete the file and %s to start over)\n"
                    "  in the file: %s\n  requested:   %s", t->path, side, a, b);
        g_free(side);
        g_free(a);
        g_free(b);
        return false;
    }
    char **header = sweep_def_header(d);
    bool ok = t->header->len == g_strv_length(header);
    for (guint i = 0; ok && i < t->header->len; i++)
        ok = !strcmp(t->header->pdata[i], header[i]);
    if (!ok) {
        char *want = g_strjoinv(",", header);
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_MISMATCH,
                    "%s:%u: the header differs from this sweep's; expected '%s'",
                    t->path, t->comments->len + 1, want);
        g_free(want);
    }
    g_strfreev(header);
    return ok;
}

/* The file as it should be: the header, then the rows in w->order. */
static char *out_text(const Out *w, const SweepDef *d)
{
    GString *all = g_string_new(NULL);
    char *head = sweep_def_csv_head(d);
    g_string_append(all, head);
    g_free(head);
    for (guint i = 0; i < w->order->len; i++)
        g_string_append(all, g_hash_table_lookup(w->rows, GUINT_TO_POINTER(
                                 g_array_index(w->order, guint, i))));
    return g_string_free(all, FALSE);
}

/* Rewrite the CSV from what w holds: temporary file, fsync, rename, so that
 * a crash leaves the old or the new. */
static bool out_rewrite(const Out *w, const SweepDef *d, GError **err)
{
    char *text = out_text(w, d);
    bool ok = g_file_set_contents_full(w->path, text, -1,
                                       G_FILE_SET_CONTENTS_CONSISTENT |
                                           G_FILE_SET_CONTENTS_DURABLE,
                                       0644, err);
    g_free(text);
    return ok;
}

/* Resume from an existing file: false with err set if it cannot be used;
 * *fresh set when it holds no header yet (start it over). A file from
 * before the sidecar (its record in a comment line) is converted: sidecar
 * written first, then the CSV rewritten without the line. So is one from
 * before a parameter existed (sweep_record_fill_columns): it gains the
 * column with the default its points ran. */
static bool out_resume(Out *w, const SweepDef *d, bool *fresh, SweepResult *res,
                       GError **err)
{
    CsvTable *t = csv_read_file(w->path, CSV_READ_ALLOW_TORN | CSV_READ_ALLOW_EMPTY, err);
    if (!t)
        return false;
    SweepRecordSource src;
    GError *e = NULL;
    SweepDef *old = sweep_record_read(t, &src, &e);
    bool ok = true;
    if (!t->header) {
        /* No header yet: a sweep killed before its header was out (its
         * record is there), or an empty file. Nothing to keep. */
        g_clear_error(&e);
        *fresh = src != SWEEP_RECORD_NONE ||
                 (t->comments->len == 0 && !t->torn && t->complete_len == 0);
        if (!*fresh) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_MISMATCH,
                        "%s: exists and is not a vmsplit sweep CSV; refusing to "
                        "overwrite it", w->path);
            ok = false;
        }
    } else if (!old) {
        if (e) {
            g_propagate_prefixed_error(err, e, "cannot resume into %s: ", w->path);
        } else {
            char *side = sweep_record_path(w->path);
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_MISMATCH,
                        "%s: exists without its sweep record %s (not a CSV written by "
                        "'vmsplit sweep', or the record was lost); refusing to resume "
                        "into it or overwrite it", w->path, side);
            g_free(side);
        }
        ok = false;
    } else {
        guint added = 0;
        ok = sweep_record_fill_columns(t, old, &added, err) &&
             check_same_sweep(d, old, t, err) && out_take_rows(w, d, t, err);
        if (ok && (t->comments->len || added)) {
            /* Legacy record (or stray comments), or a CSV from before a
             * parameter existed: the record goes to the sidecar, then the
             * CSV is rewritten without comment lines (and a torn last line
             * with them) and with the columns it lacked. */
            ok = sweep_record_write(d, w->path, true, true, err) && out_rewrite(w, d, err);
            if (ok && t->torn)
                res->repaired = true;
            if (!ok)
                g_prefix_error(err, "converting %s to a CSV with a sidecar record: ",
                               w->path);
        } else if (ok && t->torn) {
            if (truncate(w->path, (off_t)t->complete_len) != 0)
                ok = io_error(w->path, "cut the torn last line", err);
            else
                res->repaired = true;
        }
        res->resumed = w->order->len;
    }
    sweep_def_free(old);
    csv_table_free(t);
    return ok;
}

/* Open the output: resume from an existing file or start a new one (its
 * sidecar first, so that a CSV with a header always has its record). */
static bool out_open(Out *w, const SweepDef *d, SweepResult *res, GError **err)
{
    bool fresh = !g_file_test(w->path, G_FILE_TEST_EXISTS);
    if (!fresh && !out_resume(w, d, &fresh, res, err))
        return false;
    if (fresh && !sweep_record_write(d, w->path, true, w->fsync, err))
        return false;
    w->f = fopen(w->path, fresh ? "w" : "a");
    if (!w->f)
        return io_error(w->path, fresh ? "create" : "open for appending", err);
    if (!fresh)
        return true;
    char *head = sweep_def_csv_head(d);
    bool ok = out_put(w, head, err);
    g_free(head);
    return ok;
}

static gint cmp_uint(gconstpointer a, gconstpointer b)
{
    guint x = *(const guint *)a, y = *(const guint *)b;
    return x < y ? -1 : x > y;
}

/* Once complete: rewrite the file in point order if it is not already. */
static bool out_sort(Out *w, const SweepDef *d, GError **err)
{
    bool sorted = true;
    for (guint i = 1; sorted && i < w->order->len; i++)
        sorted = g_array_index(w->order, guint, i - 1) < g_array_index(w->order, guint, i);
    if (sorted)
        return true;
    g_array_sort(w->order, cmp_uint);
    bool ok = out_rewrite(w, d, err);
    if (!ok)
        g_prefix_error(err, "writing the sorted CSV: ");
    return ok;
}

/* Run the pending points; returns false with err on the first failure
 * (after writing every point that did finish). */
static bool run_pending(Out *w, const SweepDef *d, GArray *pending, const SweepOptions *o,
                        Progress *prog, SweepResult *res, GError **err)
{
    const SweepRunner *run = sweep_def_runner(d);
    Shared sh = {d, NULL, NULL, 0};
    if (run->prepare) {
        GError *e = NULL;
        sh.ctx = run->prepare(&e);
        if (e) {
            g_propagate_error(err, e);
            return false;
        }
    }
    sh.results = g_async_queue_new();
    guint jobs = o->jobs ? o->jobs : (guint)g_get_num_processors();
    GThreadPool *pool = g_thread_pool_new(worker, &sh, (gint)MAX(jobs, 1u), FALSE, NULL);
    for (guint i = 0; i < pending->len; i++)
        g_thread_pool_push(pool, GUINT_TO_POINTER(g_array_index(pending, guint, i) + 1), NULL);
    GError *first = NULL;
    bool stopping = false;
    for (guint received = 0; received < pending->len; received++) {
        PointResult *r = g_async_queue_pop(sh.results);
        if (r->skipped || stopping || first) {
            /* cancelled, or finished after a stop: dropped as a kill would */
        } else if (!r->ok) {
            char *desc = NULL;
            const char **values = g_new0(const char *, run->n_params);
            sweep_def_point(d, r->index, values);
            desc = sweep_def_describe_point(d, values);
            g_set_error(&first, REPORT_ERROR, REPORT_ERROR_RUN, "point %u (%s): %s",
                        r->index, desc, r->error->message);
            g_free(values);
            g_free(desc);
            g_atomic_int_set(&sh.cancel, 1);
        } else if (!out_add_row(w, d, r->index, r->figures, &first)) {
            g_atomic_int_set(&sh.cancel, 1);
        } else {
            res->computed++;
            prog->done++;
            prog->computed++;
            progress_draw(prog, false);
            if (o->stop_after && res->computed == o->stop_after) {
                stopping = true;
                g_atomic_int_set(&sh.cancel, 1);
            }
        }
        result_free(r);
    }
    g_thread_pool_free(pool, FALSE, TRUE);
    g_async_queue_unref(sh.results);
    if (run->finish)
        run->finish(sh.ctx);
    if (first) {
        g_propagate_error(err, first);
        return false;
    }
    return true;
}

bool sweep_run(const SweepDef *d, const char *out_path, const SweepOptions *o,
               SweepResult *res, GError **err)
{
    memset(res, 0, sizeof *res);
    Out w = {out_path, NULL, o->fsync, g_hash_table_new_full(NULL, NULL, NULL, g_free),
             g_array_new(FALSE, FALSE, sizeof(guint))};
    GArray *pending = g_array_new(FALSE, FALSE, sizeof(guint));
    bool ok = out_open(&w, d, res, err);
    if (ok) {
        for (guint i = 0; i < sweep_def_n_points(d); i++) {
            if (!sweep_def_in_shard(d, i))
                continue;
            res->total++;
            if (!g_hash_table_contains(w.rows, GUINT_TO_POINTER(i)))
                g_array_append_val(pending, i);
        }
        Progress prog = {o->progress, res->total, res->resumed, 0,
                         g_get_monotonic_time(), 0};
        if (pending->len)
            ok = run_pending(&w, d, pending, o, &prog, res, err);
        if (pending->len || prog.on)
            progress_draw(&prog, true);
    }
    if (w.f && fclose(w.f) != 0 && ok)
        ok = io_error(out_path, "close", err);
    res->complete = ok && res->resumed + res->computed == res->total;
    if (res->complete)
        ok = out_sort(&w, d, err);
    g_array_unref(pending);
    g_hash_table_unref(w.rows);
    g_array_unref(w.order);
    return ok;
}
