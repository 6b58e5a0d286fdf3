/* The known syscalls and their byte rules. Sizes are the i686 ABI's (the
 * simulated machine); each constant says which kernel structure it is and
 * how the size adds up. Where a call copies something the table does not
 * count (ioctl payloads, rt_sigreturn's signal frame, fcntl's struct flock,
 * execve's argv/envp strings), the omission is deliberate and listed in
 * workloads/FORMAT.md: an undercount we can name beats a guess. */
#include "replay/syscall_table.h"

#include <glib.h>
#include <string.h>

/* --- i686 structure sizes (arch/x86 and include/uapi of Linux) --- */
/* struct stat64 (uapi/asm/stat.h, i386): dev 8, pad 4, ino32 4, mode 4,
 * nlink 4, uid 4, gid 4, rdev 8, pad 4, size 8, blksize 4, blocks 8,
 * 3 x (time 4 + nsec 4) = 24, ino 8: 96. */
#define I386_STAT64 96
/* struct statx (uapi/linux/stat.h): 0x100 bytes on every ABI. */
#define STATX_SIZE 256
/* struct statfs64 (asm-generic/statfs.h, packed to 4 on x86): type 4,
 * bsize 4, 5 x u64 = 40, fsid 8, namelen 4, frsize 4, flags 4, spare 16: 84. */
#define I386_STATFS64 84
/* struct iovec: void *base, size_t len: 8. */
#define I386_IOVEC 8
/* struct user_msghdr: name 4, namelen 4, iov 4, iovlen 4, control 4,
 * controllen 4, flags 4: 28. */
#define I386_MSGHDR 28
/* struct pollfd: int fd, short events, short revents: 8. */
#define POLLFD_SIZE 8
/* struct epoll_event is packed on x86 (EPOLL_PACKED): u32 + u64 = 12. */
#define EPOLL_EVENT_SIZE 12
/* struct timespec / timeval with the 32-bit time_t of a 2003 i686 kernel:
 * 4 + 4 = 8; struct timezone: 2 ints = 8; struct itimerspec: 2 x 8 = 16. */
#define I386_TIMESPEC 8
#define I386_TIMEVAL 8
#define TIMEZONE_SIZE 8
#define I386_ITIMERSPEC 16
/* struct rusage: 2 x timeval (16) + 14 longs (56) = 72. */
#define I386_RUSAGE 72
/* siginfo_t: SI_MAX_SIZE = 128 on every ABI. */
#define SIGINFO_SIZE 128
/* struct sigaction as rt_sigaction takes it on i386: handler 4, flags 4,
 * restorer 4, sigset 8 = 20. The sigset alone is _NSIG / 8 = 8. */
#define I386_KSIGACTION 20
#define SIGSET_SIZE 8
/* stack_t: ss_sp 4, ss_flags 4, ss_size 4 = 12. */
#define I386_STACK_T 12
/* struct new_utsname: 6 fields x 65 chars = 390. */
#define UTSNAME_SIZE 390
/* struct sysinfo on i386: uptime 4, loads 12, 6 x ulong 24, procs 2,
 * pad 2, totalhigh 4, freehigh 4, mem_unit 4, _f 8 = 64. */
#define I386_SYSINFO 64
/* struct rlimit64: 2 x u64 = 16; struct rlimit on i386: 2 x ulong = 8. */
#define RLIMIT64_SIZE 16
#define I386_RLIMIT 8
/* struct tms: 4 x clock_t (long) = 16. */
#define I386_TMS 16
/* int[2] of pipe/socketpair: 8; a wait status int: 4; loff_t: 8;
 * gid_t: 4; struct timespec[2] of utimensat: 16. */
#define INT_PAIR 8
#define INT_SIZE 4
#define LOFF_SIZE 8
#define GID_SIZE 4
#define I386_TIMESPEC_PAIR 16

#define NO {BYTES_NONE, 0, 0}
#define RET {BYTES_RET, 0, 0}
#define RETX(sz) {BYTES_RET_TIMES, 0, sz}
#define ARG(a) {BYTES_ARG, a, 0}
#define ARGX(a, sz) {BYTES_ARG_TIMES, a, sz}
#define FIX(sz) {BYTES_FIXED, 0, sz}
#define PTR(a, sz) {BYTES_PTR, a, sz}
#define STR(a) {BYTES_STR, a, 0}
#define FDSET(a) {BYTES_FDSET, a, 0}
#define FUTEXW {BYTES_FUTEX, 0, 0}

/* name, fd arg, requested-bytes arg, op arg, role, in terms, out terms.
 * EB: the call may block (sleep until another task, a device or a timer
 * wakes it): reads and writes of pipes, sockets and disks, waits, polls,
 * futexes, sleeps, syncs, locks, vfork (the parent waits for the child). */
#define E(n, fd, req, op, role, i0, i1, o0, o1) {n, fd, req, op, role, false, {i0, i1}, {o0, o1}}
#define EB(n, fd, req, op, role, i0, i1, o0, o1) {n, fd, req, op, role, true, {i0, i1}, {o0, o1}}
#define R(role) SYSCALL_ROLE_##role

static const SyscallInfo table[] = {
    /* unknown names: no bytes counted; may block, so a long one counts as asleep */
    EB("(unknown)", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    /* data transfer: the count the kernel copied is the return value */
    EB("read", 0, 2, -1, R(NONE), NO, NO, RET, NO),
    EB("write", 0, 2, -1, R(NONE), RET, NO, NO, NO),
    EB("pread64", 0, 2, -1, R(NONE), NO, NO, RET, NO),
    EB("pwrite64", 0, 2, -1, R(NONE), RET, NO, NO, NO),
    EB("readv", 0, -1, -1, R(NONE), ARGX(2, I386_IOVEC), NO, RET, NO),
    EB("writev", 0, -1, -1, R(NONE), RET, ARGX(2, I386_IOVEC), NO, NO),
    EB("preadv", 0, -1, -1, R(NONE), ARGX(2, I386_IOVEC), NO, RET, NO),
    EB("pwritev", 0, -1, -1, R(NONE), RET, ARGX(2, I386_IOVEC), NO, NO),
    EB("preadv2", 0, -1, -1, R(NONE), ARGX(2, I386_IOVEC), NO, RET, NO),
    EB("pwritev2", 0, -1, -1, R(NONE), RET, ARGX(2, I386_IOVEC), NO, NO),
    EB("recvfrom", 0, 2, -1, R(NONE), NO, NO, RET, ARG(5)),
    EB("sendto", 0, 2, -1, R(NONE), RET, ARG(5), NO, NO),
    EB("recvmsg", 0, -1, -1, R(NONE), FIX(I386_MSGHDR), NO, RET, NO),
    EB("sendmsg", 0, -1, -1, R(NONE), RET, FIX(I386_MSGHDR), NO, NO),
    EB("getdents", 0, 2, -1, R(NONE), NO, NO, RET, NO),
    EB("getdents64", 0, 2, -1, R(NONE), NO, NO, RET, NO),
    E("getrandom", -1, 1, -1, R(NONE), NO, NO, RET, NO),
    E("getcwd", -1, 1, -1, R(NONE), NO, NO, RET, NO),
    E("readlink", -1, 2, -1, R(NONE), STR(0), NO, RET, NO),
    E("readlinkat", 0, 3, -1, R(NONE), STR(1), NO, RET, NO),
    E("sched_getaffinity", -1, 1, -1, R(NONE), NO, NO, RET, NO),
    E("sched_setaffinity", -1, 1, -1, R(NONE), ARG(1), NO, NO, NO),
    /* in-kernel transfers: the data never crosses the user boundary, only
     * the optional loff_t offsets do; the count stays in ret */
    EB("sendfile", 0, 3, -1, R(NONE), PTR(2, LOFF_SIZE), NO, PTR(2, LOFF_SIZE), NO),
    EB("sendfile64", 0, 3, -1, R(NONE), PTR(2, LOFF_SIZE), NO, PTR(2, LOFF_SIZE), NO),
    EB("copy_file_range", 0, 4, -1, R(NONE), PTR(1, LOFF_SIZE), PTR(3, LOFF_SIZE),
      PTR(1, LOFF_SIZE), PTR(3, LOFF_SIZE)),
    EB("splice", 0, 4, -1, R(NONE), PTR(1, LOFF_SIZE), PTR(3, LOFF_SIZE),
      PTR(1, LOFF_SIZE), PTR(3, LOFF_SIZE)),
    EB("tee", 0, 2, -1, R(NONE), NO, NO, NO, NO),
    /* sockets */
    E("socket", -1, -1, 0, R(NONE), NO, NO, NO, NO),
    E("socketpair", -1, -1, 0, R(NONE), NO, NO, FIX(INT_PAIR), NO),
    EB("connect", 0, -1, -1, R(NONE), ARG(2), NO, NO, NO),
    E("bind", 0, -1, -1, R(NONE), ARG(2), NO, NO, NO),
    E("listen", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("accept", 0, -1, -1, R(NONE), NO, NO, ARG(2), NO),
    EB("accept4", 0, -1, -1, R(NONE), NO, NO, ARG(2), NO),
    E("getsockname", 0, -1, -1, R(NONE), NO, NO, ARG(2), NO),
    E("getpeername", 0, -1, -1, R(NONE), NO, NO, ARG(2), NO),
    E("setsockopt", 0, -1, 2, R(NONE), ARG(4), NO, NO, NO),
    E("getsockopt", 0, -1, 2, R(NONE), NO, NO, ARG(4), NO),
    E("shutdown", 0, -1, 1, R(NONE), NO, NO, NO, NO),
    /* polling and waiting */
    EB("poll", -1, -1, -1, R(NONE), ARGX(1, POLLFD_SIZE), NO, ARGX(1, POLLFD_SIZE), NO),
    EB("ppoll", -1, -1, -1, R(NONE), ARGX(1, POLLFD_SIZE), PTR(2, I386_TIMESPEC),
      ARGX(1, POLLFD_SIZE), NO),
    EB("select", -1, -1, -1, R(NONE), FDSET(0), PTR(4, I386_TIMEVAL), FDSET(0), NO),
    EB("pselect6", -1, -1, -1, R(NONE), FDSET(0), PTR(4, I386_TIMESPEC), FDSET(0), NO),
    EB("epoll_wait", 0, -1, -1, R(NONE), NO, NO, RETX(EPOLL_EVENT_SIZE), NO),
    EB("epoll_pwait", 0, -1, -1, R(NONE), PTR(4, SIGSET_SIZE), NO, RETX(EPOLL_EVENT_SIZE), NO),
    E("epoll_ctl", 0, -1, 1, R(NONE), PTR(3, EPOLL_EVENT_SIZE), NO, NO, NO),
    E("epoll_create", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("epoll_create1", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("futex", -1, -1, 1, R(NONE), FUTEXW, NO, NO, NO),
    EB("wait4", -1, -1, -1, R(NONE), NO, NO, PTR(1, INT_SIZE), PTR(3, I386_RUSAGE)),
    EB("waitid", -1, -1, 0, R(NONE), NO, NO, PTR(2, SIGINFO_SIZE), PTR(4, I386_RUSAGE)),
    EB("nanosleep", -1, -1, -1, R(NONE), FIX(I386_TIMESPEC), NO, PTR(1, I386_TIMESPEC), NO),
    EB("clock_nanosleep", -1, -1, 0, R(NONE), FIX(I386_TIMESPEC), NO, PTR(3, I386_TIMESPEC), NO),
    EB("pause", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("eventfd2", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("timerfd_create", -1, -1, 0, R(NONE), NO, NO, NO, NO),
    E("timerfd_settime", 0, -1, -1, R(NONE), FIX(I386_ITIMERSPEC), NO, PTR(3, I386_ITIMERSPEC), NO),
    /* pathnames in, stat structures out */
    EB("open", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    EB("openat", 0, -1, -1, R(NONE), STR(1), NO, NO, NO),
    EB("openat2", 0, -1, -1, R(NONE), STR(1), ARG(3), NO, NO),
    E("creat", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("stat", -1, -1, -1, R(NONE), STR(0), NO, FIX(I386_STAT64), NO),
    E("lstat", -1, -1, -1, R(NONE), STR(0), NO, FIX(I386_STAT64), NO),
    E("stat64", -1, -1, -1, R(NONE), STR(0), NO, FIX(I386_STAT64), NO),
    E("lstat64", -1, -1, -1, R(NONE), STR(0), NO, FIX(I386_STAT64), NO),
    E("fstat", 0, -1, -1, R(NONE), NO, NO, FIX(I386_STAT64), NO),
    E("fstat64", 0, -1, -1, R(NONE), NO, NO, FIX(I386_STAT64), NO),
    E("newfstatat", 0, -1, -1, R(NONE), STR(1), NO, FIX(I386_STAT64), NO),
    E("fstatat64", 0, -1, -1, R(NONE), STR(1), NO, FIX(I386_STAT64), NO),
    E("statx", 0, -1, -1, R(NONE), STR(1), NO, FIX(STATX_SIZE), NO),
    E("statfs", -1, -1, -1, R(NONE), STR(0), NO, FIX(I386_STATFS64), NO),
    E("statfs64", -1, -1, -1, R(NONE), STR(0), NO, FIX(I386_STATFS64), NO),
    E("fstatfs", 0, -1, -1, R(NONE), NO, NO, FIX(I386_STATFS64), NO),
    E("fstatfs64", 0, -1, -1, R(NONE), NO, NO, FIX(I386_STATFS64), NO),
    E("access", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("faccessat", 0, -1, -1, R(NONE), STR(1), NO, NO, NO),
    E("faccessat2", 0, -1, -1, R(NONE), STR(1), NO, NO, NO),
    E("chdir", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("fchdir", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    E("mkdir", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("mkdirat", 0, -1, -1, R(NONE), STR(1), NO, NO, NO),
    E("rmdir", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("unlink", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("unlinkat", 0, -1, -1, R(NONE), STR(1), NO, NO, NO),
    E("rename", -1, -1, -1, R(NONE), STR(0), STR(1), NO, NO),
    E("renameat", 0, -1, -1, R(NONE), STR(1), STR(3), NO, NO),
    E("renameat2", 0, -1, -1, R(NONE), STR(1), STR(3), NO, NO),
    E("link", -1, -1, -1, R(NONE), STR(0), STR(1), NO, NO),
    E("linkat", 0, -1, -1, R(NONE), STR(1), STR(3), NO, NO),
    E("symlink", -1, -1, -1, R(NONE), STR(0), STR(1), NO, NO),
    E("symlinkat", -1, -1, -1, R(NONE), STR(0), STR(2), NO, NO),
    E("chmod", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("fchmodat", 0, -1, -1, R(NONE), STR(1), NO, NO, NO),
    E("chown", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("lchown", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("fchownat", 0, -1, -1, R(NONE), STR(1), NO, NO, NO),
    EB("truncate", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    E("utimensat", 0, -1, -1, R(NONE), STR(1), PTR(2, I386_TIMESPEC_PAIR), NO, NO),
    E("memfd_create", -1, -1, -1, R(NONE), STR(0), NO, NO, NO),
    /* file descriptors */
    E("close", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    E("dup", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    E("dup2", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    E("dup3", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    E("lseek", 0, -1, 2, R(NONE), NO, NO, NO, NO),
    E("_llseek", 0, -1, 4, R(NONE), NO, NO, PTR(3, LOFF_SIZE), NO),
    EB("fcntl", 0, -1, 1, R(NONE), NO, NO, NO, NO),
    EB("fcntl64", 0, -1, 1, R(NONE), NO, NO, NO, NO),
    EB("ioctl", 0, -1, 1, R(NONE), NO, NO, NO, NO),
    EB("flock", 0, -1, 1, R(NONE), NO, NO, NO, NO),
    EB("fsync", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("fdatasync", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("sync", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("syncfs", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("ftruncate", 0, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("fallocate", 0, 3, 1, R(NONE), NO, NO, NO, NO),
    E("fadvise64", 0, 2, 3, R(NONE), NO, NO, NO, NO),
    E("readahead", 0, 2, -1, R(NONE), NO, NO, NO, NO),
    E("pipe", -1, -1, -1, R(NONE), NO, NO, FIX(INT_PAIR), NO),
    E("pipe2", -1, -1, -1, R(NONE), NO, NO, FIX(INT_PAIR), NO),
    /* address space */
    E("mmap", 4, 1, -1, R(MMAP), NO, NO, NO, NO),
    E("mmap2", 4, 1, -1, R(MMAP), NO, NO, NO, NO),
    E("munmap", -1, 1, -1, R(MUNMAP), NO, NO, NO, NO),
    E("mprotect", -1, 1, -1, R(MPROTECT), NO, NO, NO, NO),
    E("brk", -1, -1, -1, R(BRK), NO, NO, NO, NO),
    E("mremap", -1, 2, -1, R(NONE), NO, NO, NO, NO),
    E("madvise", -1, 1, 2, R(NONE), NO, NO, NO, NO),
    EB("msync", -1, 1, -1, R(NONE), NO, NO, NO, NO),
    E("mlock", -1, 1, -1, R(NONE), NO, NO, NO, NO),
    E("munlock", -1, 1, -1, R(NONE), NO, NO, NO, NO),
    /* processes */
    E("clone", -1, -1, -1, R(CLONE), NO, NO, NO, NO),
    E("clone3", -1, -1, -1, R(CLONE), ARG(1), NO, NO, NO),
    E("fork", -1, -1, -1, R(CLONE), NO, NO, NO, NO),
    EB("vfork", -1, -1, -1, R(CLONE), NO, NO, NO, NO),
    E("execve", -1, -1, -1, R(EXEC), STR(0), NO, NO, NO),
    E("execveat", 0, -1, -1, R(EXEC), STR(1), NO, NO, NO),
    E("exit", -1, -1, -1, R(EXIT), NO, NO, NO, NO),
    E("exit_group", -1, -1, -1, R(EXIT), NO, NO, NO, NO),
    E("kill", -1, -1, 1, R(NONE), NO, NO, NO, NO),
    E("tkill", -1, -1, 1, R(NONE), NO, NO, NO, NO),
    E("tgkill", -1, -1, 2, R(NONE), NO, NO, NO, NO),
    E("getpid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getppid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("gettid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getuid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("geteuid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getgid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getegid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getpgrp", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getpgid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getsid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("setsid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("setpgid", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("getgroups", -1, -1, -1, R(NONE), NO, NO, RETX(GID_SIZE), NO),
    E("setgroups", -1, -1, -1, R(NONE), ARGX(0, GID_SIZE), NO, NO, NO),
    E("umask", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    EB("sched_yield", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("set_tid_address", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("set_robust_list", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("rseq", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("arch_prctl", -1, -1, 0, R(NONE), NO, NO, NO, NO),
    E("prctl", -1, -1, 0, R(NONE), NO, NO, NO, NO),
    EB("restart_syscall", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    /* signals */
    E("rt_sigaction", -1, -1, 0, R(NONE), PTR(1, I386_KSIGACTION), NO,
      PTR(2, I386_KSIGACTION), NO),
    E("rt_sigprocmask", -1, -1, 0, R(NONE), PTR(1, SIGSET_SIZE), NO, PTR(2, SIGSET_SIZE), NO),
    E("rt_sigreturn", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("sigreturn", -1, -1, -1, R(NONE), NO, NO, NO, NO),
    E("sigaltstack", -1, -1, -1, R(NONE), PTR(0, I386_STACK_T), NO, PTR(1, I386_STACK_T), NO),
    EB("rt_sigsuspend", -1, -1, -1, R(NONE), FIX(SIGSET_SIZE), NO, NO, NO),
    /* time and system information */
    E("gettimeofday", -1, -1, -1, R(NONE), NO, NO, PTR(0, I386_TIMEVAL), PTR(1, TIMEZONE_SIZE)),
    E("clock_gettime", -1, -1, 0, R(NONE), NO, NO, FIX(I386_TIMESPEC), NO),
    E("clock_getres", -1, -1, 0, R(NONE), NO, NO, PTR(1, I386_TIMESPEC), NO),
    E("time", -1, -1, -1, R(NONE), NO, NO, PTR(0, INT_SIZE), NO),
    E("uname", -1, -1, -1, R(NONE), NO, NO, FIX(UTSNAME_SIZE), NO),
    E("sysinfo", -1, -1, -1, R(NONE), NO, NO, FIX(I386_SYSINFO), NO),
    E("getrusage", -1, -1, 0, R(NONE), NO, NO, FIX(I386_RUSAGE), NO),
    E("times", -1, -1, -1, R(NONE), NO, NO, FIX(I386_TMS), NO),
    E("getrlimit", -1, -1, 0, R(NONE), NO, NO, FIX(I386_RLIMIT), NO),
    E("ugetrlimit", -1, -1, 0, R(NONE), NO, NO, FIX(I386_RLIMIT), NO),
    E("setrlimit", -1, -1, 0, R(NONE), FIX(I386_RLIMIT), NO, NO, NO),
    E("prlimit64", -1, -1, 1, R(NONE), PTR(2, RLIMIT64_SIZE), NO, PTR(3, RLIMIT64_SIZE), NO),
};

#define TABLE_SIZE (sizeof table / sizeof table[0])

unsigned syscall_table_size(void) { return (unsigned)TABLE_SIZE; }

const SyscallInfo *syscall_info(unsigned id)
{
    g_assert(id < TABLE_SIZE);
    return &table[id];
}

static GHashTable *index_by_name(void)
{
    static gsize once = 0;
    static GHashTable *index;
    if (g_once_init_enter(&once)) {
        index = g_hash_table_new(g_str_hash, g_str_equal);
        for (unsigned i = 1; i < TABLE_SIZE; i++) {
            g_assert(strlen(table[i].name) <= SYSCALL_NAME_MAX);
            g_assert(!g_hash_table_contains(index, table[i].name));
            g_hash_table_insert(index, (gpointer)table[i].name, GUINT_TO_POINTER(i));
        }
        g_once_init_leave(&once, 1);
    }
    return index;
}

unsigned syscall_lookup(const char *name, size_t len)
{
    char key[SYSCALL_NAME_MAX + 1];
    if (len == 0 || len > SYSCALL_NAME_MAX)
        return SYSCALL_ID_UNKNOWN;
    memcpy(key, name, len);
    key[len] = '\0';
    return GPOINTER_TO_UINT(g_hash_table_lookup(index_by_name(), key));
}

bool syscall_futex_reads_word(uint64_t op)
{
    switch (op & 0x7f) { /* FUTEX_CMD_MASK: without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
    case 0:  /* FUTEX_WAIT */
    case 4:  /* FUTEX_CMP_REQUEUE */
    case 5:  /* FUTEX_WAKE_OP */
    case 6:  /* FUTEX_LOCK_PI */
    case 7:  /* FUTEX_UNLOCK_PI */
    case 8:  /* FUTEX_TRYLOCK_PI */
    case 9:  /* FUTEX_WAIT_BITSET */
    case 11: /* FUTEX_WAIT_REQUEUE_PI */
    case 12: /* FUTEX_CMP_REQUEUE_PI */
    case 13: /* FUTEX_LOCK_PI2 */
        return true;
    default:
        return false;
    }
}

#define COUNT_MAX (16u << 20)

uint64_t syscall_bytes_regs(const SyscallBytes *t, const SyscallRegs *r)
{
    uint64_t ret = r->ret > 0 ? (uint64_t)r->ret : 0;
    uint64_t a = t->arg >= 0 && t->arg < SYSCALL_NARGS ? r->args[t->arg] : 0;
    uint64_t count = a <= COUNT_MAX ? a : 0;
    switch ((SyscallBytesKind)t->kind) {
    case BYTES_NONE: return 0;
    case BYTES_RET: return ret;
    case BYTES_RET_TIMES: return ret * t->size;
    case BYTES_ARG: return count;
    case BYTES_ARG_TIMES: return count * t->size;
    case BYTES_FIXED: return t->size;
    case BYTES_PTR: return a != 0 ? t->size : 0;
    case BYTES_STR:
        return t->arg >= 0 && t->arg < SYSCALL_NARGS && r->strlen[t->arg] != SYSCALL_STRLEN_UNKNOWN
                   ? (uint64_t)r->strlen[t->arg] + 1
                   : 0;
    case BYTES_FDSET: {
        uint64_t per = count <= 65536 ? (count + 31) / 32 * 4 : 0, n = 0;
        for (int i = 1; i <= 3 && t->arg + i < SYSCALL_NARGS; i++)
            n += r->args[t->arg + i] != 0 ? per : 0;
        return n;
    }
    case BYTES_FUTEX: return syscall_futex_reads_word(r->args[1]) ? 4 : 0;
    }
    return 0;
}
