/* Loading guest code: ELF32 i386 objects as `nasm -f elf32` writes them
 * (ET_REL) and linked executables (ET_EXEC), read with libelf.
 *
 * ET_REL is linked here, like a one-object `ld`:
 *   1. every allocatable section (SHF_ALLOC: .text, .data, .rodata, .bss…)
 *      gets an address chosen by the caller (ElfLoadOptions, see below);
 *   2. symbols resolve: section-relative values become section address +
 *      value, SHN_ABS values stay, undefined symbols are looked up in the
 *      caller's table (ElfLoadOptions.externs) and are an error if absent;
 *   3. the relocations of allocatable sections are applied (System V ABI,
 *      Intel386 Processor Supplement, "Relocation Types"; the addend A is
 *      implicit, read from the section contents: i386 uses SHT_REL, not
 *      SHT_RELA):
 *        R_386_32    S + A        (absolute: data pointers, mov reg, imm32)
 *        R_386_PC32  S + A - P    (relative: call/jmp rel32; nasm stores
 *                                  A = -4 for a call, the field's distance
 *                                  to the next instruction)
 *      where S is the symbol's address and P the address of the field.
 *      Any other type is an error: nasm emits only these two for flat
 *      32-bit code without `wrt ..got`/`..plt`/16-bit references.
 * ET_EXEC: PT_LOAD segments at their p_vaddr, e_entry, and .symtab if the
 * file has one.
 *
 * The result is independent of any MMU: the caller gets segments
 * (vaddr, size, bytes, W/X flags) and copies them into guest memory
 * through whatever page tables it builds. elfload_write_physmem does it
 * for the common case of a fixed virtual-to-physical offset.
 *
 * Bad input (not ELF, not ELF32, not little-endian, not EM_386, not
 * ET_REL/ET_EXEC, truncated, unknown relocation, undefined symbol, sections
 * placed overlapping) is a GError in ELFLOAD_ERROR whose message starts
 * with the file name. Nothing in a file can crash the loader. */
#ifndef VMSPLIT_CPU_ELFLOAD_H
#define VMSPLIT_CPU_ELFLOAD_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmu/physmem.h"

#define ELFLOAD_ERROR (elfload_error_quark())
GQuark elfload_error_quark(void);
typedef enum {
    ELFLOAD_ERROR_IO,            /* the file cannot be read */
    ELFLOAD_ERROR_FORMAT,        /* not ELF32 i386 ET_REL/ET_EXEC, truncated, inconsistent */
    ELFLOAD_ERROR_RELOC,         /* unknown relocation type, field out of its section */
    ELFLOAD_ERROR_UNDEFINED,     /* undefined symbol not in the externs table */
    ELFLOAD_ERROR_PLACEMENT,     /* overlapping, misaligned or wrapping placement */
    ELFLOAD_ERROR_RANGE,         /* elfload_write_physmem: outside physical memory */
} ElfLoadError;

/* Segment flags (all segments are readable). */
#define ELFLOAD_W (1u << 0)      /* SHF_WRITE / PF_W */
#define ELFLOAD_X (1u << 1)      /* SHF_EXECINSTR / PF_X */

/* One piece of guest memory to fill: an allocatable section of an ET_REL
 * (name = section name) or a PT_LOAD segment of an ET_EXEC (name =
 * "PT_LOAD[i]"). bytes holds all size bytes, relocated; the first filesz
 * come from the file, the rest are zeros (all of a .bss, the tail of a
 * PT_LOAD past p_filesz), so a caller writing into fresh zeroed memory may
 * stop at filesz. Sections of size 0 are placed (their symbols have
 * addresses) but not listed. A section or segment larger than
 * ELFLOAD_MAX_SIZE, or sections or segments larger than ELFLOAD_MAX_TOTAL
 * together, is an error: a bounded loader (a file of a few KiB can
 * declare thousands of sections of 256 MiB each, all allocated before the
 * placement is checked), not a limit of the model (256 MiB is far beyond
 * any guest program or stub file here: the largest loads under 1 MiB). */
#define ELFLOAD_MAX_SIZE (256u << 20)
#define ELFLOAD_MAX_TOTAL (256u << 20)

typedef struct {
    const char *name;
    uint32_t vaddr;
    uint32_t size;               /* bytes of guest memory */
    uint32_t filesz;             /* of which from the file, at the start */
    const uint8_t *bytes;        /* size bytes */
    unsigned flags;              /* ELFLOAD_W | ELFLOAD_X */
} ElfSegment;

/* A name -> address pair: an external symbol, or a fixed section address. */
typedef struct {
    const char *name;
    uint32_t addr;
} ElfAddr;

/* Placement callback for ET_REL: called for each allocatable section in
 * section-header order. Return true with *addr set to place it there, or
 * false to leave it to ElfLoadOptions.sections and then to packing. */
typedef bool (*ElfPlaceFn)(void *data, const char *section, uint32_t size,
                           uint32_t align, unsigned flags, uint32_t *addr);

/* How to link an ET_REL (ignored for ET_EXEC, which is already linked).
 * A section's address comes from, in order: place(), the sections table,
 * packing. Packing puts sections one after another from base, each at the
 * next multiple of 4 KiB (so that the caller can give each its own page
 * protection) and of its sh_addralign. Packing does not skip sections
 * placed by the first two rules: an overlap is reported, not avoided.
 * A placed address that is not a multiple of sh_addralign is an error
 * (the code's `align` directives would silently lie). */
typedef struct {
    uint32_t base;
    const ElfAddr *sections;     /* n_sections entries, may be NULL */
    size_t n_sections;
    ElfPlaceFn place;            /* may be NULL */
    void *place_data;
    const ElfAddr *externs;      /* values of undefined symbols */
    size_t n_externs;
} ElfLoadOptions;

typedef struct ElfObject ElfObject;

/* Load path. opts may be NULL (pack from 0, no externs). */
ElfObject *elfload_file(const char *path, const ElfLoadOptions *opts, GError **err);
/* Same from a memory image; name is used in messages. data is copied. */
ElfObject *elfload_memory(const char *name, const void *data, size_t size,
                          const ElfLoadOptions *opts, GError **err);
void elfload_free(ElfObject *obj);

bool elfload_is_executable(const ElfObject *obj);   /* ET_EXEC, else ET_REL */

/* Segments in section-header (ET_REL) or program-header (ET_EXEC) order. */
size_t elfload_n_segments(const ElfObject *obj);
const ElfSegment *elfload_segment(const ElfObject *obj, size_t i);
/* The segment of an ET_REL section by name, or NULL. */
const ElfSegment *elfload_segment_by_name(const ElfObject *obj, const char *name);

/* Address of a symbol the object defines (global preferred over local;
 * section, file and undefined symbols excluded). False if there is none. */
bool elfload_symbol(const ElfObject *obj, const char *name, uint32_t *addr);
/* The entry point: e_entry of an ET_EXEC, the `_start` symbol of an ET_REL.
 * False if an ET_REL has no `_start`. */
bool elfload_entry(const ElfObject *obj, uint32_t *addr);
/* For diagnostics ("EIP 0x1234 = int80_entry+0x12"): the nearest named
 * symbol at or below addr inside the same segment. False if none. */
bool elfload_symbol_at(const ElfObject *obj, uint32_t addr, const char **name,
                       uint32_t *offset);

/* Copy every segment into pm at physical address vaddr - offset (offset
 * 0: identity; 0xC0000000: a kernel image linked at 3 GiB in low memory).
 * Error if a segment would land below 0 or past PHYS_ADDR_LIMIT; nothing
 * is written then. */
bool elfload_write_physmem(const ElfObject *obj, PhysMem *pm, int64_t offset,
                           GError **err);

#endif
