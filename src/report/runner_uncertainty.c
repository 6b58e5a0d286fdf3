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
 * once get the same preset and keep the first).
 *
 * Sweep runner "uncertainty-replay" (this file too, it shares the cache):
 * one trace replayed under one layout at one point of the same design;
 * `vmsplit compare --uncertainty N` runs it over its layouts and N samples
 * and takes each compared figure's interval from the rows. Figures: the
 * totals the compare prints (cycles, simulated seconds, syscalls, the
 * cycles of every syscall), the cycles of each part of the breakdown
 * (replay_breakdown), and each syscall's mean cycles as one text cell
 * ("read=1234.5;write=..."). */
#include "calib/uncertainty.h"
#include "kernel_model/layout.h"
#include "kernel_model/ptformat.h"
#include "replay/replay.h"
#include "replay/trace.h"
#include "report/csv.h"
#include "report/sweep_runner.h"

#include <string.h>

/* Whether a trace opens (its version line and header), now rather than
 * after other points ran. */
static bool trace_readable(const char *value, const char *expected, GError **err)
{
    TraceReader *r = trace_reader_open(value, err);
    trace_reader_close(r);
    if (!r)
        g_prefix_error(err, "%s: ", expected);
    return r != NULL;
}

static bool check_workload(const char *value, GError **err)
{
    return !strcmp(value, "none") ||
           trace_readable(value, "expected 'none' or a vmsplit trace", err);
}

static const SweepParam params[] = {
    {"cpu", "cpu", SWEEP_PARAM_NAME, 0, "p4-northwood", "CPU preset whose ranges are sampled",
     sweep_check_preset},
    {"seed", "seed", SWEEP_PARAM_UINT, 0, "1", "seed of the design's digit scrambling", NULL},
    {"sample", "sample", SWEEP_PARAM_UINT, 0, NULL,
     "design points, e.g. 0,1,2,...,63 (each a calibration and executed runs)", NULL},
    {"workloads", "workload", SWEEP_PARAM_NAME, 0, "none",
     "vmsplit traces replayed under 3g1g and 4g4g at each point, or none", check_workload},
    {"paging", "paging", SWEEP_PARAM_NAME, 0, "pae",
     "paging mode of the workloads' replays: pae or legacy (the null-call figures name theirs)",
     sweep_check_paging},
};

enum { P_CPU, P_SEED, P_SAMPLE, P_WORKLOAD, P_PAGING };

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
        (!none && !unc_overhead(s->preset, pt->values[P_WORKLOAD],
                                ptformat_find(pt->values[P_PAGING])->mode, &pct, err)))
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

/* ---- uncertainty-replay ---------------------------------------------------- */

static bool check_trace(const char *value, GError **err)
{
    if (!strcmp(value, "none")) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "workload 'none': expected a vmsplit trace to replay");
        return false;
    }
    return trace_readable(value, "expected a vmsplit trace", err);
}

/* The sample's key columns come first, in the order of the
 * "uncertainty" runner, so that sample_of finds them at the same places. */
static const SweepParam replay_params[] = {
    {"cpu", "cpu", SWEEP_PARAM_NAME, 0, "p4-northwood", "CPU preset whose ranges are sampled",
     sweep_check_preset},
    {"seed", "seed", SWEEP_PARAM_UINT, 0, "1", "seed of the design's digit scrambling", NULL},
    {"sample", "sample", SWEEP_PARAM_UINT, 0, NULL,
     "design points, e.g. 0,1,2,...,63 (each a calibration and executed runs)", NULL},
    {"workloads", "workload", SWEEP_PARAM_NAME, 0, NULL, "vmsplit traces", check_trace},
    {"entry", "entry", SWEEP_PARAM_NAME, 0, "int80", "kernel entry: int80 or sysenter",
     sweep_check_entry},
    {"ram", "ram_mib", SWEEP_PARAM_SIZE, 1u << 20, "4G", "installed RAM, 32M to 64G (MiB)",
     sweep_check_ram},
    {"layouts", "layout", SWEEP_PARAM_NAME, 0, "3g1g,4g4g", "layouts (3g1g, 4g4g, kpti...)",
     sweep_check_layout},
    {"paging", "paging", SWEEP_PARAM_NAME, 0, "pae", "paging mode of every layout: pae or legacy",
     sweep_check_paging},
};

enum { R_ENTRY = 4, R_RAM, R_LAYOUT, R_PAGING };

/* The breakdown's parts (replay_part_names, in its order), as columns. */
static const char *const replay_figures[] = {
    "accepted", "cycles", "seconds", "syscalls", "syscall_cycles",
    "part_syscall_entry_exit_cycles", "part_syscall_cr3_writes_cycles",
    "part_syscall_tlb_refills_cycles", "part_syscall_uaccess_cycles",
    "part_syscall_body_cycles", "part_user_work_cycles", "part_context_switches_cycles",
    "part_user_work_refills_cycles", "part_page_faults_cycles",
    "syscall_mean_cycles", "values",
};
G_STATIC_ASSERT(G_N_ELEMENTS(replay_figures) == 7 + REPLAY_NPARTS);

static bool run_replay_point(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    const UncSample *s = sample_of(ctx, pt, err);
    if (!s)
        return false;
    const PageTableFormat *f = ptformat_find(pt->values[R_PAGING]);
    if (!sweep_check_ram_in_mode(pt->values[R_RAM], f, err))
        return false;
    uint64_t ram = g_ascii_strtoull(pt->values[R_RAM], NULL, 10) << 20;
    ReplayConfig cfg = { .preset = s->preset,
                         .layout = layout_with_paging(layout_find(pt->values[R_LAYOUT]), f->mode),
                         .ram = ram,
                         .sysenter = !strcmp(pt->values[R_ENTRY], "sysenter") };
    ReplayResult *r = replay_run(&cfg, pt->values[P_WORKLOAD], err);
    if (!r)
        return false;
    const ReplayTotals *t = replay_totals(r);
    unsigned i = 0;
    out[i++] = sweep_format_uint(s->accepted);
    out[i++] = sweep_format_uint(t->cycles);
    out[i++] = sweep_format_double(replay_seconds(r), 9);
    out[i++] = sweep_format_uint(t->syscalls);
    out[i++] = sweep_format_uint(t->syscall_cycles);
    double v[REPLAY_NPARTS];
    replay_breakdown(r, v);
    for (int p = 0; p < REPLAY_NPARTS; p++)
        out[i++] = sweep_format_double(v[p], 0);
    GString *m = g_string_new(NULL);
    for (guint k = 0; k < replay_nsyscalls(r); k++) {
        const ReplaySyscall *sc = replay_syscall(r, k);
        char *c = sweep_format_double(sc->hist.n ? (double)sc->sum.cycles / sc->hist.n : 0, 1);
        g_string_append_printf(m, "%s%s=%s", m->len ? ";" : "", sc->name, c);
        g_free(c);
    }
    out[i++] = g_string_free(m, FALSE);
    out[i++] = g_strdup(s->values);
    g_assert(i == G_N_ELEMENTS(replay_figures));
    replay_result_free(r);
    return true;
}

const SweepRunner sweep_runner_uncertainty_replay = {
    .kind = "uncertainty-replay",
    .summary = "one point of the uncertainty design: a trace replayed under one layout (what "
               "vmsplit compare --uncertainty takes its intervals from)",
    .params = replay_params,
    .n_params = G_N_ELEMENTS(replay_params),
    .figures = replay_figures,
    .n_figures = G_N_ELEMENTS(replay_figures),
    .prepare = prepare,
    .finish = finish,
    .run_point = run_replay_point,
};

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
