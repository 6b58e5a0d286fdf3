/* Helpers of the fuzz harnesses (fuzz.h). */
#include "fuzz.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A g_critical (a g_return_if_fail that failed) is a caller's bug, here a
 * parser handing on what it should have rejected: a crash for the fuzzer,
 * not a line on stderr. */
__attribute__((constructor)) static void criticals_are_fatal(void)
{
    g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
}

static char *dir;
static GHashTable *paths;        /* suffix -> path */

static void cleanup(void)
{
    if (!paths)
        return;
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, paths);
    while (g_hash_table_iter_next(&it, NULL, &v))
        g_unlink(v);
    g_rmdir(dir);
}

const char *fuzz_input_path(const uint8_t *data, size_t size, const char *suffix)
{
    if (!dir) {
        GError *e = NULL;
        dir = g_dir_make_tmp("vmsplit-fuzz-XXXXXX", &e);
        g_assert_no_error(e);
        paths = g_hash_table_new(g_str_hash, g_str_equal);
        atexit(cleanup);
    }
    char *path = g_hash_table_lookup(paths, suffix);
    if (!path) {
        path = g_strdup_printf("%s/input%s", dir, suffix);
        g_hash_table_insert(paths, g_strdup(suffix), path);
    }
    FILE *f = fopen(path, "wb");
    g_assert(f != NULL);
    g_assert(size == 0 || fwrite(data, 1, size, f) == size);
    g_assert(fclose(f) == 0);
    return path;
}

void fuzz_check_error(GError *e)
{
    g_assert(e != NULL && e->message != NULL && e->message[0] != '\0');
    g_error_free(e);
}
