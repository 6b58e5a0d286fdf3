/* null: lmbench's "null call", a getppid loop.
 *
 * lmbench 3 lat_syscall.c, `lat_syscall null`: do_getppid() calls getppid()
 * in benchmp's timing loop. lmbench uses getppid rather than getpid because
 * glibc cached getpid's result in user space (until glibc 2.25), so getpid
 * would not enter the kernel. The figure it produces is the seed's
 * reference point (REFERENCES.md: 641 cycles with sysenter, 1761 with
 * int 0x80 on a P4; 0.32-0.46 us on ~1 GHz P-III). No randomness. */
#include "replay/gen.h"

#define NULL_PID 1000
#define NULL_PPID 999 /* the shell that started it */

static void null_run(GenContext *g)
{
    const TraceEvent ev = gen_sys_event(NULL_PID, "getppid", NULL_PPID);
    while (!gen_done(g))
        gen_loop_sys(g, &ev);
}

static const GenParam null_params[] = {{NULL, 0, 0, 0, false, NULL}};

const Generator gen_null = {
    .name = "null",
    .summary = "lmbench lat_syscall null: a getppid loop",
    .imitates = "lmbench 3 'lat_syscall null': getppid() in a tight loop (getppid, not\n"
                "getpid, because glibc cached getpid before 2.25). One pid, no setup,\n"
                "nothing random.",
    .default_user_insns = 20,
    .user_insns_source = "estimate: benchmp's loop test, the call to do_getppid and glibc's\n"
                         "wrapper (load the number, the trap, return) are about 20 instructions",
    .default_pages = 2,
    .default_pattern = TRACE_PAT_HOT,
    .pages_source = "the loop's code page and its stack page",
    .params = null_params,
    .run = null_run,
};
