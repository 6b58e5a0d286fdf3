/* The parameter checks several sweep runners share (sweep_runner.h):
 * one wording per value kind, so that a bad --layouts or --paging reads
 * the same whichever sweep kind it was given to. */
#include "kernel_model/layout.h"
#include "kernel_model/ptformat.h"
#include "preset/preset.h"
#include "report/csv.h"
#include "report/sweep_runner.h"

#include <string.h>

bool sweep_check_preset(const char *value, GError **err)
{
    Preset *p = preset_load(value, err);
    preset_free(p);
    return p != NULL;
}

bool sweep_check_layout(const char *value, GError **err)
{
    return layout_lookup(value, err) != NULL;
}

bool sweep_check_entry(const char *value, GError **err)
{
    if (!strcmp(value, "int80") || !strcmp(value, "sysenter"))
        return true;
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                "unknown kernel entry '%s' (expected int80 or sysenter)", value);
    return false;
}

/* The range `vmsplit replay --ram` accepts (the paging mode's own limit
 * is checked where the point runs, knowing the mode). */
bool sweep_check_ram(const char *value, GError **err)
{
    guint64 mib = g_ascii_strtoull(value, NULL, 10);
    if (mib < 32 || mib > 64 * 1024) {
        g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                    "installed RAM %s MiB is out of range (expected 32M to 64G)", value);
        return false;
    }
    return true;
}

bool sweep_check_paging(const char *value, GError **err)
{
    if (ptformat_find(value))
        return true;
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE, "unknown paging mode '%s' (expected %s)",
                value, ptformat_names());
    return false;
}

bool sweep_check_ram_in_mode(const char *ram_mib, const PageTableFormat *f, GError **err)
{
    if ((g_ascii_strtoull(ram_mib, NULL, 10) << 20) <= f->phys_limit)
        return true;
    g_set_error(err, REPORT_ERROR, REPORT_ERROR_PARSE,
                "installed RAM %s MiB is more than %s (%s) paging addresses (%.0f GiB): "
                "lower --ram or use --paging pae", ram_mib, f->name, f->title,
                f->phys_limit / 1073741824.0);
    return false;
}
