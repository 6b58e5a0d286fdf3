/* String instructions: MOVS, CMPS, STOS, LODS, SCAS, INS, OUTS, with the
 * REP/REPE/REPNE prefixes (SDM Vol. 2 "REP/REPE/REPZ/REPNE/REPNZ").
 *
 * The source is seg:[ESI] (DS unless overridden), the destination always
 * ES:[EDI]. A REP instruction runs its iterations in chunks of REP_CHUNK:
 * after a chunk with iterations left, EIP stays on the instruction and the
 * run loop comes back to it (so the instruction budget, pending interrupts
 * and stop requests are seen during a long REP, as hardware takes
 * interrupts between iterations); it retires once, after the last
 * iteration. Each iteration is charged string_iter. A fault in the middle
 * leaves ECX/ESI/EDI describing the iterations done and EIP at the
 * instruction, so the guest's handler can resume it, as on hardware. */
#include "cpu/cpu_priv.h"

#define REP_CHUNK 64

typedef int (*StrOp)(Cpu *c, const Insn *i, uint32_t delta);

static int op_movs(Cpu *c, const Insn *i, uint32_t delta)
{
    uint32_t v;
    TRY(mem_read(c, i->seg, c->r[REG_ESI], i->size, ACCESS_READ, &v));
    TRY(mem_write(c, SEG_ES, c->r[REG_EDI], i->size, v));
    c->r[REG_ESI] += delta;
    c->r[REG_EDI] += delta;
    return XR_OK;
}

static int op_cmps(Cpu *c, const Insn *i, uint32_t delta)
{
    uint32_t a, b;
    TRY(mem_read(c, i->seg, c->r[REG_ESI], i->size, ACCESS_READ, &a));
    TRY(mem_read(c, SEG_ES, c->r[REG_EDI], i->size, ACCESS_READ, &b));
    flags_lazy(c, CC_SUB, i->size, a - b, a, b, 0);
    c->r[REG_ESI] += delta;
    c->r[REG_EDI] += delta;
    return XR_OK;
}

static int op_stos(Cpu *c, const Insn *i, uint32_t delta)
{
    TRY(mem_write(c, SEG_ES, c->r[REG_EDI], i->size, reg_get(c, REG_EAX, i->size)));
    c->r[REG_EDI] += delta;
    return XR_OK;
}

static int op_lods(Cpu *c, const Insn *i, uint32_t delta)
{
    uint32_t v;
    TRY(mem_read(c, i->seg, c->r[REG_ESI], i->size, ACCESS_READ, &v));
    reg_set(c, REG_EAX, i->size, v);
    c->r[REG_ESI] += delta;
    return XR_OK;
}

static int op_scas(Cpu *c, const Insn *i, uint32_t delta)
{
    uint32_t b, a = reg_get(c, REG_EAX, i->size);
    TRY(mem_read(c, SEG_ES, c->r[REG_EDI], i->size, ACCESS_READ, &b));
    flags_lazy(c, CC_SUB, i->size, a - b, a, b, 0);
    c->r[REG_EDI] += delta;
    return XR_OK;
}

static int op_ins(Cpu *c, const Insn *i, uint32_t delta)
{
    uint16_t port = (uint16_t)c->r[REG_EDX];
    uint32_t v;
    TRY(pm_io_check(c, port, i->size));
    int rc = cpu_port_in(c, port, i->size, &v);
    if (rc == XR_FAULT)
        return rc;
    TRY(mem_write(c, SEG_ES, c->r[REG_EDI], i->size, v));
    c->r[REG_EDI] += delta;
    return rc;
}

static int op_outs(Cpu *c, const Insn *i, uint32_t delta)
{
    uint16_t port = (uint16_t)c->r[REG_EDX];
    uint32_t v;
    TRY(pm_io_check(c, port, i->size));
    TRY(mem_read(c, i->seg, c->r[REG_ESI], i->size, ACCESS_READ, &v));
    int rc = cpu_port_out(c, port, i->size, v);
    if (rc == XR_FAULT)
        return rc;
    c->r[REG_ESI] += delta;
    return rc;
}

/* cost: cycles per iteration (string_iter; io for INS/OUTS). */
static int string_run(Cpu *c, const Insn *i, StrOp op, bool compares, unsigned cost)
{
    uint32_t delta = (c->eflags & EFLAGS_DF) ? (uint32_t)-(int32_t)i->size : i->size;
    if (!i->rep) {
        int rc = op(c, i, delta);
        if (rc != XR_FAULT)
            cpu_charge(c, cost);
        return rc;
    }
    if (c->r[REG_ECX] == 0) {
        cpu_charge(c, c->cost.alu);
        return XR_OK;
    }
    for (unsigned n = 0;; n++) {
        if (n == REP_CHUNK)
            return XR_AGAIN;
        int rc = op(c, i, delta);
        if (rc == XR_FAULT)
            return rc;
        c->r[REG_ECX]--;
        cpu_charge(c, cost);
        if (rc == XR_STOP || c->r[REG_ECX] == 0)
            return rc;
        if (compares) {
            bool zf = cpu_cond(c, 4);
            if ((i->rep == REP_E && !zf) || (i->rep == REP_NE && zf))
                return XR_OK;
        }
    }
}

HANDLER(h_movs) { return string_run(c, i, op_movs, false, c->cost.string_iter); }
HANDLER(h_cmps) { return string_run(c, i, op_cmps, true, c->cost.string_iter); }
HANDLER(h_stos) { return string_run(c, i, op_stos, false, c->cost.string_iter); }
HANDLER(h_lods) { return string_run(c, i, op_lods, false, c->cost.string_iter); }
HANDLER(h_scas) { return string_run(c, i, op_scas, true, c->cost.string_iter); }
HANDLER(h_ins) { return string_run(c, i, op_ins, false, c->cost.io); }
HANDLER(h_outs) { return string_run(c, i, op_outs, false, c->cost.io); }
