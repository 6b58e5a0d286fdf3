/* Control transfers: JMP, Jcc, CALL, RET (near and far), LOOP/JECXZ, INT n,
 * INT3, INTO, IRET. Near transfers stay in this file; far ones, gates and
 * IRET go through protmode.c, which does the descriptor checks.
 *
 * Costs: JMP/CALL/RET carry the preset's branch cost in the Insn; Jcc and
 * LOOP charge branch when taken and alu when not; INT n is charged int_gate
 * by the delivery, IRET iret. */
#include "cpu/cpu_priv.h"

/* A near target must lie within CS's limit (#GP(0)); 16-bit operand size
 * truncates EIP to 16 bits (SDM JMP, CALL, RET). */
static int near_jump(Cpu *c, const Insn *i, uint32_t target)
{
    if (i->size == 2)
        target &= 0xFFFF;
    const SegCache *cs = &c->seg[SEG_CS];
    if (UNLIKELY(!(cs->flags & SEGF_FLAT_R)) && target > cs->limit)
        return cpu_gp0(c);
    cpu_jump(c, target);
    return XR_OK;
}

HANDLER(h_jmp_rel) { return near_jump(c, i, c->next_eip + i->imm); }

HANDLER(h_jcc)
{
    if (!cpu_cond(c, i->op)) {
        cpu_charge(c, c->cost.alu);
        return XR_OK;
    }
    TRY(near_jump(c, i, c->next_eip + i->imm));
    cpu_charge(c, c->cost.branch);
    return XR_OK;
}

HANDLER(h_loop)
{
    uint32_t ecx = c->r[REG_ECX];
    bool take;
    if (i->op == 3) {
        take = ecx == 0;                         /* JECXZ */
    } else {
        ecx--;
        take = ecx != 0;
        if (i->op == 0)
            take = take && !cpu_cond(c, 4);      /* LOOPNE */
        else if (i->op == 1)
            take = take && cpu_cond(c, 4);       /* LOOPE */
    }
    if (take)
        TRY(near_jump(c, i, c->next_eip + i->imm));
    c->r[REG_ECX] = ecx;
    cpu_charge(c, take ? c->cost.branch : c->cost.alu);
    return XR_OK;
}

static int near_call(Cpu *c, const Insn *i, uint32_t target)
{
    uint32_t esp = c->r[REG_ESP];
    TRY(stack_push(c, i->size, c->next_eip));
    int rc = near_jump(c, i, target);
    if (rc)
        c->r[REG_ESP] = esp;
    return rc;
}

HANDLER(h_call_rel) { return near_call(c, i, c->next_eip + i->imm); }

HANDLER(h_call_rm)
{
    uint32_t t;
    TRY(rm_read(c, i, i->size, &t));
    return near_call(c, i, t);
}

HANDLER(h_jmp_rm)
{
    uint32_t t;
    TRY(rm_read(c, i, i->size, &t));
    return near_jump(c, i, t);
}

HANDLER(h_ret)
{
    uint32_t t;
    TRY(stack_read(c, 0, i->size, &t));
    TRY(near_jump(c, i, t));
    c->r[REG_ESP] += i->size + i->imm2;
    return XR_OK;
}

/* ---- far transfers ---- */

HANDLER(h_jmp_far) { return pm_far_jump(c, i->imm2, i->imm, false, i->size); }
HANDLER(h_call_far) { return pm_far_jump(c, i->imm2, i->imm, true, i->size); }

static int far_mem(Cpu *c, const Insn *i, bool call)
{
    uint32_t ea = insn_ea(c, i), off, sel;
    TRY(mem_read(c, i->seg, ea, i->size, ACCESS_READ, &off));
    TRY(mem_read(c, i->seg, ea + i->size, 2, ACCESS_READ, &sel));
    return pm_far_jump(c, (uint16_t)sel, off, call, i->size);
}

HANDLER(h_jmp_far_m) { return far_mem(c, i, false); }
HANDLER(h_call_far_m) { return far_mem(c, i, true); }
HANDLER(h_retf) { return pm_far_ret(c, i->size, i->imm2); }

/* ---- software interrupts ---- */

HANDLER(h_int) { return pm_deliver(c, (uint8_t)i->imm, false, 0, CPU_EV_SOFT_INT); }
HANDLER(h_int3) { (void)i; return pm_deliver(c, VEC_BP, false, 0, CPU_EV_SOFT_INT); }

HANDLER(h_into)
{
    (void)i;
    if (!cpu_cond(c, 0))
        return XR_OK;
    return pm_deliver(c, VEC_OF, false, 0, CPU_EV_SOFT_INT);
}

HANDLER(h_iret) { return pm_iret(c, i->size); }
