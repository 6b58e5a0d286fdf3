/* Address-space builder: writes the page tables of each layout into the
 * simulated physical memory, as the kernel would, so that the core's walks
 * and TLB fills see what a real kernel built.
 *
 * Both paging modes (the layout row's PageTableFormat, ptformat.h): PAE
 * (3 levels, 8-byte entries) and legacy 32-bit paging (2 levels, 4-byte
 * entries), as Linux 2.6 i386 built them with and without CONFIG_X86_PAE.
 *
 * KernelSpace: the machine-wide part: a frame allocator over the simulated
 * RAM (page tables and kernel objects from lowmem, user pages from highmem
 * when there is any, as GFP_HIGHUSER does), the kernel page directories with
 * the direct map of lowmem (large pages with PSE, as Linux does with
 * cpu_has_pse: 2 MiB under PAE, 4 MiB global PSE pages under legacy
 * paging), and the shared window (4g4g) or entry area (kpti).
 *
 * ProcSpace: one process: its page-directory-pointer table(s) and user page
 * tables (PAE), or its 4 KiB page directory (legacy: the kernel's entries
 * copied in by pgd_ctor; kpti: a kernel/user pair of them).
 *
 *   layout   user-mode CR3            kernel-mode CR3        shared with user
 *   shared   the process's PDPT       the same               kernel PDs (U/S=0)
 *   4g4g     the process's PDPT       swapper_pg_dir         window PT pages
 *   pti      process's user PDPT      process's kernel PDPT  user PDs; entry PD
 * Legacy paging: the same with page directories for PDPTs; what is shared
 * is the page tables below copied PDEs (user PDEs written into both of a
 * pti pair, as pti_set_user_pgtbl does).
 *
 * Protections: kernel entries have U/S=0 (and G when the layout says so);
 * user entries U/S=1. PDPTEs carry only P (PAE has no R/W or U/S there). */
#ifndef VMSPLIT_KERNEL_MODEL_ASPACE_H
#define VMSPLIT_KERNEL_MODEL_ASPACE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel_model/layout.h"
#include "mmu/physmem.h"

typedef struct KernelSpace KernelSpace;
typedef struct ProcSpace ProcSpace;

/* ram: installed RAM in bytes (at least 32 MiB, at most the paging mode's
 * physical limit: 64 GiB PAE, 4 GiB legacy). large_pages: map the direct
 * map with large pages (2 or 4 MiB). */
KernelSpace *kspace_new(PhysMem *pm, const Layout *layout, uint64_t ram,
                        bool large_pages, GError **err);
void kspace_free(KernelSpace *ks);

const Layout *kspace_layout(const KernelSpace *ks);
/* The page-table format (the layout's paging mode). */
const PageTableFormat *kspace_paging(const KernelSpace *ks);
PhysMem *kspace_physmem(KernelSpace *ks);
/* Lowmem end (physical): min(ram, layout_mem_lowmem_limit). */
uint64_t kspace_lowmem_end(const KernelSpace *ks);

/* A zeroed frame from lowmem (page tables, stacks, descriptor tables).
 * Returns 0 and sets err when lowmem is exhausted. */
uint64_t kspace_alloc_frame(KernelSpace *ks, GError **err);
/* n physically contiguous zeroed frames from lowmem (kernel stacks);
 * returns the first, 0 on exhaustion. A power-of-two n is aligned to its
 * size, as the buddy allocator's blocks are. */
uint64_t kspace_alloc_frames(KernelSpace *ks, unsigned n, GError **err);
/* A frame for user data: highmem if the machine has any, else lowmem. */
uint64_t kspace_alloc_user_frame(KernelSpace *ks, GError **err);
/* Give a frame back (lowmem or user). */
void kspace_free_frame(KernelSpace *ks, uint64_t pa);
/* Frames handed out from lowmem so far (page-table pages among them). */
uint64_t kspace_lowmem_frames_used(const KernelSpace *ks);

/* Kernel virtual address of a lowmem physical address (the direct map). */
uint32_t kspace_phys_to_virt(const KernelSpace *ks, uint64_t pa);

/* CR3 of the kernel's own page table (swapper_pg_dir / init_mm). */
uint32_t kspace_kernel_cr3(const KernelSpace *ks);

/* Map one 4 KiB page in the shared window (4g4g) or entry area (pti), or,
 * for shared layouts, anywhere in kernel space outside the direct map (the
 * fixmap). Visible in the kernel page table and every process's. */
bool kspace_map_window(KernelSpace *ks, uint32_t va, uint64_t pa, bool writable,
                       GError **err);
/* The physical address of the PTE that maps va in the window (for the
 * kmap_atomic / virtual-stack remapping the model does with INVLPG). */
uint64_t kspace_window_pte(const KernelSpace *ks, uint32_t va);

ProcSpace *pspace_new(KernelSpace *ks, GError **err);
void pspace_free(ProcSpace *ps);
uint32_t pspace_user_cr3(const ProcSpace *ps);
uint32_t pspace_kernel_cr3(const ProcSpace *ps);

/* Map/unmap one 4 KiB user page (va below the layout's task_size). */
bool pspace_map_user(ProcSpace *ps, uint32_t va, uint64_t pa, bool writable,
                     GError **err);
/* Returns the physical frame that was mapped, or 0 if none. */
uint64_t pspace_unmap_user(ProcSpace *ps, uint32_t va);
/* Physical address of the PTE for user va (the page table made, zeroed,
 * if create and there is none: __pte_alloc); 0 if there is none and not
 * create, or (err set) va is above TASK_SIZE or lowmem is exhausted. For
 * the page-fault body, which writes the PTE as modelled kernel stores. */
uint64_t pspace_user_pte_pa(ProcSpace *ps, uint32_t va, bool create, GError **err);
/* Page-table pages this process owns (PDPTs, PDs, PTs), for lowmem. */
unsigned pspace_table_pages(const ProcSpace *ps);

#endif
