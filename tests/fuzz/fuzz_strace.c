/* strace logs (docs: `vmsplit import`): strace_import_stream over the whole
 * importer (src/replay/strace_parse.c, strace_import.c, strace_event.c,
 * uniproc_sched.c), gzip accepted. The first input byte picks the options
 * (strict or lenient, block or interleaved order), the rest is the log.
 * Every event emitted is formatted as a trace line (trace_format_event). */
#include "fuzz.h"

#include "replay/strace_import.h"

static void on_header(const TraceHeader *h, void *ud)
{
    (void)ud;
    g_assert(h != NULL);
}

static void on_event(const TraceEvent *ev, void *ud)
{
    (void)ud;
    static char buf[TRACE_LINE_MAX];
    g_assert(trace_format_event(ev, buf) < sizeof buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    StraceImportOptions o;
    strace_import_options_init(&o);
    o.strict = data[0] & 1;
    o.order = data[0] & 2 ? STRACE_ORDER_INTERLEAVE : STRACE_ORDER_BLOCK;
    const char *path = fuzz_input_path(data + 1, size - 1, ".strace");
    StraceImportStats st = { 0 };
    GError *e = NULL;
    if (!strace_import_stream(path, &o, on_header, on_event, NULL, &st, &e))
        fuzz_check_error(e);
    strace_import_stats_clear(&st);
    return 0;
}
