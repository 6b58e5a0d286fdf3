/* Workload generators: named, parameterised programs that write a vmsplit
 * trace (workloads/FORMAT.md) instead of capturing one with strace.
 *
 *   vmsplit gen null --count 1000000 -o null.vmt.gz
 *   vmsplit gen db --rate 20000 --clock-mhz 2800 --param procs=8 -o db.vmt
 *
 * Each generator imitates a real program and says which one, and where its
 * syscall mix comes from, in its `imitates` text (printed by
 * `vmsplit gen --help` and docs/generators.md): null and pipe are lmbench's
 * lat_syscall null and lat_pipe, fileio an IOzone-style 4 KiB record test on
 * a cached file, db a PostgreSQL backend under pgbench's TPC-B-like script,
 * net an epoll web server under a SPECweb99 file mix, compute gzip.
 *
 * Common knobs (GenOptions): the number of syscalls of the measured loop,
 * the seed, the user work between syscalls (instructions per syscall, or a
 * syscall rate per second of CPU time at a clock and IPC, converted the way
 * import-strace converts gaps: insns = clock x IPC / rate), and the user
 * working set. Each generator adds a few numeric parameters (GenParam).
 *
 * Determinism: a generator's only source of randomness is GenRng seeded
 * from GenOptions.seed (splitmix64, not rand()), so the same options give
 * byte-identical traces on every host. */
#ifndef VMSPLIT_REPLAY_GEN_H
#define VMSPLIT_REPLAY_GEN_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay/trace.h"

#define GEN_ERROR (gen_error_quark())
GQuark gen_error_quark(void);
typedef enum { GEN_ERROR_OPTION } GenErrorCode;

/* A generator parameter: a number with a default and a range. */
typedef struct {
    const char *key;    /* [a-z0-9-]+, given as --param KEY=VALUE */
    double def, min, max;
    bool integer;       /* whole numbers only */
    const char *help;   /* what it means and where the default comes from */
} GenParam;

#define GEN_MAX_PARAMS 8

typedef struct GenContext GenContext;

typedef struct {
    const char *name;
    const char *summary;   /* one line for the command list */
    const char *imitates;  /* the real program, the mix and its sources */
    uint64_t default_user_insns;   /* per syscall, when neither --rate nor --user-insns */
    const char *user_insns_source; /* why that default */
    uint32_t default_pages;
    TracePattern default_pattern;
    const char *pages_source;      /* why that working set */
    const GenParam *params;        /* terminated by a {NULL} entry */
    void (*run)(GenContext *g);
} Generator;

/* The registry, in the order `vmsplit gen --help` lists them; ends with NULL. */
extern const Generator *const gen_registry[];
const Generator *gen_find(const char *name);

typedef struct {
    uint64_t count;       /* syscalls of the measured loop (setup calls extra) */
    uint64_t seed;
    bool have_user_insns; /* --user-insns given */
    uint64_t user_insns;
    double rate;          /* syscalls per second of CPU time; 0: not given */
    double clock_mhz;     /* the clock a rate is converted at (default 2000) */
    double ipc;           /* instructions per cycle of that conversion (default 1) */
    uint32_t pages;       /* 0: the generator's default */
    bool have_pattern;
    TracePattern pattern;
    GStrv params;         /* "KEY=VALUE" entries, or NULL */
    /* Set when user_insns was solved for a realised rate (gen_rate.h): the
     * header then records the target, what the replay reached and where,
     * instead of the nominal clock and IPC. */
    double rate_target, rate_realised;
    const char *rate_on;  /* "p4-northwood, 3g1g, int 0x80" */
} GenOptions;

#define GEN_DEFAULT_COUNT 100000
#define GEN_DEFAULT_SEED 1
/* The same defaults as import-strace (FORMAT.md): 2000 MHz, IPC 1. */
#define GEN_DEFAULT_CLOCK_MHZ 2000.0
#define GEN_DEFAULT_IPC 1.0

void gen_options_init(GenOptions *o);

/* User instructions per loop syscall the options give for gen:
 * --user-insns, else round(clock x 1e6 x ipc / rate), else the default. */
uint64_t gen_user_insns(const Generator *gen, const GenOptions *o);

/* Checks the options against gen (count >= 1, rate > 0, not both rate and
 * user-insns, known parameters in range); false with a GEN_ERROR naming the
 * option and what was expected. */
bool gen_options_check(const Generator *gen, const GenOptions *o, GError **err);

/* Writes the trace to path ("-": standard output; ".gz": compressed). */
bool gen_write(const Generator *gen, const GenOptions *o, const char *path, GError **err);

/* ---- For generator implementations (gen_*.c) ----
 * Every loop syscall is preceded by exactly one user event of the same pid
 * (gen_user_insns instructions over the working set; none when that is 0).
 * Setup syscalls (opening files, creating pipes, forking) have no user work
 * and do not count. Once `count` loop syscalls are written every emitter
 * does nothing, so a generator loops `while (!gen_done(g))` and may stop in
 * the middle of a transaction. */
bool gen_done(const GenContext *g);
double gen_param(const GenContext *g, const char *key);
/* Uniform 64-bit values, [0, n) without bias, and true with probability p. */
uint64_t gen_rand(GenContext *g);
uint64_t gen_below(GenContext *g, uint64_t n);
bool gen_chance(GenContext *g, double p);

/* A syscall event with the common fields; the caller sets the rest. */
TraceEvent gen_sys_event(uint32_t pid, const char *name, int64_t ret);
void gen_setup_sys(GenContext *g, const TraceEvent *ev);
void gen_loop_sys(GenContext *g, const TraceEvent *ev);
/* Any other event (fork, switch...). */
void gen_emit(GenContext *g, const TraceEvent *ev);
void gen_switch(GenContext *g, uint32_t pid);

/* The generators (one file each). */
extern const Generator gen_null, gen_pipe, gen_fileio, gen_db, gen_net, gen_compute;

#endif
