/* Machine images: a small text file describing the paging state of a
 * machine (control registers and the physical memory holding the page
 * tables), for `vmsplit walk` and for tests. The format is documented in
 * docs/image-format.md; in short, one directive per line:
 *
 *   cr3 0x1000              # PDPT base (CR3[31:5] under PAE), or the
 *                           # page directory (CR3[31:12]) with cr4.pae 0
 *   cr4.pae 0               # 32-bit paging (default 1: PAE)
 *   cr4.pse 1               # 4 MiB pages in 32-bit paging
 *   cr0.wp 1                # supervisor write protection
 *   efer.nxe 1              # execute-disable bit honoured (PAE only)
 *   q 0x1000 0x2001         # 64-bit store to physical memory
 *   d 0x2004 0x80000000     # 32-bit store
 *
 * Loading is in two steps on purpose. image_load() writes memory and
 * records the control state; it fails only on bad input (GError naming the
 * file, the line and what was expected). image_load_cr3() then performs the
 * MOV CR3, after all of memory is written, exactly as a kernel would: a
 * present PDPTE with reserved bits is a #GP(0) there, which is an
 * architectural outcome to report, not a parse error. */
#ifndef VMSPLIT_MMU_IMAGE_H
#define VMSPLIT_MMU_IMAGE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "mmu/pae.h"
#include "mmu/physmem.h"

#define IMAGE_ERROR (image_error_quark())
GQuark image_error_quark(void);

typedef enum {
    IMAGE_ERROR_IO,              /* the file cannot be read */
    IMAGE_ERROR_SYNTAX,          /* unknown directive, bad number, extra words */
    IMAGE_ERROR_RANGE,           /* value or address out of range, unaligned */
    IMAGE_ERROR_DUPLICATE,       /* control register set twice, overlapping stores */
    IMAGE_ERROR_MISSING,         /* no cr3 directive */
} ImageError;

/* The control state an image sets. Defaults (when a directive is absent):
 * CR0.PG=1 and CR4.PAE=1, CR0.WP=0, CR4.PSE=0, CR4.PGE=0, EFER.NXE=0,
 * i.e. the state after a kernel turns PAE paging on. 'cr4.pae 0' makes it
 * 32-bit paging (SDM Vol. 3A §4.3). */
typedef struct {
    uint32_t cr3;
    bool cr0_pg, cr0_wp, cr4_pae, cr4_pse, cr4_pge, efer_nxe;
    unsigned nstores;            /* q and d directives applied */
} MachineImage;

/* Parse the image file at path, storing its memory writes into pm. On
 * failure returns false with err set (pm may then hold part of the
 * image: discard it). */
bool image_load(const char *path, PhysMem *pm, MachineImage *img, GError **err);

/* The same on text already in memory; name is used in messages ("file"). */
bool image_parse(const char *name, const char *text, size_t len, PhysMem *pm,
                 MachineImage *img, GError **err);

/* The image's paging mode (CR4.PAE): its rules are paging_rules(mode). */
PagingMode image_paging_mode(const MachineImage *img);

/* MOV CR3 with the image's CR3, then set CR0.WP, CR4.PSE and EFER.NXE and
 * the paging mode: fills regs from img and the memory in pm. Under PAE it
 * loads the PDPTEs and returns false for #GP(0) (a present PDPTE with
 * reserved bits); regs then holds WP/NXE but no CR3 or PDPTEs (all zero),
 * and *bad_pdpte (if not NULL) the index of the first offending PDPTE.
 * refs, if not NULL, receives the four PDPTE reads. In 32-bit paging it
 * only sets CR3 (nothing is loaded, refs is not written) and succeeds. */
bool image_load_cr3(const MachineImage *img, const PhysMem *pm, PaeRegs *regs,
                    int *bad_pdpte, PaeRef refs[4]);

/* The number syntax of images, shared with the CLI: "0x" + hex digits, or
 * decimal digits. No sign, no suffix, no octal; must fit in 64 bits. */
bool image_parse_number(const char *s, uint64_t *out);

#endif
