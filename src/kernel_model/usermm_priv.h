/* The inside of kernel_model/usermm.h, shared by its two halves:
 * usermm.c (address spaces: page states, frames, mappings, fork and exec)
 * and usermm_fault.c (the fault body and its profiles). */
#ifndef VMSPLIT_KERNEL_MODEL_USERMM_PRIV_H
#define VMSPLIT_KERNEL_MODEL_USERMM_PRIV_H

#include "kernel_model/usermm.h"
#include "mmu/pae.h"

#define LINE 64
#define KDATA_POOL 16                /* kernel data pages the fault bodies read */
#define KMAP_SHARED_VA 0xFFFFA000u   /* KM_USER0/1 slots: the fixmap (shared layouts) */
#define KMAP_WINDOW_OFF 0xA000u      /* ... in the 4g4g window / kpti entry area */
#define PTE_USER (PAE_P | PAE_US | PAE_A)

typedef UserFaultProfile FaultProfile;

typedef struct {
    uint32_t start, end;             /* page-aligned, end exclusive */
    uint8_t prot, flags;             /* TRACE_PROT_*, TRACE_MAP_* (trace.h values) */
} Region;

#define PROT_W 0x2u
#define MAP_SHARED_F 0x1u
#define MAP_ANON_F 0x2u
#define MAP_STACK_F 0x4u             /* TRACE_MAP_STACK: the stack, grows down */

/* One address space: its mappings, the state of each page, and the tasks
 * that share it (threads). */
typedef struct {
    unsigned users;
    GArray *regions;                 /* Region, sorted by start, disjoint */
    UserPageDir dir;
    GArray *tasks;                   /* int: machine tasks running on it */
    bool have_brk;
    uint32_t brk_base, brk_end;      /* heap: [page_up(base), page_up(end)) */
} Mm;

/* The fault the next touch raises, worked out before it (usermm_fault_in). */
typedef struct {
    bool armed;
    uint32_t va;                     /* the touched address: CR2 */
    uint32_t error_code;             /* what the CPU must push (SDM Vol. 3A §4.7) */
    uint32_t page;
    UserFaultKind kind;
    uint8_t new_state;
    bool writable;                   /* PTE R/W */
    uint64_t old_frame;              /* COW source (0: the page-cache frame) */
    uint64_t new_frame;              /* allocated before the touch (0: none needed) */
} FaultPlan;

struct UserMm {
    Machine *m;
    KernelSpace *ks;
    const PageTableFormat *fmt;      /* entry size and address field (ptformat.h) */
    PhysMem *pm;
    const CpuCosts *cost;
    FaultProfile prof[UFAULT_KINDS];
    Mm *task_mm[MACHINE_MAX_TASKS];
    GHashTable *frames;              /* frame >> 12 -> mappings of it */
    uint64_t zero_frame, cache_frame;
    uint32_t kdata_va[KDATA_POOL];
    uint32_t kmap_va[2];
    uint64_t kmap_pte[2];
    FaultPlan plan;
    UserMmStats st;
};

static inline uint32_t um_page_down(uint64_t a)
{
    return (uint32_t)(a & ~(uint64_t)(PAGE_SIZE - 1));
}

/* Page states, frames and page-table entries (usermm.c). */
void um_set_state(Mm *mm, uint32_t va, uint8_t s);
void um_frame_get(UserMm *um, uint64_t pa);
unsigned um_frame_users(UserMm *um, uint64_t pa);
void um_frame_put(UserMm *um, uint64_t pa);
uint64_t um_pte_pa(UserMm *um, int task, uint32_t va, bool create, GError **err);
uint64_t um_read_pte(UserMm *um, int task, uint32_t va);
bool um_set_pte_others(UserMm *um, Mm *mm, int except, uint32_t va, uint64_t pte,
                       GError **err);
Mm *um_mm_of(UserMm *um, int task);
Region *um_find_region(Mm *mm, uint32_t va);
/* The fault body's setup (usermm_fault.c). */
bool um_fault_init(UserMm *um, const char *profiles, GError **err);

#endif
