/* pipe: lmbench's "pipe latency", two processes ping-ponging over pipes.
 *
 * lmbench 3 lat_pipe.c: the parent makes two pipes and forks; the parent
 * writes a byte to the first pipe and reads the answer from the second, the
 * child reads from the first and writes back to the second. On one CPU each
 * read of an empty pipe sleeps, so every round trip is two context
 * switches; lmbench reports the round trip time.
 *
 * Trace (setup, not counted: pipe, pipe, clone and the fork event):
 *   1000 write fd=4; 1000 read fd=5 blocked; 1001 switch;
 *   1001 read fd=3 (the byte is there); 1001 write fd=6; 1001 read fd=3 blocked;
 *   1000 switch; 1000 write fd=4; 1000 read fd=5 blocked; 1001 switch; ...
 * The parent keeps the CPU after fork (sched_child_runs_first = 0). The
 * blocked read's return value is what it returns once woken. No randomness. */
#include "replay/gen.h"

#define PARENT 1000
#define CHILD 1001
/* fds: 0-2 are stdio; pipe p1 = {3, 4}, p2 = {5, 6} (lowest free first). */
#define P1_READ 3
#define P1_WRITE 4
#define P2_READ 5
#define P2_WRITE 6
#define PIPE_FDS_BYTES 8 /* int[2] copied out, FORMAT.md */

static void pipe_xfer(GenContext *g, uint32_t pid, const char *name, int fd, int64_t n,
                      bool blocked)
{
    TraceEvent ev = gen_sys_event(pid, name, n);
    ev.u.sys.fd = fd;
    ev.u.sys.req = (uint64_t)n;
    if (name[0] == 'r')
        ev.u.sys.out = (uint64_t)n;
    else
        ev.u.sys.in = (uint64_t)n;
    ev.u.sys.blocked = blocked;
    gen_loop_sys(g, &ev);
}

static void pipe_setup(GenContext *g)
{
    TraceEvent ev = gen_sys_event(PARENT, "pipe", 0);
    ev.u.sys.out = PIPE_FDS_BYTES;
    gen_setup_sys(g, &ev);
    gen_setup_sys(g, &ev);
    ev = gen_sys_event(PARENT, "clone", CHILD);
    gen_setup_sys(g, &ev);
    trace_event_init(&ev, TRACE_EV_FORK, PARENT);
    ev.u.fork.child = CHILD;
    gen_emit(g, &ev);
}

static void pipe_run(GenContext *g)
{
    const int64_t n = (int64_t)gen_param(g, "bytes");
    pipe_setup(g);
    pipe_xfer(g, PARENT, "write", P1_WRITE, n, false);
    pipe_xfer(g, PARENT, "read", P2_READ, n, true);
    gen_switch(g, CHILD);
    pipe_xfer(g, CHILD, "read", P1_READ, n, false);
    while (!gen_done(g)) {
        pipe_xfer(g, CHILD, "write", P2_WRITE, n, false);
        pipe_xfer(g, CHILD, "read", P1_READ, n, true);
        gen_switch(g, PARENT);
        pipe_xfer(g, PARENT, "write", P1_WRITE, n, false);
        pipe_xfer(g, PARENT, "read", P2_READ, n, true);
        gen_switch(g, CHILD);
    }
}

static const GenParam pipe_params[] = {
    {"bytes", 1, 1, 4096, true,
     "bytes per message (lmbench: 1); at most PIPE_BUF (4096), so a write is atomic"},
    {NULL, 0, 0, 0, false, NULL},
};

const Generator gen_pipe = {
    .name = "pipe",
    .summary = "lmbench lat_pipe: two processes ping-pong a byte over two pipes",
    .imitates = "lmbench 3 'lat_pipe': the parent creates two pipes and forks; each\n"
                "process writes a byte and sleeps in read until the other answers, so on\n"
                "one CPU every round trip is 4 syscalls and 2 context switches. Two pids,\n"
                "blocked reads, explicit switches; nothing random.",
    .default_user_insns = 20,
    .user_insns_source = "estimate: the loop and glibc's read/write wrappers, as for null",
    .default_pages = 2,
    .default_pattern = TRACE_PAT_HOT,
    .pages_source = "the loop's code page and its stack page (the byte is on the stack)",
    .params = pipe_params,
    .run = pipe_run,
};
