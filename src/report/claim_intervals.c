/* vmsplit claim: the intervals of the lowmem and KPTI statements.
 *
 * Lowmem. The boot-time model's estimates that carry a range
 * (kernel_model/lowmem.h: lowmem_estimates -- sizeof(struct page), the top
 * of low RAM below the PCI hole, the kernel image) are sampled over the
 * same design as the CPU estimates (calib/uncertainty.h:
 * unc_design_point, seed 1, the claim's N points), each coordinate spread
 * evenly over its range; a statement's figure is computed at every point
 * and its interval is the 5th to 95th percentile. Everything else in the
 * model is sourced (the vmalloc reserve, the buddy bitmaps, the hashes:
 * docs/lowmem.md) and held.
 *
 * KPTI. The statement's figure (the null generator's KPTI overhead at
 * 50 000 syscalls/s on the skylake preset) is recomputed on N points of
 * skylake's own design (unc_sample: its ranged estimates; skylake has no
 * fit rows, so no point is moved or rejected): every rate's trace replayed
 * under 3g1g and kpti at each point, -j at a time. */
#include "report/claim_priv.h"

#include "calib/uncertainty.h"

#include <math.h>
#include <string.h>

#define SEED 1
#define MiB (1ULL << 20)
#define KiB (1ULL << 10)

ClaimLowmemSetting claim_lowmem_shipped(void)
{
    return (ClaimLowmemSetting){
        .struct_page = (uint32_t)lowmem_estimates[LOWMEM_EST_STRUCT_PAGE].value,
        .tolm_mib = lowmem_estimates[LOWMEM_EST_TOLM].value,
        .image_kib = lowmem_estimates[LOWMEM_EST_IMAGE].value,
    };
}

bool claim_lowmem_at(const ClaimLowmemSetting *s, const char *layout, uint64_t ram,
                     LowmemReport *r, GError **err)
{
    LowmemMap map;
    LowmemParams p = { .struct_page_bytes = s->struct_page, .image_bytes = s->image_kib * KiB };
    return lowmem_map_default_tolm(&map, ram, s->tolm_mib * MiB, err) &&
           lowmem_compute(layout_mem_find(layout), &map, &p, r, err);
}

/* Point i of the design on the lowmem estimates' ranges. */
static ClaimLowmemSetting setting_at(unsigned i)
{
    double u[LOWMEM_NEST];
    unc_design_point(SEED, i, LOWMEM_NEST, u);
    uint64_t v[LOWMEM_NEST];
    for (int d = 0; d < LOWMEM_NEST; d++) {
        const LowmemEstimate *e = &lowmem_estimates[d];
        v[d] = MIN(e->hi, e->lo + (uint64_t)floor(u[d] * (double)(e->hi - e->lo + 1)));
    }
    return (ClaimLowmemSetting){ .struct_page = (uint32_t)v[LOWMEM_EST_STRUCT_PAGE],
                                 .tolm_mib = v[LOWMEM_EST_TOLM],
                                 .image_kib = v[LOWMEM_EST_IMAGE] };
}

bool claim_lowmem_interval(const Claim *c, ClaimLowmemFn fn, ClaimInterval *out, GError **err)
{
    *out = (ClaimInterval){ 0 };
    unsigned n = (unsigned)c->cfg->uncertainty;
    if (!n)
        return true;
    double *v = g_new(double, n);
    bool ok = true;
    for (unsigned i = 0; ok && i < n; i++) {
        ClaimLowmemSetting s = setting_at(i);
        ok = fn(&s, &v[i], err);
    }
    if (ok) {
        out->lo = unc_quantile(v, n, 0.05);
        out->hi = unc_quantile(v, n, 0.95);
        out->points = n;
        out->have = true;
    }
    g_free(v);
    return ok;
}

const char *claim_lowmem_ranges_text(void)
{
    static char text[256];
    static gsize done;
    if (g_once_init_enter(&done)) {
        GString *s = g_string_new(NULL);
        for (int d = 0; d < LOWMEM_NEST; d++) {
            const LowmemEstimate *e = &lowmem_estimates[d];
            g_string_append_printf(s, "%s%s %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT " %s",
                                   d ? ", " : "", e->name, e->lo, e->hi, e->unit);
        }
        g_strlcpy(text, s->str, sizeof text);
        g_string_free(s, TRUE);
        g_once_init_leave(&done, 1);
    }
    return text;
}

/* ---- KPTI ------------------------------------------------------------------- */

double claim_kpti_at50(ReplayResult *const *base, ReplayResult *const *kpti, size_t nr)
{
    /* Linear between the two rates that bracket 50 000 syscalls/s (the
     * baseline's achieved rate: user work runs below IPC 1); the nearest
     * end if none does. */
    double at50 = 0, px = 0, py = 0;
    for (size_t i = 0; i < nr; i++) {
        double b = (double)replay_totals(base[i])->cycles;
        double o = 100.0 * ((double)replay_totals(kpti[i])->cycles - b) / b;
        double x = claim_rate_of(base[i]);
        if (i == 0 || x <= 50000)
            at50 = o;
        else if (px < 50000)
            at50 = py + (o - py) * (50000 - px) / (x - px);
        px = x;
        py = o;
    }
    return at50;
}

bool claim_kpti_interval(Claim *c, char *const *traces, size_t nr, ClaimInterval *out,
                         GError **err)
{
    *out = (ClaimInterval){ 0 };
    unsigned n = (unsigned)c->cfg->uncertainty;
    if (!n)
        return true;
    MeasurementSet *set = meas_load(NULL, err);
    if (!set)
        return false;
    UncSample *s = g_new0(UncSample, n);
    ReplayJob *jobs = g_new0(ReplayJob, (size_t)n * nr * 2);
    bool ok = true;
    unsigned used = 0;
    for (unsigned i = 0; ok && i < n; i++) {
        if (!(ok = unc_sample(c->skylake, set, SEED, i, &s[used], err)))
            break;
        if (!s[used].accepted) {
            unc_sample_clear(&s[used]);
            continue;
        }
        for (size_t k = 0; k < nr; k++)
            for (int l = 0; l < 2; l++)
                jobs[((size_t)used * nr + k) * 2 + l] = (ReplayJob){
                    .cfg = { .preset = s[used].preset, .layout = layout_find(l ? "kpti" : "3g1g"),
                             .ram = 4ULL << 30 },
                    .trace = traces[k] };
        used++;
    }
    ok = ok && claim_run_jobs(jobs, (size_t)used * nr * 2, c->cfg->jobs, err);
    if (ok && used) {
        double *v = g_new(double, used);
        ReplayResult **b = g_new(ReplayResult *, nr), **k = g_new(ReplayResult *, nr);
        for (unsigned i = 0; i < used; i++) {
            for (size_t r = 0; r < nr; r++) {
                b[r] = jobs[((size_t)i * nr + r) * 2].result;
                k[r] = jobs[((size_t)i * nr + r) * 2 + 1].result;
            }
            v[i] = claim_kpti_at50(b, k, nr);
        }
        out->lo = unc_quantile(v, used, 0.05);
        out->hi = unc_quantile(v, used, 0.95);
        out->points = used;
        out->have = true;
        g_free(b);
        g_free(k);
        g_free(v);
    }
    for (size_t j = 0; j < (size_t)n * nr * 2; j++)
        replay_result_free(jobs[j].result);
    for (unsigned i = 0; i < n; i++)
        unc_sample_clear(&s[i]);
    g_free(jobs);
    g_free(s);
    meas_free(set);
    return ok;
}
