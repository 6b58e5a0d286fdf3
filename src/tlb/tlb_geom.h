/* The geometry of one TLB array, as a preset declares it (presets/NAME.ini,
 * groups [itlb_4k], [dtlb_4k], [stlb]...) and tlb_new() builds it. Its own
 * small header so that the preset (src/preset), which describes the whole
 * machine, can hold it without depending on the TLB's code. */
#ifndef VMSPLIT_TLB_TLB_GEOM_H
#define VMSPLIT_TLB_TLB_GEOM_H

/* Page sizes a TLB array holds (bit set; "page_sizes = 4K,2M" in a
 * preset, hence the prefix). */
#define PRESET_PG_4K (1u << 0)
#define PRESET_PG_2M (1u << 1)
#define PRESET_PG_4M (1u << 2)

typedef struct {
    unsigned entries;            /* 0: the array does not exist */
    unsigned ways;               /* ways == entries: fully associative */
    unsigned page_sizes;         /* PRESET_PG_* mask */
    unsigned hit_latency;        /* extra cycles on a hit (second-level arrays) */
} TlbGeom;

#endif
