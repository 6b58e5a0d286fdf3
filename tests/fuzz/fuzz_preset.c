/* CPU presets (the .ini files in presets/, src/preset/preset.c) from a file path, as
 * `--cpu FILE.ini` loads them; a loaded preset is written back as INI and
 * JSON, and the INI it writes must load again.
 *
 * Declared ranges (preset_range.c): the loaded value lies in its span, and
 * a value the uncertainty analysis may draw for a range (either end of a
 * span, any numeric alternative; calib/uncertainty.c sets it with
 * preset_set_uint on a preset_copy) gives a preset the reader accepts too,
 * read back with that value. One range and one value per input, chosen
 * from the input's size, so that the check costs one more load. */
#include "fuzz.h"

#include <string.h>

#include "preset/preset.h"

static void check_ranges(const Preset *p, size_t pick)
{
    for (unsigned i = 0; i < p->nranges; i++) {
        const PresetRange *r = &p->ranges[i];
        unsigned v;
        g_assert(preset_range_find(p, r->id) != NULL);
        if (r->kind == PRESET_RANGE_SPAN) {
            g_assert(preset_get_uint(p, r->id, &v));
            g_assert_cmpuint(r->lo, <=, r->hi);
            g_assert_cmpuint(v, >=, r->lo);
            g_assert_cmpuint(v, <=, r->hi);
        }
    }
    if (!p->nranges)
        return;
    const PresetRange *r = &p->ranges[pick % p->nranges];
    unsigned v, want;
    if (!preset_get_uint(p, r->id, &v))
        return;  /* a text key: the sampler holds it */
    if (r->kind == PRESET_RANGE_SPAN) {
        want = (pick / p->nranges) % 2 ? r->hi : r->lo;
    } else {
        guint n = g_strv_length(r->alternatives);
        if (!preset_alternative_value(r->alternatives[(pick / p->nranges) % n], &want))
            return;
    }
    Preset *q = preset_copy(p);
    g_assert(preset_set_uint(q, r->id, want));
    char *ini = preset_to_ini(q);
    GError *e = NULL;
    Preset *back = preset_load(fuzz_input_path((const uint8_t *)ini, strlen(ini), ".ini"), &e);
    if (!back)
        g_error("%s = %u, a value of its declared range, makes a preset the reader "
                "refuses: %s", r->id, want, e->message);
    g_assert(preset_get_uint(back, r->id, &v));
    g_assert_cmpuint(v, ==, want);
    preset_free(back);
    g_free(ini);
    preset_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".ini");
    GError *e = NULL;
    Preset *p = preset_load(path, &e);
    if (!p) {
        fuzz_check_error(e);
        return 0;
    }
    check_ranges(p, size);
    char *ini = preset_to_ini(p), *json = preset_to_json(p);
    g_assert(ini != NULL && json != NULL);
    preset_free(p);
    p = preset_load(fuzz_input_path((const uint8_t *)ini, strlen(ini), ".ini"), &e);
    g_assert_no_error(e);
    preset_free(p);
    g_free(ini);
    g_free(json);
    return 0;
}
