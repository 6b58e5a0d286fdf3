/* Integer arithmetic and logic: ADD..CMP, TEST, INC/DEC, NOT/NEG, shifts
 * and rotates, SHLD/SHRD, MUL/IMUL/DIV/IDIV, bit tests and scans, XADD,
 * CMPXCHG(8B), BSWAP, the flag instructions and BCD adjusts. Semantics and
 * flags from each instruction's page in the SDM Vol. 2; undefined flags as
 * documented in flags.h and beside each instruction.
 *
 * Order in every handler: read operands (a memory operand that will be
 * written is read with write intent), compute, write, and only then update
 * registers and flags, so a faulting instruction leaves them unchanged. */
#include "cpu/cpu_priv.h"

static inline int32_t sext(uint32_t v, unsigned size)
{
    unsigned sh = 32 - size * 8;
    return (int32_t)(v << sh) >> sh;
}

static inline uint32_t msb(uint32_t v, unsigned size)
{
    return (v >> (size * 8 - 1)) & 1;
}

/* SZP of a result, for eagerly computed flags. */
static inline uint32_t szp(uint32_t r, unsigned size)
{
    uint32_t f = flags_parity(r);
    if ((r & size_mask(size)) == 0)
        f |= EFLAGS_ZF;
    if (msb(r, size))
        f |= EFLAGS_SF;
    return f;
}

/* ---- ADD OR ADC SBB AND SUB XOR CMP (op 0..7) ---- */

static const uint8_t alu_cc[8] = { CC_ADD, CC_LOGIC, CC_ADC, CC_SBB,
                                   CC_LOGIC, CC_SUB, CC_LOGIC, CC_SUB };

static inline uint32_t alu_result(unsigned op, uint32_t a, uint32_t b, uint32_t cf)
{
    switch (op) {
    case 0: return a + b;
    case 1: return a | b;
    case 2: return a + b + cf;
    case 3: return a - b - cf;
    case 4: return a & b;
    case 6: return a ^ b;
    default: return a - b;   /* SUB, CMP */
    }
}

/* Compute a op b, set the flags, return the result (masked). */
static inline uint32_t alu_do(Cpu *c, unsigned op, unsigned size, uint32_t a, uint32_t b)
{
    uint32_t cf = (op == 2 || op == 3) ? cpu_cf(c) : 0;
    uint32_t r = alu_result(op, a, b, cf);
    flags_lazy(c, (CcOp)alu_cc[op], size, r, a, b, cf);
    return r & size_mask(size);
}

/* dst (r/m) op= src, with dst in memory: read with write intent (unless
 * CMP), compute without touching flags, write, then set the flags. */
static int alu_mem(Cpu *c, const Insn *i, uint32_t src)
{
    unsigned s = i->size, op = i->op;
    uint32_t ea = insn_ea(c, i), a;
    if (op == 7) {
        TRY(mem_read(c, i->seg, ea, s, ACCESS_READ, &a));
        alu_do(c, op, s, a, src);
        return XR_OK;
    }
    TRY(mem_read(c, i->seg, ea, s, ACCESS_WRITE, &a));
    uint32_t cf = (op == 2 || op == 3) ? cpu_cf(c) : 0;
    uint32_t r = alu_result(op, a, src, cf);
    TRY(mem_write(c, i->seg, ea, s, r));
    flags_lazy(c, (CcOp)alu_cc[op], s, r, a, src, cf);
    return XR_OK;
}

HANDLER(h_alu_rm_r)
{
    unsigned s = i->size;
    uint32_t src = reg_get(c, i->reg, s);
    if (i->mem)
        return alu_mem(c, i, src);
    uint32_t r = alu_do(c, i->op, s, reg_get(c, i->rm, s), src);
    if (i->op != 7)
        reg_set(c, i->rm, s, r);
    return XR_OK;
}

HANDLER(h_alu_r_rm)
{
    unsigned s = i->size;
    uint32_t src;
    TRY(rm_read(c, i, s, &src));
    uint32_t r = alu_do(c, i->op, s, reg_get(c, i->reg, s), src);
    if (i->op != 7)
        reg_set(c, i->reg, s, r);
    return XR_OK;
}

HANDLER(h_alu_rm_imm)
{
    unsigned s = i->size;
    uint32_t src = i->imm & size_mask(s);
    if (i->mem)
        return alu_mem(c, i, src);
    uint32_t r = alu_do(c, i->op, s, reg_get(c, i->rm, s), src);
    if (i->op != 7)
        reg_set(c, i->rm, s, r);
    return XR_OK;
}

HANDLER(h_test_rm_r)
{
    uint32_t a;
    TRY(rm_read(c, i, i->size, &a));
    uint32_t b = reg_get(c, i->reg, i->size);
    flags_lazy(c, CC_LOGIC, i->size, a & b, a, b, 0);
    return XR_OK;
}

HANDLER(h_test_rm_imm)
{
    uint32_t a;
    TRY(rm_read(c, i, i->size, &a));
    flags_lazy(c, CC_LOGIC, i->size, a & i->imm, a, i->imm, 0);
    return XR_OK;
}

/* ---- INC DEC NOT NEG ---- */

static int incdec(Cpu *c, const Insn *i, bool dec)
{
    unsigned s = i->size;
    uint32_t a;
    TRY(rm_read_rmw(c, i, s, &a));
    uint32_t r = dec ? a - 1 : a + 1;
    uint32_t cf = cpu_cf(c);
    TRY(rm_write(c, i, s, r));
    flags_lazy(c, dec ? CC_DEC : CC_INC, s, r, a, 1, cf);
    return XR_OK;
}

HANDLER(h_inc_rm) { return incdec(c, i, false); }
HANDLER(h_dec_rm) { return incdec(c, i, true); }

HANDLER(h_inc_r)
{
    uint32_t a = reg_get(c, i->reg, i->size), cf = cpu_cf(c);
    reg_set(c, i->reg, i->size, a + 1);
    flags_lazy(c, CC_INC, i->size, a + 1, a, 1, cf);
    return XR_OK;
}

HANDLER(h_dec_r)
{
    uint32_t a = reg_get(c, i->reg, i->size), cf = cpu_cf(c);
    reg_set(c, i->reg, i->size, a - 1);
    flags_lazy(c, CC_DEC, i->size, a - 1, a, 1, cf);
    return XR_OK;
}

HANDLER(h_not_rm)
{
    uint32_t a;
    TRY(rm_read_rmw(c, i, i->size, &a));
    return rm_write(c, i, i->size, ~a);     /* flags unaffected */
}

HANDLER(h_neg_rm)
{
    uint32_t a;
    TRY(rm_read_rmw(c, i, i->size, &a));
    TRY(rm_write(c, i, i->size, 0 - a));
    flags_lazy(c, CC_SUB, i->size, 0 - a, 0, a, 0);    /* CF = (a != 0) */
    return XR_OK;
}

/* ---- shifts and rotates (op = ModRM.reg: ROL ROR RCL RCR SHL SHR SAL SAR) ---- */

/* Rotates change only CF and OF (OF defined for a count of 1; the core
 * applies the same formula to other counts). */
static uint32_t rotate(Cpu *c, unsigned op, unsigned s, uint32_t a, unsigned count)
{
    unsigned w = s * 8;
    uint32_t m = size_mask(s), f = flags_get(c), r = a, cf = f & EFLAGS_CF, of;
    switch (op) {
    case 0: {                                        /* ROL */
        unsigned n = count % w;
        if (n)
            r = ((a << n) | (a >> (w - n))) & m;
        cf = r & 1;
        of = msb(r, s) ^ cf;
        break;
    }
    case 1: {                                        /* ROR */
        unsigned n = count % w;
        if (n)
            r = ((a >> n) | (a << (w - n))) & m;
        cf = msb(r, s);
        of = msb(r, s) ^ ((r >> (w - 2)) & 1);
        break;
    }
    case 2: {                                        /* RCL: w+1-bit rotate */
        unsigned n = s == 4 ? count : count % (w + 1);
        uint64_t v = ((uint64_t)cf << w) | a;
        for (unsigned k = 0; k < n; k++)
            v = ((v << 1) | (v >> w)) & ((2ULL << w) - 1);
        r = (uint32_t)v & m;
        cf = (uint32_t)(v >> w) & 1;
        of = msb(r, s) ^ cf;
        break;
    }
    default: {                                       /* RCR */
        unsigned n = s == 4 ? count : count % (w + 1);
        of = msb(a, s) ^ cf;                         /* before the rotation */
        uint64_t v = ((uint64_t)cf << w) | a;
        for (unsigned k = 0; k < n; k++)
            v = (v >> 1) | ((v & 1) << w);
        r = (uint32_t)v & m;
        cf = (uint32_t)(v >> w) & 1;
        break;
    }
    }
    f &= ~(EFLAGS_CF | EFLAGS_OF);
    flags_set_arith(c, f | (cf ? EFLAGS_CF : 0) | (of ? EFLAGS_OF : 0));
    return r;
}

static int do_shift(Cpu *c, const Insn *i, unsigned count)
{
    unsigned s = i->size, op = i->op;
    uint32_t a;
    count &= 0x1F;
    TRY(rm_read_rmw(c, i, s, &a));
    if (count == 0)
        return XR_OK;                                /* flags unaffected */
    uint32_t r;
    CcOp cc;
    switch (op) {
    case 4: case 6: r = a << count; cc = CC_SHL; break;
    case 5: r = a >> count; cc = CC_SHR; break;
    case 7: r = (uint32_t)(sext(a, s) >> count); cc = CC_SAR; break;
    default: {
        LazyFlags save = c->cc;
        uint32_t eflags = c->eflags;
        r = rotate(c, op, s, a, count);
        int rc = rm_write(c, i, s, r);
        if (rc) {
            c->cc = save;
            c->eflags = eflags;
        }
        return rc;
    }
    }
    TRY(rm_write(c, i, s, r));
    flags_lazy(c, cc, s, r, a, count, 0);
    return XR_OK;
}

HANDLER(h_shift_imm) { return do_shift(c, i, i->imm); }
HANDLER(h_shift_cl) { return do_shift(c, i, c->r[REG_ECX] & 0xFF); }

/* SHLD/SHRD: dst = r/m, src = reg. For 16-bit operands and counts above 16
 * the result is undefined; the core shifts the pattern dst:src:dst. */
static int do_shxd(Cpu *c, const Insn *i, unsigned count, bool left)
{
    unsigned s = i->size;
    uint32_t dst, src = reg_get(c, i->reg, s);
    count &= 0x1F;
    TRY(rm_read_rmw(c, i, s, &dst));
    if (count == 0)
        return XR_OK;
    uint32_t r, cf;
    if (s == 4) {
        if (left) {
            r = (dst << count) | (src >> (32 - count));
            cf = (dst >> (32 - count)) & 1;
        } else {
            r = (dst >> count) | (src << (32 - count));
            cf = (dst >> (count - 1)) & 1;
        }
    } else {
        uint64_t pat;
        if (left) {
            pat = ((uint64_t)dst << 32) | ((uint64_t)src << 16) | dst;
            r = (uint32_t)(pat >> (32 - count)) & 0xFFFF;
            cf = (uint32_t)(pat >> (48 - count)) & 1;
        } else {
            pat = ((uint64_t)dst << 32) | ((uint64_t)src << 16) | dst;
            r = (uint32_t)(pat >> count) & 0xFFFF;
            cf = (uint32_t)(pat >> (count - 1)) & 1;
        }
    }
    TRY(rm_write(c, i, s, r));
    uint32_t f = szp(r, s) | (cf ? EFLAGS_CF : 0);
    if (msb(r, s) != msb(dst, s))
        f |= EFLAGS_OF;                /* defined for count 1: sign change */
    flags_set_arith(c, f);             /* AF undefined: cleared */
    return XR_OK;
}

HANDLER(h_shld_imm) { return do_shxd(c, i, i->imm, true); }
HANDLER(h_shld_cl) { return do_shxd(c, i, c->r[REG_ECX], true); }
HANDLER(h_shrd_imm) { return do_shxd(c, i, i->imm, false); }
HANDLER(h_shrd_cl) { return do_shxd(c, i, c->r[REG_ECX], false); }

/* ---- multiply and divide ---- */

/* MUL/IMUL: CF = OF = the upper half is significant; SF/ZF/PF undefined
 * (the core computes them from the low half), AF undefined (0). */
static int mul1(Cpu *c, const Insn *i, bool sign)
{
    unsigned s = i->size;
    uint32_t b, a = reg_get(c, REG_EAX, s), lo, hi;
    bool ovf;
    TRY(rm_read(c, i, s, &b));
    if (sign) {
        int64_t p = (int64_t)sext(a, s) * sext(b, s);
        lo = (uint32_t)p & size_mask(s);
        hi = (uint32_t)((uint64_t)p >> (s * 8)) & size_mask(s);
        ovf = p != sext(lo, s);
    } else {
        uint64_t p = (uint64_t)a * b;
        lo = (uint32_t)p & size_mask(s);
        hi = (uint32_t)(p >> (s * 8)) & size_mask(s);
        ovf = hi != 0;
    }
    if (s == 1) {
        reg_set(c, REG_EAX, 2, lo | (hi << 8));
    } else {
        reg_set(c, REG_EAX, s, lo);
        reg_set(c, REG_EDX, s, hi);
    }
    flags_lazy(c, CC_MUL, s, lo, a, b, ovf);
    return XR_OK;
}

HANDLER(h_mul_rm) { return mul1(c, i, false); }
HANDLER(h_imul1_rm) { return mul1(c, i, true); }

static int imul2(Cpu *c, const Insn *i, uint32_t a, uint32_t b)
{
    unsigned s = i->size;
    int64_t p = (int64_t)sext(a, s) * sext(b, s);
    uint32_t lo = (uint32_t)p & size_mask(s);
    reg_set(c, i->reg, s, lo);
    flags_lazy(c, CC_MUL, s, lo, a, b, p != sext(lo, s));
    return XR_OK;
}

HANDLER(h_imul_r_rm)
{
    uint32_t b;
    TRY(rm_read(c, i, i->size, &b));
    return imul2(c, i, reg_get(c, i->reg, i->size), b);
}

HANDLER(h_imul_r_rm_imm)
{
    uint32_t a;
    TRY(rm_read(c, i, i->size, &a));
    return imul2(c, i, a, i->imm & size_mask(i->size));
}

/* DIV/IDIV: #DE on a zero divisor or a quotient that does not fit. Flags
 * are undefined; the core leaves them unchanged. */
static int div1(Cpu *c, const Insn *i, bool sign)
{
    unsigned s = i->size, w = s * 8;
    uint32_t b;
    TRY(rm_read(c, i, s, &b));
    if (b == 0)
        return cpu_raise(c, VEC_DE, 0);
    uint64_t n = s == 1 ? reg_get(c, REG_EAX, 2)
                        : ((uint64_t)reg_get(c, REG_EDX, s) << w) | reg_get(c, REG_EAX, s);
    uint32_t q, r;
    if (sign) {
        int64_t sn = s == 4 ? (int64_t)n : (int64_t)(n << (64 - 2 * w)) >> (64 - 2 * w);
        int64_t sd = sext(b, s);
        if (sd == -1 && sn == INT64_MIN)
            return cpu_raise(c, VEC_DE, 0);
        int64_t sq = sn / sd, sr = sn % sd;
        int64_t lim = (int64_t)1 << (w - 1);
        if (sq >= lim || sq < -lim)
            return cpu_raise(c, VEC_DE, 0);
        q = (uint32_t)sq;
        r = (uint32_t)sr;
    } else {
        uint64_t uq = n / b;
        if (uq > size_mask(s))
            return cpu_raise(c, VEC_DE, 0);
        q = (uint32_t)uq;
        r = (uint32_t)(n % b);
    }
    if (s == 1) {
        reg_set(c, REG_EAX, 2, (q & 0xFF) | ((r & 0xFF) << 8));
    } else {
        reg_set(c, REG_EAX, s, q);
        reg_set(c, REG_EDX, s, r);
    }
    return XR_OK;
}

HANDLER(h_div_rm) { return div1(c, i, false); }
HANDLER(h_idiv_rm) { return div1(c, i, true); }

/* ---- bit test and scan ---- */

/* BT/BTS/BTR/BTC (op 0..3): CF = the bit; OF/SF/AF/PF undefined (the core
 * leaves them), ZF unchanged. A register bit offset addresses memory beyond
 * the operand (signed, SDM "Bit(BitBase, BitOffset)"). */
static int bt_do(Cpu *c, const Insn *i, uint32_t off, bool reg_offset)
{
    unsigned s = i->size, w = s * 8;
    uint32_t v, bit;
    if (!i->mem) {
        bit = off & (w - 1);
        v = reg_get(c, i->rm, s);
    } else {
        uint32_t ea = insn_ea(c, i);
        if (reg_offset) {
            int32_t so = sext(off, s);
            ea += (uint32_t)((so >> (s == 4 ? 5 : 4)) * (int32_t)s);
        }
        bit = off & (w - 1);
        TRY(mem_read(c, i->seg, ea, s, i->op ? ACCESS_WRITE : ACCESS_READ, &v));
        uint32_t nv = v;
        switch (i->op) {
        case 1: nv |= 1u << bit; break;
        case 2: nv &= ~(1u << bit); break;
        case 3: nv ^= 1u << bit; break;
        }
        if (i->op)
            TRY(mem_write(c, i->seg, ea, s, nv));
        goto flags;
    }
    switch (i->op) {
    case 1: reg_set(c, i->rm, s, v | (1u << bit)); break;
    case 2: reg_set(c, i->rm, s, v & ~(1u << bit)); break;
    case 3: reg_set(c, i->rm, s, v ^ (1u << bit)); break;
    }
flags:;
    uint32_t f = flags_get(c) & ~EFLAGS_CF;
    flags_set_arith(c, f | ((v >> bit) & 1));
    return XR_OK;
}

HANDLER(h_bt_rm_r) { return bt_do(c, i, reg_get(c, i->reg, i->size), true); }
HANDLER(h_bt_rm_imm) { return bt_do(c, i, i->imm & 0xFF, false); }

/* BSF/BSR: ZF = (source == 0); the destination is then left unchanged (as
 * Intel and AMD parts do); CF/OF/SF/AF/PF undefined (left unchanged). */
static int bscan(Cpu *c, const Insn *i, bool reverse)
{
    uint32_t v;
    TRY(rm_read(c, i, i->size, &v));
    uint32_t f = flags_get(c) & ~EFLAGS_ZF;
    if (v == 0) {
        flags_set_arith(c, f | EFLAGS_ZF);
        return XR_OK;
    }
    reg_set(c, i->reg, i->size, reverse ? 31u - (uint32_t)__builtin_clz(v)
                                        : (uint32_t)__builtin_ctz(v));
    flags_set_arith(c, f);
    return XR_OK;
}

HANDLER(h_bsf) { return bscan(c, i, false); }
HANDLER(h_bsr) { return bscan(c, i, true); }

/* ---- conversions and flag instructions ---- */

HANDLER(h_cbw)
{
    if (i->size == 2)
        reg_set(c, REG_EAX, 2, (uint32_t)(int32_t)(int8_t)c->r[REG_EAX]);
    else
        c->r[REG_EAX] = (uint32_t)(int32_t)(int16_t)c->r[REG_EAX];
    return XR_OK;
}

HANDLER(h_cwd)
{
    uint32_t sign = msb(c->r[REG_EAX], i->size) ? 0xFFFFFFFFu : 0;
    reg_set(c, REG_EDX, i->size, sign);
    return XR_OK;
}

#define SAHF_MASK (EFLAGS_SF | EFLAGS_ZF | EFLAGS_AF | EFLAGS_PF | EFLAGS_CF)

HANDLER(h_sahf)
{
    (void)i;
    uint32_t f = flags_get(c) & ~SAHF_MASK;
    flags_set_arith(c, f | ((c->r[REG_EAX] >> 8) & SAHF_MASK));
    return XR_OK;
}

HANDLER(h_lahf)
{
    (void)i;
    uint32_t ah = (flags_get(c) & SAHF_MASK) | EFLAGS_FIXED1;
    reg_set(c, 4, 1, ah);        /* AH */
    return XR_OK;
}

HANDLER(h_cmc) { (void)i; flags_set_arith(c, flags_get(c) ^ EFLAGS_CF); return XR_OK; }
HANDLER(h_clc) { (void)i; flags_set_arith(c, flags_get(c) & ~EFLAGS_CF); return XR_OK; }
HANDLER(h_stc) { (void)i; flags_set_arith(c, flags_get(c) | EFLAGS_CF); return XR_OK; }
HANDLER(h_cld) { (void)i; c->eflags &= ~EFLAGS_DF; return XR_OK; }
HANDLER(h_std) { (void)i; c->eflags |= EFLAGS_DF; return XR_OK; }

/* ---- exchange-and-operate ---- */

HANDLER(h_xadd)
{
    unsigned s = i->size;
    uint32_t d, src = reg_get(c, i->reg, s);
    TRY(rm_read_rmw(c, i, s, &d));
    uint32_t sum = d + src;
    if (i->mem) {
        TRY(rm_write(c, i, s, sum));
        reg_set(c, i->reg, s, d);
    } else {
        reg_set(c, i->reg, s, d);
        reg_set(c, i->rm, s, sum);
    }
    flags_lazy(c, CC_ADD, s, sum, d, src, 0);
    return XR_OK;
}

HANDLER(h_cmpxchg)
{
    unsigned s = i->size;
    uint32_t d, acc = reg_get(c, REG_EAX, s);
    TRY(rm_read_rmw(c, i, s, &d));
    bool eq = (acc & size_mask(s)) == d;
    /* The destination is written in both cases (with itself on failure). */
    TRY(rm_write(c, i, s, eq ? reg_get(c, i->reg, s) : d));
    if (!eq)
        reg_set(c, REG_EAX, s, d);
    flags_lazy(c, CC_SUB, s, acc - d, acc, d, 0);
    return XR_OK;
}

HANDLER(h_cmpxchg8b)
{
    uint32_t ea = insn_ea(c, i), lo, hi;
    TRY(mem_read(c, i->seg, ea, 4, ACCESS_WRITE, &lo));
    TRY(mem_read(c, i->seg, ea + 4, 4, ACCESS_WRITE, &hi));
    bool eq = lo == c->r[REG_EAX] && hi == c->r[REG_EDX];
    TRY(mem_write(c, i->seg, ea, 4, eq ? c->r[REG_EBX] : lo));
    TRY(mem_write(c, i->seg, ea + 4, 4, eq ? c->r[REG_ECX] : hi));
    if (!eq) {
        c->r[REG_EAX] = lo;
        c->r[REG_EDX] = hi;
    }
    uint32_t f = flags_get(c) & ~EFLAGS_ZF;
    flags_set_arith(c, f | (eq ? EFLAGS_ZF : 0));
    return XR_OK;
}

/* BSWAP r16 is undefined; Intel parts clear the low word, as does the core. */
HANDLER(h_bswap)
{
    if (i->size == 2)
        reg_set(c, i->reg, 2, 0);
    else
        c->r[i->reg] = __builtin_bswap32(c->r[i->reg]);
    return XR_OK;
}

/* ---- BCD (SDM pseudo-code; OF undefined for DAA/DAS, the core clears it;
 * AAA/AAS leave OF/SF/ZF/PF undefined, the core computes SZP of AL) ---- */

static void set_al(Cpu *c, uint32_t v) { reg_set(c, REG_EAX, 1, v); }

HANDLER(h_daa)
{
    (void)i;
    uint32_t f = flags_get(c), al = c->r[REG_EAX] & 0xFF, old_al = al;
    bool old_cf = f & EFLAGS_CF, cf = false, af = false;
    if ((al & 0xF) > 9 || (f & EFLAGS_AF)) {
        cf = old_cf || al + 6 > 0xFF;
        al = (al + 6) & 0xFF;
        af = true;
    }
    if (old_al > 0x99 || old_cf) {
        al = (al + 0x60) & 0xFF;
        cf = true;
    } else {
        cf = false;
    }
    set_al(c, al);
    flags_set_arith(c, szp(al, 1) | (cf ? EFLAGS_CF : 0) | (af ? EFLAGS_AF : 0));
    return XR_OK;
}

HANDLER(h_das)
{
    (void)i;
    uint32_t f = flags_get(c), al = c->r[REG_EAX] & 0xFF, old_al = al;
    bool old_cf = f & EFLAGS_CF, cf = false, af = false;
    if ((al & 0xF) > 9 || (f & EFLAGS_AF)) {
        cf = old_cf || al < 6;
        al = (al - 6) & 0xFF;
        af = true;
    }
    if (old_al > 0x99 || old_cf) {
        al = (al - 0x60) & 0xFF;
        cf = true;
    }
    set_al(c, al);
    flags_set_arith(c, szp(al, 1) | (cf ? EFLAGS_CF : 0) | (af ? EFLAGS_AF : 0));
    return XR_OK;
}

static int ascii_adjust(Cpu *c, bool sub)
{
    uint32_t f = flags_get(c), ax = c->r[REG_EAX] & 0xFFFF;
    bool adj = (ax & 0xF) > 9 || (f & EFLAGS_AF);
    if (adj) {
        if (sub) {                     /* AX <- AX - 6; AH <- AH - 1 (the borrow reaches AH) */
            ax = (ax - 6) & 0xFFFF;
            ax = (ax & 0xFF) | ((((ax >> 8) - 1) & 0xFF) << 8);
        }
        else {
            ax = (ax + 0x106) & 0xFFFF;
        }
    }
    ax &= 0xFF0F;
    reg_set(c, REG_EAX, 2, ax);
    flags_set_arith(c, szp(ax, 1) | (adj ? EFLAGS_CF | EFLAGS_AF : 0));
    return XR_OK;
}

HANDLER(h_aaa) { (void)i; return ascii_adjust(c, false); }
HANDLER(h_aas) { (void)i; return ascii_adjust(c, true); }

/* AAM/AAD: SF/ZF/PF of AL; OF/AF/CF undefined (cleared). */
HANDLER(h_aam)
{
    uint32_t base = i->imm & 0xFF, al = c->r[REG_EAX] & 0xFF;
    if (base == 0)
        return cpu_raise(c, VEC_DE, 0);
    uint32_t ax = ((al / base) << 8) | (al % base);
    reg_set(c, REG_EAX, 2, ax);
    flags_set_arith(c, szp(ax, 1));
    return XR_OK;
}

HANDLER(h_aad)
{
    uint32_t base = i->imm & 0xFF, ax = c->r[REG_EAX];
    uint32_t al = ((ax & 0xFF) + ((ax >> 8) & 0xFF) * base) & 0xFF;
    reg_set(c, REG_EAX, 2, al);
    flags_set_arith(c, szp(al, 1));
    return XR_OK;
}

HANDLER(h_salc)
{
    (void)i;
    set_al(c, cpu_cf(c) ? 0xFF : 0);
    return XR_OK;
}
