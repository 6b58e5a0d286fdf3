/* The table of point runners. A new kind of sweep: one runner_<kind>.c
 * file and one line here. */
#include "report/sweep_runner.h"
#include "report/csv.h"

#include <string.h>

extern const SweepRunner sweep_runner_lowmem;   /* runner_lowmem.c */
extern const SweepRunner sweep_runner_tlbsim;   /* runner_tlbsim.c */
extern const SweepRunner sweep_runner_replay;   /* runner_replay.c */
extern const SweepRunner sweep_runner_uncertainty; /* runner_uncertainty.c */
extern const SweepRunner sweep_runner_uncertainty_replay; /* runner_uncertainty.c */

static const SweepRunner *const runners[] = {
    &sweep_runner_lowmem,
    &sweep_runner_tlbsim,
    &sweep_runner_replay,
    &sweep_runner_uncertainty,
    &sweep_runner_uncertainty_replay,
    NULL,
};

/* Built-in runners followed by registered ones, NULL-terminated. */
static GPtrArray *all;

const SweepRunner *const *sweep_runner_all(void)
{
    if (!all) {
        all = g_ptr_array_new();
        for (const SweepRunner *const *r = runners; *r; r++)
            g_ptr_array_add(all, (gpointer)*r);
        g_ptr_array_add(all, NULL);
    }
    return (const SweepRunner *const *)all->pdata;
}

void sweep_runner_register(const SweepRunner *r)
{
    sweep_runner_all();
    if (sweep_runner_lookup(r->kind, NULL))
        return;
    all->pdata[all->len - 1] = (gpointer)r;
    g_ptr_array_add(all, NULL);
}

const SweepRunner *sweep_runner_lookup(const char *kind, GError **err)
{
    for (const SweepRunner *const *r = sweep_runner_all(); *r; r++)
        if (!strcmp((*r)->kind, kind))
            return *r;
    GString *known = g_string_new(NULL);
    for (const SweepRunner *const *r = sweep_runner_all(); *r; r++)
        g_string_append_printf(known, "%s%s", known->len ? ", " : "", (*r)->kind);
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                "unknown sweep kind '%s' (expected one of: %s)", kind, known->str);
    g_string_free(known, TRUE);
    return NULL;
}

int sweep_runner_param(const SweepRunner *r, const char *column)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (!strcmp(r->params[i].column, column))
            return (int)i;
    return -1;
}

char *sweep_format_uint(uint64_t v)
{
    return g_strdup_printf("%" G_GUINT64_FORMAT, v);
}

char *sweep_format_double(double v, int decimals)
{
    /* g_ascii_formatd ignores the locale: always '.' as decimal point. */
    char fmt[8], buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_snprintf(fmt, sizeof fmt, "%%.%df", CLAMP(decimals, 0, 9));
    return g_strdup(g_ascii_formatd(buf, sizeof buf, fmt, v));
}
