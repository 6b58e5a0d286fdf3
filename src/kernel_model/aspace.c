/* Address-space builder. See aspace.h. Entry flag values follow Linux 2.6
 * i386 (include/asm-i386/pgtable.h, the same bits in both paging modes:
 * ptformat.h): _KERNPG_TABLE = P|RW|A|D,
 * _PAGE_TABLE = P|RW|US|A, PAGE_KERNEL = P|RW|A|D (+G where the layout makes
 * kernel pages global), PAGE_SHARED = P|RW|US|A (D set by the first write,
 * which costs the walk that sets it). */
#include "kernel_model/aspace.h"

#include "kernel_model/layout_mem.h"
#include "mmu/pae.h"

#include <gio/gio.h>
#include <string.h>

#define MiB (1024ULL * 1024ULL)
#define KERNPG_TABLE (PAE_P | PAE_RW | PAE_A | PAE_D)
#define USER_TABLE (PAE_P | PAE_RW | PAE_US | PAE_A)
#define PAGE_KERNEL (PAE_P | PAE_RW | PAE_A | PAE_D)
#define PAGE_USER (PAE_P | PAE_US | PAE_A)

/* The kernel image and boot data occupy 1-16 MiB in this model (Linux loads
 * at 1 MiB, CONFIG_PHYSICAL_START); the first 16 MiB are ZONE_DMA, which the
 * model keeps out of the page-table allocator. */
#define FIRST_ALLOC_FRAME (16 * MiB)

struct KernelSpace {
    PhysMem *pm;
    const Layout *layout;
    const PageTableFormat *fmt;      /* the layout's paging mode */
    uint64_t ram, lowmem_end;
    bool large_pages;
    uint64_t next_low, next_high;    /* bump allocators */
    GArray *free_low, *free_high;    /* returned frames, reused first */
    uint64_t low_used;
    uint64_t kernel_pdpt;            /* kernel-mode CR3 (4g4g, and init_mm): the
                                      * PDPT, or under legacy paging the PD */
    uint64_t kpd[4];                 /* kernel page directories by PDPTE index
                                      * (legacy: the one PD at every index) */
    uint64_t entry_pd;               /* PAE, a user table that holds only the
                                      * window, where no user space shares the
                                      * window's PD (pti): the user side's PD
                                      * for it, holding the window alone */
};

struct ProcSpace {
    KernelSpace *ks;
    uint64_t user_pdpt, kern_pdpt;   /* CR3 tables (legacy: page directories) */
    uint64_t upd[4];                 /* the process's user page directories
                                      * (legacy: its PD at every index) */
    uint64_t mirror_pd;              /* legacy pti: the kernel-side PD, whose
                                      * user PDEs copy the user side's (0: none) */
    unsigned nuser_pd;               /* PAE: PDPTE indices 0..nuser_pd-1 are user */
    GArray *tables;                  /* every frame this process owns */
};

/* Where a layout without a window keeps the page table that build_window
 * creates: the top 2 MiB, Linux's fixmap (and this model's kmap slots). */
#define FIXMAP_BASE 0xFFE00000u
#define FIXMAP_SIZE ((uint32_t)PAE_PAGE_2M)

/* PAE: the PDPTE indices below TASK_SIZE are a process's own user PDs
 * (USER_PTRS_PER_PGD; 4g4g's reach into the fourth). */
static unsigned user_pd_count(const Layout *l)
{
    return (unsigned)(((uint64_t)l->task_size + (1u << PAE_PDPTE_SHIFT) - 1) >> PAE_PDPTE_SHIFT);
}

/* PAE: a process's user page table holds only the window (the kernel has
 * tables of its own) and no user space shares the window's PD: all
 * processes' user PDPTs point at one entry-area PD holding the window. */
static bool has_entry_pd(const Layout *l)
{
    return l->kernel_tables != LAYOUT_KTABLES_IN_USER && l->window_size &&
           ptformat_pd_index(l->window_base) >= user_pd_count(l);
}

static bool is_window(const Layout *l, uint32_t va)
{
    return l->window_size && va >= l->window_base &&
           (uint64_t)va < (uint64_t)l->window_base + l->window_size;
}

uint64_t kspace_alloc_frame(KernelSpace *ks, GError **err)
{
    uint64_t pa;
    if (ks->free_low->len) {
        pa = g_array_index(ks->free_low, uint64_t, ks->free_low->len - 1);
        g_array_set_size(ks->free_low, ks->free_low->len - 1);
    } else if (ks->next_low + PAGE_SIZE <= ks->lowmem_end) {
        pa = ks->next_low;
        ks->next_low += PAGE_SIZE;
    } else {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                    "lowmem exhausted: %" G_GUINT64_FORMAT " frames in use",
                    ks->low_used);
        return 0;
    }
    ks->low_used++;
    physmem_write(ks->pm, pa, (uint8_t[PAGE_SIZE]){ 0 }, PAGE_SIZE);
    return pa;
}

uint64_t kspace_alloc_frames(KernelSpace *ks, unsigned n, GError **err)
{
    if (n == 1)
        return kspace_alloc_frame(ks, err);
    /* The buddy allocator returns an order-k block aligned to its size;
     * kernel stacks rely on it (thread_info at ESP & -THREAD_SIZE). The
     * frames skipped to align are left unused, not counted. */
    uint64_t bytes = (uint64_t)n * PAGE_SIZE;
    if ((n & (n - 1)) == 0)
        ks->next_low = (ks->next_low + bytes - 1) & ~(bytes - 1);
    if (ks->next_low + (uint64_t)n * PAGE_SIZE > ks->lowmem_end) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                    "lowmem exhausted: no %u contiguous frames left", n);
        return 0;
    }
    uint64_t pa = ks->next_low;
    ks->next_low += (uint64_t)n * PAGE_SIZE;
    ks->low_used += n;
    for (unsigned i = 0; i < n; i++)
        physmem_write(ks->pm, pa + (uint64_t)i * PAGE_SIZE, (uint8_t[PAGE_SIZE]){ 0 }, PAGE_SIZE);
    return pa;
}

uint64_t kspace_alloc_user_frame(KernelSpace *ks, GError **err)
{
    if (ks->free_high->len) {
        uint64_t pa = g_array_index(ks->free_high, uint64_t, ks->free_high->len - 1);
        g_array_set_size(ks->free_high, ks->free_high->len - 1);
        return pa;
    }
    if (ks->next_high + PAGE_SIZE <= ks->ram) {
        uint64_t pa = ks->next_high;
        ks->next_high += PAGE_SIZE;
        return pa;
    }
    return kspace_alloc_frame(ks, err);
}

void kspace_free_frame(KernelSpace *ks, uint64_t pa)
{
    if (pa >= ks->lowmem_end) {
        g_array_append_val(ks->free_high, pa);
    } else {
        g_array_append_val(ks->free_low, pa);
        ks->low_used--;
    }
}

uint64_t kspace_lowmem_frames_used(const KernelSpace *ks) { return ks->low_used; }
const Layout *kspace_layout(const KernelSpace *ks) { return ks->layout; }
PhysMem *kspace_physmem(KernelSpace *ks) { return ks->pm; }
uint64_t kspace_lowmem_end(const KernelSpace *ks) { return ks->lowmem_end; }
uint32_t kspace_kernel_cr3(const KernelSpace *ks) { return (uint32_t)ks->kernel_pdpt; }

uint32_t kspace_phys_to_virt(const KernelSpace *ks, uint64_t pa)
{
    g_assert(pa < ks->lowmem_end);
    return ks->layout->page_offset + (uint32_t)pa;
}

const PageTableFormat *kspace_paging(const KernelSpace *ks) { return ks->fmt; }

static inline uint64_t pde_addr(const KernelSpace *ks, uint64_t pd, uint32_t va)
{
    return ptformat_pde_addr(ks->fmt, pd, va);
}

static inline uint64_t pte_addr(const KernelSpace *ks, uint64_t pt, uint32_t va)
{
    return ptformat_pte_addr(ks->fmt, pt, va);
}

static inline uint64_t rd(const KernelSpace *ks, uint64_t pa)
{
    return ptformat_read(ks->fmt, ks->pm, pa);
}

static inline void wr(KernelSpace *ks, uint64_t pa, uint64_t v)
{
    ptformat_write(ks->fmt, ks->pm, pa, v);
}

/* Map [page_offset, page_offset + lowmem_end) onto physical 0.. in the
 * kernel page directories: one large page per PDE (2 MiB under PAE,
 * 4 MiB under legacy paging, where a last one may reach past the end of
 * RAM as Linux's kernel_physical_mapping_init maps it), or page tables. */
static bool build_direct_map(KernelSpace *ks, GError **err)
{
    const Layout *l = ks->layout;
    const PageTableFormat *f = ks->fmt;
    uint64_t g = l->kernel_global ? PAE_G : 0;
    for (uint64_t pa = 0; pa < ks->lowmem_end; pa += f->large_page) {
        uint32_t va = l->page_offset + (uint32_t)pa;
        uint64_t pd = ks->kpd[ptformat_pd_index(va)];
        if (ks->large_pages) {
            wr(ks, pde_addr(ks, pd, va), pa | PAGE_KERNEL | PAE_PS | g);
            continue;
        }
        uint64_t pt = kspace_alloc_frame(ks, err);
        if (!pt)
            return false;
        wr(ks, pde_addr(ks, pd, va), pt | KERNPG_TABLE);
        uint64_t n = MIN((uint64_t)f->large_page, ks->lowmem_end - pa) / PAGE_SIZE;
        for (uint64_t i = 0; i < n; i++)
            wr(ks, pt + f->entry_bytes * i, (pa + i * PAGE_SIZE) | PAGE_KERNEL | g);
    }
    return true;
}

/* Page tables for the window (4g4g's shared window, pti's entry area) or,
 * without one, the top 2 MiB fixmap, created up front so that every
 * process's tables can share them. */
static bool build_window(KernelSpace *ks, GError **err)
{
    const Layout *l = ks->layout;
    uint32_t step = ks->fmt->large_page;
    uint32_t base = l->window_size ? l->window_base : FIXMAP_BASE;
    uint32_t size = l->window_size ? l->window_size : FIXMAP_SIZE;
    /* One page table per PDE the window touches (legacy: the window's
     * 2 MiB may share one 4 MiB PDE). */
    for (uint64_t va = base & ~(uint64_t)(step - 1); va < (uint64_t)base + size; va += step) {
        uint64_t pt = kspace_alloc_frame(ks, err);
        if (!pt)
            return false;
        wr(ks, pde_addr(ks, ks->kpd[ptformat_pd_index((uint32_t)va)], (uint32_t)va),
           pt | KERNPG_TABLE);
        if (ks->entry_pd)
            wr(ks, pde_addr(ks, ks->entry_pd, (uint32_t)va), pt | KERNPG_TABLE);
    }
    return true;
}

KernelSpace *kspace_new(PhysMem *pm, const Layout *layout, uint64_t ram,
                        bool large_pages, GError **err)
{
    const PageTableFormat *f = layout->paging;
    if (ram < 32 * MiB || ram > f->phys_limit || (ram & (PAE_PAGE_2M - 1))) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "RAM size must be a multiple of 2 MiB between 32 MiB and %u GiB "
                    "(%s paging)", (unsigned)(f->phys_limit >> 30), f->title);
        return NULL;
    }
    KernelSpace *ks = g_new0(KernelSpace, 1);
    ks->pm = pm;
    ks->layout = layout;
    ks->fmt = f;
    ks->ram = ram;
    ks->large_pages = large_pages;
    ks->lowmem_end = MIN(ram, layout_mem_lowmem_limit(&layout->mem));
    ks->next_low = FIRST_ALLOC_FRAME;
    ks->next_high = ks->lowmem_end;
    ks->free_low = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    ks->free_high = g_array_new(FALSE, FALSE, sizeof(uint64_t));

    /* Kernel page directories: under PAE every PDPTE index the kernel view
     * uses; under legacy paging swapper_pg_dir is the one directory. */
    ks->kernel_pdpt = kspace_alloc_frame(ks, err);
    if (!ks->kernel_pdpt)
        goto fail;
    if (f->levels == 2) {
        for (unsigned i = 0; i < 4; i++)
            ks->kpd[i] = ks->kernel_pdpt;
    } else {
        /* From the PDPTE index of PAGE_OFFSET (0 under 4g4g, whose kernel
         * view starts at 32 MiB). */
        unsigned first = layout->page_offset >> PAE_PDPTE_SHIFT;
        /* A table that maps the kernel shares its PDs whole
         * (SHARED_KERNEL_PMD): no PDPTE slot holds user space too. */
        g_assert(layout->kernel_tables == LAYOUT_KTABLES_SWAPPER ||
                 user_pd_count(layout) <= first);
        for (unsigned i = first; i < 4; i++) {
            if (!(ks->kpd[i] = kspace_alloc_frame(ks, err)))
                goto fail;
            physmem_write64(pm, ks->kernel_pdpt + 8 * i, ks->kpd[i] | PAE_P);
        }
        if (has_entry_pd(layout) && !(ks->entry_pd = kspace_alloc_frame(ks, err)))
            goto fail;
    }
    if (!build_direct_map(ks, err) || !build_window(ks, err))
        goto fail;
    return ks;
fail:
    kspace_free(ks);
    return NULL;
}

void kspace_free(KernelSpace *ks)
{
    if (!ks)
        return;
    g_array_free(ks->free_low, TRUE);
    g_array_free(ks->free_high, TRUE);
    g_free(ks);
}

uint64_t kspace_window_pte(const KernelSpace *ks, uint32_t va)
{
    uint64_t pde = rd(ks, pde_addr(ks, ks->kpd[ptformat_pd_index(va)], va));
    g_assert((pde & PAE_P) && !(pde & PAE_PS));
    return pte_addr(ks, pde & ks->fmt->addr_4k, va);
}

bool kspace_map_window(KernelSpace *ks, uint32_t va, uint64_t pa, bool writable,
                       GError **err)
{
    const Layout *l = ks->layout;
    bool in = l->window_size ? is_window(l, va) : va >= FIXMAP_BASE;
    if (!in || (va & (PAGE_SIZE - 1)) || (pa & (PAGE_SIZE - 1))) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "window mapping 0x%08x -> 0x%09" G_GINT64_MODIFIER "x: "
                    "expected a page-aligned address inside the window", va, pa);
        return false;
    }
    uint64_t g = l->window_global ? PAE_G : 0;     /* the layout's row says */
    uint64_t flags = (PAGE_KERNEL & ~(writable ? 0 : PAE_RW)) | g;
    wr(ks, kspace_window_pte(ks, va), pa | flags);
    return true;
}

static uint64_t proc_table(ProcSpace *ps, GError **err)
{
    uint64_t f = kspace_alloc_frame(ps->ks, err);
    if (f)
        g_array_append_val(ps->tables, f);
    return f;
}

/* Copy the kernel's PDEs for [from, to) into page directory pd (pgd_ctor's
 * clone of swapper_pg_dir; kpmd_ctor's copy of the window PMDs). */
static void copy_kernel_pdes(ProcSpace *ps, uint64_t pd, uint64_t from, uint64_t to)
{
    KernelSpace *ks = ps->ks;
    for (uint64_t va = from; va < to; va += ks->fmt->large_page)
        wr(ks, pde_addr(ks, pd, (uint32_t)va),
           rd(ks, pde_addr(ks, ks->kpd[ptformat_pd_index((uint32_t)va)], (uint32_t)va)));
}

/* Legacy paging (Linux 2.6 i386 without CONFIG_X86_PAE): one 4 KiB page
 * directory per process. pgd_ctor copies swapper_pg_dir's kernel entries
 * into the table that maps the kernel (the process's one table, or its
 * kernel half under kpti: 4.19 PGD_ALLOCATION_ORDER 1), and where the
 * kernel has tables of its own, only the window's entries into the user
 * one (RHEL4 arch/i386/mm/pgtable.c under 4G/4G: the NR_SHARED_PMDS;
 * kpti: the entry area). A per-process kernel table mirrors the user
 * entries (pti_set_user_pgtbl). */
static bool pspace_new_legacy(ProcSpace *ps, GError **err)
{
    KernelSpace *ks = ps->ks;
    const Layout *l = ks->layout;
    if (!(ps->user_pdpt = proc_table(ps, err)))
        return false;
    for (unsigned i = 0; i < 4; i++)
        ps->upd[i] = ps->user_pdpt;
    switch (l->kernel_tables) {
    case LAYOUT_KTABLES_IN_USER:
        ps->kern_pdpt = ps->user_pdpt;
        break;
    case LAYOUT_KTABLES_SWAPPER:
        ps->kern_pdpt = ks->kernel_pdpt;
        break;
    case LAYOUT_KTABLES_PER_PROCESS:
        if (!(ps->kern_pdpt = proc_table(ps, err)))
            return false;
        ps->mirror_pd = ps->kern_pdpt;
        break;
    }
    if (ps->kern_pdpt != ks->kernel_pdpt)        /* this process's table maps the kernel */
        copy_kernel_pdes(ps, ps->kern_pdpt, l->page_offset, 1ULL << 32);
    if (ps->kern_pdpt != ps->user_pdpt) {        /* the user one: the window alone */
        uint64_t wbase = l->window_base & ~(uint64_t)(ks->fmt->large_page - 1);
        copy_kernel_pdes(ps, ps->user_pdpt, wbase, (uint64_t)l->window_base + l->window_size);
    }
    return true;
}

ProcSpace *pspace_new(KernelSpace *ks, GError **err)
{
    const Layout *l = ks->layout;
    ProcSpace *ps = g_new0(ProcSpace, 1);
    ps->ks = ks;
    ps->tables = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    if (ks->fmt->levels == 2) {
        if (!pspace_new_legacy(ps, err))
            goto fail;
        return ps;
    }
    ps->nuser_pd = user_pd_count(l);
    if (!(ps->user_pdpt = proc_table(ps, err)))
        goto fail;
    if (l->kernel_tables == LAYOUT_KTABLES_PER_PROCESS && !(ps->kern_pdpt = proc_table(ps, err)))
        goto fail;
    /* PAE pgd_alloc preallocates every PMD page: the PDPTEs are cached in
     * registers at the CR3 load, so they must not change afterwards. */
    for (unsigned i = 0; i < ps->nuser_pd; i++) {
        if (!(ps->upd[i] = proc_table(ps, err)))
            goto fail;
        physmem_write64(ks->pm, ps->user_pdpt + 8 * i, ps->upd[i] | PAE_P);
        if (ps->kern_pdpt)
            physmem_write64(ks->pm, ps->kern_pdpt + 8 * i, ps->upd[i] | PAE_P);
    }
    switch (l->kernel_tables) {
    case LAYOUT_KTABLES_IN_USER:     /* the kernel PDs, shared (SHARED_KERNEL_PMD) */
        ps->kern_pdpt = ps->user_pdpt;
        break;
    case LAYOUT_KTABLES_SWAPPER:
        ps->kern_pdpt = ks->kernel_pdpt;
        break;
    case LAYOUT_KTABLES_PER_PROCESS: /* its kernel half: the kernel PDs */
        break;
    }
    /* Above user space: the kernel PDs, in the table that maps the kernel
     * if it is this process's. */
    if (ps->kern_pdpt != ks->kernel_pdpt)
        for (unsigned i = ps->nuser_pd; i < 4; i++)
            physmem_write64(ks->pm, ps->kern_pdpt + 8 * i, ks->kpd[i] | PAE_P);
    /* A user table without the kernel holds the window: its PDEs copied
     * into the process's own PD where user space reaches it (4g4g's
     * kpmd_ctor), else the shared entry-area PD (pti). */
    if (ps->kern_pdpt != ps->user_pdpt && l->window_size) {
        unsigned w = ptformat_pd_index(l->window_base);
        if (w < ps->nuser_pd)
            copy_kernel_pdes(ps, ps->upd[w], l->window_base,
                             (uint64_t)l->window_base + l->window_size);
        else
            physmem_write64(ks->pm, ps->user_pdpt + 8 * w, ks->entry_pd | PAE_P);
    }
    return ps;
fail:
    pspace_free(ps);
    return NULL;
}

void pspace_free(ProcSpace *ps)
{
    if (!ps)
        return;
    for (guint i = 0; i < ps->tables->len; i++)
        kspace_free_frame(ps->ks, g_array_index(ps->tables, uint64_t, i));
    g_array_free(ps->tables, TRUE);
    g_free(ps);
}

uint32_t pspace_user_cr3(const ProcSpace *ps) { return (uint32_t)ps->user_pdpt; }
uint32_t pspace_kernel_cr3(const ProcSpace *ps) { return (uint32_t)ps->kern_pdpt; }
unsigned pspace_table_pages(const ProcSpace *ps) { return ps->tables->len; }

/* The PTE address for a user va, creating the page table if asked. */
static uint64_t user_pte(ProcSpace *ps, uint32_t va, bool create, GError **err)
{
    KernelSpace *ks = ps->ks;
    uint64_t pdea = pde_addr(ks, ps->upd[ptformat_pd_index(va)], va);
    uint64_t pde = rd(ks, pdea);
    if (!(pde & PAE_P)) {
        if (!create)
            return 0;
        uint64_t pt = proc_table(ps, err);
        if (!pt)
            return 0;
        pde = pt | USER_TABLE;
        wr(ks, pdea, pde);
        if (ps->mirror_pd)
            wr(ks, pde_addr(ks, ps->mirror_pd, va), pde);
    }
    return pte_addr(ks, pde & ks->fmt->addr_4k, va);
}

bool pspace_map_user(ProcSpace *ps, uint32_t va, uint64_t pa, bool writable,
                     GError **err)
{
    const Layout *l = ps->ks->layout;
    if (va >= l->task_size || (va & (PAGE_SIZE - 1)) || (pa & (PAGE_SIZE - 1))) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "user mapping 0x%08x: expected a page-aligned address below "
                    "TASK_SIZE 0x%08x", va, l->task_size);
        return false;
    }
    uint64_t pte = user_pte(ps, va, true, err);
    if (!pte)
        return false;
    wr(ps->ks, pte, pa | PAGE_USER | (writable ? PAE_RW : 0));
    return true;
}

uint64_t pspace_unmap_user(ProcSpace *ps, uint32_t va)
{
    if (va >= ps->ks->layout->task_size)
        return 0;
    uint64_t pte = user_pte(ps, va, false, NULL);
    if (!pte)
        return 0;
    uint64_t old = rd(ps->ks, pte);
    wr(ps->ks, pte, 0);
    return (old & PAE_P) ? (old & ps->ks->fmt->addr_4k) : 0;
}

uint64_t pspace_user_pte_pa(ProcSpace *ps, uint32_t va, bool create, GError **err)
{
    if (va >= ps->ks->layout->task_size) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "user address 0x%08x is above TASK_SIZE 0x%08x", va,
                    ps->ks->layout->task_size);
        return 0;
    }
    uint64_t pte = user_pte(ps, va, create, err);
    if (!pte && create && err && !*err)
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "no page table for 0x%08x", va);
    return pte;
}
