/* Physical memory: sparse, 36-bit (64 GiB), 4 KiB frames allocated on the
 * first write. Reads of a frame never written return zero, so a 64 GiB
 * machine costs only the frames the model writes (page tables, stubs,
 * descriptor tables, stacks).
 *
 * Addresses are 64-bit host integers; only bits 35:0 are physical address
 * bits (MAXPHYADDR = 36 on the PAE parts vmsplit models, Intel SDM Vol. 3A
 * §4.1.4). Callers pass addresses below PHYS_ADDR_LIMIT; an access that
 * crosses a frame boundary is split. */
#ifndef VMSPLIT_MMU_PHYSMEM_H
#define VMSPLIT_MMU_PHYSMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PHYS_ADDR_BITS 36                       /* MAXPHYADDR */
#define PHYS_ADDR_LIMIT (1ULL << PHYS_ADDR_BITS)
#define PAGE_SHIFT 12
#define PAGE_SIZE (1u << PAGE_SHIFT)
#define PAGE_MASK (~(uint64_t)(PAGE_SIZE - 1))

typedef struct PhysMem PhysMem;

/* The radix table is in the header only so that the walker's hot path can
 * inline a frame lookup (two dependent loads); use the functions below.
 * A chunk with no frame yet is a shared chunk of NULLs (physmem.c), never
 * NULL itself, so that a lookup needs no test between its loads. */
#define PHYSMEM_L2_BITS 12
#define PHYSMEM_L1_SIZE (1u << (PHYS_ADDR_BITS - PAGE_SHIFT - PHYSMEM_L2_BITS))
struct PhysMem {
    uint8_t **chunk[PHYSMEM_L1_SIZE];
    size_t frames;
};

PhysMem *physmem_new(void);
void physmem_free(PhysMem *pm);

/* Host pointer to the frame holding pa, or NULL if the frame was never
 * written (it reads as zeros). */
const uint8_t *physmem_frame_peek(const PhysMem *pm, uint64_t pa);
/* Host pointer to the frame holding pa, allocating a zeroed frame. */
uint8_t *physmem_frame_get(PhysMem *pm, uint64_t pa);

void physmem_read(const PhysMem *pm, uint64_t pa, void *buf, size_t n);
void physmem_write(PhysMem *pm, uint64_t pa, const void *buf, size_t n);

uint8_t physmem_read8(const PhysMem *pm, uint64_t pa);
uint16_t physmem_read16(const PhysMem *pm, uint64_t pa);
uint32_t physmem_read32(const PhysMem *pm, uint64_t pa);
uint64_t physmem_read64(const PhysMem *pm, uint64_t pa);
void physmem_write8(PhysMem *pm, uint64_t pa, uint8_t v);
void physmem_write16(PhysMem *pm, uint64_t pa, uint16_t v);
void physmem_write32(PhysMem *pm, uint64_t pa, uint32_t v);
void physmem_write64(PhysMem *pm, uint64_t pa, uint64_t v);

/* Inline frame lookup and aligned 64-bit read for the page walker (an
 * 8-aligned read never crosses a frame). pa must be below PHYS_ADDR_LIMIT. */
static inline const uint8_t *physmem_frame_peek_inline(const PhysMem *pm, uint64_t pa)
{
    uint64_t pfn = (pa & (PHYS_ADDR_LIMIT - 1)) >> PAGE_SHIFT;
    return pm->chunk[pfn >> PHYSMEM_L2_BITS][pfn & ((1u << PHYSMEM_L2_BITS) - 1)];
}

static inline uint64_t physmem_read64_aligned(const PhysMem *pm, uint64_t pa)
{
    const uint8_t *f = physmem_frame_peek_inline(pm, pa);
    uint64_t v = 0;
    if (f)
        __builtin_memcpy(&v, f + (pa & (PAGE_SIZE - 1) & ~7u), 8);
    return v;
}

/* Host pointer to the frame at base, or NULL if it was never written. base
 * must be frame-aligned and below PHYS_ADDR_LIMIT, as the address field of
 * a paging-structure entry is (e.g. e & PAE_ADDR_4K): no masking needed,
 * which saves the walker a few instructions per level. */
static inline __attribute__((always_inline)) const uint8_t *physmem_frame_peek_base(const PhysMem *pm, uint64_t base)
{
    return pm->chunk[base >> (PAGE_SHIFT + PHYSMEM_L2_BITS)]
                    [(base >> PAGE_SHIFT) & ((1u << PHYSMEM_L2_BITS) - 1)];
}

/* Number of 4 KiB frames allocated so far (host memory the model costs). */
size_t physmem_frames_used(const PhysMem *pm);

#endif
