/* compute: long user work, rare syscalls: gzip compressing a file.
 *
 * gzip 1.x reads its input in INBUFSIZ = 0x8000 (32 KiB) blocks and writes
 * OUTBUFSIZ = 16384-byte blocks (gzip.h). Between calls deflate runs for
 * millions of instructions over its 32 KiB window, hash head and prev
 * tables. Trace: setup openat of the input (fd 3); then read(3, 32768) and,
 * whenever `ratio` input bytes have produced a full 16 KiB output buffer,
 * write(1, 16384) to standard output (gzip -c). The output is tracked in
 * exact integer arithmetic (bytes x 1000 / ratio-permille), so the pattern
 * is periodic: with ratio 3, read, read, write, read, write. Nothing random. */
#include "replay/gen.h"

#include <math.h>

#define COMPUTE_PID 1000
#define FD_IN 3
#define FD_OUT 1
#define INBUFSIZ 32768
#define OUTBUFSIZ 16384
#define PATH "corpus.txt"

static void compute_io(GenContext *g, bool read)
{
    uint64_t n = read ? INBUFSIZ : OUTBUFSIZ;
    TraceEvent ev = gen_sys_event(COMPUTE_PID, read ? "read" : "write", (int64_t)n);
    ev.u.sys.fd = read ? FD_IN : FD_OUT;
    ev.u.sys.req = n;
    if (read)
        ev.u.sys.out = n;
    else
        ev.u.sys.in = n;
    gen_loop_sys(g, &ev);
}

static void compute_run(GenContext *g)
{
    const uint64_t ratio_pm = (uint64_t)llround(gen_param(g, "ratio") * 1000);
    TraceEvent ev = gen_sys_event(COMPUTE_PID, "openat", FD_IN);
    ev.u.sys.fd = -100; /* AT_FDCWD */
    ev.u.sys.in = sizeof PATH;
    gen_setup_sys(g, &ev);
    uint64_t pending = 0; /* output bytes x ratio_pm not yet written */
    while (!gen_done(g)) {
        compute_io(g, true);
        pending += (uint64_t)INBUFSIZ * 1000;
        while (pending >= (uint64_t)OUTBUFSIZ * ratio_pm && !gen_done(g)) {
            compute_io(g, false);
            pending -= (uint64_t)OUTBUFSIZ * ratio_pm;
        }
    }
}

static const GenParam compute_params[] = {
    {"ratio", 3, 1, 1000, false,
     "compression ratio, input bytes per output byte (estimate: gzip -6 on English text\n"
     "        such as the Calgary corpus gives about 2.7 bits per character, ~3:1)"},
    {NULL, 0, 0, 0, false, NULL},
};

const Generator gen_compute = {
    .name = "compute",
    .summary = "gzip -c: millions of user instructions per 32 KiB read or 16 KiB write",
    .imitates = "gzip -c compressing a file: read(32 KiB, INBUFSIZ) and write(16 KiB,\n"
                "OUTBUFSIZ) as in gzip.h, a write whenever the compression ratio has filled\n"
                "the output buffer; long user work between calls. Nothing random.",
    .default_user_insns = 2000000,
    .user_insns_source = "estimate: gzip -6 spends ~100 instructions per input byte (about\n"
                         "30 MB/s on a 2 GHz core at IPC 1.5); 96 KiB of input per 5 syscalls\n"
                         "at ratio 3 gives ~2 million per syscall",
    .default_pages = 64,
    .default_pattern = TRACE_PAT_RAND,
    .pages_source = "deflate's 64 KiB window, 64 KiB head and prev tables and the buffers:\n"
                    "~250 KiB, reached through hash chains (random)",
    .params = compute_params,
    .run = compute_run,
};
