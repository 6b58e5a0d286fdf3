/* vmsplit merge: combine the CSVs of a sharded sweep (src/report/merge.h). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "report/merge.h"

#include <stdio.h>

int cmd_merge(int argc, char **argv)
{
    char *out = NULL;
    gboolean partial = FALSE, quiet = FALSE;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Merged CSV to write (required)", "FILE"},
        {"partial", 0, 0, G_OPTION_ARG_NONE, &partial,
         "Write what there is even if points are missing (still refuses doubled ones)", NULL},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No summary on stderr", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("SHARD.csv... - combine the CSVs of a sharded sweep");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Every input must come from the same 'vmsplit sweep' (its record, IN.csv.meta.json\n"
        "beside it, shards aside) with the same header. The merge fails (exit 2) if a\n"
        "point is doubled, is not part of the sweep, or -- without --partial -- is\n"
        "missing; the message names the file and line. The output (OUT and its record\n"
        "OUT.meta.json) equals what the unsharded sweep writes, rows in point order.\n"
        "A CSV from before the record moved out of the CSV ('# vmsplit-sweep' as its\n"
        "line 1) is read too: 'vmsplit merge OLD.csv -o NEW.csv' converts one. Example:\n"
        "  parallel vmsplit sweep --kind lowmem --ram 1G,4G,16G,64G --shard {}/4 -o part{}.csv ::: 1 2 3 4\n"
        "  vmsplit merge part1.csv part2.csv part3.csv part4.csv -o sweep.csv");
    int status = VMS_EXIT_USAGE;
    if (!cli_parse(ctx, &argc, &argv, "merge"))
        goto out;
    if (!out || argc < 2) {
        fprintf(stderr, "vmsplit merge: expected SHARD.csv... -o OUT.csv (see 'vmsplit merge --help')\n");
        goto out;
    }
    MergeOptions o = {partial};
    MergeResult res;
    GError *err = NULL;
    if (!merge_csv_files((const char *const *)argv + 1, (guint)(argc - 1), out, &o, &res, &err)) {
        status = cli_fail("merge", err);
        goto out;
    }
    if (!quiet)
        fprintf(stderr, "%s: %u of %u points from %d files\n", out, res.present, res.points,
                argc - 1);
    status = VMS_EXIT_OK;
out:
    g_free(out);
    g_option_context_free(ctx);
    return status;
}
