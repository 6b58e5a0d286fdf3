/* vmsplit import-strace: real strace output to a vmsplit trace.
 *
 *   vmsplit import-strace [--clock-mhz F] [--ipc F] [--overhead-us F]
 *                         [--block-us F] [--user-pages N] [--user-pattern P]
 *                         [--order block|interleave] [--slice-ms F] [--pid N]
 *                         [--command TEXT] [--header KEY=VALUE]...
 *                         [--strict] [-o OUT] FILE|-
 *
 * The library does the work (src/replay/strace_import.c); this file parses
 * options and prints the summary on stderr.
 *
 * Exit: 0 imported (lines that could not be parsed are counted and shown,
 * not fatal), 2 bad input (options, unreadable file, or with --strict the
 * first unparseable line). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "replay/strace_import.h"

#include <glib/gstdio.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CMD "import-strace"

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "vmsplit " CMD ": ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, " (see 'vmsplit " CMD " --help')\n");
    return VMS_EXIT_USAGE;
}

/* A number from an option: finite, and >= min (> min when strict_min). */
static bool parse_number(const char *s, double min, bool strict_min, double *out)
{
    char *end = NULL;
    double v = g_ascii_strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < min || (strict_min && v == min))
        return false;
    *out = v;
    return true;
}

static gint by_count(gconstpointer a, gconstpointer b, gpointer names)
{
    guint ca = GPOINTER_TO_UINT(g_hash_table_lookup(names, *(char *const *)a));
    guint cb = GPOINTER_TO_UINT(g_hash_table_lookup(names, *(char *const *)b));
    return ca != cb ? (ca < cb ? 1 : -1) : strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_unknown(GHashTable *names)
{
    guint n = 0;
    gpointer *keys = g_hash_table_get_keys_as_array(names, &n);
    g_qsort_with_data(keys, (gint)n, sizeof *keys, by_count, names);
    fprintf(stderr, "  unknown syscalls (generic profile in a replay):");
    for (guint i = 0; i < n && i < 10; i++)
        fprintf(stderr, " %s x%u", (char *)keys[i],
                GPOINTER_TO_UINT(g_hash_table_lookup(names, keys[i])));
    fprintf(stderr, "%s\n", n > 10 ? " ..." : "");
    g_free(keys);
}

static void print_summary(const char *in, const StraceImportStats *s,
                          const StraceImportOptions *o)
{
    FILE *f = stderr;
    fprintf(f, "vmsplit " CMD ": %s: %" G_GUINT64_FORMAT " lines -> %" G_GUINT64_FORMAT
            " events: %" G_GUINT64_FORMAT " syscalls, %" G_GUINT64_FORMAT " user work, %"
            G_GUINT64_FORMAT " switches; %" G_GUINT64_FORMAT " pids (%" G_GUINT64_FORMAT
            " forks, %" G_GUINT64_FORMAT " execs, %" G_GUINT64_FORMAT " exits, %"
            G_GUINT64_FORMAT " signals)\n",
            in, s->lines, s->events, s->syscalls, s->user_events, s->switches, s->pids,
            s->forks, s->execs, s->exits, s->signals);
    fprintf(f, "  unfinished/resumed pairs joined: %" G_GUINT64_FORMAT
            "; never resumed: %" G_GUINT64_FORMAT "; resumed without start: %" G_GUINT64_FORMAT
            "; detached: %" G_GUINT64_FORMAT "\n",
            s->joined, s->unfinished_lost, s->resumed_orphan, s->detached);
    fprintf(f, "  bytes copied: %" G_GUINT64_FORMAT " from user, %" G_GUINT64_FORMAT
            " to user\n", s->bytes_in, s->bytes_out);
    fprintf(f, "  user work: %" G_GUINT64_FORMAT " instructions (clock %g MHz x IPC %g, %g us"
            " tracer overhead removed per gap); median gap %.1f us over %" G_GUINT64_FORMAT
            " gaps\n", s->user_insns, o->clock_mhz, o->ipc, o->overhead_us, s->gap_median_us,
            s->gaps);
    if (s->unknown_syscalls)
        print_unknown(s->unknown_names);
    if (s->roots > 1)
        fprintf(f, "  %" G_GUINT64_FORMAT " pids have no fork in the trace (attached, or their "
                "parent's clone could not be told)\n", s->roots);
    if (s->gaps_capped)
        fprintf(f, "  %" G_GUINT64_FORMAT " gaps longer than 10^15 instructions (a clock step?) "
                "were cut to that\n", s->gaps_capped);
    if (s->misattributed)
        fprintf(f, "  %" G_GUINT64_FORMAT " children were announced for the wrong clone\n",
                s->misattributed);
    if (s->notes)
        fprintf(f, "  strace remarks skipped: %" G_GUINT64_FORMAT "\n", s->notes);
    if (s->bad_lines) {
        fprintf(f, "  lines not imported: %" G_GUINT64_FORMAT
                " (use --strict to make them an error)\n", s->bad_lines);
        for (int i = 0; i < STRACE_IMPORT_SHOWN && s->shown[i]; i++)
            fprintf(f, "    %s\n", s->shown[i]);
        if (s->bad_lines > STRACE_IMPORT_SHOWN)
            fprintf(f, "    ... and %" G_GUINT64_FORMAT " more\n",
                    s->bad_lines - STRACE_IMPORT_SHOWN);
    }
}

/* The options as typed; converted and checked by to_options(). */
typedef struct {
    char *clock, *ipc, *overhead, *block, *pattern, *command, *out, *order, *slice;
    GStrv headers;
    gint pages, pid;
    gboolean strict, allow_empty;
} RawArgs;

static void raw_args_clear(RawArgs *r)
{
    g_free(r->clock), g_free(r->ipc), g_free(r->overhead), g_free(r->block);
    g_free(r->pattern), g_free(r->command), g_free(r->out), g_free(r->order);
    g_free(r->slice);
    g_strfreev(r->headers);
}

/* -1 when the options are good (o filled, pointing into r), else the exit
 * status after the message. */
static int to_options(const RawArgs *r, StraceImportOptions *o)
{
    strace_import_options_init(o);
    if (r->clock && !parse_number(r->clock, 0, true, &o->clock_mhz))
        return usage_error("--clock-mhz: expected a positive number, got '%s'", r->clock);
    if (r->ipc && !parse_number(r->ipc, 0, true, &o->ipc))
        return usage_error("--ipc: expected a positive number, got '%s'", r->ipc);
    if (r->overhead && !parse_number(r->overhead, 0, false, &o->overhead_us))
        return usage_error("--overhead-us: expected a number >= 0, got '%s'", r->overhead);
    if (r->block && !parse_number(r->block, 0, false, &o->block_us))
        return usage_error("--block-us: expected a number >= 0, got '%s'", r->block);
    if (r->pages < 1)
        return usage_error("%s", "--user-pages: expected 1 or more");
    o->user_pages = (uint32_t)r->pages;
    if (r->pattern && !trace_pattern_parse(r->pattern, &o->user_pattern))
        return usage_error("--user-pattern: expected seq, rand or hot, got '%s'", r->pattern);
    if (r->order && strcmp(r->order, "block") && strcmp(r->order, "interleave"))
        return usage_error("--order: expected block or interleave, got '%s'", r->order);
    if (r->order && !strcmp(r->order, "interleave"))
        o->order = STRACE_ORDER_INTERLEAVE;
    if (r->slice && !parse_number(r->slice, 0, true, &o->slice_ms))
        return usage_error("--slice-ms: expected a positive number, got '%s'", r->slice);
    if (r->pid < 0)
        return usage_error("%s", "--pid: expected a pid >= 0");
    o->default_pid = (uint32_t)r->pid;
    if (r->command && strpbrk(r->command, "\r\n"))
        return usage_error("%s", "--command: expected one line");
    o->command = r->command;
    for (char **kv = r->headers; kv && *kv; kv++)
        if (!cli_header_kv_valid(*kv))
            return usage_error("--header: expected KEY=VALUE with KEY of [a-z0-9-], got '%s'",
                               *kv);
    o->header_extra = r->headers;
    o->strict = r->strict;
    return -1;
}

static GOptionContext *option_context(RawArgs *r)
{
    GOptionEntry entries[] = {
        {"clock-mhz", 0, 0, G_OPTION_ARG_STRING, &r->clock,
         "Clock of the traced machine in MHz (default 2000; see /proc/cpuinfo there)", "F"},
        {"ipc", 0, 0, G_OPTION_ARG_STRING, &r->ipc,
         "Instructions per cycle of its user code (default 1)", "F"},
        {"overhead-us", 0, 0, G_OPTION_ARG_STRING, &r->overhead,
         "Tracer overhead to remove from each gap between syscalls (default 0)", "F"},
        {"block-us", 0, 0, G_OPTION_ARG_STRING, &r->block,
         "A syscall that can sleep and lasts this long is marked blocked (default 100)", "F"},
        {"user-pages", 0, 0, G_OPTION_ARG_INT, &r->pages,
         "Working set of the user work, in 4 KiB pages (default 16)", "N"},
        {"user-pattern", 0, 0, G_OPTION_ARG_STRING, &r->pattern,
         "Access pattern of the user work: seq, rand or hot (default hot)", "P"},
        {"order", 0, 0, G_OPTION_ARG_STRING, &r->order,
         "block: one CPU's schedule, a task runs until it blocks (default); "
         "interleave: the log's order, a switch wherever lines interleave", "O"},
        {"slice-ms", 0, 0, G_OPTION_ARG_STRING, &r->slice,
         "Time slice for --order block (default 100, Linux 2.6's)", "F"},
        {"pid", 0, 0, G_OPTION_ARG_INT, &r->pid,
         "Pid for lines strace printed without one (default 0)", "N"},
        {"command", 0, 0, G_OPTION_ARG_STRING, &r->command,
         "The traced command for the header (default: the first execve's argv)", "TEXT"},
        {"header", 0, 0, G_OPTION_ARG_STRING_ARRAY, &r->headers,
         "Extra header line @KEY VALUE (repeatable), e.g. captured=2026-12-03", "KEY=VALUE"},
        {"strict", 0, 0, G_OPTION_ARG_NONE, &r->strict,
         "Stop at the first line that cannot be parsed (exit 2)", NULL},
        {"allow-empty", 0, 0, G_OPTION_ARG_NONE, &r->allow_empty,
         "Write a trace without events rather than fail when nothing was imported", NULL},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &r->out,
         "Write the trace here (default: standard output; .gz compresses)", "OUT"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("FILE|- - convert strace output to a vmsplit trace");
    g_option_context_set_description(ctx,
        "Reads the output of 'strace -f -tt -T -o FILE cmd' (also without -f or -T,\n"
        "with -ttt or -r; gzip accepted) and writes a vmsplit trace\n"
        "(workloads/FORMAT.md). The gap between a process's syscalls becomes user\n"
        "work: (gap - overhead) x clock x IPC instructions. strace itself stretches\n"
        "every gap; measure its overhead on the traced machine (scripts/capture-traces\n"
        "does) and pass it with --overhead-us. A summary goes to stderr.\n"
        "Exit status: 0 imported, 2 bad input: a file in which no line is strace\n"
        "output (text, a Lackey trace, a vmsplit trace) imports nothing and is an\n"
        "error, its output removed, unless --allow-empty.\n\n"
        "Example:\n  strace -f -tt -T -o app.strace ./app\n"
        "  vmsplit import-strace --clock-mhz 2445 --overhead-us 30 -o app.vmt app.strace\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    return ctx;
}

int cmd_import_strace(int argc, char **argv)
{
    RawArgs r = {.pages = STRACE_DEFAULT_USER_PAGES};
    GOptionContext *ctx = option_context(&r);
    bool parsed = cli_parse(ctx, &argc, &argv, CMD);
    g_option_context_free(ctx);
    StraceImportOptions o;
    int status;
    if (!parsed)
        status = VMS_EXIT_USAGE;
    else if (argc != 2)
        status = usage_error("%s", argc < 2 ? "expected one input FILE (or - for stdin)"
                                            : "expected exactly one input FILE");
    else
        status = to_options(&r, &o);
    if (status >= 0) {
        raw_args_clear(&r);
        return status;
    }
    StraceImportStats stats = {0};
    GError *err = NULL;
    bool ok = strace_import_file(argv[1], r.out ? r.out : "-", &o, &stats, &err);
    if (ok || stats.lines)
        print_summary(argv[1], &stats, &o);
    if (ok && stats.events == 0 && !r.allow_empty) {
        /* Garbage in is not success out: nothing usable was found. */
        g_set_error(&err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: no strace line found in %" G_GUINT64_FORMAT " lines (expected the "
                    "output of 'strace -f -tt -T -o FILE cmd'; --allow-empty writes an "
                    "empty trace anyway)", argv[1], stats.lines);
        if (r.out && strcmp(r.out, "-"))
            g_remove(r.out);
        ok = false;
    }
    strace_import_stats_clear(&stats);
    raw_args_clear(&r);
    return ok ? VMS_EXIT_OK : cli_fail(CMD, err);
}
