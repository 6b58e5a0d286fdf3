/* Sweep runner "lowmem": the boot-time lowmem model (kernel_model/lowmem.h)
 * for one layout, struct page size and installed RAM, on the BIOS memory
 * map of lowmem_map_default. Cheap (microseconds a point): a lowmem sweep
 * is for the RAM-size picture of the 4G/4G mail, not for timing. */
#include "kernel_model/lowmem.h"
#include "report/csv.h"
#include "report/sweep_runner.h"

static bool check_layout(const char *value, GError **err)
{
    return layout_mem_lookup(value, err) != NULL;
}

/* sizeof(struct page) on i386 was 32 to 44 bytes (REFERENCES.md); allow
 * what-ifs, but not values the model cannot mean. */
static bool check_struct_page(const char *value, GError **err)
{
    guint64 v = g_ascii_strtoull(value, NULL, 10);
    if (v < 16 || v > 256) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "struct page size %s is out of range (expected 16 to 256 "
                    "bytes; i386 kernels had 32 to 44)", value);
        return false;
    }
    return true;
}

static bool check_ram(const char *value, GError **err)
{
    if (g_ascii_strtoull(value, NULL, 10) == 0) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "installed RAM must be at least 1M");
        return false;
    }
    return true;
}

static const SweepParam params[] = {
    {"layouts", "layout", SWEEP_PARAM_NAME, 0, "3g1g,4g4g",
     "layouts (see 'vmsplit meminfo --help')", check_layout},
    {"struct-page", "struct_page", SWEEP_PARAM_UINT, 0, "40",
     "sizeof(struct page) in bytes (40: 2003 kernels, 32: 2.6.12, 44: 2.4)",
     check_struct_page},
    {"ram", "ram_mib", SWEEP_PARAM_SIZE, 1u << 20, NULL,
     "installed RAM sizes, e.g. 1G,4G,16G,64G (stored in MiB)", check_ram},
};

static const char *const figures[] = {
    "mem_total_kb", "low_total_kb", "high_total_kb", "lowmem_limit_mib",
    "mem_map_kb", "kept_kb", "lowmem_left_kb", "min_free_boot_kb",
    "boots", "beyond_pae",
};

enum { P_LAYOUT, P_STRUCT_PAGE, P_RAM };

static bool run_point(void *ctx, const SweepPoint *pt, char **out, GError **err)
{
    (void)ctx;
    const LayoutMem *lm = layout_mem_lookup(pt->values[P_LAYOUT], err);
    if (!lm)
        return false;
    LowmemParams p = {
        .struct_page_bytes = (uint32_t)g_ascii_strtoull(pt->values[P_STRUCT_PAGE], NULL, 10) };
    uint64_t ram = g_ascii_strtoull(pt->values[P_RAM], NULL, 10) << 20;
    LowmemMap map;
    LowmemReport r;
    if (!lowmem_map_default(&map, ram, err) || !lowmem_compute(lm, &map, &p, &r, err))
        return false;
    unsigned i = 0;
    out[i++] = sweep_format_uint(r.mem_total_kb);
    out[i++] = sweep_format_uint(r.low_total_kb);
    out[i++] = sweep_format_uint(r.high_total_kb);
    out[i++] = sweep_format_uint(r.lowmem_limit >> 20);
    out[i++] = sweep_format_uint(r.mem_map_bytes >> 10);
    out[i++] = sweep_format_uint(r.kept_bytes >> 10);
    /* Signed: negative when the boot tables do not fit. */
    out[i++] = g_strdup_printf("%" G_GINT64_FORMAT, r.lowmem_left_bytes / 1024);
    out[i++] = sweep_format_uint(r.min_free_boot_bytes >> 10);
    out[i++] = sweep_format_uint(r.boots);
    out[i++] = sweep_format_uint(r.beyond_pae);
    g_assert(i == G_N_ELEMENTS(figures));
    return true;
}

const SweepRunner sweep_runner_lowmem = {
    .kind = "lowmem",
    .summary = "/proc/meminfo and boot verdict for each layout x struct page x RAM",
    .params = params,
    .n_params = G_N_ELEMENTS(params),
    .figures = figures,
    .n_figures = G_N_ELEMENTS(figures),
    .run_point = run_point,
};
