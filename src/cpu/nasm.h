/* Assembling guest code at run time: `vmsplit run PROGRAM.asm` hands the
 * source to nasm (the VMSPLIT_NASM found at configure time, config.h) and
 * loads the object with elfload. The build assembles the bundled programs
 * with the same `nasm -f elf32` (workloads/guest/meson.build); this is for
 * the user's own files.
 *
 * The object goes to a fresh private temporary directory; nasm_remove_output
 * deletes both. An assembly error is a GError whose message carries nasm's
 * own diagnostics ("prog.asm:12: error: ..."), which name file and line. */
#ifndef VMSPLIT_CPU_NASM_H
#define VMSPLIT_CPU_NASM_H

#include <glib.h>

#define NASM_ERROR (nasm_error_quark())
GQuark nasm_error_quark(void);
typedef enum {
    NASM_ERROR_INPUT,            /* the source file cannot be read */
    NASM_ERROR_SPAWN,            /* nasm could not be started */
    NASM_ERROR_FAILED,           /* nasm ran and reported errors */
} NasmError;

/* Assemble src with `nasm -f elf32 -I<dir of src>/` (so %include finds
 * files beside the source). Returns the path of the object (g_free it) in a
 * new temporary directory, or NULL with err set. */
char *nasm_assemble(const char *src, GError **err);

/* Delete an object returned by nasm_assemble and its directory. */
void nasm_remove_output(const char *obj);

#endif
