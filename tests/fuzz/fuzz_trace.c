/* vmsplit syscall traces (workloads/FORMAT.md) through the public reader,
 * trace_reader_open/next (src/replay/trace_reader.c): whatever versions the
 * reader accepts are covered, gzip included (detected by magic). Events
 * read are formatted back (trace_format_event), which must fit its buffer. */
#include "fuzz.h"

#include <string.h>

#include "replay/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".vmt");
    GError *e = NULL;
    TraceReader *r = trace_reader_open(path, &e);
    if (!r) {
        fuzz_check_error(e);
        return 0;
    }
    const TraceHeader *h = trace_reader_header(r);
    for (guint i = 0; i < trace_header_size(h); i++) {
        const char *k, *v;
        trace_header_nth(h, i, &k, &v);
        g_assert(k != NULL && v != NULL);
    }
    static char buf[TRACE_LINE_MAX];
    TraceEvent ev;
    while (trace_reader_next(r, &ev, &e))
        g_assert(trace_format_event(&ev, buf) < sizeof buf);
    if (e)
        fuzz_check_error(e);
    trace_reader_close(r);
    return 0;
}
