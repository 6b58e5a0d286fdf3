/* Sweep runner "uncertainty": one point of the uncertainty design
 * (calib/uncertainty.h) for a preset and seed: the sampled estimates,
 * moved back onto the preset's fit measurements, and the null call's
 * cycles under 3g1g and 4g4g through int 0x80 and sysenter. A point
 * depends only on (cpu, seed, sample), so the CSV is the same for any -j
 * and merged shards equal the whole run; `vmsplit claim` reads it back for
 * its intervals. */
#include "calib/uncertainty.h"
#include "report/csv.h"
#include "report/sweep_runner.h"

static bool check_preset(const char *value, GError **err)
{
    Preset *p = preset_load(value, err);
    preset_free(p);
    return p != NULL;
}

static const SweepParam params[] = {
    {"cpu", "cpu", SWEEP_PARAM_NAME, 0, "p4-northwood", "CPU preset whose ranges are sampled",
     check_preset},
    {"seed", "seed", SWEEP_PARAM_UINT, 0, "1", "seed of the design's random shift", NULL},
    {"sample", "sample", SWEEP_PARAM_UINT, 0, NULL,
     "design points, e.g. 0,1,2,...,63 (each a full executed run)", NULL},
};

enum { P_CPU, P_SEED, P_SAMPLE };

static const char *const figures[] = {
#define X(name, desc) #name,
    "accepted", UNC_FIGURES(X) "values",
#undef X
};

static void *prepare(GError **err)
{
    return meas_load(NULL, err);
}

static void finish(void *ctx)
{
    meas_free(ctx);
}

static bool run_point(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    Preset *p = preset_load(pt->values[P_CPU], err);
    if (!p)
        return false;
    UncPoint u;
    bool ok = unc_point(p, ctx, (unsigned)g_ascii_strtoull(pt->values[P_SEED], NULL, 10),
                        (unsigned)g_ascii_strtoull(pt->values[P_SAMPLE], NULL, 10), &u, err);
    if (ok) {
        unsigned i = 0;
        out[i++] = sweep_format_uint(u.accepted);
#define X(name, desc) out[i++] = sweep_format_double(u.fig.name, 1);
        UNC_FIGURES(X)
#undef X
        out[i++] = g_strdup(u.values);
        g_assert(i == G_N_ELEMENTS(figures));
    }
    unc_point_clear(&u);
    preset_free(p);
    return ok;
}

const SweepRunner sweep_runner_uncertainty = {
    .kind = "uncertainty",
    .summary = "the null call under 3g1g and 4g4g at one point of the uncertainty design",
    .params = params,
    .n_params = G_N_ELEMENTS(params),
    .figures = figures,
    .n_figures = G_N_ELEMENTS(figures),
    .prepare = prepare,
    .finish = finish,
    .run_point = run_point,
};
