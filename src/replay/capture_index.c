/* The capture importer's output sink and its index pass over each stream
 * (capture_priv.h). */
#include "replay/capture_priv.h"

#include "replay/capture_stream.h"
#include "replay/trace.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* Output: text lines, through zlib when the name ends in .gz.          */

bool out_open(Out *o, const char *path, GError **err)
{
    memset(o, 0, sizeof *o);
    o->name = g_strdup(strcmp(path, "-") == 0 ? "<stdout>" : path);
    o->buf = g_string_sized_new(1 << 20);
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
    } else if (g_str_has_suffix(path, ".gz")) {
        o->gz = gzopen(path, "wb6");
    } else {
        o->fp = fopen(path, "wb");
    }
    if (!o->fp && !o->gz) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot create: %s", path,
                    g_strerror(errno));
        g_string_free(o->buf, TRUE);
        g_free(o->name);
        return false;
    }
    return true;
}

void out_flush(Out *o)
{
    if (o->buf->len == 0 || o->failed)
        return;
    if (o->gz) {
        if (gzwrite(o->gz, o->buf->str, (unsigned)o->buf->len) != (int)o->buf->len)
            o->failed = true, o->errnum = errno;
    } else if (fwrite(o->buf->str, 1, o->buf->len, o->fp) != o->buf->len) {
        o->failed = true, o->errnum = errno;
    }
    g_string_truncate(o->buf, 0);
}

bool out_close(Out *o, GError **err)
{
    out_flush(o);
    if (o->gz) {
        if (gzclose(o->gz) != Z_OK && !o->failed)
            o->failed = true, o->errnum = errno;
    } else if (o->fp == stdout) {
        if (fflush(stdout) != 0 && !o->failed)
            o->failed = true, o->errnum = errno;
    } else if (fclose(o->fp) != 0 && !o->failed) {
        o->failed = true, o->errnum = errno;
    }
    bool ok = !o->failed;
    if (!ok)
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s: write failed: %s", o->name,
                    g_strerror(o->errnum ? o->errnum : EIO));
    g_string_free(o->buf, TRUE);
    g_free(o->name);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Index pass: one image (stream) at a time.                           */


void capture_image_free(Image *im)
{
    g_free(im->path);
    g_free(im->exe);
    g_free(im->cmd);
    if (im->sys)
        g_array_free(im->sys, TRUE);
    g_free(im);
}

bool capture_image_index(Image *im, GError **err)
{
    CaptureStream *s = capture_stream_open(im->path, err);
    if (!s)
        return false;
    CaptureRec rec;
    GHashTable *open_sys = g_hash_table_new(g_direct_hash, g_direct_equal); /* tid -> index+1 */
    uint64_t sum_n = 0, runs = 0;
    bool first = true, ok = true;
    im->sys = g_array_new(FALSE, TRUE, sizeof(CaptureSys));
    while (capture_stream_next(s, &rec, err)) {
        if (first && rec.kind != CAP_REC_PROC) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                        "%s: byte %" G_GUINT64_FORMAT ": expected the process record first",
                        im->path, capture_stream_offset(s));
            ok = false;
            break;
        }
        first = false;
        if (im->has_end) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                        "%s: byte %" G_GUINT64_FORMAT ": a record after the end record", im->path,
                        capture_stream_offset(s));
            ok = false;
            break;
        }
        switch ((CaptureRecKind)rec.kind) {
        case CAP_REC_PROC:
            im->pid = rec.u.proc.pid;
            im->ppid = rec.u.proc.ppid;
            im->t_start = rec.u.proc.t_ns;
            im->exe = g_strdup(rec.u.proc.exe);
            im->cmd = g_strdup(rec.u.proc.cmd);
            break;
        case CAP_REC_SYS_PRE: {
            CaptureSys cs = {0};
            cs.tid = rec.u.pre.tid;
            cs.nr = rec.u.pre.nr;
            cs.t_entry = rec.u.pre.t_ns;
            memcpy(cs.regs.args, rec.u.pre.args, sizeof cs.regs.args);
            memcpy(cs.regs.strlen, rec.u.pre.strlen, sizeof cs.regs.strlen);
            g_array_append_val(im->sys, cs);
            g_hash_table_insert(open_sys, GUINT_TO_POINTER(cs.tid), GUINT_TO_POINTER(im->sys->len));
            if (cs.nr == X64_EXIT_GROUP || cs.nr == X64_EXIT)
                im->has_exit = true;
            break;
        }
        case CAP_REC_SYS_POST: {
            guint k = GPOINTER_TO_UINT(g_hash_table_lookup(open_sys, GUINT_TO_POINTER(rec.u.post.tid)));
            /* An exit without its entry: the child's side of the fork
             * that created this image. */
            if (k == 0)
                break;
            CaptureSys *cs = &g_array_index(im->sys, CaptureSys, k - 1);
            g_hash_table_remove(open_sys, GUINT_TO_POINTER(rec.u.post.tid));
            if (cs->nr != rec.u.post.nr) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                            "%s: byte %" G_GUINT64_FORMAT ": exit of syscall %u for an entry of %u",
                            im->path, capture_stream_offset(s), rec.u.post.nr, cs->nr);
                ok = false;
                break;
            }
            cs->has_exit = true;
            cs->t_exit = rec.u.post.t_ns;
            cs->regs.ret = rec.u.post.res;
            if (cs->nr == X64_BRK && rec.u.post.res > 0) {
                uint64_t b = (uint64_t)rec.u.post.res;
                if (im->brk_min == 0 || b < im->brk_min)
                    im->brk_min = b;
                im->brk_max = MAX(im->brk_max, b);
            }
            break;
        }
        case CAP_REC_END:
            im->has_end = true;
            im->raw_refs = rec.u.end.raw_refs;
            im->runs = rec.u.end.runs;
            break;
        case CAP_REC_RUN:
            sum_n += rec.u.run.n;
            runs++;
            break;
        default:
            break;
        }
        if (!ok)
            break;
    }
    if (ok && err && *err)
        ok = false;
    if (ok && first) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE, "%s: an empty stream (no process record)",
                    im->path);
        ok = false;
    }
    if (ok && !im->has_end) {
        const CaptureSys *last = im->sys->len ? &g_array_index(im->sys, CaptureSys, im->sys->len - 1) : NULL;
        im->ends_in_exec = last && !last->has_exit && (last->nr == X64_EXECVE || last->nr == X64_EXECVEAT);
        im->raw_refs = sum_n;
        im->runs = runs;
        if (!im->ends_in_exec) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                        "%s: the stream stops without its end record after %" G_GUINT64_FORMAT
                        " runs (the process or Valgrind was killed, or the disk filled): the "
                        "capture is incomplete", im->path, runs);
            ok = false;
        }
    }
    if (ok && im->has_end && (sum_n != im->raw_refs || runs != im->runs)) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s: the end record counts %" G_GUINT64_FORMAT " references in %" G_GUINT64_FORMAT
                    " runs, the stream holds %" G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT " (damaged)",
                    im->path, im->raw_refs, im->runs, sum_n, runs);
        ok = false;
    }
    g_hash_table_destroy(open_sys);
    capture_stream_close(s);
    return ok;
}

static gint image_cmp(gconstpointer a, gconstpointer b)
{
    const Image *x = *(Image *const *)a, *y = *(Image *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

GPtrArray *capture_images_list(const char *dir, time_t *oldest, GError **err)
{
    GDir *d = g_dir_open(dir, 0, err);
    if (!d) {
        g_prefix_error(err, "capture directory: ");
        return NULL;
    }
    GPtrArray *ims = g_ptr_array_new_with_free_func((GDestroyNotify)capture_image_free);
    const char *name;
    *oldest = 0;
    while ((name = g_dir_read_name(d))) {
        unsigned pid, seq;
        char tail;
        if (sscanf(name, "vmcap.%u.%u%c", &pid, &seq, &tail) != 2)
            continue;
        Image *im = g_new0(Image, 1);
        im->path = g_build_filename(dir, name, NULL);
        im->pid = pid;
        im->seq = seq;
        struct stat sb;
        if (stat(im->path, &sb) == 0 && (*oldest == 0 || sb.st_mtime < *oldest))
            *oldest = sb.st_mtime;
        g_ptr_array_add(ims, im);
    }
    g_dir_close(d);
    if (ims->len == 0) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO,
                    "%s: no vmcap.PID.SEQ streams (was the program run under "
                    "valgrind --tool=vmcap --out-dir=%s?)", dir, dir);
        g_ptr_array_free(ims, TRUE);
        return NULL;
    }
    g_ptr_array_sort(ims, image_cmp);
    return ims;
}

