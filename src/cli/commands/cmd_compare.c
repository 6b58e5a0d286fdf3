/* vmsplit compare --uncertainty: see cmd_compare.h. */
#include "cli/commands/cmd_compare.h"

#include "calib/uncertainty.h"
#include "report/csv.h"
#include "report/sweep.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEED 1

typedef struct {
    double lo, hi;
} Iv;

/* The figures of one layout, each over the accepted points. */
enum { F_TIME_MS, F_OVERHEAD, F_RATE, F_MEAN_US, F_NFIGS };

struct CompareUnc {
    unsigned points, accepted;
    size_t n;
    Iv (*fig)[F_NFIGS];          /* [layout][figure] */
    Iv (*part)[REPLAY_NPARTS];   /* extra cycles by part against layout 0 */
    GHashTable **syscall;        /* per layout: name -> Iv* (mean us) */
};

/* One row of the design, for one point and layout. */
typedef struct {
    bool seen, accepted;
    double cycles, seconds, syscalls, syscall_cycles, part[REPLAY_NPARTS];
    GHashTable *means;           /* name -> double* mean cycles */
} Cell;

static bool run_sweep(const CompareUncConfig *cfg, const char *path, GError **err)
{
    const SweepRunner *r = sweep_runner_lookup("uncertainty-replay", err);
    if (!r)
        return false;
    SweepDef *d = sweep_def_new(r);
    GString *samples = g_string_new(NULL);
    for (unsigned i = 0; i < cfg->points; i++)
        g_string_append_printf(samples, "%s%u", i ? "," : "", i);
    char *layouts = g_strjoinv(",", cfg->layouts);
    char *ram = g_strdup_printf("%" G_GUINT64_FORMAT "M", cfg->ram >> 20);
    char *seed = g_strdup_printf("%d", SEED);
    SweepOptions o = { .jobs = cfg->jobs, .progress = cfg->progress };
    SweepResult res;
    bool ok = sweep_def_add_list(d, "cpu", cfg->cpu, err) &&
              sweep_def_add_list(d, "seed", seed, err) &&
              sweep_def_add_list(d, "sample", samples->str, err) &&
              sweep_def_add_value(d, "workload", cfg->trace, err) &&
              sweep_def_add_list(d, "entry", cfg->sysenter ? "sysenter" : "int80", err) &&
              sweep_def_add_list(d, "ram", ram, err) &&
              sweep_def_add_list(d, "layout", layouts, err) &&
              sweep_def_add_list(d, "paging", cfg->paging ? cfg->paging : "pae", err) &&
              sweep_def_finish(d, err) &&
              sweep_run(d, path, &o, &res, err);
    g_string_free(samples, TRUE);
    g_free(layouts);
    g_free(ram);
    g_free(seed);
    sweep_def_free(d);
    return ok;
}

static GHashTable *parse_means(const char *text)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    char **kv = g_strsplit(text, ";", -1);
    for (char **k = kv; *k; k++) {
        char *eq = strchr(*k, '=');
        if (!eq)
            continue;
        double *v = g_new(double, 1);
        *v = g_ascii_strtod(eq + 1, NULL);
        g_hash_table_insert(h, g_strndup(*k, (gsize)(eq - *k)), v);
    }
    g_strfreev(kv);
    return h;
}

static Iv interval(double *v, unsigned n)
{
    return (Iv){ unc_quantile(v, n, 0.05), unc_quantile(v, n, 0.95) };
}

/* The table's rows into cells[layout * points + sample]. */
static bool read_cells(const CompareUncConfig *cfg, size_t n, const char *path, Cell *cells,
                       GError **err)
{
    CsvTable *t = csv_read_file(path, CSV_READ_STRICT, err);
    if (!t)
        return false;
    static const char *const cols[] = { "sample", "layout", "accepted", "cycles", "seconds",
                                        "syscalls", "syscall_cycles", "syscall_mean_cycles",
                                        NULL };
    bool ok = csv_table_require(t, cols, err);
    int ci[8], pc[REPLAY_NPARTS];
    for (int k = 0; ok && k < 8; k++)
        ci[k] = csv_table_column(t, cols[k]);
    for (int p = 0; ok && p < REPLAY_NPARTS; p++) {
        /* The runner's columns follow replay_part_names in order. */
        pc[p] = ci[6] + 1 + p;
    }
    for (guint r = 0; ok && r < t->rows->len; r++) {
        unsigned s = (unsigned)g_ascii_strtoull(csv_table_get(t, r, (guint)ci[0]), NULL, 10);
        const char *layout = csv_table_get(t, r, (guint)ci[1]);
        size_t l = 0;
        while (l < n && strcmp(cfg->layouts[l], layout))
            l++;
        g_assert(s < cfg->points && l < n);   /* the sweep made exactly these points */
        Cell *c = &cells[l * cfg->points + s];
        c->seen = true;
        c->accepted = !strcmp(csv_table_get(t, r, (guint)ci[2]), "1");
        double *dst[] = { &c->cycles, &c->seconds, &c->syscalls, &c->syscall_cycles };
        for (int k = 0; k < 4; k++)
            *dst[k] = g_ascii_strtod(csv_table_get(t, r, (guint)ci[3 + k]), NULL);
        for (int p = 0; p < REPLAY_NPARTS; p++)
            c->part[p] = g_ascii_strtod(csv_table_get(t, r, (guint)pc[p]), NULL);
        c->means = parse_means(csv_table_get(t, r, (guint)ci[7]));
    }
    csv_table_free(t);
    return ok;
}

/* The intervals of every figure from the cells of the accepted points. */
static void intervals(CompareUnc *u, const CompareUncConfig *cfg, Cell *cells)
{
    unsigned P = cfg->points, *use = g_new(unsigned, P), m = 0;
    for (unsigned s = 0; s < P; s++) {
        bool all = true;
        for (size_t l = 0; l < u->n; l++)
            all = all && cells[l * P + s].seen && cells[l * P + s].accepted;
        if (all)
            use[m++] = s;
    }
    u->accepted = m;
    double *v = g_new(double, P + 1);
    for (size_t l = 0; m && l < u->n; l++) {
        for (int f = 0; f < F_NFIGS; f++) {
            for (unsigned k = 0; k < m; k++) {
                const Cell *c = &cells[l * P + use[k]], *b = &cells[use[k]];
                switch (f) {
                case F_TIME_MS: v[k] = c->seconds * 1e3; break;
                case F_OVERHEAD:
                    v[k] = b->cycles ? 100 * (c->cycles - b->cycles) / b->cycles : 0;
                    break;
                case F_RATE: v[k] = c->seconds > 0 ? c->syscalls / c->seconds : 0; break;
                default: v[k] = c->syscalls ? c->syscall_cycles / c->syscalls / cfg->clock_mhz : 0;
                }
            }
            u->fig[l][f] = interval(v, m);
        }
        for (int p = 0; p < REPLAY_NPARTS; p++) {
            for (unsigned k = 0; k < m; k++)
                v[k] = cells[l * P + use[k]].part[p] - cells[use[k]].part[p];
            u->part[l][p] = interval(v, m);
        }
        /* A syscall's interval over the points where the layout made it. */
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, cells[l * P + use[0]].means);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
            unsigned k = 0;
            for (unsigned j = 0; j < m; j++) {
                const double *x = g_hash_table_lookup(cells[l * P + use[j]].means, key);
                if (x)
                    v[k++] = *x / cfg->clock_mhz;
            }
            Iv *iv = g_new(Iv, 1);
            *iv = interval(v, k);
            g_hash_table_insert(u->syscall[l], g_strdup(key), iv);
        }
    }
    g_free(v);
    g_free(use);
}

CompareUnc *compare_unc_run(const CompareUncConfig *cfg, GError **err)
{
    size_t n = g_strv_length(cfg->layouts);
    char *path = cfg->csv ? g_strdup(cfg->csv) : NULL;
    if (!path) {
        int fd = g_file_open_tmp("vmsplit-compare-unc-XXXXXX.csv", &path, err);
        if (fd < 0)
            return NULL;
        close(fd);
        g_unlink(path);          /* sweep_run makes it afresh */
    }
    Cell *cells = g_new0(Cell, n * cfg->points);
    bool ok = run_sweep(cfg, path, err) && read_cells(cfg, n, path, cells, err);
    CompareUnc *u = NULL;
    if (ok) {
        u = g_new0(CompareUnc, 1);
        u->points = cfg->points;
        u->n = n;
        u->fig = g_malloc0(sizeof *u->fig * n);
        u->part = g_malloc0(sizeof *u->part * n);
        u->syscall = g_new0(GHashTable *, n);
        for (size_t l = 0; l < n; l++)
            u->syscall[l] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        intervals(u, cfg, cells);
    }
    for (size_t i = 0; i < n * cfg->points; i++)
        if (cells[i].means)
            g_hash_table_destroy(cells[i].means);
    g_free(cells);
    if (!cfg->csv)
        g_unlink(path);
    g_free(path);
    return u;
}

void compare_unc_free(CompareUnc *u)
{
    if (!u)
        return;
    for (size_t l = 0; l < u->n; l++)
        g_hash_table_destroy(u->syscall[l]);
    g_free(u->syscall);
    g_free(u->fig);
    g_free(u->part);
    g_free(u);
}

/* ---- output ---------------------------------------------------------------- */

static double mean_us(const ReplayResult *r, const char *name)
{
    for (guint j = 0; j < replay_nsyscalls(r); j++) {
        const ReplaySyscall *s = replay_syscall(r, j);
        if (!strcmp(s->name, name))
            return (double)s->sum.cycles / s->hist.n / replay_config(r)->preset->clock_mhz;
    }
    return NAN;
}

static double all_mean_us(const ReplayResult *r)
{
    const ReplayTotals *t = replay_totals(r);
    return t->syscalls ? (double)t->syscall_cycles / t->syscalls /
                             replay_config(r)->preset->clock_mhz
                       : 0;
}

static void cell(FILE *out, const char *fmt, double central, Iv iv)
{
    char buf[80], f[40];
    g_snprintf(f, sizeof f, "%s [%s, %s]", fmt, fmt, fmt);
    g_snprintf(buf, sizeof buf, f, central, iv.lo, iv.hi);
    fprintf(out, "%28s", buf);
}

void compare_unc_print_text(const CompareUnc *u, ReplayResult *const *r, size_t n, FILE *out)
{
    fprintf(out, "\n90 %% intervals: each figure as shipped [5th, 95th percentile] over %u of %u "
            "sampled points of the\nopen estimates (seed %d; each point refitted to the fit "
            "measurements and replayed; docs/calibration.md)\n", u->accepted, u->points, SEED);
    if (!u->accepted) {
        fprintf(out, "  no point met the fit measurements: no intervals\n");
        return;
    }
    fprintf(out, "%-24s", "");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%28s", replay_config(r[i])->layout->name);
    fprintf(out, "\n");
    const ReplayTotals *b = replay_totals(r[0]);
    double base[REPLAY_NPARTS];
    replay_breakdown(r[0], base);
    for (int f = 0; f < F_NFIGS; f++) {
        static const char *const label[] = { "simulated time (ms)", "overhead (%)",
                                             "syscalls per second", "mean syscall (us)" };
        fprintf(out, "%-24s", label[f]);
        for (size_t i = 0; i < n; i++) {
            const ReplayTotals *t = replay_totals(r[i]);
            double secs = replay_seconds(r[i]);
            double over = b->cycles ? 100.0 * ((double)t->cycles - b->cycles) / b->cycles : 0;
            double c = f == F_TIME_MS  ? secs * 1e3
                     : f == F_OVERHEAD ? over
                     : f == F_RATE     ? (secs > 0 ? t->syscalls / secs : 0)
                                       : all_mean_us(r[i]);
            cell(out, f == F_OVERHEAD ? "%+.2f" : f == F_RATE ? "%.0f" : "%.3f", c, u->fig[i][f]);
        }
        fprintf(out, "\n");
    }
    bool refs = false;
    for (size_t i = 0; i < n; i++)
        refs |= replay_refs(r[i])->has_refs;
    fprintf(out, "where the extra cycles went (millions of cycles)\n");
    for (int p = 0; p < REPLAY_NPARTS; p++) {
        if (p >= REPLAY_PART_REFILLS && !refs)
            continue;
        fprintf(out, "  %-22s", replay_part_names[p]);
        for (size_t i = 0; i < n; i++) {
            double v[REPLAY_NPARTS];
            replay_breakdown(r[i], v);
            cell(out, "%+.3f", (v[p] - base[p]) / 1e6,
                 (Iv){ u->part[i][p].lo / 1e6, u->part[i][p].hi / 1e6 });
        }
        fprintf(out, "\n");
    }
    fprintf(out, "mean latency per syscall (us)\n");
    for (guint k = 0; k < replay_nsyscalls(r[0]) && k < 12; k++) {
        const char *name = replay_syscall(r[0], k)->name;
        fprintf(out, "  %-22s", name);
        for (size_t i = 0; i < n; i++) {
            const Iv *iv = g_hash_table_lookup(u->syscall[i], name);
            if (iv)
                cell(out, "%.3f", mean_us(r[i], name), *iv);
            else
                fprintf(out, "%28s", "-");
        }
        fprintf(out, "\n");
    }
}

static void add_iv(JsonBuilder *b, const char *name, Iv iv)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    json_builder_add_double_value(b, iv.lo);
    json_builder_add_double_value(b, iv.hi);
    json_builder_end_array(b);
}

void compare_unc_json(const CompareUnc *u, JsonBuilder *b)
{
    json_builder_set_member_name(b, "uncertainty");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "points");
    json_builder_add_int_value(b, u->points);
    json_builder_set_member_name(b, "accepted");
    json_builder_add_int_value(b, u->accepted);
    json_builder_set_member_name(b, "seed");
    json_builder_add_int_value(b, SEED);
    json_builder_set_member_name(b, "interval");
    json_builder_add_string_value(b, "5th to 95th percentile over the accepted points");
    json_builder_end_object(b);
}

void compare_unc_json_layout(const CompareUnc *u, size_t i, JsonBuilder *b)
{
    if (!u->accepted)
        return;
    json_builder_set_member_name(b, "interval_90");
    json_builder_begin_object(b);
    add_iv(b, "simulated_ms", u->fig[i][F_TIME_MS]);
    add_iv(b, "overhead_pct", u->fig[i][F_OVERHEAD]);
    add_iv(b, "syscalls_per_s", u->fig[i][F_RATE]);
    add_iv(b, "mean_syscall_us", u->fig[i][F_MEAN_US]);
    json_builder_set_member_name(b, "extra_cycles_by_part");
    json_builder_begin_object(b);
    for (int p = 0; p < REPLAY_NPARTS; p++)
        add_iv(b, replay_part_names[p], u->part[i][p]);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "mean_us_by_syscall");
    json_builder_begin_object(b);
    GList *keys = g_list_sort(g_hash_table_get_keys(u->syscall[i]), (GCompareFunc)strcmp);
    for (GList *k = keys; k; k = k->next)
        add_iv(b, k->data, *(const Iv *)g_hash_table_lookup(u->syscall[i], k->data));
    g_list_free(keys);
    json_builder_end_object(b);
    json_builder_end_object(b);
}

/* What one of fn's calls prints, as text. */
static char *capture(void (*fn)(const ReplayResult *, FILE *), const ReplayResult *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    g_assert(f);
    fn(r, f);
    fclose(f);
    return buf;
}

static void header(const ReplayResult *r, FILE *f)
{
    (void)r;
    replay_print_csv_header(f);
}

static void pair(FILE *out, bool have, Iv iv)
{
    if (have)
        fprintf(out, ",%.4f,%.4f", iv.lo, iv.hi);
    else
        fprintf(out, ",,");
}

/* The interval cells of one row: the syscall's mean, and for the summary
 * row ("ALL") every figure of the layout. */
static void row_cells(const CompareUnc *u, size_t i, const char *syscall, FILE *out)
{
    bool all = !strcmp(syscall, "ALL"), ok = u->accepted > 0;
    const Iv *iv = ok && !all ? g_hash_table_lookup(u->syscall[i], syscall) : NULL;
    pair(out, ok && (all || iv), all ? u->fig[i][F_MEAN_US] : iv ? *iv : (Iv){ 0, 0 });
    pair(out, ok && all, u->fig[i][F_RATE]);
    pair(out, ok && all, u->fig[i][F_OVERHEAD]);
    for (int p = 0; p < REPLAY_NPARTS; p++)
        pair(out, ok && all, u->part[i][p]);
}

/* Each line of text with row_cells appended (the syscall is field 3). */
static void append_cells(const CompareUnc *u, size_t i, char *text, FILE *out)
{
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l && **l; l++) {
        char **f = g_strsplit(*l, ",", 4);
        fputs(*l, out);
        row_cells(u, i, f[0] && f[1] && f[2] ? f[2] : "", out);
        fputc('\n', out);
        g_strfreev(f);
    }
    g_strfreev(lines);
}

static void print_summary_vs(const ReplayResult *r, const ReplayResult *base, FILE *f)
{
    replay_print_csv_summary(r, base, f);
}

void compare_unc_print_csv(const CompareUnc *u, ReplayResult *const *r, size_t n, FILE *out)
{
    char *h = capture(header, r[0]);
    g_strchomp(h);
    fputs(h, out);
    /* The interval columns, named after the columns they bound. */
    fprintf(out, ",mean_us_p5,mean_us_p95,syscalls_per_sec_p5,syscalls_per_sec_p95,"
            "overhead_pct_p5,overhead_pct_p95");
    char **cols = g_strsplit(h, ",", -1);
    for (char **c = cols; *c; c++)
        if (g_str_has_prefix(*c, "extra_") && g_str_has_suffix(*c, "_cycles"))
            fprintf(out, ",%s_p5,%s_p95", *c, *c);
    fputc('\n', out);
    g_strfreev(cols);
    free(h);
    for (size_t i = 0; i < n; i++) {
        char *t = capture(replay_print_csv, r[i]);
        append_cells(u, i, t, out);
        free(t);
    }
    for (size_t i = 0; i < n; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        g_assert(f);
        print_summary_vs(r[i], r[0], f);
        fclose(f);
        append_cells(u, i, buf, out);
        free(buf);
    }
}
