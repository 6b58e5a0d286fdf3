/* Running nasm (see nasm.h). */
#include "cpu/nasm.h"

#include <glib/gstdio.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>

#include "config.h"

G_DEFINE_QUARK(vmsplit-nasm-error-quark, nasm_error)

/* "dir/prog.asm" -> "prog.o" */
static char *object_name(const char *src)
{
    char *base = g_path_get_basename(src);
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = '\0';
    char *o = g_strconcat(base, ".o", NULL);
    g_free(base);
    return o;
}

static bool run_nasm(const char *src, const char *obj, GError **err)
{
    char *dir = g_path_get_dirname(src);
    char *inc = g_strconcat("-I", dir, G_DIR_SEPARATOR_S, NULL);
    const char *argv[] = { VMSPLIT_NASM, "-f", "elf32", inc, "-o", obj, src, NULL };
    char *errout = NULL;
    int status = 0;
    GError *e = NULL;
    bool ok = g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                           NULL, &errout, &status, &e);
    if (!ok) {
        g_set_error(err, NASM_ERROR, NASM_ERROR_SPAWN, "%s: cannot run %s: %s", src, VMSPLIT_NASM,
                    e->message);
        g_error_free(e);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        g_strchomp(errout);
        g_set_error(err, NASM_ERROR, NASM_ERROR_FAILED, "%s: nasm failed (%s %d):\n%s", src,
                    WIFEXITED(status) ? "exit status" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                    *errout ? errout : "(no message)");
        ok = false;
    }
    g_free(errout);
    g_free(inc);
    g_free(dir);
    return ok;
}

char *nasm_assemble(const char *src, GError **err)
{
    if (!g_file_test(src, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, NASM_ERROR, NASM_ERROR_INPUT, "%s: no such file", src);
        return NULL;
    }
    GError *e = NULL;
    char *tmp = g_dir_make_tmp("vmsplit-nasm-XXXXXX", &e);
    if (!tmp) {
        g_set_error(err, NASM_ERROR, NASM_ERROR_SPAWN, "%s: cannot make a temporary directory: %s",
                    src, e->message);
        g_error_free(e);
        return NULL;
    }
    char *name = object_name(src);
    char *obj = g_build_filename(tmp, name, NULL);
    g_free(name);
    if (!run_nasm(src, obj, err)) {
        nasm_remove_output(obj);
        g_free(obj);
        obj = NULL;
    }
    g_free(tmp);
    return obj;
}

void nasm_remove_output(const char *obj)
{
    if (!obj)
        return;
    char *dir = g_path_get_dirname(obj);
    g_unlink(obj);
    g_rmdir(dir);
    g_free(dir);
}
