/* Ranges of preset figures (presets/README.md, "Ranges"): the plausible
 * range ("range LO..HI") or the alternatives ("alternatives A,B") an
 * estimate declares in its comment, with its origin ("estimate:",
 * "fitted:", "prior N"), read and checked against the value; the copy and
 * the by-id access that calibration and sampling use; how ranges print. */
#include "preset/preset_priv.h"

#include "tlb/policy.h"

#include <string.h>

static char *value_normalised(const Preset *p, const KeyDef *k)
{
    GString *v = g_string_new(NULL);
    preset_value_text(v, p, k);
    return g_string_free(v, FALSE);
}

/* ---- ranges in the comments ------------------------------------------ */

/* The comment of a raw value (after the first '#' that starts a word), or
 * NULL. */
static const char *comment_of(const char *raw)
{
    for (const char *p = raw; *p; p++)
        if (*p == '#' && (p == raw || p[-1] == ' ' || p[-1] == '\t'))
            return p + 1;
    return NULL;
}

/* A value of k's type written as text, normalised for comparison ("true",
 * "42", a policy's registered name); NULL if it does not parse. g_free. */
static char *alt_normalise(const KeyDef *k, const char *v)
{
    uint64_t n = 0;
    switch (k->type) {
    case T_BOOL:
        return !strcmp(v, "true") || !strcmp(v, "false") ? g_strdup(v) : NULL;
    case T_UINT:
        return preset_parse_uint(v, UINT32_MAX, &n) ? g_strdup_printf("%" G_GUINT64_FORMAT, n) : NULL;
    case T_BYTES:
        return preset_parse_bytes(v, &n) ? g_strdup_printf("%" G_GUINT64_FORMAT, n) : NULL;
    case T_POLICY: {
        const TlbPolicy *pol = tlb_policy_find(v, NULL);
        return pol ? g_strdup(pol->name) : NULL;
    }
    default:
        return NULL;
    }
}

/* Reads "range LO..HI", "alternatives A,B", "prior N" and the origin from
 * the comment of k's raw value, checks them against the parsed value in p
 * and appends a PresetRange to p. */
bool preset_range_read(Preset *p, const KeyDef *k, const char *raw, const Src *s, int line,
                       GError **err)
{
    const char *c = comment_of(raw);
    if (!c)
        return true;
    PresetRange r = { .kind = PRESET_RANGE_SPAN, .origin = PRESET_ORIGIN_SOURCED, .line = line };
    if (strstr(c, "fitted:"))
        r.origin = PRESET_ORIGIN_FITTED;
    else if (strstr(c, "estimate:"))
        r.origin = PRESET_ORIGIN_ESTIMATE;
    GMatchInfo *mi = NULL;
    GRegex *span = g_regex_new("\\brange ([0-9]+)\\.\\.([0-9]+)\\b", 0, 0, NULL);
    GRegex *alts = g_regex_new("\\balternatives ([^ \\t;:]+)", 0, 0, NULL);
    GRegex *prior = g_regex_new("\\bprior ([0-9]+)\\b", 0, 0, NULL);
    bool have_span = g_regex_match(span, c, 0, &mi), have_alts = false, ok = true;
    char *lo = have_span ? g_match_info_fetch(mi, 1) : NULL;
    char *hi = have_span ? g_match_info_fetch(mi, 2) : NULL;
    g_match_info_free(mi);
    char *alt_text = NULL;
    if ((have_alts = g_regex_match(alts, c, 0, &mi)))
        alt_text = g_match_info_fetch(mi, 1);
    g_match_info_free(mi);
    if (g_regex_match(prior, c, 0, &mi)) {
        char *v = g_match_info_fetch(mi, 1);
        uint64_t n = 0;
        r.has_prior = preset_parse_uint(v, UINT32_MAX, &n);
        r.prior = (unsigned)n;
        g_free(v);
    }
    g_match_info_free(mi);
    g_regex_unref(span);
    g_regex_unref(alts);
    g_regex_unref(prior);
    char *now = value_normalised(p, k);
    uint64_t l = 0, h = 0;
    if (have_span && have_alts) {
        ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                      "%s.%s: both a range and alternatives; expected one of them", k->group,
                      k->key);
    } else if (!have_span && !have_alts) {
        if (r.origin != PRESET_ORIGIN_SOURCED)
            ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                          "%s.%s: %s without a range; expected 'range LO..HI' or "
                          "'alternatives A,B' in its comment (presets/README.md, Ranges)",
                          k->group, k->key,
                          r.origin == PRESET_ORIGIN_FITTED ? "a fitted value" : "an estimate");
        goto out;
    } else if (have_span) {
        if (k->type != T_UINT) {
            ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                          "%s.%s: 'range %s..%s' on a key that is not an integer; expected "
                          "'alternatives A,B'", k->group, k->key, lo, hi);
        } else if (!preset_parse_uint(lo, UINT32_MAX, &l) || !preset_parse_uint(hi, UINT32_MAX, &h)) {
            ok = preset_src_fail(err, PRESET_ERROR_PARSE, s, line,
                          "%s.%s: 'range %s..%s'; expected bounds below 2^32", k->group, k->key,
                          lo, hi);
        } else if (l > h) {
            ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                          "%s.%s: range %s..%s has low > high; expected LO <= HI", k->group,
                          k->key, lo, hi);
        } else {
            unsigned v = *(unsigned *)((char *)p + k->off);
            r.lo = (unsigned)l;
            r.hi = (unsigned)h;
            if (v < r.lo || v > r.hi)
                ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                              "%s.%s: %u lies outside its range %u..%u; expected a value in "
                              "the range", k->group, k->key, v, r.lo, r.hi);
            else if (r.has_prior && (r.prior < r.lo || r.prior > r.hi))
                ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                              "%s.%s: prior %u lies outside its range %u..%u; expected a "
                              "value in the range", k->group, k->key, r.prior, r.lo, r.hi);
        }
    } else {
        r.kind = PRESET_RANGE_ALTERNATIVES;
        r.alternatives = g_strsplit(alt_text, ",", -1);
        bool found = false;
        unsigned n = g_strv_length(r.alternatives);
        for (unsigned i = 0; ok && i < n; i++) {
            char *a = alt_normalise(k, r.alternatives[i]);
            if (!a) {
                char *expect = preset_key_expect(k);
                ok = preset_src_fail(err, PRESET_ERROR_PARSE, s, line,
                              "%s.%s: alternative '%s'; expected %s", k->group, k->key,
                              r.alternatives[i], expect);
                g_free(expect);
            }
            found = found || (a && now && !strcmp(a, now));
            g_free(a);
        }
        if (ok && n < 2)
            ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                          "%s.%s: alternatives %s; expected at least two, comma separated",
                          k->group, k->key, alt_text);
        else if (ok && !found)
            ok = preset_src_fail(err, PRESET_ERROR_INVALID, s, line,
                          "%s.%s: %s is not among its alternatives %s; expected one of them",
                          k->group, k->key, now ? now : "?", alt_text);
    }
    if (ok) {
        r.id = g_strdup_printf("%s.%s", k->group, k->key);
        p->ranges = g_renew(PresetRange, p->ranges, p->nranges + 1);
        p->ranges[p->nranges++] = r;
        r.alternatives = NULL;
    }
out:
    g_strfreev(r.alternatives);
    g_free(now);
    g_free(lo);
    g_free(hi);
    g_free(alt_text);
    return ok;
}

void preset_ranges_free(PresetRange *r, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        g_free(r[i].id);
        g_strfreev(r[i].alternatives);
    }
    g_free(r);
}

Preset *preset_copy(const Preset *p)
{
    Preset *c = g_memdup2(p, sizeof *p);
    c->name = g_strdup(p->name);
    c->description = g_strdup(p->description);
    c->path = g_strdup(p->path);
    c->tlb_policy = g_strdup(p->tlb_policy);
    c->ranges = g_memdup2(p->ranges, sizeof *p->ranges * p->nranges);
    for (unsigned i = 0; i < p->nranges; i++) {
        c->ranges[i].id = g_strdup(p->ranges[i].id);
        c->ranges[i].alternatives = g_strdupv(p->ranges[i].alternatives);
    }
    return c;
}

bool preset_alternative_value(const char *a, unsigned *out)
{
    if (!strcmp(a, "true") || !strcmp(a, "false")) {
        *out = !strcmp(a, "true");
        return true;
    }
    char *end = NULL;
    guint64 v = g_ascii_strtoull(a, &end, 10);
    if (!*a || *end || v > G_MAXUINT)
        return false;
    *out = (unsigned)v;
    return true;
}

const PresetRange *preset_range_find(const Preset *p, const char *id)
{
    for (unsigned i = 0; i < p->nranges; i++)
        if (!strcmp(p->ranges[i].id, id))
            return &p->ranges[i];
    return NULL;
}

static const KeyDef *key_by_id(const char *id)
{
    const char *dot = strchr(id, '.');
    if (!dot)
        return NULL;
    char *g = g_strndup(id, (gsize)(dot - id));
    const KeyDef *k = preset_key_find(g, dot + 1);
    g_free(g);
    return k;
}

bool preset_get_uint(const Preset *p, const char *id, unsigned *out)
{
    const KeyDef *k = key_by_id(id);
    if (!k || (k->type != T_UINT && k->type != T_BYTES && k->type != T_BOOL))
        return false;
    const char *field = (const char *)p + k->off;
    *out = k->type == T_BOOL ? *(const bool *)field : *(const unsigned *)field;
    return true;
}

bool preset_set_uint(Preset *p, const char *id, unsigned v)
{
    const KeyDef *k = key_by_id(id);
    if (!k || (k->type != T_UINT && k->type != T_BYTES && k->type != T_BOOL))
        return false;
    char *field = (char *)p + k->off;
    if (k->type == T_BOOL)
        *(bool *)field = v != 0;
    else
        *(unsigned *)field = v;
    return true;
}


static const char *origin_name[] = { "sourced", "estimate", "fitted" };

/* "estimate: range 60..700; " for a key with a declared range, else "". */
void preset_range_text(GString *out, const Preset *p, const KeyDef *k)
{
    char *id = g_strdup_printf("%s.%s", k->group, k->key);
    const PresetRange *r = preset_range_find(p, id);
    g_free(id);
    if (!r)
        return;
    if (r->origin != PRESET_ORIGIN_SOURCED)
        g_string_append_printf(out, "%s: ", origin_name[r->origin]);
    if (r->kind == PRESET_RANGE_SPAN)
        g_string_append_printf(out, "range %u..%u", r->lo, r->hi);
    else {
        char *a = g_strjoinv(",", r->alternatives);
        g_string_append_printf(out, "alternatives %s", a);
        g_free(a);
    }
    if (r->has_prior)
        g_string_append_printf(out, " prior %u", r->prior);
    g_string_append(out, "; ");
}

/* "ranges": { "cost.int_gate": { "origin", "low", "high" | "alternatives",
 * "prior" }, ... } in file order. */
void preset_ranges_json(JsonBuilder *b, const Preset *p)
{
    json_builder_set_member_name(b, "ranges");
    json_builder_begin_object(b);
    for (unsigned i = 0; i < p->nranges; i++) {
        const PresetRange *r = &p->ranges[i];
        json_builder_set_member_name(b, r->id);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "origin");
        json_builder_add_string_value(b, origin_name[r->origin]);
        if (r->kind == PRESET_RANGE_SPAN) {
            json_builder_set_member_name(b, "low");
            json_builder_add_int_value(b, r->lo);
            json_builder_set_member_name(b, "high");
            json_builder_add_int_value(b, r->hi);
        } else {
            json_builder_set_member_name(b, "alternatives");
            json_builder_begin_array(b);
            for (char **a = r->alternatives; *a; a++)
                json_builder_add_string_value(b, *a);
            json_builder_end_array(b);
        }
        if (r->has_prior) {
            json_builder_set_member_name(b, "prior");
            json_builder_add_int_value(b, r->prior);
        }
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
}
