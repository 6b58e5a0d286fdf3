/* Machine images (src/mmu/image.c, docs/image-format.md): image_parse, then
 * the MOV CR3 of a parsed image (a #GP(0) is an outcome, not an error). */
#include "fuzz.h"

#include "mmu/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    PhysMem *pm = physmem_new();
    MachineImage img;
    GError *e = NULL;
    if (image_parse("fuzz.img", (const char *)data, size, pm, &img, &e)) {
        PaeRegs regs;
        int bad;
        (void)image_load_cr3(&img, pm, &regs, &bad, NULL);
    } else {
        fuzz_check_error(e);
    }
    physmem_free(pm);
    return 0;
}
