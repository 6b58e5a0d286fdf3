/* The lowmem model; see lowmem.h for the picture and docs/lowmem.md for the
 * derivations. Every constant carries its source or says "estimate". */
#include "kernel_model/lowmem.h"
#include "textfile/textfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)
#define PAGE 4096ULL
#define PFN_UP(x) (((x) + PAGE - 1) / PAGE)
#define PFN_DOWN(x) ((x) / PAGE)
#define PAGES(bytes) PFN_UP(bytes)

G_DEFINE_QUARK(vmsplit-lowmem-error-quark, lowmem_error)

/* ---- Constants ---------------------------------------------------------- */

/* ZONE_DMA ends at 16 MiB (MAX_DMA_ADDRESS, include/asm-i386/dma.h). */
#define DMA_END (16 * MiB)
/* Linux's conventional-memory end when it fakes a map: LOWMEMSIZE() 0x9f000
 * (arch/i386/kernel/setup.c); 640 KiB-1 MiB is never RAM (copy_e820_map). */
#define LEGACY_RAM_END 0x9F000ULL
#define LEGACY_HOLE_END (1 * MiB)
/* 36-bit physical addresses with PAE: MAXPHYADDR 36 (Intel SDM Vol. 3A
 * 4.1.4), so nothing can be remapped above 64 GiB. */
#define PAE_LIMIT (64 * GiB)

/* Buddy allocator of 2.5.74/2.6.0 (mm/page_alloc.c): MAX_ORDER 11, one
 * bitmap per order 0..9, "(size-1) >> (i+4)" bytes + 1, LONG_ALIGNed. */
#define MAX_ORDER 11
/* wait_table_size(): one wait_queue_head_t per 256 pages, power of two,
 * 4..4096 entries; wait_queue_head_t = spinlock (4) + list_head (8) on
 * i386 SMP. */
#define PAGES_PER_WAITQUEUE 256
#define WAITQUEUE_HEAD_BYTES 12

/* Kernel image. Estimate from a real 2.6 SMP i386 boot log (Linux 2.6.12.4,
 * Dell GX280, LKML <20050808222146.GA7123@linuxace.com>): "1635k kernel
 * code, 11624k reserved, 486k data, 188k init". Of the 11624k, mem_map is
 * 8116k (259719 pages x 32 B) and the boot-time hashes 832k (PID 64k,
 * dentry 512k, inode 256k, all logged); that leaves 367k for bss, page 0,
 * the SMP trampoline, EBDA and the boot page tables, of which 24k are the
 * page tables we count separately. A 2.5.74 SMP PAE kernel is of the same
 * generation; we take its image to be the same size. */
#define IMAGE_CODE (1635 * KiB)
#define IMAGE_DATA (486 * KiB)
#define IMAGE_OTHER (343 * KiB)
#define IMAGE_INIT (188 * KiB)

/* The ranged estimates (lowmem.h). */
const LowmemEstimate lowmem_estimates[LOWMEM_NEST] = {
    [LOWMEM_EST_STRUCT_PAGE] = {
        "struct page", "B", LOWMEM_STRUCT_PAGE_DEFAULT, 40, 56,
        "40 B is 2.5.74's struct page as LWN gives it (nothing smaller before 2.6.12's 32 B); "
        "44 with CONFIG_HIGHPTE, likely on a 64 GB box; 2.4 kernels 44-52 B (Gorman); the "
        "mail's own \"nearly 1 GB\" of mem_map at 64 GB implies about 56 B" },
    [LOWMEM_EST_TOLM] = {
        "top of low RAM (PCI hole)", "MiB", LOWMEM_DEFAULT_TOLM >> 20, 3392, 3840,
        "3760 MiB from a Dell PowerEdge 4400's 3799580K (LKML, Jan 2002); 3392 MiB: the 700 MB "
        "hole of an HP LP6000 in the same thread; 3840 MiB: a 256 MiB hole, an estimate for a "
        "server with little PCI space reserved (no measurement)" },
    [LOWMEM_EST_IMAGE] = {
        "kernel image kept", "KiB", (IMAGE_CODE + IMAGE_DATA + IMAGE_OTHER) / KiB, 1536, 4096,
        "2464 KiB from a 2.6.12.4 SMP boot log; estimate: 1.5 MiB (a lean SMP kernel) to 4 MiB "
        "(one with many built-in drivers, as a distribution's 64 GB kernel)" },
};

/* Post-boot hash tables of 2.5.74/2.6.0 (fs/dcache.c dcache_init,
 * fs/inode.c inode_init): mempages >> (13 - PAGE_SHIFT) resp.
 * (14 - PAGE_SHIFT) buckets of an hlist_head (4 B), rounded up to a power
 * of two pages, from __get_free_pages -- which cannot give more than order
 * MAX_ORDER-1 (4 MiB), so the loop falls back to that. */
#define HLIST_HEAD_BYTES 4
#define MAX_BUDDY_BYTES ((1ULL << (MAX_ORDER - 1)) * PAGE)

/* Boot floor: find_max_low_pfn() in arch/i386/kernel/setup.c refuses a
 * highmem= setting that leaves "smaller than 64MB lowmem"; we use the same
 * 64 MiB as the least free lowmem the kernel needs after its boot
 * reservations to come up (slab caches, stacks, init, drivers). */
#define MIN_FREE_BOOT (64 * MiB)

/* ---- Map ---------------------------------------------------------------- */

static int range_cmp(const void *a, const void *b)
{
    const LowmemRange *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort and merge overlapping or touching ranges, drop empty ones (Linux's
 * sanitize_e820_map does the same for RAM). */
static void map_normalise(LowmemMap *m)
{
    qsort(m->range, m->n, sizeof m->range[0], range_cmp);
    unsigned out = 0;
    for (unsigned i = 0; i < m->n; i++) {
        LowmemRange r = m->range[i];
        if (r.end <= r.start)
            continue;
        if (out && r.start <= m->range[out - 1].end) {
            if (r.end > m->range[out - 1].end)
                m->range[out - 1].end = r.end;
        } else {
            m->range[out++] = r;
        }
    }
    m->n = out;
}

static void map_add(LowmemMap *m, uint64_t start, uint64_t end)
{
    g_assert(m->n < LOWMEM_MAP_MAX);
    m->range[m->n++] = (LowmemRange){start, end};
}

bool lowmem_map_default(LowmemMap *m, uint64_t ram, GError **err)
{
    return lowmem_map_default_tolm(m, ram, LOWMEM_DEFAULT_TOLM, err);
}

bool lowmem_map_default_tolm(LowmemMap *m, uint64_t ram, uint64_t tolm, GError **err)
{
    memset(m, 0, sizeof *m);
    if (ram < 2 * MiB) {
        g_set_error(err, LOWMEM_ERROR, LOWMEM_ERROR_VALUE,
                    "RAM size %" G_GUINT64_FORMAT " bytes is too small (need at least 2 MiB)",
                    ram);
        return false;
    }
    map_add(m, 0, LEGACY_RAM_END);
    uint64_t below = MIN(ram, tolm);
    map_add(m, LEGACY_HOLE_END, below);
    if (ram > below) {
        uint64_t top = 4 * GiB + (ram - below);
        if (ram <= PAE_LIMIT && top > PAE_LIMIT)
            top = PAE_LIMIT; /* the hole's RAM cannot go above 2^36 */
        map_add(m, 4 * GiB, top);
    }
    map_normalise(m);
    return true;
}

uint64_t lowmem_map_ram_bytes(const LowmemMap *m)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < m->n; i++)
        sum += m->range[i].end - m->range[i].start;
    return sum;
}

/* A number: 0x-prefixed hex, or decimal with an optional K/M/G/T suffix;
 * in dmesg style (hex_default) bare digits are hex. */
static bool parse_number(const char *s, bool hex_default, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return false;
    bool hex = hex_default || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'));
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
    if (errno || end == s)
        return false;
    uint64_t mul = 1;
    if (!hex && *end) {
        switch (*end) {
        case 'k': case 'K': mul = KiB; break;
        case 'm': case 'M': mul = MiB; break;
        case 'g': case 'G': mul = GiB; break;
        case 't': case 'T': mul = 1024 * GiB; break;
        default: return false;
        }
        end++;
    }
    if (*end || v > UINT64_MAX / mul)
        return false;
    *out = v * mul;
    return true;
}

/* Type word: usable RAM or not. Linux's names and the short ones. */
static bool parse_type(const char *t, bool *usable)
{
    static const char *const ram[] = {"usable", "ram", NULL};
    static const char *const other[] = {"reserved", "acpi", "nvs", "unusable", NULL};
    for (const char *const *k = ram; *k; k++)
        if (!g_ascii_strcasecmp(t, *k))
            return *usable = true;
    for (const char *const *k = other; *k; k++)
        if (!g_ascii_strncasecmp(t, *k, strlen(*k)))
            return !(*usable = false);
    return false;
}

#define MAP_SYNTAX "expected 'START END [usable|reserved|acpi|nvs]' or " \
                   "'BIOS-e820: START - END (TYPE)'"

/* One non-empty line. Returns false with *why set on a syntax error. */
static bool parse_map_line(char *line, uint64_t *start, uint64_t *end, bool *usable,
                           const char **why)
{
    /* "(ACPI data)" -> one token: drop parentheses, keep the first word. */
    bool dmesg = g_str_has_prefix(line, "BIOS-e820:");
    if (dmesg)
        line += strlen("BIOS-e820:");
    for (char *p = line; *p; p++)
        if (*p == '(' || *p == ')')
            *p = ' ';
    gchar **tok = g_strsplit_set(g_strstrip(line), " \t", -1);
    const char *w[4] = {NULL};
    unsigned n = 0;
    for (gchar **t = tok; *t; t++)
        if (**t && n < 4)
            w[n++] = *t;
    /* dmesg style puts a "-" between the addresses. */
    if (n >= 3 && !strcmp(w[1], "-")) {
        w[1] = w[2];
        w[2] = n > 3 ? w[3] : NULL;
        n--;
    }
    bool ok = false;
    *usable = true;
    if (n < 2)
        *why = MAP_SYNTAX;
    else if (!parse_number(w[0], dmesg, start))
        *why = "bad START address (hex with 0x, or decimal with K/M/G)";
    else if (!parse_number(w[1], dmesg, end))
        *why = "bad END address (hex with 0x, or decimal with K/M/G)";
    else if (*end <= *start)
        *why = "END must be above START (ranges are [START, END))";
    else if (n >= 3 && w[2] && !parse_type(w[2], usable))
        *why = "unknown type (expected usable, ram, reserved, acpi or nvs)";
    else
        ok = true;
    g_strfreev(tok);
    return ok;
}

bool lowmem_map_parse(LowmemMap *m, const char *text, const char *name, GError **err)
{
    memset(m, 0, sizeof *m);
    gchar **lines = g_strsplit(text, "\n", -1);
    bool ok = true;
    for (unsigned i = 0; lines[i] && ok; i++) {
        char *hash = strchr(lines[i], '#');
        if (hash)
            *hash = '\0';
        if (!*g_strstrip(lines[i]))
            continue;
        uint64_t start = 0, end = 0;
        bool usable = true;
        const char *why = NULL;
        if (!parse_map_line(lines[i], &start, &end, &usable, &why)) {
            g_set_error(err, LOWMEM_ERROR, LOWMEM_ERROR_PARSE, "%s:%u: %s", name, i + 1, why);
            ok = false;
        } else if (usable && m->n == LOWMEM_MAP_MAX) {
            g_set_error(err, LOWMEM_ERROR, LOWMEM_ERROR_PARSE,
                        "%s:%u: more than %d usable ranges (E820MAX)", name, i + 1,
                        LOWMEM_MAP_MAX);
            ok = false;
        } else if (usable) {
            map_add(m, start, end);
        }
    }
    g_strfreev(lines);
    if (!ok)
        return false;
    map_normalise(m);
    if (!m->n || !PFN_DOWN(m->range[m->n - 1].end)) {
        g_set_error(err, LOWMEM_ERROR, LOWMEM_ERROR_PARSE,
                    "%s: no usable RAM range (need at least one 'START END usable' line)", name);
        return false;
    }
    return true;
}

bool lowmem_map_load(LowmemMap *m, const char *path, GError **err)
{
    gchar *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, err))
        return false;
    /* The parser reads a C string: a NUL byte would end the map there and
     * silently drop every range after it (textfile.h). */
    bool ok = textfile_check(text, len, path, LOWMEM_ERROR, LOWMEM_ERROR_PARSE, err) &&
              lowmem_map_parse(m, text, path, err);
    g_free(text);
    return ok;
}

/* ---- Boot-time model ---------------------------------------------------- */

/* RAM page frames in [lo, hi): page_is_ram() rounds a range's start up and
 * its end down (arch/i386/mm/init.c). */
static uint64_t ram_pages_between(const LowmemMap *m, uint64_t lo, uint64_t hi)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < m->n; i++) {
        uint64_t a = MAX(PFN_UP(m->range[i].start), lo);
        uint64_t b = MIN(PFN_DOWN(m->range[i].end), hi);
        if (b > a)
            n += b - a;
    }
    return n;
}

static uint64_t buddy_bitmap_bytes(uint64_t zone_pages)
{
    if (!zone_pages)
        return 0;
    uint64_t sum = 0;
    for (unsigned i = 0; i < MAX_ORDER - 1; i++) {
        uint64_t b = ((zone_pages - 1) >> (i + 4)) + 1;
        sum += (b + 3) & ~3ULL; /* LONG_ALIGN on i386 */
    }
    return sum;
}

static uint64_t wait_table_bytes(uint64_t zone_pages)
{
    if (!zone_pages)
        return 0;
    uint64_t want = zone_pages / PAGES_PER_WAITQUEUE, size = 1;
    while (size < want)
        size <<= 1;
    size = CLAMP(size, 4, 4096);
    return size * WAITQUEUE_HEAD_BYTES;
}

/* 2.5.74 hash sizing: buckets = mempages >> shift, table rounded up to a
 * power-of-two number of pages, at most one MAX_ORDER-1 block. */
static uint64_t post_boot_hash_bytes(uint64_t mempages, unsigned shift)
{
    uint64_t want = (mempages >> shift) * HLIST_HEAD_BYTES, bytes = PAGE;
    while (bytes < want)
        bytes <<= 1;
    return MIN(bytes, MAX_BUDDY_BYTES);
}

static void add_item(LowmemReport *r, const char *name, uint64_t bytes, LowmemPhase phase,
                     bool scales, const char *source)
{
    g_assert(r->n_items < LOWMEM_ITEMS_MAX);
    r->item[r->n_items++] = (LowmemItem){name, PAGES(bytes) * PAGE, phase, scales, source};
}

static void add_items(LowmemReport *r, const LowmemParams *p, const PageTableFormat *f)
{
    uint64_t zone_bytes = 0, wait_bytes = 0;
    for (unsigned z = 0; z < 3; z++) {
        zone_bytes += buddy_bitmap_bytes(r->zone_pages[z]);
        wait_bytes += wait_table_bytes(r->zone_pages[z]);
    }
    /* PAE: pagetable_init allocates a PMD page for each of the 4 PGD
     * entries; with PSE lowmem is mapped by 2 MiB PMD entries, without it
     * one PTE page maps 2 MiB; one PTE page each for pkmap (LAST_PKMAP 512)
     * and the fixmap (arch/i386/mm/init.c pagetable_init). Legacy paging
     * (pgtable-2level: the PMD folded into swapper_pg_dir, which is in the
     * kernel image): no PMD pages, 4 MiB PSE pages, and without PSE one
     * PTE page (1024 entries) per 4 MiB. */
    uint64_t pt = ((f->levels == 3 ? 4 : 0) + 2) * PAGE;
    uint64_t per_pt = (uint64_t)f->entries[f->levels - 1];
    if (p->no_pse)
        pt += (r->max_low_pfn + per_pt - 1) / per_pt * PAGE;

    add_item(r, "mem_map", r->mem_map_bytes, LOWMEM_KEPT, true,
             "max_pfn x sizeof(struct page); flat mem_map spans holes (free_area_init)");
    add_item(r, "buddy bitmaps", zone_bytes, LOWMEM_KEPT, true,
             "2.6.0 mm/page_alloc.c free_area_init_core: (size-1)>>(order+4)+1 bytes, "
             "orders 0..9, per zone");
    add_item(r, "zone wait tables", wait_bytes, LOWMEM_KEPT, true,
             "wait_table_size(): pages/256 heads, pow2, 4..4096, 12 B each");
    add_item(r, "direct-map page tables", pt, LOWMEM_KEPT, p->no_pse,
             f->levels == 3 ? "pagetable_init: 4 PAE PMD pages + pkmap and fixmap PTE pages"
                              "; a PTE page per 2 MiB without PSE"
                            : "pagetable_init (non-PAE): pkmap and fixmap PTE pages; a PTE "
                              "page per 4 MiB without PSE");
    add_item(r, "kernel image",
             p->image_bytes ? p->image_bytes : IMAGE_CODE + IMAGE_DATA + IMAGE_OTHER, LOWMEM_KEPT,
             false,
             "estimate: 1635k code + 486k data + 343k bss/page 0/trampoline, from a "
             "2.6.12.4 SMP boot log (LKML <20050808222146.GA7123@linuxace.com>)");
    add_item(r, "kernel init sections", IMAGE_INIT, LOWMEM_FREED_AFTER_BOOT, false,
             "estimate: 188k init from the same boot log; freed by free_initmem");
    add_item(r, "bootmem bitmap", (r->max_low_pfn + 7) / 8, LOWMEM_FREED_AFTER_BOOT, true,
             "init_bootmem: one bit per lowmem page; freed by free_all_bootmem");
    add_item(r, "dentry hash", post_boot_hash_bytes(r->max_pfn, 1), LOWMEM_AFTER_BOOT, true,
             "2.6.0 dcache_init: mempages>>1 hlist heads, <= 4 MiB (MAX_ORDER)");
    add_item(r, "inode hash", post_boot_hash_bytes(r->max_pfn, 2), LOWMEM_AFTER_BOOT, true,
             "2.6.0 inode_init: mempages>>2 hlist heads, <= 4 MiB (MAX_ORDER)");
}

/* min_free_kbytes = sqrt(lowmem_kbytes * 16), clamped to 128 kB..64 MiB
 * (2.6 mm/page_alloc.c init_per_zone_pages_min). */
static uint64_t min_free_watermark(int64_t free_low_bytes)
{
    double kb = free_low_bytes > 0 ? (double)free_low_bytes / KiB : 0;
    uint64_t w = (uint64_t)sqrt(kb * 16.0);
    return CLAMP(w, 128, 65536) * KiB;
}

bool lowmem_compute(const LayoutMem *layout, const LowmemMap *map, const LowmemParams *p,
                    LowmemReport *r, GError **err)
{
    static const LowmemParams defaults = {0};
    if (!p)
        p = &defaults;
    memset(r, 0, sizeof *r);
    if (!map->n || !PFN_DOWN(map->range[map->n - 1].end)) {
        g_set_error(err, LOWMEM_ERROR, LOWMEM_ERROR_VALUE, "memory map has no RAM");
        return false;
    }
    r->layout = layout;
    r->struct_page_bytes = p->struct_page_bytes ? p->struct_page_bytes
                                                : LOWMEM_STRUCT_PAGE_DEFAULT;
    r->ram_bytes = lowmem_map_ram_bytes(map);
    r->lowmem_limit = layout_mem_lowmem_limit(layout);

    /* setup_memory: max_pfn is the end of the highest RAM range,
     * max_low_pfn = min(max_pfn, MAXMEM_PFN) (find_max_low_pfn). */
    r->max_pfn = PFN_DOWN(map->range[map->n - 1].end);
    const PageTableFormat *f = layout->layout->paging;
    if (f->mode == PAGING_LEGACY && r->max_pfn > PFN_DOWN(f->phys_limit)) {
        /* A non-PAE kernel cuts RAM at 4 GiB (2.6 arch/i386/kernel/setup.c
         * find_max_pfn: max_pfn = MAX_NONPAE_PFN, "Warning only 4GB will
         * be used. Use a PAE enabled kernel."): no highmem above it. */
        r->beyond_pae = true;
        r->max_pfn = PFN_DOWN(f->phys_limit);
    } else {
        r->beyond_pae = r->max_pfn > PFN_DOWN(PAE_LIMIT);
    }
    r->max_low_pfn = MIN(r->max_pfn, PFN_DOWN(r->lowmem_limit));
    r->zone_pages[0] = MIN(r->max_low_pfn, PFN_DOWN(DMA_END));
    r->zone_pages[1] = r->max_low_pfn - r->zone_pages[0];
    r->zone_pages[2] = r->max_pfn - r->max_low_pfn;
    r->low_ram_pages = ram_pages_between(map, 0, r->max_low_pfn);
    r->high_ram_pages = ram_pages_between(map, r->max_low_pfn, r->max_pfn);
    r->mem_map_bytes = r->max_pfn * r->struct_page_bytes;

    add_items(r, p, f);
    uint64_t after_boot = 0;
    for (unsigned i = 0; i < r->n_items; i++) {
        const LowmemItem *it = &r->item[i];
        if (it->phase == LOWMEM_KEPT)
            r->kept_bytes += it->bytes;
        if (it->phase == LOWMEM_AFTER_BOOT)
            after_boot += it->bytes;
        else
            r->boot_peak_bytes += it->bytes;
    }

    uint64_t low_ram = r->low_ram_pages * PAGE;
    int64_t low_total = (int64_t)low_ram - (int64_t)r->kept_bytes;
    r->high_total_kb = r->high_ram_pages * PAGE / KiB;
    r->low_total_kb = low_total > 0 ? (uint64_t)low_total / KiB : 0;
    r->mem_total_kb = r->low_total_kb + r->high_total_kb;
    r->lowmem_left_bytes = low_total - (int64_t)after_boot;
    r->min_free_boot_bytes = MIN_FREE_BOOT;
    r->min_free_runtime_bytes = min_free_watermark(r->lowmem_left_bytes);
    r->boots = r->boot_peak_bytes <= low_ram &&
               r->lowmem_left_bytes >= (int64_t)r->min_free_boot_bytes;
    return true;
}

const LowmemItem *lowmem_report_item(const LowmemReport *r, const char *name)
{
    for (unsigned i = 0; i < r->n_items; i++)
        if (!strcmp(r->item[i].name, name))
            return &r->item[i];
    return NULL;
}

/* ---- Running occupancy -------------------------------------------------- */

struct LowmemState {
    uint64_t capacity, min_free;
    LowmemStats st;
    GHashTable *by_reason;   /* reason -> LowmemReasonTotals* */
    GPtrArray *order;        /* reasons, first-charge order (owned keys) */
};

LowmemState *lowmem_state_new(uint64_t capacity, uint64_t min_free)
{
    LowmemState *s = g_new0(LowmemState, 1);
    s->capacity = capacity;
    s->min_free = min_free;
    s->st.free_now = (int64_t)capacity;
    s->st.exhausted_at = -1;
    s->st.below_min_at = -1;
    s->by_reason = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    s->order = g_ptr_array_new_with_free_func(g_free);
    return s;
}

LowmemState *lowmem_state_new_for(const LowmemReport *r)
{
    uint64_t cap = r->lowmem_left_bytes > 0 ? (uint64_t)r->lowmem_left_bytes : 0;
    return lowmem_state_new(cap, r->min_free_runtime_bytes);
}

void lowmem_state_free(LowmemState *s)
{
    if (!s)
        return;
    g_hash_table_destroy(s->by_reason);
    g_ptr_array_free(s->order, TRUE);
    g_free(s);
}

static LowmemReasonTotals *reason_get(LowmemState *s, const char *reason)
{
    LowmemReasonTotals *t = g_hash_table_lookup(s->by_reason, reason);
    if (!t) {
        char *key = g_strdup(reason);
        g_ptr_array_add(s->order, key);
        t = g_new0(LowmemReasonTotals, 1);
        g_hash_table_insert(s->by_reason, key, t);
    }
    return t;
}

/* After every event: update free space and the first-crossing indices. */
static void state_after_event(LowmemState *s)
{
    uint64_t index = s->st.events++;
    s->st.free_now = (int64_t)s->capacity - (int64_t)s->st.current;
    if (s->st.free_now < 0 && s->st.exhausted_at < 0)
        s->st.exhausted_at = (int64_t)index;
    if (s->st.free_now < (int64_t)s->min_free && s->st.below_min_at < 0)
        s->st.below_min_at = (int64_t)index;
}

void lowmem_charge(LowmemState *s, uint64_t bytes, const char *reason)
{
    g_assert(reason);
    LowmemReasonTotals *t = reason_get(s, reason);
    t->charged += bytes;
    t->current += bytes;
    t->peak = MAX(t->peak, t->current);
    s->st.current += bytes;
    s->st.peak = MAX(s->st.peak, s->st.current);
    state_after_event(s);
}

void lowmem_release(LowmemState *s, uint64_t bytes, const char *reason)
{
    g_assert(reason);
    LowmemReasonTotals *t = g_hash_table_lookup(s->by_reason, reason);
    g_assert(t && t->current >= bytes); /* never release what was not charged */
    t->released += bytes;
    t->current -= bytes;
    s->st.current -= bytes;
    state_after_event(s);
}

void lowmem_state_stats(const LowmemState *s, LowmemStats *out) { *out = s->st; }

LowmemReasonTotals lowmem_state_reason(const LowmemState *s, const char *reason)
{
    const LowmemReasonTotals *t = g_hash_table_lookup(s->by_reason, reason);
    return t ? *t : (LowmemReasonTotals){0};
}

void lowmem_state_foreach(const LowmemState *s,
                          void (*fn)(const char *reason, const LowmemReasonTotals *t, void *ud),
                          void *ud)
{
    for (unsigned i = 0; i < s->order->len; i++) {
        const char *k = g_ptr_array_index(s->order, i);
        fn(k, g_hash_table_lookup(s->by_reason, k), ud);
    }
}
