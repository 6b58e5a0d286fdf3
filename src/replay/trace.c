/* The trace grammar: one event line parsed into a TraceEvent and formatted
 * back, plus the header's key/value list. The reader and writer
 * (trace_reader.c, trace_writer.c) only move lines; everything about what a
 * line means is here, next to workloads/FORMAT.md. */
#include "replay/trace.h"
#include "replay/syscall_table.h"

#include <string.h>

G_DEFINE_QUARK(vmsplit-trace-error-quark, trace_error)

/* Keywords with their lengths (taken from the literals), so that matching
 * a token against them needs no strlen per candidate. */
typedef struct {
    const char *s;
    uint8_t len;
} Keyword;
#define KW(lit) {lit, sizeof lit - 1}

static const Keyword kind_words[TRACE_EV_COUNT] = {
    [TRACE_EV_USER] = KW("user"),     [TRACE_EV_SYSCALL] = KW("sys"),
    [TRACE_EV_FORK] = KW("fork"),     [TRACE_EV_EXEC] = KW("exec"),
    [TRACE_EV_EXIT] = KW("exit"),     [TRACE_EV_SWITCH] = KW("switch"),
    [TRACE_EV_SIGNAL] = KW("signal"), [TRACE_EV_MMAP] = KW("mmap"),
    [TRACE_EV_MUNMAP] = KW("munmap"), [TRACE_EV_MPROTECT] = KW("mprotect"),
    [TRACE_EV_BRK] = KW("brk"),       [TRACE_EV_REFS] = KW("refs"),
};

static const Keyword pattern_words[TRACE_PAT_COUNT] = {KW("seq"), KW("rand"), KW("hot")};

/* Longest names the parser accepts: syscall, errno, signal names and ops. */
#define WORD_MAX 127
#define PATH_MAX_BYTES TRACE_PATH_MAX

const char *trace_kind_name(TraceEventKind kind)
{
    g_assert(kind < TRACE_EV_COUNT);
    return kind_words[kind].s;
}

const char *trace_pattern_name(TracePattern p)
{
    g_assert(p < TRACE_PAT_COUNT);
    return pattern_words[p].s;
}

bool trace_pattern_parse(const char *s, TracePattern *out)
{
    for (int i = 0; i < TRACE_PAT_COUNT; i++)
        if (strcmp(s, pattern_words[i].s) == 0) {
            *out = (TracePattern)i;
            return true;
        }
    return false;
}

void trace_event_init(TraceEvent *ev, TraceEventKind kind, uint32_t pid)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = (uint8_t)kind;
    ev->pid = pid;
    if (kind == TRACE_EV_SYSCALL) {
        ev->u.sys.fd = TRACE_FD_NONE;
        ev->u.sys.ret_known = true;
    }
}

bool trace_event_equal(const TraceEvent *a, const TraceEvent *b)
{
    if (a->kind != b->kind || a->pid != b->pid)
        return false;
    switch ((TraceEventKind)a->kind) {
    case TRACE_EV_USER:
        return a->u.user.insns == b->u.user.insns && a->u.user.pages == b->u.user.pages &&
               a->u.user.pattern == b->u.user.pattern;
    case TRACE_EV_SYSCALL: {
        const TraceSyscall *x = &a->u.sys, *y = &b->u.sys;
        return g_strcmp0(x->name, y->name) == 0 && x->nr == y->nr &&
               x->ret_known == y->ret_known && (!x->ret_known || x->ret == y->ret) &&
               x->blocked == y->blocked && x->fd == y->fd && g_strcmp0(x->err, y->err) == 0 &&
               g_strcmp0(x->op, y->op) == 0 && x->req == y->req && x->in == y->in &&
               x->out == y->out && x->dur_ns == y->dur_ns;
    }
    case TRACE_EV_FORK:
        return a->u.fork.child == b->u.fork.child && a->u.fork.shared_vm == b->u.fork.shared_vm;
    case TRACE_EV_EXEC:
        return g_strcmp0(a->u.exec.path, b->u.exec.path) == 0;
    case TRACE_EV_EXIT:
        return g_strcmp0(a->u.exit.signal, b->u.exit.signal) == 0 &&
               a->u.exit.core == b->u.exit.core &&
               (a->u.exit.signal || a->u.exit.status == b->u.exit.status);
    case TRACE_EV_SWITCH:
        return true;
    case TRACE_EV_SIGNAL:
        return g_strcmp0(a->u.signal.name, b->u.signal.name) == 0;
    case TRACE_EV_MMAP:
    case TRACE_EV_MPROTECT:
        if (a->u.map.prot != b->u.map.prot)
            return false;
        /* fall through */
    case TRACE_EV_MUNMAP:
        return a->u.map.addr == b->u.map.addr && a->u.map.len == b->u.map.len &&
               (a->kind != TRACE_EV_MMAP || a->u.map.flags == b->u.map.flags);
    case TRACE_EV_BRK:
        return a->u.brk.addr == b->u.brk.addr;
    case TRACE_EV_REFS:
        return a->u.refs.insns == b->u.refs.insns && a->u.refs.nrefs == b->u.refs.nrefs;
    case TRACE_EV_COUNT:
        break;
    }
    g_assert_not_reached();
}

/* ---------------- header ---------------- */

struct TraceHeader {
    GPtrArray *keys, *values;
};

TraceHeader *trace_header_new(void)
{
    TraceHeader *h = g_new0(TraceHeader, 1);
    h->keys = g_ptr_array_new_with_free_func(g_free);
    h->values = g_ptr_array_new_with_free_func(g_free);
    return h;
}

void trace_header_free(TraceHeader *h)
{
    if (!h)
        return;
    g_ptr_array_free(h->keys, TRUE);
    g_ptr_array_free(h->values, TRUE);
    g_free(h);
}

static bool key_valid(const char *k)
{
    if (!*k)
        return false;
    for (; *k; k++)
        if (!g_ascii_islower(*k) && !g_ascii_isdigit(*k) && *k != '-')
            return false;
    return true;
}

void trace_header_set(TraceHeader *h, const char *key, const char *value)
{
    g_return_if_fail(key_valid(key));
    g_return_if_fail(strpbrk(value, "\r\n") == NULL);
    for (guint i = 0; i < h->keys->len; i++)
        if (strcmp(h->keys->pdata[i], key) == 0) {
            g_free(h->values->pdata[i]);
            h->values->pdata[i] = g_strdup(value);
            return;
        }
    g_ptr_array_add(h->keys, g_strdup(key));
    g_ptr_array_add(h->values, g_strdup(value));
}

void trace_header_set_double(TraceHeader *h, const char *key, double value)
{
    /* Whole numbers as integers ("100", not "1e+02"); others as the
     * shortest decimal that reads back as the same double. */
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (value == (double)(int64_t)value && value > -1e15 && value < 1e15) {
        g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, (int64_t)value);
        trace_header_set(h, key, buf);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        char fmt[8];
        g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof buf, fmt, value);
        if (g_ascii_strtod(buf, NULL) == value)
            break;
    }
    trace_header_set(h, key, buf);
}

const char *trace_header_get(const TraceHeader *h, const char *key)
{
    for (guint i = 0; i < h->keys->len; i++)
        if (strcmp(h->keys->pdata[i], key) == 0)
            return h->values->pdata[i];
    return NULL;
}

bool trace_header_get_double(const TraceHeader *h, const char *key, double def, double *out,
                             GError **err)
{
    const char *v = trace_header_get(h, key);
    if (!v) {
        *out = def;
        return true;
    }
    char *end = NULL;
    double d = g_ascii_strtod(v, &end);
    if (end == v || *end != '\0') {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "header @%s: expected a number, got '%s'", key, v);
        return false;
    }
    *out = d;
    return true;
}

guint trace_header_size(const TraceHeader *h) { return h->keys->len; }

void trace_header_nth(const TraceHeader *h, guint i, const char **key, const char **value)
{
    g_assert(i < h->keys->len);
    *key = h->keys->pdata[i];
    *value = h->values->pdata[i];
}

/* ---------------- parsing one event line ---------------- */

typedef struct {
    const char *p;        /* cursor */
    const char *tok;      /* last token */
    size_t len;
    const char *name;
    uint64_t lineno;
    GError **err;
} Cur;

static bool fail(Cur *c, const char *expected)
{
    if (c->tok && c->len)
        g_set_error(c->err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s:%" G_GUINT64_FORMAT ": expected %s, got '%.*s'", c->name, c->lineno,
                    expected, (int)MIN(c->len, 60), c->tok);
    else
        g_set_error(c->err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s:%" G_GUINT64_FORMAT ": expected %s, got the end of the line", c->name,
                    c->lineno, expected);
    return false;
}

/* Bytes that end a token: blank, tab and the NUL that ends the line. */
static const bool tok_end[256] = {[0] = true, [' '] = true, ['\t'] = true};

/* Next blank-separated token; false at the end of the line. (A local cursor:
 * through c->p the compiler would store it back at every byte.) */
static bool token(Cur *c)
{
    const char *p = c->p;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *t = p;
    while (!tok_end[(unsigned char)*p])
        p++;
    c->tok = t;
    c->p = p;
    c->len = (size_t)(p - t);
    return c->len > 0;
}

static bool tok_is(const Cur *c, const char *word)
{
    return c->len == strlen(word) && memcmp(c->tok, word, c->len) == 0;
}

static bool tok_is_kw(const Cur *c, const Keyword *k)
{
    return c->len == k->len && memcmp(c->tok, k->s, k->len) == 0;
}

/* Value of a digit in base 10 or 16, or 16 (no digit) for anything else. */
static inline unsigned digit_value(char ch, unsigned base)
{
    unsigned d = (unsigned)(unsigned char)ch - '0';
    if (d <= 9)
        return d;
    if (base == 16) {
        d = ((unsigned)(unsigned char)ch | 0x20u) - 'a';   /* 'A'..'F' -> 'a'..'f' */
        if (d <= 5)
            return d + 10;
    }
    return 16;
}

/* n digits in base (10 or 16) as an unsigned 64-bit value; false on an empty
 * string, a non-digit or a value over UINT64_MAX. The first `safe` digits
 * need no overflow check: 19 decimal digits are at most 10^19 - 1 and 16
 * hex digits at most 2^64 - 1, both below 2^64 (leading zeros count as
 * digits, so they only make the checked tail start earlier). */
static inline bool digits_u64(const char *s, size_t n, unsigned base, uint64_t *out)
{
    size_t safe = MIN(n, base == 10 ? (size_t)19 : (size_t)16), i = 0;
    uint64_t v = 0;
    if (n == 0)
        return false;
    for (; i < safe; i++) {
        unsigned d = digit_value(s[i], base);
        if (d >= base)
            return false;
        v = v * base + d;
    }
    for (; i < n; i++) {
        unsigned d = digit_value(s[i], base);
        if (d >= base || __builtin_mul_overflow(v, (uint64_t)base, &v) ||
            __builtin_add_overflow(v, (uint64_t)d, &v))
            return false;
    }
    *out = v;
    return true;
}

/* Decimal or 0x-hex unsigned. */
static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return digits_u64(s + 2, n - 2, 16, out);
    return digits_u64(s, n, 10, out);
}

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    bool neg = n > 0 && s[0] == '-';
    uint64_t v;
    if (!parse_u64(s + neg, n - neg, &v))
        return false;
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static bool parse_u32(const char *s, size_t n, uint32_t *out)
{
    uint64_t v;
    if (!digits_u64(s, n, 10, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* Microseconds with at most three decimals, to nanoseconds. */
static bool parse_usec(const char *s, size_t n, uint64_t *ns)
{
    const char *dot = memchr(s, '.', n);
    size_t ilen = dot ? (size_t)(dot - s) : n;
    uint64_t us, frac = 0;
    if (!digits_u64(s, ilen, 10, &us) || us > UINT64_MAX / 1000)
        return false;
    if (dot) {
        size_t flen = n - ilen - 1;
        if (flen == 0 || flen > 3 || !digits_u64(dot + 1, flen, 10, &frac))
            return false;
        for (size_t i = flen; i < 3; i++)
            frac *= 10;
    }
    if (us * 1000 > UINT64_MAX - frac)
        return false;
    *ns = us * 1000 + frac;
    return true;
}

/* Names seen before. Interning a name (g_intern_string: a global lock and a
 * string hash) and finding its syscall id (syscall_lookup: another hash)
 * cost more than the rest of a line, and a trace repeats a few dozen names
 * millions of times. This direct-mapped cache maps a name's bytes to its
 * interned string and syscall id. It is exact: an entry is used only when
 * its interned string has the token's length and bytes, and what it keeps
 * never changes (interned strings live for the whole process, the syscall
 * table is static), so it never needs invalidating. One per thread, so that
 * concurrent replays (replay_run_jobs) share no state and take no lock. */
#define NAME_CACHE_SIZE 256u         /* a power of two */

typedef struct {
    const char *str;                 /* interned, NULL: empty slot */
    uint32_t len;
    uint16_t nr;                     /* syscall_lookup(str) */
} NameSlot;

static _Thread_local NameSlot name_cache[NAME_CACHE_SIZE];

static bool word_char(char ch)
{
    return g_ascii_isalnum(ch) || ch == '_' || ch == '|';
}

/* Interns a token made of [A-Za-z0-9_|] (syscall, errno, signal, op names);
 * NULL if it is empty, too long or has another character. *nr (if not
 * NULL) gets its syscall id, SYSCALL_ID_UNKNOWN for a name the table does
 * not know or one longer than SYSCALL_NAME_MAX. The slot is picked from the
 * length and the first and last bytes (enough to tell syscall and errno
 * names apart, and cheap); a token equal to the slot's string is a name
 * that passed the character check when it was stored, so a hit needs no
 * check of its own. */
static const char *intern_word_nr(const char *s, size_t n, uint16_t *nr)
{
    if (n == 0 || n > WORD_MAX)
        return NULL;
    unsigned h = (unsigned)n * 97u + (unsigned char)s[0] * 31u + (unsigned char)s[n - 1];
    NameSlot *slot = &name_cache[(h ^ (h >> 8)) & (NAME_CACHE_SIZE - 1)];
    if (!slot->str || slot->len != n || memcmp(slot->str, s, n) != 0) {
        for (size_t i = 0; i < n; i++)
            if (!word_char(s[i]))
                return NULL;
        char buf[WORD_MAX + 1];
        memcpy(buf, s, n);
        buf[n] = '\0';
        slot->str = g_intern_string(buf);
        slot->len = (uint32_t)n;
        slot->nr = (uint16_t)syscall_lookup(s, n);
    }
    if (nr)
        *nr = slot->nr;
    return slot->str;
}

static const char *intern_word(const char *s, size_t n)
{
    return intern_word_nr(s, n, NULL);
}

static bool parse_prot(const char *s, size_t n, uint8_t *prot)
{
    static const char letters[3] = {'r', 'w', 'x'};
    if (n != 3)
        return false;
    *prot = 0;
    for (int i = 0; i < 3; i++) {
        if (s[i] == letters[i])
            *prot |= (uint8_t)(1u << i);
        else if (s[i] != '-')
            return false;
    }
    return true;
}

#define SYS_FIELDS "err=, fd=, req=, in=, out=, dur=, op= or blocked"

static bool sys_field(Cur *c, TraceSyscall *s, unsigned *seen)
{
    static const Keyword keys[] = {KW("err"), KW("fd"),  KW("req"), KW("in"),
                                   KW("out"), KW("dur"), KW("op"),  KW("blocked")};
    const char *eq = memchr(c->tok, '=', c->len);
    size_t klen = eq ? (size_t)(eq - c->tok) : c->len;
    unsigned k;
    for (k = 0; k < G_N_ELEMENTS(keys); k++)
        if (klen == keys[k].len && memcmp(c->tok, keys[k].s, klen) == 0)
            break;
    if (k == G_N_ELEMENTS(keys) || (k == 7) != (eq == NULL))
        return fail(c, SYS_FIELDS);
    if (*seen & (1u << k))
        return fail(c, "each syscall field at most once");
    *seen |= 1u << k;
    const char *v = eq ? eq + 1 : NULL;
    size_t vn = eq ? c->len - klen - 1 : 0;
    int64_t fd;
    switch (k) {
    case 0: return (s->err = intern_word(v, vn)) ? true : fail(c, "err=ERRNO_NAME");
    case 1:
        if (!parse_i64(v, vn, &fd) || fd < INT32_MIN + 1 || fd > INT32_MAX)
            return fail(c, "fd=N (a 32-bit integer)");
        s->fd = (int32_t)fd;
        return true;
    case 2: return parse_u64(v, vn, &s->req) || fail(c, "req=BYTES");
    case 3: return parse_u64(v, vn, &s->in) || fail(c, "in=BYTES");
    case 4: return parse_u64(v, vn, &s->out) || fail(c, "out=BYTES");
    case 5: return parse_usec(v, vn, &s->dur_ns) || fail(c, "dur=MICROSECONDS (3 decimals at most)");
    case 6: return (s->op = intern_word(v, vn)) ? true : fail(c, "op=NAME");
    default: s->blocked = true; return true;
    }
}

static bool parse_sys(Cur *c, TraceSyscall *s)
{
    if (!token(c) || !(s->name = intern_word_nr(c->tok, c->len, &s->nr)) ||
        c->len > SYSCALL_NAME_MAX)
        return fail(c, "a syscall name");
    if (!token(c))
        return fail(c, "the return value (a number or ?)");
    if (tok_is(c, "?"))
        s->ret_known = false;
    else if (!parse_i64(c->tok, c->len, &s->ret))
        return fail(c, "the return value (a number or ?)");
    unsigned seen = 0;
    while (token(c))
        if (!sys_field(c, s, &seen))
            return false;
    return true;
}

/* Undoes g_strescape(): \b \f \n \r \t \v \\ \" and \ooo octal (1 to 3
 * digits). Stops at the closing quote; NULL on a bad escape, a NUL byte, a
 * missing closing quote or a path over PATH_MAX_BYTES. *end gets the quote. */
static char *unescape_quoted(const char *s, const char **end)
{
    static const char from[] = "bfnrtv\\\"", to[] = "\b\f\n\r\t\v\\\"";
    GString *out = g_string_sized_new(64);
    while (*s && *s != '"' && out->len <= PATH_MAX_BYTES) {
        if (*s != '\\') {
            g_string_append_c(out, *s++);
            continue;
        }
        s++;
        const char *hit = *s ? strchr(from, *s) : NULL;
        if (hit) {
            g_string_append_c(out, to[hit - from]);
            s++;
            continue;
        }
        unsigned v = 0, n = 0;
        while (n < 3 && *s >= '0' && *s <= '7')
            v = v * 8 + (unsigned)(*s++ - '0'), n++;
        if (n == 0 || v == 0 || v > 255)
            break;
        g_string_append_c(out, (char)v);
    }
    if (*s != '"' || out->len > PATH_MAX_BYTES) {
        g_string_free(out, TRUE);
        return NULL;
    }
    *end = s;
    return g_string_free(out, FALSE);
}

/* exec "PATH": a C-escaped quoted string, the rest of the line. */
static bool parse_exec(Cur *c, TraceEvent *ev)
{
    while (*c->p == ' ' || *c->p == '\t')
        c->p++;
    c->tok = c->p;
    c->len = strlen(c->p);
    const char *q = NULL;
    char *path = *c->p == '"' ? unescape_quoted(c->p + 1, &q) : NULL;
    if (!path)
        return fail(c, "a quoted path (C escapes, at most 4000 bytes)");
    ev->u.exec.path = g_intern_string(path);
    g_free(path);
    c->p = q + 1;
    return true;
}

static bool parse_exit(Cur *c, TraceEvent *ev)
{
    int64_t st;
    if (!token(c))
        return fail(c, "an exit status or a signal name");
    if (c->len > 3 && memcmp(c->tok, "SIG", 3) == 0) {
        if (!(ev->u.exit.signal = intern_word(c->tok, c->len)))
            return fail(c, "a signal name");
        if (token(c)) {
            if (!tok_is(c, "core"))
                return fail(c, "'core' or the end of the line");
            ev->u.exit.core = true;
        }
        return true;
    }
    if (!parse_i64(c->tok, c->len, &st) || st < INT32_MIN || st > INT32_MAX)
        return fail(c, "an exit status or a signal name");
    ev->u.exit.status = (int32_t)st;
    return true;
}

static bool parse_map(Cur *c, TraceEvent *ev)
{
    if (!token(c) || !parse_u64(c->tok, c->len, &ev->u.map.addr))
        return fail(c, "an address");
    if (!token(c) || !parse_u64(c->tok, c->len, &ev->u.map.len))
        return fail(c, "a length in bytes");
    if (ev->kind == TRACE_EV_MUNMAP)
        return true;
    if (!token(c) || !parse_prot(c->tok, c->len, &ev->u.map.prot))
        return fail(c, "protection as rwx, r-x, --- ...");
    while (ev->kind == TRACE_EV_MMAP && token(c)) {
        if (tok_is(c, "shared"))
            ev->u.map.flags |= TRACE_MAP_SHARED;
        else if (tok_is(c, "anon"))
            ev->u.map.flags |= TRACE_MAP_ANON;
        else if (tok_is(c, "stack"))
            ev->u.map.flags |= TRACE_MAP_STACK;
        else
            return fail(c, "'shared', 'anon', 'stack' or the end of the line");
    }
    return true;
}

static bool parse_body(Cur *c, TraceEvent *ev)
{
    unsigned pat;
    switch ((TraceEventKind)ev->kind) {
    case TRACE_EV_USER:
        if (!token(c) || !parse_u64(c->tok, c->len, &ev->u.user.insns))
            return fail(c, "an instruction count");
        G_STATIC_ASSERT(TRACE_USER_INSNS_MAX == 1000000000000ULL);   /* the message's figure */
        if (ev->u.user.insns > TRACE_USER_INSNS_MAX)
            return fail(c, "an instruction count of at most 1000000000000 (10^12; split longer "
                           "work into several user events)");
        if (!token(c) || !parse_u32(c->tok, c->len, &ev->u.user.pages) || !ev->u.user.pages)
            return fail(c, "a working set in pages (1 or more)");
        if (!token(c))
            return fail(c, "an access pattern (seq, rand or hot)");
        for (pat = 0; pat < TRACE_PAT_COUNT; pat++)
            if (tok_is_kw(c, &pattern_words[pat])) {
                ev->u.user.pattern = (uint8_t)pat;
                return true;
            }
        return fail(c, "an access pattern (seq, rand or hot)");
    case TRACE_EV_SYSCALL: return parse_sys(c, &ev->u.sys);
    case TRACE_EV_FORK:
        if (!token(c) || !parse_u32(c->tok, c->len, &ev->u.fork.child))
            return fail(c, "the child's pid");
        if (token(c)) {
            if (!tok_is(c, "shared"))
                return fail(c, "'shared' or the end of the line");
            ev->u.fork.shared_vm = true;
        }
        return true;
    case TRACE_EV_EXEC: return parse_exec(c, ev);
    case TRACE_EV_EXIT: return parse_exit(c, ev);
    case TRACE_EV_SWITCH: return true;
    case TRACE_EV_SIGNAL:
        if (!token(c) || !(ev->u.signal.name = intern_word(c->tok, c->len)))
            return fail(c, "a signal name");
        return true;
    case TRACE_EV_MMAP:
    case TRACE_EV_MUNMAP:
    case TRACE_EV_MPROTECT: return parse_map(c, ev);
    case TRACE_EV_BRK:
        if (!token(c) || !parse_u64(c->tok, c->len, &ev->u.brk.addr))
            return fail(c, "the new break address");
        return true;
    case TRACE_EV_REFS:
        if (!token(c) || !parse_u64(c->tok, c->len, &ev->u.refs.insns) || !ev->u.refs.insns ||
            ev->u.refs.insns > TRACE_REFS_INSNS_MAX)
            return fail(c, "an instruction count (1 to 10^12)");
        if (!token(c) || !parse_u32(c->tok, c->len, &ev->u.refs.nrefs) || !ev->u.refs.nrefs ||
            ev->u.refs.nrefs > TRACE_REFS_NREFS_MAX)
            return fail(c, "a number of reference lines (1 to 10^7)");
        return true;
    case TRACE_EV_COUNT: break;
    }
    g_assert_not_reached();
}

/* ---------------- reference lines (version 2) ---------------- */

static const char ref_letters[TRACE_REF_KINDS] = {'i', 'r', 'w', 'm'};

bool trace_parse_ref(const char *line, TraceRef *ref, const char *name, uint64_t lineno,
                     GError **err)
{
    Cur c = {.p = line, .name = name, .lineno = lineno, .err = err};
    uint64_t v;
    if (!token(&c) || c.len != 1)
        return fail(&c, "a reference line: i, r, w or m");
    const char *k = memchr(ref_letters, c.tok[0], TRACE_REF_KINDS);
    if (!k)
        return fail(&c, "a reference line: i, r, w or m");
    ref->kind = (uint8_t)(k - ref_letters);
    if (!token(&c) || !parse_u64(c.tok, c.len, &v) || v > UINT32_MAX)
        return fail(&c, "an address (a 32-bit user address, 0x...)");
    ref->addr = (uint32_t)v;
    ref->size = 0;
    ref->n = 1;
    if (ref->kind == TRACE_REF_FETCH) {
        if (!token(&c) || !parse_u64(c.tok, c.len, &v) || !v || v > UINT32_MAX)
            return fail(&c, "an instruction count N (1 to 2^32-1)");
        ref->n = (uint32_t)v;
    } else {
        if (!token(&c) || !parse_u64(c.tok, c.len, &v) || !v || v > TRACE_REF_SIZE_MAX)
            return fail(&c, "a size in bytes (1 to 64)");
        ref->size = (uint8_t)v;
        if (token(&c)) {
            if (!parse_u64(c.tok, c.len, &v) || !v || v > UINT32_MAX)
                return fail(&c, "a count N (1 to 2^32-1) or the end of the line");
            ref->n = (uint32_t)v;
        }
        /* A reference never crosses a page (the converter splits it). A
         * run's references all start in ADDR's 64-byte line; one may end in
         * the next line (an unaligned access), as a single reference may:
         * the replay times each as an access at its line, like the
         * unmerged references would be. */
        uint32_t off = ref->addr & 4095u;
        if (off + ref->size > 4096u)
            return fail(&c, "a reference within its 4 KiB page (split one that crosses)");
    }
    if (token(&c))
        return fail(&c, "the end of the line");
    return true;
}


bool trace_parse_event(const char *line, TraceEvent *ev, const char *name, uint64_t lineno,
                       GError **err)
{
    Cur c = {.p = line, .name = name, .lineno = lineno, .err = err};
    uint32_t pid;
    if (!token(&c) || !parse_u32(c.tok, c.len, &pid))
        return fail(&c, "an event: PID KIND ...");
    if (!token(&c))
        return fail(&c, "an event kind (user, sys, fork, exec, exit, switch, signal, mmap, "
                        "munmap, mprotect, brk, refs)");
    int kind;
    for (kind = 0; kind < TRACE_EV_COUNT; kind++)
        if (tok_is_kw(&c, &kind_words[kind]))
            break;
    if (kind == TRACE_EV_COUNT)
        return fail(&c, "an event kind (user, sys, fork, exec, exit, switch, signal, mmap, "
                        "munmap, mprotect, brk, refs)");
    trace_event_init(ev, (TraceEventKind)kind, pid);
    if (!parse_body(&c, ev))
        return false;
    if (token(&c))
        return fail(&c, "the end of the line");
    return true;
}

/* ---------------- formatting ---------------- */

static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

static char *put_hex(char *p, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    int n = 0;
    p = put_str(p, "0x");
    do
        tmp[n++] = digits[v & 15];
    while ((v >>= 4) != 0);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_usec(char *p, uint64_t ns)
{
    p = put_u64(p, ns / 1000);
    unsigned frac = (unsigned)(ns % 1000);
    if (frac) {
        char d[3] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                     (char)('0' + frac % 10)};
        int n = d[2] != '0' ? 3 : d[1] != '0' ? 2 : 1;
        *p++ = '.';
        memcpy(p, d, (size_t)n);
        p += n;
    }
    return p;
}

static char *put_prot(char *p, uint8_t prot)
{
    *p++ = prot & TRACE_PROT_READ ? 'r' : '-';
    *p++ = prot & TRACE_PROT_WRITE ? 'w' : '-';
    *p++ = prot & TRACE_PROT_EXEC ? 'x' : '-';
    return p;
}

static char *put_sys(char *p, const TraceSyscall *s)
{
    p = put_str(p, s->name);
    *p++ = ' ';
    p = s->ret_known ? put_i64(p, s->ret) : put_str(p, "?");
    if (s->err)
        p = put_str(put_str(p, " err="), s->err);
    if (s->fd != TRACE_FD_NONE)
        p = put_i64(put_str(p, " fd="), s->fd);
    if (s->req)
        p = put_u64(put_str(p, " req="), s->req);
    if (s->in)
        p = put_u64(put_str(p, " in="), s->in);
    if (s->out)
        p = put_u64(put_str(p, " out="), s->out);
    if (s->dur_ns)
        p = put_usec(put_str(p, " dur="), s->dur_ns);
    if (s->blocked)
        p = put_str(p, " blocked");
    if (s->op)
        p = put_str(put_str(p, " op="), s->op);
    return p;
}

size_t trace_format_event(const TraceEvent *ev, char *buf)
{
    char *p = put_u64(buf, ev->pid);
    *p++ = ' ';
    p = put_str(p, trace_kind_name((TraceEventKind)ev->kind));
    switch ((TraceEventKind)ev->kind) {
    case TRACE_EV_USER:
        p = put_u64(put_str(p, " "), ev->u.user.insns);
        p = put_u64(put_str(p, " "), ev->u.user.pages);
        p = put_str(put_str(p, " "), trace_pattern_name((TracePattern)ev->u.user.pattern));
        break;
    case TRACE_EV_SYSCALL: p = put_sys(put_str(p, " "), &ev->u.sys); break;
    case TRACE_EV_FORK:
        p = put_u64(put_str(p, " "), ev->u.fork.child);
        if (ev->u.fork.shared_vm)
            p = put_str(p, " shared");
        break;
    case TRACE_EV_EXEC: {
        char *esc = g_strescape(ev->u.exec.path, NULL);
        g_assert(strlen(esc) <= 4 * PATH_MAX_BYTES);
        p = put_str(put_str(put_str(p, " \""), esc), "\"");
        g_free(esc);
        break;
    }
    case TRACE_EV_EXIT:
        if (ev->u.exit.signal) {
            p = put_str(put_str(p, " "), ev->u.exit.signal);
            if (ev->u.exit.core)
                p = put_str(p, " core");
        } else {
            p = put_i64(put_str(p, " "), ev->u.exit.status);
        }
        break;
    case TRACE_EV_SWITCH: break;
    case TRACE_EV_SIGNAL: p = put_str(put_str(p, " "), ev->u.signal.name); break;
    case TRACE_EV_MMAP:
    case TRACE_EV_MUNMAP:
    case TRACE_EV_MPROTECT:
        p = put_hex(put_str(p, " "), ev->u.map.addr);
        p = put_u64(put_str(p, " "), ev->u.map.len);
        if (ev->kind != TRACE_EV_MUNMAP)
            p = put_prot(put_str(p, " "), ev->u.map.prot);
        if (ev->kind == TRACE_EV_MMAP && (ev->u.map.flags & TRACE_MAP_SHARED))
            p = put_str(p, " shared");
        if (ev->kind == TRACE_EV_MMAP && (ev->u.map.flags & TRACE_MAP_ANON))
            p = put_str(p, " anon");
        if (ev->kind == TRACE_EV_MMAP && (ev->u.map.flags & TRACE_MAP_STACK))
            p = put_str(p, " stack");
        break;
    case TRACE_EV_BRK: p = put_hex(put_str(p, " "), ev->u.brk.addr); break;
    case TRACE_EV_REFS:
        p = put_u64(put_str(p, " "), ev->u.refs.insns);
        p = put_u64(put_str(p, " "), ev->u.refs.nrefs);
        break;
    case TRACE_EV_COUNT: g_assert_not_reached();
    }
    *p = '\0';
    return (size_t)(p - buf);
}

/* The reader's fast path for a reference line of len bytes: the common
 * spellings only (single blanks, lower-case 0x addresses, decimal counts),
 * with every check trace_parse_ref makes; false for anything else, which
 * the reader then hands to trace_parse_ref for its message (or, if that
 * accepts it, to its own NUL check). The line ends exactly at len, so a
 * NUL byte inside it fails here. */
static inline bool dec_field(const char **pp, const char *end, uint64_t *v)
{
    const char *p = *pp;
    uint64_t x = 0;
    const char *start = p;
    while (p < end && (unsigned)(*p - '0') <= 9 && p - start < 12)
        x = x * 10 + (uint64_t)(*p++ - '0');
    if (p == start || p - start >= 12)
        return false;
    *v = x;
    *pp = p;
    return true;
}

bool trace_parse_ref_fast(const char *line, size_t len, TraceRef *ref)
{
    const char *p = line, *end = line + len;
    if (len < 5 || p[1] != ' ' || p[2] != '0' || p[3] != 'x')
        return false;
    const char *k = memchr(ref_letters, p[0], TRACE_REF_KINDS);
    if (!k)
        return false;
    p += 4;
    uint64_t a = 0, v, n = 1;
    bool third = false;
    const char *h = p;
    for (unsigned d; p < end && (d = digit_value(*p, 16)) < 16 && p - h < 9; p++)
        a = a * 16 + d;
    if (p == h || p - h > 8 || p >= end || *p++ != ' ' || !dec_field(&p, end, &v))
        return false;
    if (p < end) {
        if (*p++ != ' ' || !dec_field(&p, end, &n))
            return false;
        third = true;
    }
    if (p != end)
        return false;
    ref->kind = (uint8_t)(k - ref_letters);
    ref->addr = (uint32_t)a;
    if (ref->kind == TRACE_REF_FETCH) {
        if (third || !v || v > UINT32_MAX)    /* i takes one count, N */
            return false;
        ref->n = (uint32_t)v;
        ref->size = 0;
        return true;
    }
    if (!v || v > TRACE_REF_SIZE_MAX || !n || n > UINT32_MAX)
        return false;
    ref->size = (uint8_t)v;
    ref->n = (uint32_t)n;
    uint32_t off = ref->addr & 4095u;
    return off + ref->size <= 4096u;
}

size_t trace_format_ref(const TraceRef *ref, char *buf)
{
    g_assert(ref->kind < TRACE_REF_KINDS);
    char *p = buf;
    *p++ = ref_letters[ref->kind];
    p = put_hex(put_str(p, " "), ref->addr);
    if (ref->kind == TRACE_REF_FETCH) {
        p = put_u64(put_str(p, " "), ref->n);
    } else {
        p = put_u64(put_str(p, " "), ref->size);
        if (ref->n != 1)
            p = put_u64(put_str(p, " "), ref->n);
    }
    *p = '\0';
    return (size_t)(p - buf);
}
