/* The layout of a PdeCache, for pde_cache.c and the canonical snapshot of
 * tlb_state.c (the user-work fast-forward). Everyone else uses
 * pde_cache.h. */
#ifndef VMSPLIT_TLB_PDE_CACHE_PRIV_H
#define VMSPLIT_TLB_PDE_CACHE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "tlb/pde_cache.h"

typedef struct {
    bool valid;
    uint16_t pcid;
    uint32_t region;             /* lin >> 21: PDPTE and PDE index */
    uint64_t pde, pde_pa;
    uint64_t stamp;
} PdeSlot;

struct PdeCache {
    unsigned n;
    uint64_t clock;
    PdeSlot *slot;
};

#endif
