/* vmsplit gen: write a synthetic workload trace.
 *
 *   vmsplit gen NAME [--count N] [--seed S]
 *                    [--rate R [--cpu P] [--sysenter] [--paging MODE] | --rate R --clock-mhz F [--ipc F]
 *                     | --user-insns N] [--pages N] [--pattern P]
 *                    [--param KEY=VALUE]... [-o FILE]
 *
 * --rate R alone is a realised rate: the user work per syscall is solved by
 * replaying the workload on the CPU under 3g1g (replay/gen_rate.h). With
 * --clock-mhz or --ipc it is the nominal conversion of import-strace
 * (clock x IPC / R user instructions, no replay).
 *
 * The generators and their documentation live in src/replay/gen*.c; this
 * file parses the options and lists the generators in --help.
 *
 * Exit: 0 written, 2 bad input (unknown generator, bad option, unwritable
 * output). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "preset/preset.h"
#include "replay/gen.h"
#include "replay/gen_rate.h"
#include "report/csv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CMD "gen"

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "vmsplit " CMD ": ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, " (see 'vmsplit " CMD " --help')\n");
    return VMS_EXIT_USAGE;
}

typedef struct {
    char *count, *seed, *rate, *insns, *clock, *ipc, *pages, *pattern, *out, *cpu, *paging;
    gboolean sysenter, json, csv;
    GStrv params;
} RawArgs;

static void raw_args_clear(RawArgs *r)
{
    g_free(r->count), g_free(r->seed), g_free(r->rate), g_free(r->insns);
    g_free(r->clock), g_free(r->ipc), g_free(r->pages), g_free(r->pattern), g_free(r->out);
    g_free(r->cpu);
    g_free(r->paging);
    g_strfreev(r->params);
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    guint64 v;
    if (!g_ascii_string_to_unsigned(s, 10, min, max, &v, NULL))
        return false;
    *out = v;
    return true;
}

static bool parse_positive(const char *s, double *out)
{
    char *end = NULL;
    double v = g_ascii_strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v <= 0)
        return false;
    *out = v;
    return true;
}

/* -1 when the options are good (o filled), else the exit status. */
static int to_options(RawArgs *r, GenOptions *o)
{
    uint64_t v;
    gen_options_init(o);
    if (r->count && !parse_u64(r->count, 1, UINT64_MAX, &o->count))
        return usage_error("--count: expected a number of syscalls, 1 or more, got '%s'", r->count);
    if (r->seed && !parse_u64(r->seed, 0, UINT64_MAX, &o->seed))
        return usage_error("--seed: expected a whole number from 0 to 2^64-1, got '%s'", r->seed);
    if (r->rate && r->insns)
        return usage_error("%s", "--rate and --user-insns both given: expected one of them");
    if ((r->json || r->csv) && (!r->out || !strcmp(r->out, "-")))
        return usage_error("%s", "--json and --csv print a summary on standard output: expected "
                                 "-o FILE for the trace");
    if (r->json && r->csv)
        return usage_error("%s", "--json and --csv both given: expected one of them");
    if ((r->cpu || r->sysenter || r->paging) && (r->clock || r->ipc || !r->rate))
        return usage_error("%s", "--cpu, --sysenter and --paging choose where a realised --rate "
                                 "is reached: expected --rate without --clock-mhz and --ipc");
    if (r->rate && !parse_positive(r->rate, &o->rate))
        return usage_error("--rate: expected a positive number of syscalls per second, got '%s'",
                           r->rate);
    if (r->insns && !parse_u64(r->insns, 0, TRACE_USER_INSNS_MAX, &o->user_insns))
        return usage_error("--user-insns: expected a whole number from 0 to 10^12 (the most a "
                           "trace's user event holds), got '%s'", r->insns);
    o->have_user_insns = r->insns != NULL;
    if (r->clock && !parse_positive(r->clock, &o->clock_mhz))
        return usage_error("--clock-mhz: expected a positive number, got '%s'", r->clock);
    if (r->ipc && !parse_positive(r->ipc, &o->ipc))
        return usage_error("--ipc: expected a positive number, got '%s'", r->ipc);
    if (r->pages && !parse_u64(r->pages, 1, 1u << 20, &v))
        return usage_error("--pages: expected a working set of 1 to 1048576 pages, got '%s'",
                           r->pages);
    o->pages = r->pages ? (uint32_t)v : 0;
    if (r->pattern && !trace_pattern_parse(r->pattern, &o->pattern))
        return usage_error("--pattern: expected seq, rand or hot, got '%s'", r->pattern);
    o->have_pattern = r->pattern != NULL;
    o->params = r->params;
    return -1;
}

static void describe_generator(GString *s, const Generator *gen)
{
    g_string_append_printf(s, "\n%s: %s\n", gen->name, gen->summary);
    gchar **lines = g_strsplit(gen->imitates, "\n", -1);
    for (char **l = lines; *l; l++)
        g_string_append_printf(s, "    %s\n", *l);
    g_strfreev(lines);
    g_string_append_printf(s, "  --user-insns default %" G_GUINT64_FORMAT " (%s)\n",
                           gen->default_user_insns, gen->user_insns_source);
    g_string_append_printf(s, "  --pages default %" G_GUINT32_FORMAT ", %s (%s)\n",
                           gen->default_pages, trace_pattern_name(gen->default_pattern),
                           gen->pages_source);
    for (const GenParam *p = gen->params; p->key; p++)
        g_string_append_printf(s, "  --param %s=%g (%g..%g): %s\n", p->key, p->def, p->min,
                               p->max, p->help);
}

static GOptionContext *option_context(RawArgs *r, GString *desc)
{
    GOptionEntry entries[] = {
        {"count", 'n', 0, G_OPTION_ARG_STRING, &r->count,
         "Syscalls in the measured loop (default 100000; setup calls come on top)", "N"},
        {"seed", 's', 0, G_OPTION_ARG_STRING, &r->seed,
         "Seed of the generator's PRNG (default 1): same seed, same bytes", "S"},
        {"rate", 0, 0, G_OPTION_ARG_STRING, &r->rate,
         "Syscalls per simulated second the workload reaches on --cpu under 3g1g "
         "(the user work is solved by replaying it)", "R"},
        {"cpu", 'c', 0, G_OPTION_ARG_STRING, &r->cpu,
         "CPU preset a realised --rate is reached on (default " PRESET_DEFAULT ")", "P"},
        {"sysenter", 0, 0, G_OPTION_ARG_NONE, &r->sysenter,
         "Reach the --rate with sysenter entries instead of int 0x80", NULL},
        {"paging", 0, 0, G_OPTION_ARG_STRING, &r->paging,
         "Reach the --rate on 3g1g's page tables in this mode: " CLI_PAGING_HELP, "MODE"},
        {"clock-mhz", 0, 0, G_OPTION_ARG_STRING, &r->clock,
         "Nominal --rate instead: user time only, clock x IPC / R user instructions "
         "per syscall at this clock in MHz (default 2000, as import-strace)", "F"},
        {"ipc", 0, 0, G_OPTION_ARG_STRING, &r->ipc,
         "Instructions per cycle of a nominal --rate (default 1)", "F"},
        {"user-insns", 0, 0, G_OPTION_ARG_STRING, &r->insns,
         "User instructions before each syscall (default: the generator's)", "N"},
        {"pages", 0, 0, G_OPTION_ARG_STRING, &r->pages,
         "Working set of the user work in 4 KiB pages (default: the generator's)", "N"},
        {"pattern", 0, 0, G_OPTION_ARG_STRING, &r->pattern,
         "Access pattern of the user work: seq, rand or hot (default: the generator's)", "P"},
        {"param", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &r->params,
         "A generator parameter (repeatable); see the list below", "KEY=VALUE"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &r->out,
         "Write the trace here (default: standard output; .gz compresses)", "FILE"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &r->json,
         "Print a summary (what was written, the user work, the rate reached) as JSON; needs -o",
         NULL},
        {"csv", 0, 0, G_OPTION_ARG_NONE, &r->csv,
         "Print the same summary as CSV (one header row, one row); needs -o", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("NAME - write a synthetic workload trace");
    g_string_append(desc,
        "Writes a vmsplit trace (workloads/FORMAT.md) of a named workload. Every\n"
        "syscall of the loop follows one user event of the same pid: --user-insns\n"
        "instructions, or what --rate needs. --rate R is realised: the workload,\n"
        "replayed on --cpu under 3g1g, makes R syscalls per simulated second, kernel\n"
        "time included (a few replays solve for the user work; stderr says what was\n"
        "reached). With --clock-mhz or --ipc the rate is nominal instead: clock x IPC\n"
        "/ R user instructions per syscall, user time only, no replay. Output is\n"
        "deterministic for a seed. Exit status: 0 written, 2 bad input (an\n"
        "unreachable rate included). docs/generators.md has the details.\n\n"
        "Generators:\n");
    for (const Generator *const *g = gen_registry; *g; g++)
        describe_generator(desc, *g);
    g_string_append(desc, "\nExample:\n  vmsplit gen null --count 1000000 -o null.vmt.gz\n"
                          "  vmsplit gen db --rate 10000 --cpu core2 --param procs=8 -o db.vmt\n");
    g_option_context_set_description(ctx, desc->str);
    g_option_context_add_main_entries(ctx, entries, NULL);
    return ctx;
}

int cmd_gen(int argc, char **argv)
{
    RawArgs r = {0};
    GString *desc = g_string_new(NULL);
    GOptionContext *ctx = option_context(&r, desc);
    bool parsed = cli_parse(ctx, &argc, &argv, CMD);
    g_option_context_free(ctx);
    g_string_free(desc, TRUE);
    GenOptions o;
    const Generator *gen = NULL;
    g_autoptr(GString) names = g_string_new(NULL);
    for (const Generator *const *g = gen_registry; *g; g++)
        g_string_append_printf(names, "%s%s", names->len ? ", " : "", (*g)->name);
    int status;
    if (!parsed)
        status = VMS_EXIT_USAGE;
    else if (argc != 2)
        status = usage_error(argc < 2 ? "expected a generator NAME (%s)"
                                      : "expected exactly one generator NAME (%s)", names->str);
    else if (!(gen = gen_find(argv[1]))) {
        fprintf(stderr, "vmsplit " CMD ": unknown generator '%s': expected one of %s "
                "(see 'vmsplit " CMD " --help')\n", argv[1], names->str);
        status = VMS_EXIT_USAGE;
    } else
        status = to_options(&r, &o);
    if (status >= 0) {
        raw_args_clear(&r);
        return status;
    }
    GError *err = NULL;
    bool ok = true;
    Preset *p = NULL;
    g_autofree char *on = NULL;
    if (o.rate > 0 && !r.clock && !r.ipc) {
        GenRateResult res;
        GenRateTarget t = { .rate = o.rate, .sysenter = r.sysenter };
        if (!cli_opt_paging(CMD, r.paging, &t.paging)) {
            raw_args_clear(&r);
            return VMS_EXIT_USAGE;
        }
        ok = (p = preset_load(r.cpu ? r.cpu : PRESET_DEFAULT, &err)) != NULL;
        t.preset = p;
        ok = ok && gen_rate_solve(gen, &o, &t, &res, &err);
        if (ok) {
            on = g_strdup_printf("%s, 3g1g, %s%s", p->name, r.sysenter ? "sysenter" : "int 0x80",
                                 t.paging == PAGING_LEGACY ? ", 32-bit paging" : "");
            fprintf(stderr, "vmsplit " CMD ": --rate %g: %.0f syscalls/s realised on %s with "
                    "%" G_GUINT64_FORMAT " user instructions per syscall (%u replays)\n",
                    o.rate, res.realised, on, res.user_insns, res.rounds);
            o.rate_target = o.rate;
            o.rate_realised = res.realised;
            o.rate_on = on;
            o.rate = 0;
            o.have_user_insns = true;
            o.user_insns = res.user_insns;
        }
    }
    ok = ok && gen_write(gen, &o, r.out ? r.out : "-", &err);
    if (ok && r.json) {
        JsonBuilder *b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "generator");
        json_builder_add_string_value(b, gen->name);
        json_builder_set_member_name(b, "output");
        json_builder_add_string_value(b, r.out);
        json_builder_set_member_name(b, "count");
        json_builder_add_int_value(b, (gint64)o.count);
        json_builder_set_member_name(b, "seed");
        json_builder_add_int_value(b, (gint64)o.seed);
        json_builder_set_member_name(b, "user_insns_per_syscall");
        json_builder_add_int_value(b, (gint64)gen_user_insns(gen, &o));
        if (o.rate_on) {
            json_builder_set_member_name(b, "rate_target_per_s");
            json_builder_add_double_value(b, o.rate_target);
            json_builder_set_member_name(b, "rate_realised_per_s");
            json_builder_add_double_value(b, o.rate_realised);
            json_builder_set_member_name(b, "rate_on");
            json_builder_add_string_value(b, o.rate_on);
        } else if (o.rate > 0) {
            json_builder_set_member_name(b, "rate_nominal_per_s");
            json_builder_add_double_value(b, o.rate);
        }
        json_builder_end_object(b);
        cli_print_json(b);
    }
    if (ok && r.csv) {
        char cnt[24], seed[24], insns[24], target[32] = "", real[32] = "";
        g_snprintf(cnt, sizeof cnt, "%" G_GUINT64_FORMAT, (guint64)o.count);
        g_snprintf(seed, sizeof seed, "%" G_GUINT64_FORMAT, (guint64)o.seed);
        g_snprintf(insns, sizeof insns, "%" G_GUINT64_FORMAT, (guint64)gen_user_insns(gen, &o));
        if (o.rate_on) {
            g_ascii_formatd(target, sizeof target, "%.1f", o.rate_target);
            g_ascii_formatd(real, sizeof real, "%.1f", o.rate_realised);
        } else if (o.rate > 0)
            g_ascii_formatd(target, sizeof target, "%.1f", o.rate);
        static const char *const head[] = { "generator", "output", "count", "seed",
                                            "user_insns_per_syscall",
                                            "rate_target_syscalls_per_s",
                                            "rate_realised_syscalls_per_s", "rate_on" };
        const char *row[] = { gen->name, r.out, cnt, seed, insns, target, real,
                              o.rate_on ? o.rate_on : (o.rate > 0 ? "nominal" : "") };
        GString *csv = g_string_new(NULL);
        csv_append_record(csv, head, G_N_ELEMENTS(head));
        csv_append_record(csv, row, G_N_ELEMENTS(row));
        fputs(csv->str, stdout);
        g_string_free(csv, TRUE);
    }
    preset_free(p);
    raw_args_clear(&r);
    return ok ? VMS_EXIT_OK : cli_fail(CMD, err);
}
