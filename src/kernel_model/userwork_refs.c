/* The user-work loop's iterations as references: see userwork_refs.h. */
#include "kernel_model/userwork_refs.h"

#include <string.h>

#include "cpu/cpu_priv.h"            /* FETCH_BLOCK, FETCH_NONE */
#include "kernel_model/machine.h"    /* USER_WORK_INSNS_PER_ITER */
#include "mmu/mmu_priv.h"            /* mmu_translate_fast, mmu_access_fast */
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
    uint32_t blk = FETCH_NONE, a = head;
    for (unsigned k = 0; k < G_N_ELEMENTS(loop_len); k++) {
        uint32_t last = a + loop_len[k] - 1;
        if ((a & ~(FETCH_BLOCK - 1)) != blk) {
            plan_add(p, LOOP_FETCH, a);
            blk = a & ~(FETCH_BLOCK - 1);
        }
        if ((last & ~(FETCH_BLOCK - 1)) != blk) {
            blk = last & ~(FETCH_BLOCK - 1);
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

void loop_plan_run(const LoopPlan *p, Cpu *cpu, uint32_t va, uint32_t bytes, uint32_t stride,
                   uint64_t n, uint64_t own_cycles)
{
    Mmu *mmu = cpu_mmu(cpu);
    uint32_t eax = cpu_reg(cpu, REG_EAX), ebx = cpu_reg(cpu, REG_EBX);
    uint32_t ecx = cpu_reg(cpu, REG_ECX), end = va + bytes;
    for (uint64_t k = 0; k < n; k++) {
        for (unsigned j = 0; j < p->n; j++) {
            MmuFault f;
            uint8_t *h;
            uint64_t pa;
            switch (p->ref[j].kind) {
            case LOOP_FETCH:
                if (!mmu_translate_fast(mmu, p->ref[j].lin, ACCESS_EXEC, 3, &pa, &f))
                    g_assert_not_reached();
                break;
            case LOOP_LOAD:                  /* mov eax, [ebx]; add eax, ecx */
                h = mmu_access_fast(mmu, ebx, ACCESS_READ, 3, &f);
                g_assert(h);
                memcpy(&eax, h, 4);
                eax += ecx;
                break;
            case LOOP_STORE:                 /* mov [ebx], eax */
                h = mmu_access_fast(mmu, ebx, ACCESS_WRITE, 3, &f);
                g_assert(h);
                memcpy(h, &eax, 4);
                break;
            }
        }
        ebx += stride;                       /* add; cmp; cmovae */
        if (ebx >= end)
            ebx = va;
        ecx--;                               /* dec; jnz (taken) */
    }
    cpu_set_reg(cpu, REG_EAX, eax);
    cpu_set_reg(cpu, REG_EBX, ebx);
    cpu_set_reg(cpu, REG_ECX, ecx);
    cpu_add_user_work(cpu, n * own_cycles, n * USER_WORK_INSNS_PER_ITER);
}
