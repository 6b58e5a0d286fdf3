/* Decoding vmcap streams (tools/vmcap/vmcap_stream.h): a refilled buffer and
 * a cursor; every read checks that its bytes are there, so a cut stream is
 * an error at the record it cuts, never a short read. */
#include "replay/capture_stream.h"

#include "replay/trace.h"
#include "vmcap/vmcap_stream.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define BUF (1u << 20)
#define STR_MAX 65536

struct CaptureStream {
    FILE *fp;
    char *name;
    uint8_t *buf;
    size_t pos, len;   /* unread bytes are buf[pos..len) */
    uint64_t base;     /* file offset of buf[0] */
    uint64_t rec_off;  /* offset of the record being decoded */
    bool eof;
    char str[2][STR_MAX + 1];
    uint64_t last_i, last_d;
};

static void refill(CaptureStream *s)
{
    if (s->eof)
        return;
    memmove(s->buf, s->buf + s->pos, s->len - s->pos);
    s->base += s->pos;
    s->len -= s->pos;
    s->pos = 0;
    size_t n = fread(s->buf + s->len, 1, BUF - s->len, s->fp);
    s->len += n;
    if (n == 0)
        s->eof = true;
}

/* Makes n bytes available; false when the file ends first. */
static bool need(CaptureStream *s, size_t n)
{
    while (s->len - s->pos < n && !s->eof)
        refill(s);
    return s->len - s->pos >= n;
}

CaptureStream *capture_stream_open(const char *path, GError **err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
        return NULL;
    }
    CaptureStream *s = g_new0(CaptureStream, 1);
    s->fp = fp;
    s->name = g_strdup(path);
    s->buf = g_malloc(BUF);
    if (!need(s, VMCAP_MAGIC_LEN) || memcmp(s->buf, VMCAP_MAGIC, VMCAP_MAGIC_LEN) != 0) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s: not a vmcap stream (expected the magic bytes '%.7s')", path, VMCAP_MAGIC);
        capture_stream_close(s);
        return NULL;
    }
    s->pos = VMCAP_MAGIC_LEN;
    return s;
}

static bool cut(CaptureStream *s, const char *what, GError **err)
{
    g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                "%s: byte %" G_GUINT64_FORMAT ": the stream ends inside a %s record (cut short: "
                "the process or Valgrind was killed, or the disk filled)",
                s->name, s->rec_off, what);
    return false;
}

static uint64_t le(CaptureStream *s, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)s->buf[s->pos + i] << (8 * i);
    s->pos += bytes;
    return v;
}

/* A uleb128; false when cut or longer than 10 bytes. */
static bool uleb(CaptureStream *s, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (!need(s, 1))
            return false;
        uint8_t b = s->buf[s->pos++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            return true;
        }
    }
    return false;
}

static uint64_t unzigzag(uint64_t v) { return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1); }

static bool str(CaptureStream *s, int slot, const char **out)
{
    if (!need(s, 2))
        return false;
    size_t n = (size_t)le(s, 2);
    if (!need(s, n))
        return false;
    memcpy(s->str[slot], s->buf + s->pos, n);
    s->str[slot][n] = '\0';
    s->pos += n;
    *out = s->str[slot];
    return true;
}

static bool run_rec(CaptureStream *s, uint8_t tag, CaptureRec *rec, GError **err)
{
    uint64_t d, n = 1;
    rec->kind = CAP_REC_RUN;
    if (tag == VMCAP_TAG_INSN) {
        if (!uleb(s, &d) || !uleb(s, &n))
            return cut(s, "instruction run", err);
        s->last_i += unzigzag(d);
        rec->u.run.kind = CAP_RUN_INSN;
        rec->u.run.size = 0;
        rec->u.run.addr = s->last_i;
    } else {
        unsigned code = tag & 7, size = 1u << code;
        if (code == VMCAP_DATA_SZ_EXPLICIT) {
            if (!need(s, 1))
                return cut(s, "data run", err);
            size = (unsigned)le(s, 1);
        }
        if (!uleb(s, &d) || (!(tag & VMCAP_DATA_ONE) && !uleb(s, &n)))
            return cut(s, "data run", err);
        unsigned kind = (tag >> 5) & 3;
        if (kind > 2 || size == 0 || size > VMCAP_DATA_MAX) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                        "%s: byte %" G_GUINT64_FORMAT ": bad data run (kind %u, size %u)", s->name,
                        s->rec_off, kind, size);
            return false;
        }
        s->last_d += unzigzag(d);
        rec->u.run.kind = (uint8_t)(CAP_RUN_READ + kind);
        rec->u.run.size = (uint8_t)size;
        rec->u.run.addr = s->last_d;
    }
    if (n == 0 || n > UINT32_MAX) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s: byte %" G_GUINT64_FORMAT ": run count %" G_GUINT64_FORMAT
                    " (expected 1 to 4294967295)", s->name, s->rec_off, n);
        return false;
    }
    rec->u.run.n = n;
    return true;
}

bool capture_stream_next(CaptureStream *s, CaptureRec *rec, GError **err)
{
    if (!need(s, 1))
        return false; /* the end, between records */
    s->rec_off = s->base + s->pos;
    uint8_t tag = s->buf[s->pos++];
    if (tag == VMCAP_TAG_INSN || (tag & VMCAP_TAG_DATA))
        return run_rec(s, tag, rec, err);
    switch (tag) {
    case VMCAP_TAG_PROC:
        rec->kind = CAP_REC_PROC;
        if (!need(s, 16))
            return cut(s, "process", err);
        rec->u.proc.pid = (uint32_t)le(s, 4);
        rec->u.proc.ppid = (uint32_t)le(s, 4);
        rec->u.proc.t_ns = le(s, 8);
        if (!str(s, 0, &rec->u.proc.exe) || !str(s, 1, &rec->u.proc.cmd))
            return cut(s, "process", err);
        return true;
    case VMCAP_TAG_MAP:
        rec->kind = CAP_REC_MAP;
        if (!need(s, 18))
            return cut(s, "mapping", err);
        rec->u.map.start = le(s, 8);
        rec->u.map.len = le(s, 8);
        rec->u.map.prot = (uint8_t)le(s, 1);
        rec->u.map.flags = (uint8_t)le(s, 1);
        return true;
    case VMCAP_TAG_THREAD:
        rec->kind = CAP_REC_THREAD;
        if (!need(s, 4))
            return cut(s, "thread", err);
        rec->u.thread.tid = (uint32_t)le(s, 4);
        return true;
    case VMCAP_TAG_SYS_PRE: {
        rec->kind = CAP_REC_SYS_PRE;
        if (!need(s, 4 + 2 + 8 + 8 * CAP_NARGS + 1))
            return cut(s, "syscall entry", err);
        rec->u.pre.tid = (uint32_t)le(s, 4);
        rec->u.pre.nr = (uint16_t)le(s, 2);
        rec->u.pre.t_ns = le(s, 8);
        for (int i = 0; i < CAP_NARGS; i++) {
            rec->u.pre.args[i] = le(s, 8);
            rec->u.pre.strlen[i] = CAP_STRLEN_NONE;
        }
        unsigned nstr = (unsigned)le(s, 1);
        if (!need(s, nstr * 5))
            return cut(s, "syscall entry", err);
        for (unsigned i = 0; i < nstr; i++) {
            unsigned a = (unsigned)le(s, 1);
            uint32_t len = (uint32_t)le(s, 4);
            if (a < CAP_NARGS)
                rec->u.pre.strlen[a] = len;
        }
        return true;
    }
    case VMCAP_TAG_SYS_POST:
        rec->kind = CAP_REC_SYS_POST;
        if (!need(s, 4 + 2 + 8 + 8))
            return cut(s, "syscall exit", err);
        rec->u.post.tid = (uint32_t)le(s, 4);
        rec->u.post.nr = (uint16_t)le(s, 2);
        rec->u.post.t_ns = le(s, 8);
        rec->u.post.res = (int64_t)le(s, 8);
        return true;
    case VMCAP_TAG_EXECPATH:
        rec->kind = CAP_REC_EXECPATH;
        if (!str(s, 0, &rec->u.execpath.path))
            return cut(s, "exec path", err);
        return true;
    case VMCAP_TAG_SIGNAL:
        rec->kind = CAP_REC_SIGNAL;
        if (!need(s, 5))
            return cut(s, "signal", err);
        rec->u.signal.tid = (uint32_t)le(s, 4);
        rec->u.signal.signo = (uint8_t)le(s, 1);
        return true;
    case VMCAP_TAG_END:
        rec->kind = CAP_REC_END;
        if (!need(s, 24))
            return cut(s, "end", err);
        rec->u.end.t_ns = le(s, 8);
        rec->u.end.raw_refs = le(s, 8);
        rec->u.end.runs = le(s, 8);
        return true;
    default:
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s: byte %" G_GUINT64_FORMAT ": unknown record tag 0x%02x (a damaged stream, "
                    "or one from another version of the tool)", s->name, s->rec_off, tag);
        return false;
    }
}

uint64_t capture_stream_offset(const CaptureStream *s) { return s->rec_off; }
const char *capture_stream_name(const CaptureStream *s) { return s->name; }

void capture_stream_close(CaptureStream *s)
{
    if (!s)
        return;
    fclose(s->fp);
    g_free(s->buf);
    g_free(s->name);
    g_free(s);
}
