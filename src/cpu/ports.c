/* I/O port hooks (see ports.h). A handful of ranges per core: a linear
 * search from the newest registration is fast enough for IN/OUT, which
 * are rare and expensive instructions anyway. */
#include "cpu/cpu_priv.h"

void cpu_port_register(Cpu *c, uint16_t first, unsigned count, PortInFn in,
                       PortOutFn out, void *user)
{
    g_assert(count > 0 && (unsigned)first + count <= 0x10000u);
    PortRange r = { first, count, in, out, user };
    g_array_append_val(c->ports, r);
}

static const PortRange *port_find(const Cpu *c, uint16_t port)
{
    for (guint k = c->ports->len; k-- > 0;) {
        const PortRange *r = &g_array_index(c->ports, PortRange, k);
        if (port >= r->first && (unsigned)(port - r->first) < r->count)
            return r;
    }
    return NULL;
}

static int port_result(Cpu *c, PortResult pr)
{
    if (pr == PORT_STOP) {
        c->stop_req = CPU_STOP_EXIT;
        return XR_STOP;
    }
    return XR_OK;
}

int cpu_port_in(Cpu *c, uint16_t port, unsigned size, uint32_t *v)
{
    const PortRange *r = port_find(c, port);
    *v = size_mask(size);                /* unconnected: all ones */
    if (!r || !r->in)
        return XR_OK;
    c->block_exit = true;                /* a hook may write memory (block.c) */
    PortResult pr = r->in(c, port, size, v, r->user);
    *v &= size_mask(size);
    return port_result(c, pr);
}

int cpu_port_out(Cpu *c, uint16_t port, unsigned size, uint32_t v)
{
    const PortRange *r = port_find(c, port);
    if (!r || !r->out)
        return XR_OK;
    c->block_exit = true;                /* a hook may write memory (block.c) */
    return port_result(c, r->out(c, port, size, v & size_mask(size), r->user));
}
