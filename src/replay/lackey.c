/* Lackey trace parser. Hand-written hex parsing: this is the inner loop of
 * `vmsplit tlbsim`, which aims at tens of millions of references a second. */
#include "replay/lackey.h"
#include "replay/linereader.h"

#include <gio/gio.h>
#include <string.h>

struct LackeyReader {
    LineReader *lr;
    bool skip_bad;
    uint64_t messages, bad, first_bad;
    char first_bad_text[81];
};

LackeyReader *lackey_open(const char *path, bool skip_bad, GError **err)
{
    LineReader *lr = linereader_open(path, err);
    if (!lr)
        return NULL;
    LackeyReader *r = g_new0(LackeyReader, 1);
    r->lr = lr;
    r->skip_bad = skip_bad;
    return r;
}

void lackey_close(LackeyReader *r)
{
    if (!r)
        return;
    linereader_close(r->lr);
    g_free(r);
}

/* Hex digit value + 1, 0 for anything else: one load per character
 * instead of three range tests (parsing was a quarter of tlbsim's time). */
static const uint8_t hexval_tab[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
    ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static inline int hexval(char c)
{
    return (int)hexval_tab[(unsigned char)c] - 1;
}

/* "ADDR,SIZE" with ADDR hex (at most 16 digits) and SIZE decimal > 0. */
static bool parse_ref(const char *p, LackeyRef *ref)
{
    uint64_t a = 0;
    int nd = 0, v;
    while ((v = hexval(*p)) >= 0) {
        if (++nd > 16)
            return false;
        a = a << 4 | (uint64_t)v;
        p++;
    }
    if (nd == 0 || *p++ != ',')
        return false;
    uint32_t s = 0;
    int ns = 0;
    while (*p >= '0' && *p <= '9') {
        if (++ns > 6)
            return false;
        s = s * 10 + (uint32_t)(*p++ - '0');
    }
    while (*p == ' ')
        p++;
    if (ns == 0 || s == 0 || *p != '\0')
        return false;
    ref->addr = a;
    ref->size = s;
    return true;
}

static bool parse_line(const char *s, LackeyRef *ref)
{
    if (s[0] == 'I' && s[1] == ' ' && s[2] == ' ') {
        ref->kind = LACKEY_I;
        return parse_ref(s + 3, ref);
    }
    if (s[0] == ' ' && (s[1] == 'L' || s[1] == 'S' || s[1] == 'M') && s[2] == ' ') {
        ref->kind = (LackeyKind)s[1];
        return parse_ref(s + 3, ref);
    }
    return false;
}

int lackey_next(LackeyReader *r, LackeyRef *ref, GError **err)
{
    char *s;
    size_t n;
    GError *e = NULL;
    while (linereader_next(r->lr, &s, &n, &e)) {
        if (parse_line(s, ref))
            return 1;
        if (s[0] == '=' && s[1] == '=') {
            r->messages++;
            continue;
        }
        uint64_t ln = linereader_lineno(r->lr);
        if (!r->skip_bad) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "%s:%" G_GUINT64_FORMAT ": expected a Lackey reference "
                        "'I  ADDR,SIZE' or ' L|S|M ADDR,SIZE' (hex address, decimal size), "
                        "got '%.60s'",
                        linereader_path(r->lr), ln, s);
            return -1;
        }
        if (r->bad++ == 0) {
            r->first_bad = ln;
            g_strlcpy(r->first_bad_text, s, sizeof r->first_bad_text);
        }
    }
    if (e) {
        g_propagate_error(err, e);
        return -1;
    }
    return 0;
}

uint64_t lackey_lines(const LackeyReader *r) { return linereader_lineno(r->lr); }
uint64_t lackey_skipped_messages(const LackeyReader *r) { return r->messages; }
uint64_t lackey_bad_lines(const LackeyReader *r) { return r->bad; }
uint64_t lackey_first_bad_line(const LackeyReader *r, const char **text)
{
    if (text)
        *text = r->first_bad_text;
    return r->first_bad;
}
