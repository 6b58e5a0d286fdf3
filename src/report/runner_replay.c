/* Sweep runner "replay": one workload replayed on a booted machine
 * (replay/replay.h) under one layout and, with the same parameters, under
 * the baseline layout 3g1g, so that the row carries the overhead
 *
 *     overhead_pct = 100 x (cycles_layout - cycles_3g1g) / cycles_3g1g
 *
 * (wall-clock time on one CPU: the replay's simulated cycles). A 3g1g
 * point is its own baseline: it replays once and its overhead is 0.
 *
 * A workload is a vmsplit trace file, or "gen:NAME" (replay/gen.h): the
 * generator writes a private temporary trace for the point with the
 * point's count, seed and rate, and the file is removed afterwards. The
 * rate is a target the workload reaches, as `vmsplit gen --rate` makes it
 * (replay/gen_rate.h): replayed on the point's CPU under 3g1g with the
 * point's entry and paging mode (a legacy point's rate is solved under
 * legacy 3g1g: the same user work is not the same rate in both modes), it
 * makes that many syscalls per simulated second, kernel time included.
 * base_syscalls_per_sec is what the 3g1g replay reached
 * (within 0.5 % of the target), syscalls_per_sec what the point's layout
 * reached with the same user work (lower: its syscalls cost more).
 * count, seed and rate mean nothing for a trace file; they still appear
 * in its rows.
 *
 * Nothing is cached across points: run_point may run on several threads
 * at once, and everything it uses (preset, TLB config, trace, replays) is
 * its own. The replay engine and the generators are deterministic, so a
 * point gives the same row on every run and for every -j. */
#include "preset/preset.h"
#include "kernel_model/layout.h"
#include "replay/gen.h"
#include "replay/gen_rate.h"
#include "replay/replay.h"
#include "replay/trace.h"
#include "report/csv.h"
#include "report/sweep_runner.h"
#include "tlb/hierarchy.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#define GEN_PREFIX "gen:"
#define BASELINE_LAYOUT "3g1g"  /* the classic split every overhead is against */

static bool check_workload(const char *value, GError **err)
{
    if (g_str_has_prefix(value, GEN_PREFIX)) {
        if (gen_find(value + strlen(GEN_PREFIX)))
            return true;
        GString *known = g_string_new(NULL);
        for (const Generator *const *g = gen_registry; *g; g++)
            g_string_append_printf(known, "%s" GEN_PREFIX "%s", known->len ? ", " : "",
                                   (*g)->name);
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "unknown generator '%s' (expected a trace file or one of: %s)",
                    value + strlen(GEN_PREFIX), known->str);
        g_string_free(known, TRUE);
        return false;
    }
    if (!g_file_test(value, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO,
                    "%s: no such trace file (expected a vmsplit trace or gen:NAME)", value);
        return false;
    }
    /* The version line and header now, rather than after other points ran. */
    TraceReader *r = trace_reader_open(value, err);
    trace_reader_close(r);
    return r != NULL;
}

static bool check_count(const char *value, GError **err)
{
    if (g_ascii_strtoull(value, NULL, 10) == 0) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "a generated workload needs at least 1 syscall");
        return false;
    }
    return true;
}

static const SweepParam params[] = {
    {"workloads", "workload", SWEEP_PARAM_NAME, 0, NULL,
     "vmsplit traces, or gen:NAME (null, pipe, fileio, db, net, compute; see "
     "'vmsplit gen --help')", check_workload},
    {"cpu", "cpu", SWEEP_PARAM_NAME, 0, "p4-northwood", "CPU presets (names or .ini files)",
     sweep_check_preset},
    {"layouts", "layout", SWEEP_PARAM_NAME, 0, "4g4g",
     "layouts, each against 3g1g (3g1g, 2g2g, 1g3g, 4g4g, kpti, kpti-pcid)", sweep_check_layout},
    {"entry", "entry", SWEEP_PARAM_NAME, 0, "int80",
     "kernel entry: int80 (int 0x80) or sysenter", sweep_check_entry},
    {"ram", "ram_mib", SWEEP_PARAM_SIZE, 1u << 20, "4G",
     "installed RAM, 32M to 64G (stored in MiB)", sweep_check_ram},
    {"dtlb-entries", "dtlb_entries", SWEEP_PARAM_UINT, 0, "0",
     "entries of the 4 KiB DTLB (0: the preset's)", NULL},
    {"itlb-entries", "itlb_entries", SWEEP_PARAM_UINT, 0, "0",
     "entries of the 4 KiB ITLB (0: the preset's)", NULL},
    {"count", "count", SWEEP_PARAM_UINT, 0, "2000",
     "gen: syscalls of the measured loop (ignored for trace files)", check_count},
    {"seed", "seed", SWEEP_PARAM_UINT, 0, "1",
     "gen: seed of the generator (ignored for trace files)", NULL},
    {"rate", "rate", SWEEP_PARAM_UINT, 0, "0",
     "gen: target syscalls per simulated second, reached under 3g1g on the point's "
     "CPU and entry (0: the generator's default user work; ignored for trace files)", NULL},
    {"paging", "paging", SWEEP_PARAM_NAME, 0, "pae",
     "page tables of the layout and its 3g1g baseline: pae or legacy (4 GiB of RAM at most)",
     sweep_check_paging},
};
enum { P_WORKLOAD, P_CPU, P_LAYOUT, P_ENTRY, P_RAM, P_DENT, P_IENT, P_COUNT, P_SEED, P_RATE,
       P_PAGING };

/* Figures of the layout's replay unless the name says base_ (the 3g1g
 * replay of the same workload). */
static const char *const figures[] = {
    "syscalls_per_sec", "base_syscalls_per_sec", "overhead_pct", "extra_ns_per_syscall",
    "cycles", "base_cycles", "seconds", "base_seconds",
    "syscalls", "switches", "user_insns",
    "user_cycles", "syscall_cycles", "switch_cycles",
    "cr3_writes", "cr3_cycles", "tlb_flushes", "tlb_dropped",
    "walks", "walk_cycles", "base_walks", "dtlb_misses", "itlb_misses",
    "kmaps", "copied", "lowmem_free_kb", "lowmem_peak_kb", "lowmem_exhausted",
};

static uint64_t num(const SweepPoint *pt, int i)
{
    return g_ascii_strtoull(pt->values[i], NULL, 10);
}

/* As `vmsplit tlbsim --X-entries`: the preset's ways, except that a fully
 * associative array stays fully associative at its new size. */
static void override(TlbGeom *g, uint64_t entries)
{
    if (entries == 0)
        return;
    if (g->entries == g->ways)
        g->ways = (unsigned)entries;
    g->entries = (unsigned)entries;
    if (!g->page_sizes)
        g->page_sizes = PRESET_PG_4K;
}

/* A private trace for a gen: point; the caller removes and frees it. */
static char *gen_trace(const Preset *p, PagingMode paging, const SweepPoint *pt, GError **err)
{
    const Generator *g = gen_find(pt->values[P_WORKLOAD] + strlen(GEN_PREFIX));
    g_assert(g);  /* check_workload let it in */
    GenOptions o;
    gen_options_init(&o);
    o.count = num(pt, P_COUNT);
    o.seed = num(pt, P_SEED);
    if (num(pt, P_RATE) > 0) {
        GenRateTarget t = { .rate = (double)num(pt, P_RATE), .preset = p,
                            .sysenter = !strcmp(pt->values[P_ENTRY], "sysenter"),
                            .paging = paging };
        GenRateResult res;
        if (!gen_rate_solve(g, &o, &t, &res, err))
            return NULL;
        o.have_user_insns = true;
        o.user_insns = res.user_insns;
    }
    char *path = NULL;
    int fd = g_file_open_tmp("vmsplit-sweep-XXXXXX", &path, err);
    if (fd < 0)
        return NULL;
    close(fd);
    if (!gen_write(g, &o, path, err)) {
        g_remove(path);
        g_free(path);
        return NULL;
    }
    return path;
}

static uint64_t tlb_stat(const ReplayResult *r, const char *name)
{
    uint64_t v = 0;
    bool found = tlb_stats_get(replay_tlb(r), name, &v);
    g_assert(found);
    return v;
}

static void fill_figures(const ReplayResult *r, const ReplayResult *base, char **out)
{
    const ReplayTotals *t = replay_totals(r), *b = replay_totals(base);
    double secs = replay_seconds(r);
    double extra = (double)t->cycles - (double)b->cycles;
    double mhz = replay_config(r)->preset->clock_mhz;
    size_t i = 0;
    out[i++] = sweep_format_double(secs > 0 ? (double)t->syscalls / secs : 0.0, 2);
    double bsecs = replay_seconds(base);
    out[i++] = sweep_format_double(bsecs > 0 ? (double)b->syscalls / bsecs : 0.0, 2);
    out[i++] = sweep_format_double(b->cycles ? 100.0 * extra / (double)b->cycles : 0.0, 4);
    out[i++] = sweep_format_double(t->syscalls ? extra / (double)t->syscalls / mhz * 1e3 : 0.0, 1);
    out[i++] = sweep_format_uint(t->cycles);
    out[i++] = sweep_format_uint(b->cycles);
    out[i++] = sweep_format_double(secs, 9);
    out[i++] = sweep_format_double(replay_seconds(base), 9);
    out[i++] = sweep_format_uint(t->syscalls);
    out[i++] = sweep_format_uint(t->switches);
    out[i++] = sweep_format_uint(t->user_insns);
    out[i++] = sweep_format_uint(t->user_cycles);
    out[i++] = sweep_format_uint(t->syscall_cycles);
    out[i++] = sweep_format_uint(t->switch_cycles);
    out[i++] = sweep_format_uint(t->cr3_writes);
    out[i++] = sweep_format_uint(t->cr3_cycles);
    out[i++] = sweep_format_uint(tlb_stat(r, "flushes_cr3") + tlb_stat(r, "flushes_invlpg") +
                                 tlb_stat(r, "flushes_pcid") + tlb_stat(r, "flushes_pge"));
    out[i++] = sweep_format_uint(tlb_stat(r, "dropped_cr3") + tlb_stat(r, "dropped_invlpg") +
                                 tlb_stat(r, "dropped_pcid") + tlb_stat(r, "dropped_pge"));
    out[i++] = sweep_format_uint(t->walks);
    out[i++] = sweep_format_uint(t->walk_cycles);
    out[i++] = sweep_format_uint(b->walks);
    out[i++] = sweep_format_uint(tlb_stat(r, "misses_read") + tlb_stat(r, "misses_write"));
    out[i++] = sweep_format_uint(tlb_stat(r, "misses_fetch"));
    out[i++] = sweep_format_uint(t->kmaps);
    out[i++] = sweep_format_uint(t->copied);
    out[i++] = sweep_format_uint(t->lowmem_start_free >> 10);
    out[i++] = sweep_format_uint(t->lowmem_peak >> 10);
    out[i++] = sweep_format_uint(t->lowmem_exhausted_at >= 0);
    g_assert(i == G_N_ELEMENTS(figures));
}

static bool run_point(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    (void)ctx;
    const Layout *l = layout_lookup(pt->values[P_LAYOUT], err);
    const PageTableFormat *f = ptformat_find(pt->values[P_PAGING]);
    const Layout *base = layout_with_paging(layout_find(BASELINE_LAYOUT), f->mode);
    if (l && !sweep_check_ram_in_mode(pt->values[P_RAM], f, err))
        return false;
    l = l ? layout_with_paging(l, f->mode) : NULL;
    Preset *p = l ? preset_load(pt->values[P_CPU], err) : NULL;
    if (!p)
        return false;
    TlbHierConfig tc;
    tlb_hier_config_from_preset(&tc, p);
    override(&tc.dtlb_4k, num(pt, P_DENT));
    override(&tc.itlb_4k, num(pt, P_IENT));
    bool gen = g_str_has_prefix(pt->values[P_WORKLOAD], GEN_PREFIX);
    char *tmp = gen ? gen_trace(p, f->mode, pt, err) : NULL;
    ReplayResult *r = NULL, *b = NULL;
    if (!gen || tmp) {
        const char *trace = gen ? tmp : pt->values[P_WORKLOAD];
        ReplayConfig cfg = {
            .preset = p, .layout = l, .ram = num(pt, P_RAM) << 20,
            .sysenter = !strcmp(pt->values[P_ENTRY], "sysenter"),
            .tlb = num(pt, P_DENT) || num(pt, P_IENT) ? &tc : NULL,
        };
        r = replay_run(&cfg, trace, err);
        cfg.layout = base;
        if (r && l != base)
            b = replay_run(&cfg, trace, err);
    }
    bool ok = r && (l == base || b);
    if (ok)
        fill_figures(r, b ? b : r, out);
    else
        g_prefix_error(err, "%s under %s: ", pt->values[P_WORKLOAD],
                       r ? BASELINE_LAYOUT : pt->values[P_LAYOUT]);
    replay_result_free(b);
    replay_result_free(r);
    if (tmp) {
        g_remove(tmp);
        g_free(tmp);
    }
    preset_free(p);
    return ok;
}

const SweepRunner sweep_runner_replay = {
    .kind = "replay",
    .summary = "replay of a trace or generated workload under each layout and under 3g1g, "
               "with the overhead",
    .params = params,
    .n_params = G_N_ELEMENTS(params),
    .figures = figures,
    .n_figures = G_N_ELEMENTS(figures),
    .run_point = run_point,
};
