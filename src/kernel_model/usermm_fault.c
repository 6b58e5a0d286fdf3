/* Page faults of replayed programs: the plan made before a first touch,
 * the body the stub calls, and its profiles (see usermm.h). */
#include "kernel_model/usermm_priv.h"
#include "textfile/textfile.h"

#include "config.h"

#include <gio/gio.h>
#include <stdio.h>
#include <string.h>

#define RET_BYTE 0xC3                /* what a file page holds (user.asm's fetch touch) */

static uint8_t ret_page[PAGE_SIZE];  /* filled with RET_BYTE at usermm_new */
static const uint8_t zero_page[PAGE_SIZE];

static gpointer fill_ret_page(gpointer unused)
{
    (void)unused;
    memset(ret_page, RET_BYTE, sizeof ret_page);
    return NULL;
}

/* ---------------- profiles (faults.ini) ---------------- */

static char *default_profiles(void)
{
    char *p = g_build_filename(VMSPLIT_SOURCE_DIR, "src", "kernel_model", "faults.ini", NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
        return p;
    g_free(p);
    return g_build_filename(VMSPLIT_DATADIR, "faults.ini", NULL);
}

#define PROFILE_MAX 1000000u

/* A decimal number 0..max, nothing else (no sign, no space). */
static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    guint64 n;
    if (!s || !g_ascii_string_to_unsigned(s, 10, 0, max, &n, NULL))
        return false;
    *out = (uint32_t)n;
    return true;
}

static bool load_u32(GKeyFile *kf, const char *file, const char *g, const char *k, uint32_t max,
                     uint32_t *out, GError **err)
{
    char *v = g_key_file_get_value(kf, g, k, NULL);
    bool ok = parse_u32(v, max, out);
    if (!ok)
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: [%s] %s: expected a number (0 to %u), got '%s'", file, g, k, max,
                    v ? v : "nothing");
    g_free(v);
    return ok;
}

/* "LOW-HIGH" with LOW <= insns <= HIGH (sscanf's "%u-%u" took "-1" for
 * 4294967295 and ignored anything after HIGH). */
static bool load_range(GKeyFile *kf, const char *file, const char *g, uint32_t insns,
                       GError **err)
{
    char *v = g_key_file_get_value(kf, g, "range", NULL);
    char *dash = v ? strchr(v, '-') : NULL;
    uint32_t lo = 0, hi = 0;
    bool ok = false;
    if (dash) {
        *dash = '\0';
        ok = parse_u32(v, PROFILE_MAX, &lo) && parse_u32(dash + 1, PROFILE_MAX, &hi) &&
             lo <= insns && insns <= hi;
        *dash = '-';
    }
    if (!ok)
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: [%s] range: expected LOW-HIGH (0 to %u) around insns %u, got '%s'",
                    file, g, PROFILE_MAX, insns, v ? v : "nothing");
    g_free(v);
    return ok;
}

static bool is_fault_name(const char *g)
{
    for (int k = 0; k < UFAULT_KINDS; k++)
        if (!strcmp(g, usermm_fault_name((UserFaultKind)k)))
            return true;
    return false;
}

bool usermm_profiles_load(const char *path, UserFaultProfile prof[UFAULT_KINDS], GError **err)
{
    char *file = path ? g_strdup(path) : default_profiles();
    GKeyFile *kf = g_key_file_new();
    GError *e = NULL;
    char *text = NULL;
    gsize len = 0;
    bool ok = g_file_get_contents(file, &text, &len, &e) &&
              textfile_check(text, len, file, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, &e);
    if (ok && !g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &e)) {
        g_prefix_error(&e, "%s: ", file);
        ok = false;
    }
    g_free(text);
    if (!ok) {
        /* GLib's read errors name the file; the others are prefixed with it */
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s", e->message);
        g_error_free(e);
    }
    /* A misspelt group would leave its kind's profile unread: refused. */
    char **groups = ok ? g_key_file_get_groups(kf, NULL) : NULL;
    for (int i = 0; ok && groups[i]; i++)
        if (!is_fault_name(groups[i])) {
            GString *names = g_string_new(NULL);
            for (int k = 0; k < UFAULT_KINDS; k++)
                g_string_append_printf(names, "%s%s", k ? ", " : "",
                                       usermm_fault_name((UserFaultKind)k));
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "%s: unknown profile [%s] (expected %s)", file, groups[i], names->str);
            g_string_free(names, TRUE);
            ok = false;
        }
    g_strfreev(groups);
    for (int k = 0; ok && k < UFAULT_KINDS; k++) {
        const char *g = usermm_fault_name((UserFaultKind)k);
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
        /* kdata_pages distinct pages come from the pool of KDATA_POOL
         * (um_fault_init): more would read the same pages again. */
        ok = ok && load_u32(kf, file, g, "insns", PROFILE_MAX, &prof[k].insns, err) &&
             load_u32(kf, file, g, "kdata_pages", KDATA_POOL, &prof[k].kdata_pages, err) &&
             load_range(kf, file, g, prof[k].insns, err);
    }
    g_key_file_free(kf);
    g_free(file);
    return ok;
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
    machine_kernel_write(um->m, kspace_phys_to_virt(um->ks, um->kmap_pte[slot]), &pte,
                         um->fmt->entry_bytes);
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
    if (!p->armed || um_page_down(cr2) != p->page)
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
    uint64_t pte_at = um_pte_pa(um, task, p->page, true, &e);
    if (!pte_at) {
        g_warning("page fault at 0x%08x: %s", cr2, e ? e->message : "no page table");
        g_clear_error(&e);
        return;
    }
    uint32_t pte_va = kspace_phys_to_virt(um->ks, pte_at);
    uint64_t old = 0;
    machine_kernel_read(m, pte_va, &old, um->fmt->entry_bytes);
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
            um_frame_put(um, p->old_frame);
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
        um_frame_get(um, frame);
    uint64_t pte = frame | PTE_USER | (p->writable ? PAE_RW | PAE_D : 0);
    machine_kernel_write(m, pte_va, &pte, um->fmt->entry_bytes);
    if (invlpg) {                    /* flush_tlb_page */
        mmu_invlpg(machine_mmu(m), p->page);
        machine_charge(m, um->cost->invlpg, 1);
    }
    um_set_pte_others(um, mm, task, p->page, pte, NULL);
    if (!(old & PAE_P) && ++um->st.pages_mapped > um->st.pages_peak)
        um->st.pages_peak = um->st.pages_mapped;
    um_set_state(mm, p->page, p->new_state);
}

/* Works out the fault a touch of va for `write` will raise. False (err
 * set) if it is a trace error; *plan->armed false if no fault comes (the
 * machine's own page). */
static bool plan_fault(UserMm *um, Mm *mm, uint32_t va, MachineTouch how, FaultPlan *p,
                       GError **err)
{
    bool write = how == MACHINE_TOUCH_WRITE;
    uint32_t page = um_page_down(va);
    uint8_t s = usermm_page_state(&mm->dir, va);
    memset(p, 0, sizeof *p);
    p->page = page;
    if (s == UPAGE_NONE) {
        uint64_t pte = um_read_pte(um, machine_current(um->m), page);
        if (pte & PAE_P) {           /* one of the machine's own pages */
            um_set_state(mm, page, (pte & PAE_RW) ? UPAGE_MODEL : UPAGE_MODEL_RO);
            um->st.collisions++;
            return true;
        }
        Region *r = um_find_region(mm, va);
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
        uint64_t frame = um_read_pte(um, machine_current(um->m), page) & um->fmt->addr_4k;
        p->old_frame = frame;
        p->new_state = UPAGE_RW;
        /* Only an anonymous page no other mm maps is reused (do_wp_page:
         * PageAnon and can_share_swap_page); a page-cache page is copied. */
        p->kind = s == UPAGE_ZEROPG ? UFAULT_DEMAND_ZERO
                  : s == UPAGE_COW && um_frame_users(um, frame) <= 1 ? UFAULT_COW_REUSE
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

bool usermm_fault_in(UserMm *um, uint32_t va, MachineTouch how, bool *made, GError **err)
{
    Machine *m = um->m;
    Mm *mm = um_mm_of(um, machine_current(m));
    FaultPlan *p = &um->plan;
    *made = false;
    if (!plan_fault(um, mm, va, how, p, err))
        return false;
    if (!p->armed)
        return true;
    /* A fetch touch calls the page: only a file page holds RETs. */
    bool same = true;
    if (how == MACHINE_TOUCH_EXEC && p->kind != UFAULT_FILE) {
        how = MACHINE_TOUCH_READ;
        same = false;
    }
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
    *made = same;
    um->st.count[kind]++;
    um->st.cycles[kind] += cpu_cycles(cpu) - c0;
    um->st.insns += cpu_insns(cpu) - i0;
    um->st.walk_cycles += mmu_stats(machine_mmu(m))->walk_cycles - w0;
    return true;
}

/* The fault body's resources: its profiles, kernel data pages, the zero
 * page and the page-cache frame, the kmap slots; then the body itself. */
bool um_fault_init(UserMm *um, const char *profiles, GError **err)
{
    Machine *m = um->m;
    if (!machine_can_fault(m)) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "the stubs or user.o have no page-fault entry (page_fault_entry, "
                    "user_touch_*): rebuild them");
        return false;
    }
    if (!usermm_profiles_load(profiles, um->prof, err))
        return false;
    for (unsigned i = 0; i < KDATA_POOL; i++) {
        uint64_t pa = kspace_alloc_frame(um->ks, err);
        if (!pa)
            return false;
        um->kdata_va[i] = kspace_phys_to_virt(um->ks, pa);
    }
    if (!(um->zero_frame = kspace_alloc_user_frame(um->ks, err)) ||
        !(um->cache_frame = kspace_alloc_user_frame(um->ks, err)))
        return false;
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
            return false;
        um->kmap_pte[s] = kspace_window_pte(um->ks, um->kmap_va[s]);
    }
    machine_set_fault_body(m, fault_body, um);
    return true;
}
