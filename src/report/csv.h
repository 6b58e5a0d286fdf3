/* CSV as vmsplit writes and reads it (RFC 4180; it reads '#' comment lines):
 *
 *   layout,ram_mib,mem_total_kb,...        <- header: column names
 *   3g1g,1024,1031528,...                  <- one record per line
 *
 * Fields holding ',', '"', '\r' or '\n' (or leading/trailing blanks) are
 * quoted, with '"' doubled inside. vmsplit writes no comment lines, but
 * reads them: lines starting with '#' outside a quoted field are comments;
 * the ones before the header are kept (sweep CSVs of earlier versions
 * recorded their definition in line 1; sweep.h), others are skipped. Empty
 * lines are skipped.
 *
 * Reading is strict: every record must have as many fields as the header;
 * an error names the file and the line and says what was expected. A file
 * cut in the middle of its last record (a sweep killed while writing) is a
 * "torn" file: an error, unless the caller asks to accept it, in which case
 * the partial record is dropped and its offset reported so that the caller
 * can truncate the file there. */
#ifndef VMSPLIT_REPORT_CSV_H
#define VMSPLIT_REPORT_CSV_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* Errors of src/report (CSV, sweeps, merge, plot): all bad input or a
 * failed external tool; the CLI maps every one of them to exit status 2. */
#define REPORT_ERROR (report_error_quark())
GQuark report_error_quark(void);
typedef enum {
    REPORT_ERROR_IO,        /* cannot open, read, write, rename */
    REPORT_ERROR_PARSE,     /* malformed CSV, bad option value */
    REPORT_ERROR_MISMATCH,  /* header / sweep definition differs */
    REPORT_ERROR_POINTS,    /* missing, doubled or foreign sweep points */
    REPORT_ERROR_RUN,       /* a sweep point's runner failed */
    REPORT_ERROR_TOOL,      /* gnuplot missing or failed */
} ReportError;

typedef struct {
    char *path;             /* as given, for messages */
    GPtrArray *comments;    /* char *: leading '#' lines, without the '#' */
    GPtrArray *header;      /* char *: column names */
    GPtrArray *rows;        /* GPtrArray of char * fields, header-sized */
    GArray *row_lines;      /* guint: line where each row starts */
    bool torn;              /* the file ended inside a record */
    gsize complete_len;     /* bytes up to the end of the last whole record */
} CsvTable;

typedef enum {
    CSV_READ_STRICT = 0,
    CSV_READ_ALLOW_TORN = 1 << 0,  /* drop a partial last record, set torn */
    CSV_READ_ALLOW_EMPTY = 1 << 1, /* a file with no header is an empty table */
} CsvReadFlags;

/* Read a whole file. NULL with err set (naming path:line) on bad input. */
CsvTable *csv_read_file(const char *path, CsvReadFlags flags, GError **err);
/* The same on a buffer; path only names it in messages. */
CsvTable *csv_read_buffer(const char *path, const char *data, gsize len,
                          CsvReadFlags flags, GError **err);
void csv_table_free(CsvTable *t);

/* Index of a column, or -1. */
int csv_table_column(const CsvTable *t, const char *name);
/* Field of row r (0-based) in column c. */
const char *csv_table_get(const CsvTable *t, guint r, guint c);
/* Check that every name is a column; otherwise an error naming the file
 * and listing the missing ones. */
bool csv_table_require(const CsvTable *t, const char *const *names, GError **err);

/* Append fields as one record, quoted where needed, ending in '\n'. */
void csv_append_record(GString *out, const char *const *fields, size_t n);
/* Whether a field needs quoting. */
bool csv_field_needs_quotes(const char *s);

#endif
