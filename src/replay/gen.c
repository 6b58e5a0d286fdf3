/* The generator registry, option checking, the seeded PRNG and the emitters
 * the generators share (gen.h). The generators themselves are gen_*.c. */
#include "replay/gen.h"

#include <math.h>
#include <string.h>

#include "replay/syscall_table.h"

G_DEFINE_QUARK(vmsplit-gen-error-quark, gen_error)

const Generator *const gen_registry[] = {
    &gen_null, &gen_pipe, &gen_fileio, &gen_db, &gen_net, &gen_compute, NULL,
};

const Generator *gen_find(const char *name)
{
    for (const Generator *const *g = gen_registry; *g; g++)
        if (!strcmp((*g)->name, name))
            return *g;
    return NULL;
}

void gen_options_init(GenOptions *o)
{
    memset(o, 0, sizeof *o);
    o->count = GEN_DEFAULT_COUNT;
    o->seed = GEN_DEFAULT_SEED;
    o->clock_mhz = GEN_DEFAULT_CLOCK_MHZ;
    o->ipc = GEN_DEFAULT_IPC;
}

uint64_t gen_user_insns(const Generator *gen, const GenOptions *o)
{
    if (o->have_user_insns)
        return o->user_insns;
    if (o->rate > 0)
        return (uint64_t)llround(o->clock_mhz * 1e6 * o->ipc / o->rate);
    return gen->default_user_insns;
}

static const GenParam *param_find(const Generator *gen, const char *key, size_t len)
{
    for (const GenParam *p = gen->params; p && p->key; p++)
        if (strlen(p->key) == len && !strncmp(p->key, key, len))
            return p;
    return NULL;
}

static GString *param_names(const Generator *gen)
{
    GString *s = g_string_new(NULL);
    for (const GenParam *p = gen->params; p && p->key; p++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", p->key);
    if (!s->len)
        g_string_append(s, "none");
    return s;
}

/* Parses one "KEY=VALUE" for gen into *param and *value. */
static bool param_parse(const Generator *gen, const char *kv, const GenParam **param,
                        double *value, GError **err)
{
    const char *eq = strchr(kv, '=');
    const GenParam *p = eq ? param_find(gen, kv, (size_t)(eq - kv)) : NULL;
    if (!p) {
        g_autoptr(GString) names = param_names(gen);
        g_set_error(err, GEN_ERROR, GEN_ERROR_OPTION,
                    "--param '%s': expected KEY=VALUE with a parameter of '%s' (%s)", kv,
                    gen->name, names->str);
        return false;
    }
    char *end = NULL;
    double v = g_ascii_strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !isfinite(v) || v < p->min || v > p->max ||
        (p->integer && v != floor(v))) {
        g_set_error(err, GEN_ERROR, GEN_ERROR_OPTION,
                    "--param %s: expected %s from %g to %g, got '%s'", p->key,
                    p->integer ? "a whole number" : "a number", p->min, p->max, eq + 1);
        return false;
    }
    *param = p;
    *value = v;
    return true;
}

bool gen_options_check(const Generator *gen, const GenOptions *o, GError **err)
{
    const char *bad = NULL;
    if (o->count < 1)
        bad = "--count: expected 1 or more syscalls";
    else if (o->have_user_insns && o->rate > 0)
        bad = "--rate and --user-insns both given: expected one of them";
    else if (o->rate < 0 || !isfinite(o->rate))
        bad = "--rate: expected a positive number of syscalls per second";
    else if (!(o->clock_mhz > 0) || !isfinite(o->clock_mhz))
        bad = "--clock-mhz: expected a positive number";
    else if (!(o->ipc > 0) || !isfinite(o->ipc))
        bad = "--ipc: expected a positive number";
    else if (o->rate > 0 && o->clock_mhz * 1e6 * o->ipc / o->rate > (double)TRACE_USER_INSNS_MAX)
        bad = "--rate: too low (more than 10^12 user instructions per syscall, the most a "
              "trace's user event holds)";
    else if (o->have_user_insns && o->user_insns > TRACE_USER_INSNS_MAX)
        bad = "--user-insns: expected at most 10^12 (the most a trace's user event holds)";
    if (bad) {
        g_set_error_literal(err, GEN_ERROR, GEN_ERROR_OPTION, bad);
        return false;
    }
    for (char **kv = o->params; kv && *kv; kv++) {
        const GenParam *p;
        double v;
        if (!param_parse(gen, *kv, &p, &v, err))
            return false;
    }
    return true;
}

/* ---- the context the generators write through ---- */

struct GenContext {
    const Generator *gen;
    TraceWriter *w;
    uint64_t left;       /* loop syscalls still to write */
    uint64_t rng;        /* splitmix64 state */
    uint64_t user_insns;
    uint32_t pages;
    uint8_t pattern;
    double values[GEN_MAX_PARAMS];
};

bool gen_done(const GenContext *g) { return g->left == 0; }

double gen_param(const GenContext *g, const char *key)
{
    const GenParam *p = param_find(g->gen, key, strlen(key));
    g_assert(p);
    return g->values[p - g->gen->params];
}

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; the constants of Vigna's reference code): one
 * 64-bit state, passes BigCrush, and the same sequence on every host. */
uint64_t gen_rand(GenContext *g)
{
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t gen_below(GenContext *g, uint64_t n)
{
    g_assert(n > 0);
    uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* reject the uneven tail */
    uint64_t x;
    do
        x = gen_rand(g);
    while (x >= limit);
    return x % n;
}

bool gen_chance(GenContext *g, double p)
{
    /* 53 random bits as a double in [0, 1). */
    return (double)(gen_rand(g) >> 11) * 0x1p-53 < p;
}

TraceEvent gen_sys_event(uint32_t pid, const char *name, int64_t ret)
{
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_SYSCALL, pid);
    ev.u.sys.name = g_intern_string(name);
    ev.u.sys.nr = (uint16_t)syscall_lookup(name, strlen(name));
    g_assert(ev.u.sys.nr != SYSCALL_ID_UNKNOWN); /* generators use known names only */
    ev.u.sys.ret = ret;
    return ev;
}

void gen_emit(GenContext *g, const TraceEvent *ev)
{
    if (!gen_done(g))
        trace_writer_write(g->w, ev);
}

void gen_setup_sys(GenContext *g, const TraceEvent *ev) { gen_emit(g, ev); }

void gen_loop_sys(GenContext *g, const TraceEvent *ev)
{
    if (gen_done(g))
        return;
    if (g->user_insns) {
        TraceEvent u;
        trace_event_init(&u, TRACE_EV_USER, ev->pid);
        u.u.user.insns = g->user_insns;
        u.u.user.pages = g->pages;
        u.u.user.pattern = g->pattern;
        trace_writer_write(g->w, &u);
    }
    trace_writer_write(g->w, ev);
    g->left--;
}

void gen_switch(GenContext *g, uint32_t pid)
{
    TraceEvent ev;
    trace_event_init(&ev, TRACE_EV_SWITCH, pid);
    gen_emit(g, &ev);
}

/* ---- writing ---- */

static TraceHeader *header_new(const GenContext *g, const GenOptions *o)
{
    TraceHeader *h = trace_header_new();
    char buf[64];
    g_autofree char *source = g_strdup_printf("gen:%s", g->gen->name);
    trace_header_set(h, "source", source);
    trace_header_set(h, "imitates", g->gen->summary);
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, o->seed);
    trace_header_set(h, "seed", buf);
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, o->count);
    trace_header_set(h, "count", buf);
    if (o->rate_on) {
        trace_header_set_double(h, "rate", o->rate_target);
        trace_header_set_double(h, "rate-realised", o->rate_realised);
        trace_header_set(h, "rate-on", o->rate_on);
    } else {
        if (o->rate > 0)
            trace_header_set_double(h, "rate", o->rate);
        trace_header_set_double(h, "clock-mhz", o->clock_mhz);
        trace_header_set_double(h, "ipc", o->ipc);
    }
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, g->user_insns);
    trace_header_set(h, "user-insns", buf);
    g_snprintf(buf, sizeof buf, "%" G_GUINT32_FORMAT, g->pages);
    trace_header_set(h, "user-pages", buf);
    trace_header_set(h, "user-pattern", trace_pattern_name(g->pattern));
    GString *params = g_string_new(NULL);
    for (const GenParam *p = g->gen->params; p && p->key; p++)
        g_string_append_printf(params, "%s%s=%g", params->len ? " " : "", p->key,
                               g->values[p - g->gen->params]);
    if (params->len)
        trace_header_set(h, "params", params->str);
    g_string_free(params, TRUE);
    return h;
}

static void context_init(GenContext *g, const Generator *gen, const GenOptions *o)
{
    memset(g, 0, sizeof *g);
    g->gen = gen;
    g->left = o->count;
    g->rng = o->seed;
    g->user_insns = gen_user_insns(gen, o);
    g->pages = o->pages ? o->pages : gen->default_pages;
    g->pattern = (uint8_t)(o->have_pattern ? o->pattern : gen->default_pattern);
    unsigned n = 0;
    for (const GenParam *p = gen->params; p && p->key; p++, n++) {
        g_assert(n < GEN_MAX_PARAMS);
        g->values[n] = p->def;
    }
    for (char **kv = o->params; kv && *kv; kv++) {
        const GenParam *p;
        double v;
        if (param_parse(gen, *kv, &p, &v, NULL))
            g->values[p - gen->params] = v;
    }
}

bool gen_write(const Generator *gen, const GenOptions *o, const char *path, GError **err)
{
    if (!gen_options_check(gen, o, err))
        return false;
    GenContext g;
    context_init(&g, gen, o);
    TraceHeader *h = header_new(&g, o);
    g.w = trace_writer_open(path, h, err);
    trace_header_free(h);
    if (!g.w)
        return false;
    gen->run(&g);
    g_assert(gen_done(&g)); /* every generator loops until count is reached */
    return trace_writer_close(g.w, err);
}
