/* Sweep definitions: parameter lists, canonical values, point numbering
 * (see sweep.h). Their record beside the CSV is sweep_record.c's. */
#include "report/sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct SweepDef {
    const SweepRunner *runner;
    GPtrArray **lists;        /* per parameter: char * canonical values */
    GHashTable **pos;         /* per parameter: value -> position + 1 */
    guint *stride;            /* per parameter: points per step */
    guint n_points;
    guint shard_k, shard_n;
    bool finished;
};

SweepDef *sweep_def_new(const SweepRunner *r)
{
    SweepDef *d = g_new0(SweepDef, 1);
    d->runner = r;
    d->lists = g_new0(GPtrArray *, r->n_params);
    d->pos = g_new0(GHashTable *, r->n_params);
    d->stride = g_new0(guint, r->n_params);
    for (size_t i = 0; i < r->n_params; i++) {
        d->lists[i] = g_ptr_array_new_with_free_func(g_free);
        d->pos[i] = g_hash_table_new(g_str_hash, g_str_equal);
    }
    d->shard_k = d->shard_n = 1;
    return d;
}

void sweep_def_free(SweepDef *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->runner->n_params; i++) {
        g_hash_table_unref(d->pos[i]);
        g_ptr_array_unref(d->lists[i]);
    }
    g_free(d->lists);
    g_free(d->pos);
    g_free(d->stride);
    g_free(d);
}

const SweepRunner *sweep_def_runner(const SweepDef *d) { return d->runner; }
guint sweep_def_n_points(const SweepDef *d) { return d->n_points; }
guint sweep_def_shard_k(const SweepDef *d) { return d->shard_k; }
guint sweep_def_shard_n(const SweepDef *d) { return d->shard_n; }

static int param_index(const SweepRunner *r, const char *name)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (!strcmp(r->params[i].option, name) || !strcmp(r->params[i].column, name))
            return (int)i;
    return -1;
}

/* "64G", "896M", "4096K", "1T", "123" (bytes); an optional "i"/"B" after
 * the suffix ("64GiB", "64GB") means the same binary unit. */
static bool parse_size(const char *s, uint64_t *out)
{
    if (!s || !g_ascii_isdigit(*s))
        return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    uint64_t mul = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mul = 1ull << 10; end++; break;
    case 'm': case 'M': mul = 1ull << 20; end++; break;
    case 'g': case 'G': mul = 1ull << 30; end++; break;
    case 't': case 'T': mul = 1ull << 40; end++; break;
    default: return false;
    }
    if (mul > 1 && *end == 'i')
        end++;
    if (mul > 1 && *end == 'B')
        end++;
    if (*end || v > UINT64_MAX / mul)
        return false;
    *out = (uint64_t)v * mul;
    return true;
}

static const char *unit_name(uint64_t unit)
{
    switch (unit) {
    case 1: return "bytes";
    case 1u << 10: return "KiB";
    case 1u << 20: return "MiB";
    case 1u << 30: return "GiB";
    default: return "units";
    }
}

/* Canonical text of a value, or NULL with err naming the option. */
static char *canonical_value(const SweepParam *p, const char *v, GError **err)
{
    uint64_t n = 0;
    char *end = NULL;
    switch (p->type) {
    case SWEEP_PARAM_UINT:
        errno = 0;
        n = g_ascii_strtoull(v, &end, 10);
        if (!g_ascii_isdigit(*v) || errno || *end) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "--%s: expected a whole number, found '%s'", p->option, v);
            return NULL;
        }
        break;
    case SWEEP_PARAM_SIZE:
        if (!parse_size(v, &n)) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "--%s: expected a size such as 512M or 64G, found '%s'",
                        p->option, v);
            return NULL;
        }
        if (n % p->unit) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "--%s: '%s' is not a whole number of %s", p->option, v,
                        unit_name(p->unit));
            return NULL;
        }
        n /= p->unit;
        break;
    case SWEEP_PARAM_NAME:
    case SWEEP_PARAM_PATH:
        if (!*v) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "--%s: empty value in the list", p->option);
            return NULL;
        }
        if (p->check && !p->check(v, err)) {
            g_prefix_error(err, "--%s: ", p->option);
            return NULL;
        }
        return g_strdup(v);
    }
    if (p->check) {
        char *text = g_strdup_printf("%" G_GUINT64_FORMAT, n);
        if (!p->check(text, err)) {
            g_prefix_error(err, "--%s: ", p->option);
            g_free(text);
            return NULL;
        }
        return text;
    }
    return g_strdup_printf("%" G_GUINT64_FORMAT, n);
}

static bool add_canonical(SweepDef *d, int i, char *c, GError **err)
{
    /* The record beside the CSV is JSON, whose strings are UTF-8: a value
     * that is not (a trace file's name in another encoding, a byte from a
     * damaged legacy line) would be written into a sidecar that no reader,
     * this one included, could read back (found fuzzing the record). */
    if (!g_utf8_validate(c, -1, NULL)) {
        char *shown = g_utf8_make_valid(c, -1);
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "--%s: value '%s' is not valid UTF-8 (the sweep's record is JSON, "
                    "which holds only UTF-8; for a file, use a link with a UTF-8 name)",
                    d->runner->params[i].option, shown);
        g_free(shown);
        g_free(c);
        return false;
    }
    if (g_hash_table_contains(d->pos[i], c)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "--%s: value '%s' appears twice (each point must be unique)",
                    d->runner->params[i].option, c);
        g_free(c);
        return false;
    }
    g_ptr_array_add(d->lists[i], c);
    g_hash_table_insert(d->pos[i], c, GUINT_TO_POINTER(d->lists[i]->len));
    return true;
}

bool sweep_def_add_value(SweepDef *d, const char *param, const char *value, GError **err)
{
    g_assert(!d->finished);
    int i = param_index(d->runner, param);
    g_assert(i >= 0);
    char *c = canonical_value(&d->runner->params[i], value, err);
    return c && add_canonical(d, i, c, err);
}

bool sweep_def_add_list(SweepDef *d, const char *param, const char *list, GError **err)
{
    char **items = g_strsplit(list, ",", -1);
    bool ok = true;
    for (char **it = items; ok && *it; it++) {
        char *v = g_strstrip(*it);
        ok = sweep_def_add_value(d, param, v, err);
    }
    g_strfreev(items);
    return ok;
}

bool sweep_def_set_shard(SweepDef *d, const char *spec, GError **err)
{
    /* Each number strictly decimal and within guint: sscanf's %u took
     * "-1" and wrapped 4294967297 to 1 (a record's shard 4294967297/
     * 4294967298 read as 1/2; found fuzzing the sweep record, issue 19). */
    const char *slash = strchr(spec, '/');
    char *ks = slash ? g_strndup(spec, (gsize)(slash - spec)) : NULL;
    guint64 k = 0, n = 0;
    bool ok = ks && g_ascii_string_to_unsigned(ks, 10, 1, G_MAXUINT, &k, NULL) &&
              g_ascii_string_to_unsigned(slash + 1, 10, 1, G_MAXUINT, &n, NULL) && k <= n;
    g_free(ks);
    if (!ok) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "--shard: expected K/N with 1 <= K <= N (e.g. 2/8), found '%s'",
                    spec);
        return false;
    }
    d->shard_k = (guint)k;
    d->shard_n = (guint)n;
    return true;
}

bool sweep_def_finish(SweepDef *d, GError **err)
{
    const SweepRunner *r = d->runner;
    uint64_t n = 1;
    for (size_t i = 0; i < r->n_params; i++) {
        const SweepParam *p = &r->params[i];
        if (d->lists[i]->len == 0 && p->defaults &&
            !sweep_def_add_list(d, p->column, p->defaults, err))
            return false;
        if (d->lists[i]->len == 0) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        p->type == SWEEP_PARAM_PATH
                            ? "a %s sweep needs at least one input file (%s)"
                            : "a %s sweep needs --%s",
                        r->kind, p->type == SWEEP_PARAM_PATH ? p->column : p->option);
            return false;
        }
        n *= d->lists[i]->len;
        if (n > SWEEP_MAX_POINTS) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "the sweep has more than %u points: shorten the lists",
                        SWEEP_MAX_POINTS);
            return false;
        }
    }
    guint stride = 1;
    for (size_t i = r->n_params; i-- > 0;) {
        d->stride[i] = stride;
        stride *= d->lists[i]->len;
    }
    d->n_points = (guint)n;
    d->finished = true;
    return true;
}

bool sweep_def_in_shard(const SweepDef *d, guint index)
{
    return index % d->shard_n == d->shard_k - 1;
}

void sweep_def_point(const SweepDef *d, guint index, const char **values)
{
    g_assert(d->finished && index < d->n_points);
    for (size_t i = 0; i < d->runner->n_params; i++)
        values[i] = d->lists[i]->pdata[(index / d->stride[i]) % d->lists[i]->len];
}

int sweep_def_find(const SweepDef *d, const char *const *values)
{
    g_assert(d->finished);
    guint index = 0;
    for (size_t i = 0; i < d->runner->n_params; i++) {
        guint p = GPOINTER_TO_UINT(g_hash_table_lookup(d->pos[i], values[i]));
        if (p == 0)
            return -1;
        index += (p - 1) * d->stride[i];
    }
    return (int)index;
}

char **sweep_def_header(const SweepDef *d)
{
    const SweepRunner *r = d->runner;
    char **h = g_new0(char *, r->n_params + r->n_figures + 1);
    for (size_t i = 0; i < r->n_params; i++)
        h[i] = g_strdup(r->params[i].column);
    for (size_t i = 0; i < r->n_figures; i++)
        h[r->n_params + i] = g_strdup(r->figures[i]);
    return h;
}

char *sweep_def_describe_point(const SweepDef *d, const char *const *values)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < d->runner->n_params; i++)
        g_string_append_printf(s, "%s%s=%s", i ? ", " : "", d->runner->params[i].column,
                               values[i]);
    return g_string_free(s, FALSE);
}

char *sweep_def_csv_head(const SweepDef *d)
{
    char **header = sweep_def_header(d);
    GString *s = g_string_new(NULL);
    csv_append_record(s, (const char *const *)header, g_strv_length(header));
    g_strfreev(header);
    return g_string_free(s, FALSE);
}

bool sweep_def_add_recorded(SweepDef *d, const char *column, const char *value,
                            GError **err)
{
    g_assert(!d->finished);
    int i = sweep_runner_param(d->runner, column);
    g_assert(i >= 0);
    return add_canonical(d, i, g_strdup(value), err);
}

guint sweep_def_n_values(const SweepDef *d, size_t param)
{
    g_assert(param < d->runner->n_params);
    return d->lists[param]->len;
}

const char *sweep_def_value(const SweepDef *d, size_t param, guint j)
{
    g_assert(param < d->runner->n_params && j < d->lists[param]->len);
    return d->lists[param]->pdata[j];
}

/* Values in the one-line description: bytes outside a small safe set
 * become %XX, so that ',', ' ', '=' and '%' in a file name cannot make it
 * ambiguous (the same escaping as the legacy comment line). */
static void escape_append(GString *s, const char *v)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (g_ascii_isalnum(*p) || strchr("._-/+:@", *p))
            g_string_append_c(s, (char)*p);
        else
            g_string_append_printf(s, "%%%02X", *p);
    }
}

char *sweep_def_describe(const SweepDef *d, bool with_shard)
{
    GString *s = g_string_new("kind=");
    escape_append(s, d->runner->kind);
    for (size_t i = 0; i < d->runner->n_params; i++) {
        g_string_append_printf(s, " %s=", d->runner->params[i].column);
        for (guint j = 0; j < d->lists[i]->len; j++) {
            if (j)
                g_string_append_c(s, ',');
            escape_append(s, d->lists[i]->pdata[j]);
        }
    }
    if (with_shard && d->shard_n > 1)
        g_string_append_printf(s, " shard=%u/%u", d->shard_k, d->shard_n);
    return g_string_free(s, FALSE);
}

bool sweep_def_equal(const SweepDef *a, const SweepDef *b, bool ignore_shard)
{
    if (a->runner != b->runner)
        return false;
    if (!ignore_shard && (a->shard_k != b->shard_k || a->shard_n != b->shard_n))
        return false;
    for (size_t i = 0; i < a->runner->n_params; i++) {
        if (a->lists[i]->len != b->lists[i]->len)
            return false;
        for (guint j = 0; j < a->lists[i]->len; j++)
            if (strcmp(a->lists[i]->pdata[j], b->lists[i]->pdata[j]))
                return false;
    }
    return true;
}
