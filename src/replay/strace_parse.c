/* Lexing strace lines. See strace_parse.h for the forms accepted. The only
 * subtle part is finding where a syscall's arguments end: they hold quoted
 * strings (with escapes, possibly containing ") = "), nested structures,
 * arrays and comments, so the closing parenthesis is found by a scan that
 * tracks nesting and skips strings and comments. */
#include "replay/strace_parse.h"

#include <glib.h>
#include <string.h>

#define UNFINISHED_MARK "<unfinished ...>"
#define DETACHED_MARK "<detached ...>"

static const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static bool starts(const char *p, const char *prefix)
{
    return strncmp(p, prefix, strlen(prefix)) == 0;
}

static bool is_sym(char c) { return g_ascii_isalnum(c) || c == '_'; }

/* Unsigned decimal digits; false if none or overflow. */
static bool read_u64(const char **pp, uint64_t *v)
{
    const char *p = *pp;
    uint64_t x = 0;
    if (!g_ascii_isdigit(*p))
        return false;
    for (; g_ascii_isdigit(*p); p++) {
        if (x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *pp = p;
    *v = x;
    return true;
}

/* ".123456" (1 to 9 digits) as nanoseconds. */
static bool read_frac_ns(const char **pp, uint64_t *ns)
{
    const char *p = *pp;
    if (*p != '.' || !g_ascii_isdigit(p[1]))
        return false;
    p++;
    uint64_t v = 0;
    int n = 0;
    for (; g_ascii_isdigit(*p); p++, n++) {
        if (n == 9)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    for (; n < 9; n++)
        v *= 10;
    *pp = p;
    *ns = v;
    return true;
}

static bool read_timestamp(const char **pp, StraceLine *l)
{
    const char *p = *pp;
    uint64_t a, b, c, frac = 0;
    if (!read_u64(&p, &a))
        return false;
    if (*p == ':') {
        p++;
        if (!read_u64(&p, &b) || *p != ':')
            return false;
        p++;
        if (!read_u64(&p, &c) || a > 23 || b > 59 || c > 60)
            return false;
        l->ts = STRACE_TS_CLOCK;
        l->ts_frac = *p == '.';
        if (l->ts_frac && !read_frac_ns(&p, &frac))
            return false;
        l->ts_ns = ((a * 60 + b) * 60 + c) * 1000000000ull + frac;
    } else {
        if (!read_frac_ns(&p, &frac) || a > UINT64_MAX / 1000000000ull - 1)
            return false;
        l->ts = a >= 100000000 ? STRACE_TS_EPOCH : STRACE_TS_RELATIVE;
        l->ts_frac = true;
        l->ts_ns = a * 1000000000ull + frac;
    }
    if (*p != ' ' && *p != '\t')
        return false;
    *pp = p;
    return true;
}

/* Past a quoted string starting at p ('"'), or NULL if unterminated. */
static const char *skip_string(const char *p)
{
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    return *p ? p + 1 : NULL;
}

/* The ')' that closes the argument list starting at p, or NULL. */
static const char *scan_close(const char *p)
{
    int depth = 0;
    while (*p) {
        if (*p == '"') {
            if (!(p = skip_string(p)))
                return NULL;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            if (!e)
                return NULL;
            p = e + 2;
            continue;
        }
        if (*p == '(' || *p == '[' || *p == '{')
            depth++;
        else if (*p == ']' || *p == '}')
            depth--;
        else if (*p == ')' && depth-- == 0)
            return p;
        if (depth < 0)
            return NULL;
        p++;
    }
    return NULL;
}

static StraceText trimmed(const char *b, const char *e)
{
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return (StraceText){b, (size_t)(e - b)};
}

/* "= ret [ERRNO] [(...)] [<dur>]" from p to the end of the line. */
static bool parse_result(const char *p, StraceLine *l, const char **expected, const char **at)
{
    const char *end = p + strlen(p);
    p = skip_blanks(p);
    *at = p;
    if (*p != '=') {
        *expected = "' = ' and a return value after the arguments";
        return false;
    }
    p = skip_blanks(p + 1);
    /* -T: the last " <seconds>" of the line. */
    if (end > p && end[-1] == '>') {
        const char *lt = end - 1;
        while (lt > p && *lt != '<')
            lt--;
        const char *q = lt + 1;
        uint64_t s, frac;
        if (*lt == '<' && lt[-1] == ' ' && read_u64(&q, &s) && read_frac_ns(&q, &frac) &&
            *q == '>' && s < UINT64_MAX / 1000000000ull - 1) {
            l->has_dur = true;
            l->dur_ns = s * 1000000000ull + frac;
        }
    }
    *at = p;
    if (*p == '?') {
        l->ret_known = false;
        p++;
    } else {
        bool neg = *p == '-';
        const char *q = p + neg;
        uint64_t v = 0;
        if (q[0] == '0' && q[1] == 'x' && g_ascii_isxdigit(q[2])) {
            char *e;
            v = g_ascii_strtoull(q + 2, &e, 16);
            q = e;
        } else if (!read_u64(&q, &v)) {
            *expected = "a return value (a number or ?)";
            return false;
        }
        l->ret_known = true;
        l->ret = neg ? -(int64_t)v : (int64_t)v;
        p = q;
        if (*p == '<') { /* -y: "= 3</etc/passwd>" */
            const char *gt = strchr(p, '>');
            p = gt ? gt + 1 : p;
        }
    }
    p = skip_blanks(p);
    if (p[0] == 'E' && g_ascii_isupper(p[1])) {
        const char *q = p;
        while (is_sym(*q))
            q++;
        l->err = (StraceText){p, (size_t)(q - p)};
    }
    return true;
}

static bool parse_exit_line(const char *p, StraceLine *l, const char **expected)
{
    uint64_t v;
    if (starts(p, "exited with ")) {
        p += strlen("exited with ");
        bool neg = *p == '-';
        p += neg;
        if (!read_u64(&p, &v) || v > INT32_MAX || strcmp(p, " +++") != 0) {
            *expected = "'+++ exited with N +++'";
            return false;
        }
        l->kind = STRACE_EXITED;
        l->status = neg ? -(int32_t)v : (int32_t)v;
        return true;
    }
    if (starts(p, "killed by ")) {
        p += strlen("killed by ");
        const char *n = p;
        while (is_sym(*p))
            p++;
        l->name = (StraceText){n, (size_t)(p - n)};
        l->core = starts(p, " (core dumped)");
        p += l->core ? strlen(" (core dumped)") : 0;
        if (l->name.len < 4 || !starts(n, "SIG") || strcmp(p, " +++") != 0) {
            *expected = "'+++ killed by SIGNAME [(core dumped)] +++'";
            return false;
        }
        l->kind = STRACE_KILLED;
        return true;
    }
    if (starts(p, "superseded by execve")) {
        l->kind = STRACE_NOTE;
        return true;
    }
    *expected = "'exited with N' or 'killed by SIGNAME' after '+++'";
    return false;
}

static bool parse_signal_line(const char *p, StraceLine *l, const char **expected)
{
    size_t n = strlen(p);
    if (n < 4 || strcmp(p + n - 4, " ---") != 0) {
        *expected = "' ---' ending the signal line";
        return false;
    }
    if (!starts(p, "SIG")) {
        l->kind = STRACE_NOTE; /* "--- stopped by SIGSTOP ---" */
        return true;
    }
    const char *q = p;
    while (is_sym(*q))
        q++;
    l->kind = STRACE_SIGNAL;
    l->name = (StraceText){p, (size_t)(q - p)};
    return true;
}

/* name(args...: complete, unfinished or detached. */
static bool parse_call(const char *p, StraceLine *l, const char **expected, const char **at)
{
    const char *n = p;
    while (is_sym(*p))
        p++;
    *at = p;
    if (p == n || *p != '(') {
        *expected = "a syscall 'name(', '<... name resumed>', '--- SIG' or '+++'";
        *at = n;
        return false;
    }
    l->name = (StraceText){n, (size_t)(p - n)};
    const char *args = p + 1, *end = p + strlen(p);
    if (g_str_has_suffix(args, UNFINISHED_MARK) || g_str_has_suffix(args, DETACHED_MARK)) {
        bool unf = g_str_has_suffix(args, UNFINISHED_MARK);
        l->kind = unf ? STRACE_UNFINISHED : STRACE_DETACHED;
        l->args = trimmed(args, end - strlen(unf ? UNFINISHED_MARK : DETACHED_MARK));
        return true;
    }
    const char *close = scan_close(args);
    if (!close) {
        *expected = "')' closing the arguments (truncated line?)";
        *at = end;
        return false;
    }
    l->kind = STRACE_CALL;
    l->args = trimmed(args, close);
    return parse_result(close + 1, l, expected, at);
}

static bool parse_resumed(const char *p, StraceLine *l, const char **expected, const char **at)
{
    const char *n = p;
    while (is_sym(*p))
        p++;
    *at = p;
    if (p == n || !starts(p, " resumed>")) {
        *expected = "'<... NAME resumed>'";
        return false;
    }
    l->name = (StraceText){n, (size_t)(p - n)};
    p += strlen(" resumed>");
    const char *close = scan_close(p);
    if (!close) {
        *expected = "')' closing the resumed arguments (truncated line?)";
        *at = p + strlen(p);
        return false;
    }
    l->kind = STRACE_RESUMED;
    l->args = trimmed(p, close);
    return parse_result(close + 1, l, expected, at);
}

static bool parse_prefix(const char **pp, StraceLine *l, const char **expected)
{
    const char *p = skip_blanks(*pp);
    uint64_t v;
    if (starts(p, "[pid")) {
        p = skip_blanks(p + 4);
        if (!read_u64(&p, &v) || v > UINT32_MAX || *p != ']') {
            *expected = "'[pid N]'";
            *pp = p;
            return false;
        }
        l->has_pid = true;
        l->pid = (uint32_t)v;
        p++;
    } else if (g_ascii_isdigit(*p)) {
        const char *q = p;
        if (read_u64(&q, &v) && (*q == ' ' || *q == '\t') && v <= UINT32_MAX) {
            l->has_pid = true;
            l->pid = (uint32_t)v;
            p = q;
        }
    }
    p = skip_blanks(p);
    if (g_ascii_isdigit(*p) && !read_timestamp(&p, l)) {
        *expected = "a timestamp (HH:MM:SS[.frac], seconds.frac) followed by a blank";
        *pp = p;
        return false;
    }
    p = skip_blanks(p);
    if (p[0] == '[' && g_ascii_isxdigit(p[1])) { /* -i */
        const char *q = strchr(p, ']');
        if (q)
            p = skip_blanks(q + 1);
    }
    *pp = p;
    return true;
}

bool strace_parse_line(const char *line, StraceLine *l, const char **expected, size_t *col)
{
    memset(l, 0, sizeof *l);
    const char *p = line, *at = line;
    bool ok;
    if (!parse_prefix(&p, l, expected)) {
        *col = (size_t)(p - line);
        return false;
    }
    at = p;
    if (starts(p, "--- "))
        ok = parse_signal_line(p + 4, l, expected);
    else if (starts(p, "+++ "))
        ok = parse_exit_line(p + 4, l, expected);
    else if (starts(p, "<... "))
        ok = parse_resumed(p + 5, l, expected, &at);
    else if (starts(p, "[ Process PID=") || starts(p, "strace: ")) {
        l->kind = STRACE_NOTE;
        ok = true;
    } else
        ok = parse_call(p, l, expected, &at);
    *col = (size_t)(at - line);
    return ok;
}

/* ---------------- arguments ---------------- */

unsigned strace_split_args(StraceText args, StraceText *out, unsigned max)
{
    const char *p = args.p, *end = args.p + args.len, *start = p;
    unsigned n = 0;
    int depth = 0;
    if (trimmed(p, end).len == 0)
        return 0;
    while (p < end) {
        if (*p == '"') {
            for (p++; p < end && *p != '"'; p++)
                if (*p == '\\' && p + 1 < end)
                    p++;
        } else if (p + 1 < end && p[0] == '/' && p[1] == '*') {
            const char *e = g_strstr_len(p + 2, end - p - 2, "*/");
            p = e ? e + 1 : end - 1;
        } else if (*p == '(' || *p == '[' || *p == '{') {
            depth++;
        } else if (*p == ')' || *p == ']' || *p == '}') {
            depth--;
        } else if (*p == ',' && depth == 0) {
            if (n < max)
                out[n] = trimmed(start, p);
            n++;
            start = p + 1;
        }
        p++;
    }
    if (n < max)
        out[n] = trimmed(start, end);
    return n + 1;
}

static bool int_value(const char *p, const char *end, int64_t *v)
{
    bool neg = p < end && *p == '-';
    p += neg;
    if (p >= end)
        return false;
    unsigned base = 10;
    if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (end - p > 1 && p[0] == '0')
        base = 8, p++;
    uint64_t x = 0;
    for (; p < end; p++) {
        int d = g_ascii_xdigit_value(*p);
        if (d < 0 || (unsigned)d >= base || x > (UINT64_MAX - (unsigned)d) / base)
            return *p == '<' && base == 10 && !neg ? (*v = (int64_t)x, true) : false;
        x = x * base + (unsigned)d;
    }
    *v = neg ? -(int64_t)x : (int64_t)x;
    return true;
}

bool strace_arg_int(StraceText a, int64_t *v)
{
    const char *p = a.p, *end = a.p + a.len;
    if (a.len == 4 && memcmp(p, "NULL", 4) == 0) {
        *v = 0;
        return true;
    }
    if (a.len == 8 && memcmp(p, "AT_FDCWD", 8) == 0) {
        *v = -100;
        return true;
    }
    if (a.len >= 2 && p[0] == '[' && end[-1] == ']') {
        const char *arrow = g_strstr_len(p, (gssize)a.len, "=>");
        StraceText in = trimmed(arrow ? arrow + 2 : p + 1, end - 1);
        return in.len && int_value(in.p, in.p + in.len, v);
    }
    return int_value(p, end, v);
}

bool strace_arg_nonnull(StraceText a)
{
    return !(a.len == 4 && memcmp(a.p, "NULL", 4) == 0) && !(a.len == 1 && a.p[0] == '0');
}

/* Decodes a quoted string into out (may be NULL: count only). */
static bool decode(StraceText a, GString *out, size_t *len, bool *truncated)
{
    const char *p = a.p, *end = a.p + a.len;
    static const char simple[] = "ntrvfab\\\"'", value[] = "\n\t\r\v\f\a\b\\\"'";
    size_t n = 0;
    if (a.len < 2 || *p != '"')
        return false;
    for (p++; p < end && *p != '"'; n++) {
        char c = *p++;
        if (c == '\\' && p < end) {
            const char *s = strchr(simple, *p);
            if (*p && s) {
                c = value[s - simple];
                p++;
            } else if (*p == 'x' && p + 2 < end && g_ascii_isxdigit(p[1]) &&
                       g_ascii_isxdigit(p[2])) {
                c = (char)(g_ascii_xdigit_value(p[1]) * 16 + g_ascii_xdigit_value(p[2]));
                p += 3;
            } else {
                unsigned o = 0;
                for (int k = 0; k < 3 && p < end && *p >= '0' && *p <= '7'; k++)
                    o = o * 8 + (unsigned)(*p++ - '0');
                c = (char)o;
            }
        }
        if (out)
            g_string_append_c(out, c);
    }
    if (p >= end)
        return false;
    p++;
    *truncated = end - p >= 3 && memcmp(p, "...", 3) == 0;
    *len = n;
    return true;
}

bool strace_arg_strlen(StraceText a, size_t *len, bool *truncated)
{
    return decode(a, NULL, len, truncated);
}

char *strace_arg_unquote(StraceText a, bool *truncated)
{
    GString *s = g_string_new(NULL);
    size_t len;
    if (!decode(a, s, &len, truncated)) {
        g_string_free(s, TRUE);
        return NULL;
    }
    return g_string_free(s, FALSE);
}

bool strace_text_has_symbol(StraceText a, const char *flag)
{
    size_t fl = strlen(flag);
    const char *p = a.p, *end = a.p + a.len;
    while (p + fl <= end) {
        const char *hit = g_strstr_len(p, end - p, flag);
        if (!hit)
            return false;
        bool left = hit == a.p || !is_sym(hit[-1]);
        bool right = hit + fl == end || !is_sym(hit[fl]);
        if (left && right)
            return true;
        p = hit + 1;
    }
    return false;
}
