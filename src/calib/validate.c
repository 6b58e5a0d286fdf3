/* Validation: see validate.h. */
#include "calib/validate.h"

#include "calib/experiment.h"
#include "kernel_model/profiles.h"

#include <string.h>

Validation *calib_validate(const MeasurementSet *set, const Preset *override,
                           const char *profiles, GError **err)
{
    ProfileTable *t = profiles_load(profiles, err);
    if (!t)
        return NULL;
    GHashTable *presets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                (GDestroyNotify)preset_free);
    Validation *v = g_new0(Validation, 1);
    v->rows = g_new0(ValidationRow, set->rows->len + 1);
    bool ok = true;
    for (guint i = 0; ok && i < set->rows->len; i++) {
        const Measurement *m = g_ptr_array_index(set->rows, i);
        ValidationRow *r = &v->rows[v->n++];
        r->row = m;
        if (m->exp.kind == EXP_NONE)
            continue;
        const Preset *p = override && !strcmp(override->name, m->cpu) ? override : NULL;
        if (!p && !(p = g_hash_table_lookup(presets, m->cpu))) {
            Preset *q = preset_load(m->cpu, err);
            if (!(ok = q != NULL)) {
                g_prefix_error(err, "%s:%d: [%s] cpu: ", set->path, m->line, m->id);
                break;
            }
            g_hash_table_insert(presets, g_strdup(m->cpu), q);
            p = q;
        }
        if (!(ok = calib_measure(p, t, m, &r->model, err))) {
            g_prefix_error(err, "%s:%d: [%s]: ", set->path, m->line, m->id);
            break;
        }
        r->evaluated = true;
        r->error = meas_error(m, r->model);
    }
    g_hash_table_destroy(presets);
    profiles_free(t);
    if (!ok) {
        calib_validation_free(v);
        return NULL;
    }
    return v;
}

void calib_validation_free(Validation *v)
{
    if (!v)
        return;
    g_free(v->rows);
    g_free(v);
}
