/* Sweep runner "tlbsim": one replay of a Valgrind Lackey memory trace
 * through the TLBs and caches (replay/tlbsim.h) per point, with the CPU
 * preset, replacement policy, TLB geometry and CR3-flush interval of that
 * point. The same overrides as `vmsplit tlbsim`: an entries value of 0
 * keeps the preset's array; ways 0 keeps the preset's associativity (a
 * fully associative array stays fully associative at its new size).
 *
 * "Misses" below are lookups that needed a page walk (the hierarchy's
 * count: a second-level TLB hit is not a miss). */
#include "preset/preset.h"
#include "replay/tlbsim.h"
#include "report/csv.h"
#include "report/sweep_runner.h"
#include "tlb/hierarchy.h"

#include <string.h>

static bool check_policy(const char *value, GError **err)
{
    static const char *const known[] = {"preset", "lru", "plru", "fifo", "random"};
    for (size_t i = 0; i < G_N_ELEMENTS(known); i++)
        if (!strcmp(value, known[i]))
            return true;
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                "unknown policy '%s' (expected preset, lru, plru, fifo or random)", value);
    return false;
}

static bool check_trace(const char *value, GError **err)
{
    if (!g_file_test(value, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO, "%s: no such trace file", value);
        return false;
    }
    return true;
}

static const SweepParam params[] = {
    {"trace", "trace", SWEEP_PARAM_PATH, 0, NULL,
     "Valgrind Lackey traces (valgrind --tool=lackey --trace-mem=yes; .gz accepted)", check_trace},
    {"cpu", "cpu", SWEEP_PARAM_NAME, 0, "p4-northwood", "CPU presets (names or .ini files)",
     sweep_check_preset},
    {"policy", "policy", SWEEP_PARAM_NAME, 0, "preset",
     "replacement policies: lru, plru, fifo, random, or preset (the preset's)", check_policy},
    {"flush-every", "flush_every", SWEEP_PARAM_UINT, 0, "0",
     "a CR3 write every N references (0: never)", NULL},
    {"max-refs", "max_refs", SWEEP_PARAM_UINT, 0, "0",
     "stop each replay after N references (0: the whole trace)", NULL},
    {"itlb-entries", "itlb_entries", SWEEP_PARAM_UINT, 0, "0",
     "entries of the 4 KiB ITLB (0: the preset's)", NULL},
    {"itlb-ways", "itlb_ways", SWEEP_PARAM_UINT, 0, "0", "ways of the 4 KiB ITLB (0: as the preset)", NULL},
    {"dtlb-ways", "dtlb_ways", SWEEP_PARAM_UINT, 0, "0", "ways of the 4 KiB DTLB (0: as the preset)", NULL},
    {"dtlb-entries", "dtlb_entries", SWEEP_PARAM_UINT, 0, "0",
     "entries of the 4 KiB DTLB (0: the preset's)", NULL},
};
enum { P_TRACE, P_CPU, P_POLICY, P_FLUSH, P_MAXREFS, P_IENT, P_IWAYS, P_DWAYS, P_DENT };

static const char *const figures[] = {
#define X(name, desc) #name,
    TLBSIM_COUNTERS(X)
#undef X
    "dtlb_lookups", "dtlb_misses", "dtlb_miss_pct",
    "itlb_lookups", "itlb_misses", "itlb_miss_pct",
    "cycles_per_ref",
};

static uint64_t num(const SweepPoint *pt, int i)
{
    return g_ascii_strtoull(pt->values[i], NULL, 10);
}

/* As `vmsplit tlbsim --X-entries/--X-ways`. */
static void override(TlbGeom *g, uint64_t entries, uint64_t ways)
{
    if (entries > 0) {
        if (g->entries == g->ways)
            g->ways = (unsigned)entries;
        g->entries = (unsigned)entries;
        if (!g->page_sizes)
            g->page_sizes = PRESET_PG_4K;
    }
    if (ways > 0)
        g->ways = (unsigned)ways;
}

static uint64_t stat(const TlbStats *s, const char *name)
{
    uint64_t v = 0;
    bool found = tlb_stats_get(s, name, &v);
    g_assert(found);
    return v;
}

static char *pct(uint64_t part, uint64_t whole)
{
    return sweep_format_double(whole ? 100.0 * (double)part / (double)whole : 0.0, 4);
}

static void fill_figures(TlbSim *s, char **out)
{
    const TlbSimCounters *c = tlbsim_counters(s);
    size_t i = 0;
    for (; i < tlbsim_counter_count(); i++)
        out[i] = sweep_format_uint(tlbsim_counter_value(c, i));
    const TlbStats *ts = tlb_hier_stats(mmu_tlb(tlbsim_mmu(s)));
    uint64_t dl = stat(ts, "lookups_read") + stat(ts, "lookups_write");
    uint64_t dm = stat(ts, "misses_read") + stat(ts, "misses_write");
    uint64_t il = stat(ts, "lookups_fetch"), im = stat(ts, "misses_fetch");
    out[i++] = sweep_format_uint(dl);
    out[i++] = sweep_format_uint(dm);
    out[i++] = pct(dm, dl);
    out[i++] = sweep_format_uint(il);
    out[i++] = sweep_format_uint(im);
    out[i++] = pct(im, il);
    out[i++] = sweep_format_double(c->refs ? (double)c->cycles / (double)c->refs : 0.0, 4);
    g_assert(i == G_N_ELEMENTS(figures));
}

static bool run_point(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    (void)ctx;
    Preset *p = preset_load(pt->values[P_CPU], err);
    if (!p)
        return false;
    TlbHierConfig tc;
    tlb_hier_config_from_preset(&tc, p);
    override(&tc.dtlb_4k, num(pt, P_DENT), num(pt, P_DWAYS));
    override(&tc.itlb_4k, num(pt, P_IENT), num(pt, P_IWAYS));
    if (strcmp(pt->values[P_POLICY], "preset"))
        tc.policy = pt->values[P_POLICY];
    TlbSimConfig cfg = {
        .trace = pt->values[P_TRACE], .preset = p, .tlb = &tc,
        .flush_every = num(pt, P_FLUSH), .seed = 1, .max_refs = num(pt, P_MAXREFS),
    };
    TlbSim *s = tlbsim_run(&cfg, err);
    bool ok = s != NULL;
    if (ok)
        fill_figures(s, out);
    tlbsim_free(s);
    preset_free(p);
    return ok;
}

const SweepRunner sweep_runner_tlbsim = {
    .kind = "tlbsim",
    .summary = "TLB/cache replay of Lackey traces for each trace x cpu x policy x TLB geometry",
    .params = params,
    .n_params = G_N_ELEMENTS(params),
    .figures = figures,
    .n_figures = G_N_ELEMENTS(figures),
    .run_point = run_point,
};
