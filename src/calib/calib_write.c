/* Writing a fitted preset: see calib_write_preset in calibrate.h. The
 * original text is kept line for line (every source comment survives);
 * only the lines of fitted parameters change, and a line an earlier fit
 * wrote is restored to its estimate when this fit leaves it at its prior.
 * Calibrating the written file again reproduces it. */
#include "calib/calibrate.h"

#include <string.h>

#define WAS "estimate was: "

/* The comment as it read before any fit ("estimate: ..." or a source). */
static char *original_comment(const char *c)
{
    const char *was = strstr(c, WAS);
    if (g_str_has_prefix(c, "fitted:") && was)
        return g_strconcat("estimate: ", was + strlen(WAS), NULL);
    return g_strdup(c);
}

static const CalibParam *param_of(const CalibResult *r, const char *id)
{
    for (unsigned j = 0; j < r->nparams; j++)
        if (!strcmp(r->params[j].id, id))
            return &r->params[j];
    return NULL;
}

static char *fitted_comment(const CalibResult *r, const CalibParam *p, const char *orig,
                            const char *meas_path)
{
    GString *s = g_string_new("fitted: ");
    bool first = true;
    for (unsigned i = 0; i < r->ncombos; i++)
        if (p->combos & (1u << i)) {
            g_string_append_printf(s, "%s%s = %.6g", first ? "" : " and ", r->combos[i].text,
                                   r->combos[i].value);
            first = false;
        }
    g_string_append(s, " to");
    first = true;
    for (unsigned i = 0; i < r->ntargets; i++)
        if (p->rows & (1u << i)) {
            g_string_append_printf(s, "%s %s", first ? "" : ",", r->targets[i].row->id);
            first = false;
        }
    char *base = g_path_get_basename(meas_path);
    g_string_append_printf(s, " (validation/%s, vmsplit calibrate)%s; prior %u; " WAS "%s", base,
                           p->separable ? "" : ", split by the ranges (not separable)",
                           p->prior, g_str_has_prefix(orig, "estimate: ")
                                         ? orig + strlen("estimate: ") : orig);
    g_free(base);
    return g_string_free(s, FALSE);
}

/* "key = value" padded to the column the comment started at. */
static void emit(GString *out, const char *indent, const char *key, unsigned v, long col,
                 const char *comment)
{
    GString *kv = g_string_new(NULL);
    g_string_append_printf(kv, "%s%s = %u", indent, key, v);
    if ((long)kv->len >= col)
        g_string_append_c(kv, ' ');
    while ((long)kv->len < col)
        g_string_append_c(kv, ' ');
    g_string_append_printf(out, "%s# %s\n", kv->str, comment);
    g_string_free(kv, TRUE);
}

char *calib_write_preset(const CalibResult *r, const char *text, const char *meas_path)
{
    GString *out = g_string_new(NULL);
    char **lines = g_strsplit(text, "\n", -1);
    char *group = NULL;
    for (int i = 0; lines[i]; i++) {
        const char *l = lines[i];
        bool last = !lines[i + 1];
        const char *t = l + strspn(l, " \t");
        const char *eq = strchr(t, '=');
        const char *hash = strstr(t, " #");
        if (*t == '[' && strchr(t, ']')) {
            g_free(group);
            group = g_strndup(t + 1, (gsize)(strchr(t, ']') - t - 1));
        } else if (group && *t && *t != '#' && eq && hash && eq < hash) {
            char *key = g_strstrip(g_strndup(t, (gsize)(eq - t)));
            char *id = g_strdup_printf("%s.%s", group, key);
            const CalibParam *p = param_of(r, id);
            const char *c = hash + 2 + strspn(hash + 2, " ");
            bool was_fitted = g_str_has_prefix(c, "fitted:");
            if (p && (was_fitted || (p->informed && p->value != p->prior))) {
                char *indent = g_strndup(l, (gsize)(t - l));
                char *orig = original_comment(c);
                bool fit = p->informed && p->value != p->prior;
                char *nc = fit ? fitted_comment(r, p, orig, meas_path) : g_strdup(orig);
                emit(out, indent, key, fit ? p->value : p->prior, (long)(hash + 1 - l), nc);
                g_free(nc);
                g_free(orig);
                g_free(indent);
                g_free(key);
                g_free(id);
                continue;
            }
            g_free(key);
            g_free(id);
        }
        g_string_append(out, l);
        if (!last)
            g_string_append_c(out, '\n');
    }
    g_strfreev(lines);
    g_free(group);
    return g_string_free(out, FALSE);
}
