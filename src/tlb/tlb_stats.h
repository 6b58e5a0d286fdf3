/* TLB statistics: one struct generated from tlb_stats.def, and the only
 * code that prints it (text, CSV, JSON). Callers never name counters in
 * output code; they iterate tlb_stats_item(), so adding a counter to the
 * .def file is the whole job.
 *
 * Split counters are stored as a [access][privilege] matrix so the hit path
 * increments one cell; the totals and marginals are computed when read. */
#ifndef VMSPLIT_TLB_TLB_STATS_H
#define VMSPLIT_TLB_TLB_STATS_H

#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmu/pae.h"             /* Access */

/* Privilege column: user is CPL 3, kernel is CPL 0-2. */
#define TLB_PRIV_KERNEL 0
#define TLB_PRIV_USER 1
#define TLB_PRIV(cpl) ((cpl) == 3 ? TLB_PRIV_USER : TLB_PRIV_KERNEL)
#define TLB_NACCESS 3            /* indexed by Access: READ, WRITE, EXEC */

typedef struct {
#define TLB_STAT_EVENT(field, name, desc) uint64_t field[TLB_NACCESS][2];
#define TLB_STAT_COUNT(field, name, desc) uint64_t field;
#include "tlb/tlb_stats.def"
#undef TLB_STAT_EVENT
#undef TLB_STAT_COUNT
} TlbStats;

/* One printable counter. */
typedef struct {
    const char *name;            /* "misses_write" */
    const char *description;
    uint64_t value;
} TlbStatItem;

/* Number of printable counters (each EVENT gives 6, each COUNT 1). */
size_t tlb_stats_count(void);
/* Counter i (0 <= i < tlb_stats_count()) of s, in .def order. */
TlbStatItem tlb_stats_item(const TlbStats *s, size_t i);
/* Value by printable name; false if there is no such counter. */
bool tlb_stats_get(const TlbStats *s, const char *name, uint64_t *value);

/* dst += src, counter by counter. */
void tlb_stats_add(TlbStats *dst, const TlbStats *src);

/* A text table: one row per counter, one column per stats block (e.g. the
 * hierarchy and each array). With skip_zero, rows that are 0 in every
 * column are left out. */
void tlb_stats_print_table(FILE *out, size_t ncols, const char *const titles[],
                           const TlbStats *const stats[], bool skip_zero);

/* CSV: comma-separated field names (each prefixed with prefix, which may be
 * NULL) and values, in the same order. Neither writes a leading or trailing
 * comma or a newline, so a caller can put other columns around them. */
void tlb_stats_csv_header(FILE *out, const char *prefix);
void tlb_stats_csv_row(FILE *out, const TlbStats *s);

/* JSON: adds one member per counter ("hits": 123, ...) to the object the
 * builder is currently inside (the caller begins and ends it). */
void tlb_stats_to_json(const TlbStats *s, JsonBuilder *b);

#endif
