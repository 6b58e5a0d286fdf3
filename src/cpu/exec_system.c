/* System instructions: HLT, CLI/STI, MOV to/from CRn, LGDT/LIDT/SGDT/SIDT,
 * SMSW/LMSW, INVLPG, LTR/STR/SLDT/LLDT, CLTS, WBINVD, CPUID, RDTSC,
 * RDMSR/WRMSR, SYSENTER/SYSEXIT (protmode.c does the work), IN/OUT, UD2.
 * Privilege rules from each instruction's "Protected Mode Exceptions"
 * (SDM Vol. 2); control-register rules from SDM Vol. 3A §2.5. */
#include "cpu/cpu_priv.h"

#include <stdio.h>

/* Control-register bits: mmu.h. CR4 bits the core accepts with no effect
 * modelled: VME PVI TSD DE MCE PCE OSFXSR OSXMMEXCPT. */
#define CR4_ALWAYS 0x0000064Fu

static inline bool iopl_ok(const Cpu *c)
{
    return c->cpl <= (int)((c->eflags & EFLAGS_IOPL) >> 12);
}

HANDLER(h_ud) { (void)i; return cpu_ud(c); }

HANDLER(h_hlt)
{
    (void)i;
    if (c->cpl != 0)
        return cpu_gp0(c);
    if ((c->pending & PEND_IRQ) && (c->eflags & EFLAGS_IF))
        return XR_OK;            /* the pending interrupt wakes it at once */
    cpu_pend(c, PEND_HALT);
    c->stop_req = CPU_STOP_HLT;
    return XR_STOP;
}

HANDLER(h_cli)
{
    (void)i;
    if (!iopl_ok(c))
        return cpu_gp0(c);
    c->eflags &= ~EFLAGS_IF;
    return XR_OK;
}

/* STI delays interrupt recognition until after the next instruction. */
HANDLER(h_sti)
{
    (void)i;
    if (!iopl_ok(c))
        return cpu_gp0(c);
    if (!(c->eflags & EFLAGS_IF))
        cpu_pend(c, PEND_INHIBIT);
    c->eflags |= EFLAGS_IF;
    return XR_OK;
}

/* ---- control registers ---- */

static uint32_t cr4_allowed(const Cpu *c)
{
    const Preset *p = c->preset;
    uint32_t m = CR4_ALWAYS;
    if (!p || p->pse)
        m |= CR4_PSE;
    if (!p || p->pae)
        m |= CR4_PAE;
    if (!p || p->pge)
        m |= CR4_PGE;
    if (p && p->pcid)
        m |= CR4_PCIDE;          /* a what-if on a 32-bit core, see mmu.h */
    return m;
}

int cpu_mov_to_cr(Cpu *c, int n, uint32_t v)
{
    MmuFault f;
    switch (n) {
    case 0:
        /* Real mode is not modelled: clearing PE is refused with #GP(0). */
        if (!(v & CR0_PE) || ((v & CR0_NW) && !(v & CR0_CD)))
            return cpu_gp0(c);
        v = (v & CR0_DEFINED) | CR0_ET;
        if (!mmu_write_cr0(c->mmu, v, &f))
            return cpu_raise_mmu(c, &f);
        cpu_charge(c, c->cost.mov_cr_other);
        break;
    case 2:
        c->cr2 = v;
        cpu_charge(c, c->cost.alu);
        break;
    case 3:
        if (!mmu_write_cr3(c->mmu, v, &f))
            return cpu_raise_mmu(c, &f);
        cpu_charge(c, c->cost.mov_cr3);
        cpu_emit(c, CPU_EV_CR3_WRITE, 0, false, 0, c->eip, c->cpl);
        break;
    case 4:
        if (v & ~cr4_allowed(c))
            return cpu_gp0(c);
        if (!mmu_write_cr4(c->mmu, v, &f))
            return cpu_raise_mmu(c, &f);
        cpu_charge(c, c->cost.mov_cr_other);
        break;
    default:
        return cpu_ud(c);
    }
    cpu_fetch_forget(c);
    return XR_OK;
}

HANDLER(h_mov_cr_r)
{
    if (i->reg == 1 || i->reg > 4)
        return cpu_ud(c);
    if (c->cpl != 0)
        return cpu_gp0(c);
    return cpu_mov_to_cr(c, i->reg, c->r[i->rm]);
}

HANDLER(h_mov_r_cr)
{
    uint32_t v;
    switch (i->reg) {
    case 0: v = mmu_cr0(c->mmu); break;
    case 2: v = c->cr2; break;
    case 3: v = mmu_cr3(c->mmu); break;
    case 4: v = mmu_cr4(c->mmu); break;
    default: return cpu_ud(c);
    }
    if (c->cpl != 0)
        return cpu_gp0(c);
    c->r[i->rm] = v;
    return XR_OK;
}

HANDLER(h_smsw)
{
    uint32_t cr0 = mmu_cr0(c->mmu);
    if (i->mem)
        return mem_write(c, i->seg, insn_ea(c, i), 2, cr0 & 0xFFFF);
    reg_set(c, i->rm, i->size, i->size == 4 ? cr0 : cr0 & 0xFFFF);
    return XR_OK;
}

/* LMSW loads CR0[3:0]; it can set PE but not clear it. */
HANDLER(h_lmsw)
{
    if (c->cpl != 0)
        return cpu_gp0(c);
    uint32_t v;
    TRY(rm_read(c, i, 2, &v));
    uint32_t cr0 = mmu_cr0(c->mmu);
    return cpu_mov_to_cr(c, 0, (cr0 & ~0xEu) | (v & 0xF) | (cr0 & CR0_PE));
}

HANDLER(h_clts)
{
    (void)i;
    if (c->cpl != 0)
        return cpu_gp0(c);
    return cpu_mov_to_cr(c, 0, mmu_cr0(c->mmu) & ~CR0_TS);
}

/* WBINVD/INVD: the cache model has no flush operation; privilege only. */
HANDLER(h_wbinvd)
{
    (void)i;
    return c->cpl != 0 ? cpu_gp0(c) : XR_OK;
}

/* ---- descriptor-table registers ---- */

static int load_table_reg(Cpu *c, const Insn *i, TableReg *t)
{
    if (c->cpl != 0)
        return cpu_gp0(c);
    uint32_t ea = insn_ea(c, i), limit, base;
    TRY(mem_read(c, i->seg, ea, 2, ACCESS_READ, &limit));
    TRY(mem_read(c, i->seg, ea + 2, 4, ACCESS_READ, &base));
    t->limit = (uint16_t)limit;
    t->base = i->size == 2 ? base & 0x00FFFFFF : base;
    return XR_OK;
}

static int store_table_reg(Cpu *c, const Insn *i, const TableReg *t)
{
    uint32_t ea = insn_ea(c, i);
    TRY(mem_write(c, i->seg, ea, 2, t->limit));
    return mem_write(c, i->seg, ea + 2, 4, t->base);
}

HANDLER(h_lgdt) { return load_table_reg(c, i, &c->gdtr); }
HANDLER(h_lidt) { return load_table_reg(c, i, &c->idtr); }
HANDLER(h_sgdt) { return store_table_reg(c, i, &c->gdtr); }
HANDLER(h_sidt) { return store_table_reg(c, i, &c->idtr); }

HANDLER(h_invlpg)
{
    if (c->cpl != 0)
        return cpu_gp0(c);
    mmu_invlpg(c->mmu, c->seg[i->seg].base + insn_ea(c, i));
    cpu_fetch_forget(c);
    return XR_OK;
}

HANDLER(h_ltr)
{
    if (c->cpl != 0)
        return cpu_gp0(c);
    uint32_t sel;
    TRY(rm_read(c, i, 2, &sel));
    return pm_ltr(c, (uint16_t)sel);
}

static int store_selector(Cpu *c, const Insn *i, uint16_t sel)
{
    if (i->mem)
        return mem_write(c, i->seg, insn_ea(c, i), 2, sel);
    reg_set(c, i->rm, i->size, sel);
    return XR_OK;
}

HANDLER(h_str) { return store_selector(c, i, c->tr.sel); }
HANDLER(h_sldt) { return store_selector(c, i, c->ldtr); }

/* LDTs are not modelled: LLDT accepts only the null selector. */
HANDLER(h_lldt)
{
    if (c->cpl != 0)
        return cpu_gp0(c);
    uint32_t sel;
    TRY(rm_read(c, i, 2, &sel));
    if (sel & 0xFFFC)
        return cpu_raise(c, VEC_GP, sel & 0xFFFC);
    c->ldtr = 0;
    return XR_OK;
}

/* ---- identification, time stamp, MSRs ---- */

/* CPUID answers from the preset. The signature is not modelled (a family 6
 * value); leaf 2 reports no descriptors (the TLB geometry is the preset's,
 * not something a guest can query). */
#define CPUID_SIGNATURE 0x00000600u

static void cpuid_brand(const Cpu *c, unsigned part, uint32_t out[4])
{
    char brand[49] = { 0 };
    const char *name = c->preset && c->preset->name ? c->preset->name : "default";
    snprintf(brand, sizeof brand, "vmsplit %s", name);
    memcpy(out, brand + part * 16, 16);
}

HANDLER(h_cpuid)
{
    (void)i;
    const Preset *p = c->preset;
    bool pae = !p || p->pae, pge = !p || p->pge, pse = !p || p->pse;
    bool sep = !p || p->sep, nx = p && p->nx, pcid = p && p->pcid;
    uint32_t leaf = c->r[REG_EAX], r[4] = { 0, 0, 0, 0 };   /* EAX EBX ECX EDX */
    if (leaf < 0x80000000u && leaf > 2)
        leaf = 2;                /* above the maximum: the highest basic leaf */
    if (leaf > 0x80000004u)
        leaf = 0x80000004u;
    switch (leaf) {
    case 0:
        r[0] = 2;
        memcpy(&r[1], "Genu", 4);
        memcpy(&r[3], "ineI", 4);
        memcpy(&r[2], "ntel", 4);
        break;
    case 1:
        r[0] = CPUID_SIGNATURE;
        r[2] = pcid ? 1u << 17 : 0;
        /* TSC(4) MSR(5) CX8(8) CMOV(15), and the preset's PSE PAE SEP PGE. */
        r[3] = (1u << 4) | (1u << 5) | (1u << 8) | (1u << 15) | (pse ? 1u << 3 : 0) |
               (pae ? 1u << 6 : 0) | (sep ? 1u << 11 : 0) | (pge ? 1u << 13 : 0);
        break;
    case 2:
        r[0] = 1;                /* one iteration, no descriptors */
        break;
    case 0x80000000u:
        r[0] = 0x80000004u;
        break;
    case 0x80000001u:
        r[3] = nx ? 1u << 20 : 0;
        break;
    case 0x80000002u: case 0x80000003u: case 0x80000004u:
        cpuid_brand(c, leaf - 0x80000002u, r);
        break;
    default:
        break;
    }
    for (int k = 0; k < 4; k++)
        c->r[k == 0 ? REG_EAX : k == 1 ? REG_EBX : k == 2 ? REG_ECX : REG_EDX] = r[k];
    return XR_OK;
}

HANDLER(h_rdtsc)
{
    (void)i;
    if ((mmu_cr4(c->mmu) & CR4_TSD) && c->cpl != 0)
        return cpu_gp0(c);
    uint64_t t = cpu_cycles(c) + c->tsc_offset;
    c->r[REG_EAX] = (uint32_t)t;
    c->r[REG_EDX] = (uint32_t)(t >> 32);
    return XR_OK;
}

static bool msr_read(const Cpu *c, uint32_t msr, uint64_t *v)
{
    switch (msr) {
    case MSR_TSC: *v = cpu_cycles(c) + c->tsc_offset; return true;
    case MSR_SYSENTER_CS: *v = c->sysenter_cs; return c->preset == NULL || c->preset->sep;
    case MSR_SYSENTER_ESP: *v = c->sysenter_esp; return c->preset == NULL || c->preset->sep;
    case MSR_SYSENTER_EIP: *v = c->sysenter_eip; return c->preset == NULL || c->preset->sep;
    case MSR_EFER: *v = mmu_efer(c->mmu); return c->preset && c->preset->nx;
    default: return false;
    }
}

bool cpu_write_msr(Cpu *c, uint32_t msr, uint64_t v)
{
    bool sep = c->preset == NULL || c->preset->sep;
    switch (msr) {
    case MSR_TSC: c->tsc_offset = v - cpu_cycles(c); return true;
    case MSR_SYSENTER_CS: c->sysenter_cs = (uint32_t)v & 0xFFFF; return sep;
    case MSR_SYSENTER_ESP: c->sysenter_esp = (uint32_t)v; return sep;
    case MSR_SYSENTER_EIP: c->sysenter_eip = (uint32_t)v; return sep;
    case MSR_EFER:
        /* EFER exists on the NX-capable parts; only NXE is writable there. */
        if (!c->preset || !c->preset->nx || (v & ~EFER_NXE))
            return false;
        mmu_write_efer(c->mmu, v);
        cpu_fetch_forget(c);
        return true;
    default:
        return false;
    }
}

uint64_t cpu_msr(const Cpu *c, uint32_t msr)
{
    uint64_t v = 0;
    msr_read(c, msr, &v);
    return v;
}

HANDLER(h_rdmsr)
{
    (void)i;
    uint64_t v;
    if (c->cpl != 0 || !msr_read(c, c->r[REG_ECX], &v))
        return cpu_gp0(c);
    c->r[REG_EAX] = (uint32_t)v;
    c->r[REG_EDX] = (uint32_t)(v >> 32);
    return XR_OK;
}

HANDLER(h_wrmsr)
{
    (void)i;
    uint64_t v = ((uint64_t)c->r[REG_EDX] << 32) | c->r[REG_EAX];
    if (c->cpl != 0 || !cpu_write_msr(c, c->r[REG_ECX], v))
        return cpu_gp0(c);
    return XR_OK;
}

HANDLER(h_sysenter) { (void)i; return pm_sysenter(c); }
HANDLER(h_sysexit) { (void)i; return pm_sysexit(c); }

/* ---- I/O ---- */

HANDLER(h_in)
{
    uint16_t port = (uint16_t)(i->op ? c->r[REG_EDX] : i->imm & 0xFF);
    uint32_t v;
    TRY(pm_io_check(c, port, i->size));
    int rc = cpu_port_in(c, port, i->size, &v);
    if (rc != XR_FAULT)
        reg_set(c, REG_EAX, i->size, v);
    return rc;
}

HANDLER(h_out)
{
    uint16_t port = (uint16_t)(i->op ? c->r[REG_EDX] : i->imm & 0xFF);
    TRY(pm_io_check(c, port, i->size));
    return cpu_port_out(c, port, i->size, reg_get(c, REG_EAX, i->size));
}

/* ---- EFLAGS writes (POPF, IRET) ---- */

/* Bits 1 is always set; 3, 5, 15 and 22-31 always clear. */
#define EFLAGS_WRITABLE 0x003F7FD5u

void cpu_write_eflags(Cpu *c, uint32_t v, uint32_t mask)
{
    if (c->cpl > 0)
        mask &= ~EFLAGS_IOPL;    /* only CPL 0 changes IOPL */
    if (!iopl_ok(c))
        mask &= ~EFLAGS_IF;      /* CPL > IOPL: IF silently kept */
    /* The arithmetic flags of the old value matter only when mask leaves
     * some of them: POPF and IRET replace all six, so their lazy state
     * need not be worked out (the non-arithmetic bits of c->eflags are
     * always current; flags_get only adds the arithmetic ones). */
    uint32_t cur = (mask & EFLAGS_ARITH) == EFLAGS_ARITH ? c->eflags : flags_get(c);
    uint32_t n = ((cur & ~mask) | (v & mask)) & EFLAGS_WRITABLE;
    c->eflags = n | EFLAGS_FIXED1;
    c->cc.op = CC_EAGER;
}
