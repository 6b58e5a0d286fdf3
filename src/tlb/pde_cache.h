/* The paging-structure cache for PDEs (Intel SDM Vol. 3A §4.10.3): maps
 * linear-address bits 31:21 (PDPTE index and PDE index) to the PDE that
 * references a page table, so that a walk after a TLB miss can skip the
 * PDE read and go straight to the PTE. In 32-bit paging a PDE covers bits
 * 31:22: the MMU looks it up with bit 21 cleared (Mmu.pde_region_mask),
 * one key per 4 MiB region. Part of the TLB hierarchy
 * (hierarchy.h), which is the interface callers use.
 *
 * Entries are tagged with a PCID and are never global (§4.10.3.1: the G
 * flag does not apply to paging-structure caches), so:
 *   MOV CR3 / PCID flush  remove that PCID's entries
 *   INVLPG                removes ALL entries of the current PCID, whatever
 *                         their address (§4.10.4.1)
 *   full flush            removes everything
 *
 * Organisation: fully associative, true LRU. Intel documents neither the
 * geometry nor the policy of these caches; this is the simplest choice and
 * an estimate, stated as such. Only the walk's slow path uses it. */
#ifndef VMSPLIT_TLB_PDE_CACHE_H
#define VMSPLIT_TLB_PDE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct PdeCache PdeCache;

PdeCache *pde_cache_new(unsigned entries);   /* entries >= 1 */
void pde_cache_free(PdeCache *c);

bool pde_cache_lookup(PdeCache *c, uint32_t lin, uint16_t pcid, uint64_t *pde,
                      uint64_t *pde_pa);
/* Returns true if a valid entry was evicted. Re-filling the same region and
 * PCID updates that entry in place. */
bool pde_cache_fill(PdeCache *c, uint32_t lin, uint16_t pcid, uint64_t pde,
                    uint64_t pde_pa);
/* Each returns the number of valid entries removed. */
unsigned pde_cache_flush_pcid(PdeCache *c, uint16_t pcid);
unsigned pde_cache_flush_all(PdeCache *c);
unsigned pde_cache_valid_count(const PdeCache *c);

#endif
