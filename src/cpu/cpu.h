/* The i686 core: a 32-bit protected-mode interpreter that executes real x86
 * machine code against the modelled memory system (src/mmu/mmu.h) and counts
 * cycles. The 4G/4G cost the project measures comes from instructions such as
 * `mov cr3, eax`, `iret` and `sysexit` run by this core, so it models what
 * those instructions do architecturally (Intel SDM Vol. 2 and Vol. 3A ch. 5-7)
 * and charges what they cost; it does not model a pipeline.
 *
 * What is executed: the integer instruction set of a P6/P4-class part in
 * 32-bit protected mode (no real mode, no virtual-8086 mode, no FPU/MMX/SSE,
 * no 16-bit code segments, no task switching, no LDT, no call gates). Anything
 * else raises #UD (or #GP where the SDM says so) in the guest; the simulator
 * never aborts on guest input.
 *
 * Cycle model (cpu_cycles; RDTSC reads the same counter):
 *   cycles = sum of base costs of retired instructions        (CpuCosts)
 *          + the preset's extra costs of special operations   (CpuCosts)
 *          + every memory-system cycle                        (mmu_stats()->cycles)
 *   - base cost by class: alu (also mov, lea, push/pop, setcc, not-taken
 *     branches, segment loads, ...), mul, div, branch (taken jumps, calls,
 *     rets, loops, far transfers), string_iter per iteration of a string
 *     instruction, serializing (cpuid, rdmsr, wrmsr, lgdt, lidt, ltr,
 *     lldt, wbinvd), io (IN/OUT, and per iteration of INS/OUTS).
 *   - special: mov_cr3 (the PDPTE loads are memory cycles, charged by the
 *     MMU), mov_cr_other (CR0/CR4, LMSW, CLTS), invlpg, int_gate for every delivery
 *     through the IDT (INT n, exceptions, interrupts), iret, sysenter,
 *     sysexit.
 *   - memory: data reads and writes (read-modify-write instructions read
 *     with write intent, then write), stack references, descriptor-table
 *     and TSS reads (supervisor references, cpl 0), and instruction fetch.
 *   Instruction fetch is modelled per 16-byte fetch block, as the P6 front
 *   end fetches 16-byte aligned blocks (Intel's P6 optimization manuals): an
 *   instruction makes one fetch reference (an ITLB lookup through
 *   mmu_translate with ACCESS_EXEC; the MMU charges translation only, code
 *   bytes are assumed to hit, see mmu.h) for each 16-byte block it occupies
 *   that is not the block fetched last; every taken control transfer,
 *   fault, interrupt, CR0/CR3/CR4/EFER write and INVLPG starts a new block.
 *   This is a modelling choice: a P4 serves most fetches from its trace
 *   cache without the ITLB, so ITLB lookups (not misses) are an upper bound
 *   for it.
 *   Not modelled: pipelining, out-of-order overlap of memory latency with
 *   execution, branch prediction, the trace cache, partial-register stalls,
 *   locked-operation costs, segment-load microcode beyond its memory reads,
 *   debug exceptions (TF single-step, debug registers), alignment checks
 *   (AC), the #UD that LOCK on a non-lockable instruction raises (LOCK is
 *   accepted everywhere), WBINVD's effect on the caches.
 *   A faulting instruction is not charged its base cost (it did not retire);
 *   its memory references and the delivery are. A REP string instruction
 *   runs in chunks of 64 iterations (interruptible between them, as on
 *   hardware) and retires once.
 *
 * The decoded-instruction cache and the decoded blocks built on it
 * (cpu_set_decode_cache turns both on or off; block.c) are host-speed
 * shortcuts only: keyed by the physical address the modelled fetch
 * produced, validated against the bytes in physical memory (per
 * instruction, or per block entry with stores into the running code page
 * ending the block), they make exactly the same modelled references with
 * and without them (tests/cpu/test_cpu_dcache.c).
 *
 * Initial state (cpu_new, cpu_reset): what a boot loader leaves behind —
 * protected mode (CR0.PE=1, paging off), CPL 0, every segment register
 * loaded with a flat 4 GiB segment (selector 0x08 for CS, 0x10 for the
 * others, hidden parts set directly: no GDT is read until the guest loads a
 * segment), EFLAGS=0x2, GDTR/IDTR/TR empty, general registers zero. */
#ifndef VMSPLIT_CPU_CPU_H
#define VMSPLIT_CPU_CPU_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "preset/preset.h"
#include "mmu/mmu.h"

typedef struct Cpu Cpu;

/* Bytes per modelled fetch block (above): a run of fetches makes one ITLB
 * reference per block it enters. userwork_refs.c replays the same rule. */
#define CPU_FETCH_BLOCK 16u

typedef enum {
    REG_EAX, REG_ECX, REG_EDX, REG_EBX, REG_ESP, REG_EBP, REG_ESI, REG_EDI,
    CPU_NREGS
} CpuReg;

typedef enum { SEG_ES, SEG_CS, SEG_SS, SEG_DS, SEG_FS, SEG_GS, CPU_NSEGS } CpuSeg;

/* EFLAGS bits (SDM Vol. 1 §3.4.3). */
#define EFLAGS_CF (1u << 0)
#define EFLAGS_FIXED1 (1u << 1)  /* always 1 */
#define EFLAGS_PF (1u << 2)
#define EFLAGS_AF (1u << 4)
#define EFLAGS_ZF (1u << 6)
#define EFLAGS_SF (1u << 7)
#define EFLAGS_TF (1u << 8)
#define EFLAGS_IF (1u << 9)
#define EFLAGS_DF (1u << 10)
#define EFLAGS_OF (1u << 11)
#define EFLAGS_IOPL (3u << 12)
#define EFLAGS_NT (1u << 14)
#define EFLAGS_RF (1u << 16)
#define EFLAGS_VM (1u << 17)
#define EFLAGS_AC (1u << 18)
#define EFLAGS_ID (1u << 21)
#define EFLAGS_ARITH (EFLAGS_CF | EFLAGS_PF | EFLAGS_AF | EFLAGS_ZF | EFLAGS_SF | EFLAGS_OF)

/* Exception vectors (SDM Vol. 3A Table 6-1). */
#define VEC_DE 0
#define VEC_DB 1
#define VEC_BP 3
#define VEC_OF 4
#define VEC_UD 6
#define VEC_NM 7
#define VEC_DF 8
#define VEC_TS 10
#define VEC_NP 11
#define VEC_SS 12
/* VEC_GP 13 and VEC_PF 14 come from mmu/pae.h. */

/* Model-specific registers the core implements (SDM Vol. 4). */
#define MSR_TSC 0x10
#define MSR_SYSENTER_CS 0x174
#define MSR_SYSENTER_ESP 0x175
#define MSR_SYSENTER_EIP 0x176
#define MSR_EFER 0xC0000080u

typedef enum {
    CPU_STOP_NONE,
    CPU_STOP_MAX_INSNS,          /* the instruction budget ran out */
    CPU_STOP_HLT,                /* HLT with no interrupt pending */
    CPU_STOP_EXIT,               /* a port hook asked to stop (guest exit) */
    CPU_STOP_TRIPLE_FAULT,       /* see cpu_triple_fault() */
    CPU_STOP_BREAKPOINT,         /* EIP reached a cpu_set_breakpoints address */
} CpuStop;

const char *cpu_stop_name(CpuStop s);

/* Events the kernel model (and tests) can observe. Hooks run synchronously
 * after the event took effect (the new CS:EIP is already loaded). */
typedef enum {
    CPU_EV_EXCEPTION,            /* a fault/trap raised by an instruction */
    CPU_EV_SOFT_INT,             /* INT n, INT3, INTO */
    CPU_EV_INTERRUPT,            /* an external interrupt (cpu_raise_irq) */
    CPU_EV_IRET,
    CPU_EV_SYSENTER,
    CPU_EV_SYSEXIT,
    CPU_EV_CR3_WRITE,
    CPU_EV_TRIPLE_FAULT,
} CpuEventKind;

typedef struct {
    CpuEventKind kind;
    uint8_t vector;              /* delivery events */
    bool has_error;
    uint32_t error_code;
    uint32_t cr2;                /* for #PF */
    uint32_t from_eip;           /* EIP of the instruction that caused it */
    int from_cpl, to_cpl;
    uint64_t cycles;             /* cpu_cycles() after the event */
} CpuEvent;

typedef void (*CpuEventHook)(Cpu *cpu, const CpuEvent *ev, void *user);

/* Diagnostic of a triple fault: the three exceptions (the original one, the
 * one raised while delivering it, and the one raised while delivering #DF)
 * and the registers at the faulting instruction. */
typedef struct {
    uint8_t vectors[3];
    uint32_t error_codes[3];
    uint32_t eip;
    uint32_t regs[CPU_NREGS];
    uint32_t eflags;
    uint16_t cs, ss;
    uint32_t cr2, cr3;
} CpuTripleFault;

/* ---- lifetime ---- */

/* preset may be NULL: the documented default costs (cpu_default_costs). */
Cpu *cpu_new(Mmu *mmu, const Preset *preset);
void cpu_free(Cpu *cpu);
void cpu_reset(Cpu *cpu);
Mmu *cpu_mmu(Cpu *cpu);
const CpuCosts *cpu_costs(const Cpu *cpu);
/* Costs used when no preset is given: 1 cycle per simple operation and
 * round P6-class figures elsewhere; estimates for unit tests only. */
const CpuCosts *cpu_default_costs(void);

/* ---- running ---- */

/* Execute at most max_insns steps; returns why it stopped. A step is a
 * retired instruction, an exception delivery, or a chunk of 64 iterations
 * of a REP string instruction that is not finished yet. May be called
 * again to continue. */
CpuStop cpu_run(Cpu *cpu, uint64_t max_insns);
/* Execute one instruction (or deliver one pending event). */
CpuStop cpu_step(Cpu *cpu);
uint64_t cpu_cycles(const Cpu *cpu);
/* Charge work modelled outside the interpreter: the kernel model's syscall
 * bodies (the one C shortcut, reached through a hypercall port) add their
 * instructions' base cost here; their memory references go through the MMU
 * as usual. Counted as kernel instructions. */
void cpu_add_work(Cpu *cpu, uint64_t cycles, uint64_t insns);
uint64_t cpu_insns(const Cpu *cpu);
uint64_t cpu_insns_user(const Cpu *cpu);   /* retired instructions fetched at CPL 3 */
void cpu_add_user_work(Cpu *cpu, uint64_t cycles, uint64_t insns); /* cpu_skip.c: work at CPL 3 accounted, not run */
void cpu_append_model_state(const Cpu *cpu, GByteArray *out); /* cpu_skip.c: EIP, CPL, fetch block, pending */
const CpuTripleFault *cpu_triple_fault(const Cpu *cpu);
/* "triple fault at EIP ...: #PF(0x2), then #PF, then #GP; registers ..." */
char *cpu_describe_triple_fault(const Cpu *cpu);
/* Host-speed shortcut on/off (default on). Changes no modelled figure. */
void cpu_set_decode_cache(Cpu *cpu, bool on);
/* Host-side breakpoints (not the guest's DR0-3): cpu_run stops with
 * CPU_STOP_BREAKPOINT before executing an instruction at one of these
 * linear addresses, except the first instruction of the run. They cost the
 * guest nothing. At most CPU_MAX_BREAKPOINTS; n = 0 clears them. */
#define CPU_MAX_BREAKPOINTS 4
void cpu_set_breakpoints(Cpu *cpu, const uint32_t *eips, unsigned n);
/* Ask the core to stop at the next instruction boundary (from a hook). */
void cpu_request_stop(Cpu *cpu, CpuStop why);

/* External interrupt: delivered through the IDT at the next instruction
 * boundary at which EFLAGS.IF=1 (wakes HLT). One pending vector at a time. */
void cpu_raise_irq(Cpu *cpu, uint8_t vector);

void cpu_set_event_hook(Cpu *cpu, CpuEventHook hook, void *user);

/* ---- registers ---- */

uint32_t cpu_reg(const Cpu *cpu, CpuReg r);
void cpu_set_reg(Cpu *cpu, CpuReg r, uint32_t v);
uint32_t cpu_eip(const Cpu *cpu);
void cpu_set_eip(Cpu *cpu, uint32_t eip);
uint32_t cpu_eflags(const Cpu *cpu);
/* Sets every EFLAGS bit (bit 1 forced to 1, reserved bits cleared). */
void cpu_set_eflags(Cpu *cpu, uint32_t v);
int cpu_cpl(const Cpu *cpu);
uint16_t cpu_seg_selector(const Cpu *cpu, CpuSeg s);
uint32_t cpu_seg_base(const Cpu *cpu, CpuSeg s);
uint32_t cpu_cr2(const Cpu *cpu);
uint64_t cpu_msr(const Cpu *cpu, uint32_t msr);

/* Architectural loads done as the guest would do them (descriptor reads
 * through the MMU, all checks; their references and costs are counted as
 * the guest's would be). On failure return false with the exception that
 * the guest would have taken in vec and err (nothing changed). CS is
 * loaded as by a far JMP at privilege level RPL, which becomes the CPL. */
bool cpu_load_segment(Cpu *cpu, CpuSeg s, uint16_t sel, uint8_t *vec, uint32_t *err);
bool cpu_write_cr(Cpu *cpu, int n, uint32_t v, uint8_t *vec, uint32_t *err);
bool cpu_write_msr(Cpu *cpu, uint32_t msr, uint64_t v);
void cpu_set_gdtr(Cpu *cpu, uint32_t base, uint16_t limit);
void cpu_set_idtr(Cpu *cpu, uint32_t base, uint16_t limit);
bool cpu_load_tr(Cpu *cpu, uint16_t sel, uint8_t *vec, uint32_t *err);

/* Guest linear memory as the kernel would touch it (supervisor references
 * through the MMU, modelled and counted): naturally aligned pieces of 4, 2
 * or 1 bytes, one reference each, as dword loads/stores or `rep movsl`
 * with a byte tail would make. Return false on a fault. */
bool cpu_read_linear(Cpu *cpu, uint32_t lin, void *buf, size_t n);
bool cpu_write_linear(Cpu *cpu, uint32_t lin, const void *buf, size_t n);

#endif
