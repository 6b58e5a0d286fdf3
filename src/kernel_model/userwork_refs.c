/* The user-work loop's iterations as references: see userwork_refs.h. */
#include "kernel_model/userwork_refs.h"

#include <string.h>

#include "cpu/cpu.h"                 /* CPU_FETCH_BLOCK */
#include "kernel_model/machine.h"    /* USER_WORK_INSNS_PER_ITER */
#include "mmu/mmu_fast.h"            /* mmu_translate_fast, mmu_access_fast */
#include "mmu/mmu_state.h"

/* stubs/user.asm from .loop, as NASM assembles it, and its instructions'
 * lengths: mov eax, [ebx]; add eax, ecx; mov [ebx], eax; add ebx, edx;
 * cmp ebx, ebp; cmovae ebx, esi; dec ecx; jnz .loop. */
static const uint8_t loop_code[] = { 0x8b, 0x03, 0x01, 0xc8, 0x89, 0x03, 0x01, 0xd3,
                                     0x39, 0xeb, 0x0f, 0x43, 0xde, 0x49, 0x75, 0xf0 };
static const uint8_t loop_len[] = { 2, 2, 2, 2, 2, 3, 1, 2 };
enum { LOAD_INSN = 0, STORE_INSN = 2 };
G_STATIC_ASSERT(G_N_ELEMENTS(loop_len) == USER_WORK_INSNS_PER_ITER);

static void plan_add(LoopPlan *p, LoopRefKind kind, uint32_t lin)
{
    g_assert(p->n < LOOP_MAX_REFS);
    p->ref[p->n++] = (LoopRef){ kind, lin };
}

/* Whether the code at head is loop_code, read with no modelled reference. */
static bool is_loop(Cpu *cpu, uint32_t head)
{
    Mmu *m = cpu_mmu(cpu);
    MmuPeekCache pc = MMU_PEEK_CACHE_INIT;
    for (uint32_t k = 0; k < sizeof loop_code; k++) {
        uint64_t pa;
        if (!mmu_state_peek_cached(m, head + k, &pc, &pa) ||
            physmem_read8(mmu_physmem(m), pa) != loop_code[k])
            return false;
    }
    return true;
}

bool loop_plan_make(LoopPlan *p, Cpu *cpu, uint32_t head)
{
    if (!is_loop(cpu, head))
        return false;
    /* fetch_insn's two tests per instruction, from the block a taken JNZ
     * leaves (none). */
    p->n = 0;
    uint32_t blk = 1, a = head;      /* 1: no block (blocks are aligned) */
    for (unsigned k = 0; k < G_N_ELEMENTS(loop_len); k++) {
        uint32_t last = a + loop_len[k] - 1;
        if ((a & ~(CPU_FETCH_BLOCK - 1)) != blk) {
            plan_add(p, LOOP_FETCH, a);
            blk = a & ~(CPU_FETCH_BLOCK - 1);
        }
        if ((last & ~(CPU_FETCH_BLOCK - 1)) != blk) {
            blk = last & ~(CPU_FETCH_BLOCK - 1);
            plan_add(p, LOOP_FETCH, blk);
        }
        if (k == LOAD_INSN)
            plan_add(p, LOOP_LOAD, 0);
        else if (k == STORE_INSN)
            plan_add(p, LOOP_STORE, 0);
        a += loop_len[k];
    }
    return true;
}

/* The loop's registers while its iterations are made. */
typedef struct {
    uint32_t eax, ebx, ecx;
} LoopRegs;

static Access ref_access(LoopRefKind kind)
{
    return kind == LOOP_FETCH ? ACCESS_EXEC : kind == LOOP_LOAD ? ACCESS_READ : ACCESS_WRITE;
}

/* One iteration, each reference through the MMU's entry points as the core
 * makes it (a miss walks and fills; memos are made). */
static void iteration(const LoopPlan *p, Mmu *mmu, LoopRegs *r)
{
    for (unsigned j = 0; j < p->n; j++) {
        MmuFault f;
        uint8_t *h;
        uint64_t pa;
        switch (p->ref[j].kind) {
        case LOOP_FETCH:
            if (!mmu_translate_fast(mmu, p->ref[j].lin, ACCESS_EXEC, 3, &pa, &f))
                g_assert_not_reached();
            break;
        case LOOP_LOAD:                      /* mov eax, [ebx]; add eax, ecx */
            h = mmu_access_fast(mmu, r->ebx, ACCESS_READ, 3, &f);
            g_assert(h);
            memcpy(&r->eax, h, 4);
            r->eax += r->ecx;
            break;
        case LOOP_STORE:                     /* mov [ebx], eax */
            h = mmu_access_fast(mmu, r->ebx, ACCESS_WRITE, 3, &f);
            g_assert(h);
            memcpy(h, &r->eax, 4);
            break;
        }
    }
}

/* Up to n iterations at once while memos answer every reference of the
 * plan and the cursor stays in its page without wrapping; returns how
 * many (0 if a memo does not answer). Each reference would be a memo hit
 * (mmu_access_fast, mmu_translate_fast): nothing in between fills,
 * invalidates or flushes a TLB entry, so the memos found for the first
 * iteration answer all, and their hits are counted in one go
 * (mmu_memo_hit_rounds); each iteration's load and store make their
 * cache references in order (mmu_time_phys_fast is the hit path's). */
static uint64_t iterations_on_memos(const LoopPlan *p, Mmu *mmu, LoopRegs *r, uint32_t end,
                                    uint32_t stride, uint64_t n)
{
    const MmuMemo *mm[LOOP_MAX_REFS], *load = NULL, *store = NULL;
    Access access[LOOP_MAX_REFS];
    for (unsigned j = 0; j < p->n; j++) {
        access[j] = ref_access(p->ref[j].kind);
        uint32_t lin = p->ref[j].kind == LOOP_FETCH ? p->ref[j].lin : r->ebx;
        if (!(mm[j] = mmu_memo_find(mmu, lin, access[j], 3)))
            return 0;
        if (p->ref[j].kind == LOOP_LOAD)
            load = mm[j];
        else if (p->ref[j].kind == LOOP_STORE)
            store = mm[j];
    }
    uint32_t off = r->ebx & (PAGE_SIZE - 1);
    n = MIN(n, (PAGE_SIZE - 4 - off) / stride + 1);           /* in the page */
    n = MIN(n, ((uint64_t)end - r->ebx + stride - 1) / stride);   /* before the wrap */
    for (uint64_t i = 0; i < n; i++, off += stride, r->ecx--) {
        uint32_t v;
        mmu_time_phys_fast(mmu, load->pa | off, false);
        memcpy(&v, load->host + off, 4);
        r->eax = v + r->ecx;
        mmu_time_phys_fast(mmu, store->pa | off, true);
        memcpy(store->host + off, &r->eax, 4);
    }
    mmu_memo_hit_rounds(mmu, mm, access, p->n, n);
    r->ebx += (uint32_t)(n * stride);
    return n;
}

void loop_plan_run(const LoopPlan *p, Cpu *cpu, uint32_t va, uint32_t bytes, uint32_t stride,
                   uint64_t n, uint64_t own_cycles)
{
    Mmu *mmu = cpu_mmu(cpu);
    LoopRegs r = { cpu_reg(cpu, REG_EAX), cpu_reg(cpu, REG_EBX), cpu_reg(cpu, REG_ECX) };
    uint32_t end = va + bytes;
    for (uint64_t k = 0; k < n;) {
        uint64_t done = iterations_on_memos(p, mmu, &r, end, stride, n - k);
        if (!done) {
            iteration(p, mmu, &r);
            r.ebx += stride;
            r.ecx--;
            done = 1;
        }
        if (r.ebx >= end)                    /* add; cmp; cmovae */
            r.ebx = va;
        k += done;
    }
    cpu_set_reg(cpu, REG_EAX, r.eax);
    cpu_set_reg(cpu, REG_EBX, r.ebx);
    cpu_set_reg(cpu, REG_ECX, r.ecx);
    cpu_add_user_work(cpu, n * own_cycles, n * USER_WORK_INSNS_PER_ITER);
}
