/* vmsplit claim: see claim.h. */
#include "report/claim_priv.h"

#include "config.h"
#include "preset/preset.h"
#include "kernel_model/measure.h"
#include "kernel_model/profiles.h"
#include "replay/gen.h"
#include "replay/gen_rate.h"
#include "replay/replay.h"
#include "report/plot.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define GiB (1ULL << 30)

/* ---- replays, in parallel ---- */

bool claim_run_jobs(ReplayJob *jobs, size_t n, int par, GError **err)
{
    replay_run_jobs(jobs, n, (unsigned)par);
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].err) {
            if (ok)
                g_propagate_prefixed_error(err, jobs[i].err, "%s (%s): ", jobs[i].trace,
                                           jobs[i].cfg.layout->name);
            else
                g_clear_error(&jobs[i].err);
            ok = false;
        }
    return ok;
}

static char *gen_trace(Claim *c, const char *name, uint64_t count, double rate, GError **err)
{
    const Generator *g = gen_find(name);
    g_assert(g);
    GenOptions o;
    gen_options_init(&o);
    o.count = count;
    if (rate > 0) {
        /* A realised rate (gen_rate.h): the workload reaches `rate`
         * syscalls per simulated second under 3g1g on this preset. */
        GenRateTarget t = { .rate = rate, .preset = c->p4,
                            .paging = (PagingMode)c->cfg->paging };
        GenRateResult res;
        if (!gen_rate_solve(g, &o, &t, &res, err))
            return NULL;
        o.have_user_insns = true;
        o.user_insns = res.user_insns;
    }
    char *file = rate > 0 ? g_strdup_printf("%s-%.0f.vmt", name, rate) : g_strdup_printf("%s.vmt", name);
    char *path = g_build_filename(c->tracedir, file, NULL);
    g_free(file);
    if (!gen_write(g, &o, path, err)) {
        g_free(path);
        return NULL;
    }
    return path;
}

/* The source tree's copy, else the installed one. */
static char *bundled_capture(const char *name)
{
    char *p = g_build_filename(VMSPLIT_SOURCE_DIR, "workloads", "captures", name, NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
        return p;
    g_free(p);
    return g_build_filename(VMSPLIT_DATADIR, "captures", name, NULL);
}

static bool run_workloads(Claim *c, GError **err)
{
    /* The typical workloads are the real programs captured with their own
     * references and page faults (workloads/captures, issue 18); the
     * generators are the microbenchmarks (null, pipe, fileio) and the
     * synthetic imitations of typical programs (db, net, compute: user
     * work that is a loop, shown for comparison, in no verdict). */
    static const struct { const char *name; bool typical, micro; } gens[] = {
        { "null", false, true }, { "pipe", false, true }, { "fileio", false, true },
        { "db", false, false }, { "net", false, false }, { "compute", false, false },
    };
    static const char *traces_full[] = { "sqlite.vmt.gz", "http.vmt.gz", "cc.vmt.gz",
                                         "gzip.vmt.gz", "pipeline.vmt.gz", "perl.vmt.gz" };
    static const char *traces_quick[] = { "gzip.vmt.gz", "perl.vmt.gz" };
    uint64_t count = c->cfg->quick ? 300 : 5000;
    for (size_t i = 0; i < G_N_ELEMENTS(gens); i++) {
        Workload *w = g_new0(Workload, 1);
        w->name = gens[i].name;
        w->typical = gens[i].typical;
        w->micro = gens[i].micro;
        /* compute spends ~350 000 instructions per syscall: fewer calls. */
        uint64_t n = strcmp(gens[i].name, "compute") ? count : count / 10;
        if (!(w->trace = gen_trace(c, gens[i].name, n, 0, err))) {
            g_free(w);
            return false;
        }
        g_ptr_array_add(c->wl, w);
    }
    const char **tr = c->cfg->quick ? traces_quick : traces_full;
    size_t ntr = c->cfg->quick ? G_N_ELEMENTS(traces_quick) : G_N_ELEMENTS(traces_full);
    for (size_t i = 0; i < ntr; i++) {
        Workload *w = g_new0(Workload, 1);
        w->name = tr[i];
        w->trace = bundled_capture(tr[i]);
        w->typical = true;           /* real programs */
        g_ptr_array_add(c->wl, w);
    }
    size_t n = c->wl->len * 2;
    ReplayJob *jobs = g_new0(ReplayJob, n);
    for (guint i = 0; i < c->wl->len; i++) {
        Workload *w = g_ptr_array_index(c->wl, i);
        for (int l = 0; l < 2; l++) {
            ReplayJob *j = &jobs[2 * i + l];
            j->cfg = (ReplayConfig){ .preset = c->p4,
                                     .layout = layout_with_paging(layout_find(l ? "4g4g" : "3g1g"),
                                                                  (PagingMode)c->cfg->paging),
                                     .ram = 4 * GiB };
            j->trace = w->trace;
        }
    }
    bool ok = claim_run_jobs(jobs, n, c->cfg->jobs, err);
    for (guint i = 0; i < c->wl->len; i++) {
        Workload *w = g_ptr_array_index(c->wl, i);
        w->r[0] = jobs[2 * i].result;      /* freed with the workload, */
        w->r[1] = jobs[2 * i + 1].result;  /* also after an error */
    }
    g_free(jobs);
    return ok;
}

double claim_overhead(const Workload *w)
{
    double a = (double)replay_totals(w->r[0])->cycles, b = (double)replay_totals(w->r[1])->cycles;
    return 100.0 * (b - a) / a;
}

double claim_rate_of(const ReplayResult *r)
{
    return replay_totals(r)->syscalls / replay_seconds(r);
}

/* ---- section 1: the table ---- */

static void print_table(Claim *c, FILE *out, FILE *csv)
{
    fprintf(out, "1. Workloads on %s (%.0f MHz), 4 GiB RAM: 3G/1G against 4G/4G\n\n", c->p4->name,
            c->p4->clock_mhz);
    fprintf(out, "%-14s %10s %11s %11s %9s   %s\n", "workload", "syscalls/s", "3g1g ms", "4g4g ms",
            "overhead", "two biggest contributors to the extra time");
    /* Whose rate is whose: base_syscalls_per_sec is the workload's own
     * rate under 3g1g, syscalls_per_sec the 4g4g row's (as in a sweep). */
    fprintf(csv, "workload,layout,cpu,base_syscalls_per_sec,syscalls_per_sec,overhead_pct,seconds\n");
    for (guint i = 0; i < c->wl->len; i++) {
        Workload *w = g_ptr_array_index(c->wl, i);
        double a[REPLAY_NPARTS], b[REPLAY_NPARTS], d[REPLAY_NPARTS];
        replay_breakdown(w->r[0], a);
        replay_breakdown(w->r[1], b);
        int best = 0, second = 1;
        for (int p = 0; p < REPLAY_NPARTS; p++)
            d[p] = b[p] - a[p];
        if (d[second] > d[best])
            best = 1, second = 0;
        for (int p = 2; p < REPLAY_NPARTS; p++) {
            if (d[p] > d[best]) {
                second = best;
                best = p;
            } else if (d[p] > d[second]) {
                second = p;
            }
        }
        double extra = (double)replay_totals(w->r[1])->cycles - (double)replay_totals(w->r[0])->cycles;
        fprintf(out, "%-14s %10.0f %11.3f %11.3f %+8.2f%%   %s %.0f%%, %s %.0f%%\n", w->name,
                claim_rate_of(w->r[0]), replay_seconds(w->r[0]) * 1e3, replay_seconds(w->r[1]) * 1e3,
                claim_overhead(w), replay_part_names[best], extra > 0 ? 100 * d[best] / extra : 0,
                replay_part_names[second], extra > 0 ? 100 * d[second] / extra : 0);
        /* The 4g4g row at the baseline's syscall rate (baseline rows, all
         * 0 %, are left out: docs/sweep.md). */
        fprintf(csv, "%s,4g4g,%s,%.1f,%.1f,%.4f,%.6f\n", w->name, c->p4->name,
                claim_rate_of(w->r[0]), claim_rate_of(w->r[1]), claim_overhead(w),
                replay_seconds(w->r[1]));
        JsonBuilder *j = c->json;
        json_builder_begin_object(j);
        json_builder_set_member_name(j, "workload");
        json_builder_add_string_value(j, w->name);
        json_builder_set_member_name(j, "kind");
        json_builder_add_string_value(j, w->typical ? "typical" : w->micro ? "micro" : "synthetic");
        json_builder_set_member_name(j, "base_syscalls_per_sec");
        json_builder_add_double_value(j, claim_rate_of(w->r[0]));
        json_builder_set_member_name(j, "base_ms");
        json_builder_add_double_value(j, replay_seconds(w->r[0]) * 1e3);
        json_builder_set_member_name(j, "ms_4g4g");
        json_builder_add_double_value(j, replay_seconds(w->r[1]) * 1e3);
        json_builder_set_member_name(j, "overhead_pct");
        json_builder_add_double_value(j, claim_overhead(w));
        json_builder_set_member_name(j, "extra_cycles_by_part");
        json_builder_begin_object(j);
        for (int p = 0; p < REPLAY_NPARTS; p++) {
            json_builder_set_member_name(j, replay_part_names[p]);
            json_builder_add_double_value(j, d[p]);
        }
        json_builder_end_object(j);
        json_builder_end_object(j);
    }
    fprintf(out, "\n");
}

/* ---- section 3: latency and lowmem CSVs, plots ---- */

static bool latency_csv(Claim *c, FILE *csv, GError **err)
{
    static const struct { const char *name; uint32_t in, out; } calls[] = {
        { "getppid", 0, 0 }, { "read", 0, 4096 }, { "write", 4096, 0 }, { "open", 0, 0 },
    };
    ProfileTable *t = profiles_load(NULL, err);
    if (!t)
        return false;
    fprintf(csv, "syscall,layout,calls,latency_ns,base_ns,cr3_ns,refill_ns,uaccess_ns,body_ns\n");
    unsigned n = c->cfg->quick ? 20 : 200;
    bool ok = true;
    for (size_t i = 0; ok && i < G_N_ELEMENTS(calls); i++)
        for (int l = 0; ok && l < 2; l++) {
            MachineConfig mc = { .preset = c->p4,
                                 .layout = layout_with_paging(layout_find(l ? "4g4g" : "3g1g"),
                                                              (PagingMode)c->cfg->paging),
                                 .ram = 4 * GiB };
            const SyscallProfile *p = profiles_find(t, calls[i].name, NULL);
            SyscallCall call = { .profile = p, .bytes_in = calls[i].in ? calls[i].in : (p->copy_in == COPY_ARG ? 0 : p->copy_in),
                                 .bytes_out = calls[i].out ? calls[i].out : (p->copy_out == COPY_ARG ? 0 : p->copy_out),
                                 .user_buf = 0x10000000, .switch_to = -1 };
            SyscallCost s = { 0 };
            if (!(ok = measure_repeat(&mc, &call, 5, n, &s, err)))
                break;
            double k = 1000.0 / c->p4->clock_mhz / n;   /* cycles -> ns, per call */
            fprintf(csv, "%s,%s,%u,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n", calls[i].name, l ? "4g4g" : "3g1g", n,
                    s.cycles * k, s.base * k, s.cr3 * k, s.walks * k, s.uaccess * k, s.body * k);
        }
    profiles_free(t);
    return ok;
}

static bool lowmem_csv(FILE *csv, GError **err)
{
    static const char *layouts[] = { "3g1g", "2g2g", "4g4g" };
    static const unsigned gib[] = { 1, 2, 4, 8, 16, 32, 48, 64 };
    fprintf(csv, "layout,ram_mib,low_total_kb,mem_map_kb,boots,min_free_boot_kb\n");
    for (size_t l = 0; l < G_N_ELEMENTS(layouts); l++)
        for (size_t i = 0; i < G_N_ELEMENTS(gib); i++) {
            LowmemReport r;
            if (!claim_lowmem_of(layouts[l], gib[i] * GiB, &r, err))
                return false;
            fprintf(csv, "%s,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%" G_GUINT64_FORMAT "\n",
                    layouts[l], gib[i] * 1024, r.low_total_kb, r.mem_map_bytes >> 10, r.boots,
                    r.min_free_boot_bytes >> 10);
        }
    return true;
}

static FILE *open_csv(Claim *c, const char *name, GError **err)
{
    char *p = g_build_filename(c->cfg->outdir, name, NULL);
    FILE *f = fopen(p, "w");
    if (!f)
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: cannot write: %s", p, g_strerror(errno));
    g_free(p);
    return f;
}

/* title NULL: the script's. */
static bool plot(Claim *c, FILE *out, const char *csv, const char *kind, const char *png,
                 const char *title, GError **err)
{
    char *in = g_build_filename(c->cfg->outdir, csv, NULL);
    char *o = g_build_filename(c->cfg->outdir, png, NULL);
    PlotOptions po = { .kind = kind, .title = title };
    bool ok = plot_csv(in, o, &po, err);
    if (ok)
        fprintf(out, "  %s\n", o);
    g_free(in);
    g_free(o);
    return ok;
}

bool claim_run(const ClaimConfig *cfg, FILE *out, GError **err)
{
    Claim c = { .cfg = cfg };
    bool ok = false;
    FILE *f = NULL;
    c.wl = g_ptr_array_new();
    if (g_mkdir_with_parents(cfg->outdir, 0755) != 0) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: cannot create: %s", cfg->outdir,
                    g_strerror(errno));
        goto out;
    }
    c.tracedir = g_build_filename(cfg->outdir, "traces", NULL);
    g_mkdir_with_parents(c.tracedir, 0755);
    if (!(c.p4 = preset_load("p4-northwood", err)) || !(c.skylake = preset_load("skylake", err)))
        goto out;
    fprintf(out, "vmsplit claim%s%s: the 2003 seeds' figures against the model\n\n",
            cfg->quick ? " --quick (a reduced set)" : "",
            cfg->paging == PAGING_LEGACY ? " --paging legacy (the workloads, the statements "
                                           "drawn from them and the per-syscall plot on "
                                           "non-PAE page tables)" : "");
    c.json = json_builder_new();
    c.statements_csv = g_string_new(NULL);
    json_builder_begin_object(c.json);
    json_builder_set_member_name(c.json, "quick");
    json_builder_add_boolean_value(c.json, cfg->quick);
    json_builder_set_member_name(c.json, "cpu");
    json_builder_add_string_value(c.json, c.p4->name);
    json_builder_set_member_name(c.json, "clock_mhz");
    json_builder_add_double_value(c.json, c.p4->clock_mhz);
    json_builder_set_member_name(c.json, "uncertainty_points");
    json_builder_add_int_value(c.json, cfg->uncertainty);
    json_builder_set_member_name(c.json, "paging");
    json_builder_add_string_value(c.json, ptformat_get((PagingMode)cfg->paging)->name);
    if (!run_workloads(&c, err) || !(f = open_csv(&c, "overhead.csv", err)))
        goto out;
    json_builder_set_member_name(c.json, "workloads");
    json_builder_begin_array(c.json);
    print_table(&c, out, f);
    json_builder_end_array(c.json);
    fclose(f);
    f = NULL;
    fprintf(out, "2. The seeds' statements\n\n");
    if (cfg->uncertainty > 0 && !claim_uncertainty_run(&c, err))
        goto out;
    if (!(c.kpti_csv = open_csv(&c, "kpti.csv", err)) || !claim_statements_print(&c, out, err))
        goto out;
    if (cfg->uncertainty > 0 && !claim_tornado(&c, out, err))
        goto out;
    fclose(c.kpti_csv);
    c.kpti_csv = NULL;
    if (!(f = open_csv(&c, "latency.csv", err)) || !latency_csv(&c, f, err))
        goto out;
    fclose(f);
    if (!(f = open_csv(&c, "lowmem.csv", err)) || !lowmem_csv(f, err))
        goto out;
    fclose(f);
    f = NULL;
    fprintf(out, "3. Plots (CSVs beside them)\n");
    if (cfg->plots && (!plot(&c, out, "overhead.csv", "overhead", "overhead.png", NULL, err) ||
                       !plot(&c, out, "latency.csv", "latency", "latency.png", NULL, err) ||
                       !plot(&c, out, "lowmem.csv", "lowmem", "lowmem.png", NULL, err) ||
                       !plot(&c, out, "kpti.csv", "kpti", "kpti.png", NULL, err) ||
                       (cfg->uncertainty > 0 &&
                        (!plot(&c, out, "tornado.csv", "tornado", "tornado.png",
                               "What decides the null call's 4G/4G extra", err) ||
                         !plot(&c, out, "tornado-db.csv", "tornado", "tornado-db.png",
                               "What decides the db workload's 4G/4G overhead", err)))))
        goto out;
    if (!cfg->plots)
        fprintf(out, "  (not drawn: --no-plots)\n");
    json_builder_end_object(c.json);
    {
        /* claim.json: what the text says, for a script (cmd_claim --json
         * prints it). */
        JsonGenerator *g = json_generator_new();
        json_generator_set_pretty(g, TRUE);
        JsonNode *root = json_builder_get_root(c.json);
        json_generator_set_root(g, root);
        char *path = g_build_filename(cfg->outdir, "claim.json", NULL);
        ok = json_generator_to_file(g, path, err);
        g_free(path);
        json_node_unref(root);
        g_object_unref(g);
        if (!ok)
            goto out;
        /* statements.csv: the statements' verdicts and intervals, one row
         * each (cmd_claim --csv prints it). */
        path = g_build_filename(cfg->outdir, "statements.csv", NULL);
        ok = g_file_set_contents(path, c.statements_csv->str, (gssize)c.statements_csv->len, err);
        g_free(path);
        if (!ok)
            goto out;
    }
    ok = true;
out:
    if (c.statements_csv)
        g_string_free(c.statements_csv, TRUE);
    if (c.json)
        g_object_unref(c.json);
    if (f)
        fclose(f);
    if (c.kpti_csv)
        fclose(c.kpti_csv);
    for (guint i = 0; i < c.wl->len; i++) {
        Workload *w = g_ptr_array_index(c.wl, i);
        replay_result_free(w->r[0]);
        replay_result_free(w->r[1]);
        g_free(w->trace);
        g_free(w);
    }
    g_ptr_array_free(c.wl, TRUE);
    g_free(c.tracedir);
    preset_free(c.p4);
    preset_free(c.skylake);
    return ok;
}
