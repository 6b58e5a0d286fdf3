/* vmsplit tlbsim: replay a Valgrind Lackey memory trace through the
 * modelled TLB hierarchy and caches (src/replay/tlbsim.h). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "preset/preset.h"
#include "mmu/cache.h"
#include "replay/tlbsim.h"
#include "tlb/hierarchy.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char *preset, *policy;
    int dtlb_entries, dtlb_ways, itlb_entries, itlb_ways, stlb_entries, stlb_ways;
    gint64 flush_every, max_refs, seed;
    gboolean large_pages, skip_bad, json, csv;
} Opts;

/* Apply "--X-entries/--X-ways" to one array. Ways default to the preset's
 * when they divide the new size, else the array becomes fully associative
 * only if the user says so: an invalid geometry is reported by the TLB. */
static void override(TlbGeom *g, int entries, int ways)
{
    if (entries == 0) {                  /* no such array (the second level) */
        g->entries = g->ways = 0;
        return;
    }
    if (entries > 0) {
        if (g->entries == g->ways)      /* fully associative stays so */
            g->ways = (unsigned)entries;
        g->entries = (unsigned)entries;
        if (!g->page_sizes)
            g->page_sizes = PRESET_PG_4K;
    }
    if (ways > 0)
        g->ways = (unsigned)ways;
}

static void print_cache(CacheHier *c, FILE *out)
{
    static const char *names[] = { "L1D", "L2", "L3" };
    const CacheStats *cs = cache_stats(c);
    for (unsigned i = 0; i < cache_levels(c); i++) {
        const CacheLevelStats *l = &cs->level[i];
        uint64_t n = l->hits + l->misses;
        fprintf(out, "  %-4s %14" G_GUINT64_FORMAT " hits %14" G_GUINT64_FORMAT
                     " misses  (%.2f%% miss)\n",
                names[i], l->hits, l->misses, n ? 100.0 * l->misses / n : 0.0);
    }
    fprintf(out, "  memory %12" G_GUINT64_FORMAT " references (%" G_GUINT64_FORMAT " uncached)\n",
            cs->mem, cs->uncached);
}

static void print_text(TlbSim *s, const Opts *o, const char *trace, double secs)
{
    const TlbSimCounters *c = tlbsim_counters(s);
    printf("vmsplit tlbsim: %s on %s (%s pages)\n\n", trace, o->preset,
           o->large_pages ? "2 MiB" : "4 KiB");
    for (size_t i = 0; i < tlbsim_counter_count(); i++)
        printf("  %-16s %16" G_GUINT64_FORMAT "   %s\n", tlbsim_counter_name(i),
               tlbsim_counter_value(c, i), tlbsim_counter_desc(i));
    printf("\nTLB\n");
    tlb_hier_print_stats(mmu_tlb(tlbsim_mmu(s)), stdout, true);
    printf("\nCaches (page-walk and data references)\n");
    print_cache(mmu_cache(tlbsim_mmu(s)), stdout);
    printf("\n  host speed       %16.0f references per second\n", secs > 0 ? c->refs / secs : 0);
    const char *text;
    uint64_t bad = tlbsim_first_bad(s, &text);
    if (c->bad_lines)
        fprintf(stderr, "vmsplit tlbsim: warning: %" G_GUINT64_FORMAT
                        " malformed lines skipped; first at line %" G_GUINT64_FORMAT ": '%s'\n",
                c->bad_lines, bad, text);
    if (c->folded)
        fprintf(stderr, "vmsplit tlbsim: warning: %" G_GUINT64_FORMAT
                        " addresses above 4 GiB were folded to 32 bits\n", c->folded);
}

static void print_json(TlbSim *s, const Opts *o, const char *trace)
{
    const TlbSimCounters *c = tlbsim_counters(s);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "trace");
    json_builder_add_string_value(b, trace);
    json_builder_set_member_name(b, "preset");
    json_builder_add_string_value(b, o->preset);
    json_builder_set_member_name(b, "page_size");
    json_builder_add_int_value(b, o->large_pages ? 2097152 : 4096);
    json_builder_set_member_name(b, "counters");
    json_builder_begin_object(b);
    for (size_t i = 0; i < tlbsim_counter_count(); i++) {
        json_builder_set_member_name(b, tlbsim_counter_name(i));
        json_builder_add_int_value(b, (gint64)tlbsim_counter_value(c, i));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "tlb");
    json_builder_begin_object(b);
    tlb_hier_stats_to_json(mmu_tlb(tlbsim_mmu(s)), b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "cache");
    json_builder_begin_array(b);
    CacheHier *ch = mmu_cache(tlbsim_mmu(s));
    const CacheStats *cs = cache_stats(ch);
    for (unsigned i = 0; i < cache_levels(ch); i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "level");
        json_builder_add_int_value(b, i + 1);
        json_builder_set_member_name(b, "hits");
        json_builder_add_int_value(b, (gint64)cs->level[i].hits);
        json_builder_set_member_name(b, "misses");
        json_builder_add_int_value(b, (gint64)cs->level[i].misses);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    cli_print_json(b);
}

static void print_csv(TlbSim *s, const Opts *o)
{
    const TlbSimCounters *c = tlbsim_counters(s);
    printf("preset,page_size");
    for (size_t i = 0; i < tlbsim_counter_count(); i++)
        printf(",%s", tlbsim_counter_name(i));
    printf(",");
    tlb_stats_csv_header(stdout, "tlb_");
    printf("\n%s,%d", o->preset, o->large_pages ? 2097152 : 4096);
    for (size_t i = 0; i < tlbsim_counter_count(); i++)
        printf(",%" G_GUINT64_FORMAT, tlbsim_counter_value(c, i));
    printf(",");
    tlb_stats_csv_row(stdout, tlb_hier_stats(mmu_tlb(tlbsim_mmu(s))));
    printf("\n");
}

int cmd_tlbsim(int argc, char **argv)
{
    /* -1: not given, the preset's. A size given means what it means in a
     * preset file: 0 is "no such array" (no second level), and a DTLB or
     * ITLB of 0 entries is refused. */
    Opts o = { .seed = 1, .dtlb_entries = -1, .itlb_entries = -1, .stlb_entries = -1 };
    GOptionEntry entries[] = {
        { "cpu", 'c', 0, G_OPTION_ARG_STRING, &o.preset, "CPU preset name or .ini file (default p4-northwood)", "P" },
        /* The name before the shared vocabulary (docs/options.md): kept, unlisted. */
        { "preset", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &o.preset, NULL, NULL },
        { "dtlb-entries", 0, 0, G_OPTION_ARG_INT, &o.dtlb_entries, "entries of the 4 KiB DTLB", "N" },
        { "dtlb-ways", 0, 0, G_OPTION_ARG_INT, &o.dtlb_ways, "ways of the 4 KiB DTLB (= entries: fully associative)", "N" },
        { "itlb-entries", 0, 0, G_OPTION_ARG_INT, &o.itlb_entries, "entries of the 4 KiB ITLB", "N" },
        { "itlb-ways", 0, 0, G_OPTION_ARG_INT, &o.itlb_ways, "ways of the 4 KiB ITLB", "N" },
        { "stlb-entries", 0, 0, G_OPTION_ARG_INT, &o.stlb_entries, "entries of the second-level TLB (0: none, as in a preset file)", "N" },
        { "stlb-ways", 0, 0, G_OPTION_ARG_INT, &o.stlb_ways, "ways of the second-level TLB", "N" },
        { "policy", 0, 0, G_OPTION_ARG_STRING, &o.policy, "replacement policy: lru, plru, fifo, random", "NAME" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &o.seed, "seed of the random policy (default 1)", "S" },
        { "large-pages", 0, 0, G_OPTION_ARG_NONE, &o.large_pages, "identity-map with 2 MiB pages instead of 4 KiB", NULL },
        { "flush-every", 0, 0, G_OPTION_ARG_INT64, &o.flush_every, "write CR3 every N references (flushes non-global entries)", "N" },
        { "max-refs", 0, 0, G_OPTION_ARG_INT64, &o.max_refs, "stop after N references", "N" },
        { "skip-bad", 0, 0, G_OPTION_ARG_NONE, &o.skip_bad, "count and skip malformed lines instead of failing", NULL },
        { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "print the statistics as JSON", NULL },
        { "csv", 0, 0, G_OPTION_ARG_NONE, &o.csv, "print the statistics as one CSV header and row", NULL },
        { NULL },
    };
    GOptionContext *ctx = g_option_context_new("TRACE - replay a Valgrind Lackey memory trace through the TLBs and caches");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "TRACE is the output of 'valgrind --tool=lackey --trace-mem=yes PROGRAM' (or '-' for\n"
        "stdin; gzip accepted). Fetches go to the ITLB, loads and stores to the DTLB, over\n"
        "identity-mapped user pages; misses are walked through real PAE page tables and\n"
        "every walk and data reference is timed in the preset's caches.\n\n"
        "Example: vmsplit tlbsim --dtlb-entries 32 --flush-every 10000 workloads/memtraces/qsortwords.lackey.gz");
    int rc = VMS_EXIT_USAGE;
    Preset *p = NULL;
    TlbSim *s = NULL;
    if (!cli_parse(ctx, &argc, &argv, "tlbsim"))
        goto out;
    if (argc != 2) {
        fprintf(stderr, "vmsplit tlbsim: expected one TRACE argument (see 'vmsplit tlbsim --help')\n");
        goto out;
    }
    if (o.json && o.csv) {
        fprintf(stderr, "vmsplit tlbsim: --json and --csv are exclusive\n");
        goto out;
    }
    if (o.flush_every < 0 || o.max_refs < 0 || o.dtlb_entries < -1 || o.dtlb_ways < 0 ||
        o.itlb_entries < -1 || o.itlb_ways < 0 || o.stlb_entries < -1 || o.stlb_ways < 0) {
        fprintf(stderr, "vmsplit tlbsim: sizes and counts must not be negative\n");
        goto out;
    }
    if (o.dtlb_entries == 0 || o.itlb_entries == 0) {
        fprintf(stderr, "vmsplit tlbsim: --%s: expected 1 or more entries (leave the option "
                "out for the preset's)\n", o.dtlb_entries == 0 ? "dtlb-entries" : "itlb-entries");
        goto out;
    }
    if (!o.preset)
        o.preset = g_strdup("p4-northwood");
    GError *err = NULL;
    p = preset_load(o.preset, &err);
    if (!p) {
        rc = cli_fail("tlbsim", err);
        goto out;
    }
    TlbHierConfig tc;
    tlb_hier_config_from_preset(&tc, p);
    override(&tc.dtlb_4k, o.dtlb_entries, o.dtlb_ways);
    override(&tc.itlb_4k, o.itlb_entries, o.itlb_ways);
    override(&tc.stlb, o.stlb_entries, o.stlb_ways);
    if (o.policy)
        tc.policy = o.policy;
    TlbSimConfig cfg = {
        .trace = argv[1], .preset = p, .tlb = &tc, .large_pages = o.large_pages,
        .flush_every = (uint64_t)o.flush_every, .skip_bad = o.skip_bad,
        .seed = (uint64_t)o.seed, .max_refs = (uint64_t)o.max_refs,
    };
    gint64 t0 = g_get_monotonic_time();
    s = tlbsim_run(&cfg, &err);
    double secs = (g_get_monotonic_time() - t0) / 1e6;
    if (!s) {
        rc = cli_fail("tlbsim", err);
        goto out;
    }
    if (tlbsim_counters(s)->refs == 0) {
        /* No reference at all (an empty file, or --skip-bad over a file of
         * another kind): bad input, not a result of zeros. */
        const char *first = NULL;
        uint64_t line = tlbsim_first_bad(s, &first);
        fprintf(stderr, "vmsplit tlbsim: %s: no Lackey reference found (expected 'I  ADDR,SIZE' "
                "or ' L|S|M ADDR,SIZE' lines from valgrind --tool=lackey --trace-mem=yes)",
                argv[1]);
        if (line)
            fprintf(stderr, "; %" G_GUINT64_FORMAT " lines skipped, the first at line %"
                    G_GUINT64_FORMAT ": '%s'", tlbsim_counters(s)->bad_lines, line, first);
        fprintf(stderr, "\n");
        goto out;
    }
    if (o.json)
        print_json(s, &o, argv[1]);
    else if (o.csv)
        print_csv(s, &o);
    else
        print_text(s, &o, argv[1], secs);
    rc = VMS_EXIT_OK;
out:
    tlbsim_free(s);
    preset_free(p);
    g_free(o.preset);
    g_free(o.policy);
    g_option_context_free(ctx);
    return rc;
}
