/* vmsplit import-capture: the streams of the vmcap Valgrind tool to a
 * version-2 trace with the program's own references.
 *
 *   vmsplit import-capture [--block-us N] [--slice-insns N] [--stack-reserve SIZE]
 *                          [--killed-signal SIG] [--drop-unmapped]
 *                          [--command TEXT] [--captured TEXT] [--host TEXT]
 *                          [--window TEXT] [--window-lines N] [--header KEY=VALUE]... [-o OUT] DIR
 *
 * The library does the work (src/replay/capture_import.c); this file parses
 * options and prints the summary on stderr. scripts/capture runs the
 * program under the tool and then this command.
 *
 * Exit: 0 converted (what could not be followed is listed), 2 bad input (a
 * cut or damaged stream, a process ended without an exit call and no
 * --killed-signal, references outside every mapping without
 * --drop-unmapped, a program too large for the folded window). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "replay/capture_import.h"

#include <stdio.h>
#include <string.h>

#define CMD "import-capture"

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "vmsplit " CMD ": ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, " (see 'vmsplit " CMD " --help')\n");
    return VMS_EXIT_USAGE;
}

typedef struct {
    char *block, *slice, *stack, *killed, *command, *captured, *host, *window, *out, *wlines;
    GStrv headers;
    gboolean drop;
} RawArgs;

static void raw_args_clear(RawArgs *r)
{
    g_free(r->block), g_free(r->slice), g_free(r->stack), g_free(r->killed);
    g_free(r->command), g_free(r->captured), g_free(r->host), g_free(r->window);
    g_free(r->out), g_free(r->wlines);
    g_strfreev(r->headers);
}

static bool parse_u64(const char *s, uint64_t min, uint64_t *out)
{
    char *end = NULL;
    guint64 v = g_ascii_strtoull(s, &end, 10);
    if (!*s || end == s || *end || v < min || s[0] == '-')
        return false;
    *out = v;
    return true;
}

static bool one_line(const char *s) { return !s || !strpbrk(s, "\r\n"); }

static int to_options(const RawArgs *r, CaptureImportOptions *o)
{
    capture_import_options_init(o);
    if (r->block && !parse_u64(r->block, 0, &o->block_us))
        return usage_error("--block-us: expected a whole number >= 0, got '%s'", r->block);
    if (r->slice && !parse_u64(r->slice, 1, &o->slice_insns))
        return usage_error("--slice-insns: expected a whole number >= 1, got '%s'", r->slice);
    if (r->wlines && !parse_u64(r->wlines, 1, &o->window_lines))
        return usage_error("--window-lines: expected a whole number >= 1, got '%s'", r->wlines);
    if (r->stack && !cli_parse_size(r->stack, &o->stack_reserve))
        return usage_error("--stack-reserve: expected a size (8M, 4096K, bytes), got '%s'", r->stack);
    if (r->killed) {
        if (!g_str_has_prefix(r->killed, "SIG") || strlen(r->killed) > 20 ||
            strspn(r->killed, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != strlen(r->killed))
            return usage_error("--killed-signal: expected a signal name such as SIGSEGV, got '%s'",
                               r->killed);
        o->killed_signal = r->killed;
    }
    if (!one_line(r->command) || !one_line(r->captured) || !one_line(r->host) || !one_line(r->window))
        return usage_error("%s", "--command, --captured, --host, --window: expected one line each");
    o->command = r->command;
    o->captured = r->captured;
    o->host = r->host;
    o->window = r->window;
    o->drop_unmapped = r->drop;
    for (char **kv = r->headers; kv && *kv; kv++)
        if (!cli_header_kv_valid(*kv))
            return usage_error("--header: expected KEY=VALUE with KEY of [a-z0-9-], got '%s'", *kv);
    o->header_extra = r->headers;
    return -1;
}

static GOptionContext *option_context(RawArgs *r)
{
    GOptionEntry entries[] = {
        {"block-us", 0, 0, G_OPTION_ARG_STRING, &r->block,
         "A syscall that can sleep and lasts this long is blocked and yields the CPU (default 100)", "N"},
        {"slice-insns", 0, 0, G_OPTION_ARG_STRING, &r->slice,
         "A process yields at its next syscall after this many user instructions (default 100000000)", "N"},
        {"stack-reserve", 0, 0, G_OPTION_ARG_STRING, &r->stack,
         "Folded room under each stack for its growth (default 8M, RLIMIT_STACK's default)", "SIZE"},
        {"killed-signal", 0, 0, G_OPTION_ARG_STRING, &r->killed,
         "Write a process that ended without an exit call as killed by this signal "
         "(default: such a process is an error)", "SIG"},
        {"drop-unmapped", 0, 0, G_OPTION_ARG_NONE, &r->drop,
         "Drop and count references outside every mapping (default: an error)", NULL},
        {"command", 0, 0, G_OPTION_ARG_STRING, &r->command,
         "The captured command for the header (default: the first process's arguments)", "TEXT"},
        {"captured", 0, 0, G_OPTION_ARG_STRING, &r->captured,
         "When it was captured (default: the oldest stream's time)", "TEXT"},
        {"host", 0, 0, G_OPTION_ARG_STRING, &r->host,
         "Where it was captured (default: this host's name)", "TEXT"},
        {"window", 0, 0, G_OPTION_ARG_STRING, &r->window,
         "Which part of the run was kept, when not all of it (header @window)", "TEXT"},
        {"window-lines", 0, 0, G_OPTION_ARG_STRING, &r->wlines,
         "Keep only a window: stop at the first syscall after N reference lines (header @window)", "N"},
        {"header", 0, 0, G_OPTION_ARG_STRING_ARRAY, &r->headers,
         "Extra header line @KEY VALUE (repeatable), e.g. minor-faults=1234", "KEY=VALUE"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &r->out,
         "Write the trace here (default: standard output; .gz compresses)", "OUT"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("DIR - convert a vmcap capture to a version-2 trace");
    g_option_context_set_description(ctx,
        "Reads the streams (DIR/vmcap.PID.SEQ) that the vmcap Valgrind tool wrote for\n"
        "each process image of a run and writes one version-2 trace\n"
        "(workloads/FORMAT.md): the program's own instruction fetches, loads, stores\n"
        "and modifies between its syscalls, folded into the i686 user space, with\n"
        "its syscalls, forks, threads, execs, exits and mappings, on one CPU.\n"
        "scripts/capture runs a command under the tool and then this. A summary and\n"
        "what could not be followed go to stderr.\n"
        "Exit status: 0 converted, 2 bad input.\n\n"
        "Example:\n  scripts/capture -o app.vmt.gz -- ./app args\n"
        "  vmsplit import-capture -o app.vmt.gz /tmp/capture-dir\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    return ctx;
}

static void print_summary(const char *dir, const CaptureImportStats *s)
{
    FILE *f = stderr;
    fprintf(f, "vmsplit " CMD ": %s: %" G_GUINT64_FORMAT " streams, %" G_GUINT64_FORMAT
            " processes, %" G_GUINT64_FORMAT " threads created, %" G_GUINT64_FORMAT " forks, %"
            G_GUINT64_FORMAT " execs, %" G_GUINT64_FORMAT " syscalls (%" G_GUINT64_FORMAT
            " unknown), %" G_GUINT64_FORMAT " switches\n",
            dir, s->streams, s->processes, s->threads, s->forks, s->execs, s->syscalls,
            s->unknown_syscalls, s->switches);
    fprintf(f, "  user: %" G_GUINT64_FORMAT " instructions in %" G_GUINT64_FORMAT
            " refs events; references: %" G_GUINT64_FORMAT " written as %" G_GUINT64_FORMAT
            " lines (%.2f per line; %" G_GUINT64_FORMAT " in the whole capture)\n",
            s->insns, s->refs_blocks, s->refs_written, s->refs_merged,
            s->refs_merged ? (double)s->refs_written / (double)s->refs_merged : 0.0, s->refs_raw);
    fprintf(f, "  folded: at most %" G_GUINT64_FORMAT " KiB of one address space\n",
            s->fold_peak / 1024);
    if (s->unmapped)
        fprintf(f, "  dropped: %" G_GUINT64_FORMAT " references outside every mapping\n",
                s->unmapped);
    if (s->killed)
        fprintf(f, "  %" G_GUINT64_FORMAT " processes ended without an exit call\n", s->killed);
    if (s->notes && s->notes->len)
        fprintf(f, "  not followed:\n%s", s->notes->str);
}

int cmd_import_capture(int argc, char **argv)
{
    RawArgs r = {0};
    GOptionContext *ctx = option_context(&r);
    bool parsed = cli_parse(ctx, &argc, &argv, CMD);
    g_option_context_free(ctx);
    CaptureImportOptions o;
    int status;
    if (!parsed)
        status = VMS_EXIT_USAGE;
    else if (argc != 2)
        status = usage_error("%s", argc < 2 ? "expected the capture DIR" : "expected exactly one DIR");
    else
        status = to_options(&r, &o);
    if (status >= 0) {
        raw_args_clear(&r);
        return status;
    }
    CaptureImportStats stats = {0};
    GError *err = NULL;
    bool ok = capture_import_dir(argv[1], r.out ? r.out : "-", &o, &stats, &err);
    if (ok)
        print_summary(argv[1], &stats);
    capture_import_stats_clear(&stats);
    raw_args_clear(&r);
    return ok ? VMS_EXIT_OK : cli_fail(CMD, err);
}
