/* vmcap capture streams (tools/vmcap/vmcap_stream.h) converted by
 * `vmsplit import-capture DIR` (capture_import_dir, src/replay/
 * capture_import.c, with capture_stream.c's decoder and capture_index.c).
 *
 * A capture is a directory of streams, one per process image, named
 * vmcap.PID.SEQ; the input is their concatenation: it is cut before every
 * occurrence of the stream magic "VMCAP01\n", and each part is written as
 * vmcap.PID.SEQ, PID read from its PROC record (the first record) if the
 * part has one, SEQ counting that pid's parts (an exec's new image). So a
 * real capture, concatenated, is a seed, and the fuzzer can cut, damage
 * and recombine processes. The converter's options vary with the input's
 * size: the signal written for a process that ended without an exit call
 * (none: an error), dropping references outside every mapping, a window of
 * a few reference lines.
 *
 * What a converted capture must be: a version-2 trace the reader accepts
 * whole (every event and reference line), holding what the converter's
 * statistics say it wrote (refs events, reference lines, the references
 * they stand for, syscalls). */
#include "fuzz.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/capture_import.h"
#include "replay/trace.h"
#include "vmcap/vmcap_stream.h"

static char *dir;

static void clear_dir(void)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, name, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
}

static void remove_dir(void)
{
    clear_dir();
    g_rmdir(dir);
}

/* Where the next stream starts at or after from (size if none). */
static size_t next_magic(const uint8_t *data, size_t size, size_t from)
{
    for (size_t i = from; i + VMCAP_MAGIC_LEN <= size; i++)
        if (!memcmp(data + i, VMCAP_MAGIC, VMCAP_MAGIC_LEN))
            return i;
    return size;
}

static void write_streams(const uint8_t *data, size_t size)
{
    GHashTable *seq = g_hash_table_new(g_direct_hash, g_direct_equal);
    size_t at = 0;
    for (unsigned part = 0; at < size; part++) {
        size_t end = next_magic(data, size, at + 1);
        const uint8_t *p = data + at;
        size_t len = end - at;
        /* PROC is the first record: magic, tag, u32 pid */
        uint32_t pid = 1000 + part;
        if (len >= VMCAP_MAGIC_LEN + 5 && p[VMCAP_MAGIC_LEN] == VMCAP_TAG_PROC)
            pid = (uint32_t)p[9] | (uint32_t)p[10] << 8 | (uint32_t)p[11] << 16 |
                  (uint32_t)p[12] << 24;
        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(seq, GUINT_TO_POINTER(pid)));
        g_hash_table_insert(seq, GUINT_TO_POINTER(pid), GUINT_TO_POINTER(n + 1));
        char *name = g_strdup_printf("%s/vmcap.%u.%u", dir, pid, n);
        g_assert(g_file_set_contents(name, (const char *)p, (gssize)len, NULL));
        g_free(name);
        at = end;
    }
    g_hash_table_destroy(seq);
}

/* The converted trace, read back whole: it must be accepted, and hold what
 * the statistics say. */
static void check_output(const char *path, const CaptureImportStats *st)
{
    GError *e = NULL;
    TraceReader *r = trace_reader_open(path, &e);
    if (!r)
        g_error("the converter wrote a trace the reader refuses: %s", e->message);
    g_assert_cmpint(trace_reader_version(r), ==, 2);
    TraceEvent ev;
    uint64_t blocks = 0, lines = 0, refs = 0, sys = 0;
    while (trace_reader_next(r, &ev, &e)) {
        if (ev.kind == TRACE_EV_SYSCALL)
            sys++;
        if (ev.kind != TRACE_EV_REFS)
            continue;
        blocks++;
        TraceRef buf[64];
        size_t n;
        do {
            if (!trace_reader_refs(r, buf, G_N_ELEMENTS(buf), &n, &e))
                break;
            lines += n;
            for (size_t k = 0; k < n; k++)
                refs += buf[k].n;
        } while (n);
        if (e)
            break;
    }
    if (e)
        g_error("the converter wrote a trace the reader refuses: %s", e->message);
    trace_reader_close(r);
    g_assert_cmpuint(blocks, ==, st->refs_blocks);
    g_assert_cmpuint(lines, ==, st->refs_merged);
    g_assert_cmpuint(sys, ==, st->syscalls);
    g_assert_cmpuint(refs, ==, st->refs_written);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir) {
        GError *e = NULL;
        dir = g_dir_make_tmp("vmsplit-fuzz-capture-XXXXXX", &e);
        g_assert_no_error(e);
        atexit(remove_dir);
    }
    clear_dir();
    write_streams(data, size);
    char *out = g_strdup_printf("%s.out.vmt", dir);

    CaptureImportOptions o;
    capture_import_options_init(&o);
    o.killed_signal = size % 2 ? "SIGSEGV" : NULL;
    o.drop_unmapped = (size / 2) % 2;
    o.window_lines = (size / 4) % 4 == 3 ? 3 : 0;
    o.command = "fuzz";
    o.captured = "2026-12-04T00:00:00Z";
    o.host = "fuzz";
    CaptureImportStats st;
    GError *e = NULL;
    if (capture_import_dir(dir, out, &o, &st, &e))
        check_output(out, &st);
    else
        fuzz_check_error(e);
    capture_import_stats_clear(&st);
    g_unlink(out);
    g_free(out);
    return 0;
}
