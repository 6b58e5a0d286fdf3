/* vmsplit: the command-line front end. It only dispatches to one file per
 * subcommand (src/cli/commands/cmd_*.c); everything they do is a library
 * call, reachable from the tests. */
#include "config.h"
#include "cli/commands.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

const VmsCommand vms_commands[] = {
    /* name, function, one-line summary */
    {"walk", cmd_walk, "explain one PAE translation on a machine image"},
    {"claim", cmd_claim, "the 2003 seeds' figures: reproduced, explained or refuted, with plots"},
    {"replay", cmd_replay, "replay a syscall trace on a simulated machine under one layout"},
    {"compare", cmd_compare, "replay one trace under several layouts, side by side, with where the extra cycles went"},
    {"syscall", cmd_syscall, "time one system call through each layout's real entry/exit stubs"},
    {"tlbsim", cmd_tlbsim, "replay a Valgrind Lackey memory trace through the TLBs and caches"},
    {"meminfo", cmd_meminfo, "lowmem, highmem and mem_map after boot for a RAM size and layout"},
    {"presets", cmd_presets, "list the CPU presets, or print one resolved"},
    {"sweep", cmd_sweep, "run a parameter sweep (parallel, resumable, shardable) into a CSV"},
    {"merge", cmd_merge, "combine the CSVs of a sharded sweep, checking no point is missing or doubled"},
    {"plot", cmd_plot, "plot a sweep or compare CSV with gnuplot (PNG, SVG, PDF)"},
    {"import-strace", cmd_import_strace, "convert strace -f -tt -T output to a vmsplit trace"},
    {"import-capture", cmd_import_capture, "convert a vmcap (Valgrind) capture to a version-2 trace with references"},
    {"gen", cmd_gen, "write a synthetic workload trace (null, pipe, fileio, db, net, compute)"},
    {"run", cmd_run, "run a guest program on the simulated i686 core, count its cycles"},
    {"calibrate", cmd_calibrate, "fit a preset's ranged estimates to published measurements"},
    {"validate", cmd_validate, "every published measurement against the model, with its error"},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: vmsplit COMMAND [OPTIONS] [ARGS]\n\n"
            "vmsplit %s: a cycle-level simulator of the i686 PAE MMU and TLB that\n"
            "measures what separate kernel and user page tables cost (3G/1G, 4G/4G, KPTI).\n\n"
            "Commands:\n",
            VMSPLIT_VERSION);
    for (const VmsCommand *c = vms_commands; c->name; c++)
        fprintf(out, "  %-14s %s\n", c->name, c->summary);
    fprintf(out, "\n'vmsplit COMMAND --help' or 'vmsplit help COMMAND' shows a command's options.\n");
}

/* A command's results go to standard output: if they could not all be
 * written there (a full disk under `> out.txt`), the run did not produce
 * them, and must not end in status 0 (coreutils' close_stdout does the
 * same). The status is 2, as for an output file that cannot be written. */
static int finish(int rc)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vmsplit: writing the results to standard output failed%s%s\n",
                errno ? ": " : "", errno ? g_strerror(errno) : "");
        return rc ? rc : 2;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "help") && argc == 3) {
        /* vmsplit help CMD: the command's own --help. */
        for (const VmsCommand *c = vms_commands; c->name; c++)
            if (!strcmp(argv[2], c->name)) {
                char *args[] = {argv[2], (char *)"--help", NULL};
                char *prg = g_strconcat("vmsplit ", c->name, NULL);
                g_set_prgname(prg);
                g_free(prg);
                return finish(c->run(2, args));
            }
        fprintf(stderr, "vmsplit help: unknown command '%s'\n\n", argv[2]);
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return finish(0);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("vmsplit %s\n", VMSPLIT_VERSION);
        return finish(0);
    }
    for (const VmsCommand *c = vms_commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) {
            /* GOption's usage line reads "Usage: vmsplit NAME [OPTION...]". */
            char *prg = g_strconcat("vmsplit ", c->name, NULL);
            g_set_prgname(prg);
            g_free(prg);
            return finish(c->run(argc - 1, argv + 1));
        }
    fprintf(stderr, "vmsplit: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
