/* Folding a 64-bit program's addresses into the i686 user space of a
 * version-2 trace (workloads/FORMAT.md, "Folding").
 *
 * Every mapping of the traced process (announced at exec, or made later by
 * mmap, brk or mremap) gets a folded range of the same number of pages in
 * [CAPTURE_FOLD_LOW, CAPTURE_FOLD_HIGH), the user window of the smallest
 * layout (1g3g), so that every layout replays the same addresses. A
 * mapping is folded as a whole: its pages stay adjacent and in order, page
 * offsets are kept, and two distinct pages never fold to one. So the folded
 * trace touches the same number of distinct pages, in the same order of
 * first touch, with the same offsets (tests/capture/test_capture_fold.c).
 * Ranges are placed first-fit from the bottom of the window; an unmapped
 * range's folded space is free again (the kernel reuses addresses too).
 *
 * A mapping placed inside an existing one (ld.so's MAP_FIXED segments in
 * the span it reserved) reuses the folded addresses of the part it
 * replaces. A stack gets `grow_below` bytes of folded room under it, for
 * its growth below what exec mapped. A process that needs more than the
 * window holds fails with a clear error. A fork copies the parent's
 * folding (the child sees the same addresses); an exec starts afresh. */
#ifndef VMSPLIT_REPLAY_CAPTURE_FOLD_H
#define VMSPLIT_REPLAY_CAPTURE_FOLD_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define CAPTURE_FOLD_LOW 0x00010000ull  /* 64 KiB: Linux's default mmap_min_addr */
#define CAPTURE_FOLD_HIGH 0x40000000ull /* 1g3g's user window ends at 1 GiB */
#define CAPTURE_PAGE 4096ull

typedef struct CaptureFold CaptureFold;

/* One contiguous folded piece of an original range. */
typedef struct {
    uint64_t orig, folded, len;
} CaptureFoldPiece;

CaptureFold *capture_fold_new(void);
CaptureFold *capture_fold_copy(const CaptureFold *f);
void capture_fold_free(CaptureFold *f);

/* Announces the mapping [start, start+len) (widened to whole pages).
 * Parts already mapped keep their folded addresses; the rest becomes one
 * new folded range (with grow_below bytes reserved under it). False with
 * err set when the window has no room. */
bool capture_fold_map(CaptureFold *f, uint64_t start, uint64_t len, uint64_t grow_below,
                      GError **err);
/* Forgets [start, start+len) (whole pages); its folded space is free again. */
void capture_fold_unmap(CaptureFold *f, uint64_t start, uint64_t len);
/* The folded address of addr, or false when no mapping holds it. */
bool capture_fold_addr(CaptureFold *f, uint64_t addr, uint64_t *out);
/* The folded pieces of [start, start+len) that lie in mappings (at most
 * max, in address order); returns how many were written. */
unsigned capture_fold_pieces(CaptureFold *f, uint64_t start, uint64_t len, CaptureFoldPiece *out,
                             unsigned max);
/* Folded bytes in use (mapped plus stack reserves). */
uint64_t capture_fold_used(const CaptureFold *f);

#endif
