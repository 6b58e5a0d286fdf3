/* vmsplit plot: graphs of sweep and compare CSVs through gnuplot
 * (src/report/plot.h, scripts in plots/). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "report/plot.h"

#include <stdio.h>

static char *kinds_description(void)
{
    GString *s = g_string_new("Kinds (default: from the sweep's record CSV.meta.json, or the CSV's columns):\n");
    for (const PlotKind *const *k = plot_kind_all(); *k; k++) {
        g_string_append_printf(s, "  %-9s %s\n            columns:", (*k)->name, (*k)->summary);
        for (const char *const *c = (*k)->required; *c; c++)
            g_string_append_printf(s, " %s", *c);
        if (!(*k)->required[0])
            g_string_append(s, " dtlb_entries or itlb_entries; dtlb_miss_pct, itlb_miss_pct or overhead_pct");
        g_string_append_c(s, '\n');
    }
    g_string_append(s,
        "\n-o x.png writes a PNG (pngcairo), -o x.svg an SVG, -o x.pdf a PDF (pdfcairo),\n"
        "-o x (no extension) both x.png and x.svg; any other extension is an error.\n"
        "gnuplot is found on PATH or through VMSPLIT_GNUPLOT; the scripts (plots/*.gp,\n"
        "also usable by hand) through VMSPLIT_PLOTS_DIR, the source tree or the installed\n"
        "data directory. See docs/sweep.md.");
    return g_string_free(s, FALSE);
}

int cmd_plot(int argc, char **argv)
{
    char *kind = NULL, *out = NULL, *title = NULL;
    gboolean verbose = FALSE;
    GOptionEntry entries[] = {
        {"kind", 'k', 0, G_OPTION_ARG_STRING, &kind, "overhead, tlb, latency, lowmem or kpti", "KIND"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Image to write: .png, .svg, .pdf, or a stem for .png and .svg (required)", "FILE"},
        {"title", 't', 0, G_OPTION_ARG_STRING, &title, "Title instead of the script's", "TEXT"},
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Show gnuplot's messages", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("CSV - plot a sweep or compare CSV with gnuplot");
    g_option_context_add_main_entries(ctx, entries, NULL);
    char *desc = kinds_description();
    g_option_context_set_description(ctx, desc);
    g_free(desc);
    int status = VMS_EXIT_USAGE;
    if (!cli_parse(ctx, &argc, &argv, "plot"))
        goto out;
    if (argc != 2 || !out) {
        fprintf(stderr, "vmsplit plot: expected one CSV and -o FILE (see 'vmsplit plot --help')\n");
        goto out;
    }
    PlotOptions o = {kind, title, verbose};
    GError *err = NULL;
    status = plot_csv(argv[1], out, &o, &err) ? VMS_EXIT_OK : cli_fail("plot", err);
out:
    g_free(kind);
    g_free(out);
    g_free(title);
    g_option_context_free(ctx);
    return status;
}
