/* Physical memory maps (`vmsplit meminfo --e820 FILE`, lowmem_map_load in
 * src/kernel_model/lowmem.c): "START END [TYPE]" lines or Linux's
 * "BIOS-e820: START - END (TYPE)", read from a file; then the boot-time
 * lowmem model on the map (lowmem_compute), as meminfo runs it, under a
 * layout and a sizeof(struct page) chosen from the input's size.
 *
 * What a map read without an error must be (lowmem.h): at most E820MAX
 * usable ranges, each non-empty, sorted and apart (touching or overlapping
 * ones merged). What the model must give for it: zones that add up to
 * max_pfn, RAM pages no more than the map holds, MemTotal no more than the
 * RAM, LowTotal within the layout's lowmem limit, and a kernel that boots
 * only with its boot-time reserve free. */
#include "fuzz.h"

#include "kernel_model/layout.h"
#include "kernel_model/layout_mem.h"
#include "kernel_model/lowmem.h"

static const char *const layouts[] = { "3g1g", "2g2g", "1g3g", "4g4g", "kpti" };
static const uint32_t struct_pages[] = { 0, 32, 40, 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".e820");
    LowmemMap m;
    GError *e = NULL;
    if (!lowmem_map_load(&m, path, &e)) {
        fuzz_check_error(e);
        return 0;
    }
    g_assert_cmpuint(m.n, <=, LOWMEM_MAP_MAX);
    uint64_t sum = 0;
    for (unsigned i = 0; i < m.n; i++) {
        g_assert_cmpuint(m.range[i].start, <, m.range[i].end);
        if (i)
            g_assert_cmpuint(m.range[i - 1].end, <, m.range[i].start);
        sum += m.range[i].end - m.range[i].start;
    }
    g_assert_cmpuint(lowmem_map_ram_bytes(&m), ==, sum);

    const Layout *l = layout_find(layouts[size % G_N_ELEMENTS(layouts)]);
    g_assert(l != NULL);
    l = layout_with_paging(l, (size / 5) % 2 ? PAGING_LEGACY : PAGING_PAE);
    LowmemParams p = { .struct_page_bytes = struct_pages[(size / 10) % 4],
                       .no_pse = (size / 40) % 2 };
    LowmemReport r;
    if (!lowmem_compute(&l->mem, &m, &p, &r, &e)) {
        fuzz_check_error(e);
        return 0;
    }
    g_assert_cmpuint(r.zone_pages[0] + r.zone_pages[1] + r.zone_pages[2], ==, r.max_pfn);
    g_assert_cmpuint(r.max_low_pfn, <=, r.max_pfn);
    g_assert_cmpuint(r.low_ram_pages, <=, r.max_low_pfn);
    g_assert_cmpuint(r.high_ram_pages, <=, r.max_pfn - r.max_low_pfn);
    g_assert_cmpuint(r.low_ram_pages + r.high_ram_pages, <=, sum / 4096 + m.n);
    g_assert_cmpuint(r.mem_total_kb, <=, sum / 1024 + 4 * (uint64_t)m.n);
    g_assert_cmpuint(r.low_total_kb * 1024, <=, r.lowmem_limit);
    if (r.boots)
        g_assert_cmpint(r.lowmem_left_bytes, >=, (int64_t)r.min_free_boot_bytes);
    return 0;
}
