/* A sweep's record (src/report/sweep_record.c): the sidecar OUT.meta.json
 * (sweep_record_from_json) and the legacy first line of an old sweep CSV,
 * "# vmsplit-sweep v1 kind=KIND column=v1,v2 ... [shard=K/N]"
 * (sweep_def_from_comment), both read from the same input: the whole input
 * as the sidecar's text, its first line as the comment's text (what the
 * CSV reader hands over: the line after '#', without its newline).
 *
 * What a record read without an error must give: a finished definition
 * whose every point can be named and found again (sweep_def_point, then
 * sweep_def_find gives back its number), and which survives the trip
 * through the writer: sweep_record_to_json, read again, is an equal
 * definition (sweep_def_equal, the shard included) and writes the same
 * text. So merge and resume, which compare records read from disk, never
 * see a record change by being written and read. */
#include "fuzz.h"

#include <string.h>

#include "report/sweep.h"
#include "report/sweep_runner.h"

/* Points checked per record: the sweep may hold SWEEP_MAX_POINTS; the
 * first ones and the last exercise every stride. */
#define POINTS_CHECKED 64u

static void check_def(SweepDef *d)
{
    const SweepRunner *r = sweep_def_runner(d);
    guint n = sweep_def_n_points(d);
    g_assert_cmpuint(n, >=, 1);
    g_assert_cmpuint(sweep_def_shard_k(d), >=, 1);
    g_assert_cmpuint(sweep_def_shard_k(d), <=, sweep_def_shard_n(d));
    const char **values = g_new0(const char *, r->n_params + 1);
    for (guint k = 0; k < n && k < POINTS_CHECKED + 1; k++) {
        guint index = k < POINTS_CHECKED ? k : n - 1;
        sweep_def_point(d, index, values);
        for (size_t i = 0; i < r->n_params; i++)
            g_assert(values[i] != NULL && *values[i]);
        g_assert_cmpint(sweep_def_find(d, values), ==, (int)index);
    }
    g_free(values);
    g_free(sweep_def_describe(d, true));
    g_free(sweep_def_csv_head(d));
    g_strfreev(sweep_def_header(d));

    /* the round trip through the writer */
    char *text = sweep_record_to_json(d, true);
    GError *e = NULL;
    SweepDef *d2 = sweep_record_from_json(text, strlen(text), "round trip", &e);
    if (!d2)
        g_error("round trip: the reader refused what the writer wrote: %s\n%s", e->message,
                text);
    g_assert(sweep_def_equal(d, d2, false));
    char *text2 = sweep_record_to_json(d2, true);
    g_assert_cmpstr(text, ==, text2);
    g_free(text2);
    g_free(text);
    sweep_def_free(d2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GError *e = NULL;
    SweepDef *d = sweep_record_from_json((const char *)data, size, "fuzz.meta.json", &e);
    if (d) {
        check_def(d);
        sweep_def_free(d);
    } else {
        fuzz_check_error(e);
    }

    const uint8_t *nl = memchr(data, '\n', size);
    char *line = g_strndup((const char *)data, nl ? (gsize)(nl - data) : size);
    e = NULL;
    d = sweep_def_from_comment(line, "fuzz.csv", 1, &e);
    if (d) {
        g_assert_null(e);
        check_def(d);
        sweep_def_free(d);
    } else if (e) {
        fuzz_check_error(e);
    }
    g_free(line);
    return 0;
}
