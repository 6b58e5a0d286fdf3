/* CSV reading and writing (see csv.h). The reader is a small state machine
 * over the whole buffer: sweep CSVs are at most a few megabytes, and having
 * the bytes at hand makes the "torn last record" offset exact. */
#include "report/csv.h"

#include <string.h>

G_DEFINE_QUARK(vmsplit-report-error-quark, report_error)

static void row_free(gpointer p)
{
    g_ptr_array_unref(p);
}

static CsvTable *table_new(const char *path)
{
    CsvTable *t = g_new0(CsvTable, 1);
    t->path = g_strdup(path);
    t->comments = g_ptr_array_new_with_free_func(g_free);
    t->header = NULL;
    t->rows = g_ptr_array_new_with_free_func(row_free);
    t->row_lines = g_array_new(FALSE, FALSE, sizeof(guint));
    return t;
}

void csv_table_free(CsvTable *t)
{
    if (!t)
        return;
    g_free(t->path);
    g_ptr_array_unref(t->comments);
    if (t->header)
        g_ptr_array_unref(t->header);
    g_ptr_array_unref(t->rows);
    g_array_unref(t->row_lines);
    g_free(t);
}

/* Parser state over one buffer. */
typedef struct {
    const char *path;
    const char *p, *end;
    guint line;          /* current line, 1-based */
} Scan;

/* Parse one field starting at s->p. On return s->p is at the separator
 * (',' / '\n' / "\r\n") or at the end. Returns false on a syntax error; sets
 * *unterminated when the buffer ends inside quotes. */
static bool scan_field(Scan *s, GString *f, bool *unterminated, GError **err)
{
    g_string_truncate(f, 0);
    if (s->p < s->end && *s->p == '"') {
        s->p++;
        for (;;) {
            if (s->p >= s->end) {
                *unterminated = true;
                return true;
            }
            char c = *s->p++;
            if (c == '"') {
                if (s->p < s->end && *s->p == '"') {
                    g_string_append_c(f, '"');
                    s->p++;
                    continue;
                }
                break;
            }
            if (c == '\n')
                s->line++;
            g_string_append_c(f, c);
        }
        if (s->p < s->end && *s->p != ',' && *s->p != '\n' &&
            !(*s->p == '\r' && s->p + 1 < s->end && s->p[1] == '\n')) {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s:%u: expected ',' or the end of the line after a "
                        "closing quote, found '%c'", s->path, s->line, *s->p);
            return false;
        }
        return true;
    }
    while (s->p < s->end && *s->p != ',' && *s->p != '\n') {
        if (*s->p == '\r' && s->p + 1 < s->end && s->p[1] == '\n')
            break;
        if (*s->p == '"') {
            g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                        "%s:%u: a '\"' inside an unquoted field (quote the "
                        "whole field and double the quote)", s->path, s->line);
            return false;
        }
        g_string_append_c(f, *s->p++);
    }
    return true;
}

/* Skip to just after the next '\n'; false if the buffer ends first. */
static bool skip_line(Scan *s, GString *text)
{
    const char *nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
    if (!nl)
        return false;
    if (text) {
        const char *e = nl;
        if (e > s->p && e[-1] == '\r')
            e--;
        g_string_assign(text, "");
        g_string_append_len(text, s->p, e - s->p);
    }
    s->p = nl + 1;
    s->line++;
    return true;
}

typedef enum { REC_OK, REC_COMMENT, REC_BLANK, REC_TORN, REC_ERROR } RecStatus;

/* One record (or a comment or a blank line) at s->p. */
static RecStatus scan_record(Scan *s, GPtrArray *fields, GString *comment, GError **err)
{
    if (*s->p == '#') {
        s->p++;
        return skip_line(s, comment) ? REC_COMMENT : REC_TORN;
    }
    if (*s->p == '\n' || (*s->p == '\r' && s->p + 1 < s->end && s->p[1] == '\n'))
        return skip_line(s, NULL) ? REC_BLANK : REC_TORN;
    GString *f = g_string_new(NULL);
    for (;;) {
        bool unterminated = false;
        if (!scan_field(s, f, &unterminated, err)) {
            g_string_free(f, TRUE);
            return REC_ERROR;
        }
        if (unterminated || s->p >= s->end) {
            g_string_free(f, TRUE);
            return REC_TORN;
        }
        g_ptr_array_add(fields, g_strdup(f->str));
        if (*s->p == ',') {
            s->p++;
            continue;
        }
        if (*s->p == '\r')
            s->p++;
        s->p++;  /* '\n' */
        s->line++;
        break;
    }
    g_string_free(f, TRUE);
    return REC_OK;
}

static bool header_check(CsvTable *t, guint line, GError **err)
{
    for (guint i = 0; i < t->header->len; i++)
        for (guint j = 0; j < i; j++)
            if (!strcmp(t->header->pdata[i], t->header->pdata[j])) {
                g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                            "%s:%u: column '%s' appears twice in the header",
                            t->path, line, (char *)t->header->pdata[i]);
                return false;
            }
    return true;
}

/* Add a parsed record as header or row. */
static bool table_take_record(CsvTable *t, GPtrArray *fields, guint line, GError **err)
{
    if (!t->header) {
        t->header = fields;
        return header_check(t, line, err);
    }
    if (fields->len != t->header->len) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "%s:%u: expected %u fields as in the header, found %u",
                    t->path, line, t->header->len, fields->len);
        g_ptr_array_unref(fields);
        return false;
    }
    g_ptr_array_add(t->rows, fields);
    g_array_append_val(t->row_lines, line);
    return true;
}

CsvTable *csv_read_buffer(const char *path, const char *data, gsize len,
                          CsvReadFlags flags, GError **err)
{
    CsvTable *t = table_new(path);
    Scan s = {path, data, data + len, 1};
    GString *comment = g_string_new(NULL);
    bool ok = true;
    while (ok && s.p < s.end) {
        guint start_line = s.line;
        GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
        RecStatus st = scan_record(&s, fields, comment, err);
        if (st == REC_OK) {
            ok = table_take_record(t, fields, start_line, err);
            t->complete_len = (gsize)(s.p - data);
            continue;
        }
        g_ptr_array_unref(fields);
        if (st == REC_ERROR) {
            ok = false;
        } else if (st == REC_TORN) {
            t->torn = true;
            if (!(flags & CSV_READ_ALLOW_TORN)) {
                g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                            "%s:%u: the last line is incomplete (no newline at "
                            "the end: was the file cut while being written?)",
                            path, start_line);
                ok = false;
            }
            break;
        } else {
            if (st == REC_COMMENT && !t->header)
                g_ptr_array_add(t->comments, g_strdup(comment->str));
            t->complete_len = (gsize)(s.p - data);
        }
    }
    g_string_free(comment, TRUE);
    if (ok && !t->header && !(flags & CSV_READ_ALLOW_EMPTY)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "%s:%u: expected a header line naming the columns, found "
                    "the end of the file", path, s.line);
        ok = false;
    }
    if (!ok) {
        csv_table_free(t);
        return NULL;
    }
    return t;
}

CsvTable *csv_read_file(const char *path, CsvReadFlags flags, GError **err)
{
    char *data = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &data, &len, &e)) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_IO, "%s", e->message);
        g_error_free(e);
        return NULL;
    }
    CsvTable *t = csv_read_buffer(path, data, len, flags, err);
    g_free(data);
    return t;
}

int csv_table_column(const CsvTable *t, const char *name)
{
    if (!t->header)
        return -1;
    for (guint i = 0; i < t->header->len; i++)
        if (!strcmp(t->header->pdata[i], name))
            return (int)i;
    return -1;
}

const char *csv_table_get(const CsvTable *t, guint r, guint c)
{
    g_assert(r < t->rows->len);
    GPtrArray *row = t->rows->pdata[r];
    g_assert(c < row->len);
    return row->pdata[c];
}

bool csv_table_require(const CsvTable *t, const char *const *names, GError **err)
{
    GString *missing = g_string_new(NULL);
    for (const char *const *n = names; *n; n++)
        if (csv_table_column(t, *n) < 0)
            g_string_append_printf(missing, "%s%s", missing->len ? ", " : "", *n);
    if (missing->len) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_MISMATCH,
                    "%s:%u: missing column(s) %s in the header", t->path,
                    1 + t->comments->len, missing->str);
        g_string_free(missing, TRUE);
        return false;
    }
    g_string_free(missing, TRUE);
    return true;
}

bool csv_field_needs_quotes(const char *s)
{
    if (!*s)
        return false;
    if (*s == ' ' || *s == '\t' || *s == '#' || s[strlen(s) - 1] == ' ' ||
        s[strlen(s) - 1] == '\t')
        return true;
    return strpbrk(s, ",\"\r\n") != NULL;
}

void csv_append_record(GString *out, const char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *f = fields[i] ? fields[i] : "";
        if (i)
            g_string_append_c(out, ',');
        /* A lone empty field would read back as a blank line. */
        if (!csv_field_needs_quotes(f) && !(n == 1 && !*f)) {
            g_string_append(out, f);
            continue;
        }
        g_string_append_c(out, '"');
        for (const char *p = f; *p; p++) {
            if (*p == '"')
                g_string_append_c(out, '"');
            g_string_append_c(out, *p);
        }
        g_string_append_c(out, '"');
    }
    g_string_append_c(out, '\n');
}
