/* vmsplit claim's private state, shared by claim.c (the workloads, the
 * table, the CSVs and plots), claim_statements.c (the seeds' statements
 * as a table), claim_uncertainty.c (the CPU design's intervals and the
 * tornadoes) and claim_intervals.c (the lowmem and KPTI statements'
 * intervals). Included by those four files only. */
#ifndef VMSPLIT_REPORT_CLAIM_PRIV_H
#define VMSPLIT_REPORT_CLAIM_PRIV_H

#include "calib/measurements.h"
#include "kernel_model/layout_mem.h"
#include "preset/preset.h"
#include "replay/replay.h"

#include <json-glib/json-glib.h>
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
    /* Uncertainty (claim_uncertainty.c): the 90 % interval of the null
     * call's 4g4g - 3g1g extra in us, [0] int 0x80, [1] sysenter, over
     * unc_used accepted points of unc_total. */
    bool have_unc;
    double extra_lo[3], extra_hi[3];     /* int 0x80, sysenter, sysenter under 32-bit paging */
    double ratio_lo, ratio_hi;           /* PAE / 32-bit paging extra, sysenter */
    unsigned unc_used, unc_total;
    /* ... and over the same points: the largest typical workload's
     * overhead (%), and the largest microbenchmark's minus it. */
    double typ_lo, typ_hi, micro_lo, micro_hi;
    bool typ_sampled;            /* a typical workload was in the design */
    JsonBuilder *json;           /* claim.json: the table and the statements */
    GString *statements_csv;     /* statements.csv: one row per statement */
} Claim;

/* Runs the uncertainty design as a sweep into DIR/uncertainty.csv (the
 * null call and every workload of c->wl at each point) and fills the
 * interval fields of c. */
bool claim_uncertainty_run(Claim *c, GError **err);
/* The tornadoes of the null call's int 0x80 extra (DIR/tornado.csv) and of
 * the db workload's overhead (DIR/tornado-db.csv), with tables on out. */
bool claim_tornado(Claim *c, FILE *out, GError **err);

/* Runs the jobs in parallel (cfg->jobs); the first error, prefixed with
 * the trace and layout, in err. */
bool claim_run_jobs(ReplayJob *jobs, size_t n, int par, GError **err);

/* 4g4g over 3g1g for a workload, in percent; a replay's syscall rate. */
double claim_overhead(const Workload *w);
double claim_rate_of(const ReplayResult *r);

/* LowTotal, mem_map, lowmem left... of a layout at ram, default map. */
#include "kernel_model/lowmem.h"
bool claim_lowmem_of(const char *layout, uint64_t ram, LowmemReport *r, GError **err);

/* The lowmem model's ranged estimates at one point (claim_intervals.c). */
typedef struct {
    uint32_t struct_page;        /* bytes */
    uint64_t tolm_mib, image_kib;
} ClaimLowmemSetting;
/* A statement's 90 % interval over `points` sampled points; have is false
 * when the claim runs without uncertainty. */
typedef struct {
    bool have;
    double lo, hi;
    unsigned points;
    const char *unit;            /* of lo and hi: "us", "pct", "ratio", "GiB", ... */
} ClaimInterval;
/* The estimates as shipped (what claim_lowmem_of uses). */
ClaimLowmemSetting claim_lowmem_shipped(void);
bool claim_lowmem_at(const ClaimLowmemSetting *s, const char *layout, uint64_t ram,
                     LowmemReport *r, GError **err);
/* A statement's figure at a setting. */
typedef bool (*ClaimLowmemFn)(const ClaimLowmemSetting *s, double *out, GError **err);
/* fn over the claim's N points of the design on the lowmem estimates. */
bool claim_lowmem_interval(const Claim *c, ClaimLowmemFn fn, ClaimInterval *out, GError **err);
/* "struct page 40..56 B, ..." for the statements' text. */
const char *claim_lowmem_ranges_text(void);
/* KPTI at 50 000 syscalls/s from the null generator's replays at each rate
 * (3g1g in base, kpti in kpti), interpolated in the baseline's rate. */
double claim_kpti_at50(ReplayResult *const *base, ReplayResult *const *kpti, size_t nr);
/* Its interval over the claim's N points of skylake's design. */
bool claim_kpti_interval(Claim *c, char *const *traces, size_t nr, ClaimInterval *out,
                         GError **err);

/* Section 2: every statement of the table, its model figure and verdict;
 * then the counts. */
bool claim_statements_print(Claim *c, FILE *out, GError **err);

#endif
