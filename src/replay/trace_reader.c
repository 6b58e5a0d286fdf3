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
    if (strcmp(line + plen + 1, "1") != 0) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VERSION,
                    "%s:1: trace format version '%.20s' (this vmsplit reads version %d)",
                    linereader_path(r->lines), line + plen + 1, TRACE_FORMAT_VERSION);
        return false;
    }
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

bool trace_reader_next(TraceReader *r, TraceEvent *ev, GError **err)
{
    char *line;
    uint64_t no;
    size_t len;
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
    bool ok = parse_line(r, line, len, no, ev, err) && check_running(r, ev, no, err);
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
    g_free(r->pending);
    g_free(r);
}
