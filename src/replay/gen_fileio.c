/* fileio: 4 KiB reads and writes to a file held in the page cache.
 *
 * Imitates IOzone's record tests with a 4 KiB record on a file smaller
 * than RAM (`iozone -r 4k -s 1m`): the data never leaves the page cache, so
 * no call sleeps and each costs the VFS path and the copy. IOzone runs
 * reads and writes as separate phases; this generator mixes them with
 * probability read-pct (an estimate, chosen so one trace covers both
 * paths: set read-pct=100 or 0 for IOzone's pure read or write phases).
 *
 * Setup (not counted): openat of "iozone.tmp" (fd 3). Then, per operation:
 * random=0 (IOzone's sequential test): read or write 4096 bytes at the file
 * offset, and when the offset reaches the end of the file an lseek back to
 * 0 (a loop syscall, as IOzone's rewind is); random=1 (IOzone's random
 * read/write test, -i 2): pread64 or pwrite64 of 4096 bytes at a random
 * 4 KiB-aligned offset (the trace format has no offset field, so only the
 * call names differ). Random: the read/write choice. */
#include "replay/gen.h"

#define FILEIO_PID 1000
#define FILEIO_FD 3
#define RECORD 4096 /* IOzone -r 4k; one page, so each call copies one page */
#define PATH "iozone.tmp"

static void fileio_op(GenContext *g, bool read, bool positional)
{
    const char *name = positional ? (read ? "pread64" : "pwrite64") : (read ? "read" : "write");
    TraceEvent ev = gen_sys_event(FILEIO_PID, name, RECORD);
    ev.u.sys.fd = FILEIO_FD;
    ev.u.sys.req = RECORD;
    if (read)
        ev.u.sys.out = RECORD;
    else
        ev.u.sys.in = RECORD;
    gen_loop_sys(g, &ev);
}

static void fileio_run(GenContext *g)
{
    const double read_p = gen_param(g, "read-pct") / 100.0;
    const uint64_t file_pages = (uint64_t)gen_param(g, "file-pages");
    const bool random = gen_param(g, "random") != 0;

    TraceEvent ev = gen_sys_event(FILEIO_PID, "openat", FILEIO_FD);
    ev.u.sys.fd = -100; /* AT_FDCWD */
    ev.u.sys.in = sizeof PATH; /* the path and its NUL */
    gen_setup_sys(g, &ev);

    uint64_t page = 0;
    while (!gen_done(g)) {
        bool read = gen_chance(g, read_p);
        fileio_op(g, read, random);
        if (random)
            continue; /* the offset is not in the trace: FORMAT.md has no field for it */
        if (++page == file_pages) {
            ev = gen_sys_event(FILEIO_PID, "lseek", 0);
            ev.u.sys.fd = FILEIO_FD;
            ev.u.sys.op = g_intern_string("SEEK_SET");
            gen_loop_sys(g, &ev);
            page = 0;
        }
    }
}

static const GenParam fileio_params[] = {
    {"read-pct", 50, 0, 100, false,
     "percentage of operations that read (estimate: an even mix; IOzone's phases are 100 or 0)"},
    {"file-pages", 256, 1, 262144, true,
     "file size in 4 KiB pages (IOzone -s 1m: 256); at most 1 GiB, well inside the page cache"},
    {"random", 0, 0, 1, true,
     "0: sequential read/write with a rewind at the end; 1: pread64/pwrite64 at random offsets"},
    {NULL, 0, 0, 0, false, NULL},
};

const Generator gen_fileio = {
    .name = "fileio",
    .summary = "IOzone-style 4 KiB record reads and writes on a page-cached file",
    .imitates = "IOzone's record tests with -r 4k on a file that stays in the page cache:\n"
                "read/write of 4096 bytes at the file offset with an lseek rewind at the\n"
                "end (random=1: pread64/pwrite64 at random offsets, IOzone -i 2). Nothing\n"
                "sleeps. The read/write mix is an estimate (IOzone runs them as phases).",
    .default_user_insns = 500,
    .user_insns_source = "estimate: IOzone's loop between calls only advances the offset and\n"
                         "checks the count; a few hundred instructions with its timing code",
    .default_pages = 4,
    .default_pattern = TRACE_PAT_HOT,
    .pages_source = "the 4 KiB record buffer, the stack, code and a page of IOzone's state",
    .params = fileio_params,
    .run = fileio_run,
};
