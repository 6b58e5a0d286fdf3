/* vmsplit run: run a guest program on the simulated i686 core.
 *
 *   vmsplit run [--cpu PRESET] [--max-insns N] [--json] [--no-decode-cache]
 *               PROGRAM.asm|PROGRAM.o
 *
 * A .asm is assembled with nasm first. The program runs in ring 3 under the
 * minimal ring-0 runtime of src/cpu/runenv.h; the report gives instructions
 * retired, cycles, simulated time at the preset's clock, the memory-system,
 * TLB and cache statistics, host speed, and how the guest ended.
 *
 * Exit: 0 the guest exited with status 0; 1 it exited with another status,
 * took a fatal exception, triple-faulted, halted or ran out of its
 * instruction budget; 2 bad input. */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cpu/cpu.h"
#include "cpu/nasm.h"
#include "cpu/preset.h"
#include "cpu/runenv.h"
#include "mmu/mmu.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX_INSNS 10000000000ULL

typedef struct {
    char *cpu, *program;
    uint64_t max_insns;
    bool json, no_dcache;
} RunArgs;

typedef struct {
    const RunArgs *args;
    const Preset *preset;        /* NULL: built-in defaults */
    RunEnv *env;
    RunEnvState state;
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

static int parse_args(int argc, char **argv, RunArgs *a)
{
    g_autofree char *max = NULL;
    gboolean json = FALSE, no_dcache = FALSE;
    char *cpu = NULL;
    GOptionEntry entries[] = {
        { "cpu", 'c', 0, G_OPTION_ARG_STRING, &cpu, "CPU preset (default " PRESET_DEFAULT ")", "PRESET" },
        { "max-insns", 'n', 0, G_OPTION_ARG_STRING, &max,
          "Stop after N instructions (default 10000000000)", "N" },
        { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print one JSON object instead of text", NULL },
        { "no-decode-cache", 0, 0, G_OPTION_ARG_NONE, &no_dcache,
          "Decode every instruction afresh (same figures, slower)", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("PROGRAM.asm|PROGRAM.o - run a guest program");
    g_option_context_set_description(ctx,
        "The program runs in ring 3 with int 0x80 exit (eax=1) and write (eax=4).\n"
        "Exit status: 0 guest exit(0); 1 other guest exit status, fatal guest fault,\n"
        "triple fault, halt or instruction budget reached; 2 bad input.\n\n"
        "Example:\n  vmsplit run --cpu p4-northwood workloads/guest/pageloop.asm\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!cli_parse(ctx, &argc, &argv, "run")) {
        g_free(cpu);
        return VMS_EXIT_USAGE;
    }
    *a = (RunArgs){ .cpu = cpu, .max_insns = DEFAULT_MAX_INSNS, .json = json,
                    .no_dcache = no_dcache };
    if (max) {
        char *end = NULL;
        guint64 v = g_ascii_strtoull(max, &end, 0);
        if (!*max || *end || v == 0) {
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

static void print_text(const RunReport *r)
{
    Cpu *cpu = runenv_cpu(r->env);
    uint64_t insns = cpu_insns(cpu), user = cpu_insns_user(cpu), cycles = cpu_cycles(cpu);
    double mhz = r->preset ? r->preset->clock_mhz : 0;
    FILE *o = stdout;
    fprintf(o, "program         %s\n", r->args->program);
    if (r->preset)
        fprintf(o, "cpu             %s (%.0f MHz)\n", r->preset->name, mhz);
    else
        fprintf(o, "cpu             built-in defaults (no preset found; no caches, 1 cycle per reference)\n");
    fprintf(o, "stopped         %s", state_name(r->state));
    if (r->state == RUNENV_EXITED)
        fprintf(o, ", guest exit status %d", runenv_exit_status(r->env));
    fprintf(o, "\n");
    if (r->state == RUNENV_FAULTED) {
        g_autofree char *d = runenv_describe_fault(r->env);
        fprintf(o, "guest fault     %s\n", d);
    } else if (r->state == RUNENV_TRIPLE_FAULT) {
        g_autofree char *d = cpu_describe_triple_fault(cpu);
        fprintf(o, "%s\n", d);
    }
    fprintf(o, "instructions    %" G_GUINT64_FORMAT " (user %" G_GUINT64_FORMAT ", kernel %"
               G_GUINT64_FORMAT ")\n", insns, user, insns - user);
    fprintf(o, "cycles          %" G_GUINT64_FORMAT " (CPI %.3f)\n", cycles,
            insns ? (double)cycles / (double)insns : 0.0);
    if (mhz > 0)
        fprintf(o, "simulated time  %.6f ms at %.0f MHz\n", (double)cycles / mhz / 1e3, mhz);
    fprintf(o, "syscalls        %" G_GUINT64_FORMAT "\n", runenv_syscalls(r->env));
    print_mmu(o, runenv_mmu(r->env));
    fprintf(o, "host            %.3f s, %.1f million guest instructions per second "
               "(decoded-instruction cache %s)\n",
            r->host_seconds, r->host_seconds > 0 ? (double)insns / r->host_seconds / 1e6 : 0.0,
            r->args->no_dcache ? "off" : "on");
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

static void print_json(const RunReport *r)
{
    Cpu *cpu = runenv_cpu(r->env);
    Mmu *m = runenv_mmu(r->env);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "program");
    json_builder_add_string_value(b, r->args->program);
    json_builder_set_member_name(b, "cpu");
    json_builder_add_string_value(b, r->preset ? r->preset->name : "built-in defaults");
    json_builder_set_member_name(b, "clock_mhz");
    json_builder_add_double_value(b, r->preset ? r->preset->clock_mhz : 0.0);
    json_builder_set_member_name(b, "stopped");
    json_builder_add_string_value(b, state_name(r->state));
    json_builder_set_member_name(b, "exit_status");
    if (r->state == RUNENV_EXITED)
        json_builder_add_int_value(b, runenv_exit_status(r->env));
    else
        json_builder_add_null_value(b);
    if (r->state == RUNENV_FAULTED || r->state == RUNENV_TRIPLE_FAULT) {
        g_autofree char *d = r->state == RUNENV_FAULTED ? runenv_describe_fault(r->env)
                                                        : cpu_describe_triple_fault(cpu);
        json_builder_set_member_name(b, "fault");
        json_builder_add_string_value(b, d);
    }
    json_u64(b, "instructions", cpu_insns(cpu));
    json_u64(b, "instructions_user", cpu_insns_user(cpu));
    json_u64(b, "cycles", cpu_cycles(cpu));
    if (r->preset) {
        json_builder_set_member_name(b, "simulated_ms");
        json_builder_add_double_value(b, (double)cpu_cycles(cpu) / r->preset->clock_mhz / 1e3);
    }
    json_u64(b, "syscalls", runenv_syscalls(r->env));
    json_builder_set_member_name(b, "guest_stdout");
    json_builder_add_string_value(b, r->guest_out ? r->guest_out->str : "");
    json_builder_set_member_name(b, "guest_stderr");
    json_builder_add_string_value(b, r->guest_err ? r->guest_err->str : "");
    json_memory(b, m);
    json_builder_set_member_name(b, "host_seconds");
    json_builder_add_double_value(b, r->host_seconds);
    json_builder_set_member_name(b, "host_minsns_per_second");
    json_builder_add_double_value(b, r->host_seconds > 0
                                         ? (double)cpu_insns(cpu) / r->host_seconds / 1e6 : 0.0);
    json_builder_set_member_name(b, "decode_cache");
    json_builder_add_boolean_value(b, !r->args->no_dcache);
    json_builder_end_object(b);
    g_autoptr(JsonGenerator) g = json_generator_new();
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    json_generator_set_root(g, root);
    json_generator_set_pretty(g, TRUE);
    g_autofree char *text = json_generator_to_data(g, NULL);
    printf("%s\n", text);
}

static int run_program(const RunArgs *a, Preset *preset)
{
    GError *err = NULL;
    char *obj = NULL;
    const char *path = a->program;
    if (g_str_has_suffix(path, ".asm")) {
        obj = nasm_assemble(path, &err);
        if (!obj)
            return cli_fail("run", err);
        path = obj;
    }
    /* With --json, stdout carries only the JSON object: the guest's own
     * output goes into it. */
    GString *gout = a->json ? g_string_new(NULL) : NULL, *gerr = a->json ? g_string_new(NULL) : NULL;
    RunEnvOptions opt = { .preset = preset, .no_decode_cache = a->no_dcache, .out = gout,
                          .err = gerr };
    RunEnv *env = runenv_new(&opt, &err);
    int rc = VMS_EXIT_USAGE;
    if (!env || !runenv_load(env, path, &err)) {
        rc = cli_fail("run", err);
        goto out;
    }
    RunReport r = { .args = a, .preset = preset, .env = env, .guest_out = gout,
                    .guest_err = gerr };
    gint64 t0 = g_get_monotonic_time();
    r.state = runenv_run(env, a->max_insns);
    r.host_seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    if (a->json)
        print_json(&r);
    else
        print_text(&r);
    rc = r.state == RUNENV_EXITED && runenv_exit_status(env) == 0 ? VMS_EXIT_OK : VMS_EXIT_FAULT;
out:
    runenv_free(env);
    if (obj)
        nasm_remove_output(obj);
    g_free(obj);
    if (gout)
        g_string_free(gout, TRUE);
    if (gerr)
        g_string_free(gerr, TRUE);
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
    g_free(a.program);
    return rc;
}
