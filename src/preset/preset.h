/* CPU presets: the machine description -- the hardware figures of one
 * processor model, with the plausible ranges of its estimates -- read from
 * presets/NAME.ini with GKeyFile (src/preset/preset.c, preset_range.c).
 * Every figure in the .ini files carries its source in a comment beside
 * it, or says it is an estimate and why. The struct is public because the
 * TLB hierarchy, the cache model and the core all read it at setup time
 * (never on the hot path). It is a module of its own, beside the TLB and
 * the MMU: the geometry of a TLB array and of a cache level are defined
 * with what they describe (tlb/tlb_geom.h, mmu/cache_geom.h), and nothing
 * here depends on the core. */
#ifndef VMSPLIT_PRESET_PRESET_H
#define VMSPLIT_PRESET_PRESET_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "mmu/cache_geom.h"      /* CacheGeom */
#include "tlb/tlb_geom.h"        /* TlbGeom, PRESET_PG_* */

#define PRESET_ERROR (preset_error_quark())
GQuark preset_error_quark(void);
typedef enum {
    PRESET_ERROR_NOT_FOUND,
    PRESET_ERROR_PARSE,
    PRESET_ERROR_INVALID,
} PresetError;

/* Cycle costs charged by the core (src/cpu). */
typedef struct {
    unsigned alu;                /* simple integer op, register operands */
    unsigned mul, div;
    unsigned branch;             /* taken jump / call / ret */
    unsigned string_iter;        /* one iteration of a REP string op */
    unsigned mov_cr3;            /* MOV to CR3, excluding the PDPTE loads */
    unsigned mov_cr_other;       /* MOV to CR0/CR4 */
    unsigned invlpg;
    unsigned int_gate;           /* INT n / exception delivery through a gate */
    unsigned iret;
    unsigned sysenter, sysexit;
    unsigned serializing;        /* CPUID, WRMSR, LGDT/LIDT/LTR */
    unsigned io;                 /* IN/OUT */
    unsigned page_walk_base;     /* walker overhead besides its memory references */
} CpuCosts;

/* A plausible range declared beside an estimated figure, in its comment
 * (presets/README.md, "Ranges"): "range LO..HI" for a number the
 * uncertainty analysis may sample and calibration may fit, or
 * "alternatives A,B" for a switch or a discrete choice. The value must lie
 * in its range; a figure marked "estimate:" or "fitted:" must have one. */
typedef enum {
    PRESET_RANGE_SPAN,           /* range LO..HI (unsigned keys) */
    PRESET_RANGE_ALTERNATIVES,   /* alternatives A,B,... (any type but text) */
} PresetRangeKind;

typedef enum {
    PRESET_ORIGIN_SOURCED,       /* a source beside it; a range is optional */
    PRESET_ORIGIN_ESTIMATE,      /* "estimate:" */
    PRESET_ORIGIN_FITTED,        /* "fitted:" (vmsplit calibrate) */
} PresetOrigin;

typedef struct {
    char *id;                    /* "cost.int_gate" */
    PresetRangeKind kind;
    PresetOrigin origin;
    unsigned lo, hi;             /* SPAN */
    char **alternatives;         /* ALTERNATIVES, as written */
    bool has_prior;              /* "prior N": the estimate a fit started from */
    unsigned prior;
    int line;                    /* in the preset file */
} PresetRange;

typedef struct Preset {
    char *name;                  /* "p4-northwood" */
    char *description;
    char *path;                  /* file it was read from */
    double clock_mhz;

    /* CPUID features. */
    bool pae, pge, pse, sep, nx, pcid;

    /* TLB hierarchy (src/tlb). A *_large array with entries == 0 means
     * large pages share the 4 KiB array when its page_sizes includes them. */
    TlbGeom itlb_4k, itlb_large, dtlb_4k, dtlb_large;
    TlbGeom stlb;                /* unified second level; entries == 0: none */
    bool stlb_data_only;         /* the second level backs the DTLB only
                                  * (Core 2's DTLB1); ITLB misses walk */
    unsigned pde_cache_entries;  /* paging-structure cache; 0: none */
    char *tlb_policy;            /* "lru", "plru", "fifo", "random" */

    /* Caches (src/mmu/cache.c), physical addresses. */
    CacheGeom l1d, l2, l3;
    unsigned mem_latency;        /* cycles behind the last level */
    /* How MOV CR3 reads the four PDPTEs: uncached (true: each read costs
     * mem_latency) or through the caches. SDM: model-specific. */
    bool pdpte_load_uncached;

    CpuCosts cost;

    /* The declared ranges, in file order (presets/README.md, "Ranges"). */
    PresetRange *ranges;
    unsigned nranges;
} Preset;

/* The preset used when none is named: the 2003 x86 server. */
#define PRESET_DEFAULT "p4-northwood"

/* Load a preset by name (looked up in the source tree's presets/, then the
 * installed data dir) or by path (anything containing '/' or ending .ini).
 * Strict: unknown keys, missing keys, bad geometry are errors naming the
 * file and the key. */
Preset *preset_load(const char *name_or_path, GError **err);
void preset_free(Preset *p);

/* A deep copy (calibration and sampling change a copy). */
Preset *preset_copy(const Preset *p);

/* An alternative of a range as the unsigned its key holds ("true" 1,
 * "false" 0, a decimal number); false for a text key's alternatives. */
bool preset_alternative_value(const char *a, unsigned *out);

/* The range declared for a key ("cost.mov_cr3"); NULL if none. */
const PresetRange *preset_range_find(const Preset *p, const char *id);

/* Unsigned and boolean keys by id ("cost.int_gate", "memory.latency",
 * "memory.pdpte_load_uncached" as 0/1). False if the id names no such key. */
bool preset_get_uint(const Preset *p, const char *id, unsigned *out);
bool preset_set_uint(Preset *p, const char *id, unsigned v);

/* Names of the bundled presets, sorted; free with g_strfreev. */
char **preset_list(void);

/* The directory the bundled presets are read from: $VMSPLIT_PRESET_DIR,
 * else the source tree's presets/ if it exists, else the installed one. */
const char *preset_dir(void);

/* The resolved preset, every key grouped as in the files: as .ini text
 * (itself a valid preset file) or as a JSON object of groups. g_free. */
char *preset_to_ini(const Preset *p);
char *preset_to_json(const Preset *p);

#endif
