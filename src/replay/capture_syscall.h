/* One captured syscall (entry and exit paired by the capture importer's
 * index pass) and the `sys` event it becomes. Internal to the capture
 * importer (capture_import.c). */
#ifndef VMSPLIT_REPLAY_CAPTURE_SYSCALL_H
#define VMSPLIT_REPLAY_CAPTURE_SYSCALL_H

#include "replay/syscall_table.h"
#include "replay/trace.h"

#include <stdbool.h>
#include <stdint.h>

/* x86-64 numbers the importer acts on (asm/unistd_64.h). */
enum {
    X64_MMAP = 9, X64_MPROTECT = 10, X64_MUNMAP = 11, X64_BRK = 12, X64_MREMAP = 25,
    X64_CLONE = 56, X64_FORK = 57, X64_VFORK = 58, X64_EXECVE = 59, X64_EXIT = 60,
    X64_EXIT_GROUP = 231, X64_EXECVEAT = 322, X64_CLONE3 = 435,
};

typedef struct {
    uint32_t tid;
    uint16_t nr;
    bool has_exit;    /* its exit record was seen */
    uint64_t t_entry, t_exit;
    SyscallRegs regs; /* regs.ret: the result, -errno on failure */
} CaptureSys;

/* The `sys` event of s for trace pid tid: name (the x86-64 name, or
 * `syscall_NR` when unknown), result (-1 and the errno name on failure, `?`
 * without an exit), fd, req, op (futex only), in and out by syscall_table's
 * rules, dur, and blocked when the call may sleep and lasted block_ns.
 * *known is false for a number without a name. */
void capture_syscall_event(const CaptureSys *s, uint32_t tid, uint64_t block_ns, TraceEvent *ev,
                           bool *known);

static inline bool capture_sys_failed(const CaptureSys *s)
{
    return s->has_exit && s->regs.ret < 0 && s->regs.ret >= -4095;
}

#endif
