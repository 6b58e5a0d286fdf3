/* Streaming line reader over a GInputStream, gzip-aware. See linereader.h. */
#include "replay/linereader.h"

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <string.h>
#include <unistd.h>

#define LR_CHUNK (256 * 1024)
#define LR_MAX_LINE (1024 * 1024)

struct LineReader {
    GInputStream *in;
    char *path;
    bool gzip;
    bool eof;
    char *buf;                   /* data in [start, end) not yet returned */
    size_t cap, start, end;
    uint64_t lineno;
};

static GInputStream *open_raw(const char *path, GError **err)
{
    if (!strcmp(path, "-"))
        return g_unix_input_stream_new(STDIN_FILENO, FALSE);
    GFile *f = g_file_new_for_path(path);
    GFileInputStream *s = g_file_read(f, NULL, err);
    g_object_unref(f);
    return s ? G_INPUT_STREAM(s) : NULL;
}

LineReader *linereader_open(const char *path, GError **err)
{
    GError *e = NULL;
    GInputStream *raw = open_raw(path, &e);
    if (!raw) {
        g_set_error(err, G_IO_ERROR, e->code, "%s: cannot open: %s", path, e->message);
        g_error_free(e);
        return NULL;
    }
    /* Peek at the first two bytes through a buffered stream so that the
     * gzip magic (1f 8b) can be detected on pipes too. */
    GInputStream *bin = g_buffered_input_stream_new_sized(raw, 64 * 1024);
    g_object_unref(raw);
    g_buffered_input_stream_fill(G_BUFFERED_INPUT_STREAM(bin), 2, NULL, NULL);
    gsize avail = 0;
    const guint8 *peek = g_buffered_input_stream_peek_buffer(G_BUFFERED_INPUT_STREAM(bin), &avail);
    LineReader *lr = g_new0(LineReader, 1);
    lr->path = g_strdup(strcmp(path, "-") ? path : "<stdin>");
    if (avail >= 2 && peek[0] == 0x1f && peek[1] == 0x8b) {
        GZlibDecompressor *dec = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
        lr->in = g_converter_input_stream_new(bin, G_CONVERTER(dec));
        g_object_unref(dec);
        g_object_unref(bin);
        lr->gzip = true;
    } else {
        lr->in = bin;
    }
    lr->cap = LR_CHUNK;
    lr->buf = g_malloc(lr->cap + 1);
    return lr;
}

void linereader_close(LineReader *lr)
{
    if (!lr)
        return;
    g_object_unref(lr->in);
    g_free(lr->buf);
    g_free(lr->path);
    g_free(lr);
}

/* Move unread data to the front and read more; grows the buffer only when
 * one line does not fit. Returns false on error. */
static bool refill(LineReader *lr, GError **err)
{
    size_t have = lr->end - lr->start;
    if (lr->start > 0) {
        memmove(lr->buf, lr->buf + lr->start, have);
        lr->start = 0;
        lr->end = have;
    }
    if (lr->end == lr->cap) {
        if (lr->cap >= LR_MAX_LINE) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "%s:%" G_GUINT64_FORMAT ": line longer than %d bytes",
                        lr->path, lr->lineno + 1, LR_MAX_LINE);
            return false;
        }
        lr->cap *= 2;
        lr->buf = g_realloc(lr->buf, lr->cap + 1);
    }
    GError *e = NULL;
    gssize n = g_input_stream_read(lr->in, lr->buf + lr->end, lr->cap - lr->end, NULL, &e);
    if (n < 0) {
        /* Bad input, exit status 2 in every command: not G_IO_ERROR_FAILED,
         * which the commands keep for faults of the simulated machine. */
        if (lr->gzip)
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "%s:%" G_GUINT64_FORMAT ": truncated or damaged gzip data (%s)",
                        lr->path, lr->lineno + 1, e->message);
        else
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "%s:%" G_GUINT64_FORMAT ": cannot read: %s", lr->path, lr->lineno + 1,
                        e->message);
        g_error_free(e);
        return false;
    }
    if (n == 0)
        lr->eof = true;
    lr->end += (size_t)n;
    return true;
}

bool linereader_next(LineReader *lr, char **line, size_t *len, GError **err)
{
    for (;;) {
        char *s = lr->buf + lr->start;
        size_t have = lr->end - lr->start;
        char *nl = have ? memchr(s, '\n', have) : NULL;
        if (nl || (lr->eof && have)) {
            size_t n = nl ? (size_t)(nl - s) : have;
            lr->start += nl ? n + 1 : n;
            if (n && s[n - 1] == '\r')
                n--;
            s[n] = '\0';     /* buf has one spare byte past cap for this */
            lr->lineno++;
            *line = s;
            *len = n;
            return true;
        }
        if (lr->eof)
            return false;
        if (!refill(lr, err))
            return false;
    }
}

uint64_t linereader_lineno(const LineReader *lr) { return lr->lineno; }
const char *linereader_path(const LineReader *lr) { return lr->path; }
bool linereader_is_gzip(const LineReader *lr) { return lr->gzip; }
