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
 * express, and the writer writes nothing the reader rejects. */
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
    if (read_all(path, &a, &e))
        round_trip(&a, size >= 2 && data[0] == 0x1f && data[1] == 0x8b);
    else
        fuzz_check_error(e);
    read_clear(&a);
    return 0;
}
