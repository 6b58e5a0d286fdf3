/* vmsplit meminfo: lowmem, highmem and mem_map for a RAM size and layout.
 *
 *   vmsplit meminfo --ram SIZE --layout NAME [--struct-page BYTES]
 *                   [--e820 FILE] [--no-pse] [--json]
 *
 * Prints what /proc/meminfo would say right after boot (MemTotal, LowTotal,
 * HighTotal), the mem_map and its share of lowmem, each boot reservation
 * with its source, the lowmem left and whether the kernel boots. "Does not
 * boot" is an answer, not an error: exit 0. The model is
 * src/kernel_model/lowmem.c, documented in docs/lowmem.md.
 *
 * Exit: 0 answered, 2 bad input (unknown layout, bad size, bad e820 file). */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "kernel_model/lowmem.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    uint64_t ram;          /* 0 when the map comes from --e820 */
    const LayoutMem *layout;
    LowmemParams params;
    const char *e820;
    bool json, csv;
} MeminfoArgs;

static const char *const phase_names[] = {"kept", "freed after boot", "after boot"};
static const char *const phase_keys[] = {"kept", "freed_after_boot", "after_boot"};

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "vmsplit meminfo: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'vmsplit meminfo --help')\n");
    return VMS_EXIT_USAGE;
}

/* Returns -1 when the arguments are good, else the exit status. Strings
 * are owned by the caller's g_autofree holders. */
static int parse_args(int argc, char **argv, MeminfoArgs *a, char **e820_out)
{
    g_autofree char *ram = NULL, *layout = NULL, *sp = NULL;
    char *e820 = NULL;
    gboolean json = FALSE, csv = FALSE, no_pse = FALSE;
    GOptionEntry entries[] = {
        {"ram", 0, 0, G_OPTION_ARG_STRING, &ram, "Installed RAM: 64G, 896M, 4096K or bytes", "SIZE"},
        {"layout", 'l', 0, G_OPTION_ARG_STRING, &layout, "3g1g, 2g2g, 1g3g, 4g4g, kpti or kpti-pcid", "NAME"},
        {"struct-page", 0, 0, G_OPTION_ARG_STRING, &sp,
         "sizeof(struct page) in bytes (default 40, as in 2003 kernels; 32 for 2.6.12)", "BYTES"},
        {"e820", 'e', 0, G_OPTION_ARG_FILENAME, &e820,
         "Physical memory map instead of --ram (format: docs/lowmem.md)", "FILE"},
        {"no-pse", 0, 0, G_OPTION_ARG_NONE, &no_pse, "Map lowmem with 4 KiB pages (CPU without PSE)", NULL},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object instead of text", NULL},
        {"csv", 0, 0, G_OPTION_ARG_NONE, &csv,
         "Print one CSV header and row", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- lowmem, highmem and mem_map after boot");
    g_option_context_set_description(ctx,
        "Give --ram (a default 2003 server memory map is built: PCI hole from\n"
        "0xEB000000 to 4 GiB, RAM behind it remapped above 4 GiB up to 64 GiB)\n"
        "or --e820 with your own map. \"Does not boot\" is an answer: exit 0.\n"
        "Exit status: 0 answered, 2 bad input.\n\n"
        "Example:\n  vmsplit meminfo --ram 64G --layout 4g4g\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!cli_parse(ctx, &argc, &argv, "meminfo")) {
        g_free(e820);
        return VMS_EXIT_USAGE;
    }
    *e820_out = e820;
    *a = (MeminfoArgs){.json = json, .csv = csv, .e820 = e820};
    if (json && csv)
        return fail("%s", "--json and --csv are exclusive");
    a->params.no_pse = no_pse;
    if (argc > 1)
        return fail("unexpected argument '%s'", argv[1]);
    if (!layout)
        return fail("%s", "--layout NAME is required");
    GError *err = NULL;
    if (!(a->layout = layout_mem_lookup(layout, &err)))
        return cli_fail("meminfo", err);
    if (ram && e820)
        return fail("%s", "give --ram or --e820, not both (the map defines the RAM)");
    if (!ram && !e820)
        return fail("%s", "--ram SIZE or --e820 FILE is required");
    if (ram && (ram[0] == '-' || !cli_parse_size(ram, &a->ram) || !a->ram))
        return fail("bad --ram '%s' (expected a positive size such as 64G, 896M, 4096K)", ram);
    if (sp) {
        uint64_t v = 0;
        if (!cli_opt_uint("meminfo", "struct-page", sp, CLI_STRUCT_PAGE_MIN, CLI_STRUCT_PAGE_MAX, &v))
            return VMS_EXIT_USAGE;
        a->params.struct_page_bytes = (uint32_t)v;
    }
    return -1;
}

static void print_text(const LowmemReport *r, const MeminfoArgs *a)
{
    const double mib = 1024.0 * 1024.0;
    printf("vmsplit meminfo: %.0f MiB of RAM in the map%s, layout %s, struct page %u B\n",
           r->ram_bytes / mib, a->e820 ? " (from --e820)" : "", layout_mem_name(r->layout),
           r->struct_page_bytes);
    printf("lowmem limit (MAXMEM) %.0f MiB; zones: DMA %" G_GUINT64_FORMAT
           ", Normal %" G_GUINT64_FORMAT ", HighMem %" G_GUINT64_FORMAT " pages\n",
           r->lowmem_limit / mib, r->zone_pages[0], r->zone_pages[1], r->zone_pages[2]);
    if (r->beyond_pae)
        printf("note: RAM above 64 GiB exceeds 36-bit PAE addressing -- a what-if\n");
    printf("\nMemTotal:  %12" G_GUINT64_FORMAT " kB\n", r->mem_total_kb);
    printf("HighTotal: %12" G_GUINT64_FORMAT " kB\n", r->high_total_kb);
    printf("LowTotal:  %12" G_GUINT64_FORMAT " kB\n", r->low_total_kb);
    double low_ram = (double)r->low_ram_pages * 4096.0;
    printf("\nmem_map: %" G_GUINT64_FORMAT " kB (%" G_GUINT64_FORMAT
           " pages x %u B), %.1f %% of lowmem RAM\n",
           r->mem_map_bytes / 1024, r->max_pfn, r->struct_page_bytes,
           low_ram > 0 ? 100.0 * r->mem_map_bytes / low_ram : 0.0);
    printf("\nlowmem reservations:\n");
    for (unsigned i = 0; i < r->n_items; i++) {
        const LowmemItem *it = &r->item[i];
        printf("  %-24s %10" G_GUINT64_FORMAT " kB  %-16s %s\n", it->name, it->bytes / 1024,
               phase_names[it->phase], it->source);
    }
    printf("\nlowmem left after boot: %" G_GINT64_FORMAT " kB (needs >= %" G_GUINT64_FORMAT
           " kB to boot)\n",
           r->lowmem_left_bytes / 1024, r->min_free_boot_bytes / 1024);
    if (r->boots)
        printf("boots: yes\n");
    else
        printf("boots: NO -- does not boot: the boot reservations leave less than %"
               G_GUINT64_FORMAT " MiB of lowmem\n", r->min_free_boot_bytes >> 20);
}

/* One header and one row, each numeric column with its unit: the RAM the
 * memory map holds (below --ram by the PCI hole), /proc/meminfo's figures,
 * mem_map and the lowmem left, as the text says them. */
static void print_csv(const LowmemReport *r, const MeminfoArgs *a)
{
    printf("layout,struct_page_bytes,map_ram_mib,map,mem_total_kb,low_total_kb,high_total_kb,"
           "lowmem_limit_mib,mem_map_kb,lowmem_left_kb,min_free_boot_kb,boots,beyond_pae\n");
    printf("%s,%u,%.0f,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
           ",%.0f,%" G_GUINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%d\n",
           layout_mem_name(r->layout), r->struct_page_bytes, r->ram_bytes / 1048576.0,
           a->e820 ? "e820" : "default", r->mem_total_kb, r->low_total_kb, r->high_total_kb,
           r->lowmem_limit / 1048576.0, r->mem_map_bytes / 1024, r->lowmem_left_bytes / 1024,
           r->min_free_boot_bytes / 1024, r->boots, r->beyond_pae);
}

static void json_u64(JsonBuilder *b, const char *name, uint64_t v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, (gint64)v);
}

static void print_json(const LowmemReport *r, const MeminfoArgs *a)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "layout");
    json_builder_add_string_value(b, layout_mem_name(r->layout));
    json_builder_set_member_name(b, "map");
    json_builder_add_string_value(b, a->e820 ? a->e820 : "default");
    json_u64(b, "ram_bytes", r->ram_bytes);
    json_u64(b, "struct_page_bytes", r->struct_page_bytes);
    json_u64(b, "lowmem_limit_bytes", r->lowmem_limit);
    json_u64(b, "max_pfn", r->max_pfn);
    json_u64(b, "max_low_pfn", r->max_low_pfn);
    json_builder_set_member_name(b, "zones_pages");
    json_builder_begin_object(b);
    json_u64(b, "DMA", r->zone_pages[0]);
    json_u64(b, "Normal", r->zone_pages[1]);
    json_u64(b, "HighMem", r->zone_pages[2]);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "meminfo_kB");
    json_builder_begin_object(b);
    json_u64(b, "MemTotal", r->mem_total_kb);
    json_u64(b, "HighTotal", r->high_total_kb);
    json_u64(b, "LowTotal", r->low_total_kb);
    json_builder_end_object(b);
    json_u64(b, "mem_map_bytes", r->mem_map_bytes);
    json_builder_set_member_name(b, "mem_map_share_of_lowmem");
    double low_ram = (double)r->low_ram_pages * 4096.0;
    json_builder_add_double_value(b, low_ram > 0 ? r->mem_map_bytes / low_ram : 0.0);
    json_builder_set_member_name(b, "reservations");
    json_builder_begin_array(b);
    for (unsigned i = 0; i < r->n_items; i++) {
        const LowmemItem *it = &r->item[i];
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, it->name);
        json_u64(b, "bytes", it->bytes);
        json_builder_set_member_name(b, "phase");
        json_builder_add_string_value(b, phase_keys[it->phase]);
        json_builder_set_member_name(b, "scales_with_ram");
        json_builder_add_boolean_value(b, it->scales_with_ram);
        json_builder_set_member_name(b, "source");
        json_builder_add_string_value(b, it->source);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "lowmem_left_bytes");
    json_builder_add_int_value(b, r->lowmem_left_bytes);
    json_u64(b, "min_free_boot_bytes", r->min_free_boot_bytes);
    json_u64(b, "min_free_runtime_bytes", r->min_free_runtime_bytes);
    json_builder_set_member_name(b, "boots");
    json_builder_add_boolean_value(b, r->boots);
    json_builder_set_member_name(b, "beyond_pae");
    json_builder_add_boolean_value(b, r->beyond_pae);
    json_builder_end_object(b);
    cli_print_json_keep(b);
}

int cmd_meminfo(int argc, char **argv)
{
    MeminfoArgs a;
    g_autofree char *e820 = NULL;
    int rc = parse_args(argc, argv, &a, &e820);
    if (rc >= 0)
        return rc;
    LowmemMap map;
    GError *err = NULL;
    bool ok = a.e820 ? lowmem_map_load(&map, a.e820, &err)
                     : lowmem_map_default(&map, a.ram, &err);
    LowmemReport r;
    if (!ok || !lowmem_compute(a.layout, &map, &a.params, &r, &err))
        return cli_fail("meminfo", err);
    if (a.json)
        print_json(&r, &a);
    else if (a.csv)
        print_csv(&r, &a);
    else
        print_text(&r, &a);
    return VMS_EXIT_OK;
}
