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
 *     jump sets BX_JUMP in block_exit), faults, asks to stop, or leaves an
 *     event pending ends the run; REP instructions between chunks too;
 *   - breakpoints: the run leaves the block before an instruction at a
 *     breakpoint (cpu_at_breakpoint, as the run loop checks): where the
 *     first such instruction is depends only on the block's bytes and the
 *     breakpoint set, so it is found once for both (bp_limit, bp_gen);
 *   - retire accounting in bulk: step() moves EIP and adds 1 to insns
 *     (and insns_user at CPL 3) and the Insn's cost to cycles after each
 *     instruction. Here they are added for a run of instructions at once
 *     (commit(), from the block's prefix sums of costs) and EIP is stored
 *     once. Nothing can tell while the run stays among "pure" handlers
 *     (block_pure: they read none of EIP, insns, insns_user, cycles, call
 *     no hook, port or event code, and only add to cycles, which
 *     commutes); before any other handler, before a fault is delivered,
 *     and whenever the run leaves the block, everything is committed, so
 *     whatever can observe the counters sees step()'s values;
 *   - from block to block: cpu_run_block enters the next block itself only
 *     where cpu_run's loop would go straight to it (nothing pending, no
 *     breakpoint at EIP, budget left), after the same fetch reference;
 *   - loops: a block whose first instructions (none making a fetch
 *     reference of its own or needing a commit) end in a relative jump
 *     back to its start goes round in run_loop from its second pass, with
 *     Cpu.next_eip set once a pass (only that jump reads it) and the
 *     passes' retire counts committed whenever the run leaves, under the
 *     rules above, and a pass's instructions chained by tail calls (see
 *     run_loop). */
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

void cpu_blocks_forget_bp(Cpu *c)
{
    for (unsigned k = 0; c->blocks && k < (1u << BLOCK_BITS); k++)
        c->blocks[k].bp_gen = 0;
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

/* Handlers that may run with the retire counters and EIP not yet
 * committed (see the top of this file): each reads none of c->eip,
 * c->insns, c->insns_user, c->cycles (it may add to cycles), calls no
 * hook, port, event or far-transfer code (cpu_emit, cpu_port_*, pm_*),
 * and returns only XR_OK or XR_FAULT (faults are delivered by the block
 * run, after it commits). Checked by reading each one (exec_alu.c,
 * exec_data.c, exec_control.c, exec_fast.c); anything not listed is
 * committed before, which is always exact. */
static bool block_pure(InsnFn fn)
{
    static const InsnFn pure[] = {
        h_alu_rm_r, h_alu_r_rm, h_alu_rm_imm, h_test_rm_r, h_test_rm_imm,
        h_inc_rm, h_dec_rm, h_inc_r, h_dec_r, h_not_rm, h_neg_rm,
        h_shift_imm, h_shift_cl, h_imul_r_rm, h_imul_r_rm_imm, h_mul_rm, h_imul1_rm,
        h_cbw, h_cwd, h_bswap, h_xadd, h_cmpxchg, h_bt_rm_r, h_bt_rm_imm,
        h_clc, h_stc, h_cmc, h_cld, h_std,
        h_mov_rm_r, h_mov_r_rm, h_mov_rm_imm, h_mov_r_imm, h_mov_load_moffs,
        h_mov_store_moffs, h_movzx, h_movsx, h_lea, h_xchg_rm_r, h_xchg_eax,
        h_push_r, h_pop_r, h_push_imm, h_push_rm, h_pop_rm, h_push_sreg,
        h_pushfd, h_leave, h_cmov, h_setcc, h_nop, h_mov_rm_sreg,
        h_jmp_rel, h_jcc, h_call_rel, h_ret, h_jmp_rm, h_call_rm, h_loop,
    };
    for (size_t k = 0; k < G_N_ELEMENTS(pure); k++)
        if (fn == pure[k])
            return true;
    return cpu_fast_handler(fn);
}

/* Pure handlers that read Cpu.next_eip (the relative jumps and calls,
 * which add their offset to it, and the calls, which push it; h_jcc32
 * falls back to h_jcc): every other pure handler neither reads nor
 * writes it but through cpu_jump (BX_JUMP). A handler added to block_pure
 * that reads it must be listed here (run_loop sets it once per pass, for
 * the loop's last instruction). */
static bool reads_next_eip(InsnFn fn)
{
    return fn == h_jmp_rel || fn == h_jcc || fn == h_loop || fn == h_call_rel ||
           fn == h_call_rm || cpu_fast_jcc(fn);
}

/* Decode the block at eip (physical pa, in the page at host). */
static bool block_build(Cpu *c, Block *b, uint64_t pa, uint32_t eip, const uint8_t *host)
{
    uint32_t off0 = (c->seg[SEG_CS].base + eip) & (PAGE_SIZE - 1);
    unsigned n = 0, len = 0;
    uint32_t cost = 0;
    bool sync_any = false, loop_open = true;
    unsigned loop_len = 0;
    /* Every instruction must start (and, by cpu_decode_quiet, end) in
     * the block's page: one that starts in the next page is not in host. */
    while (n < BLOCK_INSNS && off0 + len < PAGE_SIZE) {
        Insn d;
        if (cpu_decode_quiet(c, eip + len, host, &d) != XR_OK || len + d.len > BLOCK_BYTES)
            break;
        /* After instruction k - 1 falls through, fetch_blk is the block of
         * its last byte: the run made the references for its first and
         * last bytes, in that order, and every handler that changes
         * fetch_blk otherwise sets block_exit, which ends the run. So
         * whether instruction k needs a reference is known here (from the
         * physical address: fetch blocks never cross a page, so its low
         * bits are the linear address's). */
        uint32_t first = (uint32_t)pa + len, last = first + d.len - 1;
        bool newfetch = n > 0 && ((first ^ (first - 1)) >= FETCH_BLOCK ||
                                  (last ^ first) >= FETCH_BLOCK);
        uint64_t kf = (newfetch ? KF_FETCH : 0) | (block_pure(d.fn) ? 0 : KF_SYNC);
        b->meta[n] = (uint32_t)(eip + len + d.len) | kf << 32;
        sync_any |= (kf & KF_SYNC) != 0;
        /* A loop (Block.loop_len): up to the first instruction that reads
         * next_eip, none with KF_* bits, and that one a relative jump to
         * the start (what it is taken for; run_loop is exact for any such
         * prefix). */
        if (loop_open && (kf != 0 || reads_next_eip(d.fn))) {
            loop_open = false;
            if (kf == 0 && (cpu_fast_jcc(d.fn) || d.fn == h_jcc || d.fn == h_jmp_rel ||
                            d.fn == h_loop) &&
                d.size == 4 && eip + len + d.len + d.imm == eip)
                loop_len = n + 1;
        }
        b->off[n] = (uint8_t)len;
        b->cost[n] = cost;
        b->insn[n++] = d;
        len += d.len;
        cost += d.cost;
        if (ends_block(d.fn))
            break;
    }
    if (n == 0)
        return false;
    b->off[n] = (uint8_t)len;
    b->cost[n] = cost;
    memcpy(b->bytes, host + off0, len);
    b->tag = pa + 1;
    b->eip = eip;
    b->n = (uint8_t)n;
    b->len = (uint8_t)len;
    b->bp_gen = 0;
    b->sync_any = sync_any;
    b->loop_len = (uint8_t)loop_len;
    /* A loop's passes run threaded (run_loop): each instruction's tfn goes
     * on to the next, the last one's returns; so only instruction k - 1's
     * tfn calls instruction k's (k > 0), after it completed. */
    for (unsigned k = 0; k < loop_len; k++)
        b->insn[k].tfn = cpu_thread_fn(b->insn[k].fn, k + 1 == loop_len,
                                       k ? b->insn[k - 1].fn : NULL);
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

/* The fetch references of a block's first instruction, whose bytes lin ..
 * last are in the block's page (frame): one for lin's fetch block if it is
 * not the current one, then one for last's if it is another, as single
 * steps make them (after a loop's jump back, both when the instruction
 * straddles two fetch blocks). Both are to the same page at the same CPL,
 * one right after the other, so when a memo answers the first it answers
 * the second too (a hit changes neither its key nor its slot's
 * generation): it is looked up once and counts both (mmu_memo_hit_n).
 * Otherwise, or when the page maps to another frame (the run stops after
 * the first), one by one (block_fetch). false: as block_fetch. */
static inline bool block_fetch_insn(Cpu *c, uint32_t lin, uint32_t last, uint64_t frame,
                                    bool *fault)
{
    uint32_t blk = lin & ~(FETCH_BLOCK - 1), blk_last = last & ~(FETCH_BLOCK - 1);
    if (LIKELY(blk == c->fetch_blk && blk_last == blk))
        return true;
    unsigned n = (unsigned)(blk != c->fetch_blk) + (unsigned)(blk_last != blk);
    const MmuMemo *mm = mmu_memo_find(c->mmu, lin, ACCESS_EXEC, c->cpl);
    if (LIKELY(mm && mm->pa == frame)) {
        mmu_memo_hit_n(c->mmu, mm, ACCESS_EXEC, n);
        c->fetch_blk = blk_last;
        c->fetch_page = lin & ~(PAGE_SIZE - 1);
        c->fetch_pa = frame;
        c->fetch_host = mm->host;    /* never NULL: see MmuMemo */
        return true;
    }
    return block_fetch(c, lin, frame, fault) && block_fetch(c, last, frame, fault);
}

/* Retire instructions from .. to - 1 of b, which completed, at once: what
 * step() does after each of them (insns, insns_user at CPL 3, cycles), with
 * EIP at eip, the address after the last one. */
static inline __attribute__((always_inline)) void commit(Cpu *c, const Block *b, unsigned from,
                                                         unsigned to, bool user, uint32_t eip)
{
    c->eip = eip;
    c->insns += to - from;
    if (user)
        c->insns_user += to - from;
    c->cycles += b->cost[to] - b->cost[from];
}

/* commit(c, b, 0, to, user, eip) with acc instructions costing acc_cyc
 * that earlier passes round a loop retired (run_loop). */
static inline __attribute__((always_inline)) void commit_acc(Cpu *c, const Block *b, unsigned to,
                                                             bool user, uint32_t eip, uint64_t acc,
                                                             uint64_t acc_cyc)
{
    uint64_t n = to + acc;
    c->eip = eip;
    c->insns += n;
    if (user)
        c->insns_user += n;
    c->cycles += b->cost[to] - b->cost[0] + acc_cyc;
}

/* Retire one instruction as step() does, its cost read beforehand. */
static inline void retire_one(Cpu *c, uint16_t cost, bool user)
{
    c->eip = c->next_eip;
    c->insns++;
    c->insns_user += user;
    c->cycles += cost;
}

/* How many instructions of b the run may take before one at a breakpoint
 * (the first one is the run loop's to check): found once per block and
 * breakpoint set (bp_gen), since both change far less often than blocks
 * are entered. */
static inline unsigned bp_limit(const Cpu *c, Block *b)
{
    if (LIKELY(b->bp_gen == c->bp_gen))
        return b->bp_lim;
    unsigned k = 1;
    while (k < b->n && !cpu_at_breakpoint(c, b->eip + b->off[k]))
        k++;
    b->bp_lim = (uint8_t)k;
    b->bp_first = cpu_at_breakpoint(c, b->eip);
    b->bp_gen = c->bp_gen;
    return k;
}

/* A loop (Block.loop_len: instructions 0 .. L - 1 with no KF_* bits, none
 * but the last reading next_eip, the last a relative jump back to the
 * start), run from its first instruction where run_block would go round
 * again (everything committed, EIP at the start, nothing pending, its
 * fetch references not made yet), at most MIN(lim, L, budget)
 * instructions a pass: run_block's run, with less per instruction and per
 * pass round the loop. (Not inline, and not from a block's entry:
 * either cost the run of every other block a few instructions, and a
 * 4G/4G null syscall 30 to 145.)
 *   - next_eip is set once per pass, to the EIP after instruction L - 1,
 *     the only one that reads it (reads_next_eip); the others neither
 *     read it nor write it but through cpu_jump, which sets BX_JUMP. So
 *     after instruction k the next EIP is next_eip if BX_JUMP is set,
 *     else the one after k, and that is what next_eip is left holding
 *     whenever the run leaves (single steps leave it there; the caller of
 *     a nested cpu_run retires to it: step() in cpu.c);
 *   - so each instruction is its call and one test of its result and
 *     block_exit; and a whole pass (the budget allows it, no breakpoint
 *     inside) is one call: block_build gave the loop's instructions
 *     threaded handlers (Insn.tfn, exec_fast.c), each of which makes that
 *     test itself where its instruction can fail or set block_exit and
 *     then tail-calls the next one's; the last returns, and what the
 *     chain returns (where it stopped, and the result there) is what the
 *     per-instruction loop would have stopped at;
 *   - going round again is decided as run_block's `ended:` decides it
 *     (no handler here is one that sync_any stands for), and nothing is
 *     committed between passes: the instructions and costs of whole
 *     passes are added up (acc, acc_cyc) and committed with the rest
 *     whenever the run leaves, so before a fault is delivered too; only
 *     pure handlers run in between, which read none of it and only add
 *     to cycles, which commutes;
 *   - the fetch references of the first instruction when it goes round:
 *     EIP, CPL and CS are what they were (lin0), and pure handlers change
 *     no fetch state but fetch_blk, to FETCH_NONE (cpu_jump), so
 *     block_fetch_insn would make refs (one per fetch block the first
 *     instruction reaches) and look its memo up at a slot and key that do
 *     not change while the run stays here: they are found once. If that
 *     memo does not answer, block_fetch_insn does it all, after a commit.
 *     Between whole threaded passes the memo's hits, and the taken
 *     branches' cost, are counted once, when the passes end and before
 *     anything that could read them (see the inner loop; the passes run
 *     threaded only where mmu_memo_exec_apart holds: no data reference
 *     touches the instruction memo's array, clock or counters);
 *   - when the jump falls through (or the budget or a breakpoint comes
 *     first), the run leaves after it; cpu_run_block goes on from there
 *     as the run loop would. */
static __attribute__((noinline)) uint64_t run_loop(Cpu *c, Block *b, uint64_t budget, int *rc,
                                                    unsigned lim, uint64_t frame)
{
    const uint32_t eip0 = c->eip, lin0 = c->seg[SEG_CS].base + eip0;
    const bool user = c->cpl == 3;
    const unsigned len = MIN(lim, (unsigned)b->loop_len);
    const uint32_t last0 = lin0 + b->insn[0].len - 1, blk_last0 = last0 & ~(FETCH_BLOCK - 1);
    const uint32_t end_eip = eip0 + b->off[b->loop_len];
    bool fault = false;
    if (UNLIKELY(!block_fetch_insn(c, lin0, last0, frame, &fault))) {
        if (!fault)
            return 0;
        *rc = cpu_take_exception(c);
        return 1;
    }
    const MmuMemo *memo = mmu_memo_at(c->mmu, lin0, ACCESS_EXEC);
    const uint32_t key = mmu_memo_key(lin0, c->cpl);
    const unsigned refs = 1 + ((lin0 ^ last0) >= FETCH_BLOCK);
    uint64_t done = 0, acc = 0, acc_cyc = 0;
    /* A whole pass (len instructions) unless the budget ends it first:
     * its end is found once, not per pass. */
    const Insn *const end_full = b->insn + len;
    const unsigned L = b->loop_len;
    const Insn *const first = b->insn, *const last = b->insn + L - 1;
    const uint32_t cost_pass = b->cost[L] - b->cost[0];
    /* Whole passes (no breakpoint inside the loop, budget for all of it)
     * run threaded: one call, which returns where the chain stopped. A
     * pass that ends in the jump back (THR_BACK from the last
     * instruction, or BX_JUMP from one through cpu_jump: its target is
     * eip0, the loop's start, as block_build found) goes round as the
     * general `out:` below would, with its tests decided in the inner
     * loop: the jump went to eip0, and bp_first is false (run_block does
     * not call run_loop then, and no pure handler sets breakpoints), so
     * only the budget and the memo can end the run. A THR_BACK pass leaves
     * block_exit clear and fetch_blk at blk_last0, as the round would; if
     * the run leaves after it, cpu_jump's part is made first. */
    const bool threaded = len == L;
    /* The memo's hits between whole passes are counted once, when the
     * passes end (see below), where data references cannot tell. */
    const bool apart = mmu_memo_exec_apart(c->mmu);
    for (;;) {
        const Insn *in;
        int r;
        c->next_eip = end_eip;
        if (LIKELY(threaded && apart && budget - done >= L) &&
            LIKELY(mmu_memo_answers(memo, key, ACCESS_EXEC) && memo->pa == frame)) {
            /* Passes while the budget allows whole ones (room) and the
             * memo answers: the memo is not written meanwhile (only
             * instruction fetches make or remake a memo of their side, and
             * only writes to CR0, CR3 with PCIDs, CR4 and EFER clear one,
             * none of which a pure handler makes), so its key, frame and
             * counters' places hold; and its slot's generation does not
             * move either: only a fill, invalidation or flush of the slot
             * moves it, pure handlers make no INVLPG, CR write or fetch
             * reference, and their data references fill no slot of the
             * memo's array (apart). So the memo answers after every pass
             * as it did before the first (block_fetch_insn would find it
             * and count its hit). A pass
             * that stops anywhere but at a jump back to eip0, or after
             * which the budget or the memo could end the run, leaves
             * through `out:` as the loop below does; the p passes before
             * it are added up as it would have. */
            const MmuMemo mc = *memo;
            const uint64_t room = (budget - done) / L;
            const uintptr_t back = (uintptr_t)last | THR_BACK;
            uint64_t p = 0, q = 0, nback = 0;
            uintptr_t x;
            for (;;) {
                x = first->tfn(c, first);
                if (LIKELY(x == back)) {
                    /* The jump back, its cpu_jump not made: block_exit
                     * stays clear and fetch_blk at blk_last0, where the
                     * round below would leave them. */
                    if (UNLIKELY(p + 1 == room)) {
                        cpu_jump(c, eip0);
                        x = (uintptr_t)last;
                        nback = 1;
                        break;
                    }
                } else {
                    /* A closing jump through cpu_jump (tl_any), or the
                     * pass stopped short. */
                    if (x != (uintptr_t)last || c->block_exit != BX_JUMP || p + 1 == room)
                        break;
                    c->block_exit = 0;
                    c->fetch_blk = blk_last0;
                    c->next_eip = end_eip;
                    q++;
                }
                /* next_eip is end_eip again: a THR_BACK pass does not
                 * write it (only cpu_jump does, which sets BX_JUMP, and
                 * then the pass ends anywhere but THR_BACK). */
                p++;
            }
            /* The taken branch of every pass that returned THR_BACK (p of
             * them, but the q closing jumps through cpu_jump, which charged
             * their own; and the last pass if it did), charged here, before
             * anything can read cycles (as the hits below): pure handlers
             * only add to it. */
            nback += p - q;
            c->cycles += (uint64_t)c->cost.branch * nback;
            /* block_fetch_insn's hit after each of the p passes, as below,
             * all counted here, before anything that could see them: each
             * pass, and the one that stopped the loop, made only data
             * references (pure handlers; a fault is raised, not delivered,
             * until `out:` has committed), which touch none of what the
             * hit writes but m->stats.cycles, where both only add
             * (mmu_memo_exec_apart: so the stamp and clock end where p
             * hits in a row leave them); nothing reads cycles or counters
             * meanwhile (pure handlers, no MMU hooks); and mc is the
             * memo as it was, whose slot nothing here can have moved. */
            if (p)
                mmu_memo_hit_n(c->mmu, &mc, ACCESS_EXEC, p * refs);
            done += p * L;
            acc += p * L;
            acc_cyc += p * cost_pass;
            in = (const Insn *)(x & ~(uintptr_t)7);
            r = (int)(x & 3);
            goto out;
        }
        in = b->insn;
        const Insn *end = end_full;
        if (UNLIKELY(budget - done < len))
            end = b->insn + (unsigned)(budget - done);
        for (; in != end; in++) {
            r = in->fn(c, in);
            if (UNLIKELY(r | c->block_exit))
                goto out;
        }
        const unsigned n = (unsigned)(end - b->insn);
        c->next_eip = eip0 + b->off[n];
        commit_acc(c, b, n, user, eip0 + b->off[n], acc, acc_cyc);
        return done + n;
    out:;
        const unsigned k = (unsigned)(in - b->insn);
        uint32_t eip;
        if (c->block_exit & BX_JUMP)
            eip = c->next_eip;
        else
            c->next_eip = eip = eip0 + b->off[k + 1];
        if (r != XR_OK) {
            /* XR_FAULT (a pure handler): not retired, EIP stays on it. */
            commit_acc(c, b, k, user, eip0 + b->off[k], acc, acc_cyc);
            *rc = cpu_take_exception(c);
            return done + k + 1;
        }
        done += k + 1;
        if (c->block_exit != BX_JUMP || eip != eip0 || done >= budget || b->bp_first) {
            commit_acc(c, b, k + 1, user, eip, acc, acc_cyc);
            return done;
        }
        acc += k + 1;
        acc_cyc += b->cost[k + 1];
        c->block_exit = 0;
        if (LIKELY(mmu_memo_answers(memo, key, ACCESS_EXEC) && memo->pa == frame)) {
            /* block_fetch_insn's hit, refs of them. fetch_page, fetch_pa
             * and fetch_host already hold what it would store: the
             * first pass's references (block_fetch_insn, at the top) left
             * lin0's page, frame and frame's host page (non-NULL: frames
             * never move), and nothing since has changed them. */
            mmu_memo_hit_n(c->mmu, memo, ACCESS_EXEC, refs);
            c->fetch_blk = blk_last0;
        } else {
            commit_acc(c, b, 0, user, eip0, acc, acc_cyc);
            acc = acc_cyc = 0;
            if (UNLIKELY(!block_fetch_insn(c, lin0, last0, frame, &fault))) {
                if (!fault)
                    return done;
                *rc = cpu_take_exception(c);
                return done + 1;
            }
        }
    }
}

/* Run the block at EIP (cpu_run_block's contract for one block). */
static inline __attribute__((always_inline)) uint64_t run_block(Cpu *c, uint64_t budget, int *rc)
{
    const SegCache *cs = &c->seg[SEG_CS];
    *rc = XR_OK;
    if (UNLIKELY(!(cs->flags & SEGF_FLAT_R) || !c->fetch_host))
        return 0;
    const uint32_t eip0 = c->eip, lin0 = cs->base + eip0;
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
    c->block_exit = c->pending != 0 ? BX_OTHER : 0;
    /* CPL is constant here: every instruction that changes it transfers
     * control, and the run leaves the block after it. */
    const int cpl0 = c->cpl;
    const bool user = cpl0 == 3;
    const uint32_t cs_base0 = cs->base;
    const unsigned lim = bp_limit(c, b);
    uint64_t done = 0;
    unsigned k;
    uint32_t eip;
    int r;
again:;
    unsigned n = (unsigned)MIN((uint64_t)lim, budget - done);
    /* The first instruction's fetch references, wherever its bytes leave
     * Cpu.fetch_blk; nothing is uncommitted here. (The others' references,
     * below, are made one by one: with the memo's lookup inline there too,
     * the loop's code grew and a 4G/4G null syscall cost more.) */
    {
        bool fault = false;
        if (UNLIKELY(!block_fetch_insn(c, lin0, lin0 + b->insn[0].len - 1, frame, &fault))) {
            if (!fault)
                return done;
            *rc = cpu_take_exception(c);
            return done + 1;
        }
    }
    unsigned ks = 0;                     /* first instruction not committed */
    const Insn *in = b->insn, *end = b->insn + n;
    const uint64_t *mp = b->meta;
    for (; in != end; in++, mp++) {
        uint64_t m = *mp;
        if (UNLIKELY(m >> 32)) {
            /* Fetch references of the others where block_build found they
             * must be made (KF_FETCH); a handler that is not pure sees
             * everything committed (KF_SYNC). */
            k = (unsigned)(in - b->insn);
            if ((m >> 32) & KF_FETCH) {
                uint32_t lin = lin0 + b->off[k], last = lin + in->len - 1;
                bool fault = false;
                if (!block_fetch(c, lin, frame, &fault) || !block_fetch(c, last, frame, &fault)) {
                    commit(c, b, ks, k, user, eip0 + b->off[k]);
                    if (!fault)
                        return done + k;
                    *rc = cpu_take_exception(c);
                    return done + k + 1;
                }
            }
            if ((m >> 32) & KF_SYNC) {
                /* Everything committed before it. It may have run the core
                 * itself (a port or event hook calling cpu_run), which can
                 * have rebuilt any block, b included: so when it ends the
                 * run (and every cpu_run leaves BX_OTHER set when it
                 * returns), it is retired from what was read before the
                 * call, and the run ends without reading b again (the
                 * loop-back test looks at block_exit first). */
                commit(c, b, ks, k, user, eip0 + b->off[k]);
                uint16_t cost = in->cost;
                c->next_eip = (uint32_t)m;
                r = in->fn(c, in);
                if (UNLIKELY(r != XR_OK)) {
                    if (r == XR_STOP) {
                        retire_one(c, cost, user);
                        *rc = XR_STOP;
                    } else if (r == XR_FAULT) {
                        *rc = cpu_take_exception(c);
                    }
                    return done + k + 1;     /* XR_FAULT, XR_AGAIN: not retired */
                }
                if (UNLIKELY(c->block_exit)) {
                    retire_one(c, cost, user);
                    done += k + 1;
                    eip = c->eip;
                    goto ended;
                }
                ks = k;                      /* retired with the next commit */
                continue;
            }
        }
        c->next_eip = (uint32_t)m;
        r = in->fn(c, in);
        if (UNLIKELY(r | c->block_exit)) {
            k = (unsigned)(in - b->insn);
            goto out;
        }
    }
    commit(c, b, ks, n, user, eip0 + b->off[n]);
    return done + n;
out:
    /* A handler returned XR_FAULT (a pure one: not retired, EIP stays on
     * it) or set block_exit. */
    if (r != XR_OK) {
        commit(c, b, ks, k, user, eip0 + b->off[k]);
        *rc = cpu_take_exception(c);
        return done + k + 1;
    }
    eip = c->next_eip;
    done += k + 1;
    commit(c, b, ks, k + 1, user, eip);
ended:
    /* A loop whose branch goes back to the block's start: go round again
     * without leaving, doing what the run loop would do at that boundary
     * (breakpoint, fetch reference; nothing pending, no code written, same
     * CS and CPL, so the block still holds). A jump (BX_JUMP) alone
     * allows it; anything else in block_exit ends the run: so nothing is
     * pending (cpu_pend sets BX_OTHER, and block_exit started clear with
     * nothing pending), and only a handler that is not pure (sync_any)
     * can have changed CPL or CS (far transfers, protmode.c). */
    if (c->block_exit != BX_JUMP || eip != eip0 || done >= budget ||
        (b->sync_any && (c->cpl != cpl0 || c->seg[SEG_CS].base != cs_base0)) ||
        b->bp_first)
        return done;
    c->block_exit = 0;
    /* A loop goes round in run_loop from its second pass on (so that no
     * other block pays for the test; UNLIKELY keeps the call out of the
     * way of the other blocks' code: without it a 4G/4G null syscall cost
     * 13 more). */
    if (UNLIKELY(b->loop_len))
        return done + run_loop(c, b, budget - done, rc, lim, frame);
    goto again;
}

/* Blocks one after another without going back to cpu_run between them:
 * what cpu_run's loop does at each boundary when nothing is pending (the
 * breakpoint check, the fetch reference for EIP's block, the frame's host
 * pointer, the block there), done here; anything else (an event pending,
 * a stop, the budget, a breakpoint, no block at EIP) goes back to cpu_run,
 * which finds the fetch reference made (fetch_blk matches) and goes on
 * exactly as it would have. */
uint64_t cpu_run_block(Cpu *c, uint64_t budget, int *rc)
{
    uint64_t done = run_block(c, budget, rc);
    while (LIKELY(done != 0 && *rc == XR_OK && done < budget && !c->pending) &&
           !cpu_at_breakpoint(c, c->eip)) {
        uint32_t lin = c->seg[SEG_CS].base + c->eip;
        if ((lin & ~(FETCH_BLOCK - 1)) != c->fetch_blk && cpu_fetch_ref(c, lin) != XR_OK) {
            *rc = cpu_take_exception(c);
            return done + 1;
        }
        if (UNLIKELY(!c->fetch_host))
            c->fetch_host = physmem_frame_peek(c->pm, c->fetch_pa);
        uint64_t k = run_block(c, budget - done, rc);
        if (k == 0)
            return done;
        done += k;
    }
    return done;
}
