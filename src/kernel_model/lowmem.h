/* Lowmem: how much memory the kernel can map directly, what it spends at
 * boot, and what a workload then takes out of it.
 *
 * Two halves:
 *
 *  1. A boot-time accounting model (lowmem_compute): from a physical memory
 *     map (an e820-style list of usable ranges) and a layout's lowmem limit
 *     it places the zones (DMA below 16 MiB, NORMAL up to the limit, HIGHMEM
 *     above), charges the boot reservations -- mem_map (one struct page per
 *     page frame up to the highest one, holes included), the buddy bitmaps,
 *     wait tables, direct-map page tables, the kernel image -- and yields
 *     /proc/meminfo's MemTotal, LowTotal and HighTotal, the lowmem left
 *     after boot and whether the kernel boots at all. Every figure and its
 *     source is in lowmem.c beside the code and in docs/lowmem.md.
 *
 *  2. A running occupancy counter (LowmemState) for the replay engine: it
 *     charges and releases lowmem by reason (slab objects of a syscall, a
 *     process's page tables, 4G/4G's extra kernel-side page tables) and
 *     remembers the current, peak and end occupancy and the first event at
 *     which lowmem ran out.
 *
 * The kernel modelled is the one of the seed mail (2.5.74, July 2003):
 * flat mem_map, per-order buddy bitmaps, dentry/inode hashes taken from the
 * buddy allocator after boot. struct page is 40 bytes by default (LWN,
 * 2003); 44 with CONFIG_HIGHPTE (pte_addr_t becomes 64-bit), 32 in 2.6.12.
 */
#ifndef VMSPLIT_KERNEL_MODEL_LOWMEM_H
#define VMSPLIT_KERNEL_MODEL_LOWMEM_H

#include "kernel_model/layout_mem.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define LOWMEM_ERROR (lowmem_error_quark())
GQuark lowmem_error_quark(void);
typedef enum { LOWMEM_ERROR_PARSE, LOWMEM_ERROR_VALUE } LowmemErrorCode;

/* ---- Physical memory map ------------------------------------------------ */

/* E820MAX in 2.6 include/asm-i386/e820.h. */
#define LOWMEM_MAP_MAX 128

typedef struct {
    uint64_t start, end; /* usable RAM [start, end) */
} LowmemRange;

typedef struct {
    LowmemRange range[LOWMEM_MAP_MAX]; /* sorted, non-overlapping */
    unsigned n;
} LowmemMap;

/* Default top of RAM below 4 GiB for a machine larger than that (the PCI
 * hole starts here). Estimate, see lowmem.c and docs/lowmem.md. */
#define LOWMEM_DEFAULT_TOLM 0xEB000000ULL

/* The map a BIOS of 2003 would report for ram_bytes of installed RAM:
 * 0-636 KiB, 1 MiB up to min(ram, TOLM), the rest remapped above 4 GiB,
 * no higher than the 36-bit PAE limit (64 GiB) -- unless ram_bytes itself
 * exceeds 64 GiB, a what-if the report flags (beyond_pae). */
bool lowmem_map_default(LowmemMap *m, uint64_t ram_bytes, GError **err);
/* The same with the PCI hole starting at tolm_bytes instead. */
bool lowmem_map_default_tolm(LowmemMap *m, uint64_t ram_bytes, uint64_t tolm_bytes, GError **err);

/* Parse a map (format in docs/lowmem.md): one range per line,
 * "START END [TYPE]" or Linux's "BIOS-e820: START - END (TYPE)". Only
 * usable/RAM ranges are kept. name is used in error messages
 * ("name:line: ..."). */
bool lowmem_map_parse(LowmemMap *m, const char *text, const char *name, GError **err);
bool lowmem_map_load(LowmemMap *m, const char *path, GError **err);

uint64_t lowmem_map_ram_bytes(const LowmemMap *m);

/* ---- Boot-time model ---------------------------------------------------- */

#define LOWMEM_STRUCT_PAGE_DEFAULT 40u /* LWN, 2003 */

typedef struct {
    uint32_t struct_page_bytes; /* sizeof(struct page); 0 = default */
    bool no_pse;                /* map lowmem with 4 KiB pages (PTE pages) */
    uint64_t image_bytes;       /* kernel image kept in lowmem; 0 = the estimate */
} LowmemParams;

/* The model's inputs that are estimates with a plausible range (each with
 * its reasoning in lowmem.c and docs/lowmem.md), in a fixed order: the
 * claim samples them over their ranges for its lowmem statements'
 * intervals. The default map takes the top of low RAM with
 * lowmem_map_default_tolm, the others go in LowmemParams. */
typedef enum {
    LOWMEM_EST_STRUCT_PAGE,      /* sizeof(struct page), bytes */
    LOWMEM_EST_TOLM,             /* top of RAM below 4 GiB, MiB */
    LOWMEM_EST_IMAGE,            /* kernel image kept, KiB */
    LOWMEM_NEST,
} LowmemEstimateId;

typedef struct {
    const char *name, *unit;
    uint64_t value, lo, hi;      /* as used by default, and its range */
    const char *why;             /* the range's reasoning */
} LowmemEstimate;

extern const LowmemEstimate lowmem_estimates[LOWMEM_NEST];

typedef enum {
    LOWMEM_KEPT,             /* reserved at boot, never returned: not in MemTotal */
    LOWMEM_FREED_AFTER_BOOT, /* reserved at boot, returned (bootmem bitmap, init) */
    LOWMEM_AFTER_BOOT,       /* taken from the buddy allocator right after boot:
                              * in MemTotal, not free (hash tables) */
} LowmemPhase;

typedef struct {
    const char *name;
    uint64_t bytes;      /* whole pages */
    LowmemPhase phase;
    bool scales_with_ram;
    const char *source;  /* source, or "estimate: reasoning" */
} LowmemItem;

#define LOWMEM_ITEMS_MAX 12

typedef struct {
    const LayoutMem *layout;
    uint32_t struct_page_bytes;
    uint64_t ram_bytes;          /* usable RAM in the map */
    uint64_t lowmem_limit;       /* MAXMEM of the layout */
    uint64_t max_pfn, max_low_pfn;
    uint64_t zone_pages[3];      /* spanned: DMA, NORMAL, HIGHMEM */
    uint64_t low_ram_pages;      /* RAM frames below max_low_pfn */
    uint64_t high_ram_pages;     /* RAM frames from max_low_pfn up */
    LowmemItem item[LOWMEM_ITEMS_MAX];
    unsigned n_items;
    uint64_t mem_map_bytes;
    uint64_t kept_bytes;         /* sum of LOWMEM_KEPT */
    uint64_t boot_peak_bytes;    /* everything reserved before free_all_bootmem */
    /* /proc/meminfo, kB. If the kernel does not boot these are what the
     * arithmetic gives, with LowTotal clamped at 0. */
    uint64_t mem_total_kb, low_total_kb, high_total_kb;
    int64_t lowmem_left_bytes;   /* LowTotal less the after-boot tables */
    uint64_t min_free_boot_bytes;    /* below this it does not boot */
    uint64_t min_free_runtime_bytes; /* min_free_kbytes watermark */
    bool boots;
    bool beyond_pae;             /* RAM above the paging mode's limit: under
                                  * PAE above 36 bits (a what-if, counted);
                                  * under legacy paging above 4 GiB (cut
                                  * off, as a non-PAE kernel does) */
} LowmemReport;

/* Compute the report. Fails only on a map with no RAM. */
bool lowmem_compute(const LayoutMem *layout, const LowmemMap *map, const LowmemParams *p,
                    LowmemReport *out, GError **err);

/* Item by name, or NULL. */
const LowmemItem *lowmem_report_item(const LowmemReport *r, const char *name);

/* ---- Running occupancy (replay) ---------------------------------------- */

/* Reasons the replay engine charges under; any string works, these are the
 * ones the report groups by. */
#define LOWMEM_REASON_SLAB "slab"
#define LOWMEM_REASON_PAGE_TABLES "page tables"
#define LOWMEM_REASON_KERNEL_PT "kernel-side page tables"

typedef struct LowmemState LowmemState;

typedef struct {
    uint64_t current;        /* bytes charged now */
    uint64_t peak;           /* highest current so far */
    uint64_t events;         /* charges + releases so far */
    int64_t free_now;        /* capacity - current (may be negative) */
    int64_t exhausted_at;    /* first event index with free < 0, or -1 */
    int64_t below_min_at;    /* first event index with free < min_free, or -1 */
} LowmemStats;

typedef struct {
    uint64_t charged, released, current, peak;
} LowmemReasonTotals;

/* capacity: free lowmem when the replay starts; min_free: the watermark
 * below which allocations would stall (see lowmem_state_new_for). */
LowmemState *lowmem_state_new(uint64_t capacity, uint64_t min_free);
/* Capacity = the report's lowmem left after boot, min_free = its
 * min_free_kbytes watermark. */
LowmemState *lowmem_state_new_for(const LowmemReport *r);
void lowmem_state_free(LowmemState *s);

/* Each call is one event; its index is the number of calls before it. */
void lowmem_charge(LowmemState *s, uint64_t bytes, const char *reason);
/* Releasing more than is charged under reason is a caller bug (asserts). */
void lowmem_release(LowmemState *s, uint64_t bytes, const char *reason);

void lowmem_state_stats(const LowmemState *s, LowmemStats *out);
/* Zeroes if nothing was ever charged under reason. */
LowmemReasonTotals lowmem_state_reason(const LowmemState *s, const char *reason);
/* Reasons in the order they were first charged. */
void lowmem_state_foreach(const LowmemState *s,
                          void (*fn)(const char *reason, const LowmemReasonTotals *t, void *ud),
                          void *ud);

#endif
