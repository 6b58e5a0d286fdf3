/* ELF objects and executables: elfload_memory (src/cpu/elfload.c), linked
 * as the stub and guest loaders link them: packed from a user-space base,
 * with a table of external symbols. A loaded object must satisfy the
 * loader's promises (elfload.h): every segment's bytes present, filesz <=
 * size <= ELFLOAD_MAX_SIZE, inside 4 GiB; symbol lookups stay inside. */
#include "fuzz.h"

#include "cpu/elfload.h"

static const ElfAddr externs[] = {
    { "ext_func", 0x00401000 }, { "ext_data", 0x00402000 }, { "sys_call_table", 0xC0100000 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ElfLoadOptions o = { .base = 0x08048000, .externs = externs,
                         .n_externs = G_N_ELEMENTS(externs) };
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
    elfload_free(obj);
    return 0;
}
