/* User address spaces of replayed programs: page states, frames,
 * mappings, fork and exec (see usermm.h; the page-fault body is
 * usermm_fault.c). */
#include "kernel_model/usermm_priv.h"

#include <gio/gio.h>
#include <string.h>

static const char *const fault_names[UFAULT_KINDS] = {
#define X(id, name) name,
    USERMM_FAULT_KINDS(X)
#undef X
};

const char *usermm_fault_name(UserFaultKind k)
{
    g_assert(k < UFAULT_KINDS);
    return fault_names[k];
}

/* ---------------- page states and frames ---------------- */

void um_set_state(Mm *mm, uint32_t va, uint8_t s)
{
    uint8_t **l = &mm->dir.leaf[va >> 22];
    if (!*l) {
        if (s == UPAGE_NONE)
            return;
        *l = g_malloc0(1024);
    }
    (*l)[(va >> 12) & 1023] = s;
}

void um_frame_get(UserMm *um, uint64_t pa)
{
    if (pa == um->zero_frame || pa == um->cache_frame)
        return;
    gpointer k = GUINT_TO_POINTER((guint)(pa >> 12));
    g_hash_table_insert(um->frames, k,
                        GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(um->frames, k)) + 1));
}

unsigned um_frame_users(UserMm *um, uint64_t pa)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(um->frames, GUINT_TO_POINTER((guint)(pa >> 12))));
}

/* One mapping of frame pa fewer; the frame goes back when none is left.
 * The zero page and the page-cache frame are not counted. */
void um_frame_put(UserMm *um, uint64_t pa)
{
    gpointer k = GUINT_TO_POINTER((guint)(pa >> 12));
    unsigned n = GPOINTER_TO_UINT(g_hash_table_lookup(um->frames, k));
    if (!n)
        return;
    if (n == 1) {
        g_hash_table_remove(um->frames, k);
        kspace_free_frame(um->ks, pa);
    } else {
        g_hash_table_insert(um->frames, k, GUINT_TO_POINTER(n - 1));
    }
}

/* The PTE of va in task's page table (host side: setup, not modelled). */
uint64_t um_pte_pa(UserMm *um, int task, uint32_t va, bool create, GError **err)
{
    return pspace_user_pte_pa(machine_task_space(um->m, task), va, create, err);
}

uint64_t um_read_pte(UserMm *um, int task, uint32_t va)
{
    uint64_t a = um_pte_pa(um, task, va, false, NULL);
    return a ? ptformat_read(um->fmt, um->pm, a) : 0;
}

/* Writes the PTE of va in every task of mm but `except` (host side: the
 * faulting task's is written by the body as modelled stores). */
bool um_set_pte_others(UserMm *um, Mm *mm, int except, uint32_t va, uint64_t pte,
                           GError **err)
{
    for (guint i = 0; i < mm->tasks->len; i++) {
        int t = g_array_index(mm->tasks, int, i);
        if (t == except)
            continue;
        uint64_t a = um_pte_pa(um, t, va, pte != 0, err);
        if (!a && pte)
            return false;
        if (a)
            ptformat_write(um->fmt, um->pm, a, pte);
    }
    return true;
}

/* ---------------- address spaces ---------------- */

static Mm *mm_new(void)
{
    Mm *mm = g_new0(Mm, 1);
    mm->regions = g_array_new(FALSE, FALSE, sizeof(Region));
    mm->tasks = g_array_new(FALSE, FALSE, sizeof(int));
    return mm;
}

static void mm_add_task(Mm *mm, int task)
{
    g_array_append_val(mm->tasks, task);
    mm->users++;
}

UserPageDir *usermm_dir(UserMm *um, int task)
{
    if (!um->task_mm[task]) {
        um->task_mm[task] = mm_new();
        mm_add_task(um->task_mm[task], task);
    }
    return &um->task_mm[task]->dir;
}

Mm *um_mm_of(UserMm *um, int task)
{
    usermm_dir(um, task);
    return um->task_mm[task];
}

/* Drops the pages of [start, end) from mm: their PTEs cleared in every
 * task of mm (host side: the syscall that unmapped them did the flush),
 * their frames released. Returns how many were present. */
static uint64_t drop_pages(UserMm *um, Mm *mm, uint32_t start, uint32_t end)
{
    uint64_t n = 0;
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        uint8_t *l = mm->dir.leaf[va >> 22];
        if (!l) {
            va = (va | 0x3FFFFFu);   /* the next 4 MiB (minus the step) */
            va -= PAGE_SIZE - 1;
            continue;
        }
        uint8_t s = l[(va >> 12) & 1023];
        if (s == UPAGE_NONE || s >= UPAGE_MODEL) {
            l[(va >> 12) & 1023] = UPAGE_NONE;
            continue;
        }
        uint64_t pte = um_read_pte(um, g_array_index(mm->tasks, int, 0), (uint32_t)va);
        um_set_pte_others(um, mm, -1, (uint32_t)va, 0, NULL);
        if (pte & PAE_P)
            um_frame_put(um, pte & um->fmt->addr_4k);
        l[(va >> 12) & 1023] = UPAGE_NONE;
        um->st.pages_mapped--;
        n++;
    }
    return n;
}

static void mm_release(UserMm *um, Mm *mm, int task)
{
    for (guint i = 0; i < mm->tasks->len; i++)
        if (g_array_index(mm->tasks, int, i) == task) {
            g_array_remove_index_fast(mm->tasks, i);
            break;
        }
    if (--mm->users)
        return;
    mm_add_task(mm, task);           /* drop_pages reads and clears its PTEs */
    drop_pages(um, mm, 0, UINT32_MAX & ~(PAGE_SIZE - 1));
    for (unsigned i = 0; i < 1024; i++)
        g_free(mm->dir.leaf[i]);
    g_array_free(mm->regions, TRUE);
    g_array_free(mm->tasks, TRUE);
    g_free(mm);
}

/* A CR3 reload of the current page table: __flush_tlb(), charged as the
 * core charges MOV from and to CR3 (as body.c's flush_mm). With PCID a CR3
 * write keeps the entries (mmu.h), so the current PCID is flushed instead
 * (INVPCID single-context; estimate: charged as a MOV to CR3). */
static void flush_tlb(UserMm *um, uint64_t *count)
{
    Mmu *mmu = machine_mmu(um->m);
    Cpu *cpu = machine_cpu(um->m);
    uint64_t c0 = cpu_cycles(cpu);
    if (machine_layout(um->m)->pcid) {
        mmu_flush_pcid(mmu, mmu_pcid(mmu));
    } else {
        MmuFault f;
        bool ok = mmu_write_cr3(mmu, mmu_cr3(mmu), &f);
        g_assert(ok);
    }
    machine_charge(um->m, (uint64_t)um->cost->alu + um->cost->mov_cr3, 2);
    um->st.flush_cycles += cpu_cycles(cpu) - c0;
    (*count)++;
}

/* After munmap, mprotect or a shrinking brk took pages away or write
 * access from them: their syscall ended with __flush_tlb() (body.c), which
 * under PCID keeps the entries; flush the current PCID then, as Linux's
 * flush_tlb_mm_range does with PCID. */
static void flush_if_pcid(UserMm *um, int task, uint64_t changed)
{
    if (changed && machine_layout(um->m)->pcid && task == machine_current(um->m))
        flush_tlb(um, &um->st.pcid_flushes);
}

void usermm_exec(UserMm *um, int task)
{
    Mm *old = um->task_mm[task];
    if (!old)
        return;
    uint64_t dropped = 0;
    if (old->users == 1) {
        dropped = drop_pages(um, old, 0, UINT32_MAX & ~(PAGE_SIZE - 1));
        g_array_set_size(old->regions, 0);
        old->have_brk = false;
        old->brk_base = old->brk_end = 0;
    } else {
        /* A vfork child (or a thread) leaves the shared mm: its own page
         * table loses the pages, the others keep them. */
        for (unsigned i = 0; i < 1024; i++)
            for (unsigned j = 0; old->dir.leaf[i] && j < 1024; j++) {
                uint8_t s = old->dir.leaf[i][j];
                uint32_t va = (i << 22) | (j << 12);
                if (s != UPAGE_NONE && s < UPAGE_MODEL) {
                    uint64_t a = um_pte_pa(um, task, va, false, NULL);
                    if (a)
                        ptformat_write(um->fmt, um->pm, a, 0);
                    dropped++;
                }
            }
        mm_release(um, old, task);
        um->task_mm[task] = NULL;
        usermm_dir(um, task);
    }
    if (dropped && task == machine_current(um->m))
        flush_tlb(um, &um->st.exec_flushes);
}

void usermm_exit(UserMm *um, int task)
{
    if (um->task_mm[task])
        mm_release(um, um->task_mm[task], task);
    um->task_mm[task] = NULL;
}

/* Copies parent's present pages into child's page table: shared memory as
 * it is, private pages write-protected in both (copy_page_range's COW). */
static bool copy_pages(UserMm *um, Mm *pm, Mm *cm, int parent, int child, bool *wp,
                       GError **err)
{
    for (unsigned i = 0; i < 1024; i++) {
        uint8_t *l = pm->dir.leaf[i];
        for (unsigned j = 0; l && j < 1024; j++) {
            uint8_t s = l[j];
            if (s == UPAGE_NONE || s >= UPAGE_MODEL)
                continue;
            uint32_t va = (i << 22) | (j << 12);
            uint64_t pa = um_pte_pa(um, parent, va, false, NULL);
            uint64_t pte = pa ? ptformat_read(um->fmt, um->pm, pa) : 0;
            if (!(pte & PAE_P))
                continue;
            if (s == UPAGE_RW && cm != pm) {   /* private writable: COW in both */
                bool shared = false;
                for (guint r = 0; r < pm->regions->len; r++) {
                    const Region *g = &g_array_index(pm->regions, Region, r);
                    if (va >= g->start && va < g->end)
                        shared = (g->flags & MAP_SHARED_F) != 0;
                }
                if (!shared) {
                    pte &= ~(uint64_t)PAE_RW;
                    if (!um_set_pte_others(um, pm, -1, va, pte, err))
                        return false;
                    l[j] = s = UPAGE_COW;
                    *wp = true;
                }
            }
            uint64_t ca = um_pte_pa(um, child, va, true, err);
            if (!ca)
                return false;
            ptformat_write(um->fmt, um->pm, ca, pte);
            if (cm != pm) {
                um_set_state(cm, va, s);
                if (pte & um->fmt->addr_4k)
                    um_frame_get(um, pte & um->fmt->addr_4k);
            }
        }
    }
    return true;
}

bool usermm_fork(UserMm *um, int parent, int child, bool shared_vm, GError **err)
{
    Mm *pm = um_mm_of(um, parent);
    g_assert(!um->task_mm[child]);
    Mm *cm;
    if (shared_vm) {
        cm = pm;
        mm_add_task(cm, child);
    } else {
        cm = mm_new();
        mm_add_task(cm, child);
        g_array_append_vals(cm->regions, pm->regions->data, pm->regions->len);
        cm->have_brk = pm->have_brk;
        cm->brk_base = pm->brk_base;
        cm->brk_end = pm->brk_end;
    }
    um->task_mm[child] = cm;
    bool wp = false;
    if (!copy_pages(um, pm, cm, parent, child, &wp, err))
        return false;
    if (wp && parent == machine_current(um->m))
        flush_tlb(um, &um->st.fork_flushes);   /* dup_mmap: flush_tlb_mm(oldmm) */
    return true;
}

/* ---------------- mappings ---------------- */

static bool range_of(uint64_t addr, uint64_t len, uint32_t *start, uint32_t *end, GError **err)
{
    uint64_t e = addr + len;
    if (e < addr || e > 0xFFFFF000ull) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "mapping [0x%" G_GINT64_MODIFIER "x, +%" G_GUINT64_FORMAT
                    ") outside the i686 address space (expected folded addresses)",
                    addr, len);
        return false;
    }
    *start = um_page_down(addr);
    *end = um_page_down(e + PAGE_SIZE - 1);
    return true;
}

/* Removes [start, end) from the region list, splitting what straddles it. */
static void carve(Mm *mm, uint32_t start, uint32_t end)
{
    for (guint i = 0; i < mm->regions->len;) {
        Region *r = &g_array_index(mm->regions, Region, i);
        if (r->end <= start || r->start >= end) {
            i++;
            continue;
        }
        Region left = *r, right = *r;
        left.end = start;
        right.start = end;
        g_array_remove_index(mm->regions, i);
        if (right.start < right.end)
            g_array_insert_val(mm->regions, i, right);
        if (left.start < left.end)
            g_array_insert_val(mm->regions, i, left);
        i += (left.start < left.end) + (right.start < right.end);
    }
}

static void insert_region(Mm *mm, Region r)
{
    guint i = 0;
    while (i < mm->regions->len && g_array_index(mm->regions, Region, i).start < r.start)
        i++;
    g_array_insert_val(mm->regions, i, r);
}

bool usermm_mmap(UserMm *um, int task, uint64_t addr, uint64_t len, uint8_t prot,
                 uint8_t flags, GError **err)
{
    uint32_t s, e;
    if (!range_of(addr, len, &s, &e, err))
        return false;
    Mm *mm = um_mm_of(um, task);
    flush_if_pcid(um, task, drop_pages(um, mm, s, e));   /* MAP_FIXED over old pages */
    carve(mm, s, e);
    if (s < e)
        insert_region(mm, (Region){ s, e, prot, flags });
    return true;
}

bool usermm_munmap(UserMm *um, int task, uint64_t addr, uint64_t len, GError **err)
{
    uint32_t s, e;
    if (!range_of(addr, len, &s, &e, err))
        return false;
    Mm *mm = um_mm_of(um, task);
    flush_if_pcid(um, task, drop_pages(um, mm, s, e));
    carve(mm, s, e);
    return true;
}

/* The state a present page of a region with prot takes (mprotect). */
static uint8_t state_for(const Region *r, uint8_t s)
{
    if (s == UPAGE_ZEROPG)
        return s;
    if (!(r->prot & PROT_W))
        return UPAGE_RO;
    if (r->flags & MAP_SHARED_F)
        return UPAGE_RW;
    if (s == UPAGE_RO)               /* writable again: the next write faults */
        return (r->flags & MAP_ANON_F) ? UPAGE_COW : UPAGE_FCOW;
    return s;
}

bool usermm_mprotect(UserMm *um, int task, uint64_t addr, uint64_t len, uint8_t prot,
                     GError **err)
{
    uint32_t s, e;
    if (!range_of(addr, len, &s, &e, err))
        return false;
    Mm *mm = um_mm_of(um, task);
    GArray *pieces = g_array_new(FALSE, FALSE, sizeof(Region));
    for (guint i = 0; i < mm->regions->len; i++) {
        Region r = g_array_index(mm->regions, Region, i);
        if (r.end <= s || r.start >= e)
            continue;
        r.start = MAX(r.start, s);
        r.end = MIN(r.end, e);
        r.prot = prot;
        g_array_append_val(pieces, r);
    }
    carve(mm, s, e);
    bool ok = true;
    uint64_t changed = 0;
    for (guint i = 0; i < pieces->len && ok; i++) {
        Region *r = &g_array_index(pieces, Region, i);
        insert_region(mm, *r);
        /* Present pages get the new protection (change_protection; the
         * mprotect syscall's flush_tlb_range is already charged). */
        for (uint32_t va = r->start; va < r->end && ok; va += PAGE_SIZE) {
            uint8_t st = usermm_page_state(&mm->dir, va);
            if (st == UPAGE_NONE || st >= UPAGE_MODEL)
                continue;
            uint8_t ns = state_for(r, st);
            uint64_t pte = um_read_pte(um, g_array_index(mm->tasks, int, 0), va);
            pte = ns == UPAGE_RW ? pte | PAE_RW : pte & ~(uint64_t)PAE_RW;
            ok = um_set_pte_others(um, mm, -1, va, pte, err);
            changed += ns != UPAGE_RW;
            um_set_state(mm, va, ns);
        }
    }
    g_array_free(pieces, TRUE);
    flush_if_pcid(um, task, changed);
    return ok;
}

bool usermm_brk(UserMm *um, int task, uint64_t addr, GError **err)
{
    uint32_t s, e;
    if (!range_of(addr, 0, &s, &e, err))
        return false;
    Mm *mm = um_mm_of(um, task);
    if (!mm->have_brk) {
        mm->have_brk = true;
        mm->brk_base = mm->brk_end = (uint32_t)addr;
        return true;
    }
    uint32_t base = um_page_down((uint64_t)mm->brk_base + PAGE_SIZE - 1);
    uint32_t old_end = um_page_down((uint64_t)mm->brk_end + PAGE_SIZE - 1);
    uint32_t new_end = MAX(base, um_page_down(addr + PAGE_SIZE - 1));
    if (new_end < old_end)
        flush_if_pcid(um, task, drop_pages(um, mm, new_end, old_end));
    carve(mm, base, MAX(old_end, new_end));
    if (base < new_end)
        insert_region(mm, (Region){ base, new_end, 0x3, MAP_ANON_F });
    mm->brk_end = (uint32_t)MAX(addr, (uint64_t)mm->brk_base);
    return true;
}

/* The region holding va, or the stack grown down to it: the region the
 * trace marked `stack` (the one holding the highest address when several
 * are), else the private anonymous writable region with the highest end;
 * when va lies below it, above every other region and at most STACK_LIMIT
 * below its end (the default RLIMIT_STACK; the trace has no ESP for 2.6's
 * "esp - 65536 - 32 * sizeof(long)" check) (FORMAT.md: stack growth). A
 * capture folds later anonymous mappings above the stack, so the marked
 * one is the stack, not the highest. */
#define STACK_LIMIT (8u << 20)
Region *um_find_region(Mm *mm, uint32_t va)
{
    Region *stack = NULL, *marked = NULL;
    for (guint i = 0; i < mm->regions->len; i++) {
        Region *r = &g_array_index(mm->regions, Region, i);
        if (va >= r->start && va < r->end)
            return r;
        if ((r->flags & (MAP_ANON_F | MAP_SHARED_F)) == MAP_ANON_F && (r->prot & PROT_W) &&
            (!stack || r->end > stack->end))
            stack = r;
        if ((r->flags & MAP_STACK_F) && r->end > va && (!marked || r->end < marked->end))
            marked = r;             /* the marked stack nearest above va */
    }
    if (marked)
        stack = marked;
    if (!stack || va >= stack->start || stack->end - va > STACK_LIMIT)
        return NULL;
    for (guint i = 0; i < mm->regions->len; i++) {
        Region *r = &g_array_index(mm->regions, Region, i);
        if (r != stack && r->end > va && r->start < stack->start)
            return NULL;
    }
    stack->start = um_page_down(va);
    return stack;
}

/* ---------------- lifetime ---------------- */

const UserMmStats *usermm_stats(const UserMm *um) { return &um->st; }

UserMm *usermm_new(Machine *m, const char *profiles, GError **err)
{
    UserMm *um = g_new0(UserMm, 1);
    um->m = m;
    um->ks = machine_kspace(m);
    um->pm = kspace_physmem(um->ks);
    um->fmt = kspace_paging(um->ks);
    um->cost = cpu_costs(machine_cpu(m));
    um->frames = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (!um_fault_init(um, profiles, err)) {
        g_hash_table_destroy(um->frames);
        g_free(um);
        return NULL;
    }
    return um;
}

void usermm_free(UserMm *um)
{
    if (!um)
        return;
    machine_set_fault_body(um->m, NULL, NULL);
    for (int t = 0; t < MACHINE_MAX_TASKS; t++)
        if (um->task_mm[t])
            usermm_exit(um, t);
    g_hash_table_destroy(um->frames);
    g_free(um);
}
