/* vmsplit replay and vmsplit compare: a trace through one layout, or
 * through several side by side (src/replay/replay.h). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/commands/cmd_compare.h"
#include "cpu/nasm.h"
#include "preset/preset.h"
#include "replay/replay.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char *cpu, *layout, *ram, *profiles, *fault_profiles, *stubs, *struct_page, *jobs, *paging;
    char *uncertainty, *uncertainty_csv;     /* compare only (cmd_compare.h) */
    gboolean sysenter, json, csv, no_progress, no_ffwd;
} Opts;

static GOptionEntry *common_entries(Opts *o, bool compare)
{
    GOptionEntry e[] = {
        { "cpu", 'c', 0, G_OPTION_ARG_STRING, &o->cpu, "CPU preset name or .ini file (default " PRESET_DEFAULT ")", "P" },
        { compare ? "layouts" : "layout", 'l', 0, G_OPTION_ARG_STRING, &o->layout,
          compare ? "layouts to compare, the first is the baseline (default 3g1g,4g4g)" : "address-space layout (default 3g1g)",
          compare ? "L,..." : "L" },
        { "ram", 0, 0, G_OPTION_ARG_STRING, &o->ram, "installed RAM (default 4G)", "SIZE" },
        { "paging", 0, 0, G_OPTION_ARG_STRING, &o->paging, CLI_PAGING_HELP, "MODE" },
        { "sysenter", 0, 0, G_OPTION_ARG_NONE, &o->sysenter, "enter the kernel with sysenter instead of int 0x80", NULL },
        { "profiles", 0, 0, G_OPTION_ARG_FILENAME, &o->profiles, "syscall profile table (default src/kernel_model/syscalls.ini)", "FILE" },
        { "fault-profiles", 0, 0, G_OPTION_ARG_FILENAME, &o->fault_profiles,
          "page-fault profiles for version-2 traces (default src/kernel_model/faults.ini)", "FILE" },
        { "stubs", 0, 0, G_OPTION_ARG_FILENAME, &o->stubs, "entry/exit stubs (.asm or .o) instead of the layout's", "FILE" },
        { "struct-page", 0, 0, G_OPTION_ARG_STRING, &o->struct_page, "sizeof(struct page) for the lowmem model, 16 to 256 (default 40)", "B" },
        { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "print JSON", NULL },
        { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv, "print CSV (per syscall)", NULL },
        { "no-progress", 0, 0, G_OPTION_ARG_NONE, &o->no_progress, "no progress line on a terminal", NULL },
        { "no-fast-forward", 0, 0, G_OPTION_ARG_NONE, &o->no_ffwd,
          "run every user-work instruction (default: skip the loop's repeating periods; same results)", NULL },
        { compare ? "jobs" : NULL, 'j', 0, G_OPTION_ARG_STRING, &o->jobs, "layouts (and with --uncertainty, design points) replayed in parallel (default 2)", "N" },
        { compare ? "uncertainty" : NULL, 'u', 0, G_OPTION_ARG_STRING, &o->uncertainty,
          "90 % intervals over N sampled points of the preset's open estimates (default 0: none)", "N" },
        { compare ? "uncertainty-csv" : NULL, 0, 0, G_OPTION_ARG_FILENAME, &o->uncertainty_csv,
          "keep the design's rows (a sweep of kind uncertainty-replay) in FILE; a FILE that holds them already is read, not rerun", "FILE" },
        { NULL },
    };
    return g_memdup2(e, sizeof e);
}

static void opts_free(Opts *o)
{
    g_free(o->cpu);
    g_free(o->layout);
    g_free(o->ram);
    g_free(o->profiles);
    g_free(o->fault_profiles);
    g_free(o->stubs);
    g_free(o->struct_page);
    g_free(o->jobs);
    g_free(o->uncertainty);
    g_free(o->uncertainty_csv);
    g_free(o->paging);
}

static void print_json_results(ReplayResult **r, size_t n, const char *trace,
                               const CompareUnc *unc)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "trace");
    json_builder_add_string_value(b, trace);
    json_builder_set_member_name(b, "paging");
    json_builder_add_string_value(b, replay_config(r[0])->layout->paging->name);
    json_builder_set_member_name(b, "replays");
    json_builder_begin_array(b);
    for (size_t i = 0; i < n; i++)
        replay_to_json(r[i], b);
    json_builder_end_array(b);
    if (n > 1) {
        /* compare: what the text's overhead and "where the extra cycles
         * went" say, against the first layout. */
        const ReplayTotals *base = replay_totals(r[0]);
        double w[REPLAY_NPARTS];
        replay_breakdown(r[0], w);
        json_builder_set_member_name(b, "baseline");
        json_builder_add_string_value(b, replay_config(r[0])->layout->name);
        json_builder_set_member_name(b, "comparison");
        json_builder_begin_array(b);
        for (size_t i = 0; i < n; i++) {
            const ReplayTotals *t = replay_totals(r[i]);
            double v[REPLAY_NPARTS], secs = replay_seconds(r[i]);
            replay_breakdown(r[i], v);
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "layout");
            json_builder_add_string_value(b, replay_config(r[i])->layout->name);
            json_builder_set_member_name(b, "overhead_pct");
            json_builder_add_double_value(b, base->cycles ? 100.0 * ((double)t->cycles -
                                          base->cycles) / base->cycles : 0.0);
            json_builder_set_member_name(b, "syscalls_per_s");
            json_builder_add_double_value(b, secs > 0 ? t->syscalls / secs : 0.0);
            json_builder_set_member_name(b, "extra_cycles");
            json_builder_add_double_value(b, (double)t->cycles - base->cycles);
            json_builder_set_member_name(b, "extra_cycles_by_part");
            json_builder_begin_object(b);
            for (int p = 0; p < REPLAY_NPARTS; p++) {
                json_builder_set_member_name(b, replay_part_names[p]);
                json_builder_add_double_value(b, v[p] - w[p]);
            }
            json_builder_end_object(b);
            if (unc)
                compare_unc_json_layout(unc, i, b);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        if (unc)
            compare_unc_json(unc, b);
    }
    json_builder_end_object(b);
    cli_print_json(b);
}

/* stdin can be read once: compare copies it to a temporary file. */
static char *spool_stdin(GError **err)
{
    char *path = NULL;
    int fd = g_file_open_tmp("vmsplit-trace-XXXXXX", &path, err);
    if (fd < 0)
        return NULL;
    char buf[65536];
    ssize_t n;
    while ((n = read(STDIN_FILENO, buf, sizeof buf)) > 0)
        if (write(fd, buf, (size_t)n) != n) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: cannot write", path);
            break;
        }
    close(fd);
    return path;
}

static int run(int argc, char **argv, bool compare)
{
    const char *cmd = compare ? "compare" : "replay";
    Opts o = { 0 };
    GOptionEntry *entries = common_entries(&o, compare);
    GOptionContext *ctx = g_option_context_new(compare
        ? "TRACE - replay one trace under several layouts and compare them"
        : "TRACE - replay a vmsplit trace on a simulated machine");
    g_option_context_add_main_entries(ctx, entries, NULL);
    char *desc = g_strdup_printf(
        "TRACE is a vmsplit trace (workloads/FORMAT.md; gzip accepted; '-' for stdin), from\n"
        "'vmsplit import-strace' or 'vmsplit gen'. Every user-work event runs real user-mode\n"
        "code over its working set; every syscall goes through the layout's NASM entry/exit\n"
        "stubs; context switches go through a timer interrupt. Reported: totals, TLB\n"
        "statistics, latency per syscall with its breakdown, lowmem occupancy.\n\n"
        "%s", compare
            ? "Example: vmsplit compare --layouts 3g1g,4g4g,kpti workloads/traces/sqlite.vmt"
            : "Example: vmsplit replay --layout 4g4g workloads/traces/sqlite.vmt");
    if (compare) {
        char *more = g_strconcat(desc ? desc : "", "\n\n"
            "--uncertainty N samples the estimates the calibration left open over their ranges\n"
            "(the design of 'vmsplit syscall --uncertainty' and 'vmsplit claim': N points of a\n"
            "scrambled Halton design, seed 1, each moved back onto the preset's fit measurements,\n"
            "docs/calibration.md), replays the trace under every layout at each point (a sweep of\n"
            "kind uncertainty-replay, -j points at a time; shardable with 'vmsplit sweep'), and\n"
            "prints each compared figure as shipped with its 90 % interval [5th, 95th percentile].", NULL);
        g_free(desc);
        desc = more;
    }
    g_option_context_set_description(ctx, desc);
    g_free(desc);
    int rc = VMS_EXIT_USAGE;
    Preset *p = NULL;
    char *spooled = NULL, *stub_obj = NULL;
    ReplayJob *jobs = NULL;
    CompareUnc *unc = NULL;
    char **names = NULL;
    size_t n = 0;
    GError *err = NULL;
    if (!cli_parse(ctx, &argc, &argv, cmd))
        goto out;
    if (argc != 2) {
        fprintf(stderr, "vmsplit %s: expected one TRACE argument (see 'vmsplit %s --help')\n", cmd, cmd);
        goto out;
    }
    if (o.json && o.csv) {
        fprintf(stderr, "vmsplit %s: --json and --csv are exclusive\n", cmd);
        goto out;
    }
    uint64_t ram = 4ULL << 30;
    if (o.ram && (!cli_parse_size(o.ram, &ram) || ram < (32u << 20) || ram > (64ULL << 30))) {
        fprintf(stderr, "vmsplit %s: --ram '%s': expected a size from 32M to 64G\n", cmd, o.ram);
        goto out;
    }
    PagingMode paging;
    if (!cli_opt_paging(cmd, o.paging, &paging) || !cli_check_ram_paging(cmd, ram, paging))
        goto out;
    uint64_t struct_page = 0, njobs = 2, npoints = 0;
    if ((o.struct_page && !cli_opt_uint(cmd, "struct-page", o.struct_page, CLI_STRUCT_PAGE_MIN,
                                        CLI_STRUCT_PAGE_MAX, &struct_page)) ||
        (o.jobs && !cli_opt_uint(cmd, "jobs", o.jobs, 1, CLI_JOBS_MAX, &njobs)) ||
        (o.uncertainty && !cli_opt_uint(cmd, "uncertainty", o.uncertainty, 0, 4096, &npoints)))
        goto out;
    if (npoints && (o.stubs || o.profiles || o.fault_profiles || o.struct_page)) {
        fprintf(stderr, "vmsplit %s: --uncertainty replays with the layouts' own stubs and the "
                "bundled profiles; expected no --stubs, --profiles, --fault-profiles or "
                "--struct-page with it\n", cmd);
        goto out;
    }
    if (o.uncertainty_csv && !npoints) {
        fprintf(stderr, "vmsplit %s: --uncertainty-csv needs --uncertainty N\n", cmd);
        goto out;
    }
    if (!(p = preset_load(o.cpu ? o.cpu : PRESET_DEFAULT, &err))) {
        rc = cli_fail(cmd, err);
        goto out;
    }
    if (o.stubs && g_str_has_suffix(o.stubs, ".asm") && !(stub_obj = nasm_assemble(o.stubs, &err))) {
        rc = cli_fail(cmd, err);
        goto out;
    }
    const char *trace = argv[1];
    names = g_strsplit(o.layout ? o.layout : compare ? "3g1g,4g4g" : "3g1g", ",", -1);
    n = g_strv_length(names);
    if (compare && n < 2) {
        fprintf(stderr, "vmsplit compare: expected at least two layouts\n");
        goto out;
    }
    if (!compare && n != 1) {
        fprintf(stderr, "vmsplit replay: one layout (use 'vmsplit compare' for several)\n");
        goto out;
    }
    if (compare && !strcmp(trace, "-") && !(spooled = spool_stdin(&err))) {
        rc = cli_fail(cmd, err);
        goto out;
    }
    jobs = g_new0(ReplayJob, n);
    for (size_t i = 0; i < n; i++) {
        const Layout *l = layout_lookup(names[i], &err);
        if (!l) {
            rc = cli_fail(cmd, err);
            goto out;
        }
        l = layout_with_paging(l, paging);
        jobs[i].cfg = (ReplayConfig){ .preset = p, .layout = l, .ram = ram, .sysenter = o.sysenter,
                                      .profiles = o.profiles, .fault_profiles = o.fault_profiles,
                                      .stubs = stub_obj ? stub_obj : o.stubs,
                                      .struct_page = (uint32_t)struct_page,
                                      .no_fast_forward = o.no_ffwd,
                                      .progress = !o.no_progress && n == 1 };
        jobs[i].trace = spooled ? spooled : trace;
    }
    replay_run_jobs(jobs, n, (unsigned)njobs);
    for (size_t i = 0; i < n; i++)
        if (!jobs[i].result) {
            g_prefix_error(&jobs[i].err, "%s: ", names[i]);
            rc = g_error_matches(jobs[i].err, G_IO_ERROR, G_IO_ERROR_FAILED) ? VMS_EXIT_FAULT : VMS_EXIT_USAGE;
            fprintf(stderr, "vmsplit %s: %s\n", cmd, jobs[i].err->message);
            goto out;
        }
    /* A trace with no event has no figures (a rate would be 0/0): bad
     * input, not a result. */
    if (replay_totals(jobs[0].result)->events == 0) {
        fprintf(stderr, "vmsplit %s: %s: no events to replay (expected user work, syscalls, "
                "process events; workloads/FORMAT.md)\n", cmd, trace);
        goto out;
    }
    if (npoints) {
        CompareUncConfig uc = { .cpu = o.cpu ? o.cpu : PRESET_DEFAULT,
                                .trace = spooled ? spooled : trace, .layouts = names,
                                .sysenter = o.sysenter, .paging = ptformat_get(paging)->name,
                                .ram = ram, .clock_mhz = p->clock_mhz,
                                .points = (unsigned)npoints, .jobs = (unsigned)njobs,
                                .csv = o.uncertainty_csv,
                                .progress = !o.no_progress && isatty(STDERR_FILENO) };
        if (!(unc = compare_unc_run(&uc, &err))) {
            rc = cli_fail(cmd, err);
            goto out;
        }
    }
    ReplayResult **res = g_new(ReplayResult *, n);
    for (size_t i = 0; i < n; i++)
        res[i] = jobs[i].result;
    if (o.json)
        print_json_results(res, n, trace, unc);
    else if (o.csv && unc)
        compare_unc_print_csv(unc, res, n, stdout);
    else if (o.csv) {
        replay_print_csv_header(stdout);          /* one header, every layout's rows */
        for (size_t i = 0; i < n; i++)
            replay_print_csv(res[i], stdout);
        for (size_t i = 0; i < n; i++)            /* then each layout's summary */
            replay_print_csv_summary(res[i], compare ? res[0] : NULL, stdout);
    }
    else {
        /* The text names the paging mode, the default (PAE) too: the
         * figures differ between modes. */
        printf("paging: %s (%s): every layout's page tables in that format\n\n",
               ptformat_get(paging)->name, ptformat_get(paging)->title);
        if (compare) {
            replay_print_compare(res, n, trace, stdout);
            if (unc)
                compare_unc_print_text(unc, res, n, stdout);
        } else
            replay_print_text(res[0], trace, stdout);
    }
    g_free(res);
    rc = VMS_EXIT_OK;
out:
    compare_unc_free(unc);
    for (size_t i = 0; jobs && i < n; i++) {
        replay_result_free(jobs[i].result);
        g_clear_error(&jobs[i].err);
    }
    g_free(jobs);
    if (stub_obj)
        nasm_remove_output(stub_obj);
    g_free(stub_obj);
    if (spooled) {
        g_remove(spooled);
        g_free(spooled);
    }
    g_strfreev(names);
    preset_free(p);
    opts_free(&o);
    g_free(entries);
    g_option_context_free(ctx);
    return rc;
}

int cmd_replay(int argc, char **argv) { return run(argc, argv, false); }
int cmd_compare(int argc, char **argv) { return run(argc, argv, true); }
