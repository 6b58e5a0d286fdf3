/* A user program on a booted machine: `vmsplit run --layout L`. Where
 * `vmsplit run` alone uses its own minimal 3G/1G runtime (cpu/runenv.h),
 * this runs the program as task 0 of a Machine (machine.h) booted with one
 * of the real layouts, so that every `int 0x80` it executes goes through
 * that layout's NASM entry/exit stubs with their CR3 writes, and the TLB
 * and caches see what the layout makes them see.
 *
 * Loading is execve's job done at setup (not modelled): the model's
 * synthetic user code page at USER_CODE_VA is unmapped from task 0, the
 * program's sections (ET_REL, packed from USER_CODE_VA as ld would) or
 * PT_LOAD segments (ET_EXEC, at their own addresses) are copied into fresh
 * user frames, read-only unless the ELF says writable, and the user stack
 * grows to GUESTPROG_STACK_PAGES below the layout's stack top. Everything
 * the program touches must lie in [0x1000, the stack's bottom): the user
 * range is the layout's, so a program linked at 0xC0000000 fits 4g4g
 * (TASK_SIZE 0xFF000000) and is an error under 3g1g. The statistics are
 * zeroed once the program is loaded: the report covers the program only
 * (the machine's caches and TLBs stay as the boot left them).
 *
 * The guest ABI is `vmsplit run`'s (Linux i386 numbers): EAX = 1 exit(EBX),
 * EAX = 4 write(EBX = fd 1 or 2, ECX = buffer, EDX = length) -> bytes
 * written, -EBADF, -EFAULT; any other number -> -ENOSYS. The syscall body
 * (the model's C shortcut behind the stubs' hypercall) does the copy from
 * user space as the layout does it, with modelled kernel references:
 *   direct     (shared layouts, kpti) access_ok, then __copy_user through
 *              the user mappings: one user-side read and one kernel-buffer
 *              write per 64-byte line, one string iteration per dword
 *   indirect   (4g4g) per user page: a software walk of the task's user
 *              page tables (three entry reads through the direct map),
 *              kmap_atomic (a fixmap PTE write, one INVLPG), the copy
 *              through the kmap address, KBODY_RW_VM_INSNS instructions
 * The bytes reach the host's stdout/stderr (or GuestProgOptions.out/err).
 * Nothing else of sys_write (file table, tty driver) is modelled or
 * charged. exit ends the run inside the kernel, when its body starts: it
 * never returns to user mode, so a program with N completed system calls
 * makes 2N + 1 CR3 writes under 4g4g and kpti, none under the shared ones.
 *
 * sysenter: a program that defines a global `sysenter_return` label may
 * enter with the model's convention (stubs/user.asm: push ecx; push edx;
 * push ebp; mov ebp, esp; sysenter; then at sysenter_return pop ebp; pop
 * edx; pop ecx); SYSEXIT comes back there. Without that label SYSENTER_CS
 * is left 0, so a SYSENTER raises #GP(0) (SDM Vol. 2B SYSENTER) and is
 * reported as the guest's fault rather than returning into the unknown.
 *
 * Guest faults: the kernel model installs no exception handlers, so an
 * exception in the program cannot be delivered (#GP on the missing gate,
 * then #DF, then a triple fault); the report names the original exception,
 * its error code, EIP, ring and CR2, as `vmsplit run` does. Data pages are
 * not marked NX (the user mapping interface has no NX bit). */
#ifndef VMSPLIT_KERNEL_MODEL_GUESTPROG_H
#define VMSPLIT_KERNEL_MODEL_GUESTPROG_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel_model/machine.h"

#define GUESTPROG_STACK_PAGES 64     /* 256 KiB, as `vmsplit run` gives */

#define GUESTPROG_ERROR (guestprog_error_quark())
GQuark guestprog_error_quark(void);
typedef enum {
    GUESTPROG_ERROR_PROGRAM,     /* no entry point, or outside the user range */
    GUESTPROG_ERROR_SETUP,       /* the machine could not be prepared */
} GuestProgError;

typedef struct {
    MachineConfig machine;       /* preset, layout, ram, stubs, tlb */
    bool no_decode_cache;
    bool no_mmu_shortcuts;       /* the MMU's memos of TLB hits off (mmu_set_shortcuts) */
    GString *out, *err;          /* write(1/2) sinks; NULL: the host's */
} GuestProgOptions;

typedef enum {
    GUESTPROG_READY,             /* loaded, not finished */
    GUESTPROG_EXITED,            /* exit() */
    GUESTPROG_FAULTED,           /* an exception the machine cannot handle */
    GUESTPROG_HALTED,            /* HLT in the kernel with nothing to wake it
                                  * (only user --stubs can do that) */
    GUESTPROG_BUDGET,            /* the step budget ran out */
} GuestProgState;

/* The exception that ended the run. */
typedef struct {
    uint8_t vector;
    uint32_t error_code;
    uint32_t eip, cr2;
    int cpl;
    bool triple;                 /* it could not be delivered (see above) */
    uint32_t regs[8];            /* at the fault (triple faults only) */
    uint32_t eflags;
} GuestProgFault;

/* Figures since the program's first instruction. */
typedef struct {
    uint64_t insns, insns_user, cycles;
    uint64_t syscalls;           /* bodies run (exit included) */
    uint64_t bytes_written;      /* by write() */
    uint64_t kmaps;              /* 4g4g: kmap_atomic calls of the copies */
} GuestProgStats;

typedef struct GuestProg GuestProg;

/* Boot the machine and load the ELF object or executable at path. Errors
 * name the file; GUESTPROG_ERROR_PROGRAM for a program that does not fit. */
GuestProg *guestprog_new(const GuestProgOptions *opt, const char *path, GError **err);
void guestprog_free(GuestProg *g);

/* Run until exit, a fault or max_steps steps (cpu_run's steps: the stubs'
 * instructions count too). May be called again after GUESTPROG_BUDGET. */
GuestProgState guestprog_run(GuestProg *g, uint64_t max_steps);

GuestProgState guestprog_state(const GuestProg *g);
int guestprog_exit_status(const GuestProg *g);     /* EBX & 0xFF of exit() */
const GuestProgFault *guestprog_fault(const GuestProg *g);
GuestProgStats guestprog_stats(const GuestProg *g);
Machine *guestprog_machine(GuestProg *g);
uint32_t guestprog_entry(const GuestProg *g);
/* "#PF (vector 14, error code 0x7) at EIP 0x08048000 in ring 3, CR2
 * 0xc0000000" and, for a triple fault, why and the registers. */
char *guestprog_describe_fault(const GuestProg *g);

#endif
