/* ELF loader (src/cpu/elfload.c).
 *
 * Independent expectations:
 *   - tests/cpu/data/reloc.asm, linked by hand: every relocated byte is
 *     worked out below from the instruction encodings (Intel SDM Vol. 2)
 *     and the psABI formulas S + A and S + A - P;
 *   - GNU ld: the same objects linked by `ld -m elf_i386` at build time
 *     (tests/cpu/data/meson.build) must hold the same bytes at the same
 *     addresses as elfload's result, for reloc.o and every guest program;
 *   - bad files are made at run time from the good reloc.o by changing the
 *     fields the ELF spec defines (offsets from <elf.h> structures). */
#include <check.h>
#include <elf.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/elfload.h"
#include "mmu/physmem.h"

/* ---- helpers ---------------------------------------------------------- */

static char *build_path(const char *rel)
{
    const char *b = g_getenv("VMSPLIT_BUILD_DIR");
    ck_assert_msg(b != NULL, "VMSPLIT_BUILD_DIR not set");
    return g_build_filename(b, rel, NULL);
}

static uint8_t *read_all(const char *path, size_t *size)
{
    char *data;
    GError *e = NULL;
    ck_assert_msg(g_file_get_contents(path, &data, size, &e), "%s", e ? e->message : path);
    return (uint8_t *)data;
}

static const ElfAddr reloc_sections[] = {
    { ".text", 0x00401000 }, { ".data", 0x00402000 },
    { ".rodata", 0x00403000 }, { ".bss", 0x00404000 },
};
static const ElfAddr reloc_externs[] = {
    { "ext_func", 0x00500000 }, { "ext_data", 0xC0100000 },
};
static const ElfLoadOptions reloc_opts = {
    .sections = reloc_sections, .n_sections = G_N_ELEMENTS(reloc_sections),
    .externs = reloc_externs, .n_externs = G_N_ELEMENTS(reloc_externs),
};

static ElfObject *load_ok(const char *path, const ElfLoadOptions *o)
{
    GError *e = NULL;
    ElfObject *obj = elfload_file(path, o, &e);
    ck_assert_msg(obj != NULL, "%s", e ? e->message : "?");
    return obj;
}

static ElfObject *load_reloc(void)
{
    char *p = build_path("tests/cpu/data/reloc.o");
    ElfObject *obj = load_ok(p, &reloc_opts);
    g_free(p);
    return obj;
}

static const ElfSegment *seg(const ElfObject *obj, const char *name)
{
    const ElfSegment *s = elfload_segment_by_name(obj, name);
    ck_assert_msg(s != NULL, "no segment %s", name);
    return s;
}

/* Byte off of a segment; past filesz it must be zero. (No ck_assert here:
 * Check records every assertion, too slow for a 1 MiB .bss.) */
static uint8_t seg_byte(const ElfSegment *s, uint32_t off)
{
    g_assert(off < s->size);
    g_assert(off < s->filesz || s->bytes[off] == 0);
    return s->bytes[off];
}

static void assert_bytes(const ElfSegment *s, const uint8_t *want, size_t n)
{
    ck_assert_uint_eq(s->size, n);
    ck_assert_uint_eq(s->filesz, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(s->bytes[i] == want[i], "%s+0x%zx: 0x%02x, expected 0x%02x", s->name, i,
                      s->bytes[i], want[i]);
}

static uint32_t sym(const ElfObject *obj, const char *name)
{
    uint32_t a = 0xDEADBEEF;
    ck_assert_msg(elfload_symbol(obj, name, &a), "no symbol %s", name);
    return a;
}

/* Section header of the section called name in a raw little-endian ELF32. */
static Elf32_Shdr *raw_section(uint8_t *img, const char *name, size_t *off)
{
    Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
    Elf32_Shdr *sh = (Elf32_Shdr *)(img + eh->e_shoff);
    const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (strcmp(names + sh[i].sh_name, name) == 0) {
            if (off)
                *off = eh->e_shoff + i * sizeof(Elf32_Shdr);
            return &sh[i];
        }
    ck_abort_msg("no section %s", name);
    return NULL;
}

/* ---- ET_REL linking, against hand-worked bytes ------------------------ */

START_TEST(test_reloc_text)
{
    ElfObject *obj = load_reloc();
    ck_assert(!elfload_is_executable(obj));
    const ElfSegment *t = seg(obj, ".text");
    ck_assert_uint_eq(t->vaddr, 0x00401000);
    ck_assert_uint_eq(t->flags, ELFLOAD_X);
    static const uint8_t want[32] = {
        /* 0x00 call ext_func: S + A - P = 0x500000 + (-4) - 0x401001 = 0x000FEFFB
         * (the next instruction 0x401005 + 0xFEFFB = 0x500000) */
        0xE8, 0xFB, 0xEF, 0x0F, 0x00,
        /* 0x05 mov eax, [counter]: S + A = .data 0x402000 + 4 */
        0xA1, 0x04, 0x20, 0x40, 0x00,
        /* 0x0A mov ebx, ext_data + 8: 0xC0100000 + 8 */
        0xBB, 0x08, 0x00, 0x10, 0xC0,
        /* 0x0F call local_fn: no relocation, 0x1F - 0x14 = 0x0B */
        0xE8, 0x0B, 0x00, 0x00, 0x00,
        /* 0x14 mov ecx, table: .rodata 0x403000 + 2 */
        0xB9, 0x02, 0x30, 0x40, 0x00,
        /* 0x19 mov edx, buf + 16: .bss 0x404000 + 16 */
        0xBA, 0x10, 0x40, 0x40, 0x00,
        0xC3, 0xC3,
    };
    assert_bytes(t, want, sizeof want);
    elfload_free(obj);
}
END_TEST

START_TEST(test_reloc_data)
{
    ElfObject *obj = load_reloc();
    const ElfSegment *d = seg(obj, ".data");
    ck_assert_uint_eq(d->vaddr, 0x00402000);
    ck_assert_uint_eq(d->flags, ELFLOAD_W);
    static const uint8_t want[20] = {
        0x11, 0x11, 0x11, 0x11,
        0x78, 0x56, 0x34, 0x12,
        0x00, 0x10, 0x40, 0x00,  /* dd _start: .text 0x401000 + 0 */
        0xF4, 0xDF, 0x0F, 0x00,  /* dd ext_func - $: 0x500000 - 0x40200C = 0x000FDFF4 */
        0xF2, 0x0F, 0x00, 0x00,  /* dd table - $: 0x403000 + 2 - 0x402010 = 0x00000FF2 */
    };
    assert_bytes(d, want, sizeof want);

    const ElfSegment *r = seg(obj, ".rodata");
    ck_assert_uint_eq(r->vaddr, 0x00403000);
    ck_assert_uint_eq(r->flags, 0);
    static const uint8_t ro[6] = { 0xAA, 0xBB, 1, 2, 3, 4 };
    assert_bytes(r, ro, sizeof ro);

    const ElfSegment *b = seg(obj, ".bss");
    ck_assert_uint_eq(b->vaddr, 0x00404000);
    ck_assert_uint_eq(b->flags, ELFLOAD_W);
    ck_assert_uint_eq(b->size, 64);              /* resb 64 */
    ck_assert_uint_eq(b->filesz, 0);             /* nothing from the file */
    for (unsigned i = 0; i < 64; i++)
        ck_assert_uint_eq(b->bytes[i], 0);
    ck_assert_uint_eq(elfload_n_segments(obj), 4);
    elfload_free(obj);
}
END_TEST

START_TEST(test_reloc_symbols)
{
    ElfObject *obj = load_reloc();
    ck_assert_uint_eq(sym(obj, "_start"), 0x00401000);
    ck_assert_uint_eq(sym(obj, "local_fn"), 0x0040101F);   /* local symbols too */
    ck_assert_uint_eq(sym(obj, "counter"), 0x00402004);
    ck_assert_uint_eq(sym(obj, "ptr_to_start"), 0x00402008);
    ck_assert_uint_eq(sym(obj, "pc_table"), 0x00402010);
    ck_assert_uint_eq(sym(obj, "table"), 0x00403002);
    ck_assert_uint_eq(sym(obj, "buf"), 0x00404000);
    uint32_t a;
    ck_assert(!elfload_symbol(obj, "ext_func", &a));   /* not defined by the object */
    ck_assert(!elfload_symbol(obj, ".text", &a));      /* section symbols are not names */
    ck_assert(!elfload_symbol(obj, "nonexistent", &a));
    ck_assert(elfload_entry(obj, &a));
    ck_assert_uint_eq(a, 0x00401000);

    const char *name;
    uint32_t off;
    ck_assert(elfload_symbol_at(obj, 0x00401005, &name, &off));
    ck_assert_str_eq(name, "_start");
    ck_assert_uint_eq(off, 5);
    ck_assert(elfload_symbol_at(obj, 0x0040101F, &name, &off));
    ck_assert_str_eq(name, "local_fn");
    ck_assert_uint_eq(off, 0);
    ck_assert(elfload_symbol_at(obj, 0x00402006, &name, &off));
    ck_assert_str_eq(name, "counter");
    ck_assert_uint_eq(off, 2);
    ck_assert(!elfload_symbol_at(obj, 0x00402000, &name, &off)); /* before .data's first */
    ck_assert(!elfload_symbol_at(obj, 0x00405000, &name, &off)); /* in no segment */
    elfload_free(obj);
}
END_TEST

/* The symbol called name in a raw ELF32's .symtab. */
static Elf32_Sym *raw_symbol(uint8_t *img, const char *name)
{
    Elf32_Shdr *st = raw_section(img, ".symtab", NULL);
    Elf32_Shdr *str = raw_section(img, ".strtab", NULL);
    Elf32_Sym *s = (Elf32_Sym *)(img + st->sh_offset);
    for (unsigned i = 0; i < st->sh_size / sizeof *s; i++)
        if (strcmp((char *)img + str->sh_offset + s[i].st_name, name) == 0)
            return &s[i];
    ck_abort_msg("no symbol %s", name);
    return NULL;
}

START_TEST(test_global_beats_local)
{
    /* Rename the local local_fn (0x40101F, listed before the globals) to
     * _start: the global _start (0x401000) must still win the name. */
    char *p = build_path("tests/cpu/data/reloc.o");
    size_t size;
    uint8_t *img = read_all(p, &size);
    raw_symbol(img, "local_fn")->st_name = raw_symbol(img, "_start")->st_name;
    ElfObject *obj = elfload_memory("renamed.o", img, size, &reloc_opts, NULL);
    ck_assert(obj != NULL);
    ck_assert_uint_eq(sym(obj, "_start"), 0x00401000);
    const char *name;
    uint32_t off;
    ck_assert(elfload_symbol_at(obj, 0x00401020 - 1, &name, &off));
    ck_assert_str_eq(name, "_start");          /* the global, 0x1F past its address */
    ck_assert_uint_eq(off, 0x1F);
    elfload_free(obj);
    g_free(img);
    g_free(p);
}
END_TEST

/* ---- placement --------------------------------------------------------- */

START_TEST(test_pack_default)
{
    char *p = build_path("tests/cpu/data/reloc.o");
    ElfLoadOptions o = { .base = 0x10000, .externs = reloc_externs, .n_externs = 2 };
    ElfObject *obj = load_ok(p, &o);
    /* One after another, each on a new 4 KiB page, in section order. */
    ck_assert_uint_eq(seg(obj, ".text")->vaddr, 0x10000);
    ck_assert_uint_eq(seg(obj, ".data")->vaddr, 0x11000);
    ck_assert_uint_eq(seg(obj, ".rodata")->vaddr, 0x12000);
    ck_assert_uint_eq(seg(obj, ".bss")->vaddr, 0x13000);
    /* mov eax, [counter] now reads 0x11000 + 4 */
    const uint8_t *t = seg(obj, ".text")->bytes;
    ck_assert_uint_eq(t[6] | t[7] << 8 | t[8] << 16 | (uint32_t)t[9] << 24, 0x11004);
    elfload_free(obj);

    o.base = 0x10010;            /* rounded up to the next page */
    obj = load_ok(p, &o);
    ck_assert_uint_eq(seg(obj, ".text")->vaddr, 0x11000);
    ck_assert_uint_eq(seg(obj, ".bss")->vaddr, 0x14000);
    elfload_free(obj);
    g_free(p);
}
END_TEST

typedef struct {
    int calls;
    bool saw_text;
} PlaceLog;

static bool place_text(void *data, const char *section, uint32_t size, uint32_t align,
                       unsigned flags, uint32_t *addr)
{
    PlaceLog *log = data;
    log->calls++;
    if (strcmp(section, ".text") != 0)
        return false;
    /* .text: 0x20 bytes, nasm's 16-byte alignment, executable */
    ck_assert_uint_eq(size, 0x20);
    ck_assert_uint_eq(align, 16);
    ck_assert_uint_eq(flags, ELFLOAD_X);
    log->saw_text = true;
    *addr = 0x8000;
    return true;
}

START_TEST(test_place_callback)
{
    char *p = build_path("tests/cpu/data/reloc.o");
    static const ElfAddr table[] = { { ".text", 0x9000 }, { ".bss", 0x30000 } };
    PlaceLog log = { 0 };
    ElfLoadOptions o = { .base = 0x20000, .sections = table, .n_sections = 2,
                         .place = place_text, .place_data = &log,
                         .externs = reloc_externs, .n_externs = 2 };
    ElfObject *obj = load_ok(p, &o);
    ck_assert_int_eq(log.calls, 4);                         /* every SHF_ALLOC section */
    ck_assert(log.saw_text);
    ck_assert_uint_eq(seg(obj, ".text")->vaddr, 0x8000);    /* callback beats the table */
    ck_assert_uint_eq(seg(obj, ".data")->vaddr, 0x20000);   /* packed */
    ck_assert_uint_eq(seg(obj, ".rodata")->vaddr, 0x21000);
    ck_assert_uint_eq(seg(obj, ".bss")->vaddr, 0x30000);    /* table */
    ck_assert_uint_eq(sym(obj, "local_fn"), 0x801F);
    elfload_free(obj);
    g_free(p);
}
END_TEST

static void assert_error(GError *e, int code, const char *file, const char *fragment)
{
    ck_assert_msg(e != NULL, "no error, expected '%s'", fragment);
    ck_assert_msg(e->domain == ELFLOAD_ERROR, "domain %s", g_quark_to_string(e->domain));
    ck_assert_msg(e->code == code, "code %d, expected %d: %s", e->code, code, e->message);
    ck_assert_msg(g_str_has_prefix(e->message, file), "'%s' does not name %s", e->message, file);
    ck_assert_msg(strstr(e->message, fragment), "'%s' lacks '%s'", e->message, fragment);
}

static void expect_place_error(const ElfAddr *sections, size_t n, const char *fragment)
{
    char *p = build_path("tests/cpu/data/reloc.o");
    ElfLoadOptions o = { .base = 0x100000, .sections = sections, .n_sections = n,
                         .externs = reloc_externs, .n_externs = 2 };
    GError *e = NULL;
    ck_assert(elfload_file(p, &o, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_PLACEMENT, p, fragment);
    g_error_free(e);
    g_free(p);
}

START_TEST(test_place_errors)
{
    /* .text is 0x20 bytes: [0x1000, 0x1020) and [0x1010, 0x1024) share 0x10 bytes */
    static const ElfAddr overlap[] = { { ".text", 0x1000 }, { ".data", 0x1010 } };
    expect_place_error(overlap, 2, "sections .text [0x00001000, 0x00001020) and .data "
                                   "[0x00001010, 0x00001024) overlap");
    /* .data has sh_addralign 4 */
    static const ElfAddr misaligned[] = { { ".data", 0x2002 } };
    expect_place_error(misaligned, 1, "section .data placed at 0x00002002, not a multiple of "
                                      "its alignment 4");
    /* .bss is 64 bytes: 0xFFFFFFF0 + 64 > 2^32 */
    static const ElfAddr wrap[] = { { ".bss", 0xFFFFFFF0 } };
    expect_place_error(wrap, 1, "runs past 4 GiB");
    /* Adjacent is fine: .data right after .text's 0x20 bytes. */
    char *p = build_path("tests/cpu/data/reloc.o");
    static const ElfAddr adjacent[] = { { ".text", 0x1000 }, { ".data", 0x1020 } };
    ElfLoadOptions o = { .base = 0x100000, .sections = adjacent, .n_sections = 2,
                         .externs = reloc_externs, .n_externs = 2 };
    elfload_free(load_ok(p, &o));
    g_free(p);
}
END_TEST

/* ---- external symbols ---------------------------------------------------- */

START_TEST(test_externs)
{
    char *p = build_path("tests/cpu/data/reloc.o");
    GError *e = NULL;
    ck_assert(elfload_file(p, NULL, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_UNDEFINED, p, "undefined symbol 'ext_func'");
    g_clear_error(&e);

    ElfLoadOptions o = { .base = 0x1000, .externs = reloc_externs, .n_externs = 1 };
    ck_assert(elfload_file(p, &o, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_UNDEFINED, p, "undefined symbol 'ext_data'");
    g_clear_error(&e);

    /* Other values: call ext_func at .text 0x1000 with ext_func = 0x1000
     * jumps to itself: 0x1000 - 4 - 0x1001 = -5 = 0xFFFFFFFB. */
    static const ElfAddr ext[] = { { "ext_data", 0 }, { "ext_func", 0x1000 } };
    o.externs = ext;
    o.n_externs = 2;
    ElfObject *obj = load_ok(p, &o);
    static const uint8_t call_self[5] = { 0xE8, 0xFB, 0xFF, 0xFF, 0xFF };
    ck_assert_mem_eq(seg(obj, ".text")->bytes, call_self, 5);
    elfload_free(obj);
    g_free(p);
}
END_TEST

/* ---- against GNU ld ------------------------------------------------------ */

/* Link obj_rel at the addresses ld gave each section in exe_path and
 * compare every loaded byte with the executable's. */
static void compare_with_ld(const char *obj_rel, const char *exe_rel)
{
    char *op = build_path(obj_rel), *ep = build_path(exe_rel);
    size_t size;
    uint8_t *img = read_all(ep, &size);
    Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
    Elf32_Shdr *sh = (Elf32_Shdr *)(img + eh->e_shoff);
    const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
    ElfAddr *where = g_new0(ElfAddr, eh->e_shnum);
    size_t n = 0;
    for (unsigned i = 1; i < eh->e_shnum; i++)
        if (sh[i].sh_flags & SHF_ALLOC)
            where[n++] = (ElfAddr){ names + sh[i].sh_name, sh[i].sh_addr };
    ElfLoadOptions o = { .sections = where, .n_sections = n,
                         .externs = reloc_externs, .n_externs = 2 };
    ElfObject *rel = load_ok(op, &o);
    ElfObject *exe = load_ok(ep, NULL);
    ck_assert(elfload_is_executable(exe));
    ck_assert_uint_gt(elfload_n_segments(rel), 0);
    for (size_t i = 0; i < elfload_n_segments(rel); i++) {
        const ElfSegment *s = elfload_segment(rel, i);
        bool found = false;
        for (size_t k = 0; k < elfload_n_segments(exe) && !found; k++) {
            const ElfSegment *x = elfload_segment(exe, k);
            if (s->vaddr >= x->vaddr && (uint64_t)s->vaddr + s->size <= (uint64_t)x->vaddr + x->size) {
                found = true;
                uint32_t b = 0;
                while (b < s->size && seg_byte(s, b) == seg_byte(x, s->vaddr - x->vaddr + b))
                    b++;
                ck_assert_msg(b == s->size, "%s %s+0x%x differs from ld's", obj_rel, s->name, b);
                ck_assert_msg(!(s->flags & ELFLOAD_W) || (x->flags & ELFLOAD_W), "%s", s->name);
                ck_assert_msg(!(s->flags & ELFLOAD_X) || (x->flags & ELFLOAD_X), "%s", s->name);
            }
        }
        ck_assert_msg(found, "%s %s at 0x%08x not in ld's segments", obj_rel, s->name, s->vaddr);
    }
    uint32_t e_rel, e_exe;
    ck_assert(elfload_entry(rel, &e_rel) && elfload_entry(exe, &e_exe));
    ck_assert_uint_eq(e_rel, e_exe);
    ck_assert_uint_eq(e_exe, eh->e_entry);
    ck_assert_uint_eq(sym(exe, "_start"), eh->e_entry);      /* read from .symtab */
    elfload_free(rel);
    elfload_free(exe);
    g_free(where);
    g_free(img);
    g_free(op);
    g_free(ep);
}

START_TEST(test_reloc_vs_ld)
{
    compare_with_ld("tests/cpu/data/reloc.o", "tests/cpu/data/reloc");
}
END_TEST

static const char *const guests[] = {
    "workloads/guest/hello", "workloads/guest/pageloop", "workloads/guest/dtlb64",
    "workloads/guest/tests/arith", "workloads/guest/tests/shift",
    "workloads/guest/tests/muldiv", "workloads/guest/tests/string",
    "workloads/guest/tests/control", "workloads/guest/tests/stack",
    "workloads/guest/tests/movx", "workloads/guest/tests/lea",
};

START_TEST(test_guests_vs_ld)
{
    char *obj = g_strconcat(guests[_i], ".o", NULL);
    char *base = g_path_get_basename(guests[_i]);
    char *exe = g_strconcat("tests/cpu/data/", base, ".native", NULL);
    compare_with_ld(obj, exe);
    g_free(obj);
    g_free(base);
    g_free(exe);
}
END_TEST

START_TEST(test_exec)
{
    char *p = build_path("tests/cpu/data/reloc");
    ElfObject *exe = load_ok(p, &reloc_opts);    /* options are ignored for ET_EXEC */
    uint32_t entry;
    ck_assert(elfload_entry(exe, &entry));
    ck_assert_uint_eq(entry, 0x00401000);
    ck_assert_uint_eq(sym(exe, "counter"), 0x00402004);
    ck_assert_uint_eq(sym(exe, "local_fn"), 0x0040101F);
    /* the segment holding .text is executable, not writable; .bss is zero */
    bool text = false, bss = false;
    for (size_t i = 0; i < elfload_n_segments(exe); i++) {
        const ElfSegment *s = elfload_segment(exe, i);
        if (s->vaddr <= 0x401000 && 0x401000 < s->vaddr + s->size) {
            ck_assert_uint_eq(s->flags, ELFLOAD_X);
            ck_assert_uint_eq(s->bytes[0x401000 - s->vaddr], 0xE8);
            text = true;
        }
        if (s->vaddr <= 0x404000 && 0x404040 <= s->vaddr + s->size) {
            ck_assert(s->flags & ELFLOAD_W);
            for (uint32_t a = 0x404000; a < 0x404040; a++)
                ck_assert_uint_eq(seg_byte(s, a - s->vaddr), 0);
            bss = true;
        }
    }
    ck_assert(text && bss);
    elfload_free(exe);
    g_free(p);
}
END_TEST

/* ---- physical memory ------------------------------------------------------ */

START_TEST(test_write_physmem)
{
    /* A kernel-style image linked at 3 GiB, stored at physical 0x1000... */
    static const ElfAddr high[] = { { ".text", 0xC0001000 }, { ".data", 0xC0002000 },
                                    { ".rodata", 0xC0003000 }, { ".bss", 0xC0004000 } };
    char *p = build_path("tests/cpu/data/reloc.o");
    ElfLoadOptions o = { .sections = high, .n_sections = 4, .externs = reloc_externs,
                         .n_externs = 2 };
    ElfObject *obj = load_ok(p, &o);
    PhysMem *pm = physmem_new();
    physmem_write32(pm, 0x4000, 0xFFFFFFFF);     /* stale data where .bss goes */
    GError *e = NULL;
    ck_assert(elfload_write_physmem(obj, pm, 0xC0000000, &e));
    ck_assert_uint_eq(physmem_read8(pm, 0x1000), 0xE8);
    ck_assert_uint_eq(physmem_read32(pm, 0x1006), 0xC0002004);   /* mov eax, [counter] */
    ck_assert_uint_eq(physmem_read32(pm, 0x2004), 0x12345678);
    ck_assert_uint_eq(physmem_read32(pm, 0x2008), 0xC0001000);   /* dd _start */
    ck_assert_uint_eq(physmem_read8(pm, 0x3002), 1);
    ck_assert_uint_eq(physmem_read32(pm, 0x4000), 0);            /* .bss zeroed */

    /* offset above a segment: negative physical address, nothing written */
    PhysMem *pm2 = physmem_new();
    ck_assert(!elfload_write_physmem(obj, pm2, 0xC0002000, &e));
    assert_error(e, ELFLOAD_ERROR_RANGE, p, ".text at 0xc0001000");
    g_clear_error(&e);
    ck_assert_uint_eq(physmem_frames_used(pm2), 0);
    /* negative offset: identity + 64 GiB - 8 KiB puts .bss past the limit */
    ck_assert(!elfload_write_physmem(obj, pm2, -(int64_t)(PHYS_ADDR_LIMIT - 0x2000 - 0xC0000000), &e));
    g_clear_error(&e);
    ck_assert_uint_eq(physmem_frames_used(pm2), 0);
    physmem_free(pm2);
    physmem_free(pm);
    elfload_free(obj);
    g_free(p);
}
END_TEST

/* ---- bad files ---------------------------------------------------------------- */

typedef void (*Corrupt)(uint8_t *img, size_t *size);

/* Write reloc.o corrupted by fn to a temporary file, load it with the
 * reloc options, expect code and fragment in a message naming the file. */
static void expect_bad(Corrupt fn, int code, const char *fragment)
{
    char *good = build_path("tests/cpu/data/reloc.o");
    size_t size;
    uint8_t *img = read_all(good, &size);
    fn(img, &size);
    char *dir = g_dir_make_tmp("vmsplit-elfload-XXXXXX", NULL);
    ck_assert(dir != NULL);
    char *bad = g_build_filename(dir, "bad.o", NULL);
    ck_assert(g_file_set_contents(bad, (const char *)img, (gssize)size, NULL));
    GError *e = NULL;
    ElfObject *obj = elfload_file(bad, &reloc_opts, &e);
    ck_assert_msg(obj == NULL, "loaded a bad file (expected '%s')", fragment);
    assert_error(e, code, bad, fragment);
    g_error_free(e);
    g_unlink(bad);
    g_rmdir(dir);
    g_free(bad);
    g_free(dir);
    g_free(img);
    g_free(good);
}

static void set16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void set32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void bad_magic(uint8_t *img, size_t *size) { (void)size; img[1] = 'X'; }
static void bad_class(uint8_t *img, size_t *size) { (void)size; img[EI_CLASS] = ELFCLASS64; }
static void bad_data(uint8_t *img, size_t *size) { (void)size; img[EI_DATA] = ELFDATA2MSB; }
static void bad_machine(uint8_t *img, size_t *size)
{
    (void)size;
    set16(img + offsetof(Elf32_Ehdr, e_machine), EM_X86_64);
}
static void bad_type(uint8_t *img, size_t *size)
{
    (void)size;
    set16(img + offsetof(Elf32_Ehdr, e_type), ET_DYN);
}
static void bad_half(uint8_t *img, size_t *size) { (void)img; *size /= 2; }
static void bad_short(uint8_t *img, size_t *size) { (void)img; *size = 30; }

/* First entry of .rel.text (call ext_func, R_386_PC32) */
static uint8_t *first_rel(uint8_t *img)
{
    return img + raw_section(img, ".rel.text", NULL)->sh_offset;
}
static void bad_rel_type(uint8_t *img, size_t *size)
{
    (void)size;
    Elf32_Rel *r = (Elf32_Rel *)first_rel(img);
    set32((uint8_t *)&r->r_info, ELF32_R_INFO(ELF32_R_SYM(r->r_info), R_386_GOT32));
}
static void bad_rel_sym(uint8_t *img, size_t *size)
{
    (void)size;
    Elf32_Rel *r = (Elf32_Rel *)first_rel(img);
    set32((uint8_t *)&r->r_info, ELF32_R_INFO(0xFFFF, R_386_PC32));
}
static void bad_rel_offset(uint8_t *img, size_t *size)
{
    (void)size;
    Elf32_Rel *r = (Elf32_Rel *)first_rel(img);
    set32((uint8_t *)&r->r_offset, 0x1E);        /* 4 bytes from 0x1E pass .text's 0x20 */
}
static void bad_rela(uint8_t *img, size_t *size)
{
    (void)size;
    raw_section(img, ".rel.text", NULL)->sh_type = SHT_RELA;
}
static void bad_align(uint8_t *img, size_t *size)
{
    (void)size;
    raw_section(img, ".data", NULL)->sh_addralign = 3;
}
static void bad_huge_bss(uint8_t *img, size_t *size)
{
    (void)size;
    raw_section(img, ".bss", NULL)->sh_size = 0x20000000;    /* 512 MiB */
}
static void bad_common(uint8_t *img, size_t *size)
{
    (void)size;
    raw_symbol(img, "counter")->st_shndx = SHN_COMMON;
}

/* Issue 19's crash: an inactive (SHT_NULL) header flagged SHF_ALLOC with an
 * offset far past the file. check_sections skipped SHT_NULL, read_sections
 * copied from img + 0xd0000160 (SIGSEGV). The gABI leaves an inactive
 * header's other fields undefined, so it cannot be loaded. */
static void bad_null_alloc(uint8_t *img, size_t *size)
{
    (void)size;
    Elf32_Shdr *sh = raw_section(img, ".rodata", NULL);
    sh->sh_type = SHT_NULL;
    sh->sh_offset = 0xd0000160;
}
/* Every header used is checked, whatever its type: a relocation section
 * whose entries lie past the end of the file. */
static void bad_rel_extent(uint8_t *img, size_t *size)
{
    (void)size;
    raw_section(img, ".rel.data", NULL)->sh_offset = 0xfffffff0;
}

START_TEST(test_bad_files)
{
    expect_bad(bad_null_alloc, ELFLOAD_ERROR_FORMAT,
               "section [3] .rodata: type SHT_NULL (an inactive header) is marked SHF_ALLOC");
    expect_bad(bad_rel_extent, ELFLOAD_ERROR_FORMAT,
               "truncated: section [9] .rel.data needs bytes up to 4294967304");
    expect_bad(bad_magic, ELFLOAD_ERROR_FORMAT, "not an ELF file");
    expect_bad(bad_class, ELFLOAD_ERROR_FORMAT, "not ELF32: class 2 (ELFCLASS64)");
    expect_bad(bad_data, ELFLOAD_ERROR_FORMAT, "not little-endian");
    expect_bad(bad_machine, ELFLOAD_ERROR_FORMAT, "e_machine is 62 (EM_X86_64), expected 3 (EM_386)");
    expect_bad(bad_type, ELFLOAD_ERROR_FORMAT, "ET_DYN");
    expect_bad(bad_half, ELFLOAD_ERROR_FORMAT, "truncated");
    expect_bad(bad_short, ELFLOAD_ERROR_FORMAT, "truncated: 30 bytes, an ELF32 header needs 52");
    expect_bad(bad_rel_type, ELFLOAD_ERROR_RELOC,
               "unknown relocation type 3 (R_386_GOT32) at .text+0x1");
    expect_bad(bad_rel_sym, ELFLOAD_ERROR_FORMAT, ".rel.text: symbol index 65535 out of range");
    expect_bad(bad_rel_offset, ELFLOAD_ERROR_RELOC,
               "relocation at .text+0x1e lies outside the section's 32 bytes");
    expect_bad(bad_rela, ELFLOAD_ERROR_RELOC, "SHT_RELA");
    expect_bad(bad_align, ELFLOAD_ERROR_FORMAT, "section .data: alignment 3 is not a power of two");
    expect_bad(bad_common, ELFLOAD_ERROR_FORMAT, "common symbol 'counter'");
    expect_bad(bad_huge_bss, ELFLOAD_ERROR_FORMAT,
               ".bss: 0x20000000 bytes, more than the loader's limit of 256 MiB");
}
END_TEST

/* Every prefix shorter than the extent of the header tables and section
 * contents (computed here from the raw headers) is "truncated"; the file
 * cut exactly there loads. */
START_TEST(test_truncation_sweep)
{
    char *p = build_path("tests/cpu/data/reloc.o");
    size_t size;
    uint8_t *img = read_all(p, &size);
    Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
    Elf32_Shdr *sh = (Elf32_Shdr *)(img + eh->e_shoff);
    size_t need = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    for (unsigned i = 1; i < eh->e_shnum; i++)
        if (sh[i].sh_type != SHT_NOBITS)
            need = MAX(need, (size_t)sh[i].sh_offset + sh[i].sh_size);
    ck_assert_uint_le(need, size);
    for (size_t n = 0; n < need; n++) {
        GError *e = NULL;
        ElfObject *obj = elfload_memory("cut.o", img, n, &reloc_opts, &e);
        ck_assert_msg(obj == NULL, "a %zu-byte prefix loaded", n);
        assert_error(e, ELFLOAD_ERROR_FORMAT, "cut.o: truncated", "truncated");
        g_error_free(e);
    }
    ElfObject *obj = elfload_memory("cut.o", img, need, &reloc_opts, NULL);
    ck_assert(obj != NULL);
    elfload_free(obj);
    g_free(img);
    g_free(p);
}
END_TEST

/* Never a crash: random corruptions of a good object and executable either
 * load or fail with a message naming the file (run under ASan/UBSan in CI).
 * Fixed seed, so a failure reproduces. */
START_TEST(test_fuzz)
{
    static const char *const files[] = { "tests/cpu/data/reloc.o", "tests/cpu/data/reloc" };
    GRand *rng = g_rand_new_with_seed(4);
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        char *p = build_path(files[f]);
        size_t size;
        uint8_t *good = read_all(p, &size);
        uint8_t *img = g_malloc(size);
        for (int round = 0; round < 1000; round++) {
            memcpy(img, good, size);
            int flips = g_rand_int_range(rng, 1, 5);
            for (int k = 0; k < flips; k++) {
                /* bias towards the headers, where a flip changes structure */
                size_t lim = g_rand_boolean(rng) ? MIN(size, 0x300) : size;
                img[g_rand_int_range(rng, 0, (gint32)lim)] ^= (uint8_t)g_rand_int_range(rng, 1, 256);
            }
            GError *e = NULL;
            ElfObject *obj = elfload_memory("fuzz.o", img, size, &reloc_opts, &e);
            if (obj) {
                for (size_t i = 0; i < elfload_n_segments(obj); i++) {
                    const ElfSegment *s = elfload_segment(obj, i);
                    ck_assert(s->filesz <= s->size && s->bytes != NULL);
                    ck_assert_uint_le(s->size, ELFLOAD_MAX_SIZE);
                }
                elfload_free(obj);
            } else {
                ck_assert(e && g_str_has_prefix(e->message, "fuzz.o: "));
                g_error_free(e);
            }
        }
        g_free(img);
        g_free(good);
        g_free(p);
    }
    g_rand_free(rng);
}
END_TEST

START_TEST(test_bad_exec)
{
    char *p = build_path("tests/cpu/data/reloc");
    size_t size;
    uint8_t *img = read_all(p, &size);
    GError *e = NULL;
    ck_assert(elfload_memory("exe", img, size / 2, NULL, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_FORMAT, "exe", "truncated");
    g_clear_error(&e);
    Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
    Elf32_Phdr *ph = (Elf32_Phdr *)(img + eh->e_phoff);
    ph[0].p_type = PT_INTERP;
    ck_assert(elfload_memory("exe", img, size, NULL, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_FORMAT, "exe", "dynamically linked");
    g_clear_error(&e);
    g_free(img);
    g_free(p);
}
END_TEST

/* ELFLOAD_MAX_TOTAL bounds the sum of the sections (or segments) loaded,
 * not only each one: reloc.o with .rodata turned into a NOBITS section and
 * .rodata and .bss grown. Sizes: .text 0x20, .data 0x14 (readelf). */
static uint8_t *grown_reloc(size_t *size, uint32_t rodata, uint32_t bss)
{
    char *p = build_path("tests/cpu/data/reloc.o");
    uint8_t *img = read_all(p, size);
    Elf32_Shdr *ro = raw_section(img, ".rodata", NULL);
    ro->sh_type = SHT_NOBITS;
    ro->sh_size = rodata;
    raw_section(img, ".bss", NULL)->sh_size = bss;
    g_free(p);
    return img;
}

START_TEST(test_total_limit)
{
    ElfLoadOptions pack = { .base = 0x10000, .externs = reloc_externs, .n_externs = 2 };
    size_t size;
    GError *e = NULL;
    /* 0x34 + 0x8000000 - 0x34 + 0x8000000 = 256 MiB exactly: loads. */
    uint8_t *img = grown_reloc(&size, 0x8000000 - 0x34, 0x8000000);
    ElfObject *obj = elfload_memory("big.o", img, size, &pack, &e);
    ck_assert_msg(obj != NULL, "%s", e ? e->message : "");
    ck_assert_uint_eq(seg(obj, ".bss")->size, 0x8000000);
    elfload_free(obj);
    g_free(img);
    /* One byte more: refused at .bss, each section being under 256 MiB. */
    img = grown_reloc(&size, 0x8000000 - 0x33, 0x8000000);
    ck_assert(elfload_memory("big.o", img, size, &pack, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_FORMAT, "big.o",
                 ".bss: 0x8000000 bytes after 0x8000001 bytes of other sections or segments, "
                 "more than the loader's limit of 256 MiB in all");
    g_clear_error(&e);
    g_free(img);
    /* An executable: PT_LOAD[1] and [2] of 192 MiB each. */
    char *p = build_path("tests/cpu/data/reloc");
    img = read_all(p, &size);
    Elf32_Phdr *ph = (Elf32_Phdr *)(img + ((Elf32_Ehdr *)img)->e_phoff);
    ph[1].p_memsz = ph[2].p_memsz = 0xC000000;
    ck_assert(elfload_memory("exe", img, size, NULL, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_FORMAT, "exe",
                 "PT_LOAD[2]: 0xc000000 bytes after 0xc000094 bytes of other sections or "
                 "segments, more than the loader's limit of 256 MiB in all");
    g_clear_error(&e);
    g_free(img);
    g_free(p);
}
END_TEST

START_TEST(test_io_error)
{
    GError *e = NULL;
    ck_assert(elfload_file("/nonexistent/prog.o", NULL, &e) == NULL);
    assert_error(e, ELFLOAD_ERROR_IO, "/nonexistent/prog.o", "cannot read");
    g_error_free(e);
}
END_TEST

static Suite *elfload_suite(void)
{
    Suite *s = suite_create("elfload");
    TCase *tc = tcase_create("link");
    tcase_add_test(tc, test_reloc_text);
    tcase_add_test(tc, test_reloc_data);
    tcase_add_test(tc, test_reloc_symbols);
    tcase_add_test(tc, test_global_beats_local);
    tcase_add_test(tc, test_pack_default);
    tcase_add_test(tc, test_place_callback);
    tcase_add_test(tc, test_place_errors);
    tcase_add_test(tc, test_externs);
    tcase_add_test(tc, test_write_physmem);
    suite_add_tcase(s, tc);
    tc = tcase_create("ld");
    tcase_add_test(tc, test_reloc_vs_ld);
    tcase_add_loop_test(tc, test_guests_vs_ld, 0, G_N_ELEMENTS(guests));
    tcase_add_test(tc, test_exec);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad");
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_truncation_sweep);
    tcase_add_test(tc, test_fuzz);
    tcase_add_test(tc, test_bad_exec);
    tcase_add_test(tc, test_io_error);
    tcase_add_test(tc, test_total_limit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(elfload_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
