/* The capture importer's output sink, the trace header and the index pass
 * over each stream (capture_priv.h). */
#include "replay/capture_priv.h"

#include "config.h"
#include "replay/capture_fold.h"
#include "replay/capture_import.h"
#include "replay/capture_stream.h"
#include "replay/trace.h"

#include <errno.h>
#include <inttypes.h>
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
            /* One image per stream (vmcap_stream.h): a second process
             * record is damage, not a new image (found fuzzing: its
             * strings replaced the first's, which leaked). */
            if (im->exe) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                            "%s: byte %" G_GUINT64_FORMAT ": a second process record (a "
                            "stream holds one process image, its record first)",
                            im->path, capture_stream_offset(s));
                ok = false;
                break;
            }
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


/* ------------------------------------------------------------------ */
/* Header and options.                                                 */

static void header_line(Out *out, const char *key, const char *value)
{
    char *v = g_strdup(value);
    g_strdelimit(v, "\r\n", ' ');
    g_string_append_printf(out->buf, "@%s %s\n", key, v);
    g_free(v);
}

void capture_write_header(Out *out, const CaptureImportOptions *o, const Image *root, uint64_t raw,
                          uint64_t runs, time_t oldest)
{
    g_string_append(out->buf, TRACE_VERSION_PREFIX " 2\n");
    header_line(out, "source", "capture");
    header_line(out, "command", o->command ? o->command : root->cmd);
    char *when = NULL;
    if (!o->captured) {
        GDateTime *dt = g_date_time_new_from_unix_utc(oldest);
        when = g_date_time_format_iso8601(dt);
        g_date_time_unref(dt);
    }
    header_line(out, "captured", o->captured ? o->captured : when);
    g_free(when);
    header_line(out, "host", o->host ? o->host : g_get_host_name());
    header_line(out, "tool", "vmsplit-cap " VMSPLIT_VERSION " (Valgrind tool vmcap, stream VMCAP01)");
    char buf[512];
    g_snprintf(buf, sizeof buf,
               "x86-64 -> i686: each mapping to one range of [0x%llx, 0x%llx), first fit in order "
               "of mapping; page offsets kept; %" PRIu64 " KiB below each stack for its growth",
               CAPTURE_FOLD_LOW, CAPTURE_FOLD_HIGH, o->stack_reserve / 1024);
    header_line(out, "fold", buf);
    g_snprintf(buf, sizeof buf,
               "one CPU: a process runs until a blocked syscall (may sleep, >= %" PRIu64
               " us), its exit, or a syscall after %" PRIu64 " user instructions while others wait",
               o->block_us, o->slice_insns);
    header_line(out, "order", buf);
    if (o->window || o->window_lines) {
        char *w = o->window_lines
                      ? g_strdup_printf("%s%sthe first %" PRIu64 " reference lines of the capture, to "
                                        "the next syscall (processes still running then have no exit)",
                                        o->window ? o->window : "", o->window ? "; " : "",
                                        o->window_lines)
                      : g_strdup(o->window);
        header_line(out, "window", w);
        g_free(w);
    }
    for (char **kv = o->header_extra; kv && *kv; kv++) {
        const char *eq = strchr(*kv, '=');
        g_assert(eq); /* checked by the caller */
        char *k = g_strndup(*kv, (gsize)(eq - *kv));
        header_line(out, k, eq + 1);
        g_free(k);
    }
    g_snprintf(buf, sizeof buf, "%" PRIu64, runs);
    header_line(out, "refs-merged", buf);
    g_snprintf(buf, sizeof buf, "%" PRIu64, raw);
    header_line(out, "refs-raw", buf);
}

void capture_import_options_init(CaptureImportOptions *o)
{
    memset(o, 0, sizeof *o);
    o->block_us = 100;
    o->slice_insns = 100000000;
    o->stack_reserve = 8u << 20;
}

void capture_import_stats_clear(CaptureImportStats *s)
{
    if (s->notes)
        g_string_free(s->notes, TRUE);
    memset(s, 0, sizeof *s);
}

