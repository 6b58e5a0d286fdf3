/* A simulated machine booted with one address-space layout: physical memory,
 * the memory system (TLBs, caches), the core, the kernel's page tables, the
 * NASM entry/exit stubs loaded where the layout puts them, a GDT, IDT and
 * TSS, and processes. The replay drives it one event at a time:
 *
 *   machine_syscall     the current task enters the kernel through the
 *                       stubs (int $0x80 or sysenter), the body runs
 *                       (MachineBodyFn, behind the hypercall port), and the
 *                       stubs return to user mode: every CR3 write, flush
 *                       and walk on the way is executed and counted
 *   machine_user_work   user-mode instructions touching a working set
 *   machine_switch_to   a timer interrupt whose handler schedules another
 *                       task (switch_mm/switch_to as each layout does it)
 *
 * What runs where (see stubs/common.inc):
 *   kernel text        page_offset + 1 MiB (the direct map)
 *   .entry, cpu_data,  the window (4g4g: 0xFF000000, kpti: the entry area),
 *   GDT, IDT, TSS,     mapped in both page tables; in the direct map for the
 *   entry stacks       shared layouts
 *   user code          USER_CODE_VA in every process (stubs/user.asm)
 *   user stack         below the layout's TASK_SIZE
 * The only C shortcut is the syscall body (and the C half of schedule()),
 * reached through `out` to HYPERCALL_PORT; its memory references go through
 * the modelled MMU as supervisor references. */
#ifndef VMSPLIT_KERNEL_MODEL_MACHINE_H
#define VMSPLIT_KERNEL_MODEL_MACHINE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "preset/preset.h"
#include "kernel_model/aspace.h"
#include "kernel_model/layout.h"
#include "kernel_model/userwork.h"

/* Linux 2.6 i386 GDT selectors (include/asm-i386/segment.h). */
#define KERNEL_CS 0x60
#define KERNEL_DS 0x68
#define USER_CS 0x73
#define USER_DS 0x7b
#define TSS_SEL 0x80
#define HYPERCALL_PORT 0xF4
#define HC_SYSCALL 1
#define HC_IRQ 2
#define HC_PAGEFAULT 3
#define IRQ_TIMER_VECTOR 0x20

#define USER_CODE_VA 0x08048000u
#define USER_WORK_INSNS_PER_ITER 8   /* the loop in stubs/user.asm */
#define MACHINE_MAX_TASKS 256
#define THREAD_SIZE 8192             /* 2.6 i386 kernel stacks (two pages) */

typedef struct Machine Machine;

/* The syscall body: nr and args from the saved pt_regs; returns the value
 * the stubs put in EAX. It charges its own work (machine_charge,
 * machine_kernel_read/write, uaccess) and may request a context switch
 * (machine_request_switch) to model a blocking call. */
typedef uint32_t (*MachineBodyFn)(Machine *m, uint32_t nr, const uint32_t args[6],
                                  void *user);

typedef struct {
    const Preset *preset;        /* NULL: unit-test costs, no caches */
    const Layout *layout;
    uint64_t ram;                /* bytes */
    const char *stubs;           /* ELF object; NULL: the build's stub */
    bool sysenter;               /* enter with sysenter instead of int $0x80 */
    const TlbHierConfig *tlb;    /* TLB geometry override; NULL: the preset's */
} MachineConfig;

Machine *machine_new(const MachineConfig *cfg, GError **err);
void machine_free(Machine *m);

Cpu *machine_cpu(Machine *m);
Mmu *machine_mmu(Machine *m);
KernelSpace *machine_kspace(Machine *m);
const Layout *machine_layout(const Machine *m);
void machine_set_body(Machine *m, MachineBodyFn fn, void *user);

/* Tasks. machine_new creates task 0 and leaves the core in its user mode.
 * machine_task_new makes a new task (fork): page tables, kernel stack, the
 * user code and stack mapped, a saved frame that returns 0 to user mode. */
int machine_task_new(Machine *m, GError **err);
void machine_task_free(Machine *m, int task);    /* exit; not the current one */
int machine_current(const Machine *m);
unsigned machine_ntasks(const Machine *m);
ProcSpace *machine_task_space(Machine *m, int task);
/* Map user pages [va, va + n * 4 KiB) of a task (fresh frames). */
bool machine_map_user(Machine *m, int task, uint32_t va, uint32_t npages,
                      bool writable, GError **err);
/* Run one system call of the current task from user mode. Returns false if
 * the run did not come back to user mode (a guest fault: err says which,
 * with the vector, error code, CR2 and EIP). */
bool machine_syscall(Machine *m, uint32_t nr, const uint32_t args[6],
                     uint32_t *ret, GError **err);
/* Run about insns user-mode instructions stepping through a working set of
 * bytes at va (mapped by the caller) with the given stride. Any count: the
 * watchdog that fails a kernel path never returning to user mode (50 M
 * instructions, err names the EIP and its stub symbol) is given the loop's
 * own length on top. */
bool machine_user_work(Machine *m, uint64_t insns, uint32_t va, uint32_t bytes,
                       uint32_t stride, GError **err);
/* User work is fast-forwarded by default: once the memory system repeats
 * its state from one period of the loop's address sequence to the next,
 * the remaining whole periods are accounted at once, with exactly the
 * counts, registers and memory that running them gives (userwork.h).
 * Off: every instruction runs. The skips say how much was skipped. */
void machine_set_fast_forward(Machine *m, bool on);
/* The core's decoded-instruction cache and the MMU's memos of TLB hits
 * (host-speed shortcuts, on by default; every modelled figure is the same
 * without them). */
void machine_set_host_shortcuts(Machine *m, bool on);
const UserWorkSkips *machine_fast_forward_skips(const Machine *m);
/* A timer interrupt from user mode whose handler switches to task. */
bool machine_switch_to(Machine *m, int task, GError **err);

/* For bodies: charge cycles and instructions of modelled kernel work. */
void machine_charge(Machine *m, uint64_t cycles, uint64_t insns);
/* A blocking body asks for a switch to task at the end of the body. */
void machine_request_switch(Machine *m, int task);
/* Kernel-mode references (through the current CR3, CPL 0). */
bool machine_kernel_read(Machine *m, uint32_t va, void *buf, size_t n);
bool machine_kernel_write(Machine *m, uint32_t va, const void *buf, size_t n);
/* A copy's lines: for k < lines, read the dword at from + k * step, then
 * write a zero dword at to + k * step (machine_kernel_read / _write of 4
 * bytes each, in that order, each made whatever the others gave). */
void machine_kernel_copy_lines(Machine *m, uint32_t from, uint32_t to, uint32_t lines,
                               uint32_t step);

/* Cycle and event counts. */
typedef struct {
    uint64_t syscalls, irqs, switches;
    uint64_t guest_faults;
    uint64_t vstack_ptes_rewritten;  /* 4g4g: virtual-stack PTEs a switch changed */
    uint64_t page_faults;        /* user #PF handled by the fault body */
} MachineCounts;
const MachineCounts *machine_counts(const Machine *m);

/* Page faults from user mode (kernel_model/usermm.h). With a fault body
 * installed, a #PF at CPL 3 is delivered through the IDT to the stubs'
 * page_fault_entry (with the layout's CR3 writes), which calls the body
 * with CR2 and the error code; the body maps the page (modelled kernel
 * writes) and the stub's IRET retries the instruction. */
typedef void (*MachineFaultFn)(Machine *m, uint32_t cr2, uint32_t error_code, void *user);
void machine_set_fault_body(Machine *m, MachineFaultFn fn, void *user);
/* Whether the stubs and user.o have what faults need. */
bool machine_can_fault(const Machine *m);
/* A user-mode instruction touches va (stubs/user.asm user_touch_*): a
 * one-byte load or store, or a call to va. Faults it raises go to the
 * fault body; false (err set) on any other guest fault. */
typedef enum { MACHINE_TOUCH_READ, MACHINE_TOUCH_WRITE, MACHINE_TOUCH_EXEC } MachineTouch;
bool machine_user_touch(Machine *m, uint32_t va, MachineTouch how, GError **err);

/* Free runs, for a whole guest program (kernel_model/guestprog.h) rather
 * than one replay event. machine_run_free runs the core from its current
 * state for at most max_steps steps (cpu_run) without the rest-point
 * breakpoints (a program may have code at those addresses; they are
 * restored on return). A body ends the run with cpu_request_stop. If the
 * guest faulted, *faulted is true and *fault holds the first exception
 * event (or the triple fault). */
CpuStop machine_run_free(Machine *m, uint64_t max_steps, bool *faulted, CpuEvent *fault);
/* Where SYSEXIT returns to in user mode (cpu_data's SYSENTER_RETURN; the
 * boot sets it to stubs/user.asm's sysenter_return). A setup write. */
void machine_set_sysenter_return(Machine *m, uint32_t eip);

#endif
