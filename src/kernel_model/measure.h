/* Measuring one system call on a booted machine: its latency and where the
 * cycles went, read from the core's and the MMU's counters around it
 * (nothing here is computed from the profile). The parts are exclusive
 * and add up to the total:
 *
 *   cr3       MOV CR3 instructions: the preset's mov_cr3 cost for each,
 *             plus the four PDPTE loads each one makes under PAE
 *   walks     every TLB refill (page walk) taken during the call: in the
 *             stubs, the body, the copies, and on the way back to user mode
 *   uaccess   copy_from_user / copy_to_user (kmaps and INVLPGs included)
 *   body      the body's instructions and kernel data references
 *   base      the rest: the entry and exit instructions themselves
 *             (SAVE_ALL, INT/IRET or SYSENTER/SYSEXIT, stack switches) and
 *             their memory references */
#ifndef VMSPLIT_KERNEL_MODEL_MEASURE_H
#define VMSPLIT_KERNEL_MODEL_MEASURE_H

#include <glib.h>
#include <stdint.h>

#include "kernel_model/body.h"
#include "kernel_model/machine.h"

/* One list, used by every output (text, CSV, JSON): the field, its CSV
 * column (which names its unit: cycles, or the things counted), and what
 * it is. */
#define SYSCALL_COST_FIELDS(X)                                                          \
    X(cycles, "cycles", "total cycles of the call, user mode to user mode")            \
    X(base, "base_cycles", "entry/exit instructions and their memory references")     \
    X(cr3, "cr3_cycles", "MOV CR3: the instruction and its four PDPTE loads")         \
    X(walks, "walk_cycles", "TLB refills (page walks) during the call")               \
    X(uaccess, "uaccess_cycles", "copies to and from user space")                     \
    X(body, "body_cycles", "the body's instructions and kernel data")                 \
    X(insns, "insns", "instructions (body instructions charged as executed)")         \
    X(cr3_writes, "cr3_writes", "CR3 writes")                                         \
    X(tlb_dropped, "tlb_entries_dropped", "TLB entries the CR3 writes and INVLPGs dropped") \
    X(nwalks, "walks", "page walks")                                                  \
    X(kmaps, "kmaps", "kmap_atomic calls (4g4g indirect uaccess)")

typedef struct {
#define X(name, col, desc) uint64_t name;
    SYSCALL_COST_FIELDS(X)
#undef X
} SyscallCost;

/* Run call once from user mode and fill *out. False (err set) if the guest
 * faulted. */
bool measure_syscall(Machine *m, KernelBody *kb, const SyscallCall *call,
                     SyscallCost *out, GError **err);

/* Boot a machine with cfg, run call warmup times, then count times, and
 * add each measured call into *sum (callers divide by count). The user
 * buffer (call->user_buf) is mapped for the largest copy. */
bool measure_repeat(const MachineConfig *cfg, const SyscallCall *call, unsigned warmup,
                    unsigned count, SyscallCost *sum, GError **err);

size_t syscall_cost_count(void);
const char *syscall_cost_name(size_t i);
const char *syscall_cost_desc(size_t i);
/* The CSV column of field i, unit included ("base_cycles"). */
const char *syscall_cost_column(size_t i);
uint64_t syscall_cost_value(const SyscallCost *c, size_t i);
void syscall_cost_add(SyscallCost *sum, const SyscallCost *c);

#endif
