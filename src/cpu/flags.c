/* Lazy EFLAGS: see flags.h for the model and the undefined-flag choices. */
#include "cpu/flags.h"

#include <glib.h>

#include "cpu/cpu.h"

uint32_t flags_parity(uint32_t v)
{
    return __builtin_parity(v & 0xFF) ? 0 : EFLAGS_PF;
}

static inline uint32_t sign_bit(unsigned size)
{
    return 1u << (size * 8 - 1);
}

static inline int32_t sext(uint32_t v, unsigned size)
{
    unsigned sh = 32 - size * 8;
    return (int32_t)(v << sh) >> sh;
}

bool flags_cf(const LazyFlags *cc)
{
    uint32_t a = cc->a, b = cc->b;
    unsigned w = cc->size * 8;
    switch ((CcOp)cc->op) {
    case CC_ADD: return cc->res < a;
    case CC_ADC: return cc->c ? cc->res <= a : cc->res < a;
    case CC_SUB: return a < b;
    case CC_SBB: return cc->c ? a <= b : a < b;
    case CC_LOGIC: return false;
    case CC_INC:
    case CC_DEC:
    case CC_MUL: return cc->c != 0;
    /* Shifts: the last bit shifted out. For counts past the operand width
     * (8/16-bit operands, counts up to 31) the SDM leaves CF undefined;
     * the core then reports 0 for SHL/SHR and the sign for SAR. */
    case CC_SHL: return b <= w ? (a >> (w - b)) & 1 : 0;
    case CC_SHR: return b <= w ? (a >> (b - 1)) & 1 : 0;
    case CC_SAR: return (sext(a, cc->size) >> (b - 1 < 31 ? b - 1 : 31)) & 1;
    case CC_EAGER: break;
    }
    g_assert_not_reached();
}

/* ADD's b and INC's and DEC's a follow from the result and the other
 * operand, and are not stored (LazyFlags, flags.h). */
static inline uint32_t operand_a(const LazyFlags *cc)
{
    if (cc->op == CC_INC)
        return (cc->res - 1) & size_mask(cc->size);
    if (cc->op == CC_DEC)
        return (cc->res + 1) & size_mask(cc->size);
    return cc->a;
}

static inline uint32_t operand_b(const LazyFlags *cc)
{
    return cc->op == CC_ADD ? (cc->res - cc->a) & size_mask(cc->size) : cc->b;
}

static uint32_t flags_of(const LazyFlags *cc, bool cf)
{
    uint32_t a = cc->a, b = operand_b(cc), r = cc->res, s = sign_bit(cc->size);
    switch ((CcOp)cc->op) {
    case CC_ADD:
    case CC_ADC: return (a ^ r) & (b ^ r) & s;
    case CC_SUB:
    case CC_SBB: return (a ^ b) & (a ^ r) & s;
    case CC_INC: return r == s;
    case CC_DEC: return r == s - 1;
    case CC_LOGIC:
    case CC_SAR: return 0;
    case CC_MUL: return cc->c;
    /* SHL: OF = MSB(result) XOR CF; SHR: OF = MSB(original operand). Defined
     * for a count of 1; the core uses the same formula for other counts. */
    case CC_SHL: return ((r & s) != 0) ^ cf;
    case CC_SHR: return (a & s) != 0;
    case CC_EAGER: break;
    }
    g_assert_not_reached();
}

static uint32_t flags_af(const LazyFlags *cc)
{
    switch ((CcOp)cc->op) {
    case CC_ADD: case CC_ADC: case CC_SUB: case CC_SBB:
        return (cc->a ^ operand_b(cc) ^ cc->res) & EFLAGS_AF;
    case CC_INC: case CC_DEC:
        return (operand_a(cc) ^ 1 ^ cc->res) & EFLAGS_AF;
    default:
        return 0;   /* logic, shifts, multiply: AF undefined, the core clears it */
    }
}

uint32_t flags_arith(const LazyFlags *cc)
{
    bool cf = flags_cf(cc);
    uint32_t f = cf ? EFLAGS_CF : 0;
    if (flags_of(cc, cf))
        f |= EFLAGS_OF;
    f |= flags_af(cc);
    f |= flags_parity(cc->res);
    if (cc->res == 0)
        f |= EFLAGS_ZF;
    if (cc->res & sign_bit(cc->size))
        f |= EFLAGS_SF;
    return f;
}

static bool cond_from_flags(uint32_t f, unsigned cond)
{
    bool r;
    switch (cond >> 1) {
    case 0: r = f & EFLAGS_OF; break;                      /* O */
    case 1: r = f & EFLAGS_CF; break;                      /* B */
    case 2: r = f & EFLAGS_ZF; break;                      /* E */
    case 3: r = f & (EFLAGS_CF | EFLAGS_ZF); break;        /* BE */
    case 4: r = f & EFLAGS_SF; break;                      /* S */
    case 5: r = f & EFLAGS_PF; break;                      /* P */
    case 6: r = !(f & EFLAGS_SF) != !(f & EFLAGS_OF); break;            /* L */
    default: r = (f & EFLAGS_ZF) || !(f & EFLAGS_SF) != !(f & EFLAGS_OF); /* LE */
    }
    return r ^ (cond & 1);
}

bool flags_cond(const LazyFlags *cc, uint32_t eflags, unsigned cond)
{
    /* Fast paths for the common compare-and-branch sequences. */
    if (cc->op == CC_SUB) {
        uint32_t a = cc->a, b = cc->b;
        int32_t sa = sext(a, cc->size), sb = sext(b, cc->size);
        bool r;
        switch (cond >> 1) {
        case 1: r = a < b; break;
        case 2: r = a == b; break;
        case 3: r = a <= b; break;
        case 6: r = sa < sb; break;
        case 7: r = sa <= sb; break;
        default: return cond_from_flags(flags_arith(cc), cond);
        }
        return r ^ (cond & 1);
    }
    if (cc->op == CC_LOGIC || cc->op == CC_INC || cc->op == CC_DEC) {
        if ((cond >> 1) == 2)
            return (cc->res == 0) ^ (cond & 1);
    }
    if (cc->op == CC_EAGER)
        return cond_from_flags(eflags, cond);
    return cond_from_flags(flags_arith(cc), cond);
}
