/* Reading one stream of the vmcap Valgrind tool (tools/vmcap/): the records
 * of one process image, decoded one at a time (the format is specified in
 * tools/vmcap/vmcap_stream.h). Streams are read twice by the capture
 * importer (an index pass, then the conversion), so reading is streaming
 * and cheap: a 1 MiB buffer, no allocation per record.
 *
 * A stream that ends inside a record, or holds a tag this build does not
 * know, is an error naming the file and the byte offset. */
#ifndef VMSPLIT_REPLAY_CAPTURE_STREAM_H
#define VMSPLIT_REPLAY_CAPTURE_STREAM_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    CAP_REC_PROC,     /* the image started: pid, ppid, exe, command line */
    CAP_REC_MAP,      /* a mapping made at exec time */
    CAP_REC_THREAD,   /* the following references belong to thread tid */
    CAP_REC_SYS_PRE,  /* kernel entry */
    CAP_REC_SYS_POST, /* kernel exit */
    CAP_REC_EXECPATH, /* execve's path argument (before its SYS_PRE) */
    CAP_REC_END,      /* the image ended through Valgrind's shutdown */
    CAP_REC_RUN,      /* a merged run of references */
    CAP_REC_SIGNAL,   /* a signal delivered to a handler of thread tid */
} CaptureRecKind;

/* Run kinds, in the order of the trace's letters i, r, w, m. */
enum { CAP_RUN_INSN, CAP_RUN_READ, CAP_RUN_WRITE, CAP_RUN_MODIFY };

#define CAP_NARGS 6
#define CAP_STRLEN_NONE UINT32_MAX

typedef struct {
    uint8_t kind; /* CaptureRecKind */
    union {
        struct { uint32_t pid, ppid; uint64_t t_ns; const char *exe, *cmd; } proc;
        struct { uint64_t start, len; uint8_t prot, flags; } map;
        struct { uint32_t tid; } thread;
        struct {
            uint32_t tid;
            uint16_t nr;
            uint64_t t_ns;
            uint64_t args[CAP_NARGS];
            uint32_t strlen[CAP_NARGS]; /* of path arguments, else CAP_STRLEN_NONE */
        } pre;
        struct { uint32_t tid; uint16_t nr; uint64_t t_ns; int64_t res; } post;
        struct { const char *path; } execpath;
        struct { uint64_t t_ns, raw_refs, runs; } end;
        struct { uint64_t addr, n; uint8_t kind, size; } run; /* size 0 for instructions */
        struct { uint32_t tid; uint8_t signo; } signal;
    } u;
} CaptureRec;

typedef struct CaptureStream CaptureStream;

/* Opens a stream file and checks its magic bytes. */
CaptureStream *capture_stream_open(const char *path, GError **err);
/* The next record: true and *rec filled (strings stay valid until the next
 * call); false at the end (err unset) or on an error (err set). */
bool capture_stream_next(CaptureStream *s, CaptureRec *rec, GError **err);
/* Byte offset of the record last returned, for messages. */
uint64_t capture_stream_offset(const CaptureStream *s);
const char *capture_stream_name(const CaptureStream *s);
void capture_stream_close(CaptureStream *s);

#endif
