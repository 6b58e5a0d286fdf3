/* Specialised handlers for the most frequent 32-bit forms (register moves,
 * 32-bit loads and stores, ALU on registers, INC/DEC). They do exactly
 * what the generic handlers do for these operands; with the operand size
 * a compile-time constant the register and flag helpers fold away. The
 * decoder picks them (cpu_specialize) after decoding; the oracle and guest
 * tests run through them. Each also has a threaded variant (InsnTFn,
 * cpu_thread_fn) for the passes round a loop in block.c's run_loop,
 * which goes on to the next instruction's itself (test_cpu_dcache's
 * loop tests). */
#include "cpu/cpu_priv.h"

/* GCC's SLP vectorizer packs the lazy flags' result and operand into one
 * 8-byte store through SSE registers (movd, movd, punpckldq, movq): two
 * instructions more than two 4-byte stores in every ALU handler here. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-slp-vectorize")
#endif

/* flags_lazy for a 32-bit operation, storing only the fields its flags
 * are found from (LazyFlags, flags.h): LOGIC's result; ADD's result and
 * first operand; SUB's result and operands; INC's and DEC's result and
 * carry. */
static inline __attribute__((always_inline)) void lazy32(Cpu *c, CcOp op, uint32_t res,
                                                         uint32_t a, uint32_t b, uint32_t carry)
{
    c->cc.opsize = LAZY_OPSIZE(op, 4);
    c->cc.res = res;
    if (op != CC_LOGIC && op != CC_INC && op != CC_DEC)
        c->cc.a = a;
    if (op != CC_LOGIC && op != CC_INC && op != CC_DEC && op != CC_ADD)
        c->cc.b = b;
    if (op != CC_ADD && op != CC_SUB && op != CC_LOGIC)
        c->cc.c = carry;
}

static inline uint32_t alu32(Cpu *c, unsigned op, uint32_t a, uint32_t b)
{
    uint32_t r;
    switch (op) {
    case 0: r = a + b; lazy32(c, CC_ADD, r, a, b, 0); break;
    case 1: r = a | b; lazy32(c, CC_LOGIC, r, a, b, 0); break;
    case 4: r = a & b; lazy32(c, CC_LOGIC, r, a, b, 0); break;
    case 6: r = a ^ b; lazy32(c, CC_LOGIC, r, a, b, 0); break;
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
    default: r = a - b; lazy32(c, CC_SUB, r, a, b, 0); break;   /* SUB, CMP */
    }
    return r;
}

/* 89 /r, 8B /r with two registers */
static HANDLER(h_mov_rm32_r32) { c->r[i->rm] = c->r[i->reg]; return XR_OK; }
static HANDLER(h_mov_r32_rm32) { c->r[i->reg] = c->r[i->rm]; return XR_OK; }
static HANDLER(h_mov_r32_imm) { c->r[i->reg] = i->imm; return XR_OK; }

/* Threaded variants (InsnTFn, cpu_priv.h) for block.c's run_loop: the
 * handler's work, then the next instruction's tfn as a tail call, so that
 * a pass round a loop is one call from run_loop and no test between
 * instructions that cannot fault or set block_exit. thr_after is the test
 * the run loop makes after a handler (its result, block_exit); thr_next
 * goes on where that test cannot fail (a register instruction). */
static inline __attribute__((always_inline)) uintptr_t thr_next(Cpu *c, const Insn *i)
{
    return i[1].tfn(c, i + 1);
}

static inline __attribute__((always_inline)) uintptr_t thr_after(Cpu *c, const Insn *i, int r)
{
    if (UNLIKELY(r | c->block_exit))
        return (uintptr_t)i | (unsigned)r;
    return thr_next(c, i);
}

static uintptr_t t_any(Cpu *c, const Insn *i);

/* The memo answering a dword reference at lin, which must not cross a
 * page: mmu_memo_find's lookup with the key of lin + 3, so that the
 * in-page test is the key compare (a dword that crosses into the next
 * page has that page's key, which no memo in the slot of lin's page
 * holds: mmu_memo_at gives consecutive pages different slots). NULL: no
 * memo, or a dword that crosses a page. */
static inline __attribute__((always_inline)) const MmuMemo *dword_memo(Mmu *m, uint32_t lin,
                                                                      Access access, int cpl)
{
    const MmuMemo *mm = mmu_memo_at(m, lin, access);
    return mmu_memo_answers(mm, mmu_memo_key(lin + 3, cpl), access) ? mm : NULL;
}

/* 8B /r load, 89 /r store. What mem_read/mem_write do, with the hit
 * that calls nothing (a memo, the L1 set's MRU way: mmu_access_memo_mru)
 * in the handler itself, so that it saves no registers. Out of line: a
 * page no memo answers (mmu_access_fast's own fallback,
 * mmu_access_lookup_read, called from here: its fault goes to Cpu.mf), a
 * line beyond the MRU way (the rest of mmu_access_fast with the memo
 * found: mmu_access_memo), a segment that is not flat or a dword that
 * crosses a page (the generic handler); nothing is done before any of
 * them. */
static __attribute__((noinline)) int load32_lookup(Cpu *c, const Insn *i, uint32_t lin)
{
    if (UNLIKELY(!in_page(lin, 4)))
        return h_mov_r_rm(c, i);
    const uint8_t *p = mmu_access_lookup_read(c->mmu, lin, c->cpl, &c->mf);
    if (UNLIKELY(!p))
        return cpu_raise_mmu(c, &c->mf);
    memcpy(&c->r[i->reg], p, 4);
    return XR_OK;
}

static __attribute__((noinline)) int load32_memo(Cpu *c, const Insn *i, uint32_t lin,
                                                 const MmuMemo *mm)
{
    memcpy(&c->r[i->reg], mmu_access_memo(c->mmu, mm, lin, ACCESS_READ, c->cpl), 4);
    return XR_OK;
}

/* The same, threaded: each ends in the chain's next step itself (a tail
 * call from the handler, which then saves no registers). */
static __attribute__((noinline)) uintptr_t t_fault(Cpu *c, const Insn *i)
{
    return (uintptr_t)i | (unsigned)cpu_raise_mmu(c, &c->mf);
}

static __attribute__((noinline)) uintptr_t t_load32_lookup(Cpu *c, const Insn *i, uint32_t lin)
{
    if (UNLIKELY(!in_page(lin, 4)))
        return t_any(c, i);
    const uint8_t *p = mmu_access_lookup_read(c->mmu, lin, c->cpl, &c->mf);
    if (UNLIKELY(!p))
        return t_fault(c, i);
    memcpy(&c->r[i->reg], p, 4);
    return thr_next(c, i);
}

static __attribute__((noinline)) uintptr_t t_load32_memo(Cpu *c, const Insn *i, uint32_t lin,
                                                         const MmuMemo *mm)
{
    memcpy(&c->r[i->reg], mmu_access_memo(c->mmu, mm, lin, ACCESS_READ, c->cpl), 4);
    return thr_next(c, i);
}

/* A handler's generic fallback, threaded (nothing done yet: the handler
 * itself, through its pointer, takes the same fallback again). */
static __attribute__((noinline)) uintptr_t t_any(Cpu *c, const Insn *i)
{
    return thr_after(c, i, i->fn(c, i));
}

/* The same for a loop's last instruction, where the chain stops. */
static __attribute__((noinline)) uintptr_t tl_any(Cpu *c, const Insn *i)
{
    return (uintptr_t)i | (unsigned)i->fn(c, i);
}

/* The EA of a dword load or store; base_only: the Insn has no index
 * register (index == REG_NONE, whose r[] is 0: insn_ea without its shift
 * and add). */
static inline __attribute__((always_inline)) uint32_t ea32(const Cpu *c, const Insn *i,
                                                           bool base_only)
{
    return base_only ? c->r[i->base] + i->disp : insn_ea(c, i);
}

static inline __attribute__((always_inline)) uintptr_t load32(Cpu *c, const Insn *i,
                                                              bool base_only, bool thr)
{
    const SegCache *s = &c->seg[i->seg];
    uint32_t lin = s->base + ea32(c, i, base_only);
    if (UNLIKELY(!(s->flags & SEGF_FLAT_R)))
        return thr ? t_any(c, i) : (uintptr_t)h_mov_r_rm(c, i);
    const MmuMemo *mm = dword_memo(c->mmu, lin, ACCESS_READ, c->cpl);
    if (UNLIKELY(!mm))
        return thr ? t_load32_lookup(c, i, lin) : (uintptr_t)load32_lookup(c, i, lin);
    const uint8_t *p = mmu_access_memo_mru(c->mmu, mm, lin, ACCESS_READ, c->cpl);
    if (UNLIKELY(!p))
        return thr ? t_load32_memo(c, i, lin, mm) : (uintptr_t)load32_memo(c, i, lin, mm);
    memcpy(&c->r[i->reg], p, 4);
    return thr ? thr_next(c, i) : XR_OK;
}

static HANDLER(h_load32) { return (int)load32(c, i, false, false); }
static HANDLER(h_load32_b) { return (int)load32(c, i, true, false); }

static __attribute__((noinline)) int store32_lookup(Cpu *c, const Insn *i, uint32_t lin)
{
    if (UNLIKELY(!in_page(lin, 4)))
        return h_mov_rm_r(c, i);
    return write_at(c, mmu_access_lookup(c->mmu, lin, ACCESS_WRITE, c->cpl, &c->mf), 4, &c->mf,
                    c->r[i->reg]);
}

static __attribute__((noinline)) int store32_memo(Cpu *c, const Insn *i, uint32_t lin,
                                                  const MmuMemo *mm)
{
    uint8_t *p = mmu_access_memo(c->mmu, mm, lin, ACCESS_WRITE, c->cpl);
    memcpy(p, &c->r[i->reg], 4);
    note_code_write(c, p);
    return XR_OK;
}

static __attribute__((noinline)) uintptr_t t_store32_lookup(Cpu *c, const Insn *i, uint32_t lin)
{
    return thr_after(c, i, store32_lookup(c, i, lin));
}

static __attribute__((noinline)) uintptr_t t_store32_memo(Cpu *c, const Insn *i, uint32_t lin,
                                                          const MmuMemo *mm)
{
    return thr_after(c, i, store32_memo(c, i, lin, mm));
}

static inline __attribute__((always_inline)) uintptr_t store32(Cpu *c, const Insn *i,
                                                               bool base_only, bool thr)
{
    const SegCache *s = &c->seg[i->seg];
    uint32_t lin = s->base + ea32(c, i, base_only);
    if (UNLIKELY(!(s->flags & SEGF_FLAT_W)))
        return thr ? t_any(c, i) : (uintptr_t)h_mov_rm_r(c, i);
    const MmuMemo *mm = dword_memo(c->mmu, lin, ACCESS_WRITE, c->cpl);
    if (UNLIKELY(!mm))
        return thr ? t_store32_lookup(c, i, lin) : (uintptr_t)store32_lookup(c, i, lin);
    uint8_t *p = mmu_access_memo_mru(c->mmu, mm, lin, ACCESS_WRITE, c->cpl);
    if (UNLIKELY(!p))
        return thr ? t_store32_memo(c, i, lin, mm) : (uintptr_t)store32_memo(c, i, lin, mm);
    memcpy(p, &c->r[i->reg], 4);
    if (!thr) {
        note_code_write(c, p);
        return XR_OK;
    }
    /* note_code_write, and the stop it means (the rest of thr_after). */
    if (UNLIKELY((uintptr_t)p - (uintptr_t)c->fetch_host < PAGE_SIZE)) {
        c->block_exit |= BX_OTHER;
        return (uintptr_t)i;
    }
    return thr_next(c, i);
}

static HANDLER(h_store32) { return (int)store32(c, i, false, false); }
static HANDLER(h_store32_b) { return (int)store32(c, i, true, false); }

/* The host address of a dword data reference at seg:off when it needs no
 * call at all: a flat segment, the dword inside a page, a memo, and the
 * line in the MRU way of its L1 set (mmu_access_memo_mru: counted as
 * mem_read/mem_write count it). NULL: nothing done. */
static inline uint8_t *dword_hit(Cpu *c, int seg, uint32_t off, Access access)
{
    const SegCache *s = &c->seg[seg];
    uint32_t lin = s->base + off;
    unsigned need = access == ACCESS_WRITE ? SEGF_FLAT_W : SEGF_FLAT_R;
    if (UNLIKELY(!(s->flags & need)))
        return NULL;
    const MmuMemo *mm = dword_memo(c->mmu, lin, access, c->cpl);
    if (UNLIKELY(!mm))
        return NULL;
    return mmu_access_memo_mru(c->mmu, mm, lin, access, c->cpl);
}

/* 50+r PUSH r32, 58+r POP r32 (the stack pointer is 32 bits, as in
 * stack_push/stack_read): PUSH ESP stores the value before the decrement,
 * POP ESP keeps the value popped. The hit that calls nothing here; else
 * the generic handler (a tail call, nothing done yet). */
static HANDLER(h_push_r32)
{
    uint32_t esp = c->r[REG_ESP] - 4;
    uint8_t *p = dword_hit(c, SEG_SS, esp, ACCESS_WRITE);
    if (UNLIKELY(!p))
        return h_push_r(c, i);
    memcpy(p, &c->r[i->reg], 4);
    note_code_write(c, p);
    c->r[REG_ESP] = esp;
    return XR_OK;
}

static HANDLER(h_pop_r32)
{
    const uint8_t *p = dword_hit(c, SEG_SS, c->r[REG_ESP], ACCESS_READ);
    if (UNLIKELY(!p))
        return h_pop_r(c, i);
    uint32_t v;
    memcpy(&v, p, 4);
    c->r[REG_ESP] += 4;
    c->r[i->reg] = v;
    return XR_OK;
}

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

/* 03 /r etc. with a memory source: the hit that calls nothing here; else
 * the generic handler (a tail call, nothing done yet). */
static inline __attribute__((always_inline)) int alu_r32_m32(Cpu *c, const Insn *i,
                                                              bool base_only)
{
    const uint8_t *p = dword_hit(c, i->seg, ea32(c, i, base_only), ACCESS_READ);
    if (UNLIKELY(!p))
        return h_alu_r_rm(c, i);
    uint32_t b;
    memcpy(&b, p, 4);
    uint32_t r = alu32(c, i->op, c->r[i->reg], b);
    if (i->op != 7)
        c->r[i->reg] = r;
    return XR_OK;
}

static HANDLER(h_alu_r32_m32) { return alu_r32_m32(c, i, false); }
static HANDLER(h_alu_r32_m32_b) { return alu_r32_m32(c, i, true); }

/* CF of the lazy state for the producers cpu_cf inlines; -1 for the
 * others (flags_cf, out of line). Kept apart so that INC/DEC's fast path
 * calls nothing (no register saves). */
static inline int cf_inline(const Cpu *c)
{
    /* ADD and SUB/CMP (the commonest producers before an INC/DEC, as a
     * loop's counter steps after its pointer) before the switch's table
     * jump. */
    if (c->cc.op == CC_ADD)
        return c->cc.res < c->cc.a;
    if (c->cc.op == CC_SUB)
        return c->cc.a < c->cc.b;
    switch (c->cc.op) {
    case CC_EAGER: return (c->eflags & EFLAGS_CF) != 0;
    case CC_LOGIC: return 0;
    case CC_INC:
    case CC_DEC: return c->cc.c != 0;
    default: return -1;
    }
}

static __attribute__((noinline)) int incdec32_slow(Cpu *c, const Insn *i, bool dec)
{
    uint32_t a = c->r[i->reg], cf = cpu_cf(c), r = dec ? a - 1 : a + 1;
    c->r[i->reg] = r;
    flags_lazy(c, dec ? CC_DEC : CC_INC, 4, r, a, 1, cf);
    return XR_OK;
}

static __attribute__((noinline)) uintptr_t t_incdec32_slow(Cpu *c, const Insn *i, bool dec)
{
    (void)incdec32_slow(c, i, dec);
    return thr_next(c, i);
}

static inline __attribute__((always_inline)) uintptr_t incdec32(Cpu *c, const Insn *i, bool dec,
                                                                bool thr)
{
    int cf = cf_inline(c);
    if (UNLIKELY(cf < 0))
        return thr ? t_incdec32_slow(c, i, dec) : (uintptr_t)incdec32_slow(c, i, dec);
    uint32_t a = c->r[i->reg], r = dec ? a - 1 : a + 1;
    c->r[i->reg] = r;
    lazy32(c, dec ? CC_DEC : CC_INC, r, a, 1, (uint32_t)cf);
    return thr ? thr_next(c, i) : XR_OK;
}

static HANDLER(h_inc_r32) { return (int)incdec32(c, i, false, false); }
static HANDLER(h_dec_r32) { return (int)incdec32(c, i, true, false); }

/* One handler per ALU operation (ADD, OR, AND, SUB, XOR, CMP; ADC and SBB
 * stay with the generic ones above), so that the operation is a constant:
 * no switch, no call, no register saves. Each does what alu32 does for its
 * op, which is what the generic handler does for 32-bit operands. */
#define ALU_OPS(X) X(0, add) X(1, or) X(4, and) X(5, sub) X(6, xor) X(7, cmp)

#define ALU_RR(op, name)                                                  \
    static HANDLER(h_##name##_r32_r32)                                    \
    {                                                                     \
        uint32_t r = alu32(c, op, c->r[i->rm], c->r[i->reg]);             \
        if (op != 7)                                                      \
            c->r[i->rm] = r;                                              \
        return XR_OK;                                                     \
    }                                                                     \
    static HANDLER(h_##name##_r32_rm32)                                   \
    {                                                                     \
        uint32_t r = alu32(c, op, c->r[i->reg], c->r[i->rm]);             \
        if (op != 7)                                                      \
            c->r[i->reg] = r;                                             \
        return XR_OK;                                                     \
    }                                                                     \
    static HANDLER(h_##name##_r32_imm)                                    \
    {                                                                     \
        uint32_t r = alu32(c, op, c->r[i->rm], i->imm);                   \
        if (op != 7)                                                      \
            c->r[i->rm] = r;                                              \
        return XR_OK;                                                     \
    }
ALU_OPS(ALU_RR)

/* TEST r32, r32 (85 /r with two registers). */
static HANDLER(h_test_r32_r32)
{
    uint32_t a = c->r[i->rm], b = c->r[i->reg];
    lazy32(c, CC_LOGIC, a & b, a, b, 0);
    return XR_OK;
}

/* Condition cond as cpu_cond answers it inline (ZF of any lazy state; B/AE
 * and BE/A after CMP/SUB): 0 or 1, or -1 for the others (flags_cond, out of
 * line), so that the handlers below call nothing on their fast path. */
static inline int cond_inline(const Cpu *c, unsigned cond)
{
    if ((cond >> 1) == 2 && c->cc.op != CC_EAGER)
        return (c->cc.res == 0) ^ (cond & 1);
    if (c->cc.op == CC_SUB && ((cond >> 1) == 1 || (cond >> 1) == 3))
        return ((cond >> 1) == 1 ? c->cc.a < c->cc.b : c->cc.a <= c->cc.b) ^ (cond & 1);
    return -1;
}

/* The rest of h_jcc once the condition is known (take): charge the
 * not-taken cost, or jump with a flat CS; anything else goes to h_jcc
 * itself (a tail call, nothing done yet). thr: a loop's closing jump
 * threaded (InsnTFn): the chain stops here, and taken it jumps back to
 * the loop's start (block_build's loop_len: its target), with CS flat
 * (run_block runs blocks only then, and no pure handler changes CS), so
 * it returns THR_BACK (run_loop charges the branch, and does cpu_jump's
 * part if the run leaves there). */
static inline __attribute__((always_inline)) uintptr_t jcc32_take(Cpu *c, const Insn *i, bool take,
                                                                  bool thr)
{
    if (!take) {
        cpu_charge(c, c->cost.alu);
        return thr ? (uintptr_t)i : XR_OK;
    }
    if (thr)
        return (uintptr_t)i | THR_BACK;
    if (UNLIKELY(!(c->seg[SEG_CS].flags & SEGF_FLAT_R)))
        return h_jcc(c, i);
    cpu_jump(c, c->next_eip + i->imm);
    cpu_charge(c, c->cost.branch);
    return XR_OK;
}

/* Jcc with a 32-bit operand and a flat CS, as h_jcc does it; anything
 * else goes to h_jcc itself (a tail call, nothing done yet). */
static inline __attribute__((always_inline)) uintptr_t jcc32(Cpu *c, const Insn *i, bool thr)
{
    /* cond_inline's cases written out: the -1 test costs the loop-closing
     * branch of every hot loop an instruction or more. */
    unsigned cond = i->op;
    bool take;
    if ((cond >> 1) == 2 && c->cc.op != CC_EAGER)
        take = (c->cc.res == 0) ^ (cond & 1);
    else if (c->cc.op == CC_SUB && ((cond >> 1) == 1 || (cond >> 1) == 3))
        take = ((cond >> 1) == 1 ? c->cc.a < c->cc.b : c->cc.a <= c->cc.b) ^ (cond & 1);
    else
        return thr ? tl_any(c, i) : (uintptr_t)h_jcc(c, i);
    return jcc32_take(c, i, take, thr);
}

/* JE and JNE (cond 4, 5), jcc32's first case with the condition a
 * constant. */
static inline __attribute__((always_inline)) uintptr_t jz32(Cpu *c, const Insn *i, bool ne,
                                                            bool thr)
{
    if (UNLIKELY(c->cc.op == CC_EAGER))
        return thr ? tl_any(c, i) : (uintptr_t)h_jcc(c, i);
    return jcc32_take(c, i, (c->cc.res == 0) ^ ne, thr);
}

static HANDLER(h_jcc32) { return (int)jcc32(c, i, false); }
static HANDLER(h_je32) { return (int)jz32(c, i, false, false); }
static HANDLER(h_jne32) { return (int)jz32(c, i, true, false); }

/* CMOVcc r32, r32, as h_cmov does it (the source is a register: nothing
 * to read from memory); other conditions go to h_cmov. */
static HANDLER(h_cmov_r32_r32)
{
    int take = cond_inline(c, i->op);
    if (UNLIKELY(take < 0))
        return h_cmov(c, i);
    if (take)
        c->r[i->reg] = c->r[i->rm];
    return XR_OK;
}

/* ---- threaded variants (cpu_thread_fn) ---- */

/* A register instruction: always XR_OK, block_exit untouched. */
#define THR_REG(h)                                                        \
    static uintptr_t t_##h(Cpu *c, const Insn *i)                         \
    {                                                                     \
        (void)h(c, i);                                                    \
        return thr_next(c, i);                                            \
    }
/* Any other pure handler. */
#define THR_ANY(h)                                                        \
    static uintptr_t t_##h(Cpu *c, const Insn *i) { return thr_after(c, i, h(c, i)); }

THR_REG(h_mov_rm32_r32) THR_REG(h_mov_r32_rm32) THR_REG(h_mov_r32_imm)
THR_REG(h_alu_r32_r32) THR_REG(h_alu_r32_rm32) THR_REG(h_alu_r32_imm)
THR_REG(h_test_r32_r32)
THR_ANY(h_cmov_r32_r32) THR_ANY(h_push_r32) THR_ANY(h_pop_r32)
THR_ANY(h_alu_r32_m32) THR_ANY(h_alu_r32_m32_b)
static uintptr_t t_h_inc_r32(Cpu *c, const Insn *i) { return incdec32(c, i, false, true); }
static uintptr_t t_h_dec_r32(Cpu *c, const Insn *i) { return incdec32(c, i, true, true); }

/* INC/DEC r32 in a threaded chain right after one of the ALU handlers
 * above whose lazy flags' kind is a constant (prev: CC_ADD, CC_SUB or
 * CC_LOGIC): the chain calls it only from that handler's, which always
 * completes and leaves cc.op so (a loop's pass, cpu_thread_fn), so CF is
 * found as cf_inline would, without testing cc.op. */
static inline __attribute__((always_inline)) uintptr_t incdec32_after(Cpu *c, const Insn *i,
                                                                      bool dec, CcOp prev)
{
    uint32_t cf = prev == CC_ADD   ? c->cc.res < c->cc.a
                  : prev == CC_SUB ? c->cc.a < c->cc.b
                                   : 0;
    uint32_t a = c->r[i->reg], r = dec ? a - 1 : a + 1;
    c->r[i->reg] = r;
    lazy32(c, dec ? CC_DEC : CC_INC, r, a, 1, cf);
    return thr_next(c, i);
}
#define INCDEC_AFTER(prev, name)                                                          \
    static uintptr_t t_h_inc_r32_##name(Cpu *c, const Insn *i)                            \
    {                                                                                     \
        return incdec32_after(c, i, false, prev);                                         \
    }                                                                                     \
    static uintptr_t t_h_dec_r32_##name(Cpu *c, const Insn *i)                            \
    {                                                                                     \
        return incdec32_after(c, i, true, prev);                                          \
    }
INCDEC_AFTER(CC_ADD, add) INCDEC_AFTER(CC_SUB, sub) INCDEC_AFTER(CC_LOGIC, logic)

/* The lazy flags' kind that fn, one of the handlers above that always
 * complete, always leaves; CC_EAGER stands for "not one of them". */
static CcOp flags_kind_of(InsnFn fn)
{
    if (fn == h_add_r32_r32 || fn == h_add_r32_rm32 || fn == h_add_r32_imm)
        return CC_ADD;
    if (fn == h_sub_r32_r32 || fn == h_sub_r32_rm32 || fn == h_sub_r32_imm ||
        fn == h_cmp_r32_r32 || fn == h_cmp_r32_rm32 || fn == h_cmp_r32_imm)
        return CC_SUB;
    if (fn == h_or_r32_r32 || fn == h_or_r32_rm32 || fn == h_or_r32_imm ||
        fn == h_and_r32_r32 || fn == h_and_r32_rm32 || fn == h_and_r32_imm ||
        fn == h_xor_r32_r32 || fn == h_xor_r32_rm32 || fn == h_xor_r32_imm ||
        fn == h_test_r32_r32)
        return CC_LOGIC;
    return CC_EAGER;
}
static uintptr_t tl_h_jcc32(Cpu *c, const Insn *i) { return jcc32(c, i, true); }
static uintptr_t tl_h_je32(Cpu *c, const Insn *i) { return jz32(c, i, false, true); }
static uintptr_t tl_h_jne32(Cpu *c, const Insn *i) { return jz32(c, i, true, true); }
#define ALU_THR(op, name)                                                 \
    THR_REG(h_##name##_r32_r32) THR_REG(h_##name##_r32_rm32) THR_REG(h_##name##_r32_imm)
ALU_OPS(ALU_THR)

static uintptr_t t_h_load32(Cpu *c, const Insn *i) { return load32(c, i, false, true); }
static uintptr_t t_h_load32_b(Cpu *c, const Insn *i) { return load32(c, i, true, true); }
static uintptr_t t_h_store32(Cpu *c, const Insn *i) { return store32(c, i, false, true); }
static uintptr_t t_h_store32_b(Cpu *c, const Insn *i) { return store32(c, i, true, true); }


InsnTFn cpu_thread_fn(InsnFn fn, bool last, InsnFn prev)
{
    if (!last && prev && (fn == h_inc_r32 || fn == h_dec_r32)) {
        bool dec = fn == h_dec_r32;
        switch (flags_kind_of(prev)) {
        case CC_ADD: return dec ? t_h_dec_r32_add : t_h_inc_r32_add;
        case CC_SUB: return dec ? t_h_dec_r32_sub : t_h_inc_r32_sub;
        case CC_LOGIC: return dec ? t_h_dec_r32_logic : t_h_inc_r32_logic;
        default: break;
        }
    }
    static const struct {
        InsnFn fn;
        InsnTFn t;
    } thr[] = {
#define T(h) { h, t_##h },
        T(h_mov_rm32_r32) T(h_mov_r32_rm32) T(h_mov_r32_imm)
        T(h_alu_r32_r32) T(h_alu_r32_rm32) T(h_alu_r32_imm)
        T(h_inc_r32) T(h_dec_r32) T(h_test_r32_r32)
        T(h_cmov_r32_r32) T(h_push_r32) T(h_pop_r32)
        T(h_alu_r32_m32) T(h_alu_r32_m32_b)
        T(h_load32) T(h_load32_b) T(h_store32) T(h_store32_b)
#define ALU_T(op, name) T(h_##name##_r32_r32) T(h_##name##_r32_rm32) T(h_##name##_r32_imm)
        ALU_OPS(ALU_T)
#undef ALU_T
#undef T
    };
    if (last)
        return fn == h_jne32 ? tl_h_jne32 : fn == h_je32 ? tl_h_je32
               : fn == h_jcc32 ? tl_h_jcc32 : tl_any;
    for (size_t k = 0; k < G_N_ELEMENTS(thr); k++)
        if (fn == thr[k].fn)
            return thr[k].t;
    return t_any;
}

static const InsnFn alu_rr[8] = {
    [0] = h_add_r32_r32, [1] = h_or_r32_r32, [4] = h_and_r32_r32,
    [5] = h_sub_r32_r32, [6] = h_xor_r32_r32, [7] = h_cmp_r32_r32,
};
static const InsnFn alu_rrm[8] = {
    [0] = h_add_r32_rm32, [1] = h_or_r32_rm32, [4] = h_and_r32_rm32,
    [5] = h_sub_r32_rm32, [6] = h_xor_r32_rm32, [7] = h_cmp_r32_rm32,
};
static const InsnFn alu_ri[8] = {
    [0] = h_add_r32_imm, [1] = h_or_r32_imm, [4] = h_and_r32_imm,
    [5] = h_sub_r32_imm, [6] = h_xor_r32_imm, [7] = h_cmp_r32_imm,
};

/* The specialised handler of op from table t, or generic if it has none. */
static InsnFn alu_pick(const InsnFn t[8], unsigned op, InsnFn generic)
{
    return op < 8 && t[op] ? t[op] : generic;
}

void cpu_specialize(Insn *d)
{
    InsnFn f = d->fn;
    if (f == h_jcc && d->size == 4) {
        d->fn = d->op == 4 ? h_je32 : d->op == 5 ? h_jne32 : h_jcc32;
        return;
    }
    if (d->size != 4)
        return;
    if (f == h_mov_rm_r)
        d->fn = !d->mem ? h_mov_rm32_r32 : d->index == REG_NONE ? h_store32_b : h_store32;
    else if (f == h_mov_r_rm)
        d->fn = !d->mem ? h_mov_r32_rm32 : d->index == REG_NONE ? h_load32_b : h_load32;
    else if (f == h_mov_r_imm)
        d->fn = h_mov_r32_imm;
    else if (f == h_alu_rm_r && !d->mem)
        d->fn = alu_pick(alu_rr, d->op, h_alu_r32_r32);
    else if (f == h_alu_r_rm)
        d->fn = !d->mem ? alu_pick(alu_rrm, d->op, h_alu_r32_rm32)
                : d->index == REG_NONE ? h_alu_r32_m32_b : h_alu_r32_m32;
    else if (f == h_alu_rm_imm && !d->mem)
        d->fn = alu_pick(alu_ri, d->op, h_alu_r32_imm);
    else if (f == h_test_rm_r && !d->mem)
        d->fn = h_test_r32_r32;
    else if (f == h_cmov && !d->mem)
        d->fn = h_cmov_r32_r32;
    else if (f == h_push_r)
        d->fn = h_push_r32;
    else if (f == h_pop_r)
        d->fn = h_pop_r32;
    else if (f == h_inc_r)
        d->fn = h_inc_r32;
    else if (f == h_dec_r)
        d->fn = h_dec_r32;
}

bool cpu_fast_handler(InsnFn fn)
{
    static const InsnFn fast[] = {
        h_mov_rm32_r32, h_mov_r32_rm32, h_mov_r32_imm, h_load32, h_store32, h_load32_b,
        h_store32_b,
        h_alu_r32_r32, h_alu_r32_rm32, h_alu_r32_imm, h_alu_r32_m32, h_alu_r32_m32_b,
        h_inc_r32, h_dec_r32,
        h_test_r32_r32, h_jcc32, h_je32, h_jne32, h_cmov_r32_r32, h_push_r32, h_pop_r32,
    };
    for (size_t k = 0; k < G_N_ELEMENTS(fast); k++)
        if (fn == fast[k])
            return true;
    for (unsigned op = 0; op < 8; op++)
        if (fn && (fn == alu_rr[op] || fn == alu_rrm[op] || fn == alu_ri[op]))
            return true;
    return false;
}

bool cpu_fast_jcc(InsnFn fn)
{
    return fn == h_jcc32 || fn == h_je32 || fn == h_jne32;   /* the others do not touch it */
}
