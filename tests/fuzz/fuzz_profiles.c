/* Syscall profiles (src/kernel_model/syscalls.ini, profiles.c: the kernel
 * body of each syscall), loaded from a file as `--profiles FILE` does; a
 * loaded table is queried by name and number. */
#include "fuzz.h"

#include "kernel_model/profiles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".ini");
    GError *e = NULL;
    ProfileTable *t = profiles_load(path, &e);
    if (!t) {
        fuzz_check_error(e);
        return 0;
    }
    bool known;
    (void)profiles_find(t, "read", &known);
    (void)profiles_find(t, "no_such_call", &known);
    for (uint32_t nr = 0; nr < 400; nr++)
        (void)profiles_by_nr(t, nr);
    (void)profiles_generic(t);
    (void)profiles_count(t);
    profiles_free(t);
    return 0;
}
