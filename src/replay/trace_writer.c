/* Writing a trace: canonical lines into a buffer, the buffer to a file or
 * standard output, through a GZlibCompressor when the path ends in ".gz".
 * The first I/O error is kept and reported by trace_writer_close(), so a
 * generator's inner loop stays a plain call. */
#include "replay/trace.h"

#include <errno.h>
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>

#define OUT_BUF (256u * 1024u)

struct TraceWriter {
    FILE *fp;
    bool close_fp;
    char *name;
    GConverter *gzip;     /* NULL for plain text */
    char *buf;            /* text waiting to be written (or compressed) */
    size_t used;
    char *zbuf;           /* compressed output */
    GError *error;        /* first failure */
    int version;
};

static void fail_io(TraceWriter *w, const char *what, int errnum)
{
    if (!w->error)
        g_set_error(&w->error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s: %s", w->name, what,
                    g_strerror(errnum));
}

static void put_raw(TraceWriter *w, const char *p, size_t n)
{
    if (w->error || n == 0)
        return;
    if (fwrite(p, 1, n, w->fp) != n)
        fail_io(w, "write failed", errno);
}

/* Pushes buf through the compressor (finishing the stream if at_end). */
static void compress(TraceWriter *w, bool at_end)
{
    size_t off = 0;
    if (!at_end && w->used == 0)
        return;
    for (;;) {
        gsize nread = 0, nwritten = 0;
        GError *e = NULL;
        GConverterResult res = g_converter_convert(
            w->gzip, w->buf + off, w->used - off, w->zbuf, OUT_BUF,
            at_end ? G_CONVERTER_INPUT_AT_END : G_CONVERTER_NO_FLAGS, &nread, &nwritten, &e);
        if (res == G_CONVERTER_ERROR) {
            if (!w->error)
                g_set_error(&w->error, TRACE_ERROR, TRACE_ERROR_IO, "%s: gzip: %s", w->name,
                            e->message);
            g_error_free(e);
            return;
        }
        off += nread;
        put_raw(w, w->zbuf, nwritten);
        if (res == G_CONVERTER_FINISHED || (!at_end && off == w->used) || w->error)
            return;
    }
}

static void flush_buf(TraceWriter *w)
{
    if (w->gzip)
        compress(w, false);
    else
        put_raw(w, w->buf, w->used);
    w->used = 0;
}

static void put_line(TraceWriter *w, const char *s, size_t n)
{
    if (w->used + n + 1 > OUT_BUF)
        flush_buf(w);
    g_assert(n + 1 <= OUT_BUF);
    memcpy(w->buf + w->used, s, n);
    w->used += n;
    w->buf[w->used++] = '\n';
}

TraceWriter *trace_writer_open(const char *path, const TraceHeader *h, GError **err)
{
    return trace_writer_open_version(path, h, 1, err);
}

TraceWriter *trace_writer_open_version(const char *path, const TraceHeader *h, int version,
                                       GError **err)
{
    g_return_val_if_fail(version >= 1 && version <= TRACE_FORMAT_VERSION, NULL);
    TraceWriter *w = g_new0(TraceWriter, 1);
    w->version = version;
    bool is_stdout = strcmp(path, "-") == 0;
    w->name = g_strdup(is_stdout ? "<stdout>" : path);
    w->fp = is_stdout ? stdout : fopen(path, "wb");
    if (!w->fp) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot create: %s", path,
                    g_strerror(errno));
        g_free(w->name);
        g_free(w);
        return NULL;
    }
    w->close_fp = !is_stdout;
    if (g_str_has_suffix(path, ".gz")) {
        w->gzip = G_CONVERTER(g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6));
        w->zbuf = g_malloc(OUT_BUF);
    }
    w->buf = g_malloc(OUT_BUF);
    char vline[32];
    int n = g_snprintf(vline, sizeof vline, "%s %d", TRACE_VERSION_PREFIX, w->version);
    put_line(w, vline, (size_t)n);
    for (guint i = 0; h && i < trace_header_size(h); i++) {
        const char *k, *v;
        trace_header_nth(h, i, &k, &v);
        char *line = *v ? g_strdup_printf("@%s %s", k, v) : g_strdup_printf("@%s", k);
        put_line(w, line, strlen(line));
        g_free(line);
    }
    return w;
}

void trace_writer_write_ref(TraceWriter *w, const TraceRef *ref)
{
    char line[64];
    g_assert(w->version >= 2);
    size_t n = trace_format_ref(ref, line);
    put_line(w, line, n);
}

void trace_writer_write(TraceWriter *w, const TraceEvent *ev)
{
    char line[TRACE_LINE_MAX];
    g_assert(ev->kind != TRACE_EV_REFS || w->version >= 2);
    size_t n = trace_format_event(ev, line);
    put_line(w, line, n);
}

void trace_writer_comment(TraceWriter *w, const char *text)
{
    g_return_if_fail(strpbrk(text, "\r\n") == NULL);
    char *line = g_strconcat("# ", text, NULL);
    put_line(w, line, strlen(line));
    g_free(line);
}

bool trace_writer_close(TraceWriter *w, GError **err)
{
    if (w->gzip)
        compress(w, true);
    else
        put_raw(w, w->buf, w->used);
    if (!w->error && fflush(w->fp) != 0)
        fail_io(w, "write failed", errno);
    if (w->close_fp && fclose(w->fp) != 0)
        fail_io(w, "close failed", errno);
    bool ok = w->error == NULL;
    if (!ok)
        g_propagate_error(err, w->error);
    if (w->gzip)
        g_object_unref(w->gzip);
    g_free(w->zbuf);
    g_free(w->buf);
    g_free(w->name);
    g_free(w);
    return ok;
}
