/* vmsplit sweep: run a parameter sweep into a CSV (src/report/sweep.h).
 * The options depend on --kind: each runner declares its parameters, and
 * this file turns them into long options. */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "report/csv.h"
#include "report/sweep.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The value of --kind, found before option parsing because it decides
 * which options exist. NULL if absent. */
static const char *find_kind(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], "--kind") && i + 1 < argc)
            return argv[i + 1];
        if (!strncmp(argv[i], "--kind=", 7))
            return argv[i] + 7;
    }
    return NULL;
}

/* --help text: every kind with its parameters. */
static char *kinds_description(void)
{
    GString *s = g_string_new("Kinds and their parameters (lists are comma-separated; "
                              "the sweep runs their cartesian product):\n");
    for (const SweepRunner *const *r = sweep_runner_all(); *r; r++) {
        g_string_append_printf(s, "\n  --kind %s: %s\n", (*r)->kind, (*r)->summary);
        for (size_t i = 0; i < (*r)->n_params; i++) {
            const SweepParam *p = &(*r)->params[i];
            if (p->type == SWEEP_PARAM_PATH)
                g_string_append_printf(s, "    %-18s %s (positional arguments)\n",
                                       p->column, p->help);
            else
                g_string_append_printf(s, "    --%-16s %s%s%s%s\n", p->option, p->help,
                                       p->defaults ? " [default: " : " [required]",
                                       p->defaults ? p->defaults : "", p->defaults ? "]" : "");
        }
        g_string_append(s, "    CSV columns:");
        for (size_t i = 0; i < (*r)->n_params; i++)
            g_string_append_printf(s, " %s", (*r)->params[i].column);
        for (size_t i = 0; i < (*r)->n_figures; i++)
            g_string_append_printf(s, " %s", (*r)->figures[i]);
        g_string_append_c(s, '\n');
    }
    g_string_append(s, "\nThe CSV's first line is its header; the sweep's definition goes "
                       "beside it to FILE.meta.json (keep the two together). Rerunning "
                       "with the same -o resumes; --shard K/N runs one slice (combine with "
                       "'vmsplit merge'). Exit status: 0 done, 2 bad input or a failing "
                       "point. See docs/sweep.md.");
    return g_string_free(s, FALSE);
}

/* The runner's parameters as string-array options (vals[i] receives
 * them), in the main group so that --help lists them. */
static void add_param_entries(GOptionContext *ctx, const SweepRunner *r, char ***vals)
{
    GOptionEntry *e = g_new0(GOptionEntry, r->n_params + 1);
    size_t n = 0;
    for (size_t i = 0; i < r->n_params; i++) {
        if (r->params[i].type == SWEEP_PARAM_PATH)
            continue;
        e[n] = (GOptionEntry){r->params[i].option, 0, 0, G_OPTION_ARG_STRING_ARRAY,
                              &vals[i], r->params[i].help, "LIST"};
        n++;
    }
    g_option_context_add_main_entries(ctx, e, NULL);
    g_free(e);  /* GLib copies the entries */
}

/* Build the definition from the parsed options and positional args. */
static SweepDef *build_def(const SweepRunner *r, char ***vals, int argc, char **argv,
                           const char *shard, GError **err)
{
    SweepDef *d = sweep_def_new(r);
    int path_param = -1;
    bool ok = true;
    for (size_t i = 0; ok && i < r->n_params; i++) {
        if (r->params[i].type == SWEEP_PARAM_PATH)
            path_param = (int)i;
        for (char **v = vals[i]; ok && v && *v; v++)
            ok = sweep_def_add_list(d, r->params[i].column, *v, err);
    }
    if (ok && path_param < 0 && argc > 1) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "unexpected argument '%s' (a %s sweep takes no input files)", argv[1],
                    r->kind);
        ok = false;
    }
    for (int a = 1; ok && path_param >= 0 && a < argc; a++)
        ok = sweep_def_add_value(d, r->params[path_param].column, argv[a], err);
    if (ok && shard)
        ok = sweep_def_set_shard(d, shard, err);
    if (ok)
        ok = sweep_def_finish(d, err);
    if (!ok) {
        sweep_def_free(d);
        return NULL;
    }
    return d;
}

int cmd_sweep(int argc, char **argv)
{
    const char *kind_arg = find_kind(argc, argv);
    const SweepRunner *r = NULL;
    GError *err = NULL;
    if (kind_arg && !(r = sweep_runner_lookup(kind_arg, &err)))
        return cli_fail("sweep", err);

    char *kind = NULL, *shard = NULL, *out = NULL;
    gint jobs = 0;
    gboolean fsync_rows = FALSE, quiet = FALSE, json = FALSE, csv = FALSE;
    GOptionEntry entries[] = {
        {"kind", 'k', 0, G_OPTION_ARG_STRING, &kind, "What each point runs (see below)", "KIND"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "CSV to write or resume (required)", "FILE"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Worker threads [default: number of cores]", "N"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &shard, "Run only slice K of N (1 <= K <= N)", "K/N"},
        {"fsync", 0, 0, G_OPTION_ARG_NONE, &fsync_rows, "fsync after each row, not only flush", NULL},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress bar and no summary", NULL},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json,
         "Print the summary (points, resumed, computed) as JSON on stdout", NULL},
        {"csv", 0, 0, G_OPTION_ARG_NONE, &csv,
         "Print the same summary as CSV on stdout (one header row, one row)", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    bool takes_files = false;
    for (size_t i = 0; r && i < r->n_params; i++)
        takes_files = takes_files || r->params[i].type == SWEEP_PARAM_PATH;
    GOptionContext *ctx = g_option_context_new(takes_files ? "[FILE...] - run a parameter sweep into a CSV"
                                                           : "- run a parameter sweep into a CSV");
    g_option_context_add_main_entries(ctx, entries, NULL);
    char ***vals = r ? g_new0(char **, r->n_params) : NULL;
    if (r)
        add_param_entries(ctx, r, vals);
    else
        g_option_context_set_ignore_unknown_options(ctx, TRUE);
    char *desc = kinds_description();
    g_option_context_set_description(ctx, desc);
    g_free(desc);
    int status = VMS_EXIT_USAGE;
    SweepDef *d = NULL;
    if (!cli_parse(ctx, &argc, &argv, "sweep"))
        goto out;
    if (!r) {
        fprintf(stderr, "vmsplit sweep: expected --kind KIND (see 'vmsplit sweep --help')\n");
        goto out;
    }
    if (!out) {
        fprintf(stderr, "vmsplit sweep: expected -o FILE.csv (the sweep resumes from it)\n");
        goto out;
    }
    if (json && csv) {
        fprintf(stderr, "vmsplit sweep: --json and --csv both given: expected one of them\n");
        goto out;
    }
    if (jobs < 0 || jobs > CLI_JOBS_MAX) {
        fprintf(stderr, "vmsplit sweep: --jobs: expected a whole number from 1 to %d, got '%d'\n",
                CLI_JOBS_MAX, jobs);
        goto out;
    }
    if (!(d = build_def(r, vals, argc, argv, shard, &err))) {
        status = cli_fail("sweep", err);
        goto out;
    }
    SweepOptions o = {(guint)jobs, !quiet && isatty(STDERR_FILENO), fsync_rows, 0};
    SweepResult res;
    bool ok = sweep_run(d, out, &o, &res, &err);
    if (!quiet && (ok || res.computed))
        fprintf(stderr, "%s: %u points%s: %u already there, %u computed%s\n", out, res.total,
                sweep_def_shard_n(d) > 1 ? " in this shard" : "", res.resumed, res.computed,
                res.repaired ? " (a torn last line was cut off)" : "");
    if (csv && (ok || res.computed)) {
        char k[16], n[16], pts[16], rs[16], cp[16];
        g_snprintf(k, sizeof k, "%u", sweep_def_shard_k(d));
        g_snprintf(n, sizeof n, "%u", sweep_def_shard_n(d));
        g_snprintf(pts, sizeof pts, "%u", res.total);
        g_snprintf(rs, sizeof rs, "%u", res.resumed);
        g_snprintf(cp, sizeof cp, "%u", res.computed);
        static const char *const head[] = { "output", "kind", "shard_k", "shard_n",
                                            "points_count", "resumed_count", "computed_count",
                                            "complete", "torn_line_cut" };
        const char *row[] = { out, r->kind, k, n, pts, rs, cp, ok && res.complete ? "1" : "0",
                              res.repaired ? "1" : "0" };
        GString *s = g_string_new(NULL);
        csv_append_record(s, head, G_N_ELEMENTS(head));
        csv_append_record(s, row, G_N_ELEMENTS(row));
        fputs(s->str, stdout);
        g_string_free(s, TRUE);
    }
    if (json && (ok || res.computed)) {
        JsonBuilder *b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "output");
        json_builder_add_string_value(b, out);
        json_builder_set_member_name(b, "kind");
        json_builder_add_string_value(b, r->kind);
        json_builder_set_member_name(b, "shard_k");
        json_builder_add_int_value(b, sweep_def_shard_k(d));
        json_builder_set_member_name(b, "shard_n");
        json_builder_add_int_value(b, sweep_def_shard_n(d));
        json_builder_set_member_name(b, "points");
        json_builder_add_int_value(b, res.total);
        json_builder_set_member_name(b, "resumed");
        json_builder_add_int_value(b, res.resumed);
        json_builder_set_member_name(b, "computed");
        json_builder_add_int_value(b, res.computed);
        json_builder_set_member_name(b, "complete");
        json_builder_add_boolean_value(b, ok && res.complete);
        json_builder_set_member_name(b, "torn_line_cut");
        json_builder_add_boolean_value(b, res.repaired);
        json_builder_end_object(b);
        cli_print_json(b);
    }
    status = ok ? VMS_EXIT_OK : cli_fail("sweep", err);
out:
    sweep_def_free(d);
    for (size_t i = 0; r && i < r->n_params; i++)
        g_strfreev(vals[i]);
    g_free(vals);
    g_free(kind);
    g_free(shard);
    g_free(out);
    g_option_context_free(ctx);
    return status;
}
