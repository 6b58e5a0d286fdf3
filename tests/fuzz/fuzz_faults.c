/* Page-fault profiles (src/kernel_model/faults.ini, usermm_profiles_load in
 * usermm_fault.c), loaded from a file as `vmsplit replay --fault-profiles
 * FILE` does. A loaded table holds every fault kind within the bounds the
 * reader promises (usermm.h): insns up to 10^6, kdata_pages up to the
 * model's pool of 16 kernel data pages. */
#include "fuzz.h"

#include "kernel_model/usermm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_path(data, size, ".ini");
    GError *e = NULL;
    UserFaultProfile prof[UFAULT_KINDS];
    for (int k = 0; k < UFAULT_KINDS; k++)
        prof[k] = (UserFaultProfile){ UINT32_MAX, UINT32_MAX };
    if (!usermm_profiles_load(path, prof, &e)) {
        fuzz_check_error(e);
        return 0;
    }
    for (int k = 0; k < UFAULT_KINDS; k++)
        g_assert(prof[k].insns <= 1000000 && prof[k].kdata_pages <= 16);
    return 0;
}
