/* PDE cache: fully associative, LRU by timestamps. See pde_cache.h. */
#include "tlb/pde_cache.h"
#include "tlb/pde_cache_priv.h"

#include <glib.h>

PdeCache *pde_cache_new(unsigned entries)
{
    g_assert(entries >= 1);
    PdeCache *c = g_new0(PdeCache, 1);
    c->n = entries;
    c->slot = g_new0(PdeSlot, entries);
    return c;
}

void pde_cache_free(PdeCache *c)
{
    if (!c)
        return;
    g_free(c->slot);
    g_free(c);
}

static PdeSlot *find(PdeCache *c, uint32_t region, uint16_t pcid)
{
    for (unsigned i = 0; i < c->n; i++)
        if (c->slot[i].valid && c->slot[i].region == region && c->slot[i].pcid == pcid)
            return &c->slot[i];
    return NULL;
}

bool pde_cache_lookup(PdeCache *c, uint32_t lin, uint16_t pcid, uint64_t *pde,
                      uint64_t *pde_pa)
{
    PdeSlot *s = find(c, lin >> 21, pcid);
    if (!s)
        return false;
    s->stamp = ++c->clock;
    *pde = s->pde;
    *pde_pa = s->pde_pa;
    return true;
}

bool pde_cache_fill(PdeCache *c, uint32_t lin, uint16_t pcid, uint64_t pde,
                    uint64_t pde_pa)
{
    bool evicted = false;
    PdeSlot *s = find(c, lin >> 21, pcid);
    for (unsigned i = 0; i < c->n && !s; i++)
        if (!c->slot[i].valid)
            s = &c->slot[i];
    if (!s) {
        s = &c->slot[0];
        for (unsigned i = 1; i < c->n; i++)
            if (c->slot[i].stamp < s->stamp)
                s = &c->slot[i];
        evicted = true;
    }
    *s = (PdeSlot){ .valid = true, .pcid = pcid, .region = lin >> 21,
                    .pde = pde, .pde_pa = pde_pa, .stamp = ++c->clock };
    return evicted;
}

unsigned pde_cache_flush_pcid(PdeCache *c, uint16_t pcid)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->n; i++)
        if (c->slot[i].valid && c->slot[i].pcid == pcid) {
            c->slot[i].valid = false;
            n++;
        }
    return n;
}

unsigned pde_cache_flush_all(PdeCache *c)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->n; i++) {
        n += c->slot[i].valid;
        c->slot[i].valid = false;
    }
    return n;
}

unsigned pde_cache_valid_count(const PdeCache *c)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->n; i++)
        n += c->slot[i].valid;
    return n;
}
