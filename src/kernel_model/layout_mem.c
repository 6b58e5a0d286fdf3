/* Per-layout memory figures: the layout rows' LayoutMem (layout.c); see
 * layout_mem.h. */
#include "kernel_model/layout_mem.h"

const LayoutMem *layout_mem_find(const char *name)
{
    const Layout *l = name ? layout_find(name) : NULL;
    return l ? &l->mem : NULL;
}

const LayoutMem *layout_mem_lookup(const char *name, GError **err)
{
    /* No name: "unknown layout '(none)'", listing the known ones. */
    const Layout *l = layout_lookup(name ? name : "(none)", err);
    return l ? &l->mem : NULL;
}

const Layout *layout_mem_layout(const LayoutMem *m)
{
    return m->layout;
}

uint64_t layout_mem_lowmem_limit(const LayoutMem *m)
{
    return layout_maxmem(m->layout) - m->kva_carveout;
}
