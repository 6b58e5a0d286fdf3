/* A `refs` event (trace format version 2) replayed: the program's own
 * memory references made through the simulated machine's MMU, TLBs and
 * caches, at CPL 3, in the order the trace gives them:
 *
 *   i ADDR N      one instruction-side translation of ADDR (ITLB lookup,
 *                 walk on a miss) and N - 1 hits counted on the entry it
 *                 leaves (no instruction cache is modelled: mmu.h)
 *   r/w ADDR S N  N loads or stores: a DTLB lookup (walk on a miss) and a
 *                 cache reference of ADDR's line each, timed by the preset
 *   m ADDR S N    N read-modify-writes: a load then a store each
 *
 * and the event's INSNS instructions charged at the preset's base (ALU)
 * cost. A reference to a page that is not present yet (or a write to a
 * copy-on-write page) first takes its page fault on the core
 * (kernel_model/usermm.h). References come from the reader in bounded
 * chunks: memory does not grow with the trace.
 *
 * Merged runs (N > 1) make exactly the TLB and cache references the same
 * run written one reference per line would make: after the first, each is
 * a hit on the entry and the line the first left most recently used. */
#ifndef VMSPLIT_REPLAY_REPLAY_REFS_H
#define VMSPLIT_REPLAY_REPLAY_REFS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel_model/machine.h"
#include "kernel_model/usermm.h"
#include "replay/trace.h"

typedef struct {
    uint64_t events;             /* refs events */
    uint64_t lines;              /* reference lines */
    uint64_t refs;               /* references: instructions fetched + data references */
    uint64_t insns;
    uint64_t cycles;             /* of the refs events, page faults excluded */
    uint64_t walk_cycles;        /* of those: TLB refills (user-work refills) */
    uint64_t collisions;         /* writes to the machine's read-only page made as reads */
} RefsTotals;

/* Replays ev (a refs event the reader just returned) on the current task
 * of m, reading its reference lines from tr. Errors name the trace's file
 * and line. */
bool replay_refs_run(Machine *m, UserMm *um, TraceReader *tr, const TraceEvent *ev,
                     RefsTotals *t, GError **err);

#endif
