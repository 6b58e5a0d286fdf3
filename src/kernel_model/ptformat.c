/* The page-table formats; see ptformat.h. */
#include "kernel_model/ptformat.h"

#include "mmu/mmu.h"

#include <string.h>

/* SDM Vol. 3A §4.4 (PAE paging); Linux 2.6 include/asm-i386/
 * pgtable-3level-defs.h: PGDIR_SHIFT 30, PTRS_PER_PGD 4, PMD_SHIFT 21,
 * PTRS_PER_PMD 512, PTRS_PER_PTE 512; 64-bit pte_t. */
const PageTableFormat ptformat_pae = {
    .mode = PAGING_PAE,
    .name = "pae",
    .title = "PAE",
    .levels = 3,
    .entry_bytes = 8,
    .shift = { PAE_PDPTE_SHIFT, PAE_PDE_SHIFT, 12 },
    .entries = { PAE_PTRS_PER_PDPT, PAE_PTRS_PER_PD, PAE_PTRS_PER_PT },
    .large_page = PAE_PAGE_2M,
    .addr_4k = PAE_ADDR_4K,
    .cr3_base_mask = PAE_CR3_PDPT_MASK,
    .cr4_paging = CR4_PAE,
    .cr4_pse_for_large = false,          /* PAE's 2 MiB pages need no CR4.PSE (§4.4.2) */
    .xd = true,
    .phys_limit = PHYS_ADDR_LIMIT,       /* MAXPHYADDR 36 */
    .rules = &pae_rules,
    .source = "SDM Vol. 3A 4.4; Linux 2.6 pgtable-3level-defs.h",
};

/* SDM Vol. 3A §4.3 (32-bit paging); Linux 2.6 include/asm-i386/
 * pgtable-2level-defs.h: PGDIR_SHIFT 22, PTRS_PER_PGD 1024, PTRS_PER_PTE
 * 1024 (the PMD folded into the PGD); 32-bit pte_t. Large pages are 4 MiB
 * with CR4.PSE (§4.3, Table 4-4); Linux sets it when cpu_has_pse
 * (arch/i386/mm/init.c pagetable_init) and maps lowmem with
 * PAGE_KERNEL_LARGE. Physical addresses stop at 4 GiB: Linux does not use
 * PSE-36 for RAM (setup.c: "Warning only 4GB will be used. Use a PAE
 * enabled kernel."). */
const PageTableFormat ptformat_legacy = {
    .mode = PAGING_LEGACY,
    .name = "legacy",
    .title = "non-PAE",
    .levels = 2,
    .entry_bytes = 4,
    .shift = { LEG_PDE_SHIFT, 12 },
    .entries = { LEG_PTRS_PER_PD, LEG_PTRS_PER_PT },
    .large_page = LEG_PAGE_4M,
    .addr_4k = 0xFFFFF000u,              /* PDE and PTE bits 31:12 (Tables 4-5, 4-6) */
    .cr3_base_mask = LEG_CR3_PD_MASK,
    .cr4_paging = 0,
    .cr4_pse_for_large = true,
    .xd = false,                         /* no XD in 32-bit paging (4.3) */
    .phys_limit = 1ULL << 32,
    .rules = &legacy_rules,
    .source = "SDM Vol. 3A 4.3; Linux 2.6 pgtable-2level-defs.h",
};

static const PageTableFormat *const formats[PAGING_NMODES] = { &ptformat_pae, &ptformat_legacy };

const PageTableFormat *ptformat_get(PagingMode mode)
{
    g_assert(mode < PAGING_NMODES);
    return formats[mode];
}

const PageTableFormat *ptformat_find(const char *name)
{
    for (unsigned i = 0; i < PAGING_NMODES; i++)
        if (name && !strcmp(formats[i]->name, name))
            return formats[i];
    return NULL;
}

const char *ptformat_names(void) { return "pae, legacy"; }
