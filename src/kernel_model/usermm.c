/* User address spaces and page faults of replayed programs: see usermm.h. */
#include "kernel_model/usermm.h"

#include "config.h"
#include "mmu/pae.h"

#include <gio/gio.h>
#include <string.h>

#define LINE 64
#define KDATA_POOL 16                /* kernel data pages the fault bodies read */
#define KMAP_SHARED_VA 0xFFFFA000u   /* KM_USER0/1 slots: the fixmap (shared layouts) */
#define KMAP_WINDOW_OFF 0xA000u      /* ... in the 4g4g window / kpti entry area */
#define PTE_USER (PAE_P | PAE_US | PAE_A)
#define RET_BYTE 0xC3                /* what a file page holds (user.asm's fetch touch) */

static uint8_t ret_page[PAGE_SIZE];  /* filled with RET_BYTE at usermm_new */
static const uint8_t zero_page[PAGE_SIZE];

static gpointer fill_ret_page(gpointer unused)
{
    (void)unused;
    memset(ret_page, RET_BYTE, sizeof ret_page);
    return NULL;
}

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

typedef struct {
    uint32_t insns, kdata_pages;
} FaultProfile;

typedef struct {
    uint32_t start, end;             /* page-aligned, end exclusive */
    uint8_t prot, flags;             /* TRACE_PROT_*, TRACE_MAP_* (trace.h values) */
} Region;

#define PROT_W 0x2u
#define MAP_SHARED_F 0x1u
#define MAP_ANON_F 0x2u

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

/* ---------------- profiles (faults.ini) ---------------- */

static char *default_profiles(void)
{
    char *p = g_build_filename(VMSPLIT_SOURCE_DIR, "src", "kernel_model", "faults.ini", NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
        return p;
    g_free(p);
    return g_build_filename(VMSPLIT_DATADIR, "faults.ini", NULL);
}

static bool load_u32(GKeyFile *kf, const char *file, const char *g, const char *k, uint32_t *out,
                     GError **err)
{
    char *v = g_key_file_get_value(kf, g, k, NULL);
    guint64 n;
    bool ok = v && g_ascii_string_to_unsigned(v, 10, 0, 1000000, &n, NULL);
    if (ok)
        *out = (uint32_t)n;
    else
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: [%s] %s: expected a number (0 to 1000000), got '%s'", file, g, k,
                    v ? v : "nothing");
    g_free(v);
    return ok;
}

static bool load_profiles(UserMm *um, const char *path, GError **err)
{
    char *file = path ? g_strdup(path) : default_profiles();
    GKeyFile *kf = g_key_file_new();
    GError *e = NULL;
    bool ok = g_key_file_load_from_file(kf, file, G_KEY_FILE_NONE, &e);
    if (!ok) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", file, e->message);
        g_error_free(e);
    }
    for (int k = 0; ok && k < UFAULT_KINDS; k++) {
        const char *g = fault_names[k];
        if (!g_key_file_has_group(kf, g)) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: no [%s] profile", file, g);
            ok = false;
            break;
        }
        gsize nkeys = 0;
        char **keys = g_key_file_get_keys(kf, g, &nkeys, NULL);
        for (gsize i = 0; ok && i < nkeys; i++)
            if (strcmp(keys[i], "insns") && strcmp(keys[i], "kdata_pages") &&
                strcmp(keys[i], "range")) {
                g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                            "%s: [%s]: unknown key '%s' (expected insns, kdata_pages, range)",
                            file, g, keys[i]);
                ok = false;
            }
        g_strfreev(keys);
        ok = ok && load_u32(kf, file, g, "insns", &um->prof[k].insns, err) &&
             load_u32(kf, file, g, "kdata_pages", &um->prof[k].kdata_pages, err);
        char *range = ok ? g_key_file_get_value(kf, g, "range", NULL) : NULL;
        unsigned lo, hi;
        if (ok && (!range || sscanf(range, "%u-%u", &lo, &hi) != 2 || lo > um->prof[k].insns ||
                   hi < um->prof[k].insns)) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "%s: [%s] range: expected LOW-HIGH around insns %u, got '%s'", file, g,
                        um->prof[k].insns, range ? range : "nothing");
            ok = false;
        }
        g_free(range);
    }
    g_key_file_free(kf);
    g_free(file);
    return ok;
}

/* ---------------- page states and frames ---------------- */

static void set_state(Mm *mm, uint32_t va, uint8_t s)
{
    uint8_t **l = &mm->dir.leaf[va >> 22];
    if (!*l) {
        if (s == UPAGE_NONE)
            return;
        *l = g_malloc0(1024);
    }
    (*l)[(va >> 12) & 1023] = s;
}

static void frame_get(UserMm *um, uint64_t pa)
{
    if (pa == um->zero_frame || pa == um->cache_frame)
        return;
    gpointer k = GUINT_TO_POINTER((guint)(pa >> 12));
    g_hash_table_insert(um->frames, k,
                        GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(um->frames, k)) + 1));
}

static unsigned frame_users(UserMm *um, uint64_t pa)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(um->frames, GUINT_TO_POINTER((guint)(pa >> 12))));
}

/* One mapping of frame pa fewer; the frame goes back when none is left.
 * The zero page and the page-cache frame are not counted. */
static void frame_put(UserMm *um, uint64_t pa)
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
static uint64_t pte_pa(UserMm *um, int task, uint32_t va, bool create, GError **err)
{
    return pspace_user_pte_pa(machine_task_space(um->m, task), va, create, err);
}

static uint64_t read_pte(UserMm *um, int task, uint32_t va)
{
    uint64_t a = pte_pa(um, task, va, false, NULL);
    return a ? physmem_read64(um->pm, a) : 0;
}

/* Writes the PTE of va in every task of mm but `except` (host side: the
 * faulting task's is written by the body as modelled stores). */
static bool set_pte_others(UserMm *um, Mm *mm, int except, uint32_t va, uint64_t pte,
                           GError **err)
{
    for (guint i = 0; i < mm->tasks->len; i++) {
        int t = g_array_index(mm->tasks, int, i);
        if (t == except)
            continue;
        uint64_t a = pte_pa(um, t, va, pte != 0, err);
        if (!a && pte)
            return false;
        if (a)
            physmem_write64(um->pm, a, pte);
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

static Mm *mm_of(UserMm *um, int task)
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
        uint64_t pte = read_pte(um, g_array_index(mm->tasks, int, 0), (uint32_t)va);
        set_pte_others(um, mm, -1, (uint32_t)va, 0, NULL);
        if (pte & PAE_P)
            frame_put(um, pte & PAE_ADDR_4K);
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
                    uint64_t a = pte_pa(um, task, va, false, NULL);
                    if (a)
                        physmem_write64(um->pm, a, 0);
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
            uint64_t pa = pte_pa(um, parent, va, false, NULL);
            uint64_t pte = pa ? physmem_read64(um->pm, pa) : 0;
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
                    if (!set_pte_others(um, pm, -1, va, pte, err))
                        return false;
                    l[j] = s = UPAGE_COW;
                    *wp = true;
                }
            }
            uint64_t ca = pte_pa(um, child, va, true, err);
            if (!ca)
                return false;
            physmem_write64(um->pm, ca, pte);
            if (cm != pm) {
                set_state(cm, va, s);
                if (pte & PAE_ADDR_4K)
                    frame_get(um, pte & PAE_ADDR_4K);
            }
        }
    }
    return true;
}

bool usermm_fork(UserMm *um, int parent, int child, bool shared_vm, GError **err)
{
    Mm *pm = mm_of(um, parent);
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

static uint32_t page_down(uint64_t a) { return (uint32_t)(a & ~(uint64_t)(PAGE_SIZE - 1)); }

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
    *start = page_down(addr);
    *end = page_down(e + PAGE_SIZE - 1);
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
    Mm *mm = mm_of(um, task);
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
    Mm *mm = mm_of(um, task);
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
    Mm *mm = mm_of(um, task);
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
            uint64_t pte = read_pte(um, g_array_index(mm->tasks, int, 0), va);
            pte = ns == UPAGE_RW ? pte | PAE_RW : pte & ~(uint64_t)PAE_RW;
            ok = set_pte_others(um, mm, -1, va, pte, err);
            changed += ns != UPAGE_RW;
            set_state(mm, va, ns);
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
    Mm *mm = mm_of(um, task);
    if (!mm->have_brk) {
        mm->have_brk = true;
        mm->brk_base = mm->brk_end = (uint32_t)addr;
        return true;
    }
    uint32_t base = page_down((uint64_t)mm->brk_base + PAGE_SIZE - 1);
    uint32_t old_end = page_down((uint64_t)mm->brk_end + PAGE_SIZE - 1);
    uint32_t new_end = MAX(base, page_down(addr + PAGE_SIZE - 1));
    if (new_end < old_end)
        flush_if_pcid(um, task, drop_pages(um, mm, new_end, old_end));
    carve(mm, base, MAX(old_end, new_end));
    if (base < new_end)
        insert_region(mm, (Region){ base, new_end, 0x3, MAP_ANON_F });
    mm->brk_end = (uint32_t)MAX(addr, (uint64_t)mm->brk_base);
    return true;
}

/* The region holding va, or the stack grown down to it: the private
 * anonymous writable region with the highest end, when va lies below it,
 * above every other region and at most STACK_LIMIT below its end (the
 * default RLIMIT_STACK; the trace has no ESP for 2.6's "esp - 65536 - 32
 * * sizeof(long)" check) (FORMAT.md: stack growth). */
#define STACK_LIMIT (8u << 20)
static Region *find_region(Mm *mm, uint32_t va)
{
    Region *stack = NULL;
    for (guint i = 0; i < mm->regions->len; i++) {
        Region *r = &g_array_index(mm->regions, Region, i);
        if (va >= r->start && va < r->end)
            return r;
        if ((r->flags & (MAP_ANON_F | MAP_SHARED_F)) == MAP_ANON_F && (r->prot & PROT_W) &&
            (!stack || r->end > stack->end))
            stack = r;
    }
    if (!stack || va >= stack->start || stack->end - va > STACK_LIMIT)
        return NULL;
    for (guint i = 0; i < mm->regions->len; i++) {
        Region *r = &g_array_index(mm->regions, Region, i);
        if (r != stack && r->end > va && r->start < stack->start)
            return NULL;
    }
    stack->start = page_down(va);
    return stack;
}

/* ---------------- the fault body ---------------- */

static void kread(UserMm *um, uint32_t va)
{
    uint32_t v;
    machine_kernel_read(um->m, va, &v, 4);
}

/* kmap_atomic(page, KM_USER0 + slot): the kernel address of a user frame,
 * through a fixmap PTE and INVLPG when it is in highmem (as body.c's). */
static uint32_t kmap(UserMm *um, uint64_t frame, int slot)
{
    if (frame < kspace_lowmem_end(um->ks))
        return kspace_phys_to_virt(um->ks, frame);
    uint64_t pte = frame | PAE_P | PAE_RW | PAE_A | PAE_D;
    machine_kernel_write(um->m, kspace_phys_to_virt(um->ks, um->kmap_pte[slot]), &pte, 8);
    mmu_invlpg(machine_mmu(um->m), um->kmap_va[slot]);
    machine_charge(um->m, um->cost->invlpg, 1);
    return um->kmap_va[slot];
}

/* clear_page: rep stosl of 1024 dwords, its stores one per line. */
static void clear_frame(UserMm *um, uint64_t frame)
{
    uint32_t va = kmap(um, frame, 0), zero = 0;
    for (uint32_t off = 0; off < PAGE_SIZE; off += LINE)
        machine_kernel_write(um->m, va + off, &zero, 4);
    machine_charge(um->m, (uint64_t)(PAGE_SIZE / 4) * um->cost->string_iter, 1);
}

/* copy_page: rep movsl of 1024 dwords, a load and a store per line. */
static void copy_frame(UserMm *um, uint64_t from, uint64_t to)
{
    uint32_t src = kmap(um, from, 0), dst = kmap(um, to, 1);
    machine_kernel_copy_lines(um->m, src, dst, PAGE_SIZE / LINE, LINE);
    machine_charge(um->m, (uint64_t)(PAGE_SIZE / 4) * um->cost->string_iter, 1);
}

static void fault_body(Machine *m, uint32_t cr2, uint32_t error_code, void *user)
{
    UserMm *um = user;
    FaultPlan *p = &um->plan;
    if (!p->armed || page_down(cr2) != p->page)
        return;                      /* not the planned fault: the retry faults again */
    p->armed = false;
    /* What the stub passed must be what the CPU reported for this touch. */
    if (cr2 != p->va || error_code != p->error_code)
        um->st.bad_fault_info++;
    int task = machine_current(m);
    Mm *mm = um->task_mm[task];
    const FaultProfile *fp = &um->prof[p->kind];
    machine_charge(m, (uint64_t)fp->insns * um->cost->alu, fp->insns);
    for (uint32_t i = 0; i < fp->kdata_pages; i++)
        kread(um, um->kdata_va[(p->kind * 5 + i * 3) % KDATA_POOL] + (i % 64) * LINE);
    /* The PTE: read (pte_offset_map, handle_pte_fault), then written. */
    GError *e = NULL;
    uint64_t pte_at = pte_pa(um, task, p->page, true, &e);
    if (!pte_at) {
        g_warning("page fault at 0x%08x: %s", cr2, e ? e->message : "no page table");
        g_clear_error(&e);
        return;
    }
    uint32_t pte_va = kspace_phys_to_virt(um->ks, pte_at);
    uint64_t old;
    machine_kernel_read(m, pte_va, &old, 8);
    uint64_t frame = 0;
    bool invlpg = false;
    switch (p->kind) {
    case UFAULT_ANON_READ:
        frame = um->zero_frame;
        break;
    case UFAULT_DEMAND_ZERO:
        frame = p->new_frame;
        clear_frame(um, frame);
        invlpg = p->old_frame != 0;  /* it mapped the zero page */
        break;
    case UFAULT_FILE:
        frame = p->new_frame;
        physmem_write(um->pm, frame, ret_page, PAGE_SIZE);  /* the file's bytes, read before */
        break;
    case UFAULT_COW_COPY:
        frame = p->new_frame;
        copy_frame(um, p->old_frame ? p->old_frame : um->cache_frame, frame);
        invlpg = p->old_frame != 0;
        if (p->old_frame)
            frame_put(um, p->old_frame);
        break;
    case UFAULT_COW_REUSE:
        frame = p->old_frame;
        invlpg = true;
        break;
    case UFAULT_KINDS:
        g_assert_not_reached();
    }
    g_assert(frame);
    if (p->kind != UFAULT_ANON_READ && p->kind != UFAULT_COW_REUSE)
        frame_get(um, frame);
    uint64_t pte = frame | PTE_USER | (p->writable ? PAE_RW | PAE_D : 0);
    machine_kernel_write(m, pte_va, &pte, 8);
    if (invlpg) {                    /* flush_tlb_page */
        mmu_invlpg(machine_mmu(m), p->page);
        machine_charge(m, um->cost->invlpg, 1);
    }
    set_pte_others(um, mm, task, p->page, pte, NULL);
    if (!(old & PAE_P) && ++um->st.pages_mapped > um->st.pages_peak)
        um->st.pages_peak = um->st.pages_mapped;
    set_state(mm, p->page, p->new_state);
}

/* Works out the fault a touch of va for `write` will raise. False (err
 * set) if it is a trace error; *plan->armed false if no fault comes (the
 * machine's own page). */
static bool plan_fault(UserMm *um, Mm *mm, uint32_t va, MachineTouch how, FaultPlan *p,
                       GError **err)
{
    bool write = how == MACHINE_TOUCH_WRITE;
    uint32_t page = page_down(va);
    uint8_t s = usermm_page_state(&mm->dir, va);
    memset(p, 0, sizeof *p);
    p->page = page;
    if (s == UPAGE_NONE) {
        uint64_t pte = read_pte(um, machine_current(um->m), page);
        if (pte & PAE_P) {           /* one of the machine's own pages */
            set_state(mm, page, (pte & PAE_RW) ? UPAGE_MODEL : UPAGE_MODEL_RO);
            um->st.collisions++;
            return true;
        }
        Region *r = find_region(mm, va);
        if (!r) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "reference to 0x%08x outside every mapping the trace announced "
                        "(expected an mmap, brk or the stack to hold it)", va);
            return false;
        }
        if (write && !(r->prot & PROT_W)) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "write to 0x%08x in a mapping without write permission", va);
            return false;
        }
        bool shared = r->flags & MAP_SHARED_F, rw = r->prot & PROT_W;
        if (r->flags & MAP_ANON_F && !shared) {
            p->kind = write ? UFAULT_DEMAND_ZERO : UFAULT_ANON_READ;
            p->new_state = write ? UPAGE_RW : UPAGE_ZEROPG;
        } else if (write && !shared) {
            p->kind = UFAULT_COW_COPY;   /* do_no_page's copy of the file page */
            p->new_state = UPAGE_RW;
        } else {
            p->kind = UFAULT_FILE;       /* shared anonymous memory is shmem: a file too */
            p->new_state = shared && rw ? UPAGE_RW : rw ? UPAGE_FCOW : UPAGE_RO;
        }
    } else if (write && (s == UPAGE_COW || s == UPAGE_FCOW || s == UPAGE_ZEROPG)) {
        uint64_t frame = read_pte(um, machine_current(um->m), page) & PAE_ADDR_4K;
        p->old_frame = frame;
        p->new_state = UPAGE_RW;
        /* Only an anonymous page no other mm maps is reused (do_wp_page:
         * PageAnon and can_share_swap_page); a page-cache page is copied. */
        p->kind = s == UPAGE_ZEROPG ? UFAULT_DEMAND_ZERO
                  : s == UPAGE_COW && frame_users(um, frame) <= 1 ? UFAULT_COW_REUSE
                  : UFAULT_COW_COPY;
    } else if (write && s == UPAGE_RO) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "write to 0x%08x in a mapping without write permission", va);
        return false;
    } else {
        return true;                 /* present enough: no fault */
    }
    p->writable = p->new_state == UPAGE_RW;
    /* The frame the body will map, taken now so that running out of
     * simulated memory is an error here rather than in the body. */
    if (p->kind == UFAULT_DEMAND_ZERO || p->kind == UFAULT_FILE || p->kind == UFAULT_COW_COPY) {
        GError *e = NULL;
        if (!(p->new_frame = kspace_alloc_user_frame(um->ks, &e))) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                        "page fault at 0x%08x: no frame left for the program (%s)", va,
                        e ? e->message : "out of memory");
            g_clear_error(&e);
            return false;
        }
    }
    p->armed = true;
    return true;
}

bool usermm_fault_in(UserMm *um, uint32_t va, MachineTouch how, GError **err)
{
    Machine *m = um->m;
    Mm *mm = mm_of(um, machine_current(m));
    FaultPlan *p = &um->plan;
    if (!plan_fault(um, mm, va, how, p, err))
        return false;
    if (!p->armed)
        return true;
    /* A fetch touch calls the page: only a file page holds RETs. */
    if (how == MACHINE_TOUCH_EXEC && p->kind != UFAULT_FILE)
        how = MACHINE_TOUCH_READ;
    /* The error code (SDM Vol. 3A §4.7): P for a protection fault (a write
     * to a present read-only page), W/R, U/S = 1, I/D for a fetch when
     * EFER.NXE is set. */
    p->va = va;
    p->error_code = (p->old_frame || p->kind == UFAULT_COW_REUSE ? 1u : 0u) |
                    (how == MACHINE_TOUCH_WRITE ? 2u : 0u) | 4u |
                    (how == MACHINE_TOUCH_EXEC && (mmu_efer(machine_mmu(m)) & (1ull << 11))
                         ? 0x10u : 0u);
    UserFaultKind kind = p->kind;
    Cpu *cpu = machine_cpu(m);
    uint64_t c0 = cpu_cycles(cpu), i0 = cpu_insns(cpu);
    uint64_t w0 = mmu_stats(machine_mmu(m))->walk_cycles;
    if (!machine_user_touch(m, va, how, err)) {
        if (p->armed && p->new_frame)
            kspace_free_frame(um->ks, p->new_frame);
        p->armed = false;
        return false;
    }
    if (p->armed) {                  /* no fault came: the TLB still maps the page */
        p->armed = false;
        if (p->new_frame)
            kspace_free_frame(um->ks, p->new_frame);
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "the first touch of 0x%08x raised no page fault (a stale TLB entry?)", va);
        return false;
    }
    um->st.count[kind]++;
    um->st.cycles[kind] += cpu_cycles(cpu) - c0;
    um->st.insns += cpu_insns(cpu) - i0;
    um->st.walk_cycles += mmu_stats(machine_mmu(m))->walk_cycles - w0;
    return true;
}

/* ---------------- lifetime ---------------- */

const UserMmStats *usermm_stats(const UserMm *um) { return &um->st; }

UserMm *usermm_new(Machine *m, const char *profiles, GError **err)
{
    UserMm *um = g_new0(UserMm, 1);
    um->m = m;
    um->ks = machine_kspace(m);
    um->pm = kspace_physmem(um->ks);
    um->cost = cpu_costs(machine_cpu(m));
    um->frames = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (!machine_can_fault(m)) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "the stubs or user.o have no page-fault entry (page_fault_entry, "
                    "user_touch_*): rebuild them");
        goto fail;
    }
    if (!load_profiles(um, profiles, err))
        goto fail;
    for (unsigned i = 0; i < KDATA_POOL; i++) {
        uint64_t pa = kspace_alloc_frame(um->ks, err);
        if (!pa)
            goto fail;
        um->kdata_va[i] = kspace_phys_to_virt(um->ks, pa);
    }
    if (!(um->zero_frame = kspace_alloc_user_frame(um->ks, err)) ||
        !(um->cache_frame = kspace_alloc_user_frame(um->ks, err)))
        goto fail;
    static GOnce once = G_ONCE_INIT;
    g_once(&once, fill_ret_page, NULL);
    physmem_write(um->pm, um->zero_frame, zero_page, PAGE_SIZE);
    physmem_write(um->pm, um->cache_frame, ret_page, PAGE_SIZE);
    const Layout *l = machine_layout(m);
    for (int s = 0; s < 2; s++) {
        um->kmap_va[s] = (l->window_size ? l->window_base + KMAP_WINDOW_OFF : KMAP_SHARED_VA) +
                         (uint32_t)s * PAGE_SIZE;
        uint64_t pa = kspace_alloc_frame(um->ks, err);   /* until the first kmap */
        if (!pa || !kspace_map_window(um->ks, um->kmap_va[s], pa, true, err))
            goto fail;
        um->kmap_pte[s] = kspace_window_pte(um->ks, um->kmap_va[s]);
    }
    machine_set_fault_body(m, fault_body, um);
    return um;
fail:
    g_hash_table_destroy(um->frames);
    g_free(um);
    return NULL;
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
