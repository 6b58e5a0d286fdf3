/* vmsplit syscall traces (workloads/FORMAT.md) through the public reader,
 * trace_reader_open/next/refs (src/replay/trace_reader.c): whatever
 * versions the reader accepts are covered, gzip included (detected by
 * magic). Events read are formatted back (trace_format_event), which must
 * fit its buffer.
 *
 * Round trip: a trace read to its end without an error is written again by
 * the trace writer (trace_writer.c: the same version and header, every
 * event kind, refs events with their reference lines; gzip when the input
 * was gzip) and read again; the second reading must succeed and give the
 * same header, the same events (trace_event_equal) and the same references.
 * So whatever the reader accepts, the writer can write and the reader
 * reads back unchanged: the reader accepts nothing the writer cannot
 * express, and the writer writes nothing the reader rejects.
 *
 * Partial reading: a caller may read any part of a refs event's lines, in
 * chunks of any size, and leave the rest to trace_reader_next (which reads
 * and checks them: skip_refs). The input is read a second time so, the
 * part and chunk size of each refs event drawn from the input's size and
 * the event's number; the events must be the same, the lines read the
 * first ones of each event's, and a trace the full reading refused must
 * be refused with the same message (the lines skipped are checked too). */
#include "fuzz.h"

#include <string.h>

#include "replay/trace.h"

typedef struct {
    TraceReader *r;
    GArray *events;              /* TraceEvent */
    GArray *refs;                /* TraceRef: each refs event's lines, in order */
} Read;

/* Reads path to its end; false with *err set if the reader refused it. */
static bool read_all(const char *path, Read *out, GError **err)
{
    static char buf[TRACE_LINE_MAX];
    out->events = g_array_new(FALSE, FALSE, sizeof(TraceEvent));
    out->refs = g_array_new(FALSE, FALSE, sizeof(TraceRef));
    if (!(out->r = trace_reader_open(path, err)))
        return false;
    const TraceHeader *h = trace_reader_header(out->r);
    for (guint i = 0; i < trace_header_size(h); i++) {
        const char *k, *v;
        trace_header_nth(h, i, &k, &v);
        g_assert(k != NULL && v != NULL);
    }
    TraceEvent ev;
    while (trace_reader_next(out->r, &ev, err)) {
        g_assert(trace_format_event(&ev, buf) < sizeof buf);
        g_array_append_val(out->events, ev);
        if (ev.kind != TRACE_EV_REFS)
            continue;
        TraceRef chunk[64];
        size_t n, total = 0;
        do {
            if (!trace_reader_refs(out->r, chunk, G_N_ELEMENTS(chunk), &n, err))
                return false;
            g_array_append_vals(out->refs, chunk, (guint)n);
            total += n;
        } while (n);
        g_assert(total == ev.u.refs.nrefs);
    }
    return *err == NULL;
}

/* The second reading: see the top. a is the full reading's result (its
 * error, if it had one, in full_err). */
static void partial_read(const char *path, const Read *a, const GError *full_err, size_t salt)
{
    GError *e = NULL;
    TraceReader *r = trace_reader_open(path, &e);
    if (!r) {
        g_assert(full_err != NULL);
        g_assert_cmpstr(e->message, ==, full_err->message);
        g_error_free(e);
        return;
    }
    guint i = 0, ref = 0;
    TraceEvent ev;
    while (trace_reader_next(r, &ev, &e)) {
        g_assert_cmpuint(i, <, a->events->len);
        g_assert(trace_event_equal(&ev, &g_array_index(a->events, TraceEvent, i)));
        i++;
        if (ev.kind != TRACE_EV_REFS)
            continue;
        uint32_t nrefs = ev.u.refs.nrefs;
        size_t h = salt * 31u + i * 7u;
        uint64_t want = h % 3 == 0 ? 0 : h % 3 == 1 ? (uint64_t)(h / 3) % ((uint64_t)nrefs + 1)
                                                   : nrefs;
        size_t chunk = 1 + (h / 5) % 64;
        TraceRef buf[64];
        uint64_t got = 0;
        while (got < want) {
            size_t n;
            size_t ask = chunk < want - got ? chunk : (size_t)(want - got);
            if (!trace_reader_refs(r, buf, ask, &n, &e))
                break;
            g_assert_cmpuint(n, >=, 1);
            g_assert_cmpuint(n, <=, ask);
            for (size_t k = 0; k < n; k++) {
                /* a full reading that failed inside a block kept only the
                 * chunks before the failing one */
                if (full_err && ref + got + k >= a->refs->len)
                    break;
                g_assert_cmpuint(ref + got + k, <, a->refs->len);
                const TraceRef *x = &g_array_index(a->refs, TraceRef, ref + got + k);
                g_assert(x->addr == buf[k].addr && x->n == buf[k].n &&
                         x->kind == buf[k].kind && x->size == buf[k].size);
            }
            got += n;
        }
        if (e)
            break;
        ref += nrefs;
    }
    if (full_err) {
        g_assert(e != NULL);
        g_assert_cmpstr(e->message, ==, full_err->message);
    } else {
        g_assert_no_error(e);
        g_assert_cmpuint(i, ==, a->events->len);
        g_assert_cmpuint(ref, ==, a->refs->len);
    }
    g_clear_error(&e);
    trace_reader_close(r);
}

static void read_clear(Read *rd)
{
    trace_reader_close(rd->r);
    g_array_free(rd->events, TRUE);
    g_array_free(rd->refs, TRUE);
}

static void round_trip(const Read *a, bool gz)
{
    const char *out = fuzz_input_path(NULL, 0, gz ? ".out.vmt.gz" : ".out.vmt");
    const TraceHeader *h = trace_reader_header(a->r);
    int version = trace_reader_version(a->r);
    GError *e = NULL;
    TraceWriter *w = trace_writer_open_version(out, h, version, &e);
    g_assert_no_error(e);
    guint ref = 0;
    for (guint i = 0; i < a->events->len; i++) {
        const TraceEvent *ev = &g_array_index(a->events, TraceEvent, i);
        trace_writer_write(w, ev);
        for (uint32_t k = 0; ev->kind == TRACE_EV_REFS && k < ev->u.refs.nrefs; k++)
            trace_writer_write_ref(w, &g_array_index(a->refs, TraceRef, ref++));
    }
    g_assert(ref == a->refs->len);
    g_assert(trace_writer_close(w, &e));

    Read b;
    if (!read_all(out, &b, &e))
        g_error("round trip: the reader refused what the writer wrote: %s", e->message);
    g_assert_cmpint(trace_reader_version(b.r), ==, version);
    const TraceHeader *hb = trace_reader_header(b.r);
    g_assert_cmpuint(trace_header_size(hb), ==, trace_header_size(h));
    for (guint i = 0; i < trace_header_size(h); i++) {
        const char *k1, *v1, *k2, *v2;
        trace_header_nth(h, i, &k1, &v1);
        trace_header_nth(hb, i, &k2, &v2);
        g_assert_cmpstr(k1, ==, k2);
        g_assert_cmpstr(v1, ==, v2);
    }
    g_assert_cmpuint(b.events->len, ==, a->events->len);
    for (guint i = 0; i < a->events->len; i++) {
        const TraceEvent *x = &g_array_index(a->events, TraceEvent, i);
        const TraceEvent *y = &g_array_index(b.events, TraceEvent, i);
        if (!trace_event_equal(x, y)) {
            static char l1[TRACE_LINE_MAX], l2[TRACE_LINE_MAX];
            trace_format_event(x, l1);
            trace_format_event(y, l2);
            g_error("round trip: event %u read as '%s', written and read again as '%s'", i, l1,
                    l2);
        }
    }
    g_assert_cmpuint(b.refs->len, ==, a->refs->len);
    for (guint i = 0; i < a->refs->len; i++) {
        const TraceRef *x = &g_array_index(a->refs, TraceRef, i);
        const TraceRef *y = &g_array_index(b.refs, TraceRef, i);
        g_assert(x->addr == y->addr && x->n == y->n && x->kind == y->kind && x->size == y->size);
    }
    read_clear(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".vmt");
    GError *e = NULL;
    Read a;
    bool ok = read_all(path, &a, &e);
    partial_read(path, &a, e, size);
    if (ok)
        round_trip(&a, size >= 2 && data[0] == 0x1f && data[1] == 0x8b);
    else
        fuzz_check_error(e);
    read_clear(&a);
    return 0;
}
