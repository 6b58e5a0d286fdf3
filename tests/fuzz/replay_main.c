/* Replays inputs through one harness's LLVMFuzzerTestOneInput without
 * libFuzzer: the regression corpus as a meson test, built with the normal
 * compiler (and with the sanitizers in the sanitizer build).
 *
 *   fuzz-replay-KIND FILE|DIR...
 *
 * Each regular file (in a directory: each file in it, sorted) is one input.
 * Exit 0 when every input went through; a crash or an assertion in the
 * harness ends the process, naming the input last started on stderr. */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static unsigned run_file(const char *path)
{
    char *data;
    gsize len;
    GError *e = NULL;
    if (!g_file_get_contents(path, &data, &len, &e)) {
        fprintf(stderr, "%s\n", e->message);
        g_error_free(e);
        return 0;
    }
    fprintf(stderr, "input %s (%zu bytes)\n", path, (size_t)len);
    /* An exact-size copy, so ASan sees a read past the end. */
    uint8_t *copy = g_memdup2(data, len);
    LLVMFuzzerTestOneInput(copy, len);
    g_free(copy);
    g_free(data);
    return 1;
}

int main(int argc, char **argv)
{
    unsigned n = 0, missing = 0;
    for (int i = 1; i < argc; i++) {
        if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
            unsigned k = run_file(argv[i]);
            n += k;
            missing += !k;
            continue;
        }
        GDir *d = g_dir_open(argv[i], 0, NULL);
        if (!d) {
            fprintf(stderr, "%s: cannot open the directory\n", argv[i]);
            missing++;
            continue;
        }
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        const char *nm;
        while ((nm = g_dir_read_name(d)))
            if (nm[0] != '.')
                g_ptr_array_add(names, g_build_filename(argv[i], nm, NULL));
        g_dir_close(d);
        if (names->len)          /* pdata is NULL in an empty array */
            qsort(names->pdata, names->len, sizeof(char *), cmp_str);
        for (guint k = 0; k < names->len; k++)
            n += run_file(names->pdata[k]);
        g_ptr_array_free(names, TRUE);
    }
    printf("%u inputs replayed\n", n);
    return missing ? 2 : n ? 0 : 77;   /* 77: meson's "skipped" when there was nothing */
}
