/* The gzip wrapper every line-oriented reader shares (src/replay/
 * linereader.c: magic-byte detection, GZlibDecompressor, the 1 MiB line
 * limit), read to the end. Seeds are gzip files, so the fuzzer works on
 * damaged and truncated gzip streams as well as plain text. */
#include "fuzz.h"

#include <string.h>

#include "replay/linereader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".gz");
    GError *e = NULL;
    LineReader *lr = linereader_open(path, &e);
    if (!lr) {
        fuzz_check_error(e);
        return 0;
    }
    char *line;
    size_t len;
    uint64_t last = 0;
    while (linereader_next(lr, &line, &len, &e)) {
        g_assert(line[len] == '\0' && (len == 0 || line[len - 1] != '\n'));
        g_assert(linereader_lineno(lr) == last + 1);
        last = linereader_lineno(lr);
    }
    if (e)
        fuzz_check_error(e);
    linereader_close(lr);
    return 0;
}
