/* A fast, streaming line reader for the trace formats vmsplit reads (syscall
 * traces, Valgrind Lackey memory traces, strace logs): a file path or "-"
 * for stdin, gzip detected by its magic bytes and decompressed on the fly
 * (GIO's GZlibDecompressor). Memory stays flat whatever the input size: lines
 * are returned in place from a fixed buffer, valid until the next call.
 *
 * Every line carries its number so that errors can name it. */
#ifndef VMSPLIT_REPLAY_LINEREADER_H
#define VMSPLIT_REPLAY_LINEREADER_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct LineReader LineReader;

/* path "-" reads stdin. Errors (missing file, unreadable) name the path. */
LineReader *linereader_open(const char *path, GError **err);
void linereader_close(LineReader *lr);

/* Next line without its newline (and without a trailing '\r'), NUL
 * terminated, writable in place. Returns false at end of input (err unset)
 * or on a read or decompression error (err set, naming the file). A line
 * longer than the limit (1 MiB) is an error naming the line. */
bool linereader_next(LineReader *lr, char **line, size_t *len, GError **err);

uint64_t linereader_lineno(const LineReader *lr);   /* of the last line returned */
const char *linereader_path(const LineReader *lr);  /* "<stdin>" for "-" */
bool linereader_is_gzip(const LineReader *lr);

#endif
