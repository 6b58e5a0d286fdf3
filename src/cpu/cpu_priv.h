/* Private state of the i686 core, shared by the files of src/cpu (cpu.c,
 * block.c, decode.c, exec_*.c, protmode.c, ports.c, cpu_skip.c) and the
 * core's tests. Nothing outside src/cpu includes it
 * (tests/check_private_includes.py). It sees the MMU's fast path through
 * mmu/mmu_fast.h (the memos and the Mmu's counters), not the MMU's or the
 * TLB's internals.
 *
 * What the core uses from src/mmu/mmu.h, and would still like:
 *   - Data references inside a page go through mmu_access (translate, time,
 *     host pointer), crossing ones through mmu_read/mmu_write; fetches
 *     through mmu_translate(ACCESS_EXEC) plus physmem_frame_peek (a NULL
 *     frame, not the shared zero page, so that a frame allocated later by a
 *     write is noticed). The decoded cache validates against physical
 *     memory itself, so it needs no write notification from the MMU.
 *   - Data references use mmu_access_fast (mmu/mmu_fast.h): mmu_access
 *     with a memo's TLB hit (the page of the side's last first-level hit
 *     or fill, while its array is unchanged) and an L1 MRU hit inline,
 *     falling back to the out-of-line code for anything else; fetches use
 *     the ITLB's memo the same way (cpu_fetch_ref_inline). exec_fast.c's
 *     dword loads, stores, PUSH and POP take that hit in the handler
 *     itself (mmu_access_memo_mru), so that it calls nothing. Same counts
 *     and cycles (tests/cpu/test_cpu_dcache.c, bench/cpu). */
#ifndef VMSPLIT_CPU_CPU_PRIV_H
#define VMSPLIT_CPU_CPU_PRIV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/flags.h"
#include "cpu/ports.h"
#include "mmu/mmu.h"
#include "mmu/mmu_fast.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Forced inline: the core's memory steps around a memo's hit. */
#define CPU_HOT static inline __attribute__((always_inline))

/* Result of an instruction handler. */
enum {
    XR_OK = 0,                   /* retired; EIP = next_eip */
    XR_FAULT = 1,                /* an exception is pending in cpu->exc */
    XR_STOP = 2,                 /* retired, and the run must stop (stop_req) */
    XR_AGAIN = 3,                /* not finished (a REP instruction between
                                  * chunks of iterations): EIP stays on it */
};

#define TRY(e)                          \
    do {                                \
        int try_r_ = (e);               \
        if (UNLIKELY(try_r_))           \
            return try_r_;              \
    } while (0)

/* Register number meaning "no register" in an effective address; r[8] is
 * always zero, so base + index << scale needs no branch. */
#define REG_NONE 8

/* ---- decoded instructions ---- */

typedef struct Insn Insn;
typedef int (*InsnFn)(Cpu *c, const Insn *i);
/* A threaded handler (block.c's run_loop, exec_fast.c): fn's work, then,
 * unless the instruction is the loop's last, the next one's tfn as a tail
 * call; it returns where the chain stopped, as the Insn's address | the
 * XR_* result: at the last instruction, or at one that faulted or set
 * Cpu.block_exit. The last one's may instead return its address |
 * THR_BACK: it jumped back to the loop's start, and charged nothing and
 * did nothing of cpu_jump's (block_exit, next_eip, fetch_blk): run_loop
 * charges the branch (cost.branch) and does that if the run leaves
 * there. */
typedef uintptr_t (*InsnTFn)(Cpu *c, const Insn *i);
#define THR_BACK 4u              /* above every XR_*; Insns are 8-aligned */

struct Insn {
    InsnFn fn;
    InsnTFn tfn;                 /* set by block_build for a loop's
                                  * instructions only (cpu_thread_fn) */
    uint32_t disp;               /* EA displacement, moffs */
    uint32_t imm;                /* immediate (imm8 sign-extended), rel offset */
    uint16_t imm2;               /* far selector, ENTER level, RET n */
    uint8_t len;
    uint8_t size;                /* operand size: 1, 2 or 4 */
    uint8_t reg;                 /* ModRM.reg or register from the opcode */
    uint8_t rm;                  /* ModRM.rm register (when !mem) */
    uint8_t mem;                 /* operand is in memory */
    uint8_t base, index, scale;  /* EA: registers (REG_NONE) and shift */
    uint8_t seg;                 /* segment of the memory operand */
    uint8_t op;                  /* sub-operation: ALU op, condition, ... */
    uint8_t rep;                 /* 0, REP_E (F3), REP_NE (F2) */
    uint16_t cost;               /* base cycles charged when it retires */
};

/* InsnTFn's result keeps the XR_* result and THR_BACK in an Insn
 * address's low bits. */
_Static_assert(_Alignof(Insn) >= 8, "Insn addresses need three clear low bits");

#define REP_E 1
#define REP_NE 2

/* ---- segments ---- */

/* Hidden part of a segment register (SDM Vol. 3A §3.4.3). */
typedef struct {
    uint32_t base;
    uint32_t limit;              /* byte granular, after the G bit */
    uint16_t sel;
    uint8_t type;                /* descriptor type (4 bits) | S << 4 */
    uint8_t dpl;
    uint8_t flags;               /* SEGF_* */
} SegCache;

#define SEGF_USABLE (1u << 0)    /* not null */
#define SEGF_FLAT_R (1u << 1)    /* readable, expand-up, limit 4 GiB: no check */
#define SEGF_FLAT_W (1u << 2)    /* writable, expand-up, limit 4 GiB: no check */
#define SEGF_BIG (1u << 3)       /* D/B bit */

typedef struct {
    uint32_t base;
    uint16_t limit;
} TableReg;

/* ---- decoded-instruction cache (cpu.c) ---- */

typedef struct {
    uint64_t tag;                /* physical address of the first byte + 1; 0 = empty */
    uint64_t bytes[2];           /* the instruction's bytes, zero padded */
    uint64_t mask[2];            /* which of bytes[] belong to it */
    Insn insn;
} DcEntry;

#define DCACHE_BITS 15

/* ---- decoded blocks (block.c) ----
 *
 * A host-speed shortcut over the per-instruction decoded cache: the
 * straight-line run of instructions starting at one EIP in one page,
 * decoded once (without modelled references), checked against memory once
 * per entry, then executed one after another with the same fetch
 * references, counts and cycles as single steps would make
 * (tests/cpu/test_cpu_dcache.c compares every statistic with the caches
 * off). The run leaves the block at anything a straight line cannot
 * assume: a taken jump, a fault, a pending event, a fetch block that maps
 * to another frame, a write that may have touched code (Cpu.block_exit). */
#define BLOCK_INSNS 16
#define BLOCK_BYTES 96
#define BLOCK_BITS 11

typedef struct {
    uint64_t tag;                /* physical address of the first byte + 1; 0 = empty */
    uint32_t eip;                /* EIP it was decoded at (breakpoints, fetch blocks) */
    uint8_t n;                   /* instructions */
    uint8_t len;                 /* bytes */
    uint8_t bytes[BLOCK_BYTES];  /* what they were decoded from */
    uint64_t meta[BLOCK_INSNS];  /* per instruction: the EIP after it, and its
                                  * KF_* << 32 (one load in the run loop) */
    uint8_t off[BLOCK_INSNS + 1]; /* byte offset of each from eip, then len */
    uint32_t cost[BLOCK_INSNS + 1]; /* sum of the costs of those before each */
    uint32_t bp_gen;             /* Cpu.bp_gen bp_lim was found for; 0: none */
    uint8_t bp_lim;              /* instructions before the first one but the
                                  * first at a breakpoint (n if none) */
    bool bp_first;               /* the first one is at a breakpoint */
    bool sync_any;               /* some instruction has KF_SYNC */
    uint8_t loop_len;            /* 0, or a loop (block.c's run_loop): k + 1
                                  * when instruction k jumps back to the start
                                  * by a relative jump, and no instruction up to
                                  * it has KF_* bits or, before it, reads
                                  * Cpu.next_eip */
    Insn insn[BLOCK_INSNS];
} Block;

/* Block.meta >> 32 */
#define KF_FETCH (1u << 0)       /* instruction k > 0 reaches a fetch block
                                  * other than the one holding the last byte
                                  * of instruction k - 1 */
#define KF_SYNC (1u << 1)        /* its handler may observe EIP or the retire
                                  * counters: commit them first (block.c) */

/* ---- pending events ---- */

#define PEND_IRQ (1u << 0)
#define PEND_STOP (1u << 1)
#define PEND_INHIBIT (1u << 2)   /* interrupt shadow after STI / MOV SS */
#define PEND_HALT (1u << 3)      /* HLT: waiting for an interrupt */

typedef struct {
    uint16_t first;
    unsigned count;
    PortInFn in;
    PortOutFn out;
    void *user;
} PortRange;

#define FETCH_NONE 1u            /* fetch_blk value that matches no block */
#define FETCH_BLOCK CPU_FETCH_BLOCK /* bytes per modelled fetch block (cpu.h) */

/* Cpu.block_exit */
#define BX_OTHER 1u              /* leave the block (what `= true` sets) */
#define BX_JUMP 2u               /* a control transfer: leave the block, or go
                                  * round again if it went to its start */


struct Cpu {
    uint32_t r[9];               /* EAX..EDI, r[REG_NONE] == 0 */
    uint32_t eip;
    uint32_t next_eip;           /* EIP after the current instruction */
    uint32_t eflags;             /* non-arithmetic bits; all bits when eager */
    LazyFlags cc;
    int cpl;
    SegCache seg[CPU_NSEGS];

    /* Fetch state of the modelled front end. */
    uint32_t fetch_blk;          /* linear address of the last block fetched */
    uint32_t fetch_page;         /* linear page the fields below describe */
    uint64_t fetch_pa;           /* its physical frame */
    const uint8_t *fetch_host;   /* host pointer to it, NULL: reads zeros */

    Mmu *mmu;
    PhysMem *pm;
    const Preset *preset;
    CpuCosts cost;
    uint64_t cycles;             /* base costs charged by the core */
    uint64_t mmu_cycles0;        /* mmu_stats()->cycles at reset */
    uint64_t insns;
    uint64_t insns_user;         /* of which fetched at CPL 3 */

    MmuFault mf;                 /* the fault of a threaded handler's
                                  * reference (exec_fast.c): no local of its
                                  * own whose address escapes, so that it
                                  * can end in a tail call */

    /* Exception raised by the current instruction. */
    struct {
        uint8_t vec;
        bool has_err;
        uint32_t err;
    } exc;

    uint32_t pending;            /* PEND_* */
    uint8_t irq_vector;
    CpuStop stop_req;
    unsigned nbp;                /* host breakpoints (cpu_set_breakpoints) */
    uint32_t bp[CPU_MAX_BREAKPOINTS];

    uint32_t cr2;
    TableReg gdtr, idtr;
    SegCache tr;
    uint16_t ldtr;
    uint32_t sysenter_cs, sysenter_esp, sysenter_eip;
    uint64_t tsc_offset;

    bool dcache_on;
    DcEntry *dcache;
    Block *blocks;
    bool caches_used;            /* dcache/blocks may hold entries (cpu_run ran) */
    uint64_t bp_filter;          /* bit (eip & 63) of every breakpoint */
    uint32_t bp_gen;             /* moves with every cpu_set_breakpoints; never 0 */
    uint8_t block_exit;          /* BX_*: a running block must stop after this
                                  * insn (BX_OTHER: set with every PEND_*, every
                                  * fetch-block reset, every write that may be
                                  * code), or it jumped (BX_JUMP, cpu_jump), so
                                  * block.c tests one byte after each handler */

    GArray *ports;               /* PortRange */
    CpuEventHook hook;
    void *hook_user;
    CpuTripleFault triple;
};

/* ---- registers ---- */

static inline uint32_t reg_get(const Cpu *c, unsigned n, unsigned size)
{
    if (size == 4)
        return c->r[n];
    if (size == 2)
        return c->r[n] & 0xFFFF;
    return n < 4 ? c->r[n] & 0xFF : (c->r[n - 4] >> 8) & 0xFF;
}

static inline void reg_set(Cpu *c, unsigned n, unsigned size, uint32_t v)
{
    if (size == 4)
        c->r[n] = v;
    else if (size == 2)
        c->r[n] = (c->r[n] & 0xFFFF0000u) | (v & 0xFFFF);
    else if (n < 4)
        c->r[n] = (c->r[n] & 0xFFFFFF00u) | (v & 0xFF);
    else
        c->r[n - 4] = (c->r[n - 4] & 0xFFFF00FFu) | ((v & 0xFF) << 8);
}

static inline uint32_t insn_ea(const Cpu *c, const Insn *i)
{
    return c->r[i->base] + (c->r[i->index] << i->scale) + i->disp;
}

/* ---- exceptions ---- */

int cpu_raise(Cpu *c, uint8_t vec, uint32_t err);
int cpu_raise_mmu(Cpu *c, const MmuFault *f);
static inline int cpu_ud(Cpu *c) { return cpu_raise(c, VEC_UD, 0); }
static inline int cpu_gp0(Cpu *c) { return cpu_raise(c, VEC_GP, 0); }

/* ---- memory ---- */

int seg_check_slow(Cpu *c, int seg, uint32_t off, unsigned size, bool write);

/* An access inside one page goes through mmu_access (one translation, one
 * cache reference, then a host load/store); one that crosses a page
 * boundary through mmu_read/mmu_write, which split it. Both make exactly
 * the references mmu.h describes for an access of that size. */
static inline bool in_page(uint32_t lin, unsigned size)
{
    return (lin & (PAGE_SIZE - 1)) <= PAGE_SIZE - size;
}

/* After a store to host address p: a store into the page code is running
 * from, whose decoded block may hold the old bytes (self-modifying code),
 * ends the block. */
static inline void note_code_write(Cpu *c, const uint8_t *p)
{
    if (UNLIKELY((uintptr_t)p - (uintptr_t)c->fetch_host < PAGE_SIZE))
        c->block_exit |= BX_OTHER;
}

/* The end of an in-page reference of size bytes whose host address p
 * mmu_access gave (NULL: the fault in *f). */
CPU_HOT int read_at(Cpu *c, const uint8_t *p, unsigned size, const MmuFault *f, uint32_t *v)
{
    if (UNLIKELY(!p))
        return cpu_raise_mmu(c, f);
    uint32_t x = 0;
    memcpy(&x, p, size);
    *v = x;
    return XR_OK;
}

CPU_HOT int write_at(Cpu *c, uint8_t *p, unsigned size, const MmuFault *f, uint32_t v)
{
    if (UNLIKELY(!p))
        return cpu_raise_mmu(c, f);
    memcpy(p, &v, size);
    note_code_write(c, p);
    return XR_OK;
}

/* A reference of size bytes at linear address lin at privilege cpl; the
 * one memory path of instructions, descriptor tables, the TSS and
 * interrupt frames (forced inline: it is the core's hottest code). */
CPU_HOT int lin_read(Cpu *c, uint32_t lin, unsigned size, Access access, int cpl, uint32_t *v)
{
    MmuFault f;
    *v = 0;                      /* defined even on a fault (quiets -Wmaybe-uninitialized) */
    if (LIKELY(in_page(lin, size)))
        return read_at(c, mmu_access_fast(c->mmu, lin, access, cpl, &f), size, &f, v);
    if (UNLIKELY(!mmu_read(c->mmu, lin, size, access, cpl, v, &f)))
        return cpu_raise_mmu(c, &f);
    return XR_OK;
}

CPU_HOT int lin_write(Cpu *c, uint32_t lin, unsigned size, int cpl, uint32_t v)
{
    MmuFault f;
    if (LIKELY(in_page(lin, size)))
        return write_at(c, mmu_access_fast(c->mmu, lin, ACCESS_WRITE, cpl, &f), size, &f, v);
    c->block_exit |= BX_OTHER;       /* crossing a page: rare, assume code */
    if (UNLIKELY(!mmu_write(c->mmu, lin, size, cpl, v, &f)))
        return cpu_raise_mmu(c, &f);
    return XR_OK;
}

/* Data reads (access = ACCESS_READ, or ACCESS_WRITE for the read half of a
 * read-modify-write) and writes through segment seg at the current CPL. */
static inline int mem_read(Cpu *c, int seg, uint32_t off, unsigned size,
                           Access access, uint32_t *v)
{
    const SegCache *s = &c->seg[seg];
    unsigned need = access == ACCESS_WRITE ? SEGF_FLAT_W : SEGF_FLAT_R;
    *v = 0;
    if (UNLIKELY(!(s->flags & need)))
        TRY(seg_check_slow(c, seg, off, size, access == ACCESS_WRITE));
    return lin_read(c, s->base + off, size, access, c->cpl, v);
}

static inline int mem_write(Cpu *c, int seg, uint32_t off, unsigned size, uint32_t v)
{
    const SegCache *s = &c->seg[seg];
    if (UNLIKELY(!(s->flags & SEGF_FLAT_W)))
        TRY(seg_check_slow(c, seg, off, size, true));
    return lin_write(c, s->base + off, size, c->cpl, v);
}

/* Supervisor (implicit, CPL 0) references to linear addresses: descriptor
 * tables, the TSS. */
int mem_read_sys(Cpu *c, uint32_t lin, unsigned size, uint32_t *v);
int mem_write_sys(Cpu *c, uint32_t lin, unsigned size, uint32_t v);

/* The r/m operand of a ModRM instruction. */
static inline int rm_read(Cpu *c, const Insn *i, unsigned size, uint32_t *v)
{
    if (!i->mem) {
        *v = reg_get(c, i->rm, size);
        return XR_OK;
    }
    return mem_read(c, i->seg, insn_ea(c, i), size, ACCESS_READ, v);
}

static inline int rm_write(Cpu *c, const Insn *i, unsigned size, uint32_t v)
{
    if (!i->mem) {
        reg_set(c, i->rm, size, v);
        return XR_OK;
    }
    return mem_write(c, i->seg, insn_ea(c, i), size, v);
}

/* Read-modify-write: the read checks write permission (it is the read of
 * a locked-style RMW cycle; a #PF on it reports W=1). */
static inline int rm_read_rmw(Cpu *c, const Insn *i, unsigned size, uint32_t *v)
{
    if (!i->mem) {
        *v = reg_get(c, i->rm, size);
        return XR_OK;
    }
    return mem_read(c, i->seg, insn_ea(c, i), size, ACCESS_WRITE, v);
}

/* Stack (SS, 32-bit stack pointer). push/pop do not change ESP on a fault. */
static inline int stack_push(Cpu *c, unsigned size, uint32_t v)
{
    uint32_t esp = c->r[REG_ESP] - size;
    TRY(mem_write(c, SEG_SS, esp, size, v));
    c->r[REG_ESP] = esp;
    return XR_OK;
}

static inline int stack_read(Cpu *c, uint32_t off, unsigned size, uint32_t *v)
{
    return mem_read(c, SEG_SS, c->r[REG_ESP] + off, size, ACCESS_READ, v);
}

/* ---- host breakpoints (cpu_set_breakpoints) ---- */

/* Whether eip is a breakpoint: a one-word filter first (bit eip & 63 of
 * every breakpoint), so that the check costs a shift per instruction. */
static inline bool cpu_at_breakpoint(const Cpu *c, uint32_t eip)
{
    if (LIKELY(!((c->bp_filter >> (eip & 63)) & 1)))
        return false;
    for (unsigned i = 0; i < c->nbp; i++)
        if (c->bp[i] == eip)
            return true;
    return false;
}

/* ---- control flow ---- */

/* Every taken control transfer starts a new fetch block. It tells the
 * block loop (block.c) by BX_JUMP, so that the loop needs no test of EIP
 * against the fall-through (a jump to the very next instruction included:
 * its new fetch block still needs its fetch reference). */
static inline void cpu_jump(Cpu *c, uint32_t target)
{
    c->block_exit |= BX_JUMP;
    c->next_eip = target;
    c->fetch_blk = FETCH_NONE;
}

/* Forget the current fetch block without a jump (paging state changed):
 * the next instruction makes a new fetch reference, so a running block
 * must stop after this instruction. */
static inline void cpu_fetch_forget(Cpu *c)
{
    c->fetch_blk = FETCH_NONE;
    c->block_exit |= BX_OTHER;
}

/* Post an event for the next instruction boundary (PEND_*): a running
 * block stops after this instruction, so the run loop sees it. */
static inline void cpu_pend(Cpu *c, unsigned bits)
{
    c->pending |= bits;
    c->block_exit |= BX_OTHER;
}

static inline void cpu_charge(Cpu *c, unsigned cycles) { c->cycles += cycles; }

/* ---- flags (flags.h) ---- */

static inline void flags_lazy(Cpu *c, CcOp op, unsigned size, uint32_t res,
                              uint32_t a, uint32_t b, uint32_t carry)
{
    uint32_t m = size_mask(size);
    c->cc.op = (uint8_t)op;
    c->cc.size = (uint8_t)size;
    c->cc.res = res & m;
    c->cc.a = a & m;
    c->cc.b = b & m;
    c->cc.c = carry;
}

/* Full EFLAGS with the arithmetic flags materialised. */
static inline uint32_t flags_get(const Cpu *c)
{
    if (c->cc.op == CC_EAGER)
        return c->eflags;
    return (c->eflags & ~EFLAGS_ARITH) | flags_arith(&c->cc);
}

/* Make the flags eager with these arithmetic flags. */
static inline void flags_set_arith(Cpu *c, uint32_t arith)
{
    c->eflags = (c->eflags & ~EFLAGS_ARITH) | (arith & EFLAGS_ARITH);
    c->cc.op = CC_EAGER;
}

static inline bool cpu_cond(const Cpu *c, unsigned cond)
{
    /* ZF of every lazy operation is "result == 0": JE/JNE inline. */
    if ((cond >> 1) == 2 && c->cc.op != CC_EAGER)
        return (c->cc.res == 0) ^ (cond & 1);
    /* After CMP/SUB, CF is the unsigned borrow a < b (B/AE) and CF|ZF is
     * a <= b (BE/A): inline too (flags_cond's own fast path, uncalled). */
    if (c->cc.op == CC_SUB && ((cond >> 1) == 1 || (cond >> 1) == 3))
        return ((cond >> 1) == 1 ? c->cc.a < c->cc.b : c->cc.a <= c->cc.b) ^ (cond & 1);
    return flags_cond(&c->cc, c->eflags, cond);
}

static inline bool cpu_cf(const Cpu *c)
{
    /* The commonest producers inline (flags_cf's cases): a logic op clears
     * CF, ADD carries when the result wrapped below a, SUB/CMP borrows when
     * a < b, INC/DEC carry it in cc.c. */
    switch (c->cc.op) {
    case CC_EAGER: return (c->eflags & EFLAGS_CF) != 0;
    case CC_LOGIC: return false;
    case CC_ADD: return c->cc.res < c->cc.a;
    case CC_SUB: return c->cc.a < c->cc.b;
    case CC_INC:
    case CC_DEC: return c->cc.c != 0;
    default: return flags_cf(&c->cc);
    }
}

/* ---- decode.c ---- */

/* Decode the instruction at linear CS:eip, making the modelled fetch
 * references for the blocks it reaches. XR_OK or XR_FAULT. */
int cpu_decode(Cpu *c, uint32_t eip, Insn *out);
/* Make the fetch reference for the block holding linear address lin. */
int cpu_fetch_ref(Cpu *c, uint32_t lin);

/* cpu_fetch_ref with the ITLB memo's hit inline (mmu_fast.h): the same
 * hit, and the same fetch state cpu_fetch_ref leaves (the memo's frame is
 * the one physmem_frame_peek gives, and frames never move). */
static inline int cpu_fetch_ref_inline(Cpu *c, uint32_t lin)
{
    const MmuMemo *mm = mmu_memo_find(c->mmu, lin, ACCESS_EXEC, c->cpl);
    if (UNLIKELY(!mm))
        return cpu_fetch_ref(c, lin);
    mmu_memo_hit(c->mmu, mm, ACCESS_EXEC, c->cpl);
    c->fetch_blk = lin & ~(FETCH_BLOCK - 1);
    c->fetch_page = lin & ~(PAGE_SIZE - 1);
    c->fetch_pa = mm->pa;
    c->fetch_host = mm->host;
    return XR_OK;
}
/* Decode the instruction at eip from page (the host bytes of the page it
 * starts in) without modelled references: XR_OK, or nonzero when it does
 * not decode or does not end in that page (nothing to report: the caller
 * falls back to cpu_decode, which raises what the hardware would). */
int cpu_decode_quiet(Cpu *c, uint32_t eip, const uint8_t *page, Insn *out);
/* exec_fast.c: switch a decoded Insn to a specialised handler if one fits. */
void cpu_specialize(Insn *d);
/* Whether fn is one of exec_fast.c's handlers (all pure in block.c's sense). */
bool cpu_fast_handler(InsnFn fn);
/* Whether fn is one of exec_fast.c's Jcc handlers, the ones of its
 * handlers that read Cpu.next_eip. */
bool cpu_fast_jcc(InsnFn fn);
/* The threaded handler (InsnTFn) of pure handler fn: a loop's last
 * instruction's (last) returns, the others' go on to the next one. prev:
 * the handler of the instruction before it in the chain, whose threaded
 * handler alone calls fn's (NULL for the first: run_loop calls it), so
 * that fn's may rely on what prev's always leaves (the lazy flags'
 * kind). */
InsnTFn cpu_thread_fn(InsnFn fn, bool last, InsnFn prev);

/* ---- cpu.c / block.c ---- */

/* Deliver the exception the instruction at EIP raised (cpu.c). */
int cpu_take_exception(Cpu *c);
/* Run the decoded block at EIP, at most budget instructions (budget >= 1),
 * after the fetch reference for EIP's block was made and with nothing
 * pending. Returns the steps taken (0: no block here, nothing done; run a
 * single step) and sets *rc to XR_OK or XR_STOP. */
uint64_t cpu_run_block(Cpu *c, uint64_t budget, int *rc);
void cpu_blocks_reset(Cpu *c);
/* Make every block find its breakpoint limit again (bp_gen wrapped). */
void cpu_blocks_forget_bp(Cpu *c);

/* ---- protmode.c ---- */

int pm_load_seg(Cpu *c, int seg, uint16_t sel);
int pm_far_jump(Cpu *c, uint16_t sel, uint32_t off, bool call, unsigned size);
int pm_far_ret(Cpu *c, unsigned size, uint16_t extra);
int pm_iret(Cpu *c, unsigned size);
int pm_sysenter(Cpu *c);
int pm_sysexit(Cpu *c);
int pm_ltr(Cpu *c, uint16_t sel);
int pm_io_check(Cpu *c, uint16_t port, unsigned size);
/* Deliver vector through the IDT with the #DF / triple-fault rules.
 * kind: CPU_EV_EXCEPTION (fault: return to c->eip), CPU_EV_SOFT_INT (return
 * to c->next_eip, gate DPL checked), CPU_EV_INTERRUPT. Returns XR_OK when
 * delivered, XR_STOP on a triple fault. */
int pm_deliver(Cpu *c, uint8_t vec, bool has_err, uint32_t err, CpuEventKind kind);
void pm_set_flat(SegCache *s, uint16_t sel, bool code, int dpl);
void cpu_emit(Cpu *c, CpuEventKind kind, uint8_t vec, bool has_err, uint32_t err,
              uint32_t from_eip, int from_cpl);

/* ---- exec_system.c (shared with protmode.c / cpu.c) ---- */

int cpu_mov_to_cr(Cpu *c, int n, uint32_t v);
int cpu_port_in(Cpu *c, uint16_t port, unsigned size, uint32_t *v);
int cpu_port_out(Cpu *c, uint16_t port, unsigned size, uint32_t v);
/* Write EFLAGS from POPF/IRET with the CPL/IOPL rules; mask = the bits the
 * instruction may change. */
void cpu_write_eflags(Cpu *c, uint32_t v, uint32_t mask);

/* ---- handlers (decode.c builds Insn with these) ---- */

#define HANDLER(name) int name(Cpu *c, const Insn *i)

/* exec_alu.c */
HANDLER(h_alu_rm_r); HANDLER(h_alu_r_rm); HANDLER(h_alu_rm_imm);
HANDLER(h_test_rm_r); HANDLER(h_test_rm_imm);
HANDLER(h_inc_rm); HANDLER(h_dec_rm); HANDLER(h_inc_r); HANDLER(h_dec_r);
HANDLER(h_not_rm); HANDLER(h_neg_rm);
HANDLER(h_shift_imm); HANDLER(h_shift_cl);
HANDLER(h_mul_rm); HANDLER(h_imul1_rm); HANDLER(h_div_rm); HANDLER(h_idiv_rm);
HANDLER(h_imul_r_rm); HANDLER(h_imul_r_rm_imm);
HANDLER(h_shld_imm); HANDLER(h_shld_cl); HANDLER(h_shrd_imm); HANDLER(h_shrd_cl);
HANDLER(h_bt_rm_r); HANDLER(h_bt_rm_imm); HANDLER(h_bsf); HANDLER(h_bsr);
HANDLER(h_cbw); HANDLER(h_cwd); HANDLER(h_sahf); HANDLER(h_lahf);
HANDLER(h_cmc); HANDLER(h_clc); HANDLER(h_stc); HANDLER(h_cld); HANDLER(h_std);
HANDLER(h_xadd); HANDLER(h_cmpxchg); HANDLER(h_cmpxchg8b); HANDLER(h_bswap);
HANDLER(h_daa); HANDLER(h_das); HANDLER(h_aaa); HANDLER(h_aas);
HANDLER(h_aam); HANDLER(h_aad); HANDLER(h_salc);

/* exec_data.c */
HANDLER(h_mov_rm_r); HANDLER(h_mov_r_rm); HANDLER(h_mov_rm_imm);
HANDLER(h_mov_r_imm); HANDLER(h_mov_load_moffs); HANDLER(h_mov_store_moffs);
HANDLER(h_movzx); HANDLER(h_movsx); HANDLER(h_lea);
HANDLER(h_xchg_rm_r); HANDLER(h_xchg_eax);
HANDLER(h_push_r); HANDLER(h_pop_r); HANDLER(h_push_imm); HANDLER(h_push_rm);
HANDLER(h_pop_rm); HANDLER(h_push_sreg); HANDLER(h_pop_sreg);
HANDLER(h_pushad); HANDLER(h_popad); HANDLER(h_pushfd); HANDLER(h_popfd);
HANDLER(h_leave); HANDLER(h_enter); HANDLER(h_cmov); HANDLER(h_setcc);
HANDLER(h_mov_rm_sreg); HANDLER(h_mov_sreg_rm); HANDLER(h_lseg);
HANDLER(h_xlat); HANDLER(h_nop);

/* exec_string.c */
HANDLER(h_movs); HANDLER(h_cmps); HANDLER(h_stos); HANDLER(h_lods);
HANDLER(h_scas); HANDLER(h_ins); HANDLER(h_outs);

/* exec_control.c */
HANDLER(h_jmp_rel); HANDLER(h_jcc); HANDLER(h_call_rel); HANDLER(h_ret);
HANDLER(h_jmp_rm); HANDLER(h_call_rm); HANDLER(h_loop);
HANDLER(h_jmp_far); HANDLER(h_call_far); HANDLER(h_jmp_far_m); HANDLER(h_call_far_m);
HANDLER(h_retf); HANDLER(h_int); HANDLER(h_int3); HANDLER(h_into); HANDLER(h_iret);

/* exec_system.c */
HANDLER(h_hlt); HANDLER(h_cli); HANDLER(h_sti);
HANDLER(h_mov_r_cr); HANDLER(h_mov_cr_r);
HANDLER(h_lgdt); HANDLER(h_lidt); HANDLER(h_sgdt); HANDLER(h_sidt);
HANDLER(h_smsw); HANDLER(h_lmsw); HANDLER(h_invlpg);
HANDLER(h_ltr); HANDLER(h_str); HANDLER(h_sldt); HANDLER(h_lldt);
HANDLER(h_clts); HANDLER(h_wbinvd); HANDLER(h_cpuid); HANDLER(h_rdtsc);
HANDLER(h_rdmsr); HANDLER(h_wrmsr); HANDLER(h_sysenter); HANDLER(h_sysexit);
HANDLER(h_in); HANDLER(h_out); HANDLER(h_ud);

#endif
