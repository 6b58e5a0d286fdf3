/* Published measurements: see measurements.h and the top of
 * validation/measurements.ini. */
#include "calib/measurements.h"
#include "textfile/textfile.h"

#include "config.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(vmsplit-calib-error-quark, calib_error)

static const char *unit_names[] = { "cycles", "us", "ratio" };
static const char *row_keys[] = { "figure", "unit", "machine", "clock", "source", "quote",
                                  "note", "cpu", "experiment", "baseline", "combine", "role", NULL };

const char *meas_unit_name(MeasUnit u) { return unit_names[u]; }

/* Lines of every group and key ("group" and "group\x1fkey"), as the preset
 * reader records them: GKeyFile reports none. */
static GHashTable *scan_lines(const char *text)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char **lines = g_strsplit(text, "\n", -1);
    char *group = NULL;
    for (int i = 0; lines[i]; i++) {
        char *l = g_strstrip(lines[i]);
        char *eq = strchr(l, '=');
        if (*l == '[' && strchr(l, ']')) {
            g_free(group);
            group = g_strndup(l + 1, (gsize)(strchr(l, ']') - l - 1));
            g_hash_table_insert(h, g_strdup(group), GINT_TO_POINTER(i + 1));
        } else if (*l && *l != '#' && eq && group) {
            *eq = '\0';
            g_hash_table_insert(h, g_strconcat(group, "\x1f", g_strstrip(l), NULL),
                                GINT_TO_POINTER(i + 1));
        }
    }
    g_free(group);
    g_strfreev(lines);
    return h;
}

typedef struct {
    const char *path;
    GHashTable *lines;
    GKeyFile *kf;
} Reader;

static int line_of(const Reader *r, const char *group, const char *key)
{
    char *id = key ? g_strconcat(group, "\x1f", key, NULL) : g_strdup(group);
    int l = GPOINTER_TO_INT(g_hash_table_lookup(r->lines, id));
    g_free(id);
    return l;
}

static bool fail(GError **err, const Reader *r, const char *group, const char *key,
                 const char *fmt, ...) G_GNUC_PRINTF(5, 6);

static bool fail(GError **err, const Reader *r, const char *group, const char *key,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE, "%s:%d: [%s]%s%s: %s", r->path,
                line_of(r, group, key), group, key ? " " : "", key ? key : "", msg);
    g_free(msg);
    return false;
}

/* "syscall NAME LAYOUT int80|sysenter [pae|legacy]", "preset GROUP.KEY",
 * "guest NAME LAYOUT", "none". */
static bool parse_experiment(const Reader *r, const char *g, const char *k, Experiment *e,
                             GError **err)
{
    char *v = g_key_file_get_value(r->kf, g, k, NULL);
    char **w = g_strsplit_set(g_strstrip(v), " \t", -1);
    GPtrArray *words = g_ptr_array_new();
    for (int i = 0; w[i]; i++)
        if (*w[i])
            g_ptr_array_add(words, w[i]);
    guint n = words->len;
    const char *w0 = n ? g_ptr_array_index(words, 0) : "";
    bool ok = true;
    if (!strcmp(w0, "none") && n == 1) {
        e->kind = EXP_NONE;
    } else if (!strcmp(w0, "preset") && n == 2 && strchr(g_ptr_array_index(words, 1), '.')) {
        e->kind = EXP_PRESET;
        e->key = g_strdup(g_ptr_array_index(words, 1));
    } else if (!strcmp(w0, "guest") && n == 3) {
        e->kind = EXP_GUEST;
        e->program = g_strdup(g_ptr_array_index(words, 1));
        e->layout = g_strdup(g_ptr_array_index(words, 2));
    } else if (!strcmp(w0, "syscall") && (n == 4 || n == 5) &&
               (!strcmp(g_ptr_array_index(words, 3), "int80") ||
                !strcmp(g_ptr_array_index(words, 3), "sysenter")) &&
               (n == 4 || !strcmp(g_ptr_array_index(words, 4), "pae") ||
                !strcmp(g_ptr_array_index(words, 4), "legacy"))) {
        e->kind = EXP_SYSCALL;
        e->syscall = g_strdup(g_ptr_array_index(words, 1));
        e->layout = g_strdup(g_ptr_array_index(words, 2));
        e->sysenter = !strcmp(g_ptr_array_index(words, 3), "sysenter");
        e->legacy = n == 5 && !strcmp(g_ptr_array_index(words, 4), "legacy");
    } else {
        ok = fail(err, r, g, k, "'%s'; expected 'syscall NAME LAYOUT int80|sysenter "
                  "[pae|legacy]', 'preset GROUP.KEY', 'guest NAME LAYOUT' or 'none'", v);
    }
    g_ptr_array_free(words, TRUE);
    g_strfreev(w);
    g_free(v);
    return ok;
}

/* "1761", "2415.7", "256..460". */
static bool parse_figure(const Reader *r, const char *g, Measurement *m, GError **err)
{
    char *v = g_key_file_get_value(r->kf, g, "figure", NULL);
    g_strstrip(v);
    char *dots = strstr(v, "..");
    char *lo = dots ? g_strndup(v, (gsize)(dots - v)) : g_strdup(v);
    char *end = NULL;
    m->lo = g_ascii_strtod(lo, &end);
    bool ok = end != lo && *end == '\0' && isfinite(m->lo);
    g_free(lo);
    end = (char *)"";
    if (ok && dots) {
        char *s = dots + 2;
        m->hi = g_ascii_strtod(s, &end);
        ok = end != s && isfinite(m->hi) && m->hi >= m->lo;
    } else {
        m->hi = m->lo;
    }
    ok = ok && *end == '\0' && m->lo > 0;
    if (!ok)
        fail(err, r, g, "figure", "'%s'; expected a positive number or LO..HI with LO <= HI", v);
    g_free(v);
    return ok;
}

static char *get(const Reader *r, const char *g, const char *k)
{
    char *v = g_key_file_get_value(r->kf, g, k, NULL);
    return v ? g_strstrip(v) : NULL;
}

static bool parse_row(const Reader *r, const char *g, Measurement *m, GError **err)
{
    char **keys = g_key_file_get_keys(r->kf, g, NULL, NULL);
    for (int i = 0; keys[i]; i++) {
        bool known = false;
        for (size_t j = 0; row_keys[j]; j++)
            known = known || !strcmp(keys[i], row_keys[j]);
        if (!known) {
            char *all = g_strjoinv(", ", (char **)row_keys);
            fail(err, r, g, keys[i], "unknown key; expected one of %s", all);
            g_free(all);
            g_strfreev(keys);
            return false;
        }
    }
    g_strfreev(keys);
    static const char *required[] = { "figure", "unit", "machine", "clock", "source", "cpu",
                                      "experiment", "role" };
    for (size_t i = 0; i < G_N_ELEMENTS(required); i++)
        if (!g_key_file_has_key(r->kf, g, required[i], NULL))
            return fail(err, r, g, NULL, "lacks %s; expected the keys figure, unit, machine, "
                        "clock (or 'not stated'), source, cpu, experiment and role",
                        required[i]);
    m->id = g_strdup(g);
    m->line = line_of(r, g, NULL);
    m->machine = get(r, g, "machine");
    m->clock = get(r, g, "clock");
    m->source = get(r, g, "source");
    m->quote = get(r, g, "quote");
    m->note = get(r, g, "note");
    m->cpu = get(r, g, "cpu");
    if (!parse_figure(r, g, m, err))
        return false;
    char *unit = get(r, g, "unit"), *role = get(r, g, "role"), *comb = get(r, g, "combine");
    bool ok = false;
    for (int u = 0; u < 3; u++)
        if (!strcmp(unit, unit_names[u])) {
            m->unit = (MeasUnit)u;
            ok = true;
        }
    if (!ok)
        fail(err, r, g, "unit", "'%s'; expected cycles, us or ratio", unit);
    if (ok && !strcmp(role, "fit"))
        m->role = MEAS_ROLE_FIT;
    else if (ok && !strcmp(role, "check"))
        m->role = MEAS_ROLE_CHECK;
    else if (ok)
        ok = fail(err, r, g, "role", "'%s'; expected fit or check", role);
    ok = ok && parse_experiment(r, g, "experiment", &m->exp, err);
    bool has_base = g_key_file_has_key(r->kf, g, "baseline", NULL);
    ok = ok && (!has_base || parse_experiment(r, g, "baseline", &m->baseline, err));
    if (ok && has_base) {
        if (comb && !strcmp(comb, "difference"))
            m->combine = COMBINE_DIFFERENCE;
        else if (comb && !strcmp(comb, "ratio"))
            m->combine = COMBINE_RATIO;
        else
            ok = fail(err, r, g, comb ? "combine" : "baseline",
                      "'%s'; expected combine = difference or ratio with a baseline",
                      comb ? comb : "(no combine)");
    } else if (ok && comb) {
        ok = fail(err, r, g, "combine", "without a baseline; expected a baseline experiment");
    }
    if (ok && m->role == MEAS_ROLE_FIT && m->exp.kind != EXP_SYSCALL)
        ok = fail(err, r, g, "role", "fit with a '%s' experiment; expected a syscall experiment "
                  "(only an executed run can be fitted)",
                  m->exp.kind == EXP_NONE ? "none" : "preset");
    if (ok && (m->unit == MEAS_UNIT_RATIO) != (m->combine == COMBINE_RATIO))
        ok = fail(err, r, g, "unit", "'%s' with %s; expected unit ratio exactly when combine = ratio",
                  unit, m->combine == COMBINE_RATIO ? "combine = ratio" : "no ratio");
    g_free(unit);
    g_free(role);
    g_free(comb);
    return ok;
}

static void exp_clear(Experiment *e)
{
    g_free(e->syscall);
    g_free(e->layout);
    g_free(e->key);
    g_free(e->program);
}

static void row_free(gpointer p)
{
    Measurement *m = p;
    g_free(m->id);
    g_free(m->machine);
    g_free(m->clock);
    g_free(m->source);
    g_free(m->quote);
    g_free(m->note);
    g_free(m->cpu);
    exp_clear(&m->exp);
    exp_clear(&m->baseline);
    g_free(m);
}

MeasurementSet *meas_load(const char *path, GError **err)
{
    char *def = NULL;
    if (!path) {
        def = g_build_filename(VMSPLIT_SOURCE_DIR, "validation", "measurements.ini", NULL);
        if (!g_file_test(def, G_FILE_TEST_EXISTS)) {
            g_free(def);
            def = g_build_filename(VMSPLIT_DATADIR, "measurements.ini", NULL);
        }
        path = def;
    }
    char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE, "%s", e->message);
        g_error_free(e);
        g_free(def);
        return NULL;
    }
    if (!textfile_check(text, len, path, CALIB_ERROR, CALIB_ERROR_PARSE, err)) {
        g_free(text);
        g_free(def);
        return NULL;
    }
    MeasurementSet *s = g_new0(MeasurementSet, 1);
    s->path = g_strdup(path);
    s->rows = g_ptr_array_new_with_free_func(row_free);
    Reader r = { s->path, scan_lines(text), g_key_file_new() };
    bool ok = g_key_file_load_from_data(r.kf, text, (gsize)-1, G_KEY_FILE_NONE, &e);
    if (!ok) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE, "%s: %s; expected an .ini file", path,
                    e->message);
        g_error_free(e);
    }
    gsize n = 0;
    char **groups = ok ? g_key_file_get_groups(r.kf, &n) : NULL;
    for (gsize i = 0; ok && i < n; i++) {
        if (!strcmp(groups[i], "split")) {
            s->split_reason = get(&r, groups[i], "reason");
            if (!s->split_reason)
                ok = fail(err, &r, groups[i], NULL, "lacks reason; expected the sentence that "
                          "says why the rows are divided into fit and check");
            continue;
        }
        Measurement *m = g_new0(Measurement, 1);
        g_ptr_array_add(s->rows, m);
        ok = parse_row(&r, groups[i], m, err);
    }
    if (ok && !s->split_reason)
        ok = fail(err, &r, "split", NULL, "missing; expected a [split] group with the reason "
                  "for the division into fit and check, declared before fitting");
    g_strfreev(groups);
    g_key_file_free(r.kf);
    g_hash_table_destroy(r.lines);
    g_free(text);
    g_free(def);
    if (!ok) {
        meas_free(s);
        return NULL;
    }
    return s;
}

void meas_free(MeasurementSet *s)
{
    if (!s)
        return;
    g_ptr_array_free(s->rows, TRUE);
    g_free(s->path);
    g_free(s->split_reason);
    g_free(s);
}

char *meas_experiment_text(const Experiment *e)
{
    switch (e->kind) {
    case EXP_SYSCALL:
        return g_strdup_printf("syscall %s %s %s%s", e->syscall, e->layout,
                               e->sysenter ? "sysenter" : "int80", e->legacy ? " legacy" : "");
    case EXP_PRESET: return g_strdup_printf("preset %s", e->key);
    case EXP_GUEST: return g_strdup_printf("guest %s %s", e->program, e->layout);
    case EXP_NONE: break;
    }
    return g_strdup("none");
}

double meas_error(const Measurement *m, double v)
{
    if (v >= m->lo && v <= m->hi)
        return 0;
    double end = v < m->lo ? m->lo : m->hi;
    return (v - end) / end;
}
