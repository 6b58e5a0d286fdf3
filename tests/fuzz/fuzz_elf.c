/* ELF objects and executables: elfload_memory (src/cpu/elfload.c), linked
 * as the stub and guest loaders link them: packed from a user-space base,
 * with a table of external symbols. A loaded object must satisfy the
 * loader's promises (elfload.h): every segment's bytes present, filesz <=
 * size <= ELFLOAD_MAX_SIZE, their sum within ELFLOAD_MAX_TOTAL, inside
 * 4 GiB; symbol lookups stay inside. */
#include "fuzz.h"

#include <string.h>

#include "cpu/elfload.h"

static const ElfAddr externs[] = {
    { "ext_func", 0x00401000 }, { "ext_data", 0x00402000 }, { "sys_call_table", 0xC0100000 },
};

/* Fixed addresses, as the stub loader gives the entry sections. */
static const ElfAddr fixed[] = { { ".text", 0xC0100000 }, { ".data", 0xC0200004 } };

static bool place_rodata(void *data, const char *section, uint32_t size, uint32_t align,
                         unsigned flags, uint32_t *addr)
{
    (void)data, (void)size, (void)align, (void)flags;
    if (strcmp(section, ".rodata") != 0)
        return false;
    *addr = 0xFFFFF000;          /* near the top: a large one runs past 4 GiB */
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The file's length modulo 4 picks how an ET_REL is placed (an ELF
     * file's length is free: nothing is read past its tables), so that
     * every placement rule is exercised: packing from a user base,
     * a table of fixed addresses, a placement callback, packing near 4 GiB. */
    ElfLoadOptions o = { .base = 0x08048000, .externs = externs,
                         .n_externs = G_N_ELEMENTS(externs) };
    if (size % 4 == 1) {
        o.sections = fixed;
        o.n_sections = G_N_ELEMENTS(fixed);
    } else if (size % 4 == 2) {
        o.place = place_rodata;
    } else if (size % 4 == 3) {
        o.base = 0xFFFF0000;
    }
    GError *e = NULL;
    ElfObject *obj = elfload_memory("fuzz.o", data, size, &o, &e);
    if (!obj) {
        g_assert(g_str_has_prefix(e->message, "fuzz.o: "));
        fuzz_check_error(e);
        return 0;
    }
    for (size_t i = 0; i < elfload_n_segments(obj); i++) {
        const ElfSegment *s = elfload_segment(obj, i);
        g_assert(s->bytes != NULL && s->filesz <= s->size && s->size <= ELFLOAD_MAX_SIZE);
        g_assert((uint64_t)s->vaddr + s->size <= (1ULL << 32));
        const char *name;
        uint32_t off;
        if (elfload_symbol_at(obj, s->vaddr + s->size - 1, &name, &off))
            g_assert(name != NULL && off < s->size);
        g_assert(elfload_is_executable(obj) || elfload_segment_by_name(obj, s->name) != NULL);
    }
    uint32_t entry;
    (void)elfload_entry(obj, &entry);
    /* Into physical memory, as a kernel image linked at 3 GiB or as is. */
    uint64_t total = 0;
    for (size_t i = 0; i < elfload_n_segments(obj); i++)
        total += elfload_segment(obj, i)->size;
    g_assert(total <= ELFLOAD_MAX_TOTAL);
    if (total <= (16u << 20)) {
        PhysMem *pm = physmem_new();
        GError *e = NULL;
        if (!elfload_write_physmem(obj, pm, size % 2 ? 0xC0000000 : 0, &e))
            fuzz_check_error(e);
        physmem_free(pm);
    }
    elfload_free(obj);
    return 0;
}
