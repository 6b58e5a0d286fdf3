/* Protected-mode mechanics (Intel SDM Vol. 3A ch. 3, 5, 6, 7):
 *   - segment loads from the GDT with the type, DPL/RPL/CPL and present
 *     checks of MOV Sreg / POP Sreg / far transfers (§3.4, §5.5-5.8);
 *   - far JMP/CALL/RET to code segments (call gates and task switches are
 *     not modelled: #GP(selector));
 *   - interrupt and exception delivery through 32-bit interrupt and trap
 *     gates (§6.10-6.13), with the gate-DPL check for INT n, the
 *     ring-3 -> ring-0 stack switch from TSS.SS0/ESP0 (§6.12.1), error
 *     codes with the EXT bit, #DF on a fault during delivery per the
 *     benign / contributory / page-fault classes of Table 6-5, and a triple
 *     fault that stops the core (§6.15, "Interrupt 8");
 *   - IRET (same level and to an outer level; NT and virtual-8086 returns
 *     are not modelled: #GP(0)), SYSENTER/SYSEXIT (§5.8.7), LTR, and the
 *     I/O permission check (Vol. 1 §18.5).
 * Descriptor-table and TSS references are supervisor (CPL 0) references
 * through the MMU, so they hit the modelled TLB and caches and can #PF.
 * LDTs are not modelled: a selector with TI=1 faults like one past the
 * GDT limit. 16-bit code segments (D=0) are refused with #GP(selector). */
#include "cpu/cpu_priv.h"

/* ---- descriptors (SDM Vol. 3A Figure 3-8) ---- */

typedef struct {
    uint32_t lo, hi;
} Desc;

#define DESC_S(d) (((d).hi >> 12) & 1)            /* code/data (1) or system (0) */
#define DESC_TYPE(d) (((d).hi >> 8) & 0xF)
#define DESC_DPL(d) ((int)(((d).hi >> 13) & 3))
#define DESC_P(d) (((d).hi >> 15) & 1)
#define DESC_DB(d) (((d).hi >> 22) & 1)
#define TYPE_CODE 0x8
#define TYPE_CONFORMING 0x4      /* code */
#define TYPE_READABLE 0x2        /* code */
#define TYPE_EXPDOWN 0x4         /* data */
#define TYPE_WRITABLE 0x2        /* data */
#define TYPE_ACCESSED 0x1
#define SYS_TSS32_AVAIL 0x9
#define SYS_TSS32_BUSY 0xB
#define SYS_INT_GATE32 0xE
#define SYS_TRAP_GATE32 0xF

static uint32_t desc_base(Desc d)
{
    return (d.lo >> 16) | ((d.hi & 0xFF) << 16) | (d.hi & 0xFF000000u);
}

static uint32_t desc_limit(Desc d)
{
    uint32_t l = (d.lo & 0xFFFF) | (d.hi & 0xF0000);
    return (d.hi & (1u << 23)) ? (l << 12) | 0xFFF : l;
}

static bool desc_is_code(Desc d) { return DESC_S(d) && (DESC_TYPE(d) & TYPE_CODE); }
static bool desc_is_data(Desc d) { return DESC_S(d) && !(DESC_TYPE(d) & TYPE_CODE); }

int mem_read_sys(Cpu *c, uint32_t lin, unsigned size, uint32_t *v)
{
    return lin_read(c, lin, size, ACCESS_READ, 0, v);
}

int mem_write_sys(Cpu *c, uint32_t lin, unsigned size, uint32_t v)
{
    return lin_write(c, lin, size, 0, v);
}

/* Host speed: the descriptor reads, the checks of CS and SS and the pops
 * of a far return are forced inline into INT, IRET and the segment loads
 * (CPU_HOT, as cpu_priv.h's lin_read): each holds a memo's inline hit
 * (mmu_access_fast), which makes it too large for the compiler to inline
 * by itself, and the calls and spills were about 1.3 % of a 4G/4G null
 * system call (callgrind). Nothing else changes: the same references in
 * the same order. */

/* An 8-byte descriptor (GDT entry, IDT gate): one supervisor reference
 * when it lies in one page (as the tables always do when 8-byte aligned),
 * else two. */
CPU_HOT int read_desc_at(Cpu *c, uint32_t lin, Desc *d)
{
    if ((lin & (PAGE_SIZE - 1)) <= PAGE_SIZE - 8) {
        MmuFault f;
        const uint8_t *p = mmu_access_fast(c->mmu, lin, ACCESS_READ, 0, &f);
        if (!p)
            return cpu_raise_mmu(c, &f);
        memcpy(&d->lo, p, 4);
        memcpy(&d->hi, p + 4, 4);
        return XR_OK;
    }
    TRY(mem_read_sys(c, lin, 4, &d->lo));
    return mem_read_sys(c, lin + 4, 4, &d->hi);
}

/* Read the GDT entry of sel. Out of the table (or TI=1: no LDT) raises
 * vec (#GP or #TS) with the selector's error code. */
CPU_HOT int desc_read(Cpu *c, uint16_t sel, Desc *d, uint8_t vec, uint32_t ext)
{
    uint32_t idx = sel & 0xFFF8u;
    if ((sel & 4) || idx + 7 > c->gdtr.limit)
        return cpu_raise(c, vec, (sel & 0xFFFCu) | ext);
    return read_desc_at(c, c->gdtr.base + idx, d);
}

/* Loading a segment sets the descriptor's accessed bit (§3.4.5.1). */
static int desc_touch(Cpu *c, uint16_t sel, Desc *d)
{
    if (DESC_TYPE(*d) & TYPE_ACCESSED)
        return XR_OK;
    d->hi |= TYPE_ACCESSED << 8;
    return mem_write_sys(c, c->gdtr.base + (sel & 0xFFF8u) + 4, 4, d->hi);
}

/* SEGF_FLAT_R / SEGF_FLAT_W of a segment whose limit is 4 GiB, by the
 * descriptor's type field (the rule seg_check_slow applies): code is
 * flat-readable when readable and never writable; expand-up data is
 * flat-readable, and flat-writable when writable; expand-down data never
 * flat (its valid offsets lie above the limit). */
static const uint8_t flat_by_type[16] = {
    [0x0] = SEGF_FLAT_R, [0x1] = SEGF_FLAT_R,
    [0x2] = SEGF_FLAT_R | SEGF_FLAT_W, [0x3] = SEGF_FLAT_R | SEGF_FLAT_W,
    [0xA] = SEGF_FLAT_R, [0xB] = SEGF_FLAT_R, [0xE] = SEGF_FLAT_R, [0xF] = SEGF_FLAT_R,
};

/* The hidden part of a segment register from its descriptor: fields taken
 * straight from their bit positions (Figure 3-8: type bits 8-11 and S bit
 * 12 side by side give type | S << 4; D/B bit 22 is SEGF_BIG, bit 3). */
static inline void seg_fill(SegCache *s, uint16_t sel, Desc d)
{
    uint32_t limit = desc_limit(d);
    s->sel = sel;
    s->base = desc_base(d);
    s->limit = limit;
    s->type = (uint8_t)((d.hi >> 8) & 0x1F);
    s->dpl = (uint8_t)DESC_DPL(d);
    s->flags = (uint8_t)(SEGF_USABLE | ((d.hi >> 19) & SEGF_BIG) |
                         (limit == 0xFFFFFFFFu ? flat_by_type[DESC_TYPE(d)] : 0));
}

/* A flat 4 GiB segment (base 0, G=1, D=1, accessed): execute/read code or
 * read/write data. Inline for SYSENTER/SYSEXIT, where code is a constant. */
static inline void set_flat(SegCache *s, uint16_t sel, bool code, int dpl)
{
    *s = (SegCache){ .sel = sel, .base = 0, .limit = 0xFFFFFFFFu,
                     .type = (uint8_t)(0x10 | (code ? 0xB : 0x3)), .dpl = (uint8_t)dpl,
                     .flags = SEGF_USABLE | SEGF_BIG | SEGF_FLAT_R | (code ? 0 : SEGF_FLAT_W) };
}

void pm_set_flat(SegCache *s, uint16_t sel, bool code, int dpl) { set_flat(s, sel, code, dpl); }

int seg_check_slow(Cpu *c, int seg, uint32_t off, unsigned size, bool write)
{
    const SegCache *s = &c->seg[seg];
    uint8_t vec = seg == SEG_SS ? VEC_SS : VEC_GP;
    if (!(s->flags & SEGF_USABLE))
        return cpu_gp0(c);                           /* null selector */
    bool code = s->type & TYPE_CODE;
    if (write ? (code || !(s->type & TYPE_WRITABLE)) : (code && !(s->type & TYPE_READABLE)))
        return cpu_gp0(c);
    uint32_t last = off + size - 1;
    if (!code && (s->type & TYPE_EXPDOWN)) {
        uint32_t upper = (s->flags & SEGF_BIG) ? 0xFFFFFFFFu : 0xFFFFu;
        if (off <= s->limit || last > upper || last < off)
            return cpu_raise(c, vec, 0);
    } else if (last < off || last > s->limit) {
        return cpu_raise(c, vec, 0);
    }
    return XR_OK;
}

/* ---- MOV/POP Sreg, LxS (SDM MOV, "Protected Mode Exceptions") ---- */

int pm_load_seg(Cpu *c, int seg, uint16_t sel)
{
    uint32_t err = sel & 0xFFFCu;
    Desc d;
    if (seg == SEG_SS) {
        if (!err)
            return cpu_gp0(c);
        TRY(desc_read(c, sel, &d, VEC_GP, 0));
        if ((sel & 3) != c->cpl || !desc_is_data(d) || !(DESC_TYPE(d) & TYPE_WRITABLE) ||
            DESC_DPL(d) != c->cpl)
            return cpu_raise(c, VEC_GP, err);
        if (!DESC_P(d))
            return cpu_raise(c, VEC_SS, err);
    } else {
        if (!err) {                                  /* null: loads, faults on use */
            c->seg[seg] = (SegCache){ .sel = sel };
            return XR_OK;
        }
        TRY(desc_read(c, sel, &d, VEC_GP, 0));
        bool code = desc_is_code(d);
        if (!DESC_S(d) || (code && !(DESC_TYPE(d) & TYPE_READABLE)))
            return cpu_raise(c, VEC_GP, err);
        bool conforming = code && (DESC_TYPE(d) & TYPE_CONFORMING);
        if (!conforming && ((int)(sel & 3) > DESC_DPL(d) || c->cpl > DESC_DPL(d)))
            return cpu_raise(c, VEC_GP, err);
        if (!DESC_P(d))
            return cpu_raise(c, VEC_NP, err);
    }
    TRY(desc_touch(c, sel, &d));
    seg_fill(&c->seg[seg], sel, d);
    return XR_OK;
}

/* Check a code-segment descriptor as the target of a far return / IRET to
 * privilege level rpl (SDM RET, IRET). */
static int check_return_cs(Cpu *c, uint16_t sel, Desc *d)
{
    uint32_t err = sel & 0xFFFCu;
    int rpl = sel & 3;
    if (!err)
        return cpu_gp0(c);
    TRY(desc_read(c, sel, d, VEC_GP, 0));
    if (rpl < c->cpl || !desc_is_code(*d) || !DESC_DB(*d))
        return cpu_raise(c, VEC_GP, err);
    if ((DESC_TYPE(*d) & TYPE_CONFORMING) ? DESC_DPL(*d) > rpl : DESC_DPL(*d) != rpl)
        return cpu_raise(c, VEC_GP, err);
    if (!DESC_P(*d))
        return cpu_raise(c, VEC_NP, err);
    return XR_OK;
}

/* Check a stack-segment selector for privilege level pl. vec: #GP for
 * returns, #TS for the TSS stack of a delivery. */
CPU_HOT int check_stack_ss(Cpu *c, uint16_t sel, int pl, Desc *d, uint8_t vec, uint32_t ext)
{
    uint32_t err = (sel & 0xFFFCu) | ext;
    if (!(sel & 0xFFFCu))
        return cpu_raise(c, vec, ext);
    if ((sel & 3) != pl)
        return cpu_raise(c, vec, err);
    TRY(desc_read(c, sel, d, vec, ext));
    if (!desc_is_data(*d) || !(DESC_TYPE(*d) & TYPE_WRITABLE) || DESC_DPL(*d) != pl)
        return cpu_raise(c, vec, err);
    if (!DESC_P(*d))
        return cpu_raise(c, VEC_SS, err);
    return XR_OK;
}

/* After a return to an outer level, data segments the new CPL may not use
 * become null (SDM RET/IRET: "FOR each of segment register ES, FS, GS, DS"). */
static void null_inaccessible_segs(Cpu *c)
{
    static const int segs[] = { SEG_ES, SEG_DS, SEG_FS, SEG_GS };
    for (unsigned k = 0; k < 4; k++) {
        SegCache *s = &c->seg[segs[k]];
        bool conf_code = (s->type & TYPE_CODE) && (s->type & TYPE_CONFORMING);
        if ((s->flags & SEGF_USABLE) && !conf_code && s->dpl < c->cpl)
            *s = (SegCache){ .sel = 0 };
    }
}

/* ---- far JMP / CALL / RET ---- */

int pm_far_jump(Cpu *c, uint16_t sel, uint32_t off, bool call, unsigned size)
{
    uint32_t err = sel & 0xFFFCu;
    Desc d;
    if (!err)
        return cpu_gp0(c);
    TRY(desc_read(c, sel, &d, VEC_GP, 0));
    if (!desc_is_code(d) || !DESC_DB(d))
        return cpu_raise(c, VEC_GP, err);            /* gates, TSS, data: not modelled */
    if ((DESC_TYPE(d) & TYPE_CONFORMING) ? DESC_DPL(d) > c->cpl
                                         : ((int)(sel & 3) > c->cpl || DESC_DPL(d) != c->cpl))
        return cpu_raise(c, VEC_GP, err);
    if (!DESC_P(d))
        return cpu_raise(c, VEC_NP, err);
    if (size == 2)
        off &= 0xFFFF;
    if (off > desc_limit(d))
        return cpu_gp0(c);
    uint32_t esp = c->r[REG_ESP];
    if (call) {
        TRY(mem_write(c, SEG_SS, esp - size, size, c->seg[SEG_CS].sel));
        TRY(mem_write(c, SEG_SS, esp - 2 * size, size, c->next_eip));
        esp -= 2 * size;
    }
    TRY(desc_touch(c, sel, &d));
    seg_fill(&c->seg[SEG_CS], (uint16_t)((sel & ~3u) | (unsigned)c->cpl), d);
    c->r[REG_ESP] = esp;
    cpu_jump(c, off);
    cpu_charge(c, c->cost.branch);
    return XR_OK;
}

/* One value of a far return's frame: stack_read (mem_read through SS at
 * the current CPL: the same segment check, the same one reference) of
 * size 2 or 4 bytes at ESP+off, with the size a constant in each
 * lin_read so that the copy is a plain load, not a memcpy call. */
CPU_HOT int pop_read(Cpu *c, uint32_t off, unsigned size, uint32_t *v)
{
    const SegCache *s = &c->seg[SEG_SS];
    uint32_t at = c->r[REG_ESP] + off;
    *v = 0;
    if (UNLIKELY(!(s->flags & SEGF_FLAT_R)))
        TRY(seg_check_slow(c, SEG_SS, at, size, false));
    if (LIKELY(size == 4))
        return lin_read(c, s->base + at, 4, ACCESS_READ, c->cpl, v);
    g_assert(size == 2);
    return lin_read(c, s->base + at, 2, ACCESS_READ, c->cpl, v);
}

/* Pops for RETF/IRET: n values of size at ESP. */
static int pop_n(Cpu *c, unsigned n, unsigned size, uint32_t *v)
{
    for (unsigned k = 0; k < n; k++)
        TRY(pop_read(c, k * size, size, &v[k]));
    return XR_OK;
}

/* The common tail of RETF and IRET: load CS (and SS:ESP for an outer
 * return). v = popped EIP, CS, [EFLAGS]; nfixed values popped so far. */
CPU_HOT int far_return(Cpu *c, unsigned size, uint32_t eip, uint16_t cs, unsigned npopped,
                       uint16_t extra, uint32_t *new_eflags)
{
    Desc dcs, dss;
    TRY(check_return_cs(c, cs, &dcs));
    int rpl = cs & 3;
    if (size == 2)
        eip &= 0xFFFF;
    if (eip > desc_limit(dcs))
        return cpu_gp0(c);
    uint32_t outer[2];
    if (rpl > c->cpl) {
        TRY(pop_read(c, npopped * size + extra, size, &outer[0]));
        TRY(pop_read(c, (npopped + 1) * size + extra, size, &outer[1]));
        TRY(check_stack_ss(c, (uint16_t)outer[1], rpl, &dss, VEC_GP, 0));
        TRY(desc_touch(c, (uint16_t)outer[1], &dss));
    }
    TRY(desc_touch(c, cs, &dcs));
    if (new_eflags)                  /* IRET: EFLAGS rules use the old CPL */
        cpu_write_eflags(c, *new_eflags, EFLAGS_ARITH | EFLAGS_TF | EFLAGS_IF | EFLAGS_DF |
                                         EFLAGS_IOPL | EFLAGS_NT | EFLAGS_RF | EFLAGS_AC |
                                         EFLAGS_ID);
    seg_fill(&c->seg[SEG_CS], cs, dcs);
    if (rpl > c->cpl) {
        c->cpl = rpl;
        seg_fill(&c->seg[SEG_SS], (uint16_t)outer[1], dss);
        c->r[REG_ESP] = outer[0] + extra;
        null_inaccessible_segs(c);
    } else {
        c->r[REG_ESP] += npopped * size + extra;
    }
    cpu_jump(c, eip);
    return XR_OK;
}

int pm_far_ret(Cpu *c, unsigned size, uint16_t extra)
{
    uint32_t v[2];
    TRY(pop_n(c, 2, size, v));
    TRY(far_return(c, size, v[0], (uint16_t)v[1], 2, extra, NULL));
    cpu_charge(c, c->cost.branch);
    return XR_OK;
}

int pm_iret(Cpu *c, unsigned size)
{
    uint32_t v[3], from_eip = c->eip;
    int from_cpl = c->cpl;
    if (c->eflags & EFLAGS_NT)
        return cpu_gp0(c);               /* task return: not modelled */
    TRY(pop_n(c, 3, size, v));
    uint32_t fl = v[2];
    if (size == 2)
        fl = (flags_get(c) & 0xFFFF0000u) | (fl & 0xFFFF);
    if ((fl & EFLAGS_VM) && c->cpl == 0)
        return cpu_gp0(c);               /* return to virtual-8086 mode: not modelled */
    TRY(far_return(c, size, v[0], (uint16_t)v[1], 3, 0, &fl));
    cpu_charge(c, c->cost.iret);
    cpu_emit(c, CPU_EV_IRET, 0, false, 0, from_eip, from_cpl);
    return XR_OK;
}

/* ---- SYSENTER / SYSEXIT (SDM Vol. 2B; §5.8.7): no descriptor reads, the
 * segment caches are loaded with fixed flat values. ---- */

int pm_sysenter(Cpu *c)
{
    uint32_t from_eip = c->eip;
    int from_cpl = c->cpl;
    if (c->preset && !c->preset->sep)
        return cpu_ud(c);
    uint16_t cs = (uint16_t)(c->sysenter_cs & 0xFFFC);
    if (!cs)
        return cpu_gp0(c);
    c->eflags &= ~(EFLAGS_VM | EFLAGS_IF | EFLAGS_RF);
    set_flat(&c->seg[SEG_CS], cs, true, 0);
    set_flat(&c->seg[SEG_SS], (uint16_t)(cs + 8), false, 0);
    c->cpl = 0;
    c->r[REG_ESP] = c->sysenter_esp;
    cpu_jump(c, c->sysenter_eip);
    cpu_charge(c, c->cost.sysenter);
    cpu_emit(c, CPU_EV_SYSENTER, 0, false, 0, from_eip, from_cpl);
    return XR_OK;
}

int pm_sysexit(Cpu *c)
{
    uint32_t from_eip = c->eip;
    if (c->preset && !c->preset->sep)
        return cpu_ud(c);
    uint16_t cs = (uint16_t)(c->sysenter_cs & 0xFFFC);
    if (!cs || c->cpl != 0)
        return cpu_gp0(c);
    set_flat(&c->seg[SEG_CS], (uint16_t)((cs + 16) | 3), true, 3);
    set_flat(&c->seg[SEG_SS], (uint16_t)((cs + 24) | 3), false, 3);
    c->cpl = 3;
    c->r[REG_ESP] = c->r[REG_ECX];
    cpu_jump(c, c->r[REG_EDX]);
    cpu_charge(c, c->cost.sysexit);
    cpu_emit(c, CPU_EV_SYSEXIT, 0, false, 0, from_eip, 0);
    return XR_OK;
}

/* ---- task register and I/O permission ---- */

int pm_ltr(Cpu *c, uint16_t sel)
{
    uint32_t err = sel & 0xFFFCu;
    Desc d;
    if (!err)
        return cpu_gp0(c);
    TRY(desc_read(c, sel, &d, VEC_GP, 0));
    if (DESC_S(d) || DESC_TYPE(d) != SYS_TSS32_AVAIL)
        return cpu_raise(c, VEC_GP, err);
    if (!DESC_P(d))
        return cpu_raise(c, VEC_NP, err);
    d.hi |= (SYS_TSS32_BUSY ^ SYS_TSS32_AVAIL) << 8;     /* mark busy */
    TRY(mem_write_sys(c, c->gdtr.base + (sel & 0xFFF8u) + 4, 4, d.hi));
    c->tr = (SegCache){ .sel = sel, .base = desc_base(d), .limit = desc_limit(d),
                        .type = SYS_TSS32_BUSY, .dpl = (uint8_t)DESC_DPL(d),
                        .flags = SEGF_USABLE };
    return XR_OK;
}

#define TSS_ESP0 4
#define TSS_SS0 8
#define TSS_IOMAP 0x66
#define TSS_MIN_LIMIT 0x67

int pm_io_check(Cpu *c, uint16_t port, unsigned size)
{
    if (c->cpl <= (int)((c->eflags & EFLAGS_IOPL) >> 12))
        return XR_OK;
    if (!(c->tr.flags & SEGF_USABLE) || c->tr.limit < TSS_MIN_LIMIT)
        return cpu_gp0(c);
    uint32_t base, bits;
    TRY(mem_read_sys(c, c->tr.base + TSS_IOMAP, 2, &base));
    uint32_t at = base + port / 8;
    if (at + 1 > c->tr.limit)
        return cpu_gp0(c);
    TRY(mem_read_sys(c, c->tr.base + at, 2, &bits));
    if ((bits >> (port & 7)) & ((1u << size) - 1))
        return cpu_gp0(c);
    return XR_OK;
}

/* ---- interrupt and exception delivery ---- */

/* The frame of a delivery: pushed one dword at a time (each its own
 * modelled write at the new CPL, SDM §6.12.1 Figure 6-4), at most SS, ESP,
 * EFLAGS, CS, EIP and the error code. */
typedef struct {
    uint32_t v[6];
    unsigned n;
} Frame;

/* Push the frame on the stack ss:esp at privilege cpl; *esp is updated
 * only when every push succeeded. A stack that is not flat-writable gets
 * the segment check of each push first (seg_check_slow on a temporary SS
 * cache, as the checks use c->seg[SEG_SS]). */
static int push_frame(Cpu *c, const SegCache *ss, uint32_t *esp, int cpl, const Frame *fr)
{
    uint32_t sp = *esp;
    for (unsigned k = 0; k < fr->n; k++) {
        sp -= 4;
        if (UNLIKELY(!(ss->flags & SEGF_FLAT_W))) {
            SegCache save = c->seg[SEG_SS];
            c->seg[SEG_SS] = *ss;
            int rc = seg_check_slow(c, SEG_SS, sp, 4, true);
            c->seg[SEG_SS] = save;
            TRY(rc);
        }
        TRY(lin_write(c, ss->base + sp, 4, cpl, fr->v[k]));
    }
    *esp = sp;
    return XR_OK;
}

/* The gate of vec and the code segment it names, checked (SDM "INT n/INTO/
 * INT3", "Operation": the IDT limit, gate type, gate DPL for INT n, P; the
 * selector, code type, DPL <= CPL, D, P, and the offset within the limit). */
static int read_gate(Cpu *c, uint8_t vec, bool soft, uint32_t ext, Desc *gate, Desc *d)
{
    uint32_t idt_err = ((uint32_t)vec << 3) | 2 | ext;
    if ((uint32_t)vec * 8 + 7 > c->idtr.limit)
        return cpu_raise(c, VEC_GP, idt_err);
    TRY(read_desc_at(c, c->idtr.base + vec * 8u, gate));
    unsigned type = DESC_TYPE(*gate);
    if (DESC_S(*gate) || (type != SYS_INT_GATE32 && type != SYS_TRAP_GATE32))
        return cpu_raise(c, VEC_GP, idt_err);        /* task and 16-bit gates: not modelled */
    if (soft && DESC_DPL(*gate) < c->cpl)
        return cpu_raise(c, VEC_GP, idt_err);
    if (!DESC_P(*gate))
        return cpu_raise(c, VEC_NP, idt_err);
    uint16_t sel = (uint16_t)(gate->lo >> 16);
    uint32_t off = (gate->lo & 0xFFFF) | (gate->hi & 0xFFFF0000u), serr = (sel & 0xFFFCu) | ext;
    if (!(sel & 0xFFFC))
        return cpu_raise(c, VEC_GP, ext);
    TRY(desc_read(c, sel, d, VEC_GP, ext));
    if (!desc_is_code(*d) || DESC_DPL(*d) > c->cpl || !DESC_DB(*d))
        return cpu_raise(c, VEC_GP, serr);
    if (!DESC_P(*d))
        return cpu_raise(c, VEC_NP, serr);
    if (off > desc_limit(*d))
        return cpu_gp0(c);
    return XR_OK;
}

/* The inner stack of a delivery to new_cpl from the TSS (§6.12.1, §7.2.1):
 * ESPn then SSn, two supervisor reads, and SSn's descriptor checked. */
static int tss_stack(Cpu *c, int new_cpl, uint32_t ext, SegCache *ss, Desc *dss, uint32_t *esp)
{
    uint32_t v;
    if (!(c->tr.flags & SEGF_USABLE) || TSS_SS0 + 8u * new_cpl + 1 > c->tr.limit)
        return cpu_raise(c, VEC_TS, (c->tr.sel & 0xFFFCu) | ext);
    TRY(lin_read(c, c->tr.base + TSS_ESP0 + 8u * new_cpl, 4, ACCESS_READ, 0, esp));
    TRY(lin_read(c, c->tr.base + TSS_SS0 + 8u * new_cpl, 2, ACCESS_READ, 0, &v));
    TRY(check_stack_ss(c, (uint16_t)v, new_cpl, dss, VEC_TS, ext));
    seg_fill(ss, (uint16_t)v, *dss);
    return XR_OK;
}

/* Deliver one event through its gate; a fault while doing so is left in
 * c->exc (registers unchanged). */
static int deliver_once(Cpu *c, uint8_t vec, bool has_err, uint32_t err, bool soft,
                        uint32_t ret_eip, uint32_t ext)
{
    Desc gate, d, dss;
    TRY(read_gate(c, vec, soft, ext, &gate, &d));
    unsigned type = DESC_TYPE(gate);
    uint16_t sel = (uint16_t)(gate.lo >> 16);
    uint32_t off = (gate.lo & 0xFFFF) | (gate.hi & 0xFFFF0000u);
    int new_cpl = (DESC_TYPE(d) & TYPE_CONFORMING) ? c->cpl : DESC_DPL(d);
    /* EFLAGS once: nothing below changes it before the commit. */
    uint32_t eflags = flags_get(c);
    SegCache new_ss = { 0 };     /* (set by tss_stack when used) */
    const SegCache *ss = &c->seg[SEG_SS];
    uint32_t esp = c->r[REG_ESP];
    bool switch_stack = new_cpl < c->cpl;
    Frame fr = { .n = 0 };
    if (switch_stack) {                              /* stack switch from the TSS */
        TRY(tss_stack(c, new_cpl, ext, &new_ss, &dss, &esp));
        ss = &new_ss;
        fr.v[fr.n++] = c->seg[SEG_SS].sel;
        fr.v[fr.n++] = c->r[REG_ESP];
    }
    fr.v[fr.n++] = eflags;
    fr.v[fr.n++] = c->seg[SEG_CS].sel;
    fr.v[fr.n++] = ret_eip;
    if (has_err)
        fr.v[fr.n++] = err;
    TRY(push_frame(c, ss, &esp, new_cpl, &fr));
    TRY(desc_touch(c, sel, &d));
    if (switch_stack)                /* (check_stack_ss refused a null SS) */
        TRY(desc_touch(c, new_ss.sel, &dss));

    /* Commit. */
    seg_fill(&c->seg[SEG_CS], (uint16_t)((sel & ~3u) | (unsigned)new_cpl), d);
    if (switch_stack)
        c->seg[SEG_SS] = new_ss;
    c->cpl = new_cpl;
    c->r[REG_ESP] = esp;
    c->eflags = eflags & ~(EFLAGS_TF | EFLAGS_NT | EFLAGS_RF | EFLAGS_VM |
                           (type == SYS_INT_GATE32 ? EFLAGS_IF : 0));
    c->cc.op = CC_EAGER;
    c->eip = off;
    cpu_jump(c, off);
    c->pending &= ~PEND_HALT;
    cpu_charge(c, c->cost.int_gate);
    return XR_OK;
}

static bool contributory(uint8_t v)
{
    return v == VEC_DE || v == VEC_TS || v == VEC_NP || v == VEC_SS || v == VEC_GP;
}

static int triple_fault(Cpu *c, uint8_t v0, uint32_t e0, uint8_t v1, uint32_t e1)
{
    CpuTripleFault *t = &c->triple;
    t->vectors[0] = v0;
    t->error_codes[0] = e0;
    t->vectors[1] = v1;
    t->error_codes[1] = e1;
    t->vectors[2] = c->exc.vec;
    t->error_codes[2] = c->exc.err;
    t->eip = c->eip;
    memcpy(t->regs, c->r, sizeof t->regs);
    t->eflags = flags_get(c);
    t->cs = c->seg[SEG_CS].sel;
    t->ss = c->seg[SEG_SS].sel;
    t->cr2 = c->cr2;
    t->cr3 = mmu_cr3(c->mmu);
    c->stop_req = CPU_STOP_TRIPLE_FAULT;
    cpu_emit(c, CPU_EV_TRIPLE_FAULT, v0, false, 0, c->eip, c->cpl);
    return XR_STOP;
}

int pm_deliver(Cpu *c, uint8_t vec, bool has_err, uint32_t err, CpuEventKind kind)
{
    bool soft = kind == CPU_EV_SOFT_INT;
    uint32_t ret = soft ? c->next_eip : c->eip, from_eip = c->eip;
    uint32_t ext = soft ? 0 : 1;     /* EXT: the event was not the program's INT n */
    int from_cpl = c->cpl;
    uint8_t df_cause = 0;            /* the exception whose delivery raised #DF */
    uint32_t df_cause_err = 0, df_second_err = 0;
    uint8_t df_second = 0;
    for (;;) {
        if (deliver_once(c, vec, has_err, err, soft, ret, ext) == XR_OK) {
            cpu_emit(c, kind, vec, has_err, err, from_eip, from_cpl);
            return XR_OK;
        }
        if (soft)
            return XR_FAULT;         /* delivered as an exception of the INT itself */
        uint8_t nv = c->exc.vec;
        if (vec == VEC_DF)
            return triple_fault(c, df_cause, df_cause_err, df_second, df_second_err);
        bool pf_first = vec == VEC_PF && (nv == VEC_PF || contributory(nv));
        if ((contributory(vec) && contributory(nv)) || pf_first) {
            df_cause = vec;
            df_cause_err = err;
            df_second = nv;
            df_second_err = c->exc.err;
            vec = VEC_DF;
            has_err = true;
            err = 0;
        } else {                     /* benign first event: deliver the new one */
            vec = nv;
            has_err = c->exc.has_err;
            err = c->exc.err;
        }
        kind = CPU_EV_EXCEPTION;
    }
}
