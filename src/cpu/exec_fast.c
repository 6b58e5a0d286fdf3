/* Specialised handlers for the most frequent 32-bit forms (register moves,
 * 32-bit loads and stores, ALU on registers, INC/DEC). They do exactly
 * what the generic handlers do for these operands; with the operand size
 * a compile-time constant the register and flag helpers fold away. The
 * decoder picks them (cpu_specialize) after decoding; the oracle and guest
 * tests run through them. */
#include "cpu/cpu_priv.h"

static inline uint32_t alu32(Cpu *c, unsigned op, uint32_t a, uint32_t b)
{
    uint32_t r;
    switch (op) {
    case 0: r = a + b; flags_lazy(c, CC_ADD, 4, r, a, b, 0); break;
    case 1: r = a | b; flags_lazy(c, CC_LOGIC, 4, r, a, b, 0); break;
    case 4: r = a & b; flags_lazy(c, CC_LOGIC, 4, r, a, b, 0); break;
    case 6: r = a ^ b; flags_lazy(c, CC_LOGIC, 4, r, a, b, 0); break;
    case 2: {
        uint32_t cf = cpu_cf(c);
        r = a + b + cf;
        flags_lazy(c, CC_ADC, 4, r, a, b, cf);
        break;
    }
    case 3: {
        uint32_t cf = cpu_cf(c);
        r = a - b - cf;
        flags_lazy(c, CC_SBB, 4, r, a, b, cf);
        break;
    }
    default: r = a - b; flags_lazy(c, CC_SUB, 4, r, a, b, 0); break;   /* SUB, CMP */
    }
    return r;
}

/* 89 /r, 8B /r with two registers */
static HANDLER(h_mov_rm32_r32) { c->r[i->rm] = c->r[i->reg]; return XR_OK; }
static HANDLER(h_mov_r32_rm32) { c->r[i->reg] = c->r[i->rm]; return XR_OK; }
static HANDLER(h_mov_r32_imm) { c->r[i->reg] = i->imm; return XR_OK; }

/* 8B /r load, 89 /r store */
static HANDLER(h_load32)
{
    uint32_t v;
    TRY(mem_read(c, i->seg, insn_ea(c, i), 4, ACCESS_READ, &v));
    c->r[i->reg] = v;
    return XR_OK;
}

static HANDLER(h_store32) { return mem_write(c, i->seg, insn_ea(c, i), 4, c->r[i->reg]); }

/* 01/09/.../39 /r and 03/0B/.../3B /r with two registers, 81/83 /op with a register */
static HANDLER(h_alu_r32_r32)
{
    uint32_t r = alu32(c, i->op, c->r[i->rm], c->r[i->reg]);
    if (i->op != 7)
        c->r[i->rm] = r;
    return XR_OK;
}

static HANDLER(h_alu_r32_rm32)
{
    uint32_t r = alu32(c, i->op, c->r[i->reg], c->r[i->rm]);
    if (i->op != 7)
        c->r[i->reg] = r;
    return XR_OK;
}

static HANDLER(h_alu_r32_imm)
{
    uint32_t r = alu32(c, i->op, c->r[i->rm], i->imm);
    if (i->op != 7)
        c->r[i->rm] = r;
    return XR_OK;
}

/* 03 /r etc. with a memory source */
static HANDLER(h_alu_r32_m32)
{
    uint32_t b;
    TRY(mem_read(c, i->seg, insn_ea(c, i), 4, ACCESS_READ, &b));
    uint32_t r = alu32(c, i->op, c->r[i->reg], b);
    if (i->op != 7)
        c->r[i->reg] = r;
    return XR_OK;
}

static HANDLER(h_inc_r32)
{
    uint32_t a = c->r[i->reg], cf = cpu_cf(c);
    c->r[i->reg] = a + 1;
    flags_lazy(c, CC_INC, 4, a + 1, a, 1, cf);
    return XR_OK;
}

static HANDLER(h_dec_r32)
{
    uint32_t a = c->r[i->reg], cf = cpu_cf(c);
    c->r[i->reg] = a - 1;
    flags_lazy(c, CC_DEC, 4, a - 1, a, 1, cf);
    return XR_OK;
}

void cpu_specialize(Insn *d)
{
    if (d->size != 4)
        return;
    InsnFn f = d->fn;
    if (f == h_mov_rm_r)
        d->fn = d->mem ? h_store32 : h_mov_rm32_r32;
    else if (f == h_mov_r_rm)
        d->fn = d->mem ? h_load32 : h_mov_r32_rm32;
    else if (f == h_mov_r_imm)
        d->fn = h_mov_r32_imm;
    else if (f == h_alu_rm_r && !d->mem)
        d->fn = h_alu_r32_r32;
    else if (f == h_alu_r_rm)
        d->fn = d->mem ? h_alu_r32_m32 : h_alu_r32_rm32;
    else if (f == h_alu_rm_imm && !d->mem)
        d->fn = h_alu_r32_imm;
    else if (f == h_inc_r)
        d->fn = h_inc_r32;
    else if (f == h_dec_r)
        d->fn = h_dec_r32;
}

bool cpu_fast_handler(InsnFn fn)
{
    return fn == h_mov_rm32_r32 || fn == h_mov_r32_rm32 || fn == h_mov_r32_imm ||
           fn == h_load32 || fn == h_store32 || fn == h_alu_r32_r32 || fn == h_alu_r32_rm32 ||
           fn == h_alu_r32_imm || fn == h_alu_r32_m32 || fn == h_inc_r32 || fn == h_dec_r32;
}
