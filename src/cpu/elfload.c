/* ELF32 i386 loader and one-object linker (see elfload.h).
 *
 * The raw header and the extent of every table are checked here before
 * libelf sees the image, so a truncated or inconsistent file gets a message
 * that says what is wrong instead of libelf's generic "invalid ELF file".
 * libelf then does the parsing (section headers, string tables, symbols,
 * relocation entries). The bytes of every section or segment are copied
 * out, so the ElfObject owns all it points to and the image is freed after
 * loading. */
#include "cpu/elfload.h"

#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#define PACK_ALIGN 4096u         /* packing: each section starts a new page */

G_DEFINE_QUARK(vmsplit-elfload-error-quark, elfload_error)

typedef struct {
    char *name;
    uint32_t addr;
    uint32_t size;
    uint32_t align;
    unsigned flags;
    bool alloc, nobits;
    uint8_t *bytes;              /* alloc sections only: size bytes */
} Sect;

typedef struct {
    uint32_t addr;
    const char *name;            /* key in ElfObject.symbols */
    bool global;
} SymEntry;

struct ElfObject {
    char *name;
    bool exec;
    bool has_entry;
    uint32_t entry;
    GArray *segs;                /* ElfSegment; name and bytes owned */
    GHashTable *symbols;         /* name -> SymEntry* */
    GArray *by_addr;             /* SymEntry, sorted by address */
};

/* Loading state (one call of elfload_memory). */
typedef struct {
    const char *name;
    const uint8_t *img;
    size_t size;
    Elf *elf;
    size_t shnum, shstrndx;
    Sect *sect;                  /* [shnum], ET_REL */
    size_t symtab;               /* section index of .symtab, 0: none */
    uint32_t *symval;            /* ET_REL: resolved value per symbol */
    bool *symok;                 /* has an address (not in a non-alloc section) */
    size_t nsyms;
    uint64_t loaded;             /* bytes allocated for sections or segments so far */
    ElfObject *obj;
} Loader;

/* Set err to "name: message"; returns false for `return fail(...)`. */
static bool fail(GError **err, int code, const char *name, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static bool fail(GError **err, int code, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, ELFLOAD_ERROR, code, "%s: %s", name, msg);
    g_free(msg);
    return false;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Identification, header fields and table extents, from the raw bytes
 * (ELF gABI ch. 4 "ELF Header"). */
#define EH(field) (h + offsetof(Elf32_Ehdr, field))
static bool check_header(const Loader *ld, GError **err)
{
    const uint8_t *h = ld->img;
    size_t n = ld->size;
    if (n < SELFMAG || memcmp(h, ELFMAG, SELFMAG) != 0) {
        if (n < SELFMAG && memcmp(h, ELFMAG, n) == 0)
            return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                        "truncated: %zu bytes, not even the ELF magic", n);
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "not an ELF file (no \\177ELF magic number)");
    }
    if (n < sizeof(Elf32_Ehdr))
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "truncated: %zu bytes, an ELF32 header needs %zu", n, sizeof(Elf32_Ehdr));
    if (h[EI_CLASS] != ELFCLASS32)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "not ELF32: class %u%s, expected ELFCLASS32 (1)", h[EI_CLASS],
                    h[EI_CLASS] == ELFCLASS64 ? " (ELFCLASS64)" : "");
    if (h[EI_DATA] != ELFDATA2LSB)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "not little-endian: data encoding %u, expected ELFDATA2LSB (1)", h[EI_DATA]);
    if (h[EI_VERSION] != EV_CURRENT || le32(EH(e_version)) != EV_CURRENT)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "unsupported ELF version %u",
                    h[EI_VERSION]);
    unsigned type = le16(EH(e_type)), machine = le16(EH(e_machine));
    if (machine != EM_386)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "e_machine is %u%s, expected %u (EM_386)",
                    machine, machine == EM_X86_64 ? " (EM_X86_64)" : "", EM_386);
    if (type != ET_REL && type != ET_EXEC)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "e_type is %u%s, expected ET_REL (1) or ET_EXEC (2)", type,
                    type == ET_DYN ? " (ET_DYN: shared objects and PIE are not supported)" : "");
    uint32_t phoff = le32(EH(e_phoff)), shoff = le32(EH(e_shoff));
    unsigned phentsize = le16(EH(e_phentsize)), phnum = le16(EH(e_phnum));
    unsigned shentsize = le16(EH(e_shentsize)), shnum = le16(EH(e_shnum));
    unsigned shstrndx = le16(EH(e_shstrndx));
    if (shnum == 0 && shoff != 0)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "extended section numbering is not supported");
    if ((shnum && shentsize != sizeof(Elf32_Shdr)) || (phnum && phentsize != sizeof(Elf32_Phdr)))
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "header table entry sizes %u/%u, expected %zu/%zu", shentsize, phentsize,
                    sizeof(Elf32_Shdr), sizeof(Elf32_Phdr));
    if ((uint64_t)shoff + (uint64_t)shnum * shentsize > n ||
        (uint64_t)phoff + (uint64_t)phnum * phentsize > n)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "truncated: the header tables end at byte %" G_GUINT64_FORMAT
                    ", the file has %zu bytes",
                    MAX((uint64_t)shoff + (uint64_t)shnum * shentsize,
                        (uint64_t)phoff + (uint64_t)phnum * phentsize), n);
    if (shnum && shstrndx >= shnum)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "section-name table index %u out of range", shstrndx);
    return true;
}

/* size zeroed bytes for a section or segment, within ELFLOAD_MAX_SIZE and,
 * with those allocated before, within ELFLOAD_MAX_TOTAL. */
static uint8_t *alloc_zeroed(Loader *ld, const char *what, uint64_t size, GError **err)
{
    if (size > ELFLOAD_MAX_SIZE) {
        fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
             "%s: 0x%" G_GINT64_MODIFIER "x bytes, more than the loader's limit of %u MiB", what,
             size, ELFLOAD_MAX_SIZE >> 20);
        return NULL;
    }
    if (ld->loaded + size > ELFLOAD_MAX_TOTAL) {
        fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
             "%s: 0x%" G_GINT64_MODIFIER "x bytes after 0x%" G_GINT64_MODIFIER
             "x bytes of other sections or segments, more than the loader's limit of %u MiB "
             "in all", what, size, ld->loaded, ELFLOAD_MAX_TOTAL >> 20);
        return NULL;
    }
    uint8_t *p = g_try_malloc0(MAX(size, 1));
    if (!p)
        fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
             "%s: 0x%" G_GINT64_MODIFIER "x bytes: out of memory", what, size);
    else
        ld->loaded += size;
    return p;
}

static const char *scn_name(const Loader *ld, const GElf_Shdr *sh)
{
    const char *s = elf_strptr(ld->elf, ld->shstrndx, sh->sh_name);
    return s ? s : "?";
}

/* One section header, every field a later step uses (gABI ch. 4
 * "Sections"): the contents of every section that has some in the file lie
 * inside it; a loadable (SHF_ALLOC) section is an active one and its
 * alignment is a power of two. read_sections, read_symbols and
 * apply_relocations then trust these fields. SHT_NULL marks an inactive
 * header whose other members are undefined, so it must not claim to be
 * loaded: read_sections would copy bytes from an offset nobody checked. */
static bool check_one_section(Loader *ld, size_t i, const GElf_Shdr *sh, GError **err)
{
    const char *nm = i == ld->shstrndx ? "(the section-name table)" : scn_name(ld, sh);
    if (sh->sh_type == SHT_NULL) {
        if (sh->sh_flags & SHF_ALLOC)
            return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                        "section [%zu] %s: type SHT_NULL (an inactive header) is marked "
                        "SHF_ALLOC", i, nm);
        return true;             /* never read */
    }
    if (sh->sh_type != SHT_NOBITS && sh->sh_offset + sh->sh_size > ld->size)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "truncated: section [%zu] %s needs bytes up to %" G_GUINT64_FORMAT
                    ", the file has %zu", i, nm, (uint64_t)(sh->sh_offset + sh->sh_size),
                    ld->size);
    if ((sh->sh_flags & SHF_ALLOC) && (sh->sh_addralign & (sh->sh_addralign - 1)))
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "section %s: alignment %" G_GUINT64_FORMAT " is not a power of two", nm,
                    (uint64_t)sh->sh_addralign);
    return true;
}

/* Every section header checked (check_one_section); names readable. */
static bool check_sections(Loader *ld, GError **err)
{
    if (elf_getshdrnum(ld->elf, &ld->shnum) != 0 ||
        elf_getshdrstrndx(ld->elf, &ld->shstrndx) != 0)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "bad section headers (%s)",
                    elf_errmsg(-1));
    /* The section-name table first: the other messages need it. */
    for (size_t k = 0; k < ld->shnum; k++) {
        size_t i = k == 0 ? ld->shstrndx : k;
        if (i == 0 || (k && i == ld->shstrndx))
            continue;
        GElf_Shdr sh;
        if (!gelf_getshdr(elf_getscn(ld->elf, i), &sh))
            return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "section %zu: %s", i, elf_errmsg(-1));
        if (!check_one_section(ld, i, &sh, err))
            return false;
    }
    return true;
}

static Elf_Data *scn_data(const Loader *ld, size_t i, const char *what, GError **err)
{
    Elf_Data *d = elf_getdata(elf_getscn(ld->elf, i), NULL);
    if (!d)
        fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "cannot read %s (section %zu): %s", what, i,
             elf_errmsg(-1));
    return d;
}

/* ---- ET_REL: sections and placement ---------------------------------- */

static bool read_sections(Loader *ld, GError **err)
{
    ld->sect = g_new0(Sect, ld->shnum);
    for (size_t i = 1; i < ld->shnum; i++) {
        Sect *s = &ld->sect[i];
        GElf_Shdr sh;
        gelf_getshdr(elf_getscn(ld->elf, i), &sh);
        s->name = g_strdup(scn_name(ld, &sh));
        if (sh.sh_type == SHT_SYMTAB) {
            if (ld->symtab)
                return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "more than one symbol table");
            ld->symtab = i;
        }
        if (!(sh.sh_flags & SHF_ALLOC))
            continue;
        s->alloc = true;
        s->nobits = sh.sh_type == SHT_NOBITS;
        s->size = (uint32_t)sh.sh_size;
        s->align = sh.sh_addralign ? (uint32_t)sh.sh_addralign : 1;
        s->flags = (sh.sh_flags & SHF_WRITE ? ELFLOAD_W : 0) |
                   (sh.sh_flags & SHF_EXECINSTR ? ELFLOAD_X : 0);
        if (!(s->bytes = alloc_zeroed(ld, s->name, s->size, err)))
            return false;
        if (!s->nobits)          /* active, within the file: check_one_section */
            memcpy(s->bytes, ld->img + sh.sh_offset, s->size);
    }
    return true;
}

static bool lookup_addr(const ElfAddr *tab, size_t n, const char *name, uint32_t *addr)
{
    for (size_t i = 0; i < n; i++)
        if (tab[i].name && strcmp(tab[i].name, name) == 0) {
            *addr = tab[i].addr;
            return true;
        }
    return false;
}

static int cmp_seg_addr(const void *a, const void *b)
{
    const ElfSegment *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* No two of segs (sections or PT_LOADs, per kind) share a byte. */
static bool check_overlap(const Loader *ld, const GArray *segs, const char *kind, GError **err)
{
    GArray *v = g_array_copy((GArray *)segs);
    g_array_sort(v, cmp_seg_addr);
    bool ok = true;
    for (unsigned i = 1; i < v->len && ok; i++) {
        const ElfSegment *a = &g_array_index(v, ElfSegment, i - 1);
        const ElfSegment *b = &g_array_index(v, ElfSegment, i);
        if ((uint64_t)a->vaddr + a->size > b->vaddr)
            ok = fail(err, ELFLOAD_ERROR_PLACEMENT, ld->name,
                      "%s %s [0x%08x, 0x%08" G_GINT64_MODIFIER "x) and %s [0x%08x, 0x%08"
                      G_GINT64_MODIFIER "x) overlap", kind, a->name, a->vaddr,
                      (uint64_t)a->vaddr + a->size, b->name, b->vaddr,
                      (uint64_t)b->vaddr + b->size);
    }
    g_array_free(v, TRUE);
    return ok;
}

/* Sections with their placed addresses, as segments (bytes not owned). */
static bool check_section_overlap(const Loader *ld, GError **err)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(ElfSegment));
    for (size_t i = 1; i < ld->shnum; i++) {
        const Sect *s = &ld->sect[i];
        if (s->alloc && s->size) {
            ElfSegment seg = { s->name, s->addr, s->size, 0, s->bytes, s->flags };
            g_array_append_val(v, seg);
        }
    }
    bool ok = check_overlap(ld, v, "sections", err);
    g_array_free(v, TRUE);
    return ok;
}

static bool place_sections(Loader *ld, const ElfLoadOptions *o, GError **err)
{
    uint64_t cursor = o->base;
    for (size_t i = 1; i < ld->shnum; i++) {
        Sect *s = &ld->sect[i];
        if (!s->alloc)
            continue;
        uint32_t addr;
        bool fixed = (o->place &&
                      o->place(o->place_data, s->name, s->size, s->align, s->flags, &addr)) ||
                     lookup_addr(o->sections, o->n_sections, s->name, &addr);
        if (!fixed) {
            uint64_t a = MAX(s->align, PACK_ALIGN);
            cursor = (cursor + a - 1) & ~(a - 1);
            if (cursor > UINT32_MAX)
                return fail(err, ELFLOAD_ERROR_PLACEMENT, ld->name,
                            "packing from 0x%08x runs past 4 GiB at section %s", o->base, s->name);
            addr = (uint32_t)cursor;
            cursor += s->size;
        } else if (addr & (s->align - 1)) {
            return fail(err, ELFLOAD_ERROR_PLACEMENT, ld->name,
                        "section %s placed at 0x%08x, not a multiple of its alignment %u",
                        s->name, addr, s->align);
        }
        if ((uint64_t)addr + s->size > (1ULL << 32))
            return fail(err, ELFLOAD_ERROR_PLACEMENT, ld->name,
                        "section %s (0x%x bytes) placed at 0x%08x runs past 4 GiB", s->name,
                        s->size, addr);
        s->addr = addr;
    }
    return check_section_overlap(ld, err);
}

/* ---- symbols --------------------------------------------------------- */

static void add_symbol(ElfObject *obj, const char *name, uint32_t addr, bool global)
{
    SymEntry *old = g_hash_table_lookup(obj->symbols, name);
    if (old && (old->global || !global))
        return;                  /* first local wins; a global replaces a local */
    SymEntry *e = g_new(SymEntry, 1);
    e->name = g_strdup(name);
    e->addr = addr;
    e->global = global;
    g_hash_table_replace(obj->symbols, (char *)e->name, e);
}

static bool sym_is_named(const GElf_Sym *sym, const char *name)
{
    unsigned t = GELF_ST_TYPE(sym->st_info);
    return name && *name && t != STT_SECTION && t != STT_FILE;
}

static bool resolve_one(Loader *ld, const ElfLoadOptions *o, size_t j, const GElf_Sym *sym,
                        const char *name, GError **err)
{
    unsigned shndx = sym->st_shndx;
    ld->symok[j] = true;
    if (shndx == SHN_UNDEF) {
        if (j == 0)
            ld->symval[j] = 0;   /* the null symbol: S = 0 */
        else if (!lookup_addr(o->externs, o->n_externs, name, &ld->symval[j])) {
            if (GELF_ST_BIND(sym->st_info) != STB_WEAK)
                return fail(err, ELFLOAD_ERROR_UNDEFINED, ld->name,
                            "undefined symbol '%s' (not in the table of external symbols)", name);
            ld->symval[j] = 0;   /* an unresolved weak reference is 0, as ld does */
        }
    } else if (shndx == SHN_ABS) {
        ld->symval[j] = (uint32_t)sym->st_value;
    } else if (shndx == SHN_COMMON) {
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "common symbol '%s' is not supported (reserve it in .bss)", name);
    } else if (shndx >= ld->shnum) {
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "symbol '%s': section index %u out of range", name, shndx);
    } else if (ld->sect[shndx].alloc) {
        ld->symval[j] = ld->sect[shndx].addr + (uint32_t)sym->st_value;
    } else {
        ld->symok[j] = false;    /* in a debug or other non-loaded section */
    }
    return true;
}

/* Resolve every symbol of .symtab (ET_REL) or read it as is (ET_EXEC). */
static bool read_symbols(Loader *ld, const ElfLoadOptions *o, GError **err)
{
    if (!ld->symtab)
        return true;
    GElf_Shdr sh;
    gelf_getshdr(elf_getscn(ld->elf, ld->symtab), &sh);
    if (sh.sh_entsize != sizeof(Elf32_Sym) || sh.sh_link >= ld->shnum)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "malformed symbol table");
    Elf_Data *d = scn_data(ld, ld->symtab, "the symbol table", err);
    if (!d)
        return false;
    ld->nsyms = sh.sh_size / sizeof(Elf32_Sym);
    ld->symval = g_new0(uint32_t, ld->nsyms);
    ld->symok = g_new0(bool, ld->nsyms);
    for (size_t j = 0; j < ld->nsyms; j++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)j, &sym))
            return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "symbol %zu: %s", j, elf_errmsg(-1));
        const char *name = elf_strptr(ld->elf, sh.sh_link, sym.st_name);
        if (!name)
            return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                        "symbol %zu: name out of the string table", j);
        if (ld->obj->exec) {     /* already linked: values are addresses */
            ld->symok[j] = sym.st_shndx == SHN_ABS ||
                           (sym.st_shndx != SHN_UNDEF && sym.st_shndx < SHN_LORESERVE);
            ld->symval[j] = (uint32_t)sym.st_value;
        } else if (!resolve_one(ld, o, j, &sym, name, err)) {
            return false;
        }
        if (ld->symok[j] && sym.st_shndx != SHN_UNDEF && sym_is_named(&sym, name))
            add_symbol(ld->obj, name, ld->symval[j], GELF_ST_BIND(sym.st_info) != STB_LOCAL);
    }
    return true;
}

/* ---- ET_REL: relocations --------------------------------------------- */

static const char *reloc_name(unsigned t)
{
    static const char *const names[] = {
        "R_386_NONE", "R_386_32", "R_386_PC32", "R_386_GOT32", "R_386_PLT32", "R_386_COPY",
        "R_386_GLOB_DAT", "R_386_JMP_SLOT", "R_386_RELATIVE", "R_386_GOTOFF", "R_386_GOTPC",
    };
    if (t < G_N_ELEMENTS(names))
        return names[t];
    switch (t) {
    case 20: return "R_386_16";
    case 21: return "R_386_PC16";
    case 22: return "R_386_8";
    case 23: return "R_386_PC8";
    default: return "?";
    }
}

static bool apply_rel(Loader *ld, const Sect *t, const GElf_Rel *r, const char *relsec,
                      GError **err)
{
    unsigned type = GELF_R_TYPE(r->r_info);
    size_t symi = GELF_R_SYM(r->r_info);
    if (type == R_386_NONE)
        return true;
    if (symi >= ld->nsyms)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "%s: symbol index %zu out of range",
                    relsec, symi);
    if (type != R_386_32 && type != R_386_PC32) {
        fail(err, ELFLOAD_ERROR_RELOC, ld->name,
             "unknown relocation type %u (%s) at %s+0x%" G_GINT64_MODIFIER "x; only R_386_32 and "
             "R_386_PC32 are supported", type, reloc_name(type), t->name, (uint64_t)r->r_offset);
        return false;
    }
    if (t->nobits || r->r_offset + 4 > t->size)
        return fail(err, ELFLOAD_ERROR_RELOC, ld->name,
                    "relocation at %s+0x%" G_GINT64_MODIFIER
                    "x lies outside the section's %u bytes",
                    t->name, (uint64_t)r->r_offset, t->nobits ? 0 : t->size);
    if (!ld->symok[symi])
        return fail(err, ELFLOAD_ERROR_RELOC, ld->name,
                    "relocation at %s+0x%" G_GINT64_MODIFIER
                    "x refers to a symbol of a non-loaded section",
                    t->name, (uint64_t)r->r_offset);
    uint8_t *field = t->bytes + r->r_offset;
    uint32_t S = ld->symval[symi], A = le32(field);
    uint32_t P = t->addr + (uint32_t)r->r_offset;
    put_le32(field, type == R_386_32 ? S + A : S + A - P);
    return true;
}

static bool apply_relocations(Loader *ld, GError **err)
{
    for (size_t i = 1; i < ld->shnum; i++) {
        GElf_Shdr sh;
        gelf_getshdr(elf_getscn(ld->elf, i), &sh);
        if (sh.sh_type != SHT_REL && sh.sh_type != SHT_RELA)
            continue;
        const char *nm = ld->sect[i].name;
        if (sh.sh_info == 0 || sh.sh_info >= ld->shnum || !ld->sect[sh.sh_info].alloc)
            continue;            /* relocates debug info or nothing we load */
        if (sh.sh_type == SHT_RELA)
            return fail(err, ELFLOAD_ERROR_RELOC, ld->name,
                        "%s: SHT_RELA relocations are not used on i386 (expected SHT_REL)", nm);
        if (sh.sh_link != ld->symtab || !ld->symtab || sh.sh_entsize != sizeof(Elf32_Rel))
            return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                        "%s: malformed relocation section", nm);
        Elf_Data *d = scn_data(ld, i, nm, err);
        if (!d)
            return false;
        size_t n = sh.sh_size / sizeof(Elf32_Rel);
        for (size_t k = 0; k < n; k++) {
            GElf_Rel r;
            if (!gelf_getrel(d, (int)k, &r))
                return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "%s: entry %zu: %s", nm, k,
                            elf_errmsg(-1));
            if (!apply_rel(ld, &ld->sect[sh.sh_info], &r, nm, err))
                return false;
        }
    }
    return true;
}

static void rel_segments(Loader *ld)
{
    for (size_t i = 1; i < ld->shnum; i++) {
        Sect *s = &ld->sect[i];
        if (!s->alloc || !s->size)
            continue;
        ElfSegment seg = { g_strdup(s->name), s->addr, s->size, s->nobits ? 0 : s->size,
                           s->bytes, s->flags };
        s->bytes = NULL;         /* ownership moves to the object */
        g_array_append_val(ld->obj->segs, seg);
    }
}

static bool load_rel(Loader *ld, const ElfLoadOptions *o, GError **err)
{
    if (!read_sections(ld, err) || !place_sections(ld, o, err) || !read_symbols(ld, o, err) ||
        !apply_relocations(ld, err))
        return false;
    rel_segments(ld);
    ld->obj->has_entry = elfload_symbol(ld->obj, "_start", &ld->obj->entry);
    return true;
}

/* ---- ET_EXEC --------------------------------------------------------- */

static bool exec_segment(Loader *ld, size_t i, const GElf_Phdr *ph, GError **err)
{
    if (ph->p_type == PT_INTERP || ph->p_type == PT_DYNAMIC)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "dynamically linked executables are not supported");
    if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
        return true;
    if (ph->p_filesz > ph->p_memsz || ph->p_vaddr + ph->p_memsz > (1ULL << 32))
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "PT_LOAD[%zu]: bad sizes or address", i);
    if (ph->p_offset + ph->p_filesz > ld->size)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name,
                    "truncated: PT_LOAD[%zu] needs bytes up to %" G_GUINT64_FORMAT
                    ", the file has %zu", i,
                    (uint64_t)(ph->p_offset + ph->p_filesz), ld->size);
    char *name = g_strdup_printf("PT_LOAD[%zu]", i);
    uint8_t *bytes = alloc_zeroed(ld, name, ph->p_memsz, err);
    if (!bytes) {
        g_free(name);
        return false;
    }
    memcpy(bytes, ld->img + ph->p_offset, ph->p_filesz);
    ElfSegment seg = { name, (uint32_t)ph->p_vaddr, (uint32_t)ph->p_memsz,
                       (uint32_t)ph->p_filesz, bytes,
                       (ph->p_flags & PF_W ? ELFLOAD_W : 0) |
                           (ph->p_flags & PF_X ? ELFLOAD_X : 0) };
    g_array_append_val(ld->obj->segs, seg);
    return true;
}

static bool load_exec(Loader *ld, GError **err)
{
    size_t phnum;
    if (elf_getphdrnum(ld->elf, &phnum) != 0)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "bad program headers (%s)",
                    elf_errmsg(-1));
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(ld->elf, (int)i, &ph))
            return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "program header %zu: %s", i,
                        elf_errmsg(-1));
        if (!exec_segment(ld, i, &ph, err))
            return false;
    }
    if (ld->obj->segs->len == 0)
        return fail(err, ELFLOAD_ERROR_FORMAT, ld->name, "executable without a PT_LOAD segment");
    for (size_t i = 1; i < ld->shnum; i++) {
        GElf_Shdr sh;
        gelf_getshdr(elf_getscn(ld->elf, i), &sh);
        if (sh.sh_type == SHT_SYMTAB)
            ld->symtab = i;
    }
    GElf_Ehdr eh;
    gelf_getehdr(ld->elf, &eh);
    ld->obj->has_entry = true;
    ld->obj->entry = (uint32_t)eh.e_entry;
    return check_overlap(ld, ld->obj->segs, "segments", err) && read_symbols(ld, NULL, err);
}

/* ---- public ---------------------------------------------------------- */

static void free_entry(gpointer p)
{
    SymEntry *e = p;
    g_free((char *)e->name);
    g_free(e);
}

static int cmp_sym_addr(const void *a, const void *b)
{
    const SymEntry *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->global != y->global)
        return x->global ? 1 : -1;       /* globals last: preferred by symbol_at */
    return strcmp(x->name, y->name);
}

static void index_symbols(ElfObject *obj)
{
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, obj->symbols);
    while (g_hash_table_iter_next(&it, NULL, &v))
        g_array_append_val(obj->by_addr, *(SymEntry *)v);
    g_array_sort(obj->by_addr, cmp_sym_addr);
}

static void loader_clear(Loader *ld)
{
    if (ld->sect)
        for (size_t i = 0; i < ld->shnum; i++) {
            g_free(ld->sect[i].name);
            g_free(ld->sect[i].bytes);
        }
    g_free(ld->sect);
    g_free(ld->symval);
    g_free(ld->symok);
    if (ld->elf)
        elf_end(ld->elf);
}

ElfObject *elfload_memory(const char *name, const void *data, size_t size,
                          const ElfLoadOptions *opts, GError **err)
{
    static gsize once;
    if (g_once_init_enter(&once)) {
        g_assert(elf_version(EV_CURRENT) != EV_NONE);
        g_once_init_leave(&once, 1);
    }
    ElfLoadOptions none = { 0 };
    uint8_t *copy = g_malloc(MAX(size, 1));          /* libelf wants a mutable image */
    if (size)
        memcpy(copy, data, size);
    Loader ld = { .name = name, .img = copy, .size = size };
    ElfObject *obj = g_new0(ElfObject, 1);
    obj->name = g_strdup(name);
    obj->segs = g_array_new(FALSE, FALSE, sizeof(ElfSegment));
    obj->symbols = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_entry);
    obj->by_addr = g_array_new(FALSE, FALSE, sizeof(SymEntry));
    ld.obj = obj;
    bool ok = check_header(&ld, err);
    if (ok) {
        obj->exec = le16(copy + offsetof(Elf32_Ehdr, e_type)) == ET_EXEC;
        ld.elf = elf_memory((char *)copy, size);
        if (!ld.elf || elf_kind(ld.elf) != ELF_K_ELF) {
            fail(err, ELFLOAD_ERROR_FORMAT, name, "libelf: %s", elf_errmsg(-1));
            ok = false;
        }
    }
    ok = ok && check_sections(&ld, err);
    ok = ok && (obj->exec ? load_exec(&ld, err) : load_rel(&ld, opts ? opts : &none, err));
    loader_clear(&ld);
    g_free(copy);
    if (!ok) {
        elfload_free(obj);
        return NULL;
    }
    index_symbols(obj);
    return obj;
}

ElfObject *elfload_file(const char *path, const ElfLoadOptions *opts, GError **err)
{
    char *data;
    size_t size;
    GError *e = NULL;
    if (!g_file_get_contents(path, &data, &size, &e)) {
        fail(err, ELFLOAD_ERROR_IO, path, "cannot read: %s", e->message);
        g_error_free(e);
        return NULL;
    }
    ElfObject *obj = elfload_memory(path, data, size, opts, err);
    g_free(data);
    return obj;
}

void elfload_free(ElfObject *obj)
{
    if (!obj)
        return;
    for (unsigned i = 0; i < obj->segs->len; i++) {
        ElfSegment *s = &g_array_index(obj->segs, ElfSegment, i);
        g_free((char *)s->name);
        g_free((uint8_t *)s->bytes);
    }
    g_array_free(obj->segs, TRUE);
    g_array_free(obj->by_addr, TRUE);
    g_hash_table_destroy(obj->symbols);
    g_free(obj->name);
    g_free(obj);
}

bool elfload_is_executable(const ElfObject *obj)
{
    return obj->exec;
}

size_t elfload_n_segments(const ElfObject *obj)
{
    return obj->segs->len;
}

const ElfSegment *elfload_segment(const ElfObject *obj, size_t i)
{
    g_assert(i < obj->segs->len);
    return &g_array_index(obj->segs, ElfSegment, i);
}

const ElfSegment *elfload_segment_by_name(const ElfObject *obj, const char *name)
{
    for (unsigned i = 0; i < obj->segs->len; i++)
        if (strcmp(g_array_index(obj->segs, ElfSegment, i).name, name) == 0)
            return &g_array_index(obj->segs, ElfSegment, i);
    return NULL;
}

bool elfload_symbol(const ElfObject *obj, const char *name, uint32_t *addr)
{
    const SymEntry *e = g_hash_table_lookup(obj->symbols, name);
    if (e)
        *addr = e->addr;
    return e != NULL;
}

bool elfload_entry(const ElfObject *obj, uint32_t *addr)
{
    if (obj->has_entry)
        *addr = obj->entry;
    return obj->has_entry;
}

bool elfload_symbol_at(const ElfObject *obj, uint32_t addr, const char **name, uint32_t *offset)
{
    const ElfSegment *seg = NULL;
    for (unsigned i = 0; i < obj->segs->len && !seg; i++) {
        const ElfSegment *s = &g_array_index(obj->segs, ElfSegment, i);
        if (addr >= s->vaddr && addr - s->vaddr < s->size)
            seg = s;
    }
    if (!seg)
        return false;
    /* Last symbol with address <= addr (binary search). */
    unsigned lo = 0, hi = obj->by_addr->len;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (g_array_index(obj->by_addr, SymEntry, mid).addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false;
    const SymEntry *e = &g_array_index(obj->by_addr, SymEntry, lo - 1);
    if (e->addr < seg->vaddr)
        return false;
    *name = e->name;
    *offset = addr - e->addr;
    return true;
}

bool elfload_write_physmem(const ElfObject *obj, PhysMem *pm, int64_t offset, GError **err)
{
    for (unsigned i = 0; i < obj->segs->len; i++) {
        const ElfSegment *s = &g_array_index(obj->segs, ElfSegment, i);
        int64_t pa = (int64_t)s->vaddr - offset;
        if (pa < 0 || (uint64_t)pa + s->size > PHYS_ADDR_LIMIT)
            return fail(err, ELFLOAD_ERROR_RANGE, obj->name,
                        "%s at 0x%08x minus offset %s0x%" G_GINT64_MODIFIER
                        "x is outside physical memory", s->name, s->vaddr,
                        offset < 0 ? "-" : "", (uint64_t)(offset < 0 ? -offset : offset));
    }
    for (unsigned i = 0; i < obj->segs->len; i++) {
        const ElfSegment *s = &g_array_index(obj->segs, ElfSegment, i);
        uint64_t pa = (uint64_t)((int64_t)s->vaddr - offset);
        physmem_write(pm, pa, s->bytes, s->size);
    }
    return true;
}
