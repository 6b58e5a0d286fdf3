/* Internal to the capture importer (capture_import.c): the output sink,
 * and the index pass over one stream (capture_index.c). */
#ifndef VMSPLIT_REPLAY_CAPTURE_PRIV_H
#define VMSPLIT_REPLAY_CAPTURE_PRIV_H

#include "replay/capture_import.h"
#include "replay/capture_syscall.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <zlib.h>

/* Text lines to a file, through zlib when its name ends in .gz. Lines are
 * appended to buf; out_flush writes them out. */
typedef struct {
    FILE *fp;
    gzFile gz;
    GString *buf;
    char *name;
    bool failed;
    int errnum;
} Out;

bool out_open(Out *o, const char *path, GError **err);
void out_flush(Out *o);
static inline void out_maybe_flush(Out *o)
{
    if (o->buf->len >= (1u << 20))
        out_flush(o);
}
/* Flushes, closes; false with err set if any write failed. */
bool out_close(Out *o, GError **err);

/* One stream (a process image) as the index pass found it. */
struct Proc;
typedef struct {
    char *path;
    uint32_t pid, ppid;
    unsigned seq;
    uint64_t t_start;
    char *exe, *cmd;
    GArray *sys;        /* CaptureSys, in entry order */
    bool has_end, ends_in_exec, has_exit;
    uint64_t raw_refs, runs;
    uint64_t brk_min, brk_max; /* the breaks brk returned (0: none) */
    struct Proc *proc;
} Image;

/* The streams of dir (vmcap.PID.SEQ), sorted by pid then seq, not yet
 * indexed; *oldest: the oldest one's modification time. */
GPtrArray *capture_images_list(const char *dir, time_t *oldest, GError **err);
/* The index pass over one stream: syscalls paired, counts, breaks; checks
 * that the stream is whole. */
bool capture_image_index(Image *im, GError **err);
void capture_image_free(Image *im);

/* The version line and the header: provenance, folding, order, window,
 * extra keys, and the counts of reference lines (runs) and references
 * (raw) the file holds. */
void capture_write_header(Out *out, const CaptureImportOptions *o, const Image *root, uint64_t raw,
                          uint64_t runs, time_t oldest);

#endif
