/* See measure.h. */
#include "kernel_model/measure.h"

#include "tlb/hierarchy.h"

#include <stddef.h>

static uint64_t tlb_dropped(const TlbStats *s)
{
    return s->dropped_cr3 + s->dropped_invlpg + s->dropped_pcid + s->dropped_pge;
}

bool measure_syscall(Machine *m, KernelBody *kb, const SyscallCall *call,
                     SyscallCost *out, GError **err)
{
    /* The counters are live structs, read before and after the call. */
    Cpu *cpu = machine_cpu(m);
    Mmu *mmu = machine_mmu(m);
    const MmuStats *ms = mmu_stats(mmu);
    const TlbStats *ts = tlb_hier_stats(mmu_tlb(mmu));
    const CpuCosts *cost = cpu_costs(cpu);
    uint64_t c0 = cpu_cycles(cpu), i0 = cpu_insns(cpu), w0 = ms->walk_cycles, n0 = ms->walks;
    uint64_t cr0 = ms->cr3_writes, crc0 = ms->cr3_cycles, d0 = tlb_dropped(ts);
    kbody_set_call(kb, call);
    if (!machine_syscall(m, call->profile->nr, NULL, NULL, err))
        return false;
    const KBodyCost *b = kbody_last(kb);
    SyscallCost c = {
        .cycles = cpu_cycles(cpu) - c0,
        .insns = cpu_insns(cpu) - i0,
        .walks = ms->walk_cycles - w0,
        .nwalks = ms->walks - n0,
        .cr3_writes = ms->cr3_writes - cr0,
        .tlb_dropped = tlb_dropped(ts) - d0,
        .uaccess = b->uaccess,
        .body = b->body,
        .kmaps = b->kmaps,
    };
    c.cr3 = c.cr3_writes * cost->mov_cr3 + (ms->cr3_cycles - crc0);
    uint64_t parts = c.cr3 + c.walks + c.uaccess + c.body;
    c.base = c.cycles > parts ? c.cycles - parts : 0;
    *out = c;
    return true;
}

bool measure_repeat(const MachineConfig *cfg, const SyscallCall *call, unsigned warmup,
                    unsigned count, SyscallCost *sum, GError **err)
{
    Machine *m = machine_new(cfg, err);
    if (!m)
        return false;
    KernelBody *kb = kbody_new(m, err);
    bool ok = kb != NULL;
    SyscallCall c = *call;
    uint32_t bytes = MAX(c.bytes_in, c.bytes_out);
    uint32_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    if (ok && pages) {
        ok = machine_map_user(m, machine_current(m), c.user_buf, pages, true, err);
        c.user_buf_bytes = pages * PAGE_SIZE;
    }
    SyscallCost one;
    for (unsigned i = 0; ok && i < warmup; i++)
        ok = measure_syscall(m, kb, &c, &one, err);
    for (unsigned i = 0; ok && i < count; i++)
        if ((ok = measure_syscall(m, kb, &c, &one, err)))
            syscall_cost_add(sum, &one);
    kbody_free(kb);
    machine_free(m);
    return ok;
}

static const struct { const char *name, *column, *desc; size_t off; } fields[] = {
#define X(n, col, d) { #n, col, d, offsetof(SyscallCost, n) },
    SYSCALL_COST_FIELDS(X)
#undef X
};

size_t syscall_cost_count(void) { return G_N_ELEMENTS(fields); }
const char *syscall_cost_name(size_t i) { return fields[i].name; }
const char *syscall_cost_desc(size_t i) { return fields[i].desc; }
const char *syscall_cost_column(size_t i) { return fields[i].column; }
uint64_t syscall_cost_value(const SyscallCost *c, size_t i)
{
    return *(const uint64_t *)((const char *)c + fields[i].off);
}

/* Field by field from the same list (not through the offset table): it
 * runs once per replayed syscall. */
void syscall_cost_add(SyscallCost *sum, const SyscallCost *c)
{
#define X(n, col, d) sum->n += c->n;
    SYSCALL_COST_FIELDS(X)
#undef X
}
