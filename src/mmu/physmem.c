/* Sparse physical memory: a two-level radix table over the 2^24 frames of a
 * 36-bit physical address space. The top level (4096 pointers) is allocated
 * up front, every entry pointing at one shared chunk of NULLs; each
 * second-level chunk of its own (4096 frame pointers, 32 KiB) and each
 * frame (4 KiB) on first write. Lookups are two dependent loads, with no
 * test between them (a missing chunk is the shared one, not NULL). */
#include "mmu/physmem.h"

#include <glib.h>
#include <string.h>

#define L2_BITS PHYSMEM_L2_BITS
#define L2_SIZE (1u << L2_BITS)
#define L1_SIZE PHYSMEM_L1_SIZE

/* The chunk of every 16 MiB with no frame yet (see physmem.h): read,
 * never written. */
static uint8_t *no_frames[L2_SIZE];

PhysMem *physmem_new(void)
{
    PhysMem *pm = g_new0(PhysMem, 1);
    for (unsigned i = 0; i < L1_SIZE; i++)
        pm->chunk[i] = no_frames;
    return pm;
}

void physmem_free(PhysMem *pm)
{
    if (!pm)
        return;
    for (unsigned i = 0; i < L1_SIZE; i++) {
        if (pm->chunk[i] == no_frames)
            continue;
        for (unsigned j = 0; j < L2_SIZE; j++)
            g_free(pm->chunk[i][j]);
        g_free(pm->chunk[i]);
    }
    g_free(pm);
}

const uint8_t *physmem_frame_peek(const PhysMem *pm, uint64_t pa)
{
    g_assert(pa < PHYS_ADDR_LIMIT);
    uint64_t pfn = pa >> PAGE_SHIFT;
    return pm->chunk[pfn >> L2_BITS][pfn & (L2_SIZE - 1)];
}

uint8_t *physmem_frame_get(PhysMem *pm, uint64_t pa)
{
    g_assert(pa < PHYS_ADDR_LIMIT);
    uint64_t pfn = pa >> PAGE_SHIFT;
    uint8_t ***c = &pm->chunk[pfn >> L2_BITS];
    if (*c == no_frames)
        *c = g_new0(uint8_t *, L2_SIZE);
    uint8_t **f = &(*c)[pfn & (L2_SIZE - 1)];
    if (!*f) {
        *f = g_malloc0(PAGE_SIZE);
        pm->frames++;
    }
    return *f;
}

void physmem_read(const PhysMem *pm, uint64_t pa, void *buf, size_t n)
{
    uint8_t *out = buf;
    while (n) {
        size_t off = pa & (PAGE_SIZE - 1);
        size_t k = MIN(n, PAGE_SIZE - off);
        const uint8_t *f = physmem_frame_peek(pm, pa);
        if (f)
            memcpy(out, f + off, k);
        else
            memset(out, 0, k);
        out += k;
        pa += k;
        n -= k;
    }
}

void physmem_write(PhysMem *pm, uint64_t pa, const void *buf, size_t n)
{
    const uint8_t *in = buf;
    while (n) {
        size_t off = pa & (PAGE_SIZE - 1);
        size_t k = MIN(n, PAGE_SIZE - off);
        memcpy(physmem_frame_get(pm, pa) + off, in, k);
        in += k;
        pa += k;
        n -= k;
    }
}

/* Fixed-size accessors: the common case stays inside one frame. The host is
 * little-endian x86, like the guest; memcpy keeps it alignment-safe. */
#define PHYSMEM_RW(bits)                                                      \
    uint##bits##_t physmem_read##bits(const PhysMem *pm, uint64_t pa)         \
    {                                                                         \
        uint##bits##_t v = 0;                                                 \
        size_t off = pa & (PAGE_SIZE - 1);                                    \
        if (off + sizeof v <= PAGE_SIZE) {                                    \
            const uint8_t *f = physmem_frame_peek(pm, pa);                    \
            if (f)                                                            \
                memcpy(&v, f + off, sizeof v);                                \
        } else {                                                              \
            physmem_read(pm, pa, &v, sizeof v);                               \
        }                                                                     \
        return v;                                                             \
    }                                                                         \
    void physmem_write##bits(PhysMem *pm, uint64_t pa, uint##bits##_t v)      \
    {                                                                         \
        size_t off = pa & (PAGE_SIZE - 1);                                    \
        if (off + sizeof v <= PAGE_SIZE)                                      \
            memcpy(physmem_frame_get(pm, pa) + off, &v, sizeof v);            \
        else                                                                  \
            physmem_write(pm, pa, &v, sizeof v);                              \
    }

PHYSMEM_RW(8)
PHYSMEM_RW(16)
PHYSMEM_RW(32)
PHYSMEM_RW(64)

size_t physmem_frames_used(const PhysMem *pm)
{
    return pm->frames;
}
