/* Sweep runner "uncertainty": one point of the uncertainty design
 * (calib/uncertainty.h) for a preset and seed: the sampled estimates,
 * moved back onto the preset's fit measurements; the null call's cycles
 * under 3g1g and 4g4g through int 0x80 and sysenter; and, for a workload
 * other than "none", its overhead under 4g4g against 3g1g. A row depends
 * only on (cpu, seed, sample, workload), so the CSV is the same for any -j
 * and merged shards equal the whole run; `vmsplit claim` reads it back for
 * its intervals.
 *
 * The projected sample is the same for every workload of a sample, and
 * computing it is a calibration: the sweep keeps each one (shared by the
 * worker threads under a lock; two threads that compute the same sample at
 * once get the same preset and keep the first). */
#include "calib/uncertainty.h"
#include "replay/trace.h"
#include "report/csv.h"
#include "report/sweep_runner.h"

#include <string.h>

static bool check_preset(const char *value, GError **err)
{
    Preset *p = preset_load(value, err);
    preset_free(p);
    return p != NULL;
}

static bool check_workload(const char *value, GError **err)
{
    if (!strcmp(value, "none"))
        return true;
    TraceReader *r = trace_reader_open(value, err);
    trace_reader_close(r);
    if (!r)
        g_prefix_error(err, "expected 'none' or a vmsplit trace: ");
    return r != NULL;
}

static const SweepParam params[] = {
    {"cpu", "cpu", SWEEP_PARAM_NAME, 0, "p4-northwood", "CPU preset whose ranges are sampled",
     check_preset},
    {"seed", "seed", SWEEP_PARAM_UINT, 0, "1", "seed of the design's digit scrambling", NULL},
    {"sample", "sample", SWEEP_PARAM_UINT, 0, NULL,
     "design points, e.g. 0,1,2,...,63 (each a calibration and executed runs)", NULL},
    {"workloads", "workload", SWEEP_PARAM_NAME, 0, "none",
     "vmsplit traces replayed under 3g1g and 4g4g at each point, or none", check_workload},
};

enum { P_CPU, P_SEED, P_SAMPLE, P_WORKLOAD };

static const char *const figures[] = {
#define X(name, desc) #name,
    "accepted", UNC_FIGURES(X) "overhead_pct", "values",
#undef X
};

typedef struct {
    MeasurementSet *set;
    GMutex lock;
    GHashTable *samples;         /* "cpu\x1fseed\x1fsample" -> UncSample* */
} Ctx;

static void sample_free(gpointer p)
{
    unc_sample_clear(p);
    g_free(p);
}

static void *prepare(GError **err)
{
    MeasurementSet *set = meas_load(NULL, err);
    if (!set)
        return NULL;
    Ctx *c = g_new0(Ctx, 1);
    c->set = set;
    g_mutex_init(&c->lock);
    c->samples = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, sample_free);
    return c;
}

static void finish(void *ctx)
{
    Ctx *c = ctx;
    if (!c)
        return;
    g_hash_table_destroy(c->samples);
    g_mutex_clear(&c->lock);
    meas_free(c->set);
    g_free(c);
}

/* The projected sample of a point, computed once per sweep. */
static const UncSample *sample_of(Ctx *c, const SweepPoint *pt, GError **err)
{
    char *key = g_strjoin("\x1f", pt->values[P_CPU], pt->values[P_SEED], pt->values[P_SAMPLE],
                          NULL);
    g_mutex_lock(&c->lock);
    const UncSample *s = g_hash_table_lookup(c->samples, key);
    g_mutex_unlock(&c->lock);
    if (s) {
        g_free(key);
        return s;
    }
    Preset *p = preset_load(pt->values[P_CPU], err);
    UncSample *n = g_new0(UncSample, 1);
    bool ok = p && unc_sample(p, c->set, (unsigned)g_ascii_strtoull(pt->values[P_SEED], NULL, 10),
                              (unsigned)g_ascii_strtoull(pt->values[P_SAMPLE], NULL, 10), n, err);
    preset_free(p);
    if (!ok) {
        g_free(n);
        g_free(key);
        return NULL;
    }
    g_mutex_lock(&c->lock);
    s = g_hash_table_lookup(c->samples, key);
    if (s) {
        sample_free(n);
        g_free(key);
    } else {
        g_hash_table_insert(c->samples, key, n);
        s = n;
    }
    g_mutex_unlock(&c->lock);
    return s;
}

static bool run_point(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    const UncSample *s = sample_of(ctx, pt, err);
    UncFigures f;
    double pct = 0;
    bool none = !strcmp(pt->values[P_WORKLOAD], "none");
    if (!s || !unc_figures(s->preset, &f, err) ||
        (!none && !unc_overhead(s->preset, pt->values[P_WORKLOAD], &pct, err)))
        return false;
    unsigned i = 0;
    out[i++] = sweep_format_uint(s->accepted);
#define X(name, desc) out[i++] = sweep_format_double(f.name, 1);
    UNC_FIGURES(X)
#undef X
    out[i++] = sweep_format_double(pct, 4);
    out[i++] = g_strdup(s->values);
    g_assert(i == G_N_ELEMENTS(figures));
    return true;
}

const SweepRunner sweep_runner_uncertainty = {
    .kind = "uncertainty",
    .summary = "one point of the uncertainty design: the null call under 3g1g and 4g4g, and a "
               "workload's 4g4g overhead",
    .params = params,
    .n_params = G_N_ELEMENTS(params),
    .figures = figures,
    .n_figures = G_N_ELEMENTS(figures),
    .prepare = prepare,
    .finish = finish,
    .run_point = run_point,
};
