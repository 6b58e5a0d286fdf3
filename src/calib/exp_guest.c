/* The experiment `guest NAME LAYOUT`: see exp_guest.h. */
#include "calib/exp_guest.h"

#include "calib/measurements.h"
#include "kernel_model/guestprog.h"
#include "kernel_model/layout.h"

#include <ctype.h>
#include <string.h>

#include "config.h"

/* Enough for any program of workloads/guest that measures one thing. */
#define GUEST_MAX_STEPS 100000000ULL

char *calib_guest_object(const char *name)
{
    const char *env = g_getenv("VMSPLIT_GUEST_DIR");
    char *file = g_strconcat(name, ".o", NULL);
    char *p = env && *env ? g_build_filename(env, file, NULL)
                          : g_build_filename(VMSPLIT_BUILD_DIR, "workloads", "guest", file, NULL);
    g_free(file);
    return p;
}

/* The last run of digits in text. */
static bool last_number(const char *text, double *out)
{
    const char *end = NULL;
    for (const char *q = text; *q; q++)
        if (isdigit((unsigned char)*q))
            end = q;
    if (!end)
        return false;
    const char *start = end;
    while (start > text && isdigit((unsigned char)start[-1]))
        start--;
    *out = g_ascii_strtod(start, NULL);
    return true;
}

bool calib_run_guest(const Preset *p, const char *name, const char *layout, double *out,
                     GError **err)
{
    const Layout *l = layout_find(layout);
    if (!l) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE,
                    "guest %s %s: unknown layout; expected 3g1g, 4g4g, kpti...", name, layout);
        return false;
    }
    char *obj = calib_guest_object(name);
    if (!g_file_test(obj, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE,
                    "guest %s: no program %s (expected a program of workloads/guest, built by "
                    "meson)", name, obj);
        g_free(obj);
        return false;
    }
    GString *sink = g_string_new(NULL), *errs = g_string_new(NULL);
    GuestProgOptions o = { .machine = { .preset = p, .layout = l, .ram = 4ULL << 30 },
                           .out = sink, .err = errs };
    GuestProg *g = guestprog_new(&o, obj, err);
    bool ok = g != NULL;
    if (ok) {
        GuestProgState st = guestprog_run(g, GUEST_MAX_STEPS);
        if (st == GUESTPROG_FAULTED) {
            char *why = guestprog_describe_fault(g);
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_INVALID, "guest %s %s: %s", name, layout,
                        why);
            g_free(why);
            ok = false;
        } else if (st != GUESTPROG_EXITED || guestprog_exit_status(g) != 0) {
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_INVALID,
                        "guest %s %s: %s (expected exit 0)%s%s", name, layout,
                        st == GUESTPROG_EXITED ? "exited non-zero" : "did not finish",
                        errs->len ? ": " : "", errs->str);
            ok = false;
        } else if (!last_number(sink->str, out)) {
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_INVALID,
                        "guest %s %s: printed no number (expected its figure on fd 1)", name,
                        layout);
            ok = false;
        }
    }
    guestprog_free(g);
    g_string_free(sink, TRUE);
    g_string_free(errs, TRUE);
    g_free(obj);
    return ok;
}
