/* The memory system of one simulated core: linear -> physical translation
 * through the modelled TLB hierarchy (src/tlb), the PAE walker on a miss
 * (src/mmu/pae.c), and the cache model (src/mmu/cache.c) that times every
 * paging-structure and data reference. This is the only interface the core
 * (src/cpu) uses to reach memory.
 *
 * Cycle accounting: every call that touches memory adds what it cost to the
 * MMU's own counters (mmu_stats); the core's clock is its own base costs
 * plus mmu_stats()->cycles. Nothing here knows about instructions.
 *
 * Architectural control state lives here because it governs translation:
 * CR0.PG/WP, CR3 (with the PDPTE registers), CR4.PGE/PCIDE, EFER.NXE.
 * Writes to them have their SDM effects on the TLB (§4.10.4):
 *   MOV CR3           all non-global entries of the current PCID go
 *                     (with CR4.PCIDE and bit 63 of the source: nothing goes)
 *   CR4.PGE change    everything goes, global entries too
 *   CR0.PG change     everything goes
 *   INVLPG            the page's entries (any size, global too) go
 */
#ifndef VMSPLIT_MMU_MMU_H
#define VMSPLIT_MMU_MMU_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/preset.h"
#include "mmu/pae.h"
#include "mmu/physmem.h"

typedef struct Mmu Mmu;

typedef struct {
    uint8_t vector;              /* VEC_PF or VEC_GP */
    uint32_t error_code;
    uint32_t cr2;                /* for #PF */
} MmuFault;

/* Counters of the memory system (TLB counters live in the TLB hierarchy,
 * see mmu_tlb()). */
typedef struct {
    uint64_t cycles;             /* all memory-system cycles so far */
    uint64_t walk_cycles;        /* of which: page walks (TLB refills) */
    uint64_t walks;
    uint64_t data_cycles;        /* of which: data and fetch references */
    uint64_t cr3_writes;
    uint64_t cr3_cycles;         /* PDPTE loads at MOV CR3 */
    uint64_t invlpgs;
} MmuStats;

/* preset may be NULL: a 64-entry 4-way TLB pair and no caches (every
 * reference costs 1 cycle); useful for unit tests of the core. */
Mmu *mmu_new(PhysMem *pm, const Preset *preset);
void mmu_free(Mmu *m);

PhysMem *mmu_physmem(Mmu *m);
const MmuStats *mmu_stats(const Mmu *m);

/* Control registers. mmu_write_cr3 returns false with f = #GP(0) if a
 * present PDPTE has reserved bits (then nothing changes). With paging off
 * (CR0.PG=0) CR3 is only stored. */
bool mmu_write_cr3(Mmu *m, uint32_t cr3, MmuFault *f);
uint32_t mmu_cr3(const Mmu *m);
/* Returns false (#GP(0)) for setting PG without PAE in CR4 or bad PDPTEs. */
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

/* Time a reference to a physical address in the caches (no translation);
 * returns its cycles and adds them to the counters. */
unsigned mmu_time_phys(Mmu *m, uint64_t pa, bool write);

#endif
