/* The environment of `vmsplit run`: one ring-3 program in a PAE address
 * space, under a minimal ring-0 runtime (workloads/guest/runtime/runenv.asm)
 * that the core executes like any other guest code. Until the kernel model
 * provides real layouts this is a 3G/1G-style space:
 *
 *   0x08048000..          the program (ET_REL packed here as ld would;
 *                         ET_EXEC at its own addresses), 4 KiB user pages,
 *                         writable only where the ELF says, NX elsewhere
 *                         when the preset has NX
 *   0xBFFC0000-0xBFFFFFFF user stack (256 KiB), ESP = 0xBFFFFFF0
 *   0xC0000000..          kernel: supervisor pages at physical +0, global
 *                         when the preset has PGE: GDT 0xC0001000, IDT
 *                         0xC0002000, TSS 0xC0003000, boot data 0xC0004000,
 *                         kernel stack up to 0xC0010000, runtime code
 *                         0xC0100000
 *
 * GDT (Linux's order): 0x08 kernel code, 0x10 kernel data, 0x1B user code,
 * 0x23 user data, 0x28 TSS. IDT: vectors 0-31 to reporting stubs (3 and 4
 * callable from ring 3), 0x80 a DPL-3 trap gate to int80_entry, the rest
 * not present. The runtime reaches C through two I/O ports (below): the
 * system calls exit (EAX=1, EBX=status) and write (EAX=4, EBX=fd 1 or 2,
 * ECX=buffer, EDX=length), and a fatal-exception report. The C hooks read
 * guest memory with supervisor references through the MMU (modelled like
 * the kernel's own copy would be). */
#ifndef VMSPLIT_CPU_RUNENV_H
#define VMSPLIT_CPU_RUNENV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "preset/preset.h"

#define RUNENV_PORT_SYSCALL 0xE0 /* keep in step with runenv.asm */
#define RUNENV_PORT_FAULT 0xE1

#define RUNENV_USER_BASE 0x08048000u
#define RUNENV_USER_STACK_TOP 0xC0000000u
#define RUNENV_KERNEL_BASE 0xC0000000u

#define RUNENV_ERROR (runenv_error_quark())
GQuark runenv_error_quark(void);
typedef enum {
    RUNENV_ERROR_RUNTIME,        /* the runtime object is missing or bad */
    RUNENV_ERROR_PROGRAM,        /* the program does not fit the layout */
    RUNENV_ERROR_SETUP,          /* the core refused the environment */
} RunEnvError;

typedef struct {
    const Preset *preset;        /* NULL: built-in defaults */
    bool no_decode_cache;
    bool no_mmu_shortcuts;       /* mmu_set_shortcuts(mmu, false) */
    /* Where write(1/2, ...) goes: NULL = the host's stdout / stderr. */
    GString *out, *err;
} RunEnvOptions;

typedef enum {
    RUNENV_READY,                /* loaded, not finished */
    RUNENV_EXITED,               /* exit() */
    RUNENV_FAULTED,              /* an exception the runtime cannot handle */
    RUNENV_TRIPLE_FAULT,
    RUNENV_HALTED,               /* HLT with nothing to wake it */
    RUNENV_BUDGET,               /* max instructions reached */
} RunEnvState;

/* A fatal exception as the runtime's stub reported it. */
typedef struct {
    uint8_t vector;
    uint32_t error_code;
    uint32_t eip, eflags, esp;
    uint16_t cs;
    uint32_t cr2;
    uint32_t regs[CPU_NREGS];    /* at the exception (ESP: the program's) */
} RunEnvFault;

typedef struct RunEnv RunEnv;

/* Build the machine: memory, MMU (with the preset's TLB and caches), core,
 * the runtime. */
RunEnv *runenv_new(const RunEnvOptions *opt, GError **err);
void runenv_free(RunEnv *e);

/* Load a program: an ELF32 object (ET_REL) or executable (ET_EXEC). Errors
 * name the file. Call once, before runenv_run. */
bool runenv_load(RunEnv *e, const char *path, GError **err);

/* Run until exit, a fatal fault, or max_insns steps (cpu_run: retired
 * instructions, exception deliveries, unfinished REP chunks). May be
 * called again after RUNENV_BUDGET. */
RunEnvState runenv_run(RunEnv *e, uint64_t max_insns);

RunEnvState runenv_state(const RunEnv *e);
int runenv_exit_status(const RunEnv *e);           /* EBX & 0xFF of exit() */
const RunEnvFault *runenv_fault(const RunEnv *e);
uint64_t runenv_syscalls(const RunEnv *e);
Cpu *runenv_cpu(RunEnv *e);
Mmu *runenv_mmu(RunEnv *e);
/* "#PF (error 0x6) at EIP 0x08048012, CR2 0x00000000, in ring 3" */
char *runenv_describe_fault(const RunEnv *e);

/* Where the runtime object is read from: $VMSPLIT_RUNTIME, else the build
 * tree's, else the installed one. */
char *runenv_runtime_path(void);

#endif
