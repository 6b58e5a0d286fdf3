/* CPU presets (the .ini files in presets/, src/preset/preset.c) from a file path, as
 * `--cpu FILE.ini` loads them; a loaded preset is written back as INI and
 * JSON, and the INI it writes must load again. */
#include "fuzz.h"

#include <string.h>

#include "preset/preset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".ini");
    GError *e = NULL;
    Preset *p = preset_load(path, &e);
    if (!p) {
        fuzz_check_error(e);
        return 0;
    }
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
