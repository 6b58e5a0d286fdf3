/* Valgrind Lackey memory traces (src/replay/lackey.c), read to the end;
 * the first input byte picks skip_bad (lenient) or strict. */
#include "fuzz.h"

#include "replay/lackey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = fuzz_input_path(data + 1, size - 1, ".lackey");
    GError *e = NULL;
    LackeyReader *r = lackey_open(path, data[0] & 1, &e);
    if (!r) {
        fuzz_check_error(e);
        return 0;
    }
    LackeyRef ref;
    int k;
    while ((k = lackey_next(r, &ref, &e)) == 1)
        g_assert(ref.kind == LACKEY_I || ref.kind == LACKEY_L || ref.kind == LACKEY_S ||
                 ref.kind == LACKEY_M);
    if (k < 0)
        fuzz_check_error(e);
    else
        g_assert(e == NULL);
    const char *text;
    if (lackey_bad_lines(r))
        g_assert(lackey_first_bad_line(r, &text) > 0 && text != NULL);
    lackey_close(r);
    return 0;
}
