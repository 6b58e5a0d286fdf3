/* Reading a trace: the version line, the header, then one event per call.
 * Besides the grammar (trace.c) the reader checks the one rule that spans
 * lines: events belong to the running pid. The first event's pid runs; a
 * `switch` makes another pid run; after the running pid's `exit` nothing
 * runs until the next `switch`. A replay can therefore trust that every
 * context switch in the trace is an explicit event. */
#include "replay/linereader.h"
#include "replay/trace.h"

#include <string.h>

/* Events of lines read before, by their bytes: a host-speed shortcut for
 * traces whose lines repeat (a generated null-syscall trace is two lines
 * over and over). trace_parse_event is a function of the line alone (its
 * name and number only label errors; the names it interns stay valid),
 * so a line equal to one parsed before gives the same event. Only lines
 * that parsed are kept, short ones, one per slot by length and last byte.
 * The cross-line rule (check_running) is checked for every event. */
#define MEMO_SLOTS 8
#define MEMO_LINE 48

typedef struct {
    size_t len;                  /* 0: empty */
    char line[MEMO_LINE];
    TraceEvent ev;
} ParsedLine;

struct TraceReader {
    ParsedLine memo[MEMO_SLOTS];
    LineReader *lines;
    TraceHeader *header;
    char *pending;       /* first event line, read while scanning the header */
    uint64_t pending_lineno;
    int version;         /* 1 or 2 */
    /* The refs event being read (version 2): its lines still to come, the
     * instructions its `i` lines have still to account for, and where it
     * started (for messages). */
    uint32_t refs_left;
    uint64_t refs_insns_left;
    uint64_t refs_lineno;
    GArray *ref_lines;   /* uint64_t: line of each reference of the last chunk */
    bool running;        /* a pid runs */
    bool started;        /* an event was returned */
    uint32_t current;
};

static bool set_parse_error(GError **err, const TraceReader *r, uint64_t lineno,
                            const char *what)
{
    g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE, "%s:%" G_GUINT64_FORMAT ": %s",
                linereader_path(r->lines), lineno, what);
    return false;
}

/* Next line that is neither blank nor a comment; NULL at the end or on
 * error. Lines that cannot be used whole (cut, NUL bytes) are errors. */
static char *next_line(TraceReader *r, size_t *plen, GError **err)
{
    for (;;) {
        size_t len;
        char *line;
        if (!linereader_next(r->lines, &line, &len, err))
            return NULL;
        uint64_t no = linereader_lineno(r->lines);
        if (memchr(line, '\0', len)) {
            set_parse_error(err, r, no, "NUL byte in line (expected text)");
            return NULL;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '\0' && *p != '#') {
            *plen = len;
            return line;
        }
    }
}

static bool read_version(TraceReader *r, GError **err)
{
    size_t len;
    GError *e = NULL;
    char *line;
    if (!linereader_next(r->lines, &line, &len, &e)) {
        if (e)
            g_propagate_error(err, e);
        else
            set_parse_error(err, r, 1, "empty file (expected '" TRACE_VERSION_PREFIX " 1')");
        return false;
    }
    size_t plen = strlen(TRACE_VERSION_PREFIX);
    if (strncmp(line, TRACE_VERSION_PREFIX " ", plen + 1) != 0) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s:1: expected '" TRACE_VERSION_PREFIX " 1' as the first line, got '%.40s'",
                    linereader_path(r->lines), line);
        return false;
    }
    const char *v = line + plen + 1;
    if (strcmp(v, "1") != 0 && strcmp(v, "2") != 0) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VERSION,
                    "%s:1: trace format version '%.20s' (this vmsplit reads versions 1 and %d)",
                    linereader_path(r->lines), v, TRACE_FORMAT_VERSION);
        return false;
    }
    r->version = v[0] - '0';
    return true;
}

/* "@key value" lines up to the first event, which is kept in pending. */
static bool read_header(TraceReader *r, GError **err)
{
    GError *e = NULL;
    char *line;
    size_t len;
    while ((line = next_line(r, &len, &e)) != NULL) {
        if (*line != '@') {
            r->pending = g_strdup(line);
            r->pending_lineno = linereader_lineno(r->lines);
            return true;
        }
        char *sp = strchr(line, ' ');
        char *key = g_strndup(line + 1, sp ? (gsize)(sp - line - 1) : strlen(line + 1));
        bool ok = *key != '\0';
        for (const char *k = key; *k && ok; k++)
            ok = g_ascii_islower(*k) || g_ascii_isdigit(*k) || *k == '-';
        /* A CR inside the value (only a line's last one is its ending):
         * a header cannot hold it (trace_header_set), nor a writer write it. */
        bool cr = ok && sp && strchr(sp + 1, '\r');
        if (ok && !cr)
            trace_header_set(r->header, key, sp ? sp + 1 : "");
        g_free(key);
        if (!ok || cr)
            return set_parse_error(err, r, linereader_lineno(r->lines),
                                   cr ? "expected a header value without a carriage return"
                                      : "expected a header line '@key value' with a key of "
                                        "[a-z0-9-] characters");
    }
    if (e) {
        g_propagate_error(err, e);
        return false;
    }
    return true; /* a trace with a header and no events */
}

TraceReader *trace_reader_open(const char *path, GError **err)
{
    LineReader *lines = linereader_open(path, err);
    if (!lines)
        return NULL;
    TraceReader *r = g_new0(TraceReader, 1);
    r->lines = lines;
    r->header = trace_header_new();
    if (!read_version(r, err) || !read_header(r, err)) {
        trace_reader_close(r);
        return NULL;
    }
    return r;
}

const TraceHeader *trace_reader_header(const TraceReader *r) { return r->header; }
const char *trace_reader_name(const TraceReader *r) { return linereader_path(r->lines); }

uint64_t trace_reader_line(const TraceReader *r)
{
    return r->pending ? r->pending_lineno : linereader_lineno(r->lines);
}

/* The cross-line rule: only the running pid has events. */
static bool check_running(TraceReader *r, const TraceEvent *ev, uint64_t no, GError **err)
{
    if (ev->kind == TRACE_EV_SWITCH || !r->started) {
        r->running = true;
        r->current = ev->pid;
    } else if (!r->running || r->current != ev->pid) {
        char *msg = r->running
            ? g_strdup_printf("event for pid %u while pid %u runs (expected '%u switch' first)",
                              ev->pid, r->current, ev->pid)
            : g_strdup_printf("event for pid %u after the running pid exited (expected "
                              "'%u switch' first)", ev->pid, ev->pid);
        set_parse_error(err, r, no, msg);
        g_free(msg);
        return false;
    }
    r->started = true;
    if (ev->kind == TRACE_EV_EXIT)
        r->running = false;
    return true;
}

static ParsedLine *memo_slot(TraceReader *r, const char *line, size_t len)
{
    unsigned h = (unsigned)len * 7u + (unsigned char)line[len - 1];
    return &r->memo[h % MEMO_SLOTS];
}

/* The event of line (len bytes, at line no): from the memo when the same
 * bytes parsed before, else parsed (and kept if short). */
static bool parse_line(TraceReader *r, const char *line, size_t len, uint64_t no,
                       TraceEvent *ev, GError **err)
{
    ParsedLine *m = len ? memo_slot(r, line, len) : NULL;
    if (m && m->len == len && memcmp(m->line, line, len) == 0) {
        *ev = m->ev;
        return true;
    }
    if (!trace_parse_event(line, ev, linereader_path(r->lines), no, err))
        return false;
    if (m && len <= MEMO_LINE) {
        m->len = len;
        memcpy(m->line, line, len);
        m->ev = *ev;
    }
    return true;
}

/* Whether a line is a reference line (a kind letter and a blank), which
 * only a refs block may hold. */
static bool is_ref_line(const char *line)
{
    return (line[0] == 'i' || line[0] == 'r' || line[0] == 'w' || line[0] == 'm') &&
           (line[1] == ' ' || line[1] == '\t');
}

/* The next reference line of the block into *ref (its number in *no):
 * the fast path for a line in the writer's spelling, else the general
 * one (comments, blank lines, other spellings, and every error). */
static bool next_ref(TraceReader *r, TraceRef *ref, uint64_t *no, GError **err)
{
    size_t len;
    char *line;
    GError *e = NULL;
    if (!linereader_next(r->lines, &line, &len, &e)) {
        if (e) {
            g_propagate_error(err, e);
            return false;
        }
        line = NULL;
    }
    *no = linereader_lineno(r->lines);
    if (line && trace_parse_ref_fast(line, len, ref))
        return true;
    while (line) {                  /* comments and blank lines are allowed */
        if (memchr(line, '\0', len))
            return set_parse_error(err, r, *no, "NUL byte in line (expected text)");
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '\0' && *p != '#')
            break;
        if (!linereader_next(r->lines, &line, &len, &e)) {
            if (e) {
                g_propagate_error(err, e);
                return false;
            }
            line = NULL;
        }
        *no = linereader_lineno(r->lines);
    }
    if (!line || !is_ref_line(line)) {
        char *msg = g_strdup_printf(
            "expected %u more reference line(s) (i/r/w/m ADDR ...) of the refs event at "
            "line %" G_GUINT64_FORMAT ", got %s%.40s%s", r->refs_left, r->refs_lineno,
            line ? "'" : "the end of the file", line ? line : "", line ? "'" : "");
        set_parse_error(err, r, line ? *no : r->refs_lineno, msg);
        g_free(msg);
        return false;
    }
    return trace_parse_ref(line, ref, linereader_path(r->lines), *no, err);
}

bool trace_reader_refs(TraceReader *r, TraceRef *buf, size_t max, size_t *n, GError **err)
{
    size_t k = 0;
    if (!r->ref_lines)
        r->ref_lines = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    g_array_set_size(r->ref_lines, MIN(max, (size_t)r->refs_left));
    uint64_t *lines = (uint64_t *)(void *)r->ref_lines->data;
    while (k < max && r->refs_left) {
        TraceRef *ref = &buf[k];
        uint64_t no;
        if (!next_ref(r, ref, &no, err))
            return false;
        lines[k] = no;
        if (ref->kind == TRACE_REF_FETCH) {
            if (ref->n > r->refs_insns_left) {
                set_parse_error(err, r, no, "instruction counts of the i lines that add up to "
                                            "the refs event's INSNS (this one goes over)");
                return false;
            }
            r->refs_insns_left -= ref->n;
        }
        r->refs_left--;
        k++;
        if (!r->refs_left && r->refs_insns_left) {
            char *msg = g_strdup_printf("instruction counts of the i lines that add up to the "
                                        "refs event's INSNS (%" G_GUINT64_FORMAT " short)",
                                        r->refs_insns_left);
            set_parse_error(err, r, no, msg);
            g_free(msg);
            return false;
        }
    }
    *n = k;
    return true;
}

int trace_reader_version(const TraceReader *r) { return r->version; }

uint64_t trace_reader_ref_line(const TraceReader *r, size_t k)
{
    g_assert(r->ref_lines && k < r->ref_lines->len);
    return g_array_index(r->ref_lines, uint64_t, k);
}

/* The reference lines of the last refs event the caller did not read. */
static bool skip_refs(TraceReader *r, GError **err)
{
    TraceRef scratch[256];
    size_t n;
    do
        if (!trace_reader_refs(r, scratch, G_N_ELEMENTS(scratch), &n, err))
            return false;
    while (n);
    return true;
}

bool trace_reader_next(TraceReader *r, TraceEvent *ev, GError **err)
{
    char *line;
    uint64_t no;
    size_t len;
    if (r->refs_left && !skip_refs(r, err))
        return false;
    if (r->pending) {
        line = r->pending;
        no = r->pending_lineno;
        len = strlen(line);
    } else {
        GError *e = NULL;
        line = next_line(r, &len, &e);
        if (!line) {
            if (e)
                g_propagate_error(err, e);
            return false;
        }
        no = linereader_lineno(r->lines);
        if (*line == '@')
            return set_parse_error(err, r, no, "an event (header lines '@key value' must come "
                                               "before the first event)");
    }
    if (is_ref_line(line)) {
        set_parse_error(err, r, no, "an event: a reference line (i/r/w/m) comes only after a "
                                    "refs event, as many as it announces");
        g_free(r->pending);
        r->pending = NULL;
        return false;
    }
    bool ok = parse_line(r, line, len, no, ev, err) && check_running(r, ev, no, err);
    if (ok && ev->kind == TRACE_EV_REFS) {
        if (r->version < 2) {
            ok = set_parse_error(err, r, no, "an event of version 1 (a refs event needs "
                                             "'" TRACE_VERSION_PREFIX " 2')");
        } else {
            r->refs_left = ev->u.refs.nrefs;
            r->refs_insns_left = ev->u.refs.insns;
            r->refs_lineno = no;
        }
    }
    if (r->pending) {
        g_free(r->pending);
        r->pending = NULL;
    }
    return ok;
}

void trace_reader_close(TraceReader *r)
{
    if (!r)
        return;
    linereader_close(r->lines);
    trace_header_free(r->header);
    if (r->ref_lines)
        g_array_free(r->ref_lines, TRUE);
    g_free(r->pending);
    g_free(r);
}
