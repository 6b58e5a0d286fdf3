/* The syscalls vmsplit knows by name: a small id for each (so a replay can
 * keep per-syscall profiles in an array), which argument is the file
 * descriptor, the requested length and the operation, what state change a
 * successful call makes (fork, exec, mmap...), and how many bytes it copies
 * between user space and the kernel.
 *
 * The byte rules are what `vmsplit import-strace` uses to fill a syscall
 * event's `in` (copied from user space) and `out` (copied to user space).
 * Fixed sizes are the i686 ABI's, because the simulated machine is an i686:
 * a trace taken on x86-64 replays as the same program built for i686. Each
 * size is derived in syscall_table.c next to the entry and listed in
 * workloads/FORMAT.md.
 *
 * Ids are table indices: stable within one build, never written to a trace
 * (traces carry names). Names not in the table get SYSCALL_ID_UNKNOWN; a
 * replay maps them to its generic profile. */
#ifndef VMSPLIT_REPLAY_SYSCALL_TABLE_H
#define VMSPLIT_REPLAY_SYSCALL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYSCALL_ID_UNKNOWN 0
#define SYSCALL_NAME_MAX 63 /* longest name a trace may carry */

/* One term of a byte count. `arg` is a 0-based argument index. */
typedef enum {
    BYTES_NONE = 0,
    BYTES_RET,       /* the return value (a byte count) */
    BYTES_RET_TIMES, /* return value x size: epoll_wait's events */
    BYTES_ARG,       /* argument's value: "[16]" and "[128 => 16]" give 16 */
    BYTES_ARG_TIMES, /* argument x size: poll's nfds x sizeof(struct pollfd) */
    BYTES_FIXED,     /* size bytes */
    BYTES_PTR,       /* size bytes when the argument is not NULL */
    BYTES_STR,       /* strlen + 1 of a string argument (pathnames) */
    BYTES_FDSET,     /* select: (nfds+31)/32*4 per non-NULL fd_set in arg..arg+2 */
    BYTES_FUTEX,     /* 4 (the futex word) for ops that read it, else 0 */
} SyscallBytesKind;

typedef struct {
    uint8_t kind;  /* SyscallBytesKind */
    int8_t arg;
    uint16_t size;
} SyscallBytes;

/* What a successful call changes, beyond its cost. */
typedef enum {
    SYSCALL_ROLE_NONE = 0,
    SYSCALL_ROLE_CLONE,    /* clone, clone3, fork, vfork: a fork event */
    SYSCALL_ROLE_EXEC,     /* execve, execveat: an exec event */
    SYSCALL_ROLE_MMAP,     /* mmap, mmap2: an mmap event */
    SYSCALL_ROLE_MUNMAP,
    SYSCALL_ROLE_MPROTECT,
    SYSCALL_ROLE_BRK,
    SYSCALL_ROLE_EXIT,     /* exit, exit_group: the "+++ exited" line follows */
} SyscallRole;

#define SYSCALL_MAX_TERMS 2


typedef struct {
    const char *name;
    int8_t fd_arg;   /* argument holding the fd, -1 if none */
    int8_t req_arg;  /* argument holding the requested byte count, -1 */
    int8_t op_arg;   /* argument naming the operation (futex op, fcntl cmd), -1 */
    uint8_t role;    /* SyscallRole */
    bool may_block;  /* can sleep waiting for another task, a device or time
                        (read, wait4, futex, poll...), as opposed to calls that
                        only take locks or allocate (brk, mmap, close...) */
    SyscallBytes in[SYSCALL_MAX_TERMS];  /* copy_from_user terms, summed */
    SyscallBytes out[SYSCALL_MAX_TERMS]; /* copy_to_user terms, summed */
} SyscallInfo;

/* Number of ids, SYSCALL_ID_UNKNOWN included. */
unsigned syscall_table_size(void);
/* The entry for id (id < syscall_table_size()); id 0 is the unknown entry. */
const SyscallInfo *syscall_info(unsigned id);
/* The id of name[0..len), or SYSCALL_ID_UNKNOWN. */
unsigned syscall_lookup(const char *name, size_t len);

/* A syscall seen as registers rather than strace's text (the capture
 * importer): the six argument values, the result (negative: -errno) and the
 * length of each string argument the tracer could read. */
#define SYSCALL_NARGS 6
#define SYSCALL_STRLEN_UNKNOWN UINT32_MAX
typedef struct {
    uint64_t args[SYSCALL_NARGS];
    int64_t ret;
    uint32_t strlen[SYSCALL_NARGS];
} SyscallRegs;

/* The bytes one term counts on register values. Lengths passed by pointer
 * (accept's addrlen, getsockopt's optlen) are not visible in registers:
 * an argument too large to be a byte count (above 16 MiB) counts 0, an
 * undercount rather than a guess. */
uint64_t syscall_bytes_regs(const SyscallBytes *t, const SyscallRegs *r);
/* Whether futex op (the second argument, private and clock flags allowed)
 * reads the futex word: WAIT, WAIT_BITSET, CMP_REQUEUE, WAKE_OP and the PI
 * operations do, WAKE and REQUEUE do not (kernel/futex). */
bool syscall_futex_reads_word(uint64_t op);

#endif
