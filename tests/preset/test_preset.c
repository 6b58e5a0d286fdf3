/* CPU presets: every bundled preset loads; the figures REFERENCES.md gives
 * come out as written there; deliberately broken copies are rejected with a
 * message naming the file, the line, the key and what was expected; a
 * copied preset passed by path loads; the resolved output is itself a
 * valid preset and README.md documents every key. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "preset/preset.h"

static char *tmpdir;

static char *bundled_text(const char *name)
{
    char *path = g_strdup_printf("%s/presets/%s.ini", g_getenv("VMSPLIT_SOURCE_DIR"), name);
    char *text = NULL;
    ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
    g_free(path);
    /* A fresh copy: GCC 12 at -O3 takes the pointer g_file_get_contents
     * stored through &text for one into this frame, and -Wdangling-pointer
     * then flags every caller (a false positive, fatal under -Werror). */
    char *copy = g_strdup(text);
    g_free(text);
    return copy;
}

static char *write_tmp(const char *file, const char *text)
{
    char *path = g_build_filename(tmpdir, file, NULL);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* text with the first occurrence of `from` replaced by `to` (must exist). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "'%s' not in the preset text", from);
    return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

/* The 1-based line on which `needle` first occurs in text. */
static int line_of(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    ck_assert(at != NULL);
    int line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

static void setup(void)
{
    tmpdir = g_dir_make_tmp("vmsplit-preset-XXXXXX", NULL);
    ck_assert_ptr_nonnull(tmpdir);
}

static void teardown(void)
{
    GDir *d = g_dir_open(tmpdir, 0, NULL);
    const char *f;
    while (d && (f = g_dir_read_name(d))) {
        char *p = g_build_filename(tmpdir, f, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(tmpdir);
    g_free(tmpdir);
}

/* ---- bundled presets --------------------------------------------------- */

START_TEST(every_bundled_preset_loads)
{
    static const char *const required[] = { "p3-coppermine", "p4-northwood", "pentium-m",
                                            "core2", "skylake" };
    char **names = preset_list();
    for (size_t i = 0; i < G_N_ELEMENTS(required); i++)
        ck_assert_msg(g_strv_contains((const char *const *)names, required[i]),
                      "%s missing from preset_list()", required[i]);
    for (int i = 0; names[i]; i++) {
        GError *err = NULL;
        Preset *p = preset_load(names[i], &err);
        ck_assert_msg(p != NULL, "%s: %s", names[i], err ? err->message : "");
        ck_assert_str_eq(p->name, names[i]);
        ck_assert(p->clock_mhz > 0);
        ck_assert(p->description && *p->description);
        preset_free(p);
    }
    /* ... and each is installed (presets/meson.build lists it). */
    char *mb_path = g_strdup_printf("%s/presets/meson.build", g_getenv("VMSPLIT_SOURCE_DIR"));
    char *mb = NULL;
    ck_assert(g_file_get_contents(mb_path, &mb, NULL, NULL));
    for (int i = 0; names[i]; i++) {
        char *want = g_strdup_printf("'%s.ini'", names[i]);
        ck_assert_msg(strstr(mb, want) != NULL, "presets/meson.build does not install %s", want);
        g_free(want);
    }
    g_free(mb);
    g_free(mb_path);
    g_strfreev(names);
    Preset *d = preset_load(PRESET_DEFAULT, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->name, "p4-northwood");
    preset_free(d);
}
END_TEST

/* Figures as REFERENCES.md states them ("Hardware figures"). */
START_TEST(figures_match_references)
{
    Preset *p = preset_load("p4-northwood", NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->l1d.latency, 2);
    ck_assert_uint_eq(p->l2.latency, 24);
    ck_assert_uint_eq(p->mem_latency, 316);
    ck_assert(p->clock_mhz == 2800.0);
    ck_assert_uint_eq(p->dtlb_4k.entries, 64);
    ck_assert_uint_eq(p->dtlb_4k.ways, 64);              /* fully associative */
    ck_assert_uint_eq(p->itlb_4k.entries, 64);
    ck_assert(p->itlb_4k.page_sizes == (PRESET_PG_4K | PRESET_PG_2M | PRESET_PG_4M));
    ck_assert_uint_eq(p->dtlb_large.entries, 0);         /* shares the 64-entry array */
    ck_assert(p->pdpte_load_uncached);                   /* older IA-32 parts: uncached */
    ck_assert(p->pae && !p->pcid);
    preset_free(p);

    p = preset_load("p3-coppermine", NULL);
    ck_assert_uint_eq(p->itlb_4k.entries, 32);
    ck_assert_uint_eq(p->itlb_4k.ways, 4);
    ck_assert_uint_eq(p->itlb_large.entries, 2);
    ck_assert_uint_eq(p->itlb_large.ways, 2);
    ck_assert_uint_eq(p->dtlb_4k.entries, 64);
    ck_assert_uint_eq(p->dtlb_4k.ways, 4);
    ck_assert_uint_eq(p->dtlb_large.entries, 8);
    ck_assert_uint_eq(p->dtlb_large.ways, 4);
    preset_free(p);

    p = preset_load("pentium-m", NULL);
    ck_assert_uint_eq(p->itlb_4k.entries, 128);
    ck_assert_uint_eq(p->dtlb_4k.entries, 128);
    ck_assert_uint_eq(p->dtlb_large.entries, 8);
    preset_free(p);

    p = preset_load("core2", NULL);
    ck_assert_uint_eq(p->dtlb_4k.entries, 16);
    ck_assert_uint_eq(p->dtlb_large.entries, 16);
    ck_assert_uint_eq(p->stlb.entries, 256);
    ck_assert_uint_eq(p->stlb.ways, 4);
    ck_assert_uint_eq(p->stlb.hit_latency, 2);           /* DTLB0 miss, DTLB1 hit */
    ck_assert(p->stlb_data_only);
    preset_free(p);

    p = preset_load("skylake", NULL);
    ck_assert_uint_eq(p->itlb_4k.entries, 128);
    ck_assert_uint_eq(p->itlb_4k.ways, 8);
    ck_assert_uint_eq(p->dtlb_4k.entries, 64);
    ck_assert_uint_eq(p->dtlb_large.entries, 32);
    ck_assert_uint_eq(p->stlb.entries, 1536);
    ck_assert(p->stlb.page_sizes == (PRESET_PG_4K | PRESET_PG_2M));
    ck_assert(!p->stlb_data_only);
    ck_assert(p->pcid);
    ck_assert_uint_eq(p->l3.size, 8u << 20);
    preset_free(p);
}
END_TEST

/* Every figure in a bundled file has a comment beside it, and every
 * comment-less figure would be caught here. */
START_TEST(every_figure_has_a_comment)
{
    char **names = preset_list();
    for (int i = 0; names[i]; i++) {
        char *text = bundled_text(names[i]);
        char **lines = g_strsplit(text, "\n", -1);
        for (int l = 0; lines[l]; l++) {
            const char *s = lines[l];
            if (!strchr(s, '=') || s[0] == '#' || g_str_has_prefix(s, "description"))
                continue;
            ck_assert_msg(strstr(s, " #") != NULL, "%s.ini:%d has no source comment: %s",
                          names[i], l + 1, s);
        }
        g_strfreev(lines);
        g_free(text);
    }
    g_strfreev(names);
}
END_TEST

/* ---- broken files ------------------------------------------------------ */

typedef struct {
    const char *what;
    const char *from, *to;       /* edit of p4-northwood.ini */
    const char *line_at;         /* text whose line the message must name (in the edited file), or NULL */
    int code;
    const char *must[3];         /* substrings of the message */
} Broken;

static const Broken broken[] = {
    { "unknown key", "[l2]\n", "[l2]\nassoc = 8\n", "assoc = 8", PRESET_ERROR_INVALID,
      { "l2.assoc", "unknown key", "expected one of size, ways, line, latency" } },
    { "unknown group", "[memory]\n", "[l4]\nsize = 1M\n\n[memory]\n", "[l4]",
      PRESET_ERROR_INVALID, { "[l4]", "unknown group", "expected one of" } },
    { "missing key", "latency = 24 ", "# latency removed ", "[l2]", PRESET_ERROR_INVALID,
      { "l2.latency", "lacks", "expected" } },
    { "misspelt group", "[cost]", "[costs]", "[costs]", PRESET_ERROR_INVALID,
      { "[costs]", "unknown group", NULL } },
    { "non-power-of-two TLB sets",
      "entries = 64                  # [refs] descriptor 0x5B: DTLB 4K and 4M pages, 64 entries\nways = 64",
      "entries = 48                  # [refs] descriptor 0x5B: DTLB 4K and 4M pages, 64 entries\nways = 4",
      "entries = 48", PRESET_ERROR_INVALID,
      { "dtlb_4k.entries", "12 sets", "power of two" } },
    { "ways above entries", "entries = 64                  # [refs] descriptor 0x50",
      "entries = 32                  # [refs] descriptor 0x50", "ways = 64", PRESET_ERROR_INVALID,
      { "itlb_4k.ways", "at most entries (32)", NULL } },
    { "ways not dividing entries", "ways = 64                     # [refs] fully",
      "ways = 48                     # [refs] fully", "ways = 48", PRESET_ERROR_INVALID,
      { "dtlb_4k.ways", "does not divide entries 64", NULL } },
    { "non-power-of-two cache sets", "size = 512K", "size = 384K", "size = 384K",
      PRESET_ERROR_INVALID, { "l2.size", "384 sets", "power of two" } },
    { "cache ways not dividing", "ways = 8                      # [iaopt] 8 ways",
      "ways = 3                      # [iaopt] 8 ways", "ways = 3 ", PRESET_ERROR_INVALID,
      { "l2.ways", "does not divide", NULL } },
    { "wrong type", "pge = true", "pge = yes", "pge = yes", PRESET_ERROR_PARSE,
      { "features.pge", "'yes'", "expected true or false" } },
    { "not a number", "latency = 316", "latency = 316ns", "latency = 316ns",
      PRESET_ERROR_PARSE, { "memory.latency", "'316ns'", "unsigned decimal integer" } },
    { "zero where forbidden", "latency = 2 ", "latency = 0 ", "latency = 0 ",
      PRESET_ERROR_INVALID, { "l1d.latency", "expected at least 1", NULL } },
    { "zero cost", "mov_cr3 = 125", "mov_cr3 = 0", "mov_cr3 = 0", PRESET_ERROR_INVALID,
      { "cost.mov_cr3", "expected at least 1", NULL } },
    { "bad page size", "page_sizes = 4K,2M,4M         # [refs] descriptor 0x50",
      "page_sizes = 4K,8K                # [refs] descriptor 0x50", "page_sizes = 4K,8K",
      PRESET_ERROR_PARSE, { "itlb_4k.page_sizes", "'4K,8K'", "4K, 2M, 4M" } },
    { "bad policy", "policy = lru", "policy = mru", "policy = mru", PRESET_ERROR_PARSE,
      { "tlb.policy", "'mru'", "lru, plru, fifo, random" } },
    { "duplicate key", "ways = 4 ", "ways = 4\nways = 8 ", "ways = 8 ", PRESET_ERROR_PARSE,
      { "l1d.ways", "twice", NULL } },
    { "pae off", "pae = true", "pae = false", "pae = false", PRESET_ERROR_INVALID,
      { "features.pae", "expected true", NULL } },
    { "zero clock", "clock_mhz = 2800", "clock_mhz = 0", "clock_mhz = 0", PRESET_ERROR_PARSE,
      { "cpu.clock_mhz", "positive number of MHz", NULL } },
    { "bad line size", "line = 64 ", "line = 48 ", "line = 48 ", PRESET_ERROR_INVALID,
      { "l1d.line", "power of two", NULL } },
    /* Ranges (presets/README.md, "Ranges"). */
    { "value outside its range", "mov_cr3 = 125 ", "mov_cr3 = 900 ", "mov_cr3 = 900",
      PRESET_ERROR_INVALID, { "cost.mov_cr3", "900 lies outside its range 60..700", NULL } },
    { "range low above high", "separately; range 60..700", "separately; range 700..60",
      "range 700..60", PRESET_ERROR_INVALID,
      { "cost.mov_cr3", "range 700..60 has low > high", "expected LO <= HI" } },
    { "estimate without a range", "separately; range 60..700", "separately; 60 to 700",
      "separately; 60 to 700", PRESET_ERROR_INVALID,
      { "cost.mov_cr3", "an estimate without a range", "expected 'range LO..HI'" } },
    { "switch without alternatives", "alternatives true,false", "both possible",
      "both possible", PRESET_ERROR_INVALID,
      { "memory.pdpte_load_uncached", "an estimate without a range", NULL } },
    { "value not among its alternatives", "alternatives true,false",
      "alternatives false,false", "alternatives false,false", PRESET_ERROR_INVALID,
      { "memory.pdpte_load_uncached", "true is not among its alternatives", NULL } },
    { "alternative of the wrong type", "alternatives true,false", "alternatives false,0",
      "alternatives false,0", PRESET_ERROR_PARSE,
      { "memory.pdpte_load_uncached", "alternative '0'", "expected true or false" } },
    { "range on a switch", "alternatives true,false", "range 0..1", "range 0..1",
      PRESET_ERROR_INVALID, { "memory.pdpte_load_uncached", "not an integer", NULL } },
};

START_TEST(broken_file_is_rejected)
{
    const Broken *b = &broken[_i];
    char *orig = bundled_text("p4-northwood");
    char *text = replace(orig, b->from, b->to);
    char *path = write_tmp("broken.ini", text);
    GError *err = NULL;
    Preset *p = preset_load(path, &err);
    ck_assert_msg(p == NULL, "%s: accepted", b->what);
    ck_assert_msg(err != NULL, "%s: no error", b->what);
    ck_assert_msg(g_error_matches(err, PRESET_ERROR, b->code), "%s: code %d: %s", b->what,
                  err->code, err->message);
    ck_assert_msg(g_str_has_prefix(err->message, path), "%s: file not named: %s", b->what,
                  err->message);
    for (int i = 0; i < 3 && b->must[i]; i++)
        ck_assert_msg(strstr(err->message, b->must[i]) != NULL, "%s: '%s' lacks '%s'",
                      b->what, err->message, b->must[i]);
    if (b->line_at) {
        char *where = g_strdup_printf("%s:%d: ", path, line_of(text, b->line_at));
        ck_assert_msg(g_str_has_prefix(err->message, where), "%s: '%s' does not start '%s'",
                      b->what, err->message, where);
        g_free(where);
    }
    g_error_free(err);
    g_free(path);
    g_free(text);
    g_free(orig);
}
END_TEST

START_TEST(unknown_name_lists_presets)
{
    GError *err = NULL;
    ck_assert_ptr_null(preset_load("pentium5", &err));
    ck_assert(g_error_matches(err, PRESET_ERROR, PRESET_ERROR_NOT_FOUND));
    ck_assert(strstr(err->message, "'pentium5'") && strstr(err->message, "p4-northwood"));
    g_clear_error(&err);
    ck_assert_ptr_null(preset_load("/nonexistent/x.ini", &err));
    ck_assert(g_error_matches(err, PRESET_ERROR, PRESET_ERROR_NOT_FOUND));
    ck_assert(strstr(err->message, "/nonexistent/x.ini"));
    g_clear_error(&err);
}
END_TEST

/* The policy must suit every array: tree PLRU cannot serve the 12-way
 * Skylake STLB. Policy names are matched without regard to case. */
START_TEST(policy_must_suit_geometry)
{
    char *orig = bundled_text("skylake");
    char *alts = replace(orig, "alternatives lru,fifo", "alternatives lru,plru");
    char *text = replace(alts, "policy = lru", "policy = plru");
    g_free(alts);
    char *path = write_tmp("sky-plru.ini", text);
    GError *err = NULL;
    ck_assert_ptr_null(preset_load(path, &err));
    char *where = g_strdup_printf("%s:%d: tlb.policy: plru cannot serve stlb (128 sets x 12 ways)",
                                  path, line_of(text, "policy = plru"));
    ck_assert_msg(g_str_has_prefix(err->message, where), "%s", err->message);
    g_clear_error(&err);
    g_free(where);
    g_free(path);
    g_free(text);
    orig = (g_free(orig), bundled_text("p4-northwood"));
    text = replace(orig, "policy = lru", "policy = PLRU");
    path = write_tmp("p4-plru.ini", text);
    Preset *p = preset_load(path, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert_str_eq(p->tlb_policy, "plru");
    preset_free(p);
    g_free(path);
    g_free(text);
    g_free(orig);
}
END_TEST

/* ---- user copies --------------------------------------------------------- */

START_TEST(copied_preset_by_path)
{
    char *orig = bundled_text("p4-northwood");
    char *text = replace(orig, "clock_mhz = 2800", "clock_mhz = 3066.5");
    char *path = write_tmp("my-xeon.ini", text);
    GError *err = NULL;
    Preset *mine = preset_load(path, &err);
    ck_assert_msg(mine != NULL, "%s", err ? err->message : "");
    Preset *ref = preset_load("p4-northwood", NULL);
    ck_assert_str_eq(mine->name, "my-xeon");
    ck_assert_str_eq(mine->path, path);
    ck_assert(mine->clock_mhz == 3066.5);
    ck_assert_uint_eq(mine->l2.size, ref->l2.size);
    ck_assert(memcmp(&mine->cost, &ref->cost, sizeof mine->cost) == 0);
    ck_assert(memcmp(&mine->dtlb_4k, &ref->dtlb_4k, sizeof mine->dtlb_4k) == 0);
    /* Relative paths ending in .ini are paths too. */
    char *cwd = g_get_current_dir();
    ck_assert_int_eq(g_chdir(tmpdir), 0);
    Preset *rel = preset_load("my-xeon.ini", &err);
    ck_assert_msg(rel != NULL, "%s", err ? err->message : "");
    ck_assert_int_eq(g_chdir(cwd), 0);
    preset_free(rel);
    g_free(cwd);
    preset_free(mine);
    preset_free(ref);
    g_free(path);
    g_free(text);
    g_free(orig);
}
END_TEST

/* An absent optional group is an absent structure; a present one with a
 * zero gate needs no other key. */
START_TEST(optional_groups)
{
    char *orig = bundled_text("p4-northwood");
    char *text = replace(orig, "[memory]\n", "[l3]\nsize = 0\n\n[stlb]\nentries = 0\n\n[memory]\n");
    char *path = write_tmp("opt.ini", text);
    GError *err = NULL;
    Preset *p = preset_load(path, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(p->l3.size, 0);
    ck_assert_uint_eq(p->stlb.entries, 0);
    preset_free(p);
    g_free(path);
    g_free(text);
    /* A required group may not be left out. */
    text = g_strndup(orig, (gsize)(strstr(orig, "[cost]") - orig));
    path = write_tmp("nocost.ini", text);
    ck_assert_ptr_null(preset_load(path, &err));
    ck_assert_msg(strstr(err->message, "missing group [cost]"), "%s", err->message);
    g_clear_error(&err);
    g_free(path);
    g_free(text);
    /* A present structure needs all its keys. */
    text = replace(orig, "[memory]\n", "[stlb]\nentries = 64\nways = 4\npage_sizes = 4K\n\n[memory]\n");
    path = write_tmp("opt2.ini", text);
    ck_assert_ptr_null(preset_load(path, &err));
    ck_assert_msg(strstr(err->message, "stlb.hit_latency"), "%s", err->message);
    g_clear_error(&err);
    g_free(path);
    g_free(text);
    g_free(orig);
}
END_TEST

START_TEST(preset_dir_from_environment)
{
    char *orig = bundled_text("core2");
    char *path = write_tmp("only-one.ini", orig);
    g_setenv("VMSPLIT_PRESET_DIR", tmpdir, TRUE);
    ck_assert_str_eq(preset_dir(), tmpdir);
    char **names = preset_list();
    ck_assert_uint_eq(g_strv_length(names), 1);
    ck_assert_str_eq(names[0], "only-one");
    Preset *p = preset_load("only-one", NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_null(preset_load("p4-northwood", NULL));
    g_unsetenv("VMSPLIT_PRESET_DIR");
    preset_free(p);
    g_strfreev(names);
    g_free(path);
    g_free(orig);
}
END_TEST

/* ---- resolved output ------------------------------------------------------ */

static bool same_preset(const Preset *a, const Preset *b)
{
    return a->clock_mhz == b->clock_mhz && !strcmp(a->description, b->description) &&
           a->pae == b->pae && a->pge == b->pge && a->pse == b->pse && a->sep == b->sep &&
           a->nx == b->nx && a->pcid == b->pcid &&
           !memcmp(&a->itlb_4k, &b->itlb_4k, sizeof a->itlb_4k) &&
           !memcmp(&a->itlb_large, &b->itlb_large, sizeof a->itlb_large) &&
           !memcmp(&a->dtlb_4k, &b->dtlb_4k, sizeof a->dtlb_4k) &&
           !memcmp(&a->dtlb_large, &b->dtlb_large, sizeof a->dtlb_large) &&
           !memcmp(&a->stlb, &b->stlb, sizeof a->stlb) &&
           a->stlb_data_only == b->stlb_data_only &&
           a->pde_cache_entries == b->pde_cache_entries &&
           !strcmp(a->tlb_policy, b->tlb_policy) && !memcmp(&a->l1d, &b->l1d, sizeof a->l1d) &&
           !memcmp(&a->l2, &b->l2, sizeof a->l2) && !memcmp(&a->l3, &b->l3, sizeof a->l3) &&
           a->mem_latency == b->mem_latency &&
           a->pdpte_load_uncached == b->pdpte_load_uncached &&
           !memcmp(&a->cost, &b->cost, sizeof a->cost);
}

/* The uncertainty analysis (calib/uncertainty.c) sets a sampled key to
 * any value of its declared range on a copy of the preset: each end of a
 * span, each numeric alternative must give a preset the reader accepts
 * (written out and loaded again), or a sampled machine is one no preset
 * file could describe. This catches a range declared wider than the
 * key's own checks allow (a geometry rule, a bound); the fuzz harness of
 * the preset reader checks the same on fuzzed files. */
START_TEST(range_ends_make_valid_presets)
{
    char **names = preset_list();
    unsigned tried = 0;
    for (int i = 0; names[i]; i++) {
        Preset *p = preset_load(names[i], NULL);
        ck_assert_ptr_nonnull(p);
        for (unsigned k = 0; k < p->nranges; k++) {
            const PresetRange *r = &p->ranges[k];
            unsigned cur, vals[16], n = 0;
            if (!preset_get_uint(p, r->id, &cur))
                continue;                       /* a text key: held */
            if (r->kind == PRESET_RANGE_SPAN) {
                ck_assert_msg(cur >= r->lo && cur <= r->hi, "%s %s", names[i], r->id);
                vals[n++] = r->lo;
                vals[n++] = r->hi;
            } else {
                for (char **a = r->alternatives; *a && n < G_N_ELEMENTS(vals); a++)
                    if (preset_alternative_value(*a, &vals[n]))
                        n++;
            }
            for (unsigned j = 0; j < n; j++) {
                Preset *c = preset_copy(p);
                ck_assert(preset_set_uint(c, r->id, vals[j]));
                char *ini = preset_to_ini(c);
                char *path = write_tmp("range-end.ini", ini);
                GError *err = NULL;
                Preset *q = preset_load(path, &err);
                ck_assert_msg(q != NULL, "%s: %s = %u: %s", names[i], r->id, vals[j],
                              err ? err->message : "");
                unsigned back = 0;
                ck_assert(preset_get_uint(q, r->id, &back));
                ck_assert_uint_eq(back, vals[j]);
                tried++;
                preset_free(q);
                g_free(path);
                g_free(ini);
                preset_free(c);
            }
        }
        preset_free(p);
    }
    ck_assert_uint_ge(tried, 20);  /* the bundled presets declare dozens */
    g_strfreev(names);
}
END_TEST

START_TEST(resolved_output_round_trips)
{
    char **names = preset_list();
    for (int i = 0; names[i]; i++) {
        Preset *p = preset_load(names[i], NULL);
        char *ini = preset_to_ini(p);
        char *file = g_strconcat(names[i], "-resolved.ini", NULL);
        char *path = write_tmp(file, ini);
        GError *err = NULL;
        Preset *q = preset_load(path, &err);
        ck_assert_msg(q != NULL, "%s: %s", names[i], err ? err->message : "");
        ck_assert_msg(same_preset(p, q), "%s: resolved output differs", names[i]);

        char *json = preset_to_json(p);
        JsonParser *parser = json_parser_new();
        ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
        JsonObject *o = json_node_get_object(json_parser_get_root(parser));
        ck_assert_str_eq(json_object_get_string_member(o, "name"), names[i]);
        JsonObject *l2 = json_object_get_object_member(o, "l2");
        ck_assert_int_eq(json_object_get_int_member(l2, "latency"), p->l2.latency);
        JsonObject *mem = json_object_get_object_member(o, "memory");
        ck_assert(json_object_get_boolean_member(mem, "pdpte_load_uncached") ==
                  p->pdpte_load_uncached);
        g_object_unref(parser);
        g_free(json);
        preset_free(q);
        preset_free(p);
        g_free(path);
        g_free(file);
        g_free(ini);
    }
    g_strfreev(names);
}
END_TEST

/* presets/README.md documents every key the loader knows (as `group.key`). */
START_TEST(readme_documents_every_key)
{
    char *readme_path = g_strdup_printf("%s/presets/README.md", g_getenv("VMSPLIT_SOURCE_DIR"));
    char *readme = NULL;
    ck_assert(g_file_get_contents(readme_path, &readme, NULL, NULL));
    Preset *p = preset_load("skylake", NULL);
    char *ini = preset_to_ini(p);
    char **lines = g_strsplit(ini, "\n", -1);
    char *group = NULL;
    for (int i = 0; lines[i]; i++) {
        const char *l = lines[i];
        if (l[0] == '[') {
            g_free(group);
            group = g_strndup(l + 1, strcspn(l + 1, "]"));
        } else if (group && strchr(l, '=') && l[0] != '#') {
            char *key = g_strndup(l, strcspn(l, " ="));
            char *want = g_strdup_printf("`%s.%s`", group, key);
            ck_assert_msg(strstr(readme, want) != NULL, "README.md lacks %s", want);
            g_free(want);
            g_free(key);
        }
    }
    g_free(group);
    g_strfreev(lines);
    g_free(ini);
    preset_free(p);
    g_free(readme);
    g_free(readme_path);
}
END_TEST

/* Ranges as the file declares them (presets/README.md, "Ranges"): the
 * bounds of p4-northwood's serializing costs, the PDPTE switch's
 * alternatives, origins; a sourced figure has none; the resolved .ini
 * keeps them (it reloads with the same ranges). */
START_TEST(ranges_are_read)
{
    Preset *p = preset_load("p4-northwood", NULL);
    ck_assert_ptr_nonnull(p);
    const PresetRange *r = preset_range_find(p, "cost.mov_cr3");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->kind, PRESET_RANGE_SPAN);
    ck_assert_int_eq(r->origin, PRESET_ORIGIN_ESTIMATE);
    ck_assert_uint_eq(r->lo, 60);
    ck_assert_uint_eq(r->hi, 700);
    r = preset_range_find(p, "memory.pdpte_load_uncached");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->kind, PRESET_RANGE_ALTERNATIVES);
    ck_assert_str_eq(r->alternatives[0], "true");
    ck_assert_str_eq(r->alternatives[1], "false");
    ck_assert_ptr_null(preset_range_find(p, "memory.latency"));   /* MemLat: measured */
    ck_assert_ptr_null(preset_range_find(p, "cost.alu"));         /* GCC's table */
    unsigned v = 0;
    ck_assert(preset_get_uint(p, "cost.mov_cr3", &v) && v == p->cost.mov_cr3);
    Preset *c = preset_copy(p);
    ck_assert(preset_set_uint(c, "cost.mov_cr3", 300));
    ck_assert_uint_eq(c->cost.mov_cr3, 300);
    ck_assert_uint_eq(p->cost.mov_cr3, v);                        /* a deep copy */
    ck_assert(!preset_set_uint(c, "cost.nonsense", 1));
    char *ini = preset_to_ini(p);
    ck_assert_ptr_nonnull(strstr(ini, "range 60..700"));
    char *path = write_tmp("resolved.ini", ini);
    Preset *q = preset_load(path, NULL);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(q->nranges, p->nranges);
    ck_assert_uint_eq(preset_range_find(q, "cost.int_gate")->hi,
                      preset_range_find(p, "cost.int_gate")->hi);
    char *json = preset_to_json(p);
    ck_assert_ptr_nonnull(strstr(json, "\"cost.mov_cr3\""));
    ck_assert_ptr_nonnull(strstr(json, "\"high\" : 700"));
    g_free(json);
    preset_free(q);
    g_free(path);
    g_free(ini);
    preset_free(c);
    preset_free(p);
}
END_TEST

/* ---- the CLI (vmsplit presets) ------------------------------------------- */

static int run_cli(char **out, char **errout, const char *a1, const char *a2, const char *a3)
{
    char *exe = g_build_filename(g_getenv("VMSPLIT_BUILD_DIR"), "vmsplit", NULL);
    char *argv[] = { exe, "presets", (char *)a1, (char *)a2, (char *)a3, NULL };
    int status = -1;
    GError *err = NULL;
    bool ran = g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, errout,
                            &status, &err);
    g_free(exe);
    ck_assert_msg(ran, "%s", err ? err->message : "");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(cli_lists_shows_and_rejects)
{
    char *out = NULL, *errout = NULL;
    ck_assert_int_eq(run_cli(&out, &errout, NULL, NULL, NULL), 0);
    ck_assert(strstr(out, "p4-northwood") && strstr(out, "(default)") && strstr(out, "skylake"));
    g_free(out), g_free(errout);

    ck_assert_int_eq(run_cli(&out, &errout, "show", "core2", NULL), 0);
    ck_assert(strstr(out, "[stlb]") && strstr(out, "data_only"));
    g_free(out), g_free(errout);

    ck_assert_int_eq(run_cli(&out, &errout, "show", "core2", "--json"), 0);
    JsonParser *parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, out, -1, NULL));
    g_object_unref(parser);
    g_free(out), g_free(errout);

    ck_assert_int_eq(run_cli(&out, &errout, "show", "pentium5", NULL), 2);
    ck_assert_msg(strstr(errout, "unknown CPU preset 'pentium5'"), "%s", errout);
    g_free(out), g_free(errout);

    char *orig = bundled_text("p4-northwood");
    char *text = replace(orig, "ways = 4 ", "ways = 5 ");
    char *path = write_tmp("cli-broken.ini", text);
    ck_assert_int_eq(run_cli(&out, &errout, "show", path, NULL), 2);
    ck_assert_msg(strstr(errout, path) && strstr(errout, "l1d.ways"), "%s", errout);
    g_free(out), g_free(errout);
    g_free(path), g_free(text), g_free(orig);

    ck_assert_int_eq(run_cli(&out, &errout, "frobnicate", NULL, NULL), 2);
    g_free(out), g_free(errout);
}
END_TEST

static Suite *preset_suite(void)
{
    Suite *s = suite_create("preset");
    TCase *tc = tcase_create("load");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, ranges_are_read);
    tcase_add_test(tc, every_bundled_preset_loads);
    tcase_add_test(tc, figures_match_references);
    tcase_add_test(tc, every_figure_has_a_comment);
    tcase_add_loop_test(tc, broken_file_is_rejected, 0, G_N_ELEMENTS(broken));
    tcase_add_test(tc, unknown_name_lists_presets);
    tcase_add_test(tc, policy_must_suit_geometry);
    tcase_add_test(tc, copied_preset_by_path);
    tcase_add_test(tc, optional_groups);
    tcase_add_test(tc, preset_dir_from_environment);
    tcase_add_test(tc, resolved_output_round_trips);
    tcase_add_test(tc, range_ends_make_valid_presets);
    tcase_add_test(tc, readme_documents_every_key);
    tcase_add_test(tc, cli_lists_shows_and_rejects);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(preset_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
