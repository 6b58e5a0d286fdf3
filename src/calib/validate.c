/* Validation: see validate.h. */
#include "calib/validate.h"

#include "calib/experiment.h"
#include "calib/uncertainty.h"
#include "kernel_model/profiles.h"

#include <string.h>

/* One preset of the set's rows: as named (or the override), and its
 * sampled points once, if asked for. */
typedef struct {
    Preset *owned;               /* loaded here; NULL for the override */
    const Preset *p;
    GPtrArray *samples;          /* UncSample*, accepted points only */
} CpuEntry;

static void entry_free(gpointer data)
{
    CpuEntry *e = data;
    if (e->samples)
        g_ptr_array_free(e->samples, TRUE);
    preset_free(e->owned);
    g_free(e);
}

static void sample_free(gpointer p)
{
    unc_sample_clear(p);
    g_free(p);
}

static CpuEntry *entry_for(GHashTable *cpus, const MeasurementSet *set, const Measurement *m,
                           const Preset *override, unsigned samples, unsigned seed,
                           GError **err)
{
    CpuEntry *e = g_hash_table_lookup(cpus, m->cpu);
    if (e)
        return e;
    e = g_new0(CpuEntry, 1);
    if (override && !strcmp(override->name, m->cpu))
        e->p = override;
    else if (!(e->p = e->owned = preset_load(m->cpu, err))) {
        g_prefix_error(err, "%s:%d: [%s] cpu: ", set->path, m->line, m->id);
        g_free(e);
        return NULL;
    }
    if (samples) {
        e->samples = g_ptr_array_new_with_free_func(sample_free);
        for (unsigned i = 0; i < samples; i++) {
            UncSample *s = g_new0(UncSample, 1);
            if (!unc_sample(e->p, set, seed, i, s, err)) {
                g_free(s);
                entry_free(e);
                return NULL;
            }
            if (s->accepted)
                g_ptr_array_add(e->samples, s);
            else
                sample_free(s);
        }
    }
    g_hash_table_insert(cpus, g_strdup(m->cpu), e);
    return e;
}

/* The row on every sampled point of its preset: its 90 % interval. */
static bool interval(const CpuEntry *e, const ProfileTable *t, ValidationRow *r, GError **err)
{
    unsigned n = e->samples->len;
    if (!n)
        return true;
    double *v = g_new(double, n);
    bool ok = true;
    for (unsigned i = 0; ok && i < n; i++) {
        const UncSample *s = g_ptr_array_index(e->samples, i);
        ok = calib_measure(s->preset, t, r->row, &v[i], err);
    }
    if (ok) {
        r->lo = unc_quantile(v, n, 0.05);
        r->hi = unc_quantile(v, n, 0.95);
        r->points = n;
        r->has_interval = true;
    }
    g_free(v);
    return ok;
}

Validation *calib_validate(const MeasurementSet *set, const Preset *override,
                           const char *profiles, unsigned samples, unsigned seed, GError **err)
{
    ProfileTable *t = profiles_load(profiles, err);
    if (!t)
        return NULL;
    GHashTable *cpus = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, entry_free);
    Validation *v = g_new0(Validation, 1);
    v->rows = g_new0(ValidationRow, set->rows->len + 1);
    bool ok = true;
    for (guint i = 0; ok && i < set->rows->len; i++) {
        const Measurement *m = g_ptr_array_index(set->rows, i);
        ValidationRow *r = &v->rows[v->n++];
        r->row = m;
        if (m->exp.kind == EXP_NONE)
            continue;
        const CpuEntry *e = entry_for(cpus, set, m, override, samples, seed, err);
        if (!(ok = e != NULL))
            break;
        if (!(ok = calib_measure(e->p, t, m, &r->model, err) &&
                   (!samples || interval(e, t, r, err)))) {
            g_prefix_error(err, "%s:%d: [%s]: ", set->path, m->line, m->id);
            break;
        }
        r->evaluated = true;
        r->error = meas_error(m, r->model);
    }
    g_hash_table_destroy(cpus);
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
