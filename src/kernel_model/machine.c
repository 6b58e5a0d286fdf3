/* A booted machine: see machine.h. */
#include "kernel_model/machine.h"

#include "config.h"
#include "cpu/elfload.h"
#include "cpu/ports.h"
#include "mmu/mmu_fast.h"      /* mmu_access_fast: see machine_kernel_copy_lines */
#include "mmu/pae.h"

#include <gio/gio.h>
#include <string.h>

#define MiB (1024u * 1024u)
#define KTEXT_PHYS (1 * MiB)        /* Linux loads the kernel at 1 MiB */
#define EFLAGS_USER 0x202u          /* IF, bit 1 */
#define PCID_USER_BIT 0x800u        /* Linux PTI: user PCID = kernel PCID | bit 11 */
/* The watchdog: the most instructions a syscall, a switch or the edges of
 * a user-work run may take to come back to user mode. Kernel paths here
 * are thousands of instructions, so this only catches a stub that never
 * returns. User work is not counted against it: a run of the user loop
 * gets its own known length on top (machine_user_work). */
#define MAX_STEPS_PER_EVENT 50000000ULL

/* Offsets of the per-CPU block (stubs/common.inc). */
enum {
    CD_KERNEL_CR3 = 0, CD_USER_CR3 = 4, CD_REAL_STACK = 8, CD_VIRTUAL_STACK = 12,
    CD_SYSENTER_RETURN = 16, CD_ENTRY_STACK = 20, CD_STACK_TOP = 24,
    CD_NEXT_ESP = 28, CD_NEXT_CR3 = 32, CD_VSTACK_CHANGED = 36,
};
/* struct thread_info at the base of every kernel stack (stubs/common.inc:
 * RHEL4 2.6.9's offsets). */
enum { TI_FLAGS = 8, TI_SYSENTER_RETURN = 28, TI_REAL_STACK = 32, TI_VIRTUAL_STACK = 36,
       TI_USER_PGD = 40 };
/* struct pt_regs (2.6.12), in dwords. */
enum { PT_EBX, PT_ECX, PT_EDX, PT_ESI, PT_EDI, PT_EBP, PT_EAX, PT_DS, PT_ES,
       PT_ORIG_EAX, PT_EIP, PT_CS, PT_EFLAGS, PT_OLDESP, PT_OLDSS, PT_NREGS };

/* Window layout (offsets from the window base; windowed layouts only). */
enum { WIN_ENTRY = 0x0000, WIN_DATA = 0x1000, WIN_GDT = 0x2000, WIN_IDT = 0x3000,
       WIN_TSS = 0x4000, WIN_ESTACK = 0x5000, WIN_VSTACK = 0x6000 };

typedef struct {
    bool live;
    ProcSpace *ps;
    uint64_t kstack_pa;          /* THREAD_SIZE, physically contiguous */
    uint32_t kstack_va;          /* its direct-map address (base) */
    uint32_t saved_esp;          /* kernel ESP while switched out */
    uint16_t pcid;               /* kpti-pcid: kernel PCID (user: | bit 11) */
} Task;

struct Machine {
    const Layout *layout;
    const Preset *preset;
    bool sysenter;
    PhysMem *pm;
    Mmu *mmu;
    Cpu *cpu;
    KernelSpace *ks;
    ElfObject *stubs, *user;
    bool windowed;
    uint32_t cpu_data, gdt, idt, tss, estack_top, vstack;
    uint32_t sysenter_return;    /* user EIP after SYSEXIT (cpu_data, thread_info) */
    uint32_t k_ret_from_fork;
    uint32_t u_int80, u_int80_done, u_sysenter, u_sysenter_done, u_work, u_work_done;
    uint32_t u_work_loop;        /* the loop head (0: user.o has no label) */
    uint32_t u_touch[3];         /* user_touch_read/_write/_exec (0: none) */
    MachineFaultFn fault_fn;     /* the page-fault body (NULL: faults abort) */
    void *fault_user;
    bool ffwd;                   /* fast-forward user work (userwork.h) */
    CpuStop ff_stop;             /* why the last fast-forward run stopped */
    UserWorkSkips skips;
    UserWorkScratch *ff_scratch;
    uint64_t user_code_frame;
    Task tasks[MACHINE_MAX_TASKS];
    unsigned ntasks;
    int current, pending;
    MachineBodyFn body;
    void *body_user;
    MachineCounts counts;
    bool have_fault;
    CpuEvent fault;
};

Cpu *machine_cpu(Machine *m) { return m->cpu; }
Mmu *machine_mmu(Machine *m) { return m->mmu; }
KernelSpace *machine_kspace(Machine *m) { return m->ks; }
const Layout *machine_layout(const Machine *m) { return m->layout; }
int machine_current(const Machine *m) { return m->current; }
unsigned machine_ntasks(const Machine *m) { return m->ntasks; }
const MachineCounts *machine_counts(const Machine *m) { return &m->counts; }
ProcSpace *machine_task_space(Machine *m, int t) { return m->tasks[t].ps; }

void machine_set_body(Machine *m, MachineBodyFn fn, void *user)
{
    m->body = fn;
    m->body_user = user;
}

/* ---- boot-time memory (not modelled: the machine is being built) ---- */

static uint32_t ktext_va(const Machine *m) { return m->layout->page_offset + KTEXT_PHYS; }

/* Physical address behind a kernel virtual address set up at boot. */
static uint64_t boot_phys(const Machine *m, uint32_t va)
{
    const Layout *l = m->layout;
    if (m->windowed && va >= l->window_base) {
        const PageTableFormat *f = kspace_paging(m->ks);
        uint64_t pte = ptformat_read(f, m->pm, kspace_window_pte(m->ks, va));
        return (pte & f->addr_4k) | (va & (PAGE_SIZE - 1));
    }
    g_assert(va >= l->page_offset);
    return va - l->page_offset;
}

static void boot_write(Machine *m, uint32_t va, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        size_t k = MIN(n, PAGE_SIZE - (va & (PAGE_SIZE - 1)));
        physmem_write(m->pm, boot_phys(m, va), p, k);
        p += k;
        va += (uint32_t)k;
        n -= k;
    }
}

static void boot_write32(Machine *m, uint32_t va, uint32_t v) { boot_write(m, va, &v, 4); }

/* A kernel page: in the window at win_off (windowed layouts), else a
 * lowmem frame in the direct map. */
static uint32_t kernel_page(Machine *m, uint32_t win_off, GError **err)
{
    uint64_t pa = kspace_alloc_frame(m->ks, err);
    if (!pa)
        return 0;
    if (!m->windowed)
        return kspace_phys_to_virt(m->ks, pa);
    uint32_t va = m->layout->window_base + win_off;
    return kspace_map_window(m->ks, va, pa, true, err) ? va : 0;
}

/* ---- loading the stubs ---- */

static bool place_section(void *data, const char *section, uint32_t size, uint32_t align,
                          unsigned flags, uint32_t *addr)
{
    (void)size, (void)align, (void)flags;
    Machine *m = data;
    if (!m->windowed)
        return false;                  /* shared: pack from the kernel text */
    if (!strcmp(section, ".entry"))
        *addr = m->layout->window_base + WIN_ENTRY;
    else if (!strcmp(section, ".entry_data"))
        *addr = m->layout->window_base + WIN_DATA;
    else
        return false;
    return true;
}

/* The build's object, else the installed one. */
static char *find_stub(const char *name)
{
    const char *env = g_getenv("VMSPLIT_STUB_DIR");
    char *p = g_build_filename(env ? env : VMSPLIT_BUILD_DIR "/src/kernel_model", name, NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
        return p;
    g_free(p);
    return g_build_filename(VMSPLIT_DATADIR, "stubs", name, NULL);
}

static bool load_stubs(Machine *m, const char *path, GError **err)
{
    g_autofree char *obj = g_strconcat(m->layout->stub, ".o", NULL);  /* the layout's row */
    char *def = path ? NULL : find_stub(obj);
    /* Constants Linux links into its entry code as immediates: the kernel
     * page table's physical address (swapper_pg_dir - __PAGE_OFFSET, the
     * 4G/4G entry's CR3 value), __PAGE_OFFSET (vanilla sysenter's
     * user-pointer check) and the window's base (the 4G/4G entry's test
     * for a virtual stack), each from the layout's row. */
    const ElfAddr externs[] = {
        { "KERNEL_PGD", kspace_kernel_cr3(m->ks) },
        { "PAGE_OFFSET", m->layout->page_offset },
        { "WINDOW_BASE", m->layout->window_base },
    };
    ElfLoadOptions o = { .base = ktext_va(m), .place = place_section, .place_data = m,
                         .externs = externs, .n_externs = G_N_ELEMENTS(externs) };
    m->stubs = elfload_file(path ? path : def, &o, err);
    g_free(def);
    if (!m->stubs)
        return false;
    for (size_t i = 0; i < elfload_n_segments(m->stubs); i++) {
        const ElfSegment *s = elfload_segment(m->stubs, i);
        if (m->windowed && s->vaddr >= m->layout->window_base) {
            for (uint32_t off = 0; off < s->size; off += PAGE_SIZE) {
                uint64_t pa = kspace_alloc_frame(m->ks, err);
                if (!pa || !kspace_map_window(m->ks, s->vaddr + off, pa,
                                              (s->flags & ELFLOAD_W) != 0, err))
                    return false;
            }
        } else if (s->vaddr < ktext_va(m) || s->vaddr + s->size > ktext_va(m) + 15 * MiB) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "stub section %s at 0x%08x is outside the kernel text", s->name, s->vaddr);
            return false;
        }
        boot_write(m, s->vaddr, s->bytes, s->size);
    }
    static const char *need[] = { "int80_entry", "sysenter_entry", "irq_entry", "ret_from_fork",
                                  "cpu_data" };
    uint32_t a;
    for (size_t i = 0; i < G_N_ELEMENTS(need); i++)
        if (!elfload_symbol(m->stubs, need[i], &a)) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "stub object defines no '%s' (see src/kernel_model/stubs/common.inc)", need[i]);
            return false;
        }
    elfload_symbol(m->stubs, "cpu_data", &m->cpu_data);
    elfload_symbol(m->stubs, "ret_from_fork", &m->k_ret_from_fork);
    return true;
}

static bool load_user_code(Machine *m, GError **err)
{
    char *p = find_stub("user.o");
    ElfLoadOptions o = { .base = USER_CODE_VA };
    m->user = elfload_file(p, &o, err);
    g_free(p);
    if (!m->user)
        return false;
    const ElfSegment *t = elfload_segment_by_name(m->user, ".text");
    if (!t || t->size > PAGE_SIZE || elfload_n_segments(m->user) != 1) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "user.o: expected one .text page");
        return false;
    }
    if (!(m->user_code_frame = kspace_alloc_user_frame(m->ks, err)))
        return false;
    physmem_write(m->pm, m->user_code_frame, t->bytes, t->size);
    struct { const char *name; uint32_t *addr; } syms[] = {
        { "user_int80", &m->u_int80 }, { "user_int80_done", &m->u_int80_done },
        { "user_sysenter", &m->u_sysenter }, { "user_sysenter_done", &m->u_sysenter_done },
        { "user_work", &m->u_work }, { "user_work_done", &m->u_work_done },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(syms); i++)
        if (!elfload_symbol(m->user, syms[i].name, syms[i].addr)) {
            g_set_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "user.o: no '%s'", syms[i].name);
            return false;
        }
    if (!elfload_symbol(m->user, "user_work_loop", &m->u_work_loop))
        m->u_work_loop = 0;          /* an older user.o: no fast-forward */
    static const char *touch[3] = { "user_touch_read", "user_touch_write", "user_touch_exec" };
    for (int i = 0; i < 3; i++)
        if (!elfload_symbol(m->user, touch[i], &m->u_touch[i]))
            m->u_touch[i] = 0;       /* an older user.o: no page faults */
    return true;
}

/* ---- descriptor tables (SDM Vol. 3A §3.4.5, §6.11, §7.2) ---- */

static uint64_t seg_desc(unsigned dpl, bool code)
{
    /* Flat 4 GiB, G=1, D/B=1, present; type 0xA (code r/x) or 0x2 (data r/w). */
    return 0x00CF00000000FFFFULL | (1ULL << 47) | ((uint64_t)dpl << 45) | (1ULL << 44) |
           ((uint64_t)(code ? 0xA : 0x2) << 40);
}

static uint64_t tss_desc(uint32_t base, uint32_t limit)
{
    return (limit & 0xFFFF) | ((uint64_t)(base & 0xFFFFFF) << 16) | (0x89ULL << 40) |
           ((uint64_t)((limit >> 16) & 0xF) << 48) | ((uint64_t)(base >> 24) << 56);
}

static uint64_t gate_desc(uint32_t off, unsigned dpl, bool trap)
{
    return (off & 0xFFFF) | ((uint64_t)KERNEL_CS << 16) |
           ((uint64_t)((off & 0xFFFF0000u) | 0x8000u | (dpl << 13) | ((trap ? 0xFu : 0xEu) << 8)) << 32);
}

static bool build_tables(Machine *m, GError **err)
{
    if (!(m->gdt = kernel_page(m, WIN_GDT, err)) || !(m->idt = kernel_page(m, WIN_IDT, err)) ||
        !(m->tss = kernel_page(m, WIN_TSS, err)))
        return false;
    uint64_t d;
    d = seg_desc(0, true);  boot_write(m, m->gdt + KERNEL_CS, &d, 8);
    d = seg_desc(0, false); boot_write(m, m->gdt + KERNEL_DS, &d, 8);
    d = seg_desc(3, true);  boot_write(m, m->gdt + (USER_CS & ~3), &d, 8);
    d = seg_desc(3, false); boot_write(m, m->gdt + (USER_DS & ~3), &d, 8);
    d = tss_desc(m->tss, 0x67); boot_write(m, m->gdt + TSS_SEL, &d, 8);

    uint32_t int80, irq;
    elfload_symbol(m->stubs, "int80_entry", &int80);
    elfload_symbol(m->stubs, "irq_entry", &irq);
    d = gate_desc(int80, 3, true);  boot_write(m, m->idt + 8 * 0x80, &d, 8);   /* set_system_gate */
    d = gate_desc(irq, 0, false);   boot_write(m, m->idt + 8 * IRQ_TIMER_VECTOR, &d, 8);

    boot_write32(m, m->tss + 8, KERNEL_DS);                /* ss0 */
    boot_write32(m, m->tss + 100, 104u << 16);             /* no I/O bitmap */
    /* TSS.esp0: where entry from user mode lands (Layout.esp0). */
    switch (m->layout->esp0) {
    case LAYOUT_ESP0_TASK_STACK:     /* set per task by install_task */
        break;
    case LAYOUT_ESP0_VIRTUAL_STACK:
        /* The per-CPU virtual stack: two window pages re-pointed at the
         * current task's stack on every switch. */
        m->vstack = m->layout->window_base + WIN_VSTACK;
        for (int i = 0; i < 2; i++)
            if (!kspace_map_window(m->ks, m->vstack + i * PAGE_SIZE, 0, true, err))
                return false;
        boot_write32(m, m->tss + 4, m->vstack + THREAD_SIZE);
        break;
    case LAYOUT_ESP0_ENTRY_STACK:
        if (!kernel_page(m, WIN_ESTACK, err))
            return false;
        m->estack_top = m->layout->window_base + WIN_ESTACK + PAGE_SIZE;
        boot_write32(m, m->tss + 4, m->estack_top);
        break;
    }
    return true;
}

static bool cpu_boot(Machine *m, GError **err)
{
    uint8_t vec = 0;
    uint32_t ec = 0;
    bool pge = !m->preset || m->preset->pge;
    /* The paging mode's CR4 bits (ptformat.h): CR4.PAE, or under legacy
     * paging CR4.PSE where the direct map uses 4 MiB pages (Linux sets it
     * when cpu_has_pse); CR4.PGE where the CPU has it (cpu_has_pge). */
    const PageTableFormat *f = kspace_paging(m->ks);
    bool pse = f->cr4_pse_for_large && (!m->preset || m->preset->pse);
    uint32_t cr4 = f->cr4_paging | (pse ? CR4_PSE : 0) | (pge ? CR4_PGE : 0);
    bool ok = cpu_write_cr(m->cpu, 4, cr4, &vec, &ec) &&
              cpu_write_cr(m->cpu, 3, kspace_kernel_cr3(m->ks), &vec, &ec) &&
              cpu_write_cr(m->cpu, 0, CR0_PE | CR0_WP | CR0_PG, &vec, &ec);
    if (ok && m->layout->pcid) {
        /* What-if: the i686 core accepts CR4.PCIDE here (see mmu.h). */
        MmuFault f;
        ok = mmu_write_cr4(m->mmu, cr4 | CR4_PCIDE, &f);
    }
    if (ok && f->xd && (!m->preset || m->preset->nx))
        ok = cpu_write_msr(m->cpu, MSR_EFER, EFER_NXE);
    cpu_set_gdtr(m->cpu, m->gdt, 0xFF);
    cpu_set_idtr(m->cpu, m->idt, 0x7FF);
    ok = ok && cpu_load_segment(m->cpu, SEG_CS, KERNEL_CS, &vec, &ec) &&
         cpu_load_segment(m->cpu, SEG_SS, KERNEL_DS, &vec, &ec) &&
         cpu_load_segment(m->cpu, SEG_DS, USER_DS, &vec, &ec) &&
         cpu_load_segment(m->cpu, SEG_ES, USER_DS, &vec, &ec) &&
         cpu_load_tr(m->cpu, TSS_SEL, &vec, &ec);
    uint32_t sysenter;
    elfload_symbol(m->stubs, "sysenter_entry", &sysenter);
    ok = ok && cpu_write_msr(m->cpu, MSR_SYSENTER_CS, KERNEL_CS) &&
         cpu_write_msr(m->cpu, MSR_SYSENTER_ESP, m->tss + 4) &&
         cpu_write_msr(m->cpu, MSR_SYSENTER_EIP, sysenter);
    if (!ok)
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "booting the core failed with exception %u (error code 0x%x)", vec, ec);
    return ok;
}

/* ---- tasks ---- */

static uint32_t task_user_cr3(const Machine *m, const Task *t)
{
    return pspace_user_cr3(t->ps) | (m->layout->pcid ? t->pcid | PCID_USER_BIT : 0);
}

static uint32_t task_kernel_cr3(const Machine *m, const Task *t)
{
    return pspace_kernel_cr3(t->ps) | (m->layout->pcid ? t->pcid : 0);
}

static uint32_t user_stack_top(const Machine *m) { return m->layout->task_size - PAGE_SIZE; }

int machine_task_new(Machine *m, GError **err)
{
    unsigned i;
    for (i = 0; i < MACHINE_MAX_TASKS && m->tasks[i].live; i++)
        ;
    if (i == MACHINE_MAX_TASKS) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "more than %d tasks", MACHINE_MAX_TASKS);
        return -1;
    }
    Task *t = &m->tasks[i];
    memset(t, 0, sizeof *t);
    if (!(t->ps = pspace_new(m->ks, err)))
        return -1;
    if (!(t->kstack_pa = kspace_alloc_frames(m->ks, THREAD_SIZE / PAGE_SIZE, err)))
        goto fail;
    t->kstack_va = kspace_phys_to_virt(m->ks, t->kstack_pa);
    t->pcid = (uint16_t)(i + 1);
    if (!pspace_map_user(t->ps, USER_CODE_VA, m->user_code_frame, false, err))
        goto fail;
    uint32_t stack = user_stack_top(m) - 2 * PAGE_SIZE;
    for (uint32_t va = stack; va < user_stack_top(m); va += PAGE_SIZE) {
        uint64_t f = kspace_alloc_user_frame(m->ks, err);
        if (!f || !pspace_map_user(t->ps, va, f, true, err))
            goto fail;
    }
    /* The frame ret_from_fork returns through: the child of fork(),
     * resuming in user mode at a rest point with EAX = 0. */
    uint32_t regs[PT_NREGS] = { 0 };
    regs[PT_DS] = regs[PT_ES] = USER_DS;
    regs[PT_ORIG_EAX] = 0xFFFFFFFFu;
    regs[PT_EIP] = m->u_int80_done;
    regs[PT_CS] = USER_CS;
    regs[PT_EFLAGS] = EFLAGS_USER;
    regs[PT_OLDESP] = user_stack_top(m) - 64;
    regs[PT_OLDSS] = USER_DS;
    t->saved_esp = t->kstack_va + THREAD_SIZE - sizeof regs;
    physmem_write(m->pm, t->kstack_pa + THREAD_SIZE - sizeof regs, regs, sizeof regs);
    /* thread_info as copy_thread leaves it (flags 0): the real stack (RHEL3
     * copy_thread: p->real_stack = p), the user page table, and the
     * vsyscall return point. virtual_stack is set at each switch. */
    physmem_write32(m->pm, t->kstack_pa + TI_REAL_STACK, t->kstack_va);
    physmem_write32(m->pm, t->kstack_pa + TI_USER_PGD, task_user_cr3(m, t));
    physmem_write32(m->pm, t->kstack_pa + TI_SYSENTER_RETURN, m->sysenter_return);
    t->live = true;
    m->ntasks++;
    return (int)i;
fail:
    pspace_free(t->ps);
    t->ps = NULL;
    return -1;
}

void machine_task_free(Machine *m, int task)
{
    Task *t = &m->tasks[task];
    g_assert(t->live && task != m->current);
    pspace_free(t->ps);
    t->live = false;
    m->ntasks--;
}

bool machine_map_user(Machine *m, int task, uint32_t va, uint32_t npages, bool writable,
                      GError **err)
{
    Task *t = &m->tasks[task];
    for (uint32_t i = 0; i < npages; i++) {
        uint64_t f = kspace_alloc_user_frame(m->ks, err);
        if (!f || !pspace_map_user(t->ps, va + i * PAGE_SIZE, f, writable, err))
            return false;
    }
    return true;
}

/* ---- kernel-mode references made by the C bodies (modelled) ---- */

/* The core's functions make whole aligned dwords (the hypercall's saved
 * registers, the bodies' kernel data) one mmu_access each with the memo's
 * hit inline (cpu.c). */
bool machine_kernel_read(Machine *m, uint32_t va, void *buf, size_t n)
{
    return cpu_read_linear(m->cpu, va, buf, n);
}

bool machine_kernel_write(Machine *m, uint32_t va, const void *buf, size_t n)
{
    return cpu_write_linear(m->cpu, va, buf, n);
}

/* How many of va, va + step, va + 2 step, ... lie in va's page. */
static uint32_t lines_in_page(uint32_t va, uint32_t step)
{
    return (PAGE_SIZE - 1 - (va & (PAGE_SIZE - 1))) / step + 1;
}

/* Up to n lines of a copy (aligned; source at from, target at to, step
 * apart) made at once while memos answer both pages and the lines stay in
 * them; returns how many (0 if a memo does not answer). Each line would
 * be two memo hits (mmu_access_fast): nothing between them fills,
 * invalidates or flushes a TLB entry or writes the MMU's state, so the
 * memos found for the first line answer every line, and their hits are
 * counted in one go (mmu_memo_hit_rounds); the cache references are made
 * line by line in the same order (mmu_time_phys_fast is the hit path's
 * cache reference), with the target's zero dword written as before. */
static uint32_t copy_hit_lines(Mmu *mmu, uint32_t from, uint32_t to, uint32_t n,
                               uint32_t step)
{
    const MmuMemo *r = mmu_memo_find(mmu, from, ACCESS_READ, 0);
    const MmuMemo *w = mmu_memo_find(mmu, to, ACCESS_WRITE, 0);
    if (!r || !w)
        return 0;
    n = MIN(n, MIN(lines_in_page(from, step), lines_in_page(to, step)));
    uint32_t fo = from & (PAGE_SIZE - 1), tof = to & (PAGE_SIZE - 1);
    for (uint32_t j = 0; j < n; j++) {
        mmu_time_phys_fast(mmu, r->pa | (fo + j * step), false);
        mmu_time_phys_fast(mmu, w->pa | (tof + j * step), true);
        memset(w->host + tof + j * step, 0, 4);
    }
    const MmuMemo *mm[2] = { r, w };
    static const Access access[2] = { ACCESS_READ, ACCESS_WRITE };
    mmu_memo_hit_rounds(mmu, mm, access, 2, n);
    return n;
}

/* The references of a kernel copy's lines (body.c): for each of the
 * lines k = 0 .. lines - 1, the dword at from + k * step is read and a
 * zero dword written at to + k * step, each as machine_kernel_read /
 * machine_kernel_write of 4 bytes would make it, in that order, whatever
 * the others gave (a copy does not stop at a reference that faults: the
 * model has no fixup; the fault is not delivered). Aligned (the usual
 * case), a line is made here with the memo's hit inline, and the lines
 * after it in the same two pages at once (copy_hit_lines); else line by
 * line through the general functions. */
void machine_kernel_copy_lines(Machine *m, uint32_t from, uint32_t to, uint32_t lines,
                               uint32_t step)
{
    uint32_t zero = 0, v;
    if (G_UNLIKELY(((from | to | step) & 3) != 0)) {
        for (uint32_t k = 0; k < lines; k++) {
            machine_kernel_read(m, from + k * step, &v, 4);
            machine_kernel_write(m, to + k * step, &zero, 4);
        }
        return;
    }
    Mmu *mmu = m->mmu;
    for (uint32_t k = 0; k < lines;) {
        MmuFault f;
        mmu_access_fast(mmu, from + k * step, ACCESS_READ, 0, &f);
        uint8_t *h = mmu_access_fast(mmu, to + k * step, ACCESS_WRITE, 0, &f);
        if (G_LIKELY(h))
            memcpy(h, &zero, 4);
        if (++k < lines)
            k += copy_hit_lines(mmu, from + k * step, to + k * step, lines - k, step);
    }
}

static void kwrite32(Machine *m, uint32_t va, uint32_t v)
{
    bool ok = machine_kernel_write(m, va, &v, 4);
    g_assert(ok);
}

void machine_charge(Machine *m, uint64_t cycles, uint64_t insns)
{
    cpu_add_work(m->cpu, cycles, insns);
}

void machine_request_switch(Machine *m, int task)
{
    g_assert(task >= 0 && task < MACHINE_MAX_TASKS && m->tasks[task].live);
    m->pending = task;
}

/* The per-CPU state a task runs with: what switch_mm and __switch_to write.
 * boot: at boot, with physical writes; else modelled kernel writes. */
static void install_task(Machine *m, int next, bool boot)
{
    Task *t = &m->tasks[next];
    void (*w32)(Machine *, uint32_t, uint32_t) = boot ? boot_write32 : kwrite32;
    uint32_t cd = m->cpu_data;
    const Layout *l = m->layout;
    /* switch_mm: the task's kernel-mode page table, which the stub loads
     * at the switch, unless the kernel's is swapper's for every task
     * (thread_info->user_pgd, set at fork, is then what the exit loads);
     * a per-process kernel table also goes into the per-CPU CR3 pair the
     * entry and exit paths load (Layout.kernel_tables). */
    if (l->kernel_tables != LAYOUT_KTABLES_SWAPPER)
        w32(m, cd + CD_NEXT_CR3, task_kernel_cr3(m, t));
    if (l->kernel_tables == LAYOUT_KTABLES_PER_PROCESS) {
        w32(m, cd + CD_KERNEL_CR3, task_kernel_cr3(m, t));
        w32(m, cd + CD_USER_CR3, task_user_cr3(m, t));
    }
    /* __switch_to: the task's stack where entry lands (Layout.esp0). */
    switch (l->esp0) {
    case LAYOUT_ESP0_TASK_STACK:
        w32(m, m->tss + 4, t->kstack_va + THREAD_SIZE);          /* TSS.esp0 */
        break;
    case LAYOUT_ESP0_VIRTUAL_STACK: {
        /* RHEL4 arch/i386/kernel/process.c (RHEL3's does the same for its
         * two pages): __kmap_atomic of each stack page at the virtual
         * stack, which reads the PTE and rewrites it only if it differs;
         * the stub INVLPGs the rewritten ones (CONTEXT_SWITCH,
         * CD_VSTACK_CHANGED). Then thread_info->virtual_stack and
         * load_virtual_esp0. */
        uint32_t changed = 0;
        const PageTableFormat *f = kspace_paging(m->ks);
        for (int i = 0; i < 2; i++) {
            uint64_t pte_pa = kspace_window_pte(m->ks, m->vstack + i * PAGE_SIZE);
            uint64_t pte = (t->kstack_pa + i * PAGE_SIZE) | PAE_P | PAE_RW | PAE_A | PAE_D |
                           (l->kmap_global ? PAE_G : 0);
            uint64_t old = 0;
            if (boot) {
                ptformat_write(f, m->pm, pte_pa, pte);
                continue;
            }
            /* A pte_t: 8 bytes under PAE, 4 under legacy paging (the
             * low half of the little-endian value). */
            uint32_t pte_va = kspace_phys_to_virt(m->ks, pte_pa);
            machine_kernel_read(m, pte_va, &old, f->entry_bytes);
            if (old != pte) {
                machine_kernel_write(m, pte_va, &pte, f->entry_bytes);
                changed |= 1u << i;
            }
        }
        w32(m, cd + CD_VSTACK_CHANGED, changed);
        w32(m, cd + CD_VIRTUAL_STACK, m->vstack);
        w32(m, t->kstack_va + TI_VIRTUAL_STACK, m->vstack);
        w32(m, m->tss + 4, m->vstack + THREAD_SIZE);             /* TSS.esp0 */
        m->counts.vstack_ptes_rewritten += (unsigned)__builtin_popcount(changed);
        break;
    }
    case LAYOUT_ESP0_ENTRY_STACK:
        w32(m, cd + CD_STACK_TOP, t->kstack_va + THREAD_SIZE);
        w32(m, cd + CD_ENTRY_STACK, m->estack_top);
        break;
    }
}

/* The C half of schedule(): save the running task's kernel ESP (it stopped
 * at the hypercall, on its own stack), install the next one, and ask the
 * stub to switch (CD_NEXT_ESP). */
static void do_switch(Machine *m, int next)
{
    m->tasks[m->current].saved_esp = cpu_reg(m->cpu, REG_ESP);
    install_task(m, next, false);
    kwrite32(m, m->cpu_data + CD_NEXT_ESP, m->tasks[next].saved_esp);
    m->current = next;
    m->counts.switches++;
}

static PortResult hypercall(Cpu *cpu, uint16_t port, unsigned size, uint32_t val, void *user)
{
    (void)port, (void)size;
    Machine *m = user;
    if (val == HC_SYSCALL) {
        /* The syscall's number and its six arguments, as the C entry
         * reads them from the saved frame: seven modelled dword loads
         * (EBX..EBP are contiguous at the bottom of the frame). */
        uint32_t esp = cpu_reg(cpu, REG_ESP), args[6], nr;
        G_STATIC_ASSERT(PT_EBX == 0 && PT_EBP == 5);
        if (!machine_kernel_read(m, esp, args, sizeof args) ||
            !machine_kernel_read(m, esp + 4 * PT_ORIG_EAX, &nr, sizeof nr))
            return PORT_OK;          /* the fault was delivered */
        m->counts.syscalls++;
        uint32_t ret = m->body ? m->body(m, nr, args, m->body_user) : 0;
        cpu_set_reg(cpu, REG_EAX, ret);
    } else if (val == HC_IRQ) {
        m->counts.irqs++;
    } else if (val == HC_PAGEFAULT) {
        m->counts.page_faults++;     /* the stub passes CR2 in ECX, the error code in EDX */
        if (m->fault_fn)
            m->fault_fn(m, cpu_reg(cpu, REG_ECX), cpu_reg(cpu, REG_EDX), m->fault_user);
    }
    if (m->pending >= 0 && m->pending != m->current)
        do_switch(m, m->pending);
    m->pending = -1;
    return PORT_OK;
}

static void on_event(Cpu *cpu, const CpuEvent *ev, void *user)
{
    Machine *m = user;
    /* A user-mode page fault goes to the stubs' handler when a fault body
     * is installed (machine_set_fault_body); anything else is fatal. */
    if (ev->kind == CPU_EV_EXCEPTION && ev->vector == 14 && ev->from_cpl == 3 && m->fault_fn)
        return;
    if ((ev->kind == CPU_EV_EXCEPTION || ev->kind == CPU_EV_TRIPLE_FAULT) && !m->have_fault) {
        m->have_fault = true;
        m->fault = *ev;
        cpu_request_stop(cpu, CPU_STOP_EXIT);   /* the model has no fault handlers */
    }
}

/* What a stop of the core means while running to a rest point: 1 back in
 * user mode at a rest point (a host breakpoint: it costs the guest
 * nothing), -1 a failure (err set), 0 keep running. */
static int on_stop(Machine *m, CpuStop s, GError **err)
{
    if (s == CPU_STOP_BREAKPOINT)
        return cpu_cpl(m->cpu) == 3 ? 1 : 0;
    if (s == CPU_STOP_TRIPLE_FAULT || m->have_fault) {
        m->counts.guest_faults++;
        char *d = s == CPU_STOP_TRIPLE_FAULT ? cpu_describe_triple_fault(m->cpu) : NULL;
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "guest fault: vector %u error code 0x%x CR2 0x%08x at EIP 0x%08x (CPL %d)%s%s",
                    m->fault.vector, m->fault.error_code, m->fault.cr2, m->fault.from_eip,
                    m->fault.from_cpl, d ? "; " : "", d ? d : "");
        g_free(d);
        return -1;
    }
    if (s == CPU_STOP_HLT) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "the core halted at EIP 0x%08x",
                    cpu_eip(m->cpu));
        return -1;
    }
    return 0;
}

/* "EIP 0x... = sym+0x12 in the kernel stubs (CPL 0)": where the core is,
 * named from the stub and user-code symbols when one covers it. */
static char *describe_eip(const Machine *m)
{
    uint32_t eip = cpu_eip(m->cpu), off;
    const char *sym;
    GString *s = g_string_new(NULL);
    g_string_printf(s, "EIP 0x%08x", eip);
    if (m->stubs && elfload_symbol_at(m->stubs, eip, &sym, &off))
        g_string_append_printf(s, " = %s+0x%x in the kernel stubs", sym, off);
    else if (m->user && elfload_symbol_at(m->user, eip, &sym, &off))
        g_string_append_printf(s, " = %s+0x%x in the user code", sym, off);
    g_string_append_printf(s, ", CPL %d", cpu_cpl(m->cpu));
    return g_string_free(s, FALSE);
}

/* Run on until the core is back in user mode at one of the rest points,
 * within budget instructions (the watchdog). */
static bool keep_running(Machine *m, uint64_t budget, GError **err)
{
    uint64_t done = 0;
    while (done < budget) {
        uint64_t i0 = cpu_insns(m->cpu);
        CpuStop s = cpu_run(m->cpu, budget - done);
        done += cpu_insns(m->cpu) - i0 + 1;
        int r = on_stop(m, s, err);
        if (r)
            return r > 0;
        if (s == CPU_STOP_MAX_INSNS)
            break;
    }
    char *where = describe_eip(m);
    g_set_error(err, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                "no return to user mode after %llu instructions (%s): a kernel stub that "
                "never returns?", (unsigned long long)budget, where);
    g_free(where);
    return false;
}

static bool run_to_rest(Machine *m, GError **err)
{
    m->have_fault = false;
    return keep_running(m, MAX_STEPS_PER_EVENT, err);
}

bool machine_syscall(Machine *m, uint32_t nr, const uint32_t args[6], uint32_t *ret,
                     GError **err)
{
    static const CpuReg r[6] = { REG_EBX, REG_ECX, REG_EDX, REG_ESI, REG_EDI, REG_EBP };
    g_assert(cpu_cpl(m->cpu) == 3);
    cpu_set_reg(m->cpu, REG_EAX, nr);
    for (int i = 0; i < 6; i++)
        cpu_set_reg(m->cpu, r[i], args ? args[i] : 0);
    cpu_set_eip(m->cpu, m->sysenter ? m->u_sysenter : m->u_int80);
    if (!run_to_rest(m, err))
        return false;
    if (ret)
        *ret = cpu_reg(m->cpu, REG_EAX);
    return true;
}

/* The fast-forward's way of running the core (userwork.h): exactly steps
 * steps, which must end at the loop head. */
static bool ff_run(void *user, uint64_t steps)
{
    Machine *m = user;
    m->ff_stop = cpu_run(m->cpu, steps);
    return m->ff_stop == CPU_STOP_MAX_INSNS && !m->have_fault && cpu_cpl(m->cpu) == 3 &&
           cpu_eip(m->cpu) == m->u_work_loop;
}

/* One run of the loop, the core at user_work with its registers set: the
 * prologue to the loop head (a fourth breakpoint for the while), the
 * fast-forward, then the rest to user_work_done. A stop anywhere else is
 * taken as run_to_rest takes it. */
static bool user_work_ffwd(Machine *m, uint32_t va, uint32_t bytes, uint32_t stride,
                           uint64_t budget, GError **err)
{
    m->have_fault = false;
    uint32_t bp[4] = { m->u_int80_done, m->u_sysenter_done, m->u_work_done, m->u_work_loop };
    cpu_set_breakpoints(m->cpu, bp, 4);
    m->ff_stop = cpu_run(m->cpu, 64);
    cpu_set_breakpoints(m->cpu, bp, 3);
    if (m->ff_stop == CPU_STOP_BREAKPOINT && !m->have_fault &&
        cpu_eip(m->cpu) == m->u_work_loop) {
        if (!m->ff_scratch)
            m->ff_scratch = userwork_scratch_new();
        UserWork w = { .cpu = m->cpu, .code_lo = m->u_work, .code_hi = m->u_work_done + 1,
                       .va = va, .bytes = bytes, .stride = stride, .run = ff_run, .user = m,
                       .scratch = m->ff_scratch };
        if (userwork_fast_forward(&w, &m->skips))
            return keep_running(m, budget, err);
    }
    int r = on_stop(m, m->ff_stop, err);
    return r ? r > 0 : keep_running(m, budget, err);
}

void machine_set_fast_forward(Machine *m, bool on) { m->ffwd = on; }

void machine_set_host_shortcuts(Machine *m, bool on)
{
    cpu_set_decode_cache(m->cpu, on);
    mmu_set_shortcuts(m->mmu, on);
}
const UserWorkSkips *machine_fast_forward_skips(const Machine *m) { return &m->skips; }

bool machine_user_work(Machine *m, uint64_t insns, uint32_t va, uint32_t bytes,
                       uint32_t stride, GError **err)
{
    uint64_t iters = insns / USER_WORK_INSNS_PER_ITER;
    if (iters == 0)
        return true;
    g_assert(bytes >= 4 && stride > 0);
    while (iters) {
        uint32_t n = (uint32_t)MIN(iters, (uint64_t)UINT32_MAX);
        cpu_set_reg(m->cpu, REG_ECX, n);
        cpu_set_reg(m->cpu, REG_ESI, va);
        cpu_set_reg(m->cpu, REG_EDI, bytes);
        cpu_set_reg(m->cpu, REG_EDX, stride);
        cpu_set_eip(m->cpu, m->u_work);
        /* The watchdog's budget: the loop's own length (ECX bounds it)
         * plus the allowance of any kernel path. Both paths get it, so the
         * fast-forward and the plain run end alike, errors too. */
        uint64_t budget = (uint64_t)n * USER_WORK_INSNS_PER_ITER + MAX_STEPS_PER_EVENT;
        bool ff = m->ffwd && m->u_work_loop && userwork_worth(n, stride);
        m->have_fault = false;
        if (!(ff ? user_work_ffwd(m, va, bytes, stride, budget, err)
                 : keep_running(m, budget, err)))
            return false;
        iters -= n;
    }
    return true;
}

bool machine_switch_to(Machine *m, int task, GError **err)
{
    if (task == m->current)
        return true;
    machine_request_switch(m, task);
    cpu_raise_irq(m->cpu, IRQ_TIMER_VECTOR);
    return run_to_rest(m, err);
}

/* ---- page faults (kernel_model/usermm.h) ---- */

/* The #PF gate is installed with the body (set_intr_gate(14,
 * &page_fault)) and removed without it, so that a machine without one
 * has the IDT it always had: a page fault is then fatal as before. A
 * setup write, like the rest of the IDT. */
void machine_set_fault_body(Machine *m, MachineFaultFn fn, void *user)
{
    uint32_t pf;
    uint64_t d = 0;
    if (fn && elfload_symbol(m->stubs, "page_fault_entry", &pf))
        d = gate_desc(pf, 0, false);
    boot_write(m, m->idt + 8 * 14, &d, 8);
    m->fault_fn = fn;
    m->fault_user = user;
}

bool machine_can_fault(const Machine *m)
{
    uint32_t pf;
    return m->u_touch[0] && m->u_touch[1] && m->u_touch[2] &&
           elfload_symbol(m->stubs, "page_fault_entry", &pf);
}

bool machine_user_touch(Machine *m, uint32_t va, MachineTouch how, GError **err)
{
    g_assert(cpu_cpl(m->cpu) == 3 && how <= MACHINE_TOUCH_EXEC && m->u_touch[how]);
    cpu_set_reg(m->cpu, REG_EBX, va);
    cpu_set_eip(m->cpu, m->u_touch[how]);
    return run_to_rest(m, err);
}

/* ---- lifetime ---- */

Machine *machine_new(const MachineConfig *cfg, GError **err)
{
    Machine *m = g_new0(Machine, 1);
    m->layout = cfg->layout;
    m->preset = cfg->preset;
    m->sysenter = cfg->sysenter;
    if (cfg->sysenter && cfg->layout->no_sysenter) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "layout %s has no sysenter path (the kernel it follows enters "
                    "only through int 0x80); leave out --sysenter", cfg->layout->name);
        g_free(m);
        return NULL;
    }
    m->windowed = cfg->layout->window_size != 0;   /* stubs and tables in the window */
    m->pending = -1;
    m->ffwd = true;
    m->pm = physmem_new();
    if (!(m->mmu = mmu_new_full(m->pm, cfg->preset, cfg->tlb, 1, err)))
        goto fail;
    m->cpu = cpu_new(m->mmu, cfg->preset);
    bool pse = !cfg->preset || cfg->preset->pse;
    if (!(m->ks = kspace_new(m->pm, cfg->layout, cfg->ram, pse, err)) ||
        !load_stubs(m, cfg->stubs, err) || !load_user_code(m, err) || !build_tables(m, err))
        goto fail;
    uint32_t sr = 0;
    elfload_symbol(m->user, "sysenter_return", &sr);
    m->sysenter_return = sr;
    boot_write32(m, m->cpu_data + CD_SYSENTER_RETURN, sr);
    if (!cpu_boot(m, err))
        goto fail;
    cpu_port_register(m->cpu, HYPERCALL_PORT, 1, NULL, hypercall, m);
    uint32_t rest[3] = { m->u_int80_done, m->u_sysenter_done, m->u_work_done };
    cpu_set_breakpoints(m->cpu, rest, 3);
    cpu_set_event_hook(m->cpu, on_event, m);
    int t0 = machine_task_new(m, err);
    if (t0 < 0)
        goto fail;
    /* Enter task 0 the way a new task first runs: on its kernel stack, on
     * the kernel-mode page table, through ret_from_fork. */
    m->current = t0;
    install_task(m, t0, true);
    uint8_t vec;
    uint32_t ec;
    const Task *t = &m->tasks[t0];
    if (!cpu_write_cr(m->cpu, 3, task_kernel_cr3(m, t), &vec, &ec)) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "CR3 load for task 0 failed (#%u)", vec);
        goto fail;
    }
    cpu_set_reg(m->cpu, REG_ESP, t->saved_esp);
    cpu_set_eip(m->cpu, m->k_ret_from_fork);
    if (!run_to_rest(m, err))
        goto fail;
    return m;
fail:
    machine_free(m);
    return NULL;
}

void machine_free(Machine *m)
{
    if (!m)
        return;
    for (unsigned i = 0; i < MACHINE_MAX_TASKS; i++)
        if (m->tasks[i].live)
            pspace_free(m->tasks[i].ps);
    userwork_scratch_free(m->ff_scratch);
    elfload_free(m->stubs);
    elfload_free(m->user);
    kspace_free(m->ks);
    if (m->cpu)
        cpu_free(m->cpu);
    mmu_free(m->mmu);
    physmem_free(m->pm);
    g_free(m);
}

/* ---- free runs (guestprog.c) ---- */

CpuStop machine_run_free(Machine *m, uint64_t max_steps, bool *faulted, CpuEvent *fault)
{
    m->have_fault = false;
    cpu_set_breakpoints(m->cpu, NULL, 0);
    CpuStop s = cpu_run(m->cpu, max_steps);
    uint32_t rest[3] = { m->u_int80_done, m->u_sysenter_done, m->u_work_done };
    cpu_set_breakpoints(m->cpu, rest, 3);
    *faulted = m->have_fault;
    if (m->have_fault) {
        m->counts.guest_faults++;
        *fault = m->fault;
    }
    return s;
}

void machine_set_sysenter_return(Machine *m, uint32_t eip)
{
    m->sysenter_return = eip;
    boot_write32(m, m->cpu_data + CD_SYSENTER_RETURN, eip);
    for (unsigned i = 0; i < MACHINE_MAX_TASKS; i++)
        if (m->tasks[i].live)
            physmem_write32(m->pm, m->tasks[i].kstack_pa + TI_SYSENTER_RETURN, eip);
}
