/* The record of a sweep beside its CSV (see sweep.h): OUT.meta.json,
 *
 *   {
 *     "schema" : "vmsplit.sweep-meta/1",
 *     "written_by" : "vmsplit 0.1.0",
 *     "kind" : "lowmem",
 *     "parameters" : {
 *       "layout" : ["3g1g", "4g4g"],
 *       "struct_page" : ["40"],
 *       "ram_mib" : ["1024", "65536"]
 *     },
 *     "shard" : {"k" : 1, "n" : 1}
 *   }
 *
 * Parameters in the runner's order, keyed by CSV column, each value as
 * text exactly as it appears in that column. A member added later keeps
 * the schema's number (readers ignore members they do not know); a member
 * renamed or removed, or a meaning changed, raises it.
 *
 * And the reading of the legacy record, the CSV's first line
 * "# vmsplit-sweep v1 kind=KIND column=v1,v2 ... [shard=K/N]" (values
 * %-escaped), written before the sidecar existed.
 *
 * Parameters added to a kind later (replay's `paging`): a record written
 * before one existed lacks it, and its CSV lacks the column. That sweep
 * ran the parameter's default (replay's points all ran PAE), so a record
 * without a parameter whose default is one value takes that value, and
 * sweep_record_fill_columns gives the old CSV the column, the default in
 * every row, for resume, merge and plot. A missing parameter with no
 * default or a list of defaults stays an error: the record is damaged. */
#include "config.h"
#include "report/sweep.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#define LEGACY_TAG "vmsplit-sweep"
#define LEGACY_VERSION "v1"

char *sweep_record_path(const char *csv_path)
{
    return g_strconcat(csv_path, ".meta.json", NULL);
}

char *sweep_record_to_json(const SweepDef *d, bool with_shard)
{
    const SweepRunner *r = sweep_def_runner(d);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "schema");
    json_builder_add_string_value(b, SWEEP_RECORD_SCHEMA);
    json_builder_set_member_name(b, "written_by");
    json_builder_add_string_value(b, "vmsplit " VMSPLIT_VERSION);
    json_builder_set_member_name(b, "kind");
    json_builder_add_string_value(b, r->kind);
    json_builder_set_member_name(b, "parameters");
    json_builder_begin_object(b);
    for (size_t i = 0; i < r->n_params; i++) {
        json_builder_set_member_name(b, r->params[i].column);
        json_builder_begin_array(b);
        for (guint j = 0; j < sweep_def_n_values(d, i); j++)
            json_builder_add_string_value(b, sweep_def_value(d, i, j));
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "shard");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "k");
    json_builder_add_int_value(b, with_shard ? sweep_def_shard_k(d) : 1);
    json_builder_set_member_name(b, "n");
    json_builder_add_int_value(b, with_shard ? sweep_def_shard_n(d) : 1);
    json_builder_end_object(b);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    JsonGenerator *g = json_generator_new();
    json_generator_set_pretty(g, TRUE);
    json_generator_set_root(g, root);
    char *text = json_generator_to_data(g, NULL);
    char *out = g_strconcat(text, "\n", NULL);
    g_free(text);
    g_object_unref(g);
    json_node_unref(root);
    g_object_unref(b);
    return out;
}

bool sweep_record_write(const SweepDef *d, const char *csv_path, bool with_shard,
                        bool durable, GError **err)
{
    char *path = sweep_record_path(csv_path);
    char *text = sweep_record_to_json(d, with_shard);
    GError *e = NULL;
    bool ok = g_file_set_contents_full(path, text, -1,
                                       G_FILE_SET_CONTENTS_CONSISTENT |
                                           (durable ? G_FILE_SET_CONTENTS_DURABLE : 0),
                                       0644, &e);
    if (!ok) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO, "writing the sweep record: %s",
                    e->message);
        g_error_free(e);
    }
    g_free(text);
    g_free(path);
    return ok;
}

/* ---- reading the sidecar ---------------------------------------------- */

static bool bad(GError **err, const char *where, const char *what)
{
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "%s: %s", where, what);
    return false;
}

/* The root object of a sidecar with the right schema, or NULL. */
static JsonObject *record_root(JsonParser *p, const char *text, gsize len,
                               const char *where, GError **err)
{
    GError *e = NULL;
    if (!json_parser_load_from_data(p, text, (gssize)len, &e)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "%s: not JSON: %s", where,
                    e->message);
        g_error_free(e);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(p);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        bad(err, where, "expected a JSON object (a sweep record written by 'vmsplit sweep')");
        return NULL;
    }
    JsonObject *o = json_node_get_object(root);
    JsonNode *s = json_object_get_member(o, "schema");
    const char *schema = s && JSON_NODE_HOLDS_VALUE(s) &&
                                 json_node_get_value_type(s) == G_TYPE_STRING
                             ? json_node_get_string(s)
                             : NULL;
    if (!schema || strcmp(schema, SWEEP_RECORD_SCHEMA)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "%s: expected \"schema\": \"" SWEEP_RECORD_SCHEMA "\", found %s%s%s "
                    "(written by another vmsplit version?)", where, schema ? "\"" : "",
                    schema ? schema : "none", schema ? "\"" : "");
        return NULL;
    }
    return o;
}

static const char *string_member(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    if (!n || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
        return NULL;
    return json_node_get_string(n);
}

/* A parameter a record may lack: one added later, with a single default
 * (the value every sweep written before it ran). */
static bool param_has_one_default(const SweepParam *p)
{
    return p->defaults && *p->defaults && !strchr(p->defaults, ',');
}

/* A recorded sweep without parameter i: its default, or an error. */
static bool take_default(SweepDef *d, size_t i, const char *where, const char *missing,
                         const char *quote, GError **err)
{
    const SweepParam *p = &sweep_def_runner(d)->params[i];
    if (!param_has_one_default(p)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "%s: %s %s%s%s", where, missing,
                    quote, p->column, quote);
        return false;
    }
    if (!sweep_def_add_list(d, p->column, p->defaults, err)) {
        g_prefix_error(err, "%s: the default of \"%s\": ", where, p->column);
        return false;
    }
    return true;
}

bool sweep_record_fill_columns(CsvTable *t, const SweepDef *d, guint *added, GError **err)
{
    const SweepRunner *r = sweep_def_runner(d);
    *added = 0;
    if (!t->header)
        return true;
    for (size_t i = 0; i < r->n_params; i++) {
        const SweepParam *p = &r->params[i];
        if (csv_table_column(t, p->column) >= 0 || !param_has_one_default(p) ||
            sweep_def_n_values(d, i) != 1 || i > t->header->len)
            continue;
        /* Only the default: a record that names another value for a column
         * its CSV lacks does not describe that CSV (the header check says so). */
        SweepDef *dflt = sweep_def_new(r);
        bool ok = sweep_def_add_list(dflt, p->column, p->defaults, err);
        bool is_default = ok && !strcmp(sweep_def_value(dflt, i, 0), sweep_def_value(d, i, 0));
        sweep_def_free(dflt);
        if (!ok)
            return false;
        if (!is_default)
            continue;
        g_ptr_array_insert(t->header, (gint)i, g_strdup(p->column));
        for (guint k = 0; k < t->rows->len; k++)
            g_ptr_array_insert(t->rows->pdata[k], (gint)i, g_strdup(sweep_def_value(d, i, 0)));
        (*added)++;
    }
    return true;
}

static bool read_parameters(SweepDef *d, JsonObject *o, const char *where, GError **err)
{
    const SweepRunner *r = sweep_def_runner(d);
    JsonNode *pn = json_object_get_member(o, "parameters");
    if (!pn || !JSON_NODE_HOLDS_OBJECT(pn))
        return bad(err, where, "expected \"parameters\": an object of value lists");
    JsonObject *params = json_node_get_object(pn);
    GList *names = json_object_get_members(params);
    bool ok = true;
    for (GList *l = names; ok && l; l = l->next) {
        const char *col = l->data;
        if (sweep_runner_param(r, col) < 0) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s: unexpected parameter \"%s\" (a %s sweep has the parameters "
                        "of 'vmsplit sweep --kind %s')", where, col, r->kind, r->kind);
            ok = false;
        }
    }
    g_list_free(names);
    for (size_t i = 0; ok && i < r->n_params; i++) {
        const char *col = r->params[i].column;
        JsonNode *an = json_object_get_member(params, col);
        if (!an) {
            ok = take_default(d, i, where, "expected a non-empty list of values for", "\"",
                              err);
            continue;
        }
        if (!JSON_NODE_HOLDS_ARRAY(an) ||
            json_array_get_length(json_node_get_array(an)) == 0) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s: expected a non-empty list of values for \"%s\"", where, col);
            ok = false;
            break;
        }
        JsonArray *a = json_node_get_array(an);
        for (guint j = 0; ok && j < json_array_get_length(a); j++) {
            JsonNode *v = json_array_get_element(a, j);
            const char *text = JSON_NODE_HOLDS_VALUE(v) &&
                                       json_node_get_value_type(v) == G_TYPE_STRING
                                   ? json_node_get_string(v)
                                   : NULL;
            if (!text || !*text) {
                g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                            "%s: value %u of \"%s\": expected a non-empty string", where,
                            j + 1, col);
                ok = false;
            } else if (!sweep_def_add_recorded(d, col, text, err)) {
                g_prefix_error(err, "%s: ", where);
                ok = false;
            }
        }
    }
    return ok;
}

static bool read_shard(SweepDef *d, JsonObject *o, const char *where, GError **err)
{
    JsonNode *sn = json_object_get_member(o, "shard");
    if (!sn)
        return true;  /* absent: the whole sweep */
    JsonObject *s = JSON_NODE_HOLDS_OBJECT(sn) ? json_node_get_object(sn) : NULL;
    JsonNode *k = s ? json_object_get_member(s, "k") : NULL;
    JsonNode *n = s ? json_object_get_member(s, "n") : NULL;
    if (!k || !n || !JSON_NODE_HOLDS_VALUE(k) || !JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(k) != G_TYPE_INT64 ||
        json_node_get_value_type(n) != G_TYPE_INT64)
        return bad(err, where, "expected \"shard\": {\"k\": K, \"n\": N}");
    char *spec = g_strdup_printf("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                 json_node_get_int(k), json_node_get_int(n));
    bool ok = sweep_def_set_shard(d, spec, err);
    if (!ok)
        g_prefix_error(err, "%s: ", where);
    g_free(spec);
    return ok;
}

SweepDef *sweep_record_from_json(const char *text, gsize len, const char *where,
                                 GError **err)
{
    JsonParser *p = json_parser_new();
    JsonObject *o = record_root(p, text, len, where, err);
    SweepDef *d = NULL;
    const char *kind = o ? string_member(o, "kind") : NULL;
    const SweepRunner *r = NULL;
    if (o && !kind)
        bad(err, where, "expected \"kind\": the sweep's kind");
    else if (kind && !(r = sweep_runner_lookup(kind, err)))
        g_prefix_error(err, "%s: ", where);
    if (r) {
        d = sweep_def_new(r);
        if (!read_parameters(d, o, where, err) || !read_shard(d, o, where, err) ||
            !sweep_def_finish(d, err)) {
            sweep_def_free(d);
            d = NULL;
        }
    }
    g_object_unref(p);
    return d;
}

/* ---- the legacy comment line ----------------------------------------- */

static char *unescape(const char *v)
{
    GString *s = g_string_new(NULL);
    for (const char *p = v; *p; p++) {
        if (*p != '%') {
            g_string_append_c(s, *p);
            continue;
        }
        int hi = g_ascii_xdigit_value(p[1]), lo = hi < 0 ? -1 : g_ascii_xdigit_value(p[2]);
        if (hi < 0 || lo < 0) {
            g_string_free(s, TRUE);
            return NULL;
        }
        g_string_append_c(s, (char)(hi << 4 | lo));
        p += 2;
    }
    return g_string_free(s, FALSE);
}

/* Values of one "column=v1,v2" token, taken verbatim. */
static bool parse_list_token(SweepDef *d, const char *col, const char *list,
                             const char *where, GError **err)
{
    char **items = g_strsplit(list, ",", -1);
    bool ok = true;
    for (char **it = items; ok && *it; it++) {
        char *v = unescape(*it);
        if (!v || !*v) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s: bad value '%s' for %s in the sweep line", where, *it, col);
            ok = false;
        } else {
            ok = sweep_def_add_recorded(d, col, v, err);
            if (!ok)
                g_prefix_error(err, "%s: ", where);
        }
        g_free(v);
    }
    g_strfreev(items);
    return ok;
}

static bool parse_token(SweepDef *d, const char *tok, const char *where, GError **err)
{
    const SweepRunner *r = sweep_def_runner(d);
    const char *eq = strchr(tok, '=');
    char *key = eq ? g_strndup(tok, (gsize)(eq - tok)) : g_strdup(tok);
    bool ok = false;
    int i = eq ? sweep_runner_param(r, key) : -1;
    if (i >= 0) {
        if (sweep_def_n_values(d, (size_t)i))
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s: %s appears twice in the sweep line", where, key);
        else
            ok = parse_list_token(d, key, eq + 1, where, err);
    } else if (eq && !strcmp(key, "shard")) {
        ok = sweep_def_set_shard(d, eq + 1, err);
        if (!ok)
            g_prefix_error(err, "%s: ", where);
    } else {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "%s: unexpected '%s' in the sweep line (a %s sweep has the "
                    "parameters of 'vmsplit sweep --kind %s')", where, tok, r->kind, r->kind);
    }
    g_free(key);
    return ok;
}

SweepDef *sweep_def_from_comment(const char *text, const char *path, guint line,
                                 GError **err)
{
    char **tok = g_strsplit_set(text, " \t", -1);
    GPtrArray *words = g_ptr_array_new();
    for (char **t = tok; *t; t++)
        if (**t)
            g_ptr_array_add(words, *t);
    char *where = g_strdup_printf("%s:%u", path, line);
    SweepDef *d = NULL;
    const SweepRunner *r = NULL;
    if (words->len == 0 || strcmp(words->pdata[0], LEGACY_TAG))
        goto out;  /* not a sweep line: no error */
    if (words->len < 3 || strcmp(words->pdata[1], LEGACY_VERSION) ||
        strncmp(words->pdata[2], "kind=", 5)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "%s: expected '# " LEGACY_TAG " " LEGACY_VERSION
                    " kind=KIND ...' (written by another vmsplit version?)", where);
        goto out;
    }
    if (!(r = sweep_runner_lookup((char *)words->pdata[2] + 5, err))) {
        g_prefix_error(err, "%s: ", where);
        goto out;
    }
    d = sweep_def_new(r);
    bool ok = true;
    for (guint w = 3; ok && w < words->len; w++)
        ok = parse_token(d, words->pdata[w], where, err);
    for (size_t i = 0; ok && i < r->n_params; i++)
        if (sweep_def_n_values(d, i) == 0)
            ok = take_default(d, i, where, "the sweep line has no values for", "", err);
    if (ok)
        ok = sweep_def_finish(d, err);
    if (!ok) {
        sweep_def_free(d);
        d = NULL;
    }
out:
    g_free(where);
    g_ptr_array_unref(words);
    g_strfreev(tok);
    return d;
}

static bool is_legacy_line(const char *comment)
{
    char **w = g_strsplit_set(comment, " \t", 3);
    bool yes = false;
    for (char **p = w; *p && !yes; p++)
        if (**p) {
            yes = !strcmp(*p, LEGACY_TAG);
            break;
        }
    g_strfreev(w);
    return yes;
}

/* ---- reading a CSV's record ------------------------------------------ */

/* The sidecar's text if it exists: true with *text NULL if it does not. */
static bool slurp_sidecar(const char *csv_path, char **path, char **text, gsize *len,
                          GError **err)
{
    *path = sweep_record_path(csv_path);
    *text = NULL;
    if (!g_file_test(*path, G_FILE_TEST_EXISTS))
        return true;
    GError *e = NULL;
    if (!g_file_get_contents(*path, text, len, &e)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO, "%s", e->message);
        g_error_free(e);
        return false;
    }
    return true;
}

SweepDef *sweep_record_read(const CsvTable *t, SweepRecordSource *src, GError **err)
{
    *src = SWEEP_RECORD_NONE;
    char *path = NULL, *text = NULL;
    gsize len = 0;
    SweepDef *d = NULL;
    if (!slurp_sidecar(t->path, &path, &text, &len, err))
        goto out;
    if (text) {
        *src = SWEEP_RECORD_SIDECAR;
        d = sweep_record_from_json(text, len, path, err);
    } else if (t->comments->len && is_legacy_line(t->comments->pdata[0])) {
        *src = SWEEP_RECORD_LEGACY;
        d = sweep_def_from_comment(t->comments->pdata[0], t->path, 1, err);
    }
out:
    g_free(text);
    g_free(path);
    return d;
}

SweepDef *sweep_def_from_table(const CsvTable *t, GError **err)
{
    SweepRecordSource src;
    GError *e = NULL;
    SweepDef *d = sweep_record_read(t, &src, &e);
    if (!d && !e) {
        char *side = sweep_record_path(t->path);
        g_set_error(&e, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "%s: no sweep record: expected %s beside it (written with the CSV "
                    "by 'vmsplit sweep'; keep the two together)", t->path, side);
        g_free(side);
    }
    if (e)
        g_propagate_error(err, e);
    return d;
}

char *sweep_record_kind(const CsvTable *t, GError **err)
{
    char *path = NULL, *text = NULL, *kind = NULL;
    gsize len = 0;
    if (!slurp_sidecar(t->path, &path, &text, &len, err))
        goto out;
    if (text) {
        JsonParser *p = json_parser_new();
        JsonObject *o = record_root(p, text, len, path, err);
        const char *k = o ? string_member(o, "kind") : NULL;
        if (o && !k)
            bad(err, path, "expected \"kind\": the sweep's kind");
        kind = g_strdup(k);
        g_object_unref(p);
    } else if (t->comments->len && is_legacy_line(t->comments->pdata[0])) {
        const char *k = strstr(t->comments->pdata[0], " kind=");
        if (k) {
            k += 6;
            kind = g_strndup(k, strcspn(k, " \t"));
        }
    }
out:
    g_free(text);
    g_free(path);
    return kind;
}
