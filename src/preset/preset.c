/* CPU presets: strict reading of presets/NAME.ini (format and every key in
 * presets/README.md).
 *
 * One table (preset_keys below) lists every key: its group, type, where it
 * goes in the Preset struct, whether it is required, its least value and a
 * one-line meaning. Parsing, validation, `vmsplit presets show` (.ini and
 * JSON) all walk that table, so a key added there is read, checked and
 * printed everywhere.
 *
 * GKeyFile knows no comments after a value, but every figure in a preset has
 * its source beside it, so a '#' preceded by white space ends a value here.
 * GKeyFile also reports no line numbers for keys; a first pass over the text
 * records the line of every group and key (and rejects duplicates, which
 * GKeyFile would silently merge), so every message reads
 * "FILE:LINE: group.key: what is wrong; expected what".
 *
 * The comment beside a value may declare its plausible range ("range
 * LO..HI" or "alternatives A,B") and its origin ("estimate:", "fitted:",
 * "prior N"); preset_range.c reads them (presets/README.md, "Ranges"). */
#include "preset/preset.h"
#include "preset/preset_priv.h"
#include "textfile/textfile.h"

#include "config.h"
#include "mmu/cache.h"
#include "tlb/policy.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(vmsplit-preset-error-quark, preset_error)

typedef struct {
    const char *name;
    bool optional;               /* an absent group: the structure does not exist */
} GroupDef;

static const GroupDef preset_groups[] = {
    { "cpu", false },        { "features", false }, { "itlb_4k", false },
    { "itlb_large", true },  { "dtlb_4k", false },  { "dtlb_large", true },
    { "stlb", true },        { "tlb", false },      { "l1d", false },
    { "l2", false },         { "l3", true },        { "memory", false },
    { "cost", false },
};

#define OFF(f) offsetof(Preset, f)
#define TLB_KEYS(G, F, ENTRIES_MIN, HIT_FLAGS, HIT_MIN)                                 \
    { G, "entries", T_UINT, OFF(F.entries), K_GATE, ENTRIES_MIN,                        \
      "entries; 0: the array does not exist" },                                         \
    { G, "ways", T_UINT, OFF(F.ways), K_GATED, 1,                                       \
      "associativity; equal to entries: fully associative" },                           \
    { G, "page_sizes", T_PGSIZES, OFF(F.page_sizes), K_GATED, 1,                        \
      "page sizes held, comma separated: 4K, 2M, 4M" },                                 \
    { G, "hit_latency", T_UINT, OFF(F.hit_latency), HIT_FLAGS, HIT_MIN,                 \
      "extra cycles of a hit in this array (second-level arrays)" }
#define CACHE_KEYS(G, F, SIZE_MIN)                                                      \
    { G, "size", T_BYTES, OFF(F.size), K_GATE, SIZE_MIN,                                \
      "capacity in bytes (K, M suffixes); 0: no such level" },                          \
    { G, "ways", T_UINT, OFF(F.ways), K_GATED, 1, "associativity" },                    \
    { G, "line", T_BYTES, OFF(F.line), K_GATED, 1, "line size in bytes" },              \
    { G, "latency", T_UINT, OFF(F.latency), K_GATED, 1,                                 \
      "load-to-use cycles when this level supplies the data" }
#define COST(K, MIN, DOC) { "cost", #K, T_UINT, OFF(cost.K), K_REQ, MIN, DOC }

static const KeyDef preset_keys[] = {
    { "cpu", "description", T_STR, OFF(description), K_REQ, 0, "one line: the part" },
    { "cpu", "clock_mhz", T_MHZ, OFF(clock_mhz), K_REQ, 0, "core clock in MHz" },
    { "features", "pae", T_BOOL, OFF(pae), K_REQ, 0, "CPUID.1:EDX.PAE (must be true: see check_geometry)" },
    { "features", "pge", T_BOOL, OFF(pge), K_REQ, 0, "CPUID.1:EDX.PGE, global pages" },
    { "features", "pse", T_BOOL, OFF(pse), K_REQ, 0, "CPUID.1:EDX.PSE, large pages" },
    { "features", "sep", T_BOOL, OFF(sep), K_REQ, 0, "CPUID.1:EDX.SEP, SYSENTER/SYSEXIT" },
    { "features", "nx", T_BOOL, OFF(nx), K_REQ, 0, "CPUID.80000001:EDX.NX, execute-disable" },
    { "features", "pcid", T_BOOL, OFF(pcid), K_REQ, 0, "CPUID.1:ECX.PCID" },
    TLB_KEYS("itlb_4k", itlb_4k, 1, K_OPT, 0),
    TLB_KEYS("itlb_large", itlb_large, 0, K_OPT, 0),
    TLB_KEYS("dtlb_4k", dtlb_4k, 1, K_OPT, 0),
    TLB_KEYS("dtlb_large", dtlb_large, 0, K_OPT, 0),
    TLB_KEYS("stlb", stlb, 0, K_GATED, 1),
    { "stlb", "data_only", T_BOOL, OFF(stlb_data_only), K_GATED, 0,
      "true: backs the DTLB only, ITLB misses walk" },
    { "tlb", "policy", T_POLICY, OFF(tlb_policy), K_REQ, 0,
      "replacement policy (src/tlb/policies.def)" },
    { "tlb", "pde_cache_entries", T_UINT, OFF(pde_cache_entries), K_REQ, 0,
      "paging-structure (PDE) cache entries; 0: none" },
    CACHE_KEYS("l1d", l1d, 1),
    CACHE_KEYS("l2", l2, 0),
    CACHE_KEYS("l3", l3, 0),
    { "memory", "latency", T_UINT, OFF(mem_latency), K_REQ, 1,
      "load-to-use cycles of a reference that misses every level" },
    { "memory", "pdpte_load_uncached", T_BOOL, OFF(pdpte_load_uncached), K_REQ, 0,
      "MOV CR3 reads the 4 PDPTEs uncached (true) or through the caches" },
    COST(alu, 1, "simple integer op, register operands"),
    COST(mul, 1, "integer multiply"),
    COST(div, 1, "integer divide"),
    COST(branch, 1, "taken jump, call or ret"),
    COST(string_iter, 1, "one iteration of a REP string op"),
    COST(mov_cr3, 1, "MOV to CR3, excluding the PDPTE loads and TLB refills"),
    COST(mov_cr_other, 1, "MOV to CR0/CR4"),
    COST(invlpg, 1, "INVLPG"),
    COST(int_gate, 1, "INT n / exception delivery through a gate"),
    COST(iret, 1, "IRET"),
    COST(sysenter, 1, "SYSENTER"),
    COST(sysexit, 1, "SYSEXIT"),
    COST(serializing, 1, "CPUID, WRMSR, LGDT/LIDT/LTR"),
    COST(io, 1, "IN/OUT"),
    COST(page_walk_base, 0, "walker overhead besides its memory references"),
};

/* ---- the text pass: line numbers, duplicates --------------------------- */

static char *src_id(const char *group, const char *key)
{
    return key ? g_strconcat(group, "\x1f", key, NULL) : g_strdup(group);
}

static int src_line(const Src *s, const char *group, const char *key)
{
    char *id = src_id(group, key);
    int line = GPOINTER_TO_INT(g_hash_table_lookup(s->lines, id));
    g_free(id);
    return line;
}

bool preset_src_fail(GError **err, int code, const Src *s, int line,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (line > 0)
        g_set_error(err, PRESET_ERROR, code, "%s:%d: %s", s->path, line, msg);
    else
        g_set_error(err, PRESET_ERROR, code, "%s: %s", s->path, msg);
    g_free(msg);
    return false;
}

static bool src_scan(Src *s, const char *text, GError **err)
{
    char **lines = g_strsplit(text, "\n", -1);
    char *group = NULL;
    bool ok = true;
    for (int i = 0; ok && lines[i]; i++) {
        char *l = g_strstrip(lines[i]);
        if (!*l || *l == '#')
            continue;
        char *id = NULL;
        if (*l == '[') {
            char *end = strchr(l, ']');
            if (!end)
                continue;        /* GKeyFile reports it */
            g_free(group);
            group = g_strndup(l + 1, (gsize)(end - l - 1));
            id = src_id(group, NULL);
        } else {
            char *eq = strchr(l, '=');
            if (!eq || !group)
                continue;
            *eq = '\0';
            id = src_id(group, g_strstrip(l));
        }
        if (g_hash_table_contains(s->lines, id)) {
            char *shown = g_strdelimit(g_strdup(id), "\x1f", '.');
            ok = preset_src_fail(err, PRESET_ERROR_PARSE, s, i + 1,
                          "%s appears twice (first on line %d); expected it once",
                          shown, GPOINTER_TO_INT(g_hash_table_lookup(s->lines, id)));
            g_free(shown);
            g_free(id);
        } else {
            g_hash_table_insert(s->lines, id, GINT_TO_POINTER(i + 1));
        }
    }
    g_free(group);
    g_strfreev(lines);
    return ok;
}

/* ---- values ------------------------------------------------------------ */

/* The value with a trailing "  # comment" removed and white space trimmed. */
static char *value_clean(const char *raw)
{
    char *v = g_strdup(raw);
    for (char *p = v; *p; p++) {
        if (*p == '#' && (p == v || *(p - 1) == ' ' || *(p - 1) == '\t')) {
            *p = '\0';
            break;
        }
    }
    return g_strstrip(v);
}

bool preset_parse_uint(const char *v, uint64_t max, uint64_t *out)
{
    if (!*v || !g_ascii_isdigit(*v))
        return false;
    char *end = NULL;
    guint64 n = g_ascii_strtoull(v, &end, 10);
    if (*end || n > max)
        return false;
    *out = n;
    return true;
}

/* "8192", "8K", "512K", "2M", "8KiB" (binary multiples). */
bool preset_parse_bytes(const char *v, uint64_t *out)
{
    if (!*v || !g_ascii_isdigit(*v))
        return false;
    char *end = NULL;
    guint64 n = g_ascii_strtoull(v, &end, 10);
    uint64_t mul = 1;
    switch (g_ascii_toupper(*end)) {
    case '\0': break;
    case 'K': mul = 1ULL << 10; end++; break;
    case 'M': mul = 1ULL << 20; end++; break;
    case 'G': mul = 1ULL << 30; end++; break;
    default: return false;
    }
    if (mul > 1 && (!g_ascii_strcasecmp(end, "iB") || !g_ascii_strcasecmp(end, "B")))
        end += strlen(end);
    if (*end || n > UINT32_MAX / mul)
        return false;
    *out = n * mul;
    return true;
}

static bool parse_pgsizes(const char *v, unsigned *out)
{
    unsigned mask = 0;
    char **parts = g_strsplit_set(v, ",;", -1);
    bool ok = true;
    for (int i = 0; ok && parts[i]; i++) {
        char *p = g_strstrip(parts[i]);
        if (!*p && !parts[i + 1] && i > 0)
            continue;            /* trailing separator */
        if (!g_ascii_strcasecmp(p, "4K"))
            mask |= PRESET_PG_4K;
        else if (!g_ascii_strcasecmp(p, "2M"))
            mask |= PRESET_PG_2M;
        else if (!g_ascii_strcasecmp(p, "4M"))
            mask |= PRESET_PG_4M;
        else if (*p || parts[1])
            ok = false;
    }
    g_strfreev(parts);
    *out = mask;
    return ok;
}

/* What a key's value must look like; g_free. */
char *preset_key_expect(const KeyDef *k)
{
    switch (k->type) {
    case T_STR: return g_strdup("a string");
    case T_BOOL: return g_strdup("true or false");
    case T_UINT: return g_strdup("an unsigned decimal integer");
    case T_MHZ: return g_strdup("a positive number of MHz");
    case T_BYTES: return g_strdup("a byte count such as 32768, 32K or 2M");
    case T_PGSIZES: return g_strdup("a list of 4K, 2M, 4M separated by commas");
    case T_POLICY: {
        size_t n = 0;
        const TlbPolicy *const *all = tlb_policy_all(&n);
        GString *list = g_string_new("one of ");
        for (size_t i = 0; i < n; i++)
            g_string_append_printf(list, "%s%s", i ? ", " : "", all[i]->name);
        return g_string_free(list, FALSE);
    }
    }
    return g_strdup("?");
}

/* Parse one present value into p. gate_on: the group's structure exists. */
static bool key_parse(Preset *p, const KeyDef *k, const char *v, bool gate_on,
                      const Src *s, int line, GError **err)
{
    char *field = (char *)p + k->off;
    uint64_t n = 0;
    unsigned mask = 0;
    bool ok = true;
    switch (k->type) {
    case T_STR:
        *(char **)field = g_strdup(v);
        return true;
    case T_BOOL:
        if ((ok = !strcmp(v, "true") || !strcmp(v, "false")))
            *(bool *)field = !strcmp(v, "true");
        break;
    case T_MHZ: {
        char *end = NULL;
        double d = g_ascii_strtod(v, &end);
        if ((ok = *v && !*end && isfinite(d) && d > 0))
            *(double *)field = d;
        break;
    }
    case T_UINT:
    case T_BYTES:
        ok = k->type == T_UINT ? preset_parse_uint(v, UINT32_MAX, &n) : preset_parse_bytes(v, &n);
        if (ok && gate_on && n < k->min)
            return preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                            "%s.%s: %s; expected at least %u", k->group, k->key, v,
                            k->min);
        if (ok)
            *(unsigned *)field = (unsigned)n;
        break;
    case T_PGSIZES:
        ok = parse_pgsizes(v, &mask);
        if (ok && gate_on && !mask)
            return preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                            "%s.%s: empty; expected at least one of 4K, 2M, 4M",
                            k->group, k->key);
        if (ok)
            *(unsigned *)field = mask;
        break;
    case T_POLICY: {
        const TlbPolicy *pol = tlb_policy_find(v, NULL);
        if ((ok = pol != NULL))
            *(char **)field = g_strdup(pol->name);
        break;
    }
    }
    if (!ok) {
        char *expect = preset_key_expect(k);
        preset_src_fail(err, PRESET_ERROR_PARSE, s, line, "%s.%s: '%s'; expected %s", k->group,
                 k->key, v, expect);
        g_free(expect);
    }
    return ok;
}

static bool group_known(const char *g, bool *optional)
{
    for (size_t i = 0; i < G_N_ELEMENTS(preset_groups); i++)
        if (!strcmp(preset_groups[i].name, g)) {
            if (optional)
                *optional = preset_groups[i].optional;
            return true;
        }
    return false;
}

static char *group_keys_list(const char *g)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(preset_keys); i++)
        if (!strcmp(preset_keys[i].group, g))
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", preset_keys[i].key);
    return g_string_free(s, FALSE);
}

const KeyDef *preset_key_find(const char *g, const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(preset_keys); i++)
        if (!strcmp(preset_keys[i].group, g) && !strcmp(preset_keys[i].key, key))
            return &preset_keys[i];
    return NULL;
}

/* Unknown groups and keys, missing required groups. */
static bool check_names(GKeyFile *kf, const Src *s, GError **err)
{
    gsize ng = 0;
    char **groups = g_key_file_get_groups(kf, &ng);
    bool ok = true;
    for (gsize i = 0; ok && i < ng; i++) {
        if (!group_known(groups[i], NULL)) {
            GString *all = g_string_new(NULL);
            for (size_t j = 0; j < G_N_ELEMENTS(preset_groups); j++)
                g_string_append_printf(all, "%s%s", j ? ", " : "", preset_groups[j].name);
            ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, groups[i], NULL),
                          "unknown group [%s]; expected one of %s", groups[i], all->str);
            g_string_free(all, TRUE);
            break;
        }
        char **keys = g_key_file_get_keys(kf, groups[i], NULL, NULL);
        for (int j = 0; ok && keys && keys[j]; j++) {
            if (preset_key_find(groups[i], keys[j]))
                continue;
            char *list = group_keys_list(groups[i]);
            ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, groups[i], keys[j]),
                          "unknown key %s.%s; expected one of %s", groups[i], keys[j],
                          list);
            g_free(list);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
    for (size_t i = 0; ok && i < G_N_ELEMENTS(preset_groups); i++) {
        const char *g = preset_groups[i].name;
        if (preset_groups[i].optional || g_key_file_has_group(kf, g))
            continue;
        char *list = group_keys_list(g);
        ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, 0,
                      "missing group [%s]; expected it with the keys %s", g, list);
        g_free(list);
    }
    return ok;
}

/* Read every key of the table into p. */
static bool read_keys(GKeyFile *kf, Preset *p, const Src *s, GError **err)
{
    bool gate_on = true;
    for (size_t i = 0; i < G_N_ELEMENTS(preset_keys); i++) {
        const KeyDef *k = &preset_keys[i];
        if (!g_key_file_has_group(kf, k->group)) {
            gate_on = false;     /* optional group absent: all zero */
            continue;
        }
        int line = src_line(s, k->group, k->key);
        char *raw = g_key_file_get_value(kf, k->group, k->key, NULL);
        if (!raw) {
            bool needed = !(k->flags & (K_OPT | K_GATED)) || ((k->flags & K_GATED) && gate_on);
            if (needed) {
                char *expect = preset_key_expect(k);
                preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, k->group, NULL),
                         "[%s] lacks %s.%s (%s); expected %s", k->group, k->group, k->key,
                         k->doc, expect);
                g_free(expect);
                return false;
            }
            if (k->flags & K_GATE)
                gate_on = false;
            continue;
        }
        char *v = value_clean(raw);
        bool on = (k->flags & K_GATED) ? gate_on : true;
        bool ok = key_parse(p, k, v, on, s, line, err) && preset_range_read(p, k, raw, s, line, err);
        g_free(v);
        g_free(raw);
        if (!ok)
            return false;
        if (k->flags & K_GATE)
            gate_on = *(unsigned *)((char *)p + k->off) != 0;
    }
    return true;
}

/* ---- geometry ---------------------------------------------------------- */

static bool check_tlb(const TlbGeom *t, const char *g, bool small, const Src *s,
                      GError **err)
{
    if (!t->entries)
        return true;
    if (t->ways > t->entries)
        return preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, g, "ways"),
                        "%s.ways: %u; expected at most entries (%u)", g, t->ways,
                        t->entries);
    if (t->entries % t->ways)
        return preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, g, "ways"),
                        "%s.ways: %u does not divide entries %u; expected a divisor",
                        g, t->ways, t->entries);
    unsigned sets = t->entries / t->ways;
    if (sets & (sets - 1))
        return preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, g, "entries"),
                        "%s.entries: %u / %u ways = %u sets; expected a power of two "
                        "number of sets", g, t->entries, t->ways, sets);
    if (small && !(t->page_sizes & PRESET_PG_4K))
        return preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, g, "page_sizes"),
                        "%s.page_sizes: no 4K; expected the 4 KiB array to hold 4K pages",
                        g);
    if (!small && (t->page_sizes & PRESET_PG_4K))
        return preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, g, "page_sizes"),
                        "%s.page_sizes: 4K in a large-page array; expected 2M and/or 4M",
                        g);
    return true;
}

/* The replacement policy must be able to serve every array (tree PLRU
 * needs a power of two ways). */
static bool check_policy(const Preset *p, const Src *s, GError **err)
{
    const TlbPolicy *pol = tlb_policy_find(p->tlb_policy, NULL);
    g_assert(pol);               /* key_parse accepted only registered names */
    const TlbGeom *t[] = { &p->itlb_4k, &p->itlb_large, &p->dtlb_4k, &p->dtlb_large, &p->stlb };
    const char *names[] = { "itlb_4k", "itlb_large", "dtlb_4k", "dtlb_large", "stlb" };
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++) {
        GError *e = NULL;
        if (!t[i]->entries || !pol->check || pol->check(t[i]->entries / t[i]->ways, t[i]->ways, &e))
            continue;
        preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, "tlb", "policy"),
                 "tlb.policy: %s cannot serve %s (%u sets x %u ways): %s; expected a policy "
                 "for that geometry", pol->name, names[i], t[i]->entries / t[i]->ways,
                 t[i]->ways, e ? e->message : "rejected");
        g_clear_error(&e);
        return false;
    }
    return true;
}

static bool check_geometry(const Preset *p, const Src *s, GError **err)
{
    /* features.pae is CPUID's PAE flag: a PAE run needs it, a legacy one
     * does not. It stays required because the default mode is PAE and not
     * every command that boots a machine checks the preset against the
     * mode up front (a PAE run without it would end in a #GP on the boot
     * code's CR4 write, not a clear error); presets/README.md. */
    if (!p->pae)
        return preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, "features", "pae"),
                        "features.pae: false; expected true (a CPU without PAE cannot run "
                        "the default --paging pae, and vmsplit does not yet refuse that per "
                        "run)");
    if (!check_tlb(&p->itlb_4k, "itlb_4k", true, s, err) ||
        !check_tlb(&p->itlb_large, "itlb_large", false, s, err) ||
        !check_tlb(&p->dtlb_4k, "dtlb_4k", true, s, err) ||
        !check_tlb(&p->dtlb_large, "dtlb_large", false, s, err) ||
        !check_tlb(&p->stlb, "stlb", true, s, err))
        return false;
    const CacheGeom *c[] = { &p->l1d, &p->l2, &p->l3 };
    const char *names[] = { "l1d", "l2", "l3" };
    for (int i = 0; i < 3; i++) {
        const char *key = NULL;
        GError *e = NULL;
        if (!cache_geom_check(c[i], &key, &e)) {
            preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, names[i], key),
                     "%s.%s: %s", names[i], key, e->message);
            g_error_free(e);
            return false;
        }
    }
    if (p->l3.size && !p->l2.size)
        return preset_src_fail(err, PRESET_ERROR_INVALID, s, src_line(s, "l3", "size"),
                        "l3.size: an L3 behind no L2; expected l2.size > 0 or l3.size = 0");
    return check_policy(p, s, err);
}

/* ---- loading ----------------------------------------------------------- */

static bool is_path(const char *s)
{
    return strchr(s, '/') || g_str_has_suffix(s, ".ini");
}

const char *preset_dir(void)
{
    const char *env = g_getenv("VMSPLIT_PRESET_DIR");
    if (env && *env)
        return env;
    if (g_file_test(VMSPLIT_SOURCE_DIR "/presets", G_FILE_TEST_IS_DIR))
        return VMSPLIT_SOURCE_DIR "/presets";
    return VMSPLIT_DATADIR "/presets";
}

static int name_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **preset_list(void)
{
    GPtrArray *names = g_ptr_array_new();
    GDir *d = g_dir_open(preset_dir(), 0, NULL);
    const char *f;
    while (d && (f = g_dir_read_name(d)))
        if (g_str_has_suffix(f, ".ini") && f[0] != '.')
            g_ptr_array_add(names, g_strndup(f, strlen(f) - 4));
    if (d)
        g_dir_close(d);
    g_ptr_array_sort(names, name_cmp);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

static char *resolve(const char *name_or_path, GError **err)
{
    if (is_path(name_or_path)) {
        if (g_file_test(name_or_path, G_FILE_TEST_IS_REGULAR))
            return g_strdup(name_or_path);
        g_set_error(err, PRESET_ERROR, PRESET_ERROR_NOT_FOUND,
                    "%s: no such preset file; expected a readable .ini file",
                    name_or_path);
        return NULL;
    }
    char *file = g_strconcat(name_or_path, ".ini", NULL);
    char *path = g_build_filename(preset_dir(), file, NULL);
    g_free(file);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return path;
    g_free(path);
    char **names = preset_list();
    char *list = g_strjoinv(", ", names);
    g_set_error(err, PRESET_ERROR, PRESET_ERROR_NOT_FOUND,
                "unknown CPU preset '%s'; expected one of: %s (in %s), or the path of "
                "a .ini file", name_or_path, *list ? list : "(none found)", preset_dir());
    g_free(list);
    g_strfreev(names);
    return NULL;
}

static bool load_into(Preset *p, const char *path, const char *text, GError **err)
{
    Src s = { path, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) };
    GKeyFile *kf = g_key_file_new();
    GError *e = NULL;
    bool ok = src_scan(&s, text, err);
    if (ok && !g_key_file_load_from_data(kf, text, (gsize)-1, G_KEY_FILE_NONE, &e)) {
        ok = preset_src_fail(err, PRESET_ERROR_PARSE, &s, 0, "%s; expected an .ini file",
                      e->message);
        g_error_free(e);
    }
    ok = ok && check_names(kf, &s, err) && read_keys(kf, p, &s, err) &&
         check_geometry(p, &s, err);
    g_key_file_free(kf);
    g_hash_table_destroy(s.lines);
    return ok;
}

Preset *preset_load(const char *name_or_path, GError **err)
{
    char *path = resolve(name_or_path, err);
    if (!path)
        return NULL;
    char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        g_set_error(err, PRESET_ERROR, PRESET_ERROR_NOT_FOUND, "%s", e->message);
        g_error_free(e);
        g_free(path);
        return NULL;
    }
    if (!textfile_check(text, len, path, PRESET_ERROR, PRESET_ERROR_PARSE, err)) {
        g_free(text);
        g_free(path);
        return NULL;
    }
    Preset *p = g_new0(Preset, 1);
    p->path = path;
    char *base = g_path_get_basename(path);
    p->name = g_str_has_suffix(base, ".ini") ? g_strndup(base, strlen(base) - 4)
                                             : g_strdup(base);
    g_free(base);
    bool ok = load_into(p, path, text, err);
    g_free(text);
    if (!ok) {
        preset_free(p);
        return NULL;
    }
    return p;
}

void preset_free(Preset *p)
{
    if (!p)
        return;
    preset_ranges_free(p->ranges, p->nranges);
    g_free(p->name);
    g_free(p->description);
    g_free(p->path);
    g_free(p->tlb_policy);
    g_free(p);
}

/* ---- printing ---------------------------------------------------------- */

static void pgsizes_text(GString *out, unsigned mask)
{
    static const struct { unsigned bit; const char *name; } sz[] = {
        { PRESET_PG_4K, "4K" }, { PRESET_PG_2M, "2M" }, { PRESET_PG_4M, "4M" },
    };
    bool first = true;
    for (size_t i = 0; i < G_N_ELEMENTS(sz); i++)
        if (mask & sz[i].bit) {
            g_string_append_printf(out, "%s%s", first ? "" : ",", sz[i].name);
            first = false;
        }
}

void preset_value_text(GString *out, const Preset *p, const KeyDef *k)
{
    const char *field = (const char *)p + k->off;
    switch (k->type) {
    case T_STR:
    case T_POLICY: {
        const char *v = *(char *const *)field;
        g_string_append(out, v ? v : "");
        break;
    }
    case T_BOOL: g_string_append(out, *(const bool *)field ? "true" : "false"); break;
    case T_MHZ: {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append(out, g_ascii_dtostr(buf, sizeof buf, *(const double *)field));
        break;
    }
    case T_UINT:
    case T_BYTES: g_string_append_printf(out, "%u", *(const unsigned *)field); break;
    case T_PGSIZES: pgsizes_text(out, *(const unsigned *)field); break;
    }
}

char *preset_to_ini(const Preset *p)
{
    GString *out = g_string_new(NULL);
    g_string_append_printf(out, "# %s, resolved from %s\n", p->name,
                           p->path ? p->path : "(memory)");
    const char *group = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(preset_keys); i++) {
        const KeyDef *k = &preset_keys[i];
        if (!group || strcmp(group, k->group)) {
            group = k->group;
            g_string_append_printf(out, "\n[%s]\n", group);
        }
        GString *v = g_string_new(NULL), *r = g_string_new(NULL);
        preset_value_text(v, p, k);
        preset_range_text(r, p, k);
        g_string_append_printf(out, "%-20s = %-16s # %s%s\n", k->key, v->str, r->str, k->doc);
        g_string_free(v, TRUE);
        g_string_free(r, TRUE);
    }
    return g_string_free(out, FALSE);
}

static void value_json(JsonBuilder *b, const Preset *p, const KeyDef *k)
{
    const char *field = (const char *)p + k->off;
    switch (k->type) {
    case T_STR:
    case T_POLICY: json_builder_add_string_value(b, *(char *const *)field); break;
    case T_BOOL: json_builder_add_boolean_value(b, *(const bool *)field); break;
    case T_MHZ: json_builder_add_double_value(b, *(const double *)field); break;
    case T_UINT:
    case T_BYTES: json_builder_add_int_value(b, *(const unsigned *)field); break;
    case T_PGSIZES: {
        GString *s = g_string_new(NULL);
        pgsizes_text(s, *(const unsigned *)field);
        char **parts = g_strsplit(s->str, ",", -1);
        json_builder_begin_array(b);
        for (int i = 0; parts[i] && *parts[i]; i++)
            json_builder_add_string_value(b, parts[i]);
        json_builder_end_array(b);
        g_strfreev(parts);
        g_string_free(s, TRUE);
        break;
    }
    }
}

char *preset_to_json(const Preset *p)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, p->name);
    json_builder_set_member_name(b, "path");
    json_builder_add_string_value(b, p->path);
    const char *group = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(preset_keys); i++) {
        const KeyDef *k = &preset_keys[i];
        if (!group || strcmp(group, k->group)) {
            if (group)
                json_builder_end_object(b);
            group = k->group;
            json_builder_set_member_name(b, group);
            json_builder_begin_object(b);
        }
        json_builder_set_member_name(b, k->key);
        value_json(b, p, k);
    }
    json_builder_end_object(b);
    preset_ranges_json(b, p);
    json_builder_end_object(b);
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    char *s = json_generator_to_data(gen, NULL);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
    return s;
}
