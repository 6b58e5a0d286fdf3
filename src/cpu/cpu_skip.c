/* Work the core is told about instead of executing it: the user-work
 * fast-forward (src/kernel_model/userwork.c) runs a loop's periods on the
 * core until the memory system repeats its state, then accounts the
 * remaining identical periods at once. Two things it needs from the core:
 *   - cpu_add_user_work: charge their base cycles and count their
 *     instructions as retired at CPL 3 (cpu_add_work counts kernel work);
 *   - cpu_append_model_state: the core's modelled state that decides its
 *     future memory references besides registers and memory (EIP, CPL,
 *     the last fetch block, pending events), so that a snapshot taken at a
 *     period boundary covers the front end too. The decoded-instruction
 *     cache is a host-speed shortcut and is left out.
 * A field added to struct Cpu that changes which references the core makes
 * belongs in cpu_append_model_state. */
#include "cpu/cpu_priv.h"

void cpu_add_user_work(Cpu *c, uint64_t cycles, uint64_t insns)
{
    c->cycles += cycles;
    c->insns += insns;
    c->insns_user += insns;
}

void cpu_append_model_state(const Cpu *c, GByteArray *out)
{
    uint64_t s[6] = { c->eip, (uint64_t)(int64_t)c->cpl, c->fetch_blk, c->pending,
                      c->seg[SEG_CS].base, c->eflags & (EFLAGS_IF | EFLAGS_TF) };
    g_byte_array_append(out, (const guint8 *)s, sizeof s);
}
