/* Data movement: MOV (registers, memory, immediates, segment registers),
 * MOVZX/MOVSX, LEA, XCHG, PUSH/POP in all forms, PUSHAD/POPAD, PUSHFD/
 * POPFD, ENTER/LEAVE, CMOVcc, SETcc, LDS/LES/LFS/LGS/LSS, XLAT, NOP.
 * Registers change only after every memory reference succeeded. */
#include "cpu/cpu_priv.h"

HANDLER(h_nop) { (void)c; (void)i; return XR_OK; }

HANDLER(h_mov_rm_r) { return rm_write(c, i, i->size, reg_get(c, i->reg, i->size)); }

HANDLER(h_mov_r_rm)
{
    uint32_t v;
    TRY(rm_read(c, i, i->size, &v));
    reg_set(c, i->reg, i->size, v);
    return XR_OK;
}

HANDLER(h_mov_rm_imm) { return rm_write(c, i, i->size, i->imm); }

HANDLER(h_mov_r_imm)
{
    reg_set(c, i->reg, i->size, i->imm);
    return XR_OK;
}

HANDLER(h_mov_load_moffs)
{
    uint32_t v;
    TRY(mem_read(c, i->seg, i->disp, i->size, ACCESS_READ, &v));
    reg_set(c, REG_EAX, i->size, v);
    return XR_OK;
}

HANDLER(h_mov_store_moffs)
{
    return mem_write(c, i->seg, i->disp, i->size, reg_get(c, REG_EAX, i->size));
}

HANDLER(h_movzx)
{
    uint32_t v;
    TRY(rm_read(c, i, i->op, &v));
    reg_set(c, i->reg, i->size, v);
    return XR_OK;
}

HANDLER(h_movsx)
{
    uint32_t v;
    TRY(rm_read(c, i, i->op, &v));
    v = i->op == 1 ? (uint32_t)(int32_t)(int8_t)v : (uint32_t)(int32_t)(int16_t)v;
    reg_set(c, i->reg, i->size, v);
    return XR_OK;
}

HANDLER(h_lea)
{
    reg_set(c, i->reg, i->size, insn_ea(c, i));
    return XR_OK;
}

HANDLER(h_xchg_rm_r)
{
    unsigned s = i->size;
    uint32_t a, b = reg_get(c, i->reg, s);
    TRY(rm_read_rmw(c, i, s, &a));
    if (i->mem) {
        TRY(rm_write(c, i, s, b));
        reg_set(c, i->reg, s, a);
    } else {
        reg_set(c, i->rm, s, b);
        reg_set(c, i->reg, s, a);
    }
    return XR_OK;
}

HANDLER(h_xchg_eax)
{
    uint32_t a = reg_get(c, REG_EAX, i->size);
    reg_set(c, REG_EAX, i->size, reg_get(c, i->reg, i->size));
    reg_set(c, i->reg, i->size, a);
    return XR_OK;
}

/* ---- stack ---- */

HANDLER(h_push_r) { return stack_push(c, i->size, reg_get(c, i->reg, i->size)); }
HANDLER(h_push_imm) { return stack_push(c, i->size, i->imm); }

HANDLER(h_pop_r)
{
    uint32_t v;
    TRY(stack_read(c, 0, i->size, &v));
    c->r[REG_ESP] += i->size;
    reg_set(c, i->reg, i->size, v);      /* POP ESP: the value popped wins */
    return XR_OK;
}

HANDLER(h_push_rm)
{
    uint32_t v;
    TRY(rm_read(c, i, i->size, &v));
    return stack_push(c, i->size, v);
}

/* POP r/m: an ESP-based destination address uses ESP after the increment
 * (SDM POP). */
HANDLER(h_pop_rm)
{
    uint32_t v, esp = c->r[REG_ESP];
    TRY(stack_read(c, 0, i->size, &v));
    c->r[REG_ESP] = esp + i->size;
    int rc = rm_write(c, i, i->size, v);
    if (rc)
        c->r[REG_ESP] = esp;
    return rc;
}

/* PUSH Sreg with a 32-bit operand size moves ESP by 4 and writes the 16-bit
 * selector, leaving the upper half of the slot unmodified (SDM PUSH: what
 * recent Intel parts do). */
HANDLER(h_push_sreg)
{
    uint32_t esp = c->r[REG_ESP] - i->size;
    TRY(mem_write(c, SEG_SS, esp, 2, c->seg[i->op].sel));
    c->r[REG_ESP] = esp;
    return XR_OK;
}

HANDLER(h_pop_sreg)
{
    uint32_t v;
    TRY(stack_read(c, 0, i->size, &v));
    TRY(pm_load_seg(c, i->op, (uint16_t)v));
    c->r[REG_ESP] += i->size;
    if (i->op == SEG_SS)
        cpu_pend(c, PEND_INHIBIT);
    return XR_OK;
}

HANDLER(h_pushad)
{
    unsigned s = i->size;
    uint32_t esp = c->r[REG_ESP];
    for (unsigned k = 0; k < 8; k++)   /* EAX, ECX, EDX, EBX, original ESP, EBP, ESI, EDI */
        TRY(mem_write(c, SEG_SS, esp - (k + 1) * s, s, reg_get(c, k, s)));
    c->r[REG_ESP] = esp - 8 * s;
    return XR_OK;
}

HANDLER(h_popad)
{
    unsigned s = i->size;
    uint32_t v[8];
    for (unsigned k = 0; k < 8; k++)   /* EDI first */
        TRY(stack_read(c, k * s, s, &v[7 - k]));
    for (unsigned k = 0; k < 8; k++)
        if (k != REG_ESP)
            reg_set(c, k, s, v[k]);
    c->r[REG_ESP] += 8 * s;
    return XR_OK;
}

/* PUSHFD stores EFLAGS with VM and RF cleared (SDM PUSHF). */
HANDLER(h_pushfd)
{
    return stack_push(c, i->size, flags_get(c) & ~(EFLAGS_VM | EFLAGS_RF));
}

HANDLER(h_popfd)
{
    uint32_t v;
    TRY(stack_read(c, 0, i->size, &v));
    c->r[REG_ESP] += i->size;
    /* POPF never changes VM, RF (cleared), VIP, VIF; a 16-bit POPF only the low word. */
    uint32_t mask = EFLAGS_ARITH | EFLAGS_TF | EFLAGS_IF | EFLAGS_DF | EFLAGS_IOPL |
                    EFLAGS_NT | EFLAGS_AC | EFLAGS_ID;
    if (i->size == 2)
        mask &= 0xFFFF;
    cpu_write_eflags(c, v, mask);
    return XR_OK;
}

HANDLER(h_leave)
{
    uint32_t v, ebp = c->r[REG_EBP];
    TRY(mem_read(c, SEG_SS, ebp, i->size, ACCESS_READ, &v));
    c->r[REG_ESP] = ebp + i->size;
    reg_set(c, REG_EBP, i->size, v);
    return XR_OK;
}

/* ENTER size, level (SDM ENTER, 32-bit stack). */
HANDLER(h_enter)
{
    unsigned s = i->size, level = i->imm & 31;
    uint32_t esp = c->r[REG_ESP], ebp = c->r[REG_EBP];
    esp -= s;
    TRY(mem_write(c, SEG_SS, esp, s, ebp));
    uint32_t frame = esp;
    if (level > 0) {
        for (unsigned k = 1; k < level; k++) {
            uint32_t v;
            ebp -= s;
            TRY(mem_read(c, SEG_SS, ebp, s, ACCESS_READ, &v));
            esp -= s;
            TRY(mem_write(c, SEG_SS, esp, s, v));
        }
        esp -= s;
        TRY(mem_write(c, SEG_SS, esp, s, frame));
    }
    reg_set(c, REG_EBP, s, frame);
    c->r[REG_ESP] = esp - i->imm2;
    return XR_OK;
}

/* CMOVcc reads its source whether or not the condition holds. */
HANDLER(h_cmov)
{
    uint32_t v;
    TRY(rm_read(c, i, i->size, &v));
    if (cpu_cond(c, i->op))
        reg_set(c, i->reg, i->size, v);
    return XR_OK;
}

HANDLER(h_setcc) { return rm_write(c, i, 1, cpu_cond(c, i->op)); }

/* ---- segment registers ---- */

/* MOV r/m, Sreg: a 16-bit store to memory; into a 32-bit register the
 * selector is zero-extended (P6 and later, SDM MOV). */
HANDLER(h_mov_rm_sreg)
{
    if (i->reg >= CPU_NSEGS)
        return cpu_ud(c);
    uint16_t sel = c->seg[i->reg].sel;
    if (i->mem)
        return mem_write(c, i->seg, insn_ea(c, i), 2, sel);
    reg_set(c, i->rm, i->size, sel);
    return XR_OK;
}

HANDLER(h_mov_sreg_rm)
{
    if (i->reg >= CPU_NSEGS || i->reg == SEG_CS)
        return cpu_ud(c);
    uint32_t v;
    TRY(rm_read(c, i, 2, &v));
    TRY(pm_load_seg(c, i->reg, (uint16_t)v));
    if (i->reg == SEG_SS)
        cpu_pend(c, PEND_INHIBIT);    /* MOV SS shadows the next instruction */
    return XR_OK;
}

/* LDS/LES/LFS/LGS/LSS r, m16:32 */
HANDLER(h_lseg)
{
    uint32_t ea = insn_ea(c, i), off, sel;
    TRY(mem_read(c, i->seg, ea, i->size, ACCESS_READ, &off));
    TRY(mem_read(c, i->seg, ea + i->size, 2, ACCESS_READ, &sel));
    TRY(pm_load_seg(c, i->op, (uint16_t)sel));
    reg_set(c, i->reg, i->size, off);
    return XR_OK;
}

HANDLER(h_xlat)
{
    uint32_t v;
    TRY(mem_read(c, i->seg, c->r[REG_EBX] + (c->r[REG_EAX] & 0xFF), 1, ACCESS_READ, &v));
    reg_set(c, REG_EAX, 1, v);
    return XR_OK;
}
