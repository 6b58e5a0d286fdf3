/* Iterations of the user-work loop (stubs/user.asm, from user_work_loop)
 * made as the memory references the core makes for them, without
 * interpreting its instructions: a host-speed shortcut of the
 * fast-forward (userwork.c) for the iterations it cannot skip.
 *
 * Per iteration the core makes, in order: the fetch references of the
 * loop's fetch blocks (cpu.c fetch_insn: one when an instruction's first
 * byte, or its last, lies in another block than the current one; the
 * taken JNZ forgets the block, cpu_jump), the load of [EBX] and the store
 * to it, interleaved with them as the instructions come; it retires 8
 * instructions and charges each its fixed cost (the Jcc's cost taken),
 * the memory system charging the rest (mmu_stats cycles). The plan lists
 * those references for the loop's address, and a run makes them through
 * the MMU's own entry points (mmu_translate_fast and mmu_access_fast, as
 * the core calls them), updates the words, EAX, EBX and ECX as the
 * instructions would, and accounts the instructions and their fixed
 * cycles (measured by the caller over a period the core ran).
 *
 * Valid only where the caller checked what the plan assumes: the core at
 * the loop head, at CPL 3 with no fetch block current and nothing pending
 * (its front end as after a taken JNZ); every iteration's JNZ taken (ECX
 * above the count); no reference that can fault (the core ran a period
 * over the same pages just before, and nothing changed the page tables);
 * aligned words (none crosses a page) and a working set that does not
 * wrap the address space (the CMP compares with ESI + EDI), nor does the
 * cursor's step past its last word. */
#ifndef VMSPLIT_KERNEL_MODEL_USERWORK_REFS_H
#define VMSPLIT_KERNEL_MODEL_USERWORK_REFS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"

#define LOOP_MAX_REFS 8          /* 16 code bytes: 2 fetch blocks at most, plus 2 data */

typedef enum { LOOP_FETCH, LOOP_LOAD, LOOP_STORE } LoopRefKind;

typedef struct {
    LoopRefKind kind;
    uint32_t lin;                /* a fetch reference's address */
} LoopRef;

typedef struct {
    LoopRef ref[LOOP_MAX_REFS];
    unsigned n;
} LoopPlan;

/* The references of one iteration of the loop at linear address head;
 * false if the bytes there (read from memory, no modelled reference) are
 * not the loop this plan describes (user.asm changed). */
bool loop_plan_make(LoopPlan *p, Cpu *cpu, uint32_t head);

/* Run n iterations as above over the words at va (bytes, stride), each
 * charging own_cycles of the core's own (fixed) cycles. */
void loop_plan_run(const LoopPlan *p, Cpu *cpu, uint32_t va, uint32_t bytes, uint32_t stride,
                   uint64_t n, uint64_t own_cycles);

#endif
