/* Uncertainty: see uncertainty.h. */
#include "calib/uncertainty.h"

#include "calib/calibrate.h"
#include "calib/experiment.h"
#include "kernel_model/layout.h"
#include "kernel_model/profiles.h"
#include "replay/replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ACCEPT_ERROR 0.02

/* The first primes: one Halton base per sampled parameter (a preset
 * declares about fifteen ranges; more than fifty is refused). */
static const unsigned primes[UNC_MAX_DIMS] = { 2,   3,   5,   7,   11,  13,  17,  19,  23,  29,
                                   31,  37,  41,  43,  47,  53,  59,  61,  67,  71,
                                   73,  79,  83,  89,  97,  101, 103, 107, 109, 113,
                                   127, 131, 137, 139, 149, 151, 157, 163, 167, 173,
                                   179, 181, 191, 193, 197, 199, 211, 223, 227, 229 };

/* The radical inverse of i in base b with its digits permuted by perm
 * (a permutation of 0..b-1), over the first digits that matter in a
 * double: trailing zero digits are permuted too, so every digit position
 * is scrambled alike. */
static double scrambled_inverse(unsigned i, unsigned b, const unsigned *perm)
{
    double f = 1, r = 0;
    while (f > 1e-12) {
        f /= b;
        r += f * perm[i % b];
        i /= b;
    }
    return r;
}

/* A permutation of 0..b-1 from rng (Fisher-Yates). */
static void permutation(GRand *rng, unsigned b, unsigned *perm)
{
    for (unsigned k = 0; k < b; k++)
        perm[k] = k;
    for (unsigned k = b - 1; k > 0; k--) {
        unsigned j = (unsigned)g_rand_int_range(rng, 0, (gint32)k + 1);
        unsigned t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
}

/* Whether range r is sampled (numbers and switches; text keys are held). */
static bool sampled(const PresetRange *r)
{
    unsigned v;
    return r->kind == PRESET_RANGE_SPAN || preset_alternative_value(r->alternatives[0], &v);
}

static bool has_fit_rows(const Preset *p, const MeasurementSet *set)
{
    for (guint i = 0; i < set->rows->len; i++) {
        const Measurement *m = g_ptr_array_index(set->rows, i);
        if (m->role == MEAS_ROLE_FIT && !strcmp(m->cpu, p->name))
            return true;
    }
    return false;
}

double unc_figure_pick(const UncFigures *f, int which)
{
    switch (which) {
    case 0: return f->int80_3g1g;
    case 1: return f->int80_4g4g;
    case 2: return f->sysenter_3g1g;
    case 3: return f->sysenter_4g4g;
    case 4: return f->int80_4g4g - f->int80_3g1g;
    default: return f->sysenter_4g4g - f->sysenter_3g1g;
    }
}

bool unc_figures(const Preset *p, UncFigures *out, GError **err)
{
    ProfileTable *t = profiles_load(NULL, err);
    if (!t)
        return false;
    /* PAE: both entries; 32-bit paging: sysenter, the path of the
     * "+3 usecs on PAE and +1 usec on non-PAE" mail. */
    double *dst[] = { &out->int80_3g1g, &out->int80_4g4g, &out->sysenter_3g1g,
                      &out->sysenter_4g4g, &out->sysenter_3g1g_legacy,
                      &out->sysenter_4g4g_legacy };
    bool ok = true;
    for (int k = 0; ok && k < (int)G_N_ELEMENTS(dst); k++) {
        Measurement m = { .unit = MEAS_UNIT_CYCLES,
                          .exp = { .kind = EXP_SYSCALL, .syscall = "getppid",
                                   .layout = k & 1 ? "4g4g" : "3g1g", .sysenter = k >= 2,
                                   .legacy = k >= 4 } };
        ok = calib_measure(p, t, &m, dst[k], err);
    }
    profiles_free(t);
    return ok;
}

/* Moves q onto its fit rows, the parameters not in `held` free, centred on
 * their values in q. *accepted: every fit row met within ACCEPT_ERROR. The
 * projected preset replaces *q. */
static bool project(Preset **q, const MeasurementSet *set, const char *held, bool *accepted,
                    GError **err)
{
    *accepted = true;
    if (!has_fit_rows(*q, set))
        return true;
    GPtrArray *ids = g_ptr_array_new();
    GArray *centre = g_array_new(FALSE, FALSE, sizeof(unsigned));
    for (unsigned i = 0; i < (*q)->nranges; i++) {
        const PresetRange *r = &(*q)->ranges[i];
        if (r->kind != PRESET_RANGE_SPAN || (held && !strcmp(held, r->id)))
            continue;
        unsigned v = 0;
        preset_get_uint(*q, r->id, &v);
        g_ptr_array_add(ids, r->id);
        g_array_append_val(centre, v);
    }
    g_ptr_array_add(ids, NULL);
    CalibConfig cfg = { .preset = *q, .set = set, .only = (const char *const *)ids->pdata,
                        .start = (unsigned *)centre->data, .prior = (unsigned *)centre->data };
    CalibResult *res = calib_fit(&cfg, err);
    if (res) {
        for (unsigned i = 0; i < res->ntargets; i++)
            *accepted = *accepted && fabs(res->targets[i].error) <= ACCEPT_ERROR;
        preset_free(*q);
        *q = res->fitted;
        res->fitted = NULL;
        calib_result_free(res);
    }
    g_ptr_array_free(ids, TRUE);
    g_array_free(centre, TRUE);
    return res != NULL;
}

void unc_design_point(unsigned seed, unsigned index, unsigned dims, double *u)
{
    g_assert(dims <= UNC_MAX_DIMS);
    GRand *rng = g_rand_new_with_seed(seed);
    for (unsigned d = 0; d < dims; d++) {
        unsigned perm[229];
        permutation(rng, primes[d], perm);
        u[d] = scrambled_inverse(index + 1, primes[d], perm);
    }
    g_rand_free(rng);
}

bool unc_sample(const Preset *p, const MeasurementSet *set, unsigned seed, unsigned index,
                UncSample *out, GError **err)
{
    *out = (UncSample){ 0 };
    unsigned dims = 0;
    for (unsigned i = 0; i < p->nranges; i++)
        dims += sampled(&p->ranges[i]);
    if (dims > UNC_MAX_DIMS) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_INVALID,
                    "%s: more than %d ranged parameters; expected at most %d for the "
                    "uncertainty design", p->path ? p->path : p->name, UNC_MAX_DIMS,
                    UNC_MAX_DIMS);
        return false;
    }
    double u[UNC_MAX_DIMS];
    unc_design_point(seed, index, dims, u);
    Preset *q = preset_copy(p);
    unsigned d = 0;
    for (unsigned i = 0; i < q->nranges; i++) {
        const PresetRange *r = &q->ranges[i];
        if (!sampled(r))
            continue;
        unsigned v = 0;
        if (r->kind == PRESET_RANGE_SPAN) {
            v = r->lo + (unsigned)floor(u[d] * ((double)r->hi - r->lo + 1));
            v = MIN(v, r->hi);
        } else {
            unsigned n = g_strv_length(r->alternatives);
            preset_alternative_value(r->alternatives[MIN(n - 1, (unsigned)floor(u[d] * n))],
                                     &v);
        }
        d++;
        preset_set_uint(q, r->id, v);
    }
    if (!project(&q, set, NULL, &out->accepted, err)) {
        preset_free(q);
        return false;
    }
    GString *vals = g_string_new(NULL);
    for (unsigned i = 0; i < q->nranges; i++) {
        unsigned v = 0;
        if (sampled(&q->ranges[i]) && preset_get_uint(q, q->ranges[i].id, &v))
            g_string_append_printf(vals, "%s%s=%u", vals->len ? ";" : "", q->ranges[i].id, v);
    }
    out->values = g_string_free(vals, FALSE);
    out->preset = q;
    return true;
}

void unc_sample_clear(UncSample *s)
{
    preset_free(s->preset);
    g_free(s->values);
    *s = (UncSample){ 0 };
}

bool unc_point(const Preset *p, const MeasurementSet *set, unsigned seed, unsigned index,
               UncPoint *out, GError **err)
{
    *out = (UncPoint){ 0 };
    UncSample s;
    if (!unc_sample(p, set, seed, index, &s, err))
        return false;
    bool ok = unc_figures(s.preset, &out->fig, err);
    out->accepted = s.accepted;
    out->values = s.values;
    s.values = NULL;
    unc_sample_clear(&s);
    return ok;
}

void unc_point_clear(UncPoint *pt)
{
    g_free(pt->values);
    pt->values = NULL;
}

bool unc_overhead(const Preset *p, const char *trace, PagingMode paging, double *pct,
                  GError **err)
{
    ReplayConfig cfg = { .preset = p, .layout = layout_with_paging(layout_find("3g1g"), paging),
                         .ram = 4ULL << 30 };
    ReplayResult *b = replay_run(&cfg, trace, err), *r = NULL;
    cfg.layout = layout_with_paging(layout_find("4g4g"), paging);
    if (b)
        r = replay_run(&cfg, trace, err);
    if (r) {
        double base = (double)replay_totals(b)->cycles;
        *pct = base > 0 ? 100.0 * ((double)replay_totals(r)->cycles - base) / base : 0;
    }
    replay_result_free(r);
    replay_result_free(b);
    return r != NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double unc_quantile(double *v, unsigned n, double q)
{
    g_assert(n > 0);
    qsort(v, n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    unsigned i = (unsigned)floor(pos);
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* A parameter's two ends: the range's bounds, or the least and greatest
 * alternative. */
static void ends(const PresetRange *r, unsigned *lo, unsigned *hi)
{
    if (r->kind == PRESET_RANGE_SPAN) {
        *lo = r->lo;
        *hi = r->hi;
        return;
    }
    *lo = G_MAXUINT;
    *hi = 0;
    for (char **a = r->alternatives; *a; a++) {
        unsigned v = 0;
        preset_alternative_value(*a, &v);
        *lo = MIN(*lo, v);
        *hi = MAX(*hi, v);
    }
}

bool unc_tornado(const Preset *p, const MeasurementSet *set, UncFigureFn fn, void *user,
                 UncSwing **out, unsigned *n, GError **err)
{
    *out = g_new0(UncSwing, p->nranges + 1);
    *n = 0;
    bool ok = true;
    for (unsigned i = 0; ok && i < p->nranges; i++) {
        const PresetRange *r = &p->ranges[i];
        if (!sampled(r))
            continue;
        unsigned e[2];
        ends(r, &e[0], &e[1]);
        UncSwing *s = &(*out)[(*n)++];
        s->id = g_strdup(r->id);
        for (int k = 0; ok && k < 2; k++) {
            Preset *q = preset_copy(p);
            preset_set_uint(q, r->id, e[k]);
            bool accepted = false;
            ok = project(&q, set, r->id, &accepted, err) &&
                 fn(q, user, k ? &s->high : &s->low, err);
            preset_free(q);
        }
    }
    if (!ok) {
        unc_tornado_free(*out, *n);
        *out = NULL;
    }
    return ok;
}

void unc_tornado_free(UncSwing *s, unsigned n)
{
    for (unsigned i = 0; s && i < n; i++)
        g_free(s[i].id);
    g_free(s);
}
