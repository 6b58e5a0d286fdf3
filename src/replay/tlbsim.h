/* tlbsim: the TLB hierarchy and caches on their own, driven by a real
 * memory-reference trace (Valgrind Lackey format, replay/lackey.h).
 *
 * Every reference goes through the same memory system the core uses
 * (mmu.h): instruction fetches to the ITLB, loads and stores to the DTLB,
 * misses walked through real PAE page tables in simulated memory, and the
 * walk and data references timed in the cache hierarchy. The page tables map
 * every page the trace touches 1:1 (linear = physical), as user pages
 * (CPL 3), built on first touch; 4 KiB pages by default, 2 MiB with
 * large_pages. The PDPT sits in physical page 0 and the page directories
 * and tables above 4 GiB, so they never share a cache line with the
 * identity-mapped data (unless the trace touches page 0).
 *
 * Addresses above 4 GiB (a 64-bit program's trace) are folded to their low
 * 32 bits and counted (`folded`); capture 32-bit programs to avoid it.
 * An M (modify) reference is a load then a store to the same address.
 * A reference that crosses a page boundary touches both pages. */
#ifndef VMSPLIT_REPLAY_TLBSIM_H
#define VMSPLIT_REPLAY_TLBSIM_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "preset/preset.h"
#include "mmu/mmu.h"
#include "tlb/hierarchy.h"

typedef struct {
    const char *trace;           /* path, or "-" for stdin; .gz accepted */
    const Preset *preset;        /* caches, latencies, and the TLB unless tlb */
    const TlbHierConfig *tlb;    /* NULL: the preset's TLB geometry */
    bool large_pages;            /* identity map with 2 MiB pages */
    uint64_t flush_every;        /* a CR3 write every N references; 0: never */
    bool skip_bad;               /* count bad lines instead of failing */
    uint64_t seed;               /* random replacement policy */
    uint64_t max_refs;           /* stop after N references; 0: all */
} TlbSimConfig;

/* Counters of one run, defined once: each output iterates this list. */
#define TLBSIM_COUNTERS(X)                                                     \
    X(refs, "references replayed (M counts once)")                           \
    X(fetches, "instruction fetches (I)")                                    \
    X(loads, "loads (L)")                                                    \
    X(stores, "stores (S)")                                                  \
    X(modifies, "modifies (M: a load and a store)")                          \
    X(page_crossings, "references that touched two pages")                   \
    X(pages_mapped, "distinct pages the trace touched")                      \
    X(folded, "addresses above 4 GiB folded to 32 bits")                     \
    X(bad_lines, "malformed lines skipped (--skip-bad)")                     \
    X(cr3_writes, "CR3 writes (--flush-every)")                              \
    X(walks, "page walks (TLB refills and dirty-bit walks)")                 \
    X(walk_cycles, "cycles spent in page walks")                             \
    X(data_cycles, "cycles of data references in the caches")                \
    X(cr3_cycles, "cycles of the PDPTE loads at CR3 writes")                 \
    X(cycles, "memory-system cycles in all")

typedef struct {
#define X(name, desc) uint64_t name;
    TLBSIM_COUNTERS(X)
#undef X
} TlbSimCounters;

typedef struct TlbSim TlbSim;

/* Replay the whole trace. NULL and err (file:line, what was expected) on
 * bad input or configuration. */
TlbSim *tlbsim_run(const TlbSimConfig *cfg, GError **err);
void tlbsim_free(TlbSim *s);

const TlbSimCounters *tlbsim_counters(const TlbSim *s);
Mmu *tlbsim_mmu(TlbSim *s);          /* TLB and cache statistics */
/* First skipped line (with skip_bad): number and text, 0 if none. */
uint64_t tlbsim_first_bad(const TlbSim *s, const char **text);

/* Iterate the counters: name, description, value. */
size_t tlbsim_counter_count(void);
const char *tlbsim_counter_name(size_t i);
const char *tlbsim_counter_desc(size_t i);
uint64_t tlbsim_counter_value(const TlbSimCounters *c, size_t i);

#endif
