/* Decoded blocks: a host-speed shortcut that changes no modelled figure
 * (see cpu_priv.h). What a single step does per instruction -- find the
 * decoded instruction by hashing its physical address and compare its
 * bytes with memory -- a block does once per entry for up to BLOCK_INSNS
 * instructions. The modelled work is untouched: the same fetch reference
 * for every 16-byte block an instruction reaches, the same handlers, the
 * same retire accounting as step() in cpu.c.
 *
 * Why the shortcut stays exact:
 *   - bytes: checked against memory at every entry; a store during the
 *     block into the page it runs from sets Cpu.block_exit (lin_write), as
 *     do writes the core does not follow to a host pointer (crossing a
 *     page, cpu_write_linear, port I/O whose hooks may write memory);
 *   - fetch references: made exactly where single steps make them (when an
 *     instruction's first or last byte is in a block other than
 *     Cpu.fetch_blk); if one lands in another frame (a remapping), the run
 *     leaves the block and the single step goes on from there without
 *     repeating the reference;
 *   - control flow: any instruction that does not fall through (a taken
 *     jump clears fetch_blk), faults, asks to stop, or leaves an event
 *     pending ends the run; REP instructions between chunks too;
 *   - breakpoints: the run leaves the block before an instruction at a
 *     breakpoint (cpu_at_breakpoint, as the run loop checks). */
#include "cpu/cpu_priv.h"

static inline Block *block_slot(Cpu *c, uint64_t pa)
{
    return &c->blocks[(pa ^ (pa >> BLOCK_BITS) ^ (pa >> 2 * BLOCK_BITS)) &
                      ((1u << BLOCK_BITS) - 1)];
}

void cpu_blocks_reset(Cpu *c)
{
    if (c->blocks)
        memset(c->blocks, 0, sizeof(Block) << BLOCK_BITS);
}

/* Instructions after which nothing falls through: decoding past them would
 * only fill the block with bytes that are not run from here. */
static bool ends_block(InsnFn fn)
{
    return fn == h_jmp_rel || fn == h_jmp_rm || fn == h_jmp_far || fn == h_jmp_far_m ||
           fn == h_call_rel || fn == h_call_rm || fn == h_call_far || fn == h_call_far_m ||
           fn == h_ret || fn == h_retf || fn == h_iret || fn == h_int || fn == h_int3 ||
           fn == h_sysenter || fn == h_sysexit || fn == h_hlt || fn == h_ud;
}

/* Decode the block at eip (physical pa, in the page at host). */
static bool block_build(Cpu *c, Block *b, uint64_t pa, uint32_t eip, const uint8_t *host)
{
    uint32_t off0 = (c->seg[SEG_CS].base + eip) & (PAGE_SIZE - 1);
    unsigned n = 0, len = 0;
    /* Every instruction must start (and, by cpu_decode_quiet, end) in
     * the block's page: one that starts in the next page is not in host. */
    while (n < BLOCK_INSNS && off0 + len < PAGE_SIZE) {
        Insn d;
        if (cpu_decode_quiet(c, eip + len, host, &d) != XR_OK || len + d.len > BLOCK_BYTES)
            break;
        /* After instruction k - 1 falls through, fetch_blk is the block of
         * its last byte: the run made the references for its first and
         * last bytes, in that order, and every handler that changes
         * fetch_blk otherwise sets FETCH_NONE, which ends the run. So
         * whether instruction k needs a reference is known here (from the
         * physical address: fetch blocks never cross a page, so its low
         * bits are the linear address's). */
        uint32_t first = (uint32_t)pa + len, last = first + d.len - 1;
        b->newfetch[n] = n > 0 && ((first ^ (first - 1)) >= FETCH_BLOCK ||
                                   (last ^ first) >= FETCH_BLOCK);
        b->insn[n++] = d;
        len += d.len;
        if (ends_block(d.fn))
            break;
    }
    if (n == 0)
        return false;
    memcpy(b->bytes, host + off0, len);
    b->tag = pa + 1;
    b->eip = eip;
    b->n = (uint8_t)n;
    b->len = (uint8_t)len;
    return true;
}

/* The fetch reference for the block holding lin, if it is not the current
 * one. false: stop running the block (a fault is pending in c->exc when
 * *fault, else the reference went to another frame). */
static inline bool block_fetch(Cpu *c, uint32_t lin, uint64_t frame, bool *fault)
{
    if (LIKELY((lin & ~(FETCH_BLOCK - 1)) == c->fetch_blk))
        return true;
    if (UNLIKELY(cpu_fetch_ref_inline(c, lin) != XR_OK)) {
        *fault = true;
        return false;
    }
    return c->fetch_pa == frame && c->fetch_host;
}

/* Retire an instruction that completed: EIP moves on, and it is counted
 * (as step() in cpu.c does). */
static inline __attribute__((always_inline)) void retire(Cpu *c, const Insn *in, uint64_t user)
{
    c->eip = c->next_eip;
    c->insns++;
    c->insns_user += user;
    c->cycles += in->cost;
}

uint64_t cpu_run_block(Cpu *c, uint64_t budget, int *rc)
{
    const SegCache *cs = &c->seg[SEG_CS];
    *rc = XR_OK;
    if (UNLIKELY(!(cs->flags & SEGF_FLAT_R) || !c->fetch_host))
        return 0;
    uint32_t eip0 = c->eip, lin0 = cs->base + eip0;
    uint32_t off0 = lin0 & (PAGE_SIZE - 1);
    uint64_t frame = c->fetch_pa, pa = frame | off0;
    const uint8_t *host = c->fetch_host;
    Block *b = block_slot(c, pa);
    if (b->tag != pa + 1 || b->eip != eip0 ||
        memcmp(b->bytes, host + off0, b->len) != 0) {
        if (!block_build(c, b, pa, eip0, host))
            return 0;
    }
    /* An event still pending at entry (an interrupt while IF=0) must be
     * looked at after every instruction, as the run loop would. */
    c->block_exit = c->pending != 0;
    /* CPL is constant here: every instruction that changes it transfers
     * control, and the run leaves the block after it. */
    const int cpl0 = c->cpl;
    const uint64_t user = cpl0 == 3;
    const uint32_t cs_base0 = cs->base;
    uint64_t done = 0;
again:;
    uint32_t eip = eip0;
    unsigned n = (unsigned)MIN((uint64_t)b->n, budget - done);
    for (unsigned k = 0; k < n; k++) {
        const Insn *in = &b->insn[k];
        if (k > 0 && cpu_at_breakpoint(c, eip))
            return done + k;
        /* Fetch references: for the first instruction wherever its bytes
         * leave Cpu.fetch_blk, for the others where block_build found
         * they must (newfetch). */
        if (UNLIKELY(k > 0 ? b->newfetch[k]
                           : (((cs_base0 + eip) & ~(FETCH_BLOCK - 1)) != c->fetch_blk ||
                              ((cs_base0 + eip + in->len - 1) & ~(FETCH_BLOCK - 1)) !=
                                  c->fetch_blk))) {
            uint32_t lin = cs_base0 + eip, last = lin + in->len - 1;
            bool fault = false;
            if (!block_fetch(c, lin, frame, &fault) || !block_fetch(c, last, frame, &fault)) {
                if (!fault)
                    return done + k;
                *rc = cpu_take_exception(c);
                return done + k + 1;
            }
        }
        uint32_t fall = eip + in->len;
        c->next_eip = fall;
        int r = in->fn(c, in);
        if (UNLIKELY(r != XR_OK)) {
            if (r != XR_STOP) {
                if (r == XR_FAULT)
                    *rc = cpu_take_exception(c);
                return done + k + 1;     /* XR_FAULT, XR_AGAIN */
            }
            retire(c, in, user);         /* XR_STOP: retired, then stop */
            *rc = XR_STOP;
            return done + k + 1;
        }
        retire(c, in, user);
        eip = c->eip;
        /* A jump, a pending event, a forgotten fetch block, a write
         * that may be code: block_exit covers all but a jump elsewhere
         * (cpu_priv.h: cpu_jump, cpu_pend, cpu_fetch_forget). */
        if (UNLIKELY((eip != fall) | c->block_exit)) {
            /* A loop whose branch goes back to the block's start: go round
             * again without leaving, doing what the run loop would do at
             * that boundary (breakpoint, fetch reference; nothing pending,
             * no code written, same CS and CPL, so the block still holds). */
            done += k + 1;
            if (eip != eip0 || c->pending || c->block_exit || c->cpl != cpl0 ||
                c->seg[SEG_CS].base != cs_base0 || done >= budget ||
                cpu_at_breakpoint(c, eip))
                return done;
            bool fault = false;
            if (!block_fetch(c, lin0, frame, &fault)) {
                if (!fault)
                    return done;         /* remapped: the run loop goes on from here */
                *rc = cpu_take_exception(c);
                return done + 1;
            }
            goto again;
        }
    }
    return done + n;
}
