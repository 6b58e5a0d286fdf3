/* One modelled TLB array: sets x ways of translations, the page sizes it
 * holds, a replacement policy (policy.h) and its own statistics
 * (tlb_stats.h). A core's hierarchy of arrays is in hierarchy.h; most
 * callers want that, not this.
 *
 * Semantics follow Intel SDM Vol. 3A §4.10 (caching translation
 * information):
 *  - An entry translates one page: a 4 KiB page, or a whole 2 MiB or
 *    4 MiB page (every linear address in the region hits it).
 *  - Entries carry a 12-bit PCID tag (0 when CR4.PCIDE is off). A lookup
 *    hits a non-global entry only with the same PCID; a global entry hits
 *    under any PCID (§4.10.2.4).
 *  - A write that finds an entry whose dirty bit is not known to be 1 is
 *    not a hit: the processor walks to set D (§4.8). tlb_lookup returns
 *    TLB_MISS_DIRTY and counts it as a miss and a dirty walk.
 *  - Flushes (§4.10.4.1): INVLPG removes the address's entries of every
 *    page size, for the current PCID and global ones; MOV CR3 removes the
 *    non-global entries of one PCID (all of them with PCID off); a PCID
 *    flush removes that PCID's non-global entries; a full flush (CR4.PGE
 *    toggle) removes everything.
 *
 * Model choices the SDM leaves open (stated here so tests can check them):
 *  - A fill into a set with an invalid way takes the lowest-numbered one;
 *    the policy chooses a victim only in a full set.
 *  - At most one entry of a page size answers a lookup: a fill replaces, in
 *    place, an entry of the same page that the new one would duplicate
 *    (same page size and VPN, and same PCID or either one global). That is
 *    how the refill after a dirty walk updates the entry, and it makes the
 *    outcome of every lookup independent of way order. An array holding
 *    both sizes is probed 4 KiB first.
 *  - A set-associative array holding both sizes indexes each by its own
 *    VPN (set = VPN mod sets). How real mixed-size arrays index is not
 *    documented; this is the simplest scheme.
 *
 * Host-speed shortcuts (docs/speed.md says how and what each saves):
 *  - hash index from page to slot in arrays of more than TLB_SCAN_ENTRIES
 *    entries: host-speed only; no modelled figure changes;
 *    tests/tlb/test_model.c (against a naive model).
 *  - fills without scans (valid bitmap, LRU's ordered records, FIFO's
 *    insertion list): host-speed only; no modelled figure changes;
 *    tests/tlb/test_model.c, test_policy.c. */
#ifndef VMSPLIT_TLB_TLB_H
#define VMSPLIT_TLB_TLB_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "tlb/tlb_geom.h"        /* TlbGeom, PRESET_PG_* */
#include "mmu/pae.h"             /* Access */
#include "tlb/policy.h"
#include "tlb/tlb_stats.h"

#define TLB_ERROR (tlb_error_quark())
GQuark tlb_error_quark(void);
typedef enum {
    TLB_ERROR_GEOMETRY,          /* entries/ways/sets/page sizes */
    TLB_ERROR_POLICY,            /* unknown replacement policy */
} TlbError;

/* Page sizes an entry can have: 4 KiB, PAE's 2 MiB (SDM §4.4), 32-bit
 * paging's 4 MiB (§4.3, CR4.PSE). An array holds the sizes its geometry's
 * page_sizes lists (PRESET_PG_*): a 2 MiB translation goes to an array
 * listing 2M, a 4 MiB one to an array listing 4M (CPUID leaf 2 names
 * "2M/4M" for most large-page arrays; the bundled presets list both).
 * A 4 MiB translation that no array of its side holds is not cached
 * (every reference to it walks): the SDM allows caching it as smaller
 * pages (§4.10.2.3), which vmsplit does not model. */
typedef enum {
    TLB_PAGE_4K = 0,
    TLB_PAGE_2M = 1,
    TLB_PAGE_4M = 2,
} TlbPageSize;
#define TLB_NPAGESIZES 3
#define TLB_SHIFT_4K 12
#define TLB_SHIFT_2M 21
#define TLB_SHIFT_4M 22

#define TLB_PCID_BITS 12         /* CR3[11:0] with CR4.PCIDE (§4.10.1) */
#define TLB_PCID_MAX ((1u << TLB_PCID_BITS) - 1)

/* Arrays with more entries than this get the hash index (see above);
 * smaller ones (large-page arrays of 2-8 entries) scan their set. */
#define TLB_SCAN_ENTRIES 8

/* One cached translation. */
typedef struct {
    /* frame first: host-speed only (docs/speed.md, "field order"). */
    uint64_t frame;              /* physical base of the page (36-bit) */
    uint32_t vpn;                /* linear address >> 12 (4 KiB), 21 (2 MiB)
                                  * or 22 (4 MiB) */
    uint16_t pcid;               /* 0..TLB_PCID_MAX; 0 with PCID off */
    uint8_t page_size;           /* TlbPageSize */
    bool rw, us, nx;             /* rights combined over the walk */
    bool dirty;                  /* dirty-known: D was 1 when cached */
    bool global;                 /* G bit with CR4.PGE=1 */
} TlbEntry;

static inline __attribute__((always_inline)) unsigned tlb_page_shift(TlbPageSize s)
{
    return s == TLB_PAGE_2M ? TLB_SHIFT_2M : s == TLB_PAGE_4M ? TLB_SHIFT_4M : TLB_SHIFT_4K;
}

/* Physical address of lin through entry e (which must cover lin). */
static inline __attribute__((always_inline)) uint64_t tlb_entry_paddr(const TlbEntry *e, uint32_t lin)
{
    return e->frame | (lin & ((1u << tlb_page_shift((TlbPageSize)e->page_size)) - 1));
}

/* Outcome of a lookup. Hits compare >= TLB_HIT. */
typedef enum {
    TLB_MISS = 0,
    TLB_MISS_DIRTY,              /* write found an entry with D not known: walk */
    TLB_HIT,                     /* first-level hit */
    TLB_HIT_STLB,                /* second-level hit (hierarchy only) */
} TlbResult;

static inline bool tlb_result_hit(TlbResult r) { return r >= TLB_HIT; }

typedef enum {
    TLB_FLUSH_CR3,
    TLB_FLUSH_INVLPG,
    TLB_FLUSH_PCID,
    TLB_FLUSH_PGE,
} TlbFlushCause;

/* What a fill did, for tests and explanations. */
typedef struct {
    unsigned set, way;           /* where the entry went */
    bool evicted;                /* a valid entry of another page was replaced */
    bool refreshed;              /* the same page's entry was updated in place */
    unsigned superseded;         /* further entries of the same page the new
                                  * one made redundant, removed (rare: a G bit
                                  * changed under PCIDs); counted as evictions */
    TlbEntry old;                /* the entry evicted (valid when evicted) */
} TlbFillInfo;

typedef struct Tlb Tlb;

/* A new, empty array. name ("dtlb_4k") prefixes error messages. Rejects,
 * with TLB_ERROR_GEOMETRY: entries == 0, ways == 0 or not dividing
 * entries, a set count that is not a power of two, no page size, more than
 * 32767 entries, and geometries the policy refuses. */
Tlb *tlb_new(const char *name, const TlbGeom *geom, const TlbPolicy *policy,
             uint64_t seed, GError **err);
void tlb_free(Tlb *t);

/* Look lin up for an access at cpl under pcid. On TLB_HIT *out points at
 * the entry (valid until the next fill or flush of t); on TLB_MISS_DIRTY at
 * the entry that needs its D bit. Counts lookups, hits, misses, dirty_walks
 * and tells the policy of a hit. */
TlbResult tlb_lookup(Tlb *t, uint32_t lin, uint16_t pcid, Access access,
                     int cpl, const TlbEntry **out);

/* Find lin without touching statistics or the replacement state. */
bool tlb_peek(const Tlb *t, uint32_t lin, uint16_t pcid, TlbEntry *out,
              unsigned *set, unsigned *way);

/* Cache e (its page size must be one t holds), for an access at cpl (which
 * only the statistics use). info may be NULL. Returns the new entry, valid
 * until t next changes. A refresh of the same page's entry counts as an
 * insertion for the policy (FIFO restarts its age). */
const TlbEntry *tlb_fill(Tlb *t, const TlbEntry *e, Access access, int cpl,
              TlbFillInfo *info);

/* Flushes; each returns the number of valid entries it removed and counts
 * the flush and that number under its cause. */
unsigned tlb_invlpg(Tlb *t, uint32_t lin, uint16_t pcid);
/* Non-global entries tagged pcid; cause is TLB_FLUSH_CR3 or TLB_FLUSH_PCID. */
unsigned tlb_flush_nonglobal(Tlb *t, uint16_t pcid, TlbFlushCause cause);
unsigned tlb_flush_all(Tlb *t);

/* Inspection. */
const char *tlb_name(const Tlb *t);
const TlbGeom *tlb_geom(const Tlb *t);
unsigned tlb_sets(const Tlb *t);
const TlbPolicy *tlb_policy(const Tlb *t);
bool tlb_holds(const Tlb *t, TlbPageSize s);
unsigned tlb_valid_count(const Tlb *t);
/* The entry in (set, way), if valid. */
bool tlb_entry_at(const Tlb *t, unsigned set, unsigned way, TlbEntry *out);
/* The array's statistics. The pointer stays valid and every counter
 * behind it is live, but lookups and hits, which are derived (from the
 * counts a hit taken inline makes, tlb_priv.h) and current as of the
 * latest call. */
const TlbStats *tlb_stats(const Tlb *t);
void tlb_stats_reset(Tlb *t);

#endif
