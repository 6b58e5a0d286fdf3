/* The TLB hierarchy of one core, as its CPU preset describes it:
 *
 *   fetch ──► ITLB ─┐                      miss          miss
 *                   ├─(first level miss)─► STLB ──────► page walk ──► fill
 *   load/store ► DTLB ┘                    (optional,     (src/mmu; may
 *                                           unified)       use the PDE cache)
 *
 *  - Each side (ITLB for ACCESS_EXEC, DTLB otherwise) has a 4 KiB array and
 *    a separate large-page array, or, when the preset's *_large.entries is
 *    0, one array whose page_sizes include 2M and/or 4M holds all. A large
 *    page goes to the side's array listing its size (2M: PAE, 4M: 32-bit
 *    paging), the large array first; with none it is not cached (tlb.h).
 *  - The second-level TLB (stlb.entries > 0) is looked up after a
 *    first-level miss (of the DTLB only, with stlb_data_only); a hit costs
 *    stlb.hit_latency cycles and refills the first-level array. It is
 *    filled with every walk result of a page size it holds that it backs
 *    (Intel does not document its fill policy; this is the simplest
 *    consistent model).
 *  - The PDE cache (pde_cache.h) remembers PDEs that reference page tables,
 *    so the walker can skip the PDE read.
 *  - A write that finds an entry whose D bit is not known is a miss
 *    (TLB_MISS_DIRTY): the caller walks, the walk sets D, and the fill
 *    updates the entry in place (SDM Vol. 3A §4.8).
 *
 * How src/mmu/mmu.c uses it for one reference:
 *
 *     TlbEntry e; unsigned extra;
 *     TlbResult r = tlb_hier_lookup(h, lin, acc, cpl, pcid, &e, &extra);
 *     if (!tlb_result_hit(r)) {
 *         uint64_t pde, pde_pa;
 *         bool skip = tlb_hier_pde_lookup(h, lin, pcid, &pde, &pde_pa);
 *         ... walk (from pde if skip), on success:
 *         tlb_hier_pde_fill(h, lin, pcid, pde, pde_pa);   (PDE with PS=0)
 *         tlb_entry_from_walk(&e, lin, &walk, pcid, cr4_pge);
 *         tlb_hier_fill(h, acc, cpl, &e);
 *     }
 *     rights check on e, paddr = tlb_entry_paddr(&e, lin)
 *
 * Control-register events map to: MOV CR3 without the no-flush bit ->
 * tlb_hier_flush_nonglobal(h, new_pcid) (pcid 0 with PCID off); MOV CR3
 * with CR4.PCIDE and bit 63 set -> nothing; INVPCID single-context ->
 * tlb_hier_flush_pcid; CR4.PGE toggle, CR0.PG change -> tlb_hier_flush_all;
 * INVLPG -> tlb_hier_invlpg(h, lin, current_pcid).
 *
 * Statistics: tlb_hier_stats() counts at the hierarchy level (one lookup
 * per tlb_hier_lookup; hits include STLB hits; fills are walk results;
 * evictions and dropped entries are summed over all arrays). Each array
 * also keeps its own (tlb_hier_array()). */
#ifndef VMSPLIT_TLB_HIERARCHY_H
#define VMSPLIT_TLB_HIERARCHY_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "preset/preset.h"
#include "mmu/pae.h"
#include "tlb/tlb.h"
#include "tlb/tlb_stats.h"

typedef struct TlbHierarchy TlbHierarchy;

/* Explicit geometry: what a preset says, for tests and for command-line
 * overrides (vmsplit tlbsim --dtlb-entries ...). An array with entries == 0
 * does not exist (a side with no array at all walks on every reference). */
typedef struct {
    TlbGeom itlb_4k, itlb_large;
    TlbGeom dtlb_4k, dtlb_large;
    TlbGeom stlb;
    bool stlb_data_only;         /* the STLB backs the DTLB only (Core 2's
                                  * DTLB1): ITLB misses go straight to a walk */
    unsigned pde_cache_entries;  /* 0: no PDE cache */
    const char *policy;          /* "lru", "plru", "fifo", "random"; NULL: lru */
} TlbHierConfig;

/* Copy the TLB part of a preset (policy points into p: keep p alive or
 * replace it). */
void tlb_hier_config_from_preset(TlbHierConfig *c, const Preset *p);

/* Build from a preset or an explicit config. seed drives the random policy
 * (each array gets its own stream derived from it). Errors (TLB_ERROR):
 * bad geometry, naming the array ("dtlb_4k: 48 entries / 4 ways = 12
 * sets, which is not a power of two"); a *_large array that holds no
 * large page size; a *_4k array that does not hold 4K; an unknown policy. */
TlbHierarchy *tlb_hier_new(const Preset *p, uint64_t seed, GError **err);
TlbHierarchy *tlb_hier_new_config(const TlbHierConfig *c, uint64_t seed,
                                  GError **err);
void tlb_hier_free(TlbHierarchy *h);

/* Look up lin for an access at cpl (3 = user) under pcid (0 with PCID
 * off). On a hit (tlb_result_hit) *out is a copy of the entry and
 * *extra_cycles the lookup's cost beyond a first-level hit: the array's
 * hit_latency (0 for first-level arrays in the presets), or the STLB's on
 * TLB_HIT_STLB. On TLB_MISS / TLB_MISS_DIRTY the caller walks and calls
 * tlb_hier_fill; *extra_cycles is then the STLB's hit_latency if the STLB
 * was probed and missed (the walk starts after that probe), else 0. The
 * walk itself is costed by the caller. */
TlbResult tlb_hier_lookup(TlbHierarchy *h, uint32_t lin, Access access,
                          int cpl, uint16_t pcid, TlbEntry *out,
                          unsigned *extra_cycles);

/* Cache a walk result: into the first-level array of the side and page
 * size (ITLB for ACCESS_EXEC), and into the STLB if it holds that size and
 * backs that side. Returns the first-level array's new entry (valid until
 * that array next changes), or NULL when the side has no first-level
 * array for the size. */
const TlbEntry *tlb_hier_fill(TlbHierarchy *h, Access access, int cpl,
                              const TlbEntry *e);


/* Build the entry a successful walk of lin produced. The G bit counts only
 * with CR4.PGE (pge); D known = D set after the walk. */
void tlb_entry_from_walk(TlbEntry *e, uint32_t lin, const PaeWalk *w,
                         uint16_t pcid, bool pge);

/* Flushes (SDM §4.10.4.1). Each returns the TLB entries removed over all
 * arrays (PDE-cache entries are counted apart, in pde_dropped). */
unsigned tlb_hier_invlpg(TlbHierarchy *h, uint32_t lin, uint16_t pcid);
unsigned tlb_hier_flush_nonglobal(TlbHierarchy *h, uint16_t pcid); /* MOV CR3 */
unsigned tlb_hier_flush_pcid(TlbHierarchy *h, uint16_t pcid);      /* INVPCID type 1 */
unsigned tlb_hier_flush_all(TlbHierarchy *h);                      /* CR4.PGE */

/* PDE cache. lookup: true and the PDE's value and physical address if the
 * PDE mapping lin's 2 MiB region is cached for pcid. fill: only with a
 * present PDE that references a page table (PS=0). Both do nothing (and
 * lookup returns false) when the preset has no PDE cache. */
bool tlb_hier_pde_lookup(TlbHierarchy *h, uint32_t lin, uint16_t pcid,
                         uint64_t *pde, uint64_t *pde_pa);
void tlb_hier_pde_fill(TlbHierarchy *h, uint32_t lin, uint16_t pcid,
                       uint64_t pde, uint64_t pde_pa);
unsigned tlb_hier_pde_entries(const TlbHierarchy *h);   /* 0: none */

/* Statistics and inspection. Arrays are listed itlb_4k, itlb_large,
 * dtlb_4k, dtlb_large, stlb, leaving out those that do not exist.
 * tlb_hier_stats, like tlb_stats, keeps every counter behind its pointer
 * live but lookups and hits, which it derives (hier_priv.h) as of the
 * latest call. */
const TlbStats *tlb_hier_stats(const TlbHierarchy *h);
void tlb_hier_stats_reset(TlbHierarchy *h);
unsigned tlb_hier_array_count(const TlbHierarchy *h);
const Tlb *tlb_hier_array(const TlbHierarchy *h, unsigned i);
/* The first-level array that holds pages of size s for an access, or NULL. */
const Tlb *tlb_hier_l1(const TlbHierarchy *h, Access access, TlbPageSize s);
const Tlb *tlb_hier_stlb(const TlbHierarchy *h);       /* NULL: none */

/* For host-speed memos of first-level hits (the MMU's, through the
 * tokens of tlb_token.h; hier_priv.h makes them). The hit latency of the
 * side's first-level 4 KiB array (exec: the instruction side's), which a
 * memo's hit charges; 0 without one. */
unsigned tlb_hier_token_latency(const TlbHierarchy *h, bool exec);
/* The side's only array (no large array, no STLB behind it, no PDE cache,
 * hits taken inline: the P4's), whose miss is then the whole lookup and
 * may be filled with tlb_hier_fill_missed (hier_priv.h); else NULL. */
Tlb *tlb_hier_only_array(const TlbHierarchy *h, bool exec);
/* Whether data references touch nothing that recording a hit through an
 * instruction-side token writes: the instruction side's 4 KiB array is
 * none of the arrays a data reference probes or fills (the data side's
 * and the STLB behind it), and their tokens do not share a clock. Then an
 * instruction token's hits may be recorded after data references made
 * after them, with the same result (the core's loops, src/cpu/block.c). */
bool tlb_hier_insn_hits_apart(const TlbHierarchy *h);

/* Text table: a "total" column and one per array. */
void tlb_hier_print_stats(const TlbHierarchy *h, FILE *out, bool skip_zero);
/* Adds "total": {...} and "arrays": {"dtlb_4k": {...}, ...} members to the
 * object the builder is inside. */
void tlb_hier_stats_to_json(const TlbHierarchy *h, JsonBuilder *b);

#endif
