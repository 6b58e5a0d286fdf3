/* The core's life cycle, register accessors and the run loop: fetch (the
 * modelled per-block references), the decoded-instruction cache, execute,
 * retire, and exception delivery. See cpu.h for the model. */
#include "cpu/cpu_priv.h"

#include <stdio.h>

/* Default costs when no preset is given: round estimates for unit tests
 * (not measurements); a preset supplies sourced figures. */
static const CpuCosts default_costs = {
    .alu = 1, .mul = 4, .div = 20, .branch = 2, .string_iter = 1,
    .mov_cr3 = 20, .mov_cr_other = 20, .invlpg = 20, .int_gate = 50,
    .iret = 30, .sysenter = 20, .sysexit = 20, .serializing = 20, .io = 20,
    .page_walk_base = 0,
};

const CpuCosts *cpu_default_costs(void) { return &default_costs; }

const char *cpu_stop_name(CpuStop s)
{
    switch (s) {
    case CPU_STOP_NONE: return "none";
    case CPU_STOP_MAX_INSNS: return "max-insns";
    case CPU_STOP_HLT: return "hlt";
    case CPU_STOP_EXIT: return "exit";
    case CPU_STOP_TRIPLE_FAULT: return "triple-fault";
    case CPU_STOP_BREAKPOINT: return "breakpoint";
    }
    return "?";
}

Cpu *cpu_new(Mmu *mmu, const Preset *preset)
{
    Cpu *c = g_new0(Cpu, 1);
    c->mmu = mmu;
    c->pm = mmu_physmem(mmu);
    c->preset = preset;
    c->cost = preset ? preset->cost : default_costs;
    c->ports = g_array_new(FALSE, FALSE, sizeof(PortRange));
    c->dcache_on = true;
    c->dcache = g_new0(DcEntry, 1u << DCACHE_BITS);
    c->blocks = g_new0(Block, 1u << BLOCK_BITS);
    c->bp_gen = 1;
    cpu_reset(c);
    return c;
}

void cpu_free(Cpu *c)
{
    if (!c)
        return;
    g_array_free(c->ports, TRUE);
    g_free(c->dcache);
    g_free(c->blocks);
    g_free(c);
}

void cpu_reset(Cpu *c)
{
    memset(c->r, 0, sizeof c->r);
    c->eip = c->next_eip = 0;
    c->eflags = EFLAGS_FIXED1;
    c->cc = (LazyFlags){ .op = CC_EAGER };
    c->cpl = 0;
    for (int s = 0; s < CPU_NSEGS; s++)
        pm_set_flat(&c->seg[s], s == SEG_CS ? 0x08 : 0x10, s == SEG_CS, 0);
    c->fetch_blk = FETCH_NONE;
    c->fetch_pa = UINT64_MAX;
    c->fetch_host = NULL;
    c->cr2 = 0;
    c->gdtr = c->idtr = (TableReg){ 0, 0 };
    c->tr = (SegCache){ .sel = 0 };
    c->ldtr = 0;
    c->sysenter_cs = c->sysenter_esp = c->sysenter_eip = 0;
    c->tsc_offset = 0;
    c->pending = 0;
    c->stop_req = CPU_STOP_NONE;
    c->cycles = 0;
    c->insns = c->insns_user = 0;
    MmuFault f;
    bool ok = mmu_write_cr0(c->mmu, CR0_PE | CR0_ET, &f);
    g_assert(ok);
    c->mmu_cycles0 = mmu_stats(c->mmu)->cycles;
    memset(&c->triple, 0, sizeof c->triple);
    /* The host-speed caches: emptied only if a run may have filled them
     * (they come zeroed from cpu_new; touching 3.7 MB of fresh pages was
     * a third of a replay's start-up). */
    if (c->caches_used) {
        memset(c->dcache, 0, sizeof(DcEntry) << DCACHE_BITS);
        cpu_blocks_reset(c);
        c->caches_used = false;
    }
}

Mmu *cpu_mmu(Cpu *c) { return c->mmu; }
const CpuCosts *cpu_costs(const Cpu *c) { return &c->cost; }
uint64_t cpu_insns(const Cpu *c) { return c->insns; }
uint64_t cpu_insns_user(const Cpu *c) { return c->insns_user; }
const CpuTripleFault *cpu_triple_fault(const Cpu *c) { return &c->triple; }

void cpu_add_work(Cpu *c, uint64_t cycles, uint64_t insns)
{
    c->cycles += cycles;
    c->insns += insns;
}

uint64_t cpu_cycles(const Cpu *c)
{
    return c->cycles + (mmu_stats(c->mmu)->cycles - c->mmu_cycles0);
}

void cpu_set_decode_cache(Cpu *c, bool on) { c->dcache_on = on; }

void cpu_request_stop(Cpu *c, CpuStop why)
{
    c->stop_req = why;
    cpu_pend(c, PEND_STOP);
}

void cpu_raise_irq(Cpu *c, uint8_t vector)
{
    c->irq_vector = vector;
    cpu_pend(c, PEND_IRQ);
}

void cpu_set_event_hook(Cpu *c, CpuEventHook hook, void *user)
{
    c->hook = hook;
    c->hook_user = user;
}

void cpu_emit(Cpu *c, CpuEventKind kind, uint8_t vec, bool has_err, uint32_t err,
              uint32_t from_eip, int from_cpl)
{
    if (!c->hook)
        return;
    CpuEvent ev = { .kind = kind, .vector = vec, .has_error = has_err,
                    .error_code = err, .cr2 = vec == VEC_PF ? c->cr2 : 0,
                    .from_eip = from_eip, .from_cpl = from_cpl, .to_cpl = c->cpl,
                    .cycles = cpu_cycles(c) };
    c->hook(c, &ev, c->hook_user);
}

/* ---- exceptions ---- */

int cpu_raise(Cpu *c, uint8_t vec, uint32_t err)
{
    c->exc.vec = vec;
    /* Vectors that push an error code (SDM Vol. 3A Table 6-1). */
    c->exc.has_err = vec == VEC_DF || (vec >= VEC_TS && vec <= VEC_PF) || vec == 17;
    c->exc.err = c->exc.has_err ? err : 0;
    return XR_FAULT;
}

int cpu_raise_mmu(Cpu *c, const MmuFault *f)
{
    if (f->vector == VEC_PF)
        c->cr2 = f->cr2;
    return cpu_raise(c, f->vector, f->error_code);
}

/* ---- registers ---- */

uint32_t cpu_reg(const Cpu *c, CpuReg r) { return c->r[r]; }
void cpu_set_reg(Cpu *c, CpuReg r, uint32_t v) { c->r[r] = v; }
uint32_t cpu_eip(const Cpu *c) { return c->eip; }
int cpu_cpl(const Cpu *c) { return c->cpl; }
uint16_t cpu_seg_selector(const Cpu *c, CpuSeg s) { return c->seg[s].sel; }
uint32_t cpu_seg_base(const Cpu *c, CpuSeg s) { return c->seg[s].base; }
uint32_t cpu_cr2(const Cpu *c) { return c->cr2; }
uint32_t cpu_eflags(const Cpu *c) { return flags_get(c); }

void cpu_set_eip(Cpu *c, uint32_t eip)
{
    c->eip = c->next_eip = eip;
    cpu_fetch_forget(c);
    c->pending &= ~PEND_HALT;
}

void cpu_set_eflags(Cpu *c, uint32_t v)
{
    c->eflags = (v & 0x003F7FD5u) | EFLAGS_FIXED1;
    c->cc.op = CC_EAGER;
}

void cpu_set_gdtr(Cpu *c, uint32_t base, uint16_t limit) { c->gdtr = (TableReg){ base, limit }; }
void cpu_set_idtr(Cpu *c, uint32_t base, uint16_t limit) { c->idtr = (TableReg){ base, limit }; }

static bool api_result(Cpu *c, int rc, uint8_t *vec, uint32_t *err)
{
    if (rc == XR_OK)
        return true;
    if (vec)
        *vec = c->exc.vec;
    if (err)
        *err = c->exc.err;
    return false;
}

/* CS is loaded as a far jump would load it at privilege level RPL (which
 * becomes the CPL): the descriptor must be a present 32-bit code segment
 * with DPL == RPL. The other registers as MOV Sreg would load them. */
bool cpu_load_segment(Cpu *c, CpuSeg s, uint16_t sel, uint8_t *vec, uint32_t *err)
{
    if (s != SEG_CS)
        return api_result(c, pm_load_seg(c, s, sel), vec, err);
    int cpl = c->cpl;
    uint32_t eip = c->eip;
    c->cpl = sel & 3;                    /* checks run at the target level */
    c->next_eip = eip;
    int rc = pm_far_jump(c, sel, eip, false, 4);
    if (rc != XR_OK)
        c->cpl = cpl;
    c->eip = c->next_eip = eip;
    return api_result(c, rc, vec, err);
}

bool cpu_write_cr(Cpu *c, int n, uint32_t v, uint8_t *vec, uint32_t *err)
{
    return api_result(c, cpu_mov_to_cr(c, n, v), vec, err);
}

bool cpu_load_tr(Cpu *c, uint16_t sel, uint8_t *vec, uint32_t *err)
{
    return api_result(c, pm_ltr(c, sel), vec, err);
}

/* The size of the next piece of a kernel copy at lin with n bytes left:
 * the largest of 4, 2, 1 that is naturally aligned at lin and fits (so a
 * piece never crosses a page), as the kernel's dword loads and stores or
 * `rep movsl` with its byte tail would touch the memory: one modelled
 * reference per piece, not one per byte. */
static unsigned linear_piece(uint32_t lin, size_t n)
{
    if (n >= 4 && (lin & 3) == 0)
        return 4;
    if (n >= 2 && (lin & 1) == 0)
        return 2;
    return 1;
}

/* memcpy of a piece, with each size a constant (a variable-size memcpy
 * of a few bytes is a byte loop or a library call). */
static inline void copy_piece(void *dst, const void *src, unsigned size)
{
    if (size == 4)
        memcpy(dst, src, 4);
    else if (size == 2)
        memcpy(dst, src, 2);
    else
        memcpy(dst, src, 1);
}

static __attribute__((noinline)) bool read_pieces(Cpu *c, uint32_t lin, uint8_t *p, size_t n)
{
    for (size_t k = 0; k < n;) {
        unsigned size = linear_piece(lin + (uint32_t)k, n - k);
        MmuFault f;
        /* A piece never crosses a page: one mmu_access, as mmu_read
         * would make for it. */
        const uint8_t *h = mmu_access_fast(c->mmu, lin + (uint32_t)k, ACCESS_READ, 0, &f);
        if (!h)
            return false;
        copy_piece(p + k, h, size);
        k += size;
    }
    return true;
}

/* Whole aligned dwords, the kernel model's commonest accesses (one
 * dword, the saved registers, the bodies' kernel data): linear_piece
 * would cut them into 4-byte pieces, each in one page, so the loop needs
 * no piece sizes. */
static inline bool whole_dwords(uint32_t lin, size_t n)
{
    return ((lin | (uint32_t)n) & 3) == 0;
}

bool cpu_read_linear(Cpu *c, uint32_t lin, void *buf, size_t n)
{
    if (LIKELY(whole_dwords(lin, n))) {
        uint8_t *p = buf;
        for (size_t k = 0; k < n; k += 4) {
            MmuFault f;
            const uint8_t *h = mmu_access_fast(c->mmu, lin + (uint32_t)k, ACCESS_READ, 0, &f);
            if (!h)
                return false;
            memcpy(p + k, h, 4);
        }
        return true;
    }
    return read_pieces(c, lin, buf, n);
}

static __attribute__((noinline)) bool write_pieces(Cpu *c, uint32_t lin, const uint8_t *p,
                                                    size_t n)
{
    for (size_t k = 0; k < n;) {
        unsigned size = linear_piece(lin + (uint32_t)k, n - k);
        MmuFault f;
        uint8_t *h = mmu_access_fast(c->mmu, lin + (uint32_t)k, ACCESS_WRITE, 0, &f);
        if (!h)
            return false;
        copy_piece(h, p + k, size);
        k += size;
    }
    return true;
}

bool cpu_write_linear(Cpu *c, uint32_t lin, const void *buf, size_t n)
{
    c->block_exit |= BX_OTHER;       /* it may be code (see block.c) */
    if (LIKELY(whole_dwords(lin, n))) {      /* as in cpu_read_linear */
        const uint8_t *p = buf;
        for (size_t k = 0; k < n; k += 4) {
            MmuFault f;
            uint8_t *h = mmu_access_fast(c->mmu, lin + (uint32_t)k, ACCESS_WRITE, 0, &f);
            if (!h)
                return false;
            memcpy(h, p + k, 4);
        }
        return true;
    }
    return write_pieces(c, lin, buf, n);
}

char *cpu_describe_triple_fault(const Cpu *c)
{
    const CpuTripleFault *t = &c->triple;
    return g_strdup_printf(
        "triple fault at EIP 0x%08x: vector %u (error 0x%x) raised vector %u (error 0x%x) "
        "during delivery, then vector %u (error 0x%x) while delivering #DF\n"
        "  EAX=%08x ECX=%08x EDX=%08x EBX=%08x ESP=%08x EBP=%08x ESI=%08x EDI=%08x\n"
        "  EFLAGS=%08x CS=%04x SS=%04x CR2=%08x CR3=%08x",
        t->eip, t->vectors[0], t->error_codes[0], t->vectors[1], t->error_codes[1],
        t->vectors[2], t->error_codes[2], t->regs[0], t->regs[1], t->regs[2], t->regs[3],
        t->regs[4], t->regs[5], t->regs[6], t->regs[7], t->eflags, t->cs, t->ss, t->cr2,
        t->cr3);
}

/* ---- the decoded-instruction cache ---- */

static inline DcEntry *dc_slot(Cpu *c, uint64_t pa)
{
    return &c->dcache[(pa ^ (pa >> DCACHE_BITS)) & ((1u << DCACHE_BITS) - 1)];
}

static inline bool dc_valid(const DcEntry *e, const uint8_t *host, uint32_t off)
{
    uint64_t w0, w1;
    if (LIKELY(off <= PAGE_SIZE - 16)) {
        memcpy(&w0, host + off, 8);
        memcpy(&w1, host + off + 8, 8);
    } else {
        uint64_t w[2] = { 0, 0 };
        memcpy(w, host + off, PAGE_SIZE - off);
        w0 = w[0];
        w1 = w[1];
    }
    return (((w0 ^ e->bytes[0]) & e->mask[0]) | ((w1 ^ e->bytes[1]) & e->mask[1])) == 0;
}

static void dc_fill(DcEntry *e, uint64_t pa, const uint8_t *host, uint32_t off, const Insn *in)
{
    uint8_t b[16] = { 0 }, m[16] = { 0 };
    memcpy(b, host + off, in->len);
    memset(m, 0xFF, in->len);
    memcpy(e->bytes, b, 16);
    memcpy(e->mask, m, 16);
    e->insn = *in;
    e->tag = pa + 1;
}

/* Fetch and decode the instruction at EIP: through the decoded cache when
 * it is on. Returns the Insn to run (in *tmp or in the cache). */
static inline int fetch_insn(Cpu *c, Insn *tmp, const Insn **out)
{
    const SegCache *cs = &c->seg[SEG_CS];
    uint32_t eip = c->eip, lin = cs->base + eip;
    if (!c->dcache_on) {
        TRY(cpu_decode(c, eip, tmp));
        *out = tmp;
        return XR_OK;
    }
    if ((lin & ~(FETCH_BLOCK - 1)) != c->fetch_blk)
        TRY(cpu_fetch_ref(c, lin));
    if (UNLIKELY(!c->fetch_host))
        c->fetch_host = physmem_frame_peek(c->pm, c->fetch_pa);
    uint32_t off = lin & (PAGE_SIZE - 1);
    uint64_t pa = c->fetch_pa | off;
    DcEntry *e = dc_slot(c, pa);
    if (LIKELY(e->tag == pa + 1 && c->fetch_host && dc_valid(e, c->fetch_host, off))) {
        uint32_t last = lin + e->insn.len - 1;
        if ((last & ~(FETCH_BLOCK - 1)) != c->fetch_blk)
            TRY(cpu_fetch_ref(c, last & ~(FETCH_BLOCK - 1)));
        if (UNLIKELY(!(cs->flags & SEGF_FLAT_R)) && eip + e->insn.len - 1 > cs->limit)
            return cpu_gp0(c);
        *out = &e->insn;
        return XR_OK;
    }
    TRY(cpu_decode(c, eip, tmp));
    *out = tmp;
    bool one_page = ((lin ^ (lin + tmp->len - 1)) & ~(PAGE_SIZE - 1)) == 0;
    if (one_page && c->fetch_host) {
        dc_fill(e, pa, c->fetch_host, off, tmp);
        *out = &e->insn;
    }
    return XR_OK;
}

/* ---- the run loop ---- */

/* Deliver the exception raised by the instruction at EIP. */
int cpu_take_exception(Cpu *c)
{
    cpu_fetch_forget(c);
    return pm_deliver(c, c->exc.vec, c->exc.has_err, c->exc.err, CPU_EV_EXCEPTION);
}

/* Pending events at an instruction boundary. Returns XR_STOP to stop. */
static int handle_pending(Cpu *c)
{
    if (c->pending & PEND_STOP) {
        c->pending &= ~PEND_STOP;
        return XR_STOP;
    }
    if (c->pending & PEND_INHIBIT) {
        c->pending &= ~PEND_INHIBIT;
        return XR_OK;
    }
    if ((c->pending & PEND_IRQ) && (c->eflags & EFLAGS_IF)) {
        c->pending &= ~(PEND_IRQ | PEND_HALT);
        c->fetch_blk = FETCH_NONE;
        c->next_eip = c->eip;
        return pm_deliver(c, c->irq_vector, false, 0, CPU_EV_INTERRUPT);
    }
    return XR_OK;
}

/* Execute one instruction. XR_OK, or XR_STOP with c->stop_req set. A fault
 * is delivered here and counts as a step. */
static inline int step(Cpu *c)
{
    Insn tmp;
    const Insn *in = NULL;
    int rc = fetch_insn(c, &tmp, &in);
    if (LIKELY(rc == XR_OK)) {
        uint64_t user = c->cpl == 3;
        c->next_eip = c->eip + in->len;
        rc = in->fn(c, in);
        if (UNLIKELY(rc == XR_AGAIN))
            return XR_OK;                /* back to the same instruction */
        if (LIKELY(rc != XR_FAULT)) {
            c->eip = c->next_eip;
            c->insns++;
            c->insns_user += user;
            c->cycles += in->cost;
            return rc;
        }
    }
    return cpu_take_exception(c);
}

static CpuStop run_loop(Cpu *c, uint64_t max_insns);

/* A run inside a hook (called from a handler of a running block) may
 * rebuild blocks and leave block_exit clear: BX_OTHER on the way out ends
 * the block outside (block.c). */
CpuStop cpu_run(Cpu *c, uint64_t max_insns)
{
    CpuStop s = run_loop(c, max_insns);
    c->block_exit |= BX_OTHER;
    return s;
}

static CpuStop run_loop(Cpu *c, uint64_t max_insns)
{
    c->stop_req = CPU_STOP_NONE;
    c->caches_used = true;
    /* The budget counts steps (see cpu.h), so that a guest stuck in a fault
     * loop or a 4-billion-iteration REP stops too. */
    for (uint64_t n = 0; n < max_insns;) {
        if (UNLIKELY(c->pending)) {
            int rc = handle_pending(c);
            if (rc == XR_STOP)
                return c->stop_req != CPU_STOP_NONE ? c->stop_req : CPU_STOP_EXIT;
            if (c->pending & PEND_HALT)
                return CPU_STOP_HLT;
        }
        if (n > 0 && cpu_at_breakpoint(c, c->eip))
            return CPU_STOP_BREAKPOINT;
        if (LIKELY(c->dcache_on)) {
            /* The fetch reference for EIP, as fetch_insn would make it,
             * then the decoded block there if there is one (block.c). */
            uint32_t lin = c->seg[SEG_CS].base + c->eip;
            if ((lin & ~(FETCH_BLOCK - 1)) != c->fetch_blk && cpu_fetch_ref(c, lin) != XR_OK) {
                n++;
                if (cpu_take_exception(c) == XR_STOP)
                    return c->stop_req;
                continue;
            }
            if (UNLIKELY(!c->fetch_host))
                c->fetch_host = physmem_frame_peek(c->pm, c->fetch_pa);
            int rc;
            uint64_t k = cpu_run_block(c, max_insns - n, &rc);
            if (k) {
                n += k;
                if (rc == XR_STOP)
                    return c->stop_req;
                continue;
            }
        }
        n++;
        if (UNLIKELY(step(c) == XR_STOP))
            return c->stop_req;
    }
    return CPU_STOP_MAX_INSNS;
}

void cpu_set_breakpoints(Cpu *c, const uint32_t *eips, unsigned n)
{
    g_assert(n <= CPU_MAX_BREAKPOINTS);
    for (unsigned i = 0; i < n; i++)
        c->bp[i] = eips[i];
    c->nbp = n;
    c->bp_filter = 0;
    for (unsigned i = 0; i < n; i++)
        c->bp_filter |= 1ull << (eips[i] & 63);
    /* Blocks found their breakpoint limits for the old set (block.c);
     * when the generation wraps, none may match by chance. */
    if (++c->bp_gen == 0) {
        c->bp_gen = 1;
        cpu_blocks_forget_bp(c);
    }
    /* From a hook inside a run: a running block checked the old set at
     * its entry (block.c), so it stops after this instruction. */
    c->block_exit |= BX_OTHER;
}

CpuStop cpu_step(Cpu *c)
{
    CpuStop s = cpu_run(c, 1);
    return s == CPU_STOP_MAX_INSNS ? CPU_STOP_NONE : s;
}
