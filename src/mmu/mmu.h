/* The memory system of one simulated core: linear -> physical translation
 * through the modelled TLB hierarchy (src/tlb), the page walker on a miss
 * (src/mmu/pae.c: PAE paging with CR4.PAE = 1, 32-bit paging with 4 KiB
 * and, under CR4.PSE, 4 MiB pages with CR4.PAE = 0), and the cache model (src/mmu/cache.c) that times every
 * paging-structure and data reference. This is the only interface the core
 * (src/cpu) uses to reach memory.
 *
 * Cycle accounting: every call that touches memory adds what it cost to the
 * MMU's own counters (mmu_stats); the core's clock is its own base costs
 * plus mmu_stats()->cycles. Nothing here knows about instructions.
 *
 * Architectural control state lives here because it governs translation:
 * CR0.PE/PG/WP, CR3 (with the PDPTE registers under PAE), CR4.PSE/PAE/
 * PGE/PCIDE, EFER.NXE (no effect in 32-bit paging, which has no XD).
 * CR4.PAE selects the paging mode while CR0.PG = 1 and may change with
 * paging on (SDM §4.1.2). The PDPTEs are loaded (#GP(0) if a present one
 * has a reserved bit, nothing changed) by MOV CR3 under PAE, and when PAE
 * paging is in use after a MOV to CR0 changing PG, CD or NW or a MOV to
 * CR4 changing PAE, PGE or PSE (§4.4.1); 32-bit paging loads nothing at
 * MOV CR3. Setting CR0.PG with CR0.PE = 0 is #GP(0) (§2.5). Writes have
 * their SDM effects on the TLB (§4.10.4):
 *   MOV CR3           all non-global entries of the current PCID go
 *                     (with CR4.PCIDE and bit 63 of the source: nothing goes)
 *   CR4.PGE change    everything goes, global entries too
 *   CR4.PAE change    everything goes (the SDM: the current PCID's)
 *   CR0.PG change     everything goes
 *   INVLPG            the page's entries (any size, global too) go
 *
 * PCID on this i686 core is a what-if (PCID exists only in IA-32e paging):
 * with CR4.PCIDE=1, CR3[11:0] is the PCID and the PDPT is CR3[31:12]; as a
 * 32-bit MOV cannot set bit 63 (the no-flush bit), every CR3 write under
 * PCIDE behaves as a no-flush write, and software flushes a PCID it reuses
 * with mmu_flush_pcid (INVPCID single-context).
 *
 * Timing (what is charged, per reference):
 *   TLB hit             the array's extra latency (0 at first level; the
 *                       STLB's hit latency on a second-level hit)
 *   TLB miss            the walk: preset page_walk_base + each PDE/PTE
 *                       read and A/D write through the caches (a PDE-cache
 *                       hit skips the PDE read)
 *   data reference      the cache hierarchy's latency for its line
 *   instruction fetch   translation only: vmsplit has no L1I/trace-cache
 *                       model, so code bytes are assumed to hit (stated
 *                       in README and here; ITLB misses and their walks
 *                       are charged)
 *   MOV CR3 (PAE)       the four PDPTE loads: uncached (mem_latency each)
 *                       when the preset says so, else through the caches
 *                       (32-bit paging: nothing)
 */
#ifndef VMSPLIT_MMU_MMU_H
#define VMSPLIT_MMU_MMU_H

#include <stdbool.h>
#include <glib.h>
#include <stdint.h>

#include "preset/preset.h"
#include "mmu/cache.h"
#include "mmu/pae.h"
#include "mmu/physmem.h"
#include "tlb/hierarchy.h"

typedef struct Mmu Mmu;

/* Control-register bits (SDM Vol. 3A §2.5, Figure 2-7; EFER: §2.2.1,
 * Table 2-1), defined here once: the MMU owns CR0, CR3, CR4 and EFER, and
 * the core, the run environment and the kernel model name their bits from
 * this list. */
#define CR0_PE (1u << 0)         /* protection enable */
#define CR0_TS (1u << 3)         /* task switched */
#define CR0_ET (1u << 4)         /* extension type: hardwired to 1 on P6 and later */
#define CR0_WP (1u << 16)        /* write protect (supervisor writes) */
#define CR0_NW (1u << 29)        /* not write-through */
#define CR0_CD (1u << 30)        /* cache disable */
#define CR0_PG (1u << 31)        /* paging */
/* CR0 bits that exist: PE MP EM TS ET NE WP AM NW CD PG. */
#define CR0_DEFINED 0xE005003Fu
#define CR4_TSD (1u << 2)        /* RDTSC at CPL 0 only */
#define CR4_PSE (1u << 4)        /* page size extensions */
#define CR4_PAE (1u << 5)        /* physical address extension */
#define CR4_PGE (1u << 7)        /* global pages */
#define CR4_PCIDE (1u << 17)     /* PCIDs (a what-if here: see above) */
#define CR3_PCID_MASK 0xFFFu     /* CR3[11:0] with CR4.PCIDE */
#define EFER_NXE (1ULL << 11)    /* execute-disable enable */

typedef struct {
    uint8_t vector;              /* VEC_PF or VEC_GP */
    uint32_t error_code;
    uint32_t cr2;                /* for #PF */
} MmuFault;

/* Counters of the memory system (TLB counters live in the TLB hierarchy,
 * see mmu_tlb()). */
typedef struct {
    /* Field order: host-speed only (docs/speed.md, "field order"). */
    uint64_t cycles;             /* all memory-system cycles so far */
    uint64_t cr3_writes;
    uint64_t walk_cycles;        /* of cycles: page walks (TLB refills) */
    uint64_t invlpgs;
    uint64_t walks;
    uint64_t cr3_cycles;         /* of cycles: PDPTE loads at MOV CR3 */
    uint64_t data_cycles;        /* of cycles: data and fetch references */
} MmuStats;

/* preset may be NULL: a 64-entry 4-way TLB pair and no caches (every
 * reference costs 1 cycle); useful for unit tests of the core. Aborts on
 * a preset whose geometry is invalid (presets are validated at load). */
Mmu *mmu_new(PhysMem *pm, const Preset *preset);
/* The same with the TLB geometry overridden (tlb may be NULL: the
 * preset's) and a seed for the random replacement policy. */
Mmu *mmu_new_full(PhysMem *pm, const Preset *preset,
                  const TlbHierConfig *tlb, uint64_t seed, GError **err);
void mmu_free(Mmu *m);

PhysMem *mmu_physmem(Mmu *m);
TlbHierarchy *mmu_tlb(Mmu *m);
CacheHier *mmu_cache(Mmu *m);
uint16_t mmu_pcid(const Mmu *m);     /* current PCID (0 without PCIDE) */
void mmu_flush_pcid(Mmu *m, uint16_t pcid);
const MmuStats *mmu_stats(const Mmu *m);
/* Zero the MMU's, the TLB hierarchy's and the caches' statistics (their
 * contents stay: a warm machine stays warm). */
void mmu_reset_stats(Mmu *m);

/* Host-speed shortcuts (memos of TLB hits, mmu_fast.h; the fused miss
 * path, mmu.c): on by default. Host-speed only; no modelled figure
 * changes; tests/mmu/test_mmu_memo.c, test_mmu_paths.c turn them off to
 * show it. */
void mmu_set_shortcuts(Mmu *m, bool on);

/* Control registers. mmu_write_cr3 returns false with f = #GP(0) if, under
 * PAE, a present PDPTE has reserved bits (then nothing changes). With
 * paging off (CR0.PG=0) CR3 is only stored. */
bool mmu_write_cr3(Mmu *m, uint32_t cr3, MmuFault *f);
uint32_t mmu_cr3(const Mmu *m);
/* Return false (#GP(0)) for setting PG without PE, or for bad PDPTEs when
 * the write has PAE paging load them (above). */
bool mmu_write_cr0(Mmu *m, uint32_t cr0, MmuFault *f);
bool mmu_write_cr4(Mmu *m, uint32_t cr4, MmuFault *f);
void mmu_write_efer(Mmu *m, uint64_t efer);
uint32_t mmu_cr0(const Mmu *m);
uint32_t mmu_cr4(const Mmu *m);
uint64_t mmu_efer(const Mmu *m);
void mmu_invlpg(Mmu *m, uint32_t lin);

/* Translate one access. With paging off, lin is the physical address. */
bool mmu_translate(Mmu *m, uint32_t lin, Access access, int cpl, uint64_t *pa,
                   MmuFault *f);

/* Whole accesses of 1, 2 or 4 bytes, split at a page
 * boundary into two translations (both checked before anything is
 * written). Each is translated, timed in the caches and performed. */
bool mmu_read(Mmu *m, uint32_t lin, unsigned size, Access access, int cpl,
              uint32_t *val, MmuFault *f);
bool mmu_write(Mmu *m, uint32_t lin, unsigned size, int cpl, uint32_t val,
               MmuFault *f);

/* The core's fast path: translate lin (TLB, walk on a miss), time the
 * reference in the caches as mmu_read/mmu_write do (fetches are not timed),
 * and return a host pointer to the byte at lin. The caller must keep the
 * access inside lin's 4 KiB page (split crossing accesses itself). For a
 * read of a frame never written the pointer is into a shared zero page that
 * must not be written; ACCESS_WRITE always returns the real frame. NULL on
 * a fault (*f set). */
uint8_t *mmu_access(Mmu *m, uint32_t lin, Access access, int cpl, MmuFault *f);

/* Time a data reference to a physical address in the caches (no
 * translation); returns its cycles and adds them to cycles and
 * data_cycles. */
unsigned mmu_time_phys(Mmu *m, uint64_t pa, bool write);

#endif
