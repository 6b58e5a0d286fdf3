/* vmsplit claim's private state, shared by claim.c (the workloads, the
 * table, the CSVs and plots) and claim_statements.c (the seeds' statements
 * as a table). Included by those two files only. */
#ifndef VMSPLIT_REPORT_CLAIM_PRIV_H
#define VMSPLIT_REPORT_CLAIM_PRIV_H

#include "cpu/preset.h"
#include "replay/replay.h"
#include "report/claim.h"

typedef struct {
    const char *name;            /* "db", or a trace file name */
    char *trace;                 /* path */
    ReplayResult *r[2];          /* 3g1g, 4g4g */
    bool typical;                /* the mail's "typical application workloads" */
    bool micro;                  /* an isolated microbenchmark */
} Workload;

typedef struct {
    const ClaimConfig *cfg;
    Preset *p4, *skylake;
    char *tracedir;
    GPtrArray *wl;               /* Workload* */
    FILE *kpti_csv;              /* the KPTI statement writes its curve here */
} Claim;

/* Runs the jobs in parallel (cfg->jobs); the first error, prefixed with
 * the trace and layout, in err. */
bool claim_run_jobs(ReplayJob *jobs, size_t n, int par, GError **err);

/* 4g4g over 3g1g for a workload, in percent; a replay's syscall rate. */
double claim_overhead(const Workload *w);
double claim_rate_of(const ReplayResult *r);

/* LowTotal, mem_map, lowmem left... of a layout at ram, default map. */
#include "kernel_model/lowmem.h"
bool claim_lowmem_of(const char *layout, uint64_t ram, LowmemReport *r, GError **err);

/* Section 2: every statement of the table, its model figure and verdict;
 * then the counts. */
bool claim_statements_print(Claim *c, FILE *out, GError **err);

#endif
