/* EFLAGS of the i686 core, computed lazily: an arithmetic instruction
 * records its operation, operands and result (LazyFlags, a few stores) and
 * the six arithmetic flags are computed only when something reads them
 * (Jcc, SETcc, PUSHF, ADC, ...). The formulas are the SDM's definitions
 * (Vol. 1 §3.4.3.1 and each instruction's "Flags Affected"):
 *
 *   CF  carry out of / borrow into the operand's top bit
 *   PF  even parity of the low 8 bits of the result
 *   AF  carry out of / borrow into bit 3
 *   ZF  result == 0          SF  top bit of the result
 *   OF  signed overflow
 *
 * Where the SDM calls a flag undefined, this file documents the value the
 * core produces (chosen to match what Intel P6-class parts are reported to
 * do where that is known); the host-oracle test masks undefined flags per
 * instruction, since the host may be an AMD part that differs there. */
#ifndef VMSPLIT_CPU_FLAGS_H
#define VMSPLIT_CPU_FLAGS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    CC_EAGER,                    /* the arithmetic flags are in EFLAGS itself */
    CC_ADD,                      /* res = a + b */
    CC_ADC,                      /* res = a + b + c */
    CC_SUB,                      /* res = a - b (also CMP, NEG with a = 0) */
    CC_SBB,                      /* res = a - b - c */
    CC_LOGIC,                    /* AND/OR/XOR/TEST: CF=OF=0, AF=0 (undefined) */
    CC_INC,                      /* res = a + 1, CF = c (unchanged) */
    CC_DEC,                      /* res = a - 1, CF = c (unchanged) */
    CC_SHL,                      /* res = a << b, b = count 1..31 */
    CC_SHR,                      /* res = a >> b */
    CC_SAR,                      /* res = a >>s b */
    CC_MUL,                      /* CF = OF = c; SF/ZF/PF of res (undefined), AF=0 */
} CcOp;

/* Which fields an operation's flags are found from (flags.c): LOGIC's
 * res; ADD's res and a (b = res - a); SUB's res, a and b; INC's and
 * DEC's res and c (a = res -/+ 1); every field for the others. The rest
 * may hold an earlier operation's values, which nothing reads
 * (exec_fast.c stores only what is needed). */
typedef struct {
    uint32_t res, a, b;          /* masked to the operand size */
    uint32_t c;
    union {
        struct {
            uint8_t op;          /* CcOp */
            uint8_t size;        /* 1, 2 or 4 bytes */
        };
        uint32_t opsize;         /* both in one store (LAZY_OPSIZE) */
    };
} LazyFlags;

/* LazyFlags.opsize for op and size. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LAZY_OPSIZE(op, size) ((uint32_t)(op) << 24 | (uint32_t)(size) << 16)
#else
#define LAZY_OPSIZE(op, size) ((uint32_t)(op) | (uint32_t)(size) << 8)
#endif

static inline uint32_t size_mask(unsigned size)
{
    return size == 4 ? 0xFFFFFFFFu : (1u << (size * 8)) - 1;
}

/* The six arithmetic flags (EFLAGS_ARITH bits) of a lazy state
 * (cc->op != CC_EAGER). */
uint32_t flags_arith(const LazyFlags *cc);
bool flags_cf(const LazyFlags *cc);
/* Condition cond (0..15, the low nibble of Jcc) given the lazy state and
 * EFLAGS (whose arithmetic bits are used when cc->op == CC_EAGER). */
bool flags_cond(const LazyFlags *cc, uint32_t eflags, unsigned cond);
/* EFLAGS_PF if the low byte of v has even parity, else 0. */
uint32_t flags_parity(uint32_t v);

#endif
