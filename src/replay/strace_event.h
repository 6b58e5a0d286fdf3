/* From one strace syscall (name, argument text, result) to the fields of a
 * trace syscall event and of the state event a successful call implies.
 * The rules come from syscall_table.h; this file only evaluates them on
 * strace's argument syntax. Used by strace_import.c; stateless. */
#ifndef VMSPLIT_REPLAY_STRACE_EVENT_H
#define VMSPLIT_REPLAY_STRACE_EVENT_H

#include "replay/strace_parse.h"
#include "replay/syscall_table.h"
#include "replay/trace.h"

#define STRACE_EVENT_MAX_ARGS 8

typedef struct {
    StraceText name;
    StraceText args[STRACE_EVENT_MAX_ARGS];
    unsigned nargs;        /* may exceed STRACE_EVENT_MAX_ARGS; extra ones unsplit */
    StraceText all_args;   /* the whole argument text */
    bool ret_known;
    int64_t ret;
    StraceText err;
} StraceCall;

/* Splits all_args into args. */
void strace_call_split(StraceCall *c);

/* Fills ev (kind sys, pid) from the call: name, id, ret, errno, fd, req,
 * op, bytes in and out. Duration and blocked are the caller's. */
void strace_call_to_syscall(const StraceCall *c, uint32_t pid, TraceEvent *ev);

/* True if the call succeeded (a known, non-negative return, no errno). */
bool strace_call_ok(const StraceCall *c);

/* For a successful mmap/munmap/mprotect: the mapping event. */
void strace_call_to_map(const StraceCall *c, SyscallRole role, uint32_t pid, TraceEvent *ev);

/* clone/clone3 with CLONE_VM, and vfork, share the parent's address space. */
bool strace_call_shares_vm(const StraceCall *c);

/* execve's or execveat's path (g_free it), NULL if it is not a string. */
char *strace_call_exec_path(const StraceCall *c);

/* execve's argv as one line ("cp a b"; "..." where strace cut it), or NULL. */
char *strace_call_exec_command(const StraceCall *c);

#endif
