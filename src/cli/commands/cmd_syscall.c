/* vmsplit syscall: run one system call repeatedly through each layout's
 * real entry/exit stubs on a booted machine and print its latency and the
 * breakdown of where the cycles went (src/kernel_model/measure.h). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cpu/nasm.h"
#include "preset/preset.h"
#include "kernel_model/body.h"
#include "kernel_model/machine.h"
#include "kernel_model/measure.h"
#include "kernel_model/profiles.h"
#include "calib/uncertainty.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#define BUF_VA 0x10000000u

typedef struct {
    char *cpu, *layouts, *ram, *stubs, *profiles, *paging;
    gboolean sysenter, json, csv;
    gint64 count, warmup, bytes_in, bytes_out, uncertainty;
} Opts;

typedef struct {
    const Layout *layout;
    SyscallCost sum;
    uint64_t n;
    bool has_interval;           /* --uncertainty: 90 % intervals, us */
    double lat_lo, lat_hi, extra_lo, extra_hi;
} Row;

static bool run_layout(const Opts *o, const Preset *p, uint64_t ram, const char *stubs,
                       const SyscallProfile *prof, Row *row, GError **err)
{
    MachineConfig cfg = { .preset = p, .layout = row->layout, .ram = ram, .stubs = stubs,
                          .sysenter = o->sysenter };
    SyscallCall call = { .profile = prof, .bytes_in = (uint32_t)o->bytes_in,
                         .bytes_out = (uint32_t)o->bytes_out, .user_buf = BUF_VA, .switch_to = -1 };
    if (!measure_repeat(&cfg, &call, (unsigned)o->warmup, (unsigned)o->count, &row->sum, err))
        return false;
    row->n = (uint64_t)o->count;
    return true;
}

static double mean(const Row *r, size_t i) { return (double)syscall_cost_value(&r->sum, i) / r->n; }

/* --uncertainty N: the call on N points of the preset's uncertainty design
 * (calib/uncertainty.h: the estimates the fit left open sampled over their
 * ranges, each point moved back onto the fit rows), every layout on each
 * accepted point; the 5th and 95th percentiles of its latency and of its
 * extra over the first layout. */
static bool run_intervals(const Opts *o, const Preset *p, uint64_t ram, const char *stubs,
                          const SyscallProfile *prof, Row *rows, size_t n, GError **err)
{
    MeasurementSet *set = meas_load(NULL, err);
    if (!set)
        return false;
    unsigned pts = (unsigned)o->uncertainty, used = 0;
    double *lat = g_new0(double, n * pts), *extra = g_new0(double, n * pts);
    bool ok = true;
    for (unsigned i = 0; ok && i < pts; i++) {
        UncSample s;
        if (!(ok = unc_sample(p, set, 1, i, &s, err)))
            break;
        for (size_t r = 0; ok && s.accepted && r < n; r++) {
            Row tmp = { .layout = rows[r].layout };
            ok = run_layout(o, s.preset, ram, stubs, prof, &tmp, err);
            lat[r * pts + used] = mean(&tmp, 0) / s.preset->clock_mhz;
            extra[r * pts + used] = lat[r * pts + used] - lat[used];
        }
        used += s.accepted;
        unc_sample_clear(&s);
    }
    for (size_t r = 0; ok && used && r < n; r++) {
        rows[r].lat_lo = unc_quantile(&lat[r * pts], used, 0.05);
        rows[r].lat_hi = unc_quantile(&lat[r * pts], used, 0.95);
        rows[r].extra_lo = unc_quantile(&extra[r * pts], used, 0.05);
        rows[r].extra_hi = unc_quantile(&extra[r * pts], used, 0.95);
        rows[r].has_interval = true;
    }
    g_free(lat);
    g_free(extra);
    meas_free(set);
    return ok;
}

/* What cost i is, true for the paging mode: MOV CR3 loads the four PDPTEs
 * under PAE only (SDM Vol. 3A 4.4.1); under 32-bit paging it loads no
 * PDPTE registers and costs the instruction alone. */
static const char *cost_desc(const PageTableFormat *f, size_t i)
{
    if (f->mode != PAGING_PAE && !strcmp(syscall_cost_column(i), "cr3_cycles"))
        return "MOV CR3: the instruction alone (32-bit paging loads no PDPTEs)";
    return syscall_cost_desc(i);
}

static void print_text(const Opts *o, const Preset *p, const char *name, Row *rows, size_t n)
{
    /* The paging mode is named when it is not the default (PAE). */
    const PageTableFormat *f = n ? rows[0].layout->paging : ptformat_get(PAGING_PAE);
    printf("vmsplit syscall: %s via %s on %s (%.0f MHz)%s%s%s, mean of %" G_GINT64_FORMAT
           " calls after %" G_GINT64_FORMAT " warm-up calls\n\n",
           name, o->sysenter ? "sysenter/sysexit" : "int 0x80/iret", p->name, p->clock_mhz,
           f->mode == PAGING_PAE ? "" : ", ", f->mode == PAGING_PAE ? "" : f->title,
           f->mode == PAGING_PAE ? "" : " paging", o->count, o->warmup);
    printf("%-12s", "");
    for (size_t r = 0; r < n; r++)
        printf("%14s", rows[r].layout->name);
    printf("\n");
    for (size_t i = 0; i < syscall_cost_count(); i++) {
        printf("%-12s", syscall_cost_name(i));
        for (size_t r = 0; r < n; r++)
            printf("%14.1f", mean(&rows[r], i));
        printf("   %s\n", cost_desc(f, i));
    }
    printf("%-12s", "latency us");
    for (size_t r = 0; r < n; r++)
        printf("%14.3f", mean(&rows[r], 0) / p->clock_mhz);
    printf("\n%-12s", "extra us");
    for (size_t r = 0; r < n; r++)
        printf("%+14.3f", (mean(&rows[r], 0) - mean(&rows[0], 0)) / p->clock_mhz);
    printf("   against %s\n", rows[0].layout->name);
    if (n && rows[0].has_interval) {
        printf("%-12s", "latency 90%");
        for (size_t r = 0; r < n; r++) {
            char iv[32];
            g_snprintf(iv, sizeof iv, "%.2f..%.2f", rows[r].lat_lo, rows[r].lat_hi);
            printf("%14s", iv);
        }
        printf("   us, over %" G_GINT64_FORMAT " sampled points of the open estimates\n",
               o->uncertainty);
        printf("%-12s", "extra 90%");
        for (size_t r = 0; r < n; r++) {
            char iv[32];
            g_snprintf(iv, sizeof iv, "%+.2f..%+.2f", rows[r].extra_lo, rows[r].extra_hi);
            printf("%14s", iv);
        }
        printf("   us against %s\n", rows[0].layout->name);
    }
    for (size_t r = 0; r < n; r++)
        if (rows[r].layout->what_if)
            printf("\nnote: %s is a what-if: PCID exists only in IA-32e paging, not on an i686 core.\n",
                   rows[r].layout->name);
}

static void print_json(const Opts *o, const Preset *p, const char *name, Row *rows, size_t n)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "syscall");
    json_builder_add_string_value(b, name);
    json_builder_set_member_name(b, "cpu");
    json_builder_add_string_value(b, p->name);
    json_builder_set_member_name(b, "clock_mhz");
    json_builder_add_double_value(b, p->clock_mhz);
    json_builder_set_member_name(b, "entry");
    json_builder_add_string_value(b, o->sysenter ? "sysenter" : "int80");
    json_builder_set_member_name(b, "paging");
    json_builder_add_string_value(b, n ? rows[0].layout->paging->name : "pae");
    json_builder_set_member_name(b, "layouts");
    json_builder_begin_array(b);
    for (size_t r = 0; r < n; r++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "layout");
        json_builder_add_string_value(b, rows[r].layout->name);
        json_builder_set_member_name(b, "what_if");
        json_builder_add_boolean_value(b, rows[r].layout->what_if);
        json_builder_set_member_name(b, "calls");
        json_builder_add_int_value(b, (gint64)rows[r].n);
        for (size_t i = 0; i < syscall_cost_count(); i++) {
            json_builder_set_member_name(b, syscall_cost_name(i));
            json_builder_add_double_value(b, mean(&rows[r], i));
        }
        json_builder_set_member_name(b, "latency_us");
        json_builder_add_double_value(b, mean(&rows[r], 0) / p->clock_mhz);
        if (rows[r].has_interval) {
            const char *k[] = { "latency_us_p5", "latency_us_p95", "extra_us_p5", "extra_us_p95" };
            double v[] = { rows[r].lat_lo, rows[r].lat_hi, rows[r].extra_lo, rows[r].extra_hi };
            for (int i = 0; i < 4; i++) {
                json_builder_set_member_name(b, k[i]);
                json_builder_add_double_value(b, v[i]);
            }
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    cli_print_json(b);
}

/* One header, one row per layout: the means per call, each column named
 * with its unit (measure.h), the latency and the extra against the first
 * layout in microseconds. */
static void print_csv(const Opts *o, const Preset *p, const char *name, Row *rows, size_t n)
{
    printf("syscall,cpu,clock_mhz,entry,paging,layout,what_if,calls");
    for (size_t i = 0; i < syscall_cost_count(); i++)
        printf(",%s_per_call", syscall_cost_column(i));
    printf(",latency_us,extra_us\n");
    for (size_t r = 0; r < n; r++) {
        printf("%s,%s,%g,%s,%s,%s,%d,%" G_GUINT64_FORMAT, name, p->name, p->clock_mhz,
               o->sysenter ? "sysenter" : "int80", rows[r].layout->paging->name,
               rows[r].layout->name, rows[r].layout->what_if, rows[r].n);
        for (size_t i = 0; i < syscall_cost_count(); i++)
            printf(",%.2f", mean(&rows[r], i));
        printf(",%.4f,%.4f\n", mean(&rows[r], 0) / p->clock_mhz,
               (mean(&rows[r], 0) - mean(&rows[0], 0)) / p->clock_mhz);
    }
}

int cmd_syscall(int argc, char **argv)
{
    Opts o = { .count = 1000, .warmup = 10 };
    GOptionEntry entries[] = {
        { "cpu", 'c', 0, G_OPTION_ARG_STRING, &o.cpu, "CPU preset name or .ini file (default " PRESET_DEFAULT ")", "P" },
        { "layouts", 'l', 0, G_OPTION_ARG_STRING, &o.layouts, "layouts to compare (default 3g1g,4g4g,kpti,kpti-pcid)", "L,..." },
        { "sysenter", 0, 0, G_OPTION_ARG_NONE, &o.sysenter, "enter with sysenter/sysexit instead of int 0x80/iret", NULL },
        { "count", 'n', 0, G_OPTION_ARG_INT64, &o.count, "calls measured (default 1000)", "N" },
        { "warmup", 0, 0, G_OPTION_ARG_INT64, &o.warmup, "calls run first and not measured (default 10)", "N" },
        { "bytes-in", 0, 0, G_OPTION_ARG_INT64, &o.bytes_in, "bytes copied from user space per call", "N" },
        { "bytes-out", 0, 0, G_OPTION_ARG_INT64, &o.bytes_out, "bytes copied to user space per call", "N" },
        { "ram", 0, 0, G_OPTION_ARG_STRING, &o.ram, "installed RAM (default 4G)", "SIZE" },
        { "paging", 0, 0, G_OPTION_ARG_STRING, &o.paging, CLI_PAGING_HELP, "MODE" },
        { "stubs", 0, 0, G_OPTION_ARG_FILENAME, &o.stubs, "entry/exit stubs to use instead of the layout's (.asm or .o; see src/kernel_model/stubs/)", "FILE" },
        { "profiles", 0, 0, G_OPTION_ARG_FILENAME, &o.profiles, "syscall profile table (default src/kernel_model/syscalls.ini)", "FILE" },
        { "uncertainty", 'u', 0, G_OPTION_ARG_INT64, &o.uncertainty, "90 % intervals over N sampled points of the preset's open estimates (default 0: none)", "N" },
        { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "print JSON", NULL },
        { "csv", 0, 0, G_OPTION_ARG_NONE, &o.csv, "print CSV: one row per layout, each column with its unit", NULL },
        { NULL },
    };
    GOptionContext *ctx = g_option_context_new("[NAME] - time one system call through each layout's entry/exit stubs");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "NAME is a syscall of the profile table (default getppid, the null call).\n"
        "Each layout boots its own machine; the call runs from user mode through the\n"
        "layout's NASM stubs and back, and its cycles are split into base (entry/exit),\n"
        "cr3 (MOV CR3, with its four PDPTE loads under PAE), walks (TLB refills),\n"
        "uaccess and body.\n\n"
        "--stubs replaces the entry/exit code: copy a stub from src/kernel_model/stubs/\n"
        "(with common.inc beside it), edit it, and pass it; it must define int80_entry,\n"
        "sysenter_entry, irq_entry, ret_from_fork and cpu_data. It applies to every\n"
        "layout given, so pass one layout with it.\n\n"
        "--uncertainty N samples the estimates the calibration left open over their ranges\n"
        "(presets/README.md; N points of a scrambled Halton design, seed 1, each moved back\n"
        "onto the preset's fit measurements, docs/calibration.md) and prints the 90 %%\n"
        "interval of each layout's latency and extra.");
    int rc = VMS_EXIT_USAGE;
    Preset *p = NULL;
    ProfileTable *prof = NULL;
    char *obj = NULL;
    char **names = NULL;
    Row *rows = NULL;
    GError *err = NULL;
    if (!cli_parse(ctx, &argc, &argv, "syscall"))
        goto out;
    if (argc > 2 || o.count < 1 || o.warmup < 0 || o.bytes_in < 0 || o.bytes_out < 0 ||
        o.uncertainty < 0 || o.uncertainty > 4096 ||
        o.bytes_in > (64 << 20) || o.bytes_out > (64 << 20)) {
        fprintf(stderr, "vmsplit syscall: expected at most one NAME, --count >= 1, --uncertainty "
                        "from 0 to 4096, and byte counts between 0 and 64 MiB (see 'vmsplit "
                        "syscall --help')\n");
        goto out;
    }
    if (o.json && o.csv) {
        fprintf(stderr, "vmsplit syscall: --json and --csv are exclusive\n");
        goto out;
    }
    const char *name = argc == 2 ? argv[1] : "getppid";
    uint64_t ram = 4ULL << 30;
    if (o.ram && !cli_parse_size(o.ram, &ram)) {
        fprintf(stderr, "vmsplit syscall: --ram '%s': expected a size such as 4G or 896M\n", o.ram);
        goto out;
    }
    PagingMode paging;
    if (!cli_opt_paging("syscall", o.paging, &paging) ||
        !cli_check_ram_paging("syscall", ram, paging))
        goto out;
    if (!(p = preset_load(o.cpu ? o.cpu : PRESET_DEFAULT, &err)) ||
        !(prof = profiles_load(o.profiles, &err))) {
        rc = cli_fail("syscall", err);
        goto out;
    }
    bool known;
    const SyscallProfile *sp = profiles_find(prof, name, &known);
    if (!known) {
        GString *names = g_string_new(NULL);
        for (unsigned i = 0; i < profiles_count(prof); i++)
            g_string_append_printf(names, "%s%s", i ? ", " : "", profiles_at(prof, i)->name);
        fprintf(stderr, "vmsplit syscall: '%s' is not in the profile table (%s); "
                "expected one of: %s\n", name, o.profiles ? o.profiles : "the bundled one",
                names->str);
        g_string_free(names, TRUE);
        goto out;
    }
    if (o.stubs && g_str_has_suffix(o.stubs, ".asm") && !(obj = nasm_assemble(o.stubs, &err))) {
        rc = cli_fail("syscall", err);
        goto out;
    }
    names = g_strsplit(o.layouts ? o.layouts : "3g1g,4g4g,kpti,kpti-pcid", ",", -1);
    size_t n = g_strv_length(names);
    rows = g_new0(Row, n);
    for (size_t i = 0; i < n; i++)
        if (!(rows[i].layout = layout_lookup(names[i], &err))) {
            rc = cli_fail("syscall", err);
            goto out;
        } else {
            rows[i].layout = layout_with_paging(rows[i].layout, paging);
        }
    for (size_t i = 0; i < n; i++)
        if (!run_layout(&o, p, ram, obj ? obj : o.stubs, sp, &rows[i], &err)) {
            g_prefix_error(&err, "%s: ", rows[i].layout->name);
            rc = g_error_matches(err, G_IO_ERROR, G_IO_ERROR_FAILED) ? VMS_EXIT_FAULT : VMS_EXIT_USAGE;
            fprintf(stderr, "vmsplit syscall: %s\n", err->message);
            g_clear_error(&err);
            goto out;
        }
    if (o.uncertainty > 0 &&
        !run_intervals(&o, p, ram, obj ? obj : o.stubs, sp, rows, n, &err)) {
        rc = cli_fail("syscall", err);
        goto out;
    }
    if (o.json)
        print_json(&o, p, name, rows, n);
    else if (o.csv)
        print_csv(&o, p, name, rows, n);
    else
        print_text(&o, p, name, rows, n);
    rc = VMS_EXIT_OK;
out:
    if (obj)
        nasm_remove_output(obj);
    g_free(obj);
    g_strfreev(names);
    g_free(rows);
    profiles_free(prof);
    preset_free(p);
    g_free(o.cpu);
    g_free(o.layouts);
    g_free(o.ram);
    g_free(o.stubs);
    g_free(o.profiles);
    g_free(o.paging);
    g_option_context_free(ctx);
    return rc;
}
