/* Lowmem model: zone arithmetic worked by hand, a real 2.6.12 boot log, the
 * seed mail's /proc/meminfo and its claims, the e820 parser and the
 * running occupancy counter.
 *
 * Expected values come from outside the model: the seed mail
 * (../shared/seeds/001-...), REFERENCES.md, a real boot log quoted below,
 * or arithmetic done by hand in the comments. */
#include "kernel_model/lowmem.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

/* The seed mail, 64 GB box under 4G/4G (2.5.74-F8). */
#define SEED_MEMTOTAL 66052020ULL
#define SEED_HIGHTOTAL 62914556ULL
#define SEED_LOWTOTAL 3137464ULL

static LowmemReport run(const char *layout, uint64_t ram, uint32_t struct_page)
{
    LowmemMap map;
    LowmemReport r;
    GError *err = NULL;
    ck_assert(lowmem_map_default(&map, ram, &err));
    LowmemParams p = {.struct_page_bytes = struct_page};
    const LayoutMem *m = layout_mem_find(layout);
    ck_assert_ptr_nonnull(m);
    ck_assert(lowmem_compute(m, &map, &p, &r, &err));
    return r;
}

static double rel(double got, double want) { return (got - want) / want; }

/* ---- Layout constants ---------------------------------------------------- */

START_TEST(test_lowmem_limits)
{
    /* 4 GiB - PAGE_OFFSET - 128 MiB (page.h MAXMEM). */
    static const struct { const char *name; uint64_t limit; uint32_t per_proc; } want[] = {
        {"3g1g", 896 * MiB, 0},          /* 1024 - 128 */
        {"2g2g", 1920 * MiB, 0},         /* 2048 - 128 */
        {"1g3g", 2944 * MiB, 0},         /* 3072 - 128 */
        {"4g4g", 3936 * MiB, 4096},      /* 4096 - 32 - 128; kpmd page */
        {"kpti", 894 * MiB, 4096},       /* 896 - 2 MiB cpu_entry_area */
        {"kpti-pcid", 894 * MiB, 4096},
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
        const LayoutMem *m = layout_mem_find(want[i].name);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(layout_mem_lowmem_limit(m), want[i].limit);
        ck_assert_uint_eq(m->per_process_bytes, want[i].per_proc);
        /* extra page tables exactly where the kernel has its own (pgtable.c) */
        ck_assert_int_eq(m->layout->kernel_tables != LAYOUT_KTABLES_IN_USER, want[i].per_proc != 0);
    }
    GError *err = NULL;
    ck_assert_ptr_null(layout_mem_lookup("5g5g", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "4g4g"));
    g_clear_error(&err);
    /* every layout's row holds its memory figures, which name it back */
    for (const Layout *const *l = layout_all(); *l; l++) {
        const LayoutMem *m = layout_mem_find((*l)->name);
        ck_assert_ptr_eq(m, &(*l)->mem);
        ck_assert_ptr_eq(layout_mem_layout(m), *l);
        ck_assert_str_eq(layout_mem_name(m), (*l)->name);
        ck_assert_ptr_nonnull(m->source);
    }
    /* no name: the error lists the layouts */
    ck_assert_ptr_null(layout_mem_lookup(NULL, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "kpti-pcid"));
    g_clear_error(&err);
}
END_TEST

/* Every layout's row names its entry/exit stubs (Layout.stub): the build
 * must assemble that file (kernel_model/meson.build reads the rows'
 * names), or the machine cannot boot the layout. The shared split variants use one stub,
 * 4g4g, 4g4g-2003 (the 2003 entry path) and the kpti pair their own
 * (layout.h). */
START_TEST(test_layout_stubs_built)
{
    const char *build = g_getenv("VMSPLIT_BUILD_DIR");
    ck_assert_ptr_nonnull(build);
    for (const Layout *const *l = layout_all(); *l; l++) {
        ck_assert_ptr_nonnull((*l)->stub);
        g_autofree char *obj = g_strconcat((*l)->stub, ".o", NULL);
        g_autofree char *p = g_build_filename(build, "src", "kernel_model", obj, NULL);
        ck_assert_msg(g_file_test(p, G_FILE_TEST_EXISTS), "layout %s: no %s", (*l)->name, p);
        /* The stub follows the row's page tables (a swapper kernel table:
         * the 4G/4G entry, 2003's where it has no sysenter; a kernel/user
         * pair: pti's; else the shared entry) and its esp0 contract. */
        LayoutKernelTables kt = (*l)->kernel_tables;
        const char *want = kt == LAYOUT_KTABLES_SWAPPER
                               ? ((*l)->no_sysenter ? "entry_4g4g_2003" : "entry_4g4g")
                               : kt == LAYOUT_KTABLES_PER_PROCESS ? "entry_kpti" : "entry_shared";
        ck_assert_str_eq((*l)->stub, want);
        static const LayoutEsp0 esp0_of[] = {
            [LAYOUT_KTABLES_IN_USER] = LAYOUT_ESP0_TASK_STACK,
            [LAYOUT_KTABLES_SWAPPER] = LAYOUT_ESP0_VIRTUAL_STACK,
            [LAYOUT_KTABLES_PER_PROCESS] = LAYOUT_ESP0_ENTRY_STACK,
        };
        ck_assert_int_eq((*l)->esp0, esp0_of[kt]);
        /* A stack in the window needs a window; the shared layouts have none. */
        ck_assert_int_eq((*l)->window_size != 0, kt != LAYOUT_KTABLES_IN_USER);
        /* Window pages are global under pti (pti.rst: the entry text and
         * cpu_entry_area keep _PAGE_GLOBAL) and wherever all kernel pages
         * are; never under 4g4g (X86_SWITCH_PAGETABLES). */
        ck_assert_int_eq((*l)->window_global,
                         kt == LAYOUT_KTABLES_PER_PROCESS || (*l)->kernel_global);
        ck_assert(!(kt == LAYOUT_KTABLES_SWAPPER && (*l)->window_global));
    }
}
END_TEST

/* ---- Hand-worked small machine ------------------------------------------ */

START_TEST(test_lowmem_1g_3g1g_by_hand)
{
    LowmemReport r = run("3g1g", 1 * GiB, 40);
    /* 1 GiB = 262144 frames; 896 MiB = 229376; DMA 16 MiB = 4096. */
    ck_assert_uint_eq(r.max_pfn, 262144);
    ck_assert_uint_eq(r.max_low_pfn, 229376);
    ck_assert_uint_eq(r.zone_pages[0], 4096);
    ck_assert_uint_eq(r.zone_pages[1], 229376 - 4096);
    ck_assert_uint_eq(r.zone_pages[2], 262144 - 229376);
    /* RAM frames below 896 MiB: 0..0x9e (159) + 256..229375. */
    ck_assert_uint_eq(r.low_ram_pages, 159 + 229376 - 256);
    ck_assert_uint_eq(r.high_total_kb, 128 * 1024); /* 1024 - 896 MiB */
    ck_assert_uint_eq(r.mem_map_bytes, 262144ULL * 40); /* 10 MiB */
    /* Buddy bitmaps, orders 0..9, (size-1)>>(order+4) + 1 bytes, rounded
     * up to 4 (LONG_ALIGN):
     *   DMA 4096:      256,128,64,32,16,8,4,2->4,1->4,1->4      =   520
     *   Normal 225280: 14080,7040,3520,1760,880,440,220,110->112,
     *                  55->56,28                                  = 28136
     *   HighMem 32768: 2048,1024,512,256,128,64,32,16,8,4         =  4092
     * 32748 bytes -> 8 pages. Wait tables: 4096/256 = 16, 225280/256 = 880
     * -> 1024, 32768/256 = 128 heads of 12 B = 14016 bytes -> 4 pages. */
    const LowmemItem *bm = lowmem_report_item(&r, "buddy bitmaps");
    ck_assert_ptr_nonnull(bm);
    ck_assert_uint_eq(bm->bytes, 8 * 4096);
    const LowmemItem *wt = lowmem_report_item(&r, "zone wait tables");
    ck_assert_ptr_nonnull(wt);
    ck_assert_uint_eq(wt->bytes, 4 * 4096);
    /* Identities of /proc/meminfo. */
    ck_assert_uint_eq(r.mem_total_kb, r.low_total_kb + r.high_total_kb);
    ck_assert_uint_eq(r.low_total_kb, (r.low_ram_pages * 4096 - r.kept_bytes) / 1024);
    ck_assert(r.boots);
    ck_assert(!r.beyond_pae);
}
END_TEST

START_TEST(test_lowmem_no_pse_adds_pte_pages)
{
    LowmemMap map;
    GError *err = NULL;
    ck_assert(lowmem_map_default(&map, 1 * GiB, &err));
    LowmemReport a, b;
    LowmemParams pse = {0}, nopse = {.no_pse = true};
    const LayoutMem *m = layout_mem_find("3g1g");
    ck_assert(lowmem_compute(m, &map, &pse, &a, &err));
    ck_assert(lowmem_compute(m, &map, &nopse, &b, &err));
    /* 896 MiB / 2 MiB = 448 PTE pages = 1792 kB less lowmem. */
    ck_assert_uint_eq(a.low_total_kb - b.low_total_kb, 448 * 4);
}
END_TEST

/* ---- A real boot log ------------------------------------------------------ */

/* Linux 2.6.12.4 on a Dell GX280, LKML <20050808222146.GA7123@linuxace.com>.
 * The log says: "On node 0 totalpages: 259718 / DMA zone: 4096 pages /
 * Normal zone: 225280 pages / HighMem zone: 30342 pages", "896MB LOWMEM",
 * and "Memory: ... 121368k highmem". */
static const char gx280_e820[] =
    "BIOS-e820: 0000000000000000 - 00000000000a0000 (usable)\n"
    "BIOS-e820: 00000000000f0000 - 0000000000100000 (reserved)\n"
    "BIOS-e820: 0000000000100000 - 000000003f686c00 (usable)\n"
    "BIOS-e820: 000000003f686c00 - 000000003f688c00 (ACPI NVS)\n"
    "BIOS-e820: 000000003f688c00 - 000000003f68ac00 (ACPI data)\n"
    "BIOS-e820: 000000003f68ac00 - 0000000040000000 (reserved)\n"
    "BIOS-e820: 00000000e0000000 - 00000000f0000000 (reserved)\n"
    "BIOS-e820: 00000000fec00000 - 00000000fed00400 (reserved)\n"
    "BIOS-e820: 00000000fed20000 - 00000000feda0000 (reserved)\n"
    "BIOS-e820: 00000000fee00000 - 00000000fef00000 (reserved)\n"
    "BIOS-e820: 00000000ffb00000 - 0000000100000000 (reserved)\n";

START_TEST(test_lowmem_gx280_boot_log)
{
    LowmemMap map;
    LowmemReport r;
    GError *err = NULL;
    ck_assert(lowmem_map_parse(&map, gx280_e820, "gx280", &err));
    ck_assert_uint_eq(map.n, 2);
    LowmemParams p = {.struct_page_bytes = 32}; /* 2.6.12 */
    ck_assert(lowmem_compute(layout_mem_find("3g1g"), &map, &p, &r, &err));
    ck_assert_uint_eq(r.max_pfn, 259718);
    ck_assert_uint_eq(r.zone_pages[0], 4096);
    ck_assert_uint_eq(r.zone_pages[1], 225280);
    ck_assert_uint_eq(r.zone_pages[2], 30342);
    ck_assert_uint_eq(r.high_total_kb, 121368);
    /* mem_map 259718 x 32 B = 8116 kB of the log's 11624k "reserved". */
    ck_assert_uint_eq(r.mem_map_bytes / 1024, 8116);
}
END_TEST

/* ---- The seed mail --------------------------------------------------------- */

START_TEST(test_lowmem_seed_64g_4g4g)
{
    LowmemReport r40 = run("4g4g", 64 * GiB, 40); /* struct page, 2.5.74 */
    LowmemReport r44 = run("4g4g", 64 * GiB, 44); /* with CONFIG_HIGHPTE */
    /* HighTotal: all RAM from 4 GiB to the 36-bit limit is highmem: 60 GiB,
     * the seed's figure to one page. */
    ck_assert_uint_eq(r40.high_total_kb, 60 * 1024 * 1024);
    ck_assert_double_lt(fabs(rel(r40.high_total_kb, SEED_HIGHTOTAL)), 0.01);
    ck_assert_double_lt(fabs(rel(r40.mem_total_kb, SEED_MEMTOTAL)), 0.01);
    ck_assert_double_lt(fabs(rel(r44.mem_total_kb, SEED_MEMTOTAL)), 0.01);
    /* LowTotal: the seed lies between the 44 B and the 40 B kernels, and
     * is within 1 % of the 44 B one; the 40 B one is 1.7 % high (see
     * docs/lowmem.md: the PCI hole of the seed machine is unknown). */
    ck_assert_uint_lt(r44.low_total_kb, SEED_LOWTOTAL);
    ck_assert_uint_gt(r40.low_total_kb, SEED_LOWTOTAL);
    ck_assert_double_lt(fabs(rel(r44.low_total_kb, SEED_LOWTOTAL)), 0.01);
    ck_assert_double_lt(fabs(rel(r40.low_total_kb, SEED_LOWTOTAL)), 0.02);
    /* "3.1 GB is still usable": decimal GB of kB. */
    ck_assert_uint_ge(r40.low_total_kb, 3100000);
    ck_assert(r40.boots && r44.boots);
}
END_TEST

START_TEST(test_lowmem_seed_32g_3g1g)
{
    /* "With 32 GB of RAM the remaining 0.5 GB lowmem area ... only
     * represents 1.5% of all RAM." One significant figure: we accept
     * 0.4..0.6 GiB and 1..2 % for the default 40 B struct page. */
    LowmemReport r = run("3g1g", 32 * GiB, 40);
    double gib = r.low_total_kb / (1024.0 * 1024.0);
    double share = (double)r.low_total_kb / (32.0 * 1024 * 1024);
    ck_assert_double_ge(gib, 0.4);
    ck_assert_double_lt(gib, 0.6);
    ck_assert_double_ge(share, 0.010);
    ck_assert_double_lt(share, 0.020);
    ck_assert(r.boots);
}
END_TEST

START_TEST(test_lowmem_seed_64g_3g1g)
{
    /* "With 64 GB RAM, the mem_map[] alone takes up nearly 1 GB of RAM,
     * making the kernel unable to boot." At 40 B/page mem_map is 640 MiB
     * and, by hand, 896 - 640 - ~16 MiB of the rest leaves ~240 MiB: the
     * model says it boots, starved. Taking the mail's "nearly 1 GB"
     * literally -- 896 MiB / 16 Mi pages = 56 B -- it does not. */
    LowmemReport r40 = run("3g1g", 64 * GiB, 40);
    ck_assert_uint_eq(r40.mem_map_bytes, 640 * MiB);
    ck_assert(r40.boots);
    ck_assert_int_gt(r40.lowmem_left_bytes, 200 * (int64_t)MiB);
    ck_assert_int_lt(r40.lowmem_left_bytes, 256 * (int64_t)MiB);
    LowmemReport r56 = run("3g1g", 64 * GiB, 56);
    ck_assert_uint_eq(r56.mem_map_bytes, 896 * MiB);
    ck_assert(!r56.boots);
    /* The same machine boots under 4G/4G with either size. */
    ck_assert(run("4g4g", 64 * GiB, 56).boots);
}
END_TEST

START_TEST(test_lowmem_seed_ratios)
{
    /* "more than 3 times the amount of lowmem available to a 4GB system" */
    LowmemReport big = run("4g4g", 64 * GiB, 40);
    LowmemReport g4 = run("3g1g", 4 * GiB, 40);
    ck_assert_uint_gt(big.low_total_kb, 3 * g4.low_total_kb);
    ck_assert_uint_gt(SEED_LOWTOTAL, 3 * g4.low_total_kb);
    /* "more than 6 times the amount of lowmem a 32 GB system gets with the
     * 3/1 split": not with 40 B (the ratio is 5.4-5.5); it holds with the
     * 56 B reading of "nearly 1 GB" (docs/lowmem.md). */
    LowmemReport g32 = run("3g1g", 32 * GiB, 40);
    double ratio40 = (double)SEED_LOWTOTAL / g32.low_total_kb;
    ck_assert_double_gt(ratio40, 5.0);
    ck_assert_double_lt(ratio40, 6.0);
    LowmemReport g32b = run("3g1g", 32 * GiB, 56);
    ck_assert_uint_gt(SEED_LOWTOTAL, 6 * g32b.low_total_kb);
}
END_TEST

START_TEST(test_lowmem_seed_200g)
{
    /* "the 4G/4G patch could provide a mem_map[] for 200 GB (!) of physical
     * RAM on x86, while still having 1 GB of lowmem left" -- beyond the
     * 36-bit PAE limit, a what-if. 200 GB (decimal) and 200 GiB both. */
    for (int i = 0; i < 2; i++) {
        uint64_t ram = i ? 200 * GiB : 200000000000ULL;
        LowmemReport r = run("4g4g", ram, 40);
        ck_assert(r.beyond_pae);
        ck_assert(r.boots);
        ck_assert_int_ge(r.lowmem_left_bytes, (int64_t)GiB);
    }
}
END_TEST

START_TEST(test_lowmem_hansen_2g2g)
{
    /* REFERENCES.md: a 4 GB PAE box "with a 2G/2G split" showed LowTotal
     * 2909008 kB (2.6.20, 32 B). That is more than any 2G/2G kernel can
     * map (1920 MiB; 2048 MiB with PAGE_OFFSET 0x78000000), so it cannot
     * have been 2G/2G with the 128 MiB vmalloc reserve; 1G/3G gives it
     * within 3 %. */
    LowmemReport r2 = run("2g2g", 4 * GiB, 32);
    ck_assert_uint_lt(r2.low_total_kb, 2909008ULL);
    ck_assert_uint_le(r2.lowmem_limit, 2048 * MiB);
    LowmemReport r1 = run("1g3g", 4 * GiB, 32);
    ck_assert_double_lt(fabs(rel(r1.low_total_kb, 2909008.0)), 0.03);
}
END_TEST

START_TEST(test_lowmem_does_not_boot_tiny)
{
    /* 4 MiB of RAM: 3 MiB above 1 MiB hold the kernel (2.4 MiB) and
     * nothing near 64 MiB is left. */
    LowmemReport r = run("3g1g", 4 * MiB, 40);
    ck_assert(!r.boots);
    GError *err = NULL;
    LowmemMap map;
    ck_assert(!lowmem_map_default(&map, 1 * MiB, &err));
    g_error_free(err);
}
END_TEST

/* ---- Default map ----------------------------------------------------------- */

START_TEST(test_lowmem_default_map)
{
    LowmemMap m;
    GError *err = NULL;
    ck_assert(lowmem_map_default(&m, 1 * GiB, &err));
    ck_assert_uint_eq(m.n, 2);
    ck_assert_uint_eq(m.range[0].end, 0x9F000);
    ck_assert_uint_eq(m.range[1].start, 0x100000);
    ck_assert_uint_eq(m.range[1].end, 1 * GiB);
    ck_assert(lowmem_map_default(&m, 64 * GiB, &err));
    ck_assert_uint_eq(m.n, 3);
    ck_assert_uint_eq(m.range[1].end, 0xEB000000ULL);
    ck_assert_uint_eq(m.range[2].start, 4 * GiB);
    ck_assert_uint_eq(m.range[2].end, 64 * GiB); /* capped at 2^36 */
    ck_assert(lowmem_map_default(&m, 8 * GiB, &err));
    /* 8 GiB - 3760 MiB remapped above 4 GiB */
    ck_assert_uint_eq(m.range[2].end, 4 * GiB + 8 * GiB - 0xEB000000ULL);
    ck_assert_uint_eq(lowmem_map_ram_bytes(&m), 8 * GiB - (0x100000 - 0x9F000));
}
END_TEST

/* ---- e820 parser ----------------------------------------------------------- */

START_TEST(test_lowmem_map_parse_forms)
{
    const char *text =
        "# my box\n"
        "0 0x9f000 usable\n"
        "1M 3G          # plain sizes\n"
        "0xC0000000 0x100000000 reserved\n"
        "\n"
        "BIOS-e820: 0000000100000000 - 0000000200000000 (usable)\n"
        "BIOS-e820: 0000000180000000 - 0000000240000000 (usable)\n" /* overlaps */
        "4G 5G acpi\n";
    LowmemMap m;
    GError *err = NULL;
    ck_assert_msg(lowmem_map_parse(&m, text, "t", &err), "%s", err ? err->message : "");
    ck_assert_uint_eq(m.n, 3);
    ck_assert_uint_eq(m.range[1].start, 1 * MiB);
    ck_assert_uint_eq(m.range[1].end, 3 * GiB);
    ck_assert_uint_eq(m.range[2].start, 4 * GiB);
    ck_assert_uint_eq(m.range[2].end, 9 * GiB);
}
END_TEST

START_TEST(test_lowmem_map_parse_errors)
{
    static const struct { const char *text, *want; } bad[] = {
        {"0 1G\n1G zz\n", "f.e820:2: bad END"},
        {"0 1G\n\n# c\n5G 4G\n", "f.e820:4: END must be above START"},
        {"0 1G bananas\n", "f.e820:1: unknown type"},
        {"0x1000\n", "f.e820:1: expected"},
        {"-1 5\n", "f.e820:1: bad START"},
        {"0 1G reserved\n", "f.e820: no usable RAM"},
        {"# nothing\n", "f.e820: no usable RAM"},
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        LowmemMap m;
        GError *err = NULL;
        ck_assert(!lowmem_map_parse(&m, bad[i].text, "f.e820", &err));
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err->message, bad[i].want), "case %u: '%s'", i, err->message);
        g_error_free(err);
    }
    /* more than E820MAX usable ranges */
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i <= LOWMEM_MAP_MAX; i++)
        g_string_append_printf(s, "%uM %uM\n", 2 * i, 2 * i + 1);
    LowmemMap m;
    GError *err = NULL;
    ck_assert(!lowmem_map_parse(&m, s->str, "many", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "many:129:"));
    g_clear_error(&err);
    g_string_free(s, TRUE);
    ck_assert(!lowmem_map_load(&m, "/nonexistent/vmsplit.e820", &err));
    g_clear_error(&err);
}
END_TEST

/* ---- Running occupancy ----------------------------------------------------- */

START_TEST(test_lowmem_state_sequence)
{
    /* capacity 100, min_free 30: hand-worked sequence.
     *  ev0 charge 50 slab      current 50  free 50
     *  ev1 charge 30 pt        current 80  free 20  < 30 -> below_min_at 1
     *  ev2 release 40 slab     current 40  free 60
     *  ev3 charge 70 kpt       current 110 free -10 -> exhausted_at 3
     *  ev4 release 70 kpt      current 40 */
    LowmemState *s = lowmem_state_new(100, 30);
    lowmem_charge(s, 50, LOWMEM_REASON_SLAB);
    lowmem_charge(s, 30, LOWMEM_REASON_PAGE_TABLES);
    lowmem_release(s, 40, LOWMEM_REASON_SLAB);
    lowmem_charge(s, 70, LOWMEM_REASON_KERNEL_PT);
    lowmem_release(s, 70, LOWMEM_REASON_KERNEL_PT);
    LowmemStats st;
    lowmem_state_stats(s, &st);
    ck_assert_uint_eq(st.current, 40);
    ck_assert_uint_eq(st.peak, 110);
    ck_assert_uint_eq(st.events, 5);
    ck_assert_int_eq(st.free_now, 60);
    ck_assert_int_eq(st.below_min_at, 1);
    ck_assert_int_eq(st.exhausted_at, 3);
    LowmemReasonTotals t = lowmem_state_reason(s, LOWMEM_REASON_SLAB);
    ck_assert_uint_eq(t.charged, 50);
    ck_assert_uint_eq(t.released, 40);
    ck_assert_uint_eq(t.current, 10);
    ck_assert_uint_eq(t.peak, 50);
    t = lowmem_state_reason(s, LOWMEM_REASON_KERNEL_PT);
    ck_assert_uint_eq(t.peak, 70);
    ck_assert_uint_eq(t.current, 0);
    t = lowmem_state_reason(s, "never");
    ck_assert_uint_eq(t.charged, 0);
    lowmem_state_free(s);
}
END_TEST

static void collect(const char *reason, const LowmemReasonTotals *t, void *ud)
{
    g_string_append_printf(ud, "%s=%" G_GUINT64_FORMAT ";", reason, t->current);
}

START_TEST(test_lowmem_state_foreach_and_report)
{
    LowmemReport r = run("4g4g", 64 * GiB, 40);
    LowmemState *s = lowmem_state_new_for(&r);
    /* 1000 processes under 4g4g: 4 KiB of kernel-side page tables each. */
    const LayoutMem *m = layout_mem_find("4g4g");
    for (int i = 0; i < 1000; i++)
        lowmem_charge(s, m->per_process_bytes, LOWMEM_REASON_KERNEL_PT);
    lowmem_charge(s, 4096, "slab:open");
    LowmemStats st;
    lowmem_state_stats(s, &st);
    ck_assert_uint_eq(st.current, 1001 * 4096);
    ck_assert_int_eq(st.free_now, r.lowmem_left_bytes - 1001 * 4096);
    ck_assert_int_eq(st.exhausted_at, -1);
    ck_assert_int_eq(st.below_min_at, -1);
    GString *g = g_string_new(NULL);
    lowmem_state_foreach(s, collect, g);
    ck_assert_str_eq(g->str, "kernel-side page tables=4096000;slab:open=4096;");
    g_string_free(g, TRUE);
    lowmem_state_free(s);
    /* min_free_kbytes = sqrt(16 x lowmem kB) -> ~7.1 MB for ~3.1 GB,
     * below the 64 MiB clamp. */
    double want = sqrt(16.0 * r.lowmem_left_bytes / 1024.0) * 1024.0;
    ck_assert_double_lt(fabs(r.min_free_runtime_bytes - want), 1024.0);
}
END_TEST

START_TEST(test_lowmem_state_bad_release)
{
    LowmemState *s = lowmem_state_new(100, 0);
    lowmem_charge(s, 10, LOWMEM_REASON_SLAB);
    lowmem_release(s, 11, LOWMEM_REASON_SLAB); /* aborts */
}
END_TEST

static Suite *lowmem_suite(void)
{
    Suite *s = suite_create("lowmem");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, test_lowmem_limits);
    tcase_add_test(tc, test_layout_stubs_built);
    tcase_add_test(tc, test_lowmem_1g_3g1g_by_hand);
    tcase_add_test(tc, test_lowmem_no_pse_adds_pte_pages);
    tcase_add_test(tc, test_lowmem_gx280_boot_log);
    tcase_add_test(tc, test_lowmem_does_not_boot_tiny);
    tcase_add_test(tc, test_lowmem_default_map);
    suite_add_tcase(s, tc);
    TCase *seed = tcase_create("seed");
    tcase_add_test(seed, test_lowmem_seed_64g_4g4g);
    tcase_add_test(seed, test_lowmem_seed_32g_3g1g);
    tcase_add_test(seed, test_lowmem_seed_64g_3g1g);
    tcase_add_test(seed, test_lowmem_seed_ratios);
    tcase_add_test(seed, test_lowmem_seed_200g);
    tcase_add_test(seed, test_lowmem_hansen_2g2g);
    suite_add_tcase(s, seed);
    TCase *e820 = tcase_create("e820");
    tcase_add_test(e820, test_lowmem_map_parse_forms);
    tcase_add_test(e820, test_lowmem_map_parse_errors);
    suite_add_tcase(s, e820);
    TCase *st = tcase_create("state");
    tcase_add_test(st, test_lowmem_state_sequence);
    tcase_add_test(st, test_lowmem_state_foreach_and_report);
    tcase_add_test_raise_signal(st, test_lowmem_state_bad_release, SIGABRT);
    suite_add_tcase(s, st);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lowmem_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
