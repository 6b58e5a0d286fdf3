/* vmsplit run: run a guest program on the simulated i686 core.
 *
 *   vmsplit run [--cpu PRESET] [--max-insns N] [--json] [--no-decode-cache]
 *               [--no-shortcuts]
 *               [--layout L [--paging MODE] [--ram SIZE] [--stubs FILE]]
 *               PROGRAM.asm|PROGRAM.o
 *
 * A .asm is assembled with nasm first. The program runs in ring 3 under the
 * minimal ring-0 runtime of src/cpu/runenv.h, or with --layout as task 0 of
 * the kernel model's machine booted with that layout, its system calls
 * going through the layout's entry/exit stubs (src/kernel_model/guestprog.h).
 * The report gives instructions retired, cycles, simulated time at the
 * preset's clock, the memory-system, TLB and cache statistics, host speed,
 * and how the guest ended; with --layout also the CR3 writes and TLB
 * flushes the stubs made.
 *
 * Exit: 0 the guest exited with status 0; 1 it exited with another status,
 * took a fatal exception, triple-faulted, halted or ran out of its
 * instruction budget; 2 bad input. */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cpu/cpu.h"
#include "cpu/nasm.h"
#include "preset/preset.h"
#include "cpu/runenv.h"
#include "kernel_model/guestprog.h"
#include "kernel_model/layout.h"
#include "mmu/mmu.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX_INSNS 10000000000ULL

#define DEFAULT_RAM (4ULL << 30)   /* as `vmsplit syscall` and the replay */

typedef struct {
    char *cpu, *program, *stubs;
    const Layout *layout;        /* --layout, else NULL: the runenv */
    uint64_t max_insns, ram;
    bool json, no_dcache;
    bool no_memo;                /* --no-shortcuts: the MMU's TLB-hit memos off too */
} RunArgs;

/* What the report shows, filled from either environment. */
typedef struct {
    const RunArgs *args;
    const Preset *preset;        /* NULL: built-in defaults */
    const char *stopped;
    bool exited;
    int exit_status;
    char *fault;                 /* description, NULL if none */
    bool fault_prefix;           /* print "guest fault" before it */
    Cpu *cpu;
    Mmu *mmu;
    uint64_t insns, user, cycles, syscalls;
    uint64_t kmaps, bytes_written;    /* --layout only */
    double host_seconds;
    GString *guest_out, *guest_err;  /* --json: the guest's output, captured */
} RunReport;

static const char *state_name(RunEnvState s)
{
    switch (s) {
    case RUNENV_EXITED: return "exit";
    case RUNENV_FAULTED: return "fault";
    case RUNENV_TRIPLE_FAULT: return "triple-fault";
    case RUNENV_HALTED: return "halted";
    case RUNENV_BUDGET: return "max-insns";
    default: return "not-run";
    }
}

static const char *guest_state_name(GuestProgState s)
{
    switch (s) {
    case GUESTPROG_EXITED: return "exit";
    case GUESTPROG_FAULTED: return "fault";
    case GUESTPROG_HALTED: return "halted";
    case GUESTPROG_BUDGET: return "max-insns";
    default: return "not-run";
    }
}

static int parse_args(int argc, char **argv, RunArgs *a)
{
    g_autofree char *max = NULL, *layout = NULL, *ram = NULL, *paging = NULL;
    gboolean json = FALSE, no_dcache = FALSE, no_shortcuts = FALSE;
    char *cpu = NULL, *stubs = NULL;
    GOptionEntry entries[] = {
        { "cpu", 'c', 0, G_OPTION_ARG_STRING, &cpu, "CPU preset (default " PRESET_DEFAULT ")", "PRESET" },
        { "max-insns", 0, 0, G_OPTION_ARG_STRING, &max,
          "Stop after N instructions (default 10000000000)", "N" },
        { "layout", 'l', 0, G_OPTION_ARG_STRING, &layout,
          "Run on the kernel model booted with layout L (3g1g, 2g2g, 1g3g, 4g4g, kpti, "
          "kpti-pcid): system calls go through its entry/exit stubs", "L" },
        { "paging", 0, 0, G_OPTION_ARG_STRING, &paging, "With --layout: " CLI_PAGING_HELP,
          "MODE" },
        { "ram", 0, 0, G_OPTION_ARG_STRING, &ram, "With --layout: installed RAM (default 4G)", "SIZE" },
        { "stubs", 0, 0, G_OPTION_ARG_FILENAME, &stubs,
          "With --layout: entry/exit stubs to use instead of the layout's (.asm or .o)", "FILE" },
        { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object instead of text", NULL },
        { "no-decode-cache", 0, 0, G_OPTION_ARG_NONE, &no_dcache,
          "Decode every instruction afresh (same figures, slower)", NULL },
        { "no-shortcuts", 0, 0, G_OPTION_ARG_NONE, &no_shortcuts,
          "Turn every host-speed shortcut off: the decoded-instruction cache and "
          "the MMU's memos of TLB hits (same figures, slower)", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("PROGRAM.asm|PROGRAM.o - run a guest program");
    g_option_context_set_description(ctx,
        "The program runs in ring 3 with int 0x80 exit (eax=1) and write (eax=4).\n"
        "Exit status: 0 guest exit(0); 1 other guest exit status, fatal guest fault,\n"
        "triple fault, halt or instruction budget reached; 2 bad input.\n\n"
        "Without --layout the program runs under a minimal 3G/1G runtime. With\n"
        "--layout it is task 0 of the kernel model's machine: int 0x80 (and sysenter,\n"
        "for a program defining sysenter_return) runs that layout's entry/exit stubs,\n"
        "and the report adds the CR3 writes and TLB flushes they made; --paging\n"
        "legacy boots it on 32-bit (2-level, non-PAE) page tables.\n\n"
        "Examples:\n  vmsplit run --cpu p4-northwood workloads/guest/pageloop.asm\n"
        "  vmsplit run --layout 4g4g workloads/guest/hello.asm\n"
        "  vmsplit run --layout 4g4g --paging legacy workloads/guest/hello.asm\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!cli_parse(ctx, &argc, &argv, "run")) {
        g_free(cpu);
        g_free(stubs);
        return VMS_EXIT_USAGE;
    }
    *a = (RunArgs){ .cpu = cpu, .stubs = stubs, .max_insns = DEFAULT_MAX_INSNS, .json = json,
                    .no_dcache = no_dcache || no_shortcuts, .no_memo = no_shortcuts,
                    .ram = DEFAULT_RAM };
    if ((ram || stubs || paging) && !layout) {
        fprintf(stderr, "vmsplit run: --ram, --paging and --stubs need --layout\n");
        return VMS_EXIT_USAGE;
    }
    PagingMode mode = PAGING_PAE;
    if (!cli_opt_paging("run", paging, &mode))
        return VMS_EXIT_USAGE;
    if (layout) {
        GError *err = NULL;
        if (!(a->layout = layout_lookup(layout, &err)))
            return cli_fail("run", err);
        a->layout = layout_with_paging(a->layout, mode);
    }
    if (ram && !cli_parse_size(ram, &a->ram)) {
        fprintf(stderr, "vmsplit run: --ram '%s': expected a size such as 4G or 896M\n", ram);
        return VMS_EXIT_USAGE;
    }
    if (layout && !cli_check_ram_paging("run", a->ram, mode))
        return VMS_EXIT_USAGE;
    if (max) {
        char *end = NULL;
        guint64 v = g_ascii_strtoull(max, &end, 0);
        /* g_ascii_strtoull takes "-1" as 2^64 - 1: a sign is refused here. */
        if (!*max || *end || v == 0 || strchr(max, '-')) {
            fprintf(stderr, "vmsplit run: --max-insns: expected a positive integer, got '%s'\n", max);
            return VMS_EXIT_USAGE;
        }
        a->max_insns = v;
    }
    if (argc != 2) {
        fprintf(stderr, "vmsplit run: expected one PROGRAM.asm or PROGRAM.o (see 'vmsplit run --help')\n");
        return VMS_EXIT_USAGE;
    }
    a->program = g_strdup(argv[1]);
    return -1;
}

/* --cpu, or the default preset if it can be found, else built-in costs. */
static int load_preset(const RunArgs *a, Preset **out)
{
    GError *err = NULL;
    *out = preset_load(a->cpu ? a->cpu : PRESET_DEFAULT, &err);
    if (*out)
        return -1;
    if (!a->cpu && g_error_matches(err, PRESET_ERROR, PRESET_ERROR_NOT_FOUND)) {
        g_error_free(err);
        return -1;               /* reported as "built-in defaults" */
    }
    return cli_fail("run", err);
}

static void print_mmu(FILE *o, Mmu *m)
{
    const MmuStats *s = mmu_stats(m);
    fprintf(o, "memory system   %" G_GUINT64_FORMAT " cycles: page walks %" G_GUINT64_FORMAT
               " (%" G_GUINT64_FORMAT " cycles), data %" G_GUINT64_FORMAT " cycles, "
               "MOV CR3 %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " cycles), INVLPG %"
               G_GUINT64_FORMAT "\n",
            s->cycles, s->walks, s->walk_cycles, s->data_cycles, s->cr3_writes, s->cr3_cycles,
            s->invlpgs);
    CacheHier *ch = mmu_cache(m);
    if (ch) {
        const CacheStats *cs = cache_stats(ch);
        fprintf(o, "caches          %" G_GUINT64_FORMAT " references (%" G_GUINT64_FORMAT
                   " writes), %" G_GUINT64_FORMAT " from memory, %" G_GUINT64_FORMAT " cycles\n",
                cs->accesses, cs->writes, cs->mem, cs->cycles);
        for (unsigned l = 0; l < cache_levels(ch); l++)
            fprintf(o, "  L%u            %" G_GUINT64_FORMAT " hits, %" G_GUINT64_FORMAT
                       " misses, %" G_GUINT64_FORMAT " evictions\n",
                    l + 1, cs->level[l].hits, cs->level[l].misses, cs->level[l].evictions);
    }
    fprintf(o, "TLB\n");
    tlb_hier_print_stats(mmu_tlb(m), o, true);
}

/* The CR3 writes, TLB flushes and copies the layout's stubs and body made. */
static void print_layout_costs(FILE *o, const RunReport *r)
{
    const TlbStats *ts = tlb_hier_stats(mmu_tlb(r->mmu));
    uint64_t fl = 0, dr = 0, inv = 0, dinv = 0;
    tlb_stats_get(ts, "flushes_cr3", &fl);
    tlb_stats_get(ts, "dropped_cr3", &dr);
    tlb_stats_get(ts, "flushes_invlpg", &inv);
    tlb_stats_get(ts, "dropped_invlpg", &dinv);
    fprintf(o, "CR3 writes      %" G_GUINT64_FORMAT " (TLB flushes by CR3 %" G_GUINT64_FORMAT
               ", %" G_GUINT64_FORMAT " entries dropped; INVLPG %" G_GUINT64_FORMAT ", %"
               G_GUINT64_FORMAT " dropped)\n",
            mmu_stats(r->mmu)->cr3_writes, fl, dr, inv, dinv);
    fprintf(o, "uaccess         write() copied %" G_GUINT64_FORMAT " bytes from user space ",
            r->bytes_written);
    if (r->args->layout->indirect_uaccess)
        fprintf(o, "through kmap_atomic (%" G_GUINT64_FORMAT " kmaps)\n", r->kmaps);
    else
        fprintf(o, "through the user mappings\n");
}

static void print_text(const RunReport *r)
{
    double mhz = r->preset ? r->preset->clock_mhz : 0;
    FILE *o = stdout;
    fprintf(o, "program         %s\n", r->args->program);
    if (r->args->layout)
        fprintf(o, "layout          %s (%s)%s\npaging          %s\n", r->args->layout->name,
                r->args->layout->summary,
                r->args->layout->what_if ? " [what-if: not possible on i686]" : "",
                r->args->layout->paging->name);
    if (r->preset)
        fprintf(o, "cpu             %s (%.0f MHz)\n", r->preset->name, mhz);
    else
        fprintf(o, "cpu             built-in defaults (no preset found; no caches, 1 cycle per reference)\n");
    fprintf(o, "stopped         %s", r->stopped);
    if (r->exited)
        fprintf(o, ", guest exit status %d", r->exit_status);
    fprintf(o, "\n");
    if (r->fault && r->fault_prefix)
        fprintf(o, "guest fault     %s\n", r->fault);
    else if (r->fault)
        fprintf(o, "%s\n", r->fault);
    fprintf(o, "instructions    %" G_GUINT64_FORMAT " (user %" G_GUINT64_FORMAT ", kernel %"
               G_GUINT64_FORMAT ")\n", r->insns, r->user, r->insns - r->user);
    fprintf(o, "cycles          %" G_GUINT64_FORMAT " (CPI %.3f)\n", r->cycles,
            r->insns ? (double)r->cycles / (double)r->insns : 0.0);
    if (mhz > 0)
        fprintf(o, "simulated time  %.6f ms at %.0f MHz\n", (double)r->cycles / mhz / 1e3, mhz);
    fprintf(o, "syscalls        %" G_GUINT64_FORMAT "\n", r->syscalls);
    if (r->args->layout)
        print_layout_costs(o, r);
    print_mmu(o, r->mmu);
    fprintf(o, "host            %.3f s, %.1f million guest instructions per second "
               "(decoded-instruction cache %s, TLB-hit memos %s)\n",
            r->host_seconds, r->host_seconds > 0 ? (double)r->insns / r->host_seconds / 1e6 : 0.0,
            r->args->no_dcache ? "off" : "on", r->args->no_memo ? "off" : "on");
}


static void json_u64(JsonBuilder *b, const char *k, uint64_t v)
{
    json_builder_set_member_name(b, k);
    json_builder_add_int_value(b, (gint64)v);
}

/* "mmu", "caches" and "tlb" members. */
static void json_memory(JsonBuilder *b, Mmu *m)
{
    const MmuStats *s = mmu_stats(m);
    json_builder_set_member_name(b, "mmu");
    json_builder_begin_object(b);
    json_u64(b, "cycles", s->cycles);
    json_u64(b, "walks", s->walks);
    json_u64(b, "walk_cycles", s->walk_cycles);
    json_u64(b, "data_cycles", s->data_cycles);
    json_u64(b, "cr3_writes", s->cr3_writes);
    json_u64(b, "cr3_cycles", s->cr3_cycles);
    json_u64(b, "invlpgs", s->invlpgs);
    json_builder_end_object(b);
    CacheHier *ch = mmu_cache(m);
    if (ch) {
        const CacheStats *cs = cache_stats(ch);
        json_builder_set_member_name(b, "caches");
        json_builder_begin_object(b);
        json_u64(b, "accesses", cs->accesses);
        json_u64(b, "writes", cs->writes);
        json_u64(b, "mem", cs->mem);
        json_u64(b, "cycles", cs->cycles);
        for (unsigned l = 0; l < cache_levels(ch); l++) {
            char name[4] = { 'L', (char)('1' + l), 0, 0 };
            json_builder_set_member_name(b, name);
            json_builder_begin_object(b);
            json_u64(b, "hits", cs->level[l].hits);
            json_u64(b, "misses", cs->level[l].misses);
            json_u64(b, "evictions", cs->level[l].evictions);
            json_builder_end_object(b);
        }
        json_builder_end_object(b);
    }
    json_builder_set_member_name(b, "tlb");
    json_builder_begin_object(b);
    tlb_hier_stats_to_json(mmu_tlb(m), b);
    json_builder_end_object(b);
}

static void json_layout(JsonBuilder *b, const RunReport *r)
{
    const TlbStats *ts = tlb_hier_stats(mmu_tlb(r->mmu));
    static const char *const keys[] = { "flushes_cr3", "dropped_cr3", "flushes_invlpg",
                                        "dropped_invlpg" };
    json_u64(b, "cr3_writes", mmu_stats(r->mmu)->cr3_writes);
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        uint64_t v = 0;
        tlb_stats_get(ts, keys[i], &v);
        g_autofree char *k = g_strconcat("tlb_", keys[i], NULL);
        json_u64(b, k, v);
    }
    json_u64(b, "bytes_written", r->bytes_written);
    json_u64(b, "kmaps", r->kmaps);
}

static void print_json(const RunReport *r)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "program");
    json_builder_add_string_value(b, r->args->program);
    if (r->args->layout) {
        json_builder_set_member_name(b, "layout");
        json_builder_add_string_value(b, r->args->layout->name);
        json_builder_set_member_name(b, "paging");
        json_builder_add_string_value(b, r->args->layout->paging->name);
    }
    json_builder_set_member_name(b, "cpu");
    json_builder_add_string_value(b, r->preset ? r->preset->name : "built-in defaults");
    json_builder_set_member_name(b, "clock_mhz");
    json_builder_add_double_value(b, r->preset ? r->preset->clock_mhz : 0.0);
    json_builder_set_member_name(b, "stopped");
    json_builder_add_string_value(b, r->stopped);
    json_builder_set_member_name(b, "exit_status");
    if (r->exited)
        json_builder_add_int_value(b, r->exit_status);
    else
        json_builder_add_null_value(b);
    if (r->fault) {
        json_builder_set_member_name(b, "fault");
        json_builder_add_string_value(b, r->fault);
    }
    json_u64(b, "instructions", r->insns);
    json_u64(b, "instructions_user", r->user);
    json_u64(b, "cycles", r->cycles);
    if (r->preset) {
        json_builder_set_member_name(b, "simulated_ms");
        json_builder_add_double_value(b, (double)r->cycles / r->preset->clock_mhz / 1e3);
    }
    json_u64(b, "syscalls", r->syscalls);
    if (r->args->layout)
        json_layout(b, r);
    json_builder_set_member_name(b, "guest_stdout");
    json_builder_add_string_value(b, r->guest_out ? r->guest_out->str : "");
    json_builder_set_member_name(b, "guest_stderr");
    json_builder_add_string_value(b, r->guest_err ? r->guest_err->str : "");
    json_memory(b, r->mmu);
    json_builder_set_member_name(b, "host_seconds");
    json_builder_add_double_value(b, r->host_seconds);
    json_builder_set_member_name(b, "host_minsns_per_second");
    json_builder_add_double_value(b, r->host_seconds > 0
                                         ? (double)r->insns / r->host_seconds / 1e6 : 0.0);
    json_builder_set_member_name(b, "decode_cache");
    json_builder_add_boolean_value(b, !r->args->no_dcache);
    json_builder_set_member_name(b, "mmu_memos");
    json_builder_add_boolean_value(b, !r->args->no_memo);
    json_builder_end_object(b);
    cli_print_json_keep(b);
}

/* The minimal 3G/1G runtime (no --layout). */
static int run_runenv(const RunArgs *a, const char *path, RunReport *r, RunEnv **env)
{
    GError *err = NULL;
    RunEnvOptions opt = { .preset = r->preset, .no_decode_cache = a->no_dcache,
                          .no_mmu_shortcuts = a->no_memo, .out = r->guest_out,
                          .err = r->guest_err };
    if (!(*env = runenv_new(&opt, &err)) || !runenv_load(*env, path, &err))
        return cli_fail("run", err);
    gint64 t0 = g_get_monotonic_time();
    RunEnvState state = runenv_run(*env, a->max_insns);
    r->host_seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    r->cpu = runenv_cpu(*env);
    r->mmu = runenv_mmu(*env);
    r->stopped = state_name(state);
    r->exited = state == RUNENV_EXITED;
    r->exit_status = runenv_exit_status(*env);
    if (state == RUNENV_FAULTED) {
        r->fault = runenv_describe_fault(*env);
        r->fault_prefix = true;
    } else if (state == RUNENV_TRIPLE_FAULT) {
        r->fault = cpu_describe_triple_fault(r->cpu);
    }
    r->insns = cpu_insns(r->cpu);
    r->user = cpu_insns_user(r->cpu);
    r->cycles = cpu_cycles(r->cpu);
    r->syscalls = runenv_syscalls(*env);
    return -1;
}

/* --layout: task 0 of the kernel model's machine. */
static int run_guestprog(const RunArgs *a, const char *path, const char *stubs, RunReport *r,
                         GuestProg **gp)
{
    GError *err = NULL;
    GuestProgOptions opt = {
        .machine = { .preset = r->preset, .layout = a->layout, .ram = a->ram, .stubs = stubs },
        .no_decode_cache = a->no_dcache, .no_mmu_shortcuts = a->no_memo,
        .out = r->guest_out, .err = r->guest_err,
    };
    if (!(*gp = guestprog_new(&opt, path, &err)))
        return cli_fail("run", err);
    gint64 t0 = g_get_monotonic_time();
    GuestProgState state = guestprog_run(*gp, a->max_insns);
    r->host_seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    Machine *m = guestprog_machine(*gp);
    GuestProgStats st = guestprog_stats(*gp);
    r->cpu = machine_cpu(m);
    r->mmu = machine_mmu(m);
    r->stopped = guest_state_name(state);
    r->exited = state == GUESTPROG_EXITED;
    r->exit_status = guestprog_exit_status(*gp);
    if (state == GUESTPROG_FAULTED) {
        r->fault = guestprog_describe_fault(*gp);
        r->fault_prefix = true;
    }
    r->insns = st.insns;
    r->user = st.insns_user;
    r->cycles = st.cycles;
    r->syscalls = st.syscalls;
    r->kmaps = st.kmaps;
    r->bytes_written = st.bytes_written;
    return -1;
}

static int run_program(const RunArgs *a, Preset *preset)
{
    GError *err = NULL;
    char *obj = NULL, *stub_obj = NULL;
    const char *path = a->program;
    int rc = VMS_EXIT_USAGE;
    if (a->stubs && g_str_has_suffix(a->stubs, ".asm") &&
        !(stub_obj = nasm_assemble(a->stubs, &err)))
        return cli_fail("run", err);
    if (g_str_has_suffix(path, ".asm")) {
        obj = nasm_assemble(path, &err);
        if (!obj) {
            rc = cli_fail("run", err);
            goto out;
        }
        path = obj;
    }
    /* With --json, stdout carries only the JSON object: the guest's own
     * output goes into it. */
    RunReport r = { .args = a, .preset = preset };
    if (a->json) {
        r.guest_out = g_string_new(NULL);
        r.guest_err = g_string_new(NULL);
    }
    RunEnv *env = NULL;
    GuestProg *gp = NULL;
    rc = a->layout ? run_guestprog(a, path, stub_obj ? stub_obj : a->stubs, &r, &gp)
                   : run_runenv(a, path, &r, &env);
    if (rc < 0) {
        if (a->json)
            print_json(&r);
        else
            print_text(&r);
        rc = r.exited && r.exit_status == 0 ? VMS_EXIT_OK : VMS_EXIT_FAULT;
    }
    runenv_free(env);
    guestprog_free(gp);
    g_free(r.fault);
    if (r.guest_out)
        g_string_free(r.guest_out, TRUE);
    if (r.guest_err)
        g_string_free(r.guest_err, TRUE);
out:
    if (obj)
        nasm_remove_output(obj);
    g_free(obj);
    if (stub_obj)
        nasm_remove_output(stub_obj);
    g_free(stub_obj);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    RunArgs a = { 0 };
    int rc = parse_args(argc, argv, &a);
    Preset *preset = NULL;
    if (rc < 0)
        rc = load_preset(&a, &preset);
    if (rc < 0)
        rc = run_program(&a, preset);
    preset_free(preset);
    g_free(a.cpu);
    g_free(a.stubs);
    g_free(a.program);
    return rc;
}
