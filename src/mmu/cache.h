/* The data-cache hierarchy of one core: L1D, L2 and an optional L3 over
 * physical addresses, each set-associative with true LRU, and memory behind
 * the last level. It times every page-walk and data reference (src/mmu/mmu.c)
 * so that a TLB refill costs what its paging-structure reads cost at that
 * moment: cheap while the page tables are still in L1/L2, expensive when they
 * are not.
 *
 * Latencies are load-to-use cycles at the level that supplies the data, as
 * the figures are measured (a pointer chase that hits L2 on a P4 Northwood
 * takes 24 clocks, not 2 + 24). So a reference costs exactly:
 *     hit in L1                  l1.latency
 *     miss L1, hit L2            l2.latency
 *     miss L1 and L2, hit L3     l3.latency
 *     miss everywhere            mem_latency
 * and nothing else: no bus contention, no prefetching, no store buffering
 * (a store is timed like a load of its line), no write-back traffic.
 *
 * Fill policy: non-inclusive, non-exclusive. A miss fills the line into every
 * level it missed in; evicting a line from L2 does not remove it from L1.
 * That is what Intel documents for the parts modelled here: "Levels in the
 * cache hierarchy are not inclusive" (IA-32 Optimization Reference Manual,
 * 2004, §1 on the Pentium 4) and "All caches are writeback and non-inclusive"
 * (Intel 64 and IA-32 Optimization Reference Manual, §2.1.4, Core
 * microarchitecture). Skylake's client L3 is inclusive; back-invalidation of
 * L1/L2 on an L3 eviction is not modelled (with an 8 MiB L3 behind a 256 KiB
 * L2 it is rare). The hardware uses pseudo-LRU; true LRU is modelled because
 * its victims can be worked out by hand.
 *
 * Each level may have its own line size (the P4's L2 has 128-byte lines
 * behind a 64-byte-line L1). Geometry must be powers of two; cache_new
 * rejects anything else with a GError. */
#ifndef VMSPLIT_MMU_CACHE_H
#define VMSPLIT_MMU_CACHE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "mmu/cache_geom.h"      /* CacheGeom */
#include "preset/preset.h"        /* Preset, for cache_new_from_preset */

#define CACHE_MAX_LEVELS 3
#define CACHE_MAX_WAYS 64        /* a hit scans the ways: keep it bounded */
#define CACHE_MIN_LINE 8
#define CACHE_MAX_LINE 4096

#define CACHE_ERROR (cache_error_quark())
GQuark cache_error_quark(void);
typedef enum { CACHE_ERROR_GEOMETRY } CacheError;

/* Where a reference was supplied from. */
typedef enum {
    CACHE_L1 = 0,
    CACHE_L2 = 1,
    CACHE_L3 = 2,
    CACHE_MEM = 3,
} CacheLevel;

typedef struct {
    uint64_t hits, misses;       /* lookups at this level: hits + misses */
    uint64_t evictions;          /* fills that replaced a valid line */
} CacheLevelStats;

/* What cache_stats answers. Every figure is exact; most are worked out
 * from per-level counts when asked (cache.c says how), not kept here. */
typedef struct {
    CacheLevelStats level[CACHE_MAX_LEVELS];
    uint64_t accesses;           /* cache_access calls */
    uint64_t mem;                /* references supplied by memory, uncached included */
    uint64_t writes;             /* of which writes */
    uint64_t uncached;           /* cache_access_uncached calls */
    uint64_t cycles;             /* sum of every returned latency */
} CacheStats;

typedef struct CacheHier CacheHier;

/* Any of l1, l2, l3 may be NULL or have size 0 (the level does not exist),
 * but levels must be contiguous: no L2 without L1, no L3 without L2. With no
 * level at all every reference costs mem_latency. mem_latency >= 1. */
CacheHier *cache_new(const CacheGeom *l1, const CacheGeom *l2,
                     const CacheGeom *l3, unsigned mem_latency, GError **err);
/* The caches a preset describes (l1d, l2, l3, mem_latency). */
CacheHier *cache_new_from_preset(const Preset *p, GError **err);
void cache_free(CacheHier *c);

/* Check one level's geometry (size 0 is valid: absent). On error, *key names
 * the offending field ("size", "ways", "line", "latency") and err says what
 * was expected; the preset loader prefixes the file and group. */
bool cache_geom_check(const CacheGeom *g, const char **key, GError **err);

/* Time one reference: looks the line up level by level, fills it into every
 * level that missed, updates LRU and statistics, returns its cycles. */
unsigned cache_access(CacheHier *c, uint64_t paddr, bool write);

/* The same, also saying which level supplied the data. */
unsigned cache_access_from(CacheHier *c, uint64_t paddr, bool write,
                           CacheLevel *from);

/* An uncached (UC) reference, e.g. the PDPTE loads of MOV CR3 on parts that
 * make them uncached: costs mem_latency, neither looks up nor fills nor
 * reorders any level. A cached copy of the line, if any, stays as it is. */
unsigned cache_access_uncached(CacheHier *c, uint64_t paddr, bool write);

/* Whether the line holding paddr is present in a level, without touching
 * LRU or statistics (for tests and explanations). */
bool cache_contains(const CacheHier *c, CacheLevel level, uint64_t paddr);
/* The first level holding paddr, CACHE_MEM if none; no side effects. */
CacheLevel cache_probe(const CacheHier *c, uint64_t paddr);

/* Empty every level (WBINVD, or a cold start). Statistics are kept. */
void cache_invalidate_all(CacheHier *c);

unsigned cache_levels(const CacheHier *c);       /* 0..3 */
unsigned cache_latency(const CacheHier *c, CacheLevel level);
/* The statistics as of this call: the hierarchy's own copy, filled in
 * here (most totals are derived from per-level counts when read rather
 * than added to at every reference, cache.c), so call again after more
 * references rather than keep the pointer. */
const CacheStats *cache_stats(const CacheHier *c);
void cache_reset_stats(CacheHier *c);

#endif
