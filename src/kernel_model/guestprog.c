/* A user program on a booted machine: see guestprog.h. Loading writes
 * frames and page tables directly (execve's work, not modelled); from the
 * program's first instruction on, everything is executed by the core or
 * charged by the body through the modelled MMU. */
#include "kernel_model/guestprog.h"

#include "cpu/elfload.h"
#include "kernel_model/body.h"
#include "mmu/mmu.h"
#include "mmu/pae.h"

#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(vmsplit-guestprog-error-quark, guestprog_error)

#define LINE 64                  /* __copy_user: one reference per 64-byte line */
/* The copies' kmap_atomic slot in the 4g4g window: past the machine's pages
 * (offsets 0-0x7FFF, machine.c) and KernelBody's slot (0x8000, body.c). */
#define KMAP_SLOT_OFF 0x9000u
#define USER_LOW PAGE_SIZE       /* page 0 stays unmapped, as in Linux */

/* Linux i386 numbers (include/asm-i386/unistd.h, errno-base.h, errno.h). */
#define NR_EXIT 1
#define NR_WRITE 4
#define LINUX_EBADF 9
#define LINUX_EFAULT 14
#define LINUX_ENOSYS 38

struct GuestProg {
    GuestProgOptions opt;
    const char *path;            /* for messages during guestprog_new */
    Machine *m;
    Cpu *cpu;
    Mmu *mmu;
    KernelSpace *ks;
    ProcSpace *ps;
    const Layout *layout;
    const CpuCosts *cost;
    GHashTable *pages;           /* user page -> (frame >> 12) + 1 */
    uint32_t entry, stack_top, stack_low;
    uint32_t kbuf_va;            /* the kernel side of the copies */
    uint32_t kmap_va;            /* 4g4g */
    uint64_t kmap_pte_pa;
    GuestProgState state;
    int exit_status;
    GuestProgFault fault;
    uint64_t insns0, user0, cycles0, sys0;
    uint64_t bytes_written, kmaps;
};

/* ---- uaccess (modelled kernel references) ---- */

/* One entry of a lowmem page table, read by the kernel through the direct
 * map: a PAE entry (8 bytes) as two dwords, as i386 PAE code reads them; a
 * legacy one as one dword. */
static bool kread_entry(GuestProg *g, uint64_t pa, uint64_t *v)
{
    uint32_t va = kspace_phys_to_virt(g->ks, pa), lo, hi = 0;
    MmuFault f;
    if (!mmu_read(g->mmu, va, 4, ACCESS_READ, 0, &lo, &f) ||
        (kspace_paging(g->ks)->entry_bytes == 8 &&
         !mmu_read(g->mmu, va + 4, 4, ACCESS_READ, 0, &hi, &f)))
        return false;
    *v = lo | (uint64_t)hi << 32;
    return true;
}

/* follow_page: the frame behind a user address, by a software walk of the
 * current task's user page tables (the PDPTE, which has no U/S under PAE,
 * only present). 0 if not mapped for user access. */
static uint64_t soft_walk(GuestProg *g, uint32_t va)
{
    const PageTableFormat *fmt = kspace_paging(g->ks);
    uint64_t table = pspace_user_cr3(g->ps) & fmt->cr3_base_mask, e;
    for (unsigned level = 0; level < fmt->levels; level++) {
        bool pdpte = fmt->levels == 3 && level == 0;
        uint64_t need = pdpte ? PAE_P : PAE_P | PAE_US;
        if (!kread_entry(g, ptformat_entry_addr(fmt, level, table, va), &e) ||
            (e & need) != need || (level == fmt->levels - 2 && (e & PAE_PS)))
            return 0;
        table = e & fmt->addr_4k;
    }
    return table;
}

/* kmap_atomic(page, KM_USER_COPY): set_pte of the slot (PAE: the high
 * half, then the low half; legacy: the one dword) and the INVLPG of its
 * old translation. */
static void kmap_atomic(GuestProg *g, uint64_t frame)
{
    uint64_t pte = frame | PAE_P | PAE_RW | PAE_A | PAE_D;
    uint32_t va = kspace_phys_to_virt(g->ks, g->kmap_pte_pa);
    MmuFault f;
    bool ok = (kspace_paging(g->ks)->entry_bytes == 4 ||
               mmu_write(g->mmu, va + 4, 4, 0, (uint32_t)(pte >> 32), &f)) &&
              mmu_write(g->mmu, va, 4, 0, (uint32_t)pte, &f);
    g_assert(ok);                /* the window's page table is in the direct map */
    mmu_invlpg(g->mmu, g->kmap_va);
    machine_charge(g->m, g->cost->invlpg, 1);
    g->kmaps++;
}

/* copy_from_user of n bytes at uva, inside one page, into dst. */
static bool copy_from_user_page(GuestProg *g, uint8_t *dst, uint32_t uva, uint32_t n)
{
    uint32_t src = uva;
    if (g->layout->indirect_uaccess) {
        uint64_t frame = soft_walk(g, uva);
        if (!frame)
            return false;
        kmap_atomic(g, frame);
        src = g->kmap_va + (uva & (PAGE_SIZE - 1));
        machine_charge(g->m, (uint64_t)KBODY_RW_VM_INSNS * g->cost->alu, KBODY_RW_VM_INSNS);
    }
    for (uint32_t off = 0; off < n;) {
        uint32_t k = MIN(n - off, LINE - ((src + off) & (LINE - 1)));
        MmuFault f;
        const uint8_t *s = mmu_access(g->mmu, src + off, ACCESS_READ, 0, &f);
        if (!s)
            return false;        /* -EFAULT: nothing mapped there */
        memcpy(dst + off, s, k);
        uint32_t kva = g->kbuf_va + ((uva + off) & (PAGE_SIZE - 1));
        uint8_t *d = mmu_access(g->mmu, kva, ACCESS_WRITE, 0, &f);
        g_assert(d);             /* a lowmem page of the kernel's */
        memcpy(d, s, k);
        off += k;
    }
    /* rep movsl: one iteration per dword, one instruction. */
    machine_charge(g->m, (uint64_t)(n + 3) / 4 * g->cost->string_iter, 1);
    return true;
}

/* ---- the syscall body ---- */

static void emit(GuestProg *g, uint32_t fd, const uint8_t *buf, uint32_t n)
{
    GString *sink = fd == 1 ? g->opt.out : g->opt.err;
    if (sink) {
        g_string_append_len(sink, (const char *)buf, n);
        return;
    }
    FILE *o = fd == 1 ? stdout : stderr;
    fwrite(buf, 1, n, o);
    fflush(o);
}

static uint32_t sys_write(GuestProg *g, uint32_t fd, uint32_t buf, uint32_t len)
{
    if (fd != 1 && fd != 2)
        return (uint32_t)-LINUX_EBADF;
    if ((uint64_t)buf + len > g->layout->task_size)     /* access_ok */
        return (uint32_t)-LINUX_EFAULT;
    uint8_t chunk[PAGE_SIZE];
    uint32_t done = 0;
    while (done < len) {
        uint32_t uva = buf + done;
        uint32_t n = MIN(len - done, PAGE_SIZE - (uva & (PAGE_SIZE - 1)));
        if (!copy_from_user_page(g, chunk, uva, n))
            break;
        emit(g, fd, chunk, n);
        done += n;
    }
    g->bytes_written += done;
    return done || !len ? done : (uint32_t)-LINUX_EFAULT;
}

static uint32_t body(Machine *m, uint32_t nr, const uint32_t args[6], void *user)
{
    (void)m;
    GuestProg *g = user;
    switch (nr) {
    case NR_EXIT:
        g->exit_status = (int)(args[0] & 0xFF);
        g->state = GUESTPROG_EXITED;
        cpu_request_stop(g->cpu, CPU_STOP_EXIT);
        return 0;
    case NR_WRITE:
        return sys_write(g, args[0], args[1], args[2]);
    default:
        return (uint32_t)-LINUX_ENOSYS;
    }
}

/* ---- loading (execve, done at setup) ---- */

/* A user page of task 0: mapped once with a fresh frame; a later segment
 * sharing it may widen it to writable. */
static bool map_page(GuestProg *g, uint32_t page, bool writable, uint64_t *pa, GError **err)
{
    gpointer v = g_hash_table_lookup(g->pages, GUINT_TO_POINTER(page));
    if (v) {
        *pa = (uint64_t)(GPOINTER_TO_UINT(v) - 1) << 12;
        return !writable || pspace_map_user(g->ps, page, *pa, true, err);
    }
    if (!(*pa = kspace_alloc_user_frame(g->ks, err)) ||
        !pspace_map_user(g->ps, page, *pa, writable, err))
        return false;
    g_hash_table_insert(g->pages, GUINT_TO_POINTER(page),
                        GUINT_TO_POINTER((guint)(*pa >> 12) + 1));
    mmu_invlpg(g->mmu, page);    /* whatever the boot left for this address */
    return true;
}

static bool load_segment(GuestProg *g, const ElfSegment *s, GError **err)
{
    uint64_t end = (uint64_t)s->vaddr + s->size;
    if (s->vaddr < USER_LOW || end > g->stack_low) {
        g_set_error(err, GUESTPROG_ERROR, GUESTPROG_ERROR_PROGRAM,
                    "%s: %s at 0x%08x-0x%08llx is outside the user space of layout %s "
                    "(0x%08x-0x%08x: TASK_SIZE 0x%08x less the stack)",
                    g->path, s->name, s->vaddr, (unsigned long long)end, g->layout->name,
                    USER_LOW, g->stack_low, g->layout->task_size);
        return false;
    }
    PhysMem *pm = kspace_physmem(g->ks);
    for (uint64_t a = s->vaddr; a < end;) {
        uint32_t page = (uint32_t)a & ~(PAGE_SIZE - 1);
        uint64_t next = MIN(end, (uint64_t)page + PAGE_SIZE), pa;
        if (!map_page(g, page, (s->flags & ELFLOAD_W) != 0, &pa, err))
            return false;
        physmem_write(pm, pa + (a & (PAGE_SIZE - 1)), s->bytes + (a - s->vaddr),
                      (size_t)(next - a));
        a = next;
    }
    return true;
}

/* The kernel-side pieces of the copies: a buffer page, and for 4g4g the
 * kmap slot (a placeholder frame until the first kmap). */
static bool setup_uaccess(GuestProg *g, GError **err)
{
    uint64_t pa = kspace_alloc_frame(g->ks, err);
    if (!pa)
        return false;
    g->kbuf_va = kspace_phys_to_virt(g->ks, pa);
    if (!g->layout->indirect_uaccess)
        return true;
    g->kmap_va = g->layout->window_base + KMAP_SLOT_OFF;
    if (!(pa = kspace_alloc_frame(g->ks, err)) ||
        !kspace_map_window(g->ks, g->kmap_va, pa, true, err))
        return false;
    g->kmap_pte_pa = kspace_window_pte(g->ks, g->kmap_va);
    return true;
}

static bool load_program(GuestProg *g, ElfObject *obj, GError **err)
{
    /* execve drops the old image: here the model's synthetic user code. */
    pspace_unmap_user(g->ps, USER_CODE_VA);
    mmu_invlpg(g->mmu, USER_CODE_VA);
    for (size_t k = 0; k < elfload_n_segments(obj); k++)
        if (!load_segment(g, elfload_segment(obj, k), err))
            return false;
    uint64_t pa;
    for (uint32_t va = g->stack_low; va < g->stack_top; va += PAGE_SIZE)
        if (!map_page(g, va, true, &pa, err))
            return false;
    uint32_t sr;
    if (elfload_symbol(obj, "sysenter_return", &sr))
        machine_set_sysenter_return(g->m, sr);
    else
        cpu_write_msr(g->cpu, MSR_SYSENTER_CS, 0);   /* SYSENTER -> #GP(0) */
    /* start_thread: registers zero, ESP at argc = 0, argv = envp = NULL. */
    for (CpuReg r = REG_EAX; r < CPU_NREGS; r++)
        cpu_set_reg(g->cpu, r, 0);
    cpu_set_reg(g->cpu, REG_ESP, g->stack_top - 16);
    cpu_set_eip(g->cpu, g->entry);
    return true;
}

GuestProg *guestprog_new(const GuestProgOptions *opt, const char *path, GError **err)
{
    g_return_val_if_fail(opt && opt->machine.layout, NULL);
    ElfLoadOptions lo = { .base = USER_CODE_VA };
    ElfObject *obj = elfload_file(path, &lo, err);
    if (!obj)
        return NULL;
    GuestProg *g = g_new0(GuestProg, 1);
    g->opt = *opt;
    g->path = path;
    g->layout = opt->machine.layout;
    g->pages = g_hash_table_new(NULL, NULL);
    /* The stack: below the page under TASK_SIZE, where machine.c puts it. */
    g->stack_top = g->layout->task_size - PAGE_SIZE;
    g->stack_low = g->stack_top - GUESTPROG_STACK_PAGES * PAGE_SIZE;
    if (!elfload_entry(obj, &g->entry)) {
        g_set_error(err, GUESTPROG_ERROR, GUESTPROG_ERROR_PROGRAM,
                    "%s: no entry point (an object file needs a global _start)", path);
        goto fail;
    }
    if (!(g->m = machine_new(&opt->machine, err)))
        goto fail;
    g->cpu = machine_cpu(g->m);
    g->mmu = machine_mmu(g->m);
    g->ks = machine_kspace(g->m);
    g->ps = machine_task_space(g->m, machine_current(g->m));
    g->cost = cpu_costs(g->cpu);
    cpu_set_decode_cache(g->cpu, !opt->no_decode_cache);
    mmu_set_shortcuts(g->mmu, !opt->no_mmu_shortcuts);
    if (!setup_uaccess(g, err) || !load_program(g, obj, err))
        goto fail;
    machine_set_body(g->m, body, g);
    elfload_free(obj);
    g->path = NULL;
    /* The report covers the program: zero the memory system's counters,
     * then take the core's (cpu_cycles includes the MMU's) as the origin. */
    mmu_reset_stats(g->mmu);
    g->insns0 = cpu_insns(g->cpu);
    g->user0 = cpu_insns_user(g->cpu);
    g->cycles0 = cpu_cycles(g->cpu);
    g->sys0 = machine_counts(g->m)->syscalls;
    g->state = GUESTPROG_READY;
    return g;
fail:
    elfload_free(obj);
    guestprog_free(g);
    return NULL;
}

void guestprog_free(GuestProg *g)
{
    if (!g)
        return;
    machine_free(g->m);
    g_hash_table_destroy(g->pages);
    g_free(g);
}

/* ---- running ---- */

static void record_fault(GuestProg *g, const CpuEvent *ev)
{
    GuestProgFault *f = &g->fault;
    memset(f, 0, sizeof *f);
    f->cpl = ev->from_cpl;
    if (ev->kind == CPU_EV_TRIPLE_FAULT) {
        const CpuTripleFault *t = cpu_triple_fault(g->cpu);
        f->triple = true;
        f->vector = t->vectors[0];
        f->error_code = t->error_codes[0];
        /* A benign exception (#UD, #BP, ...) whose gate is missing turns
         * into #GP with an IDT error code (SDM Vol. 3A §6.13: bit 0 EXT,
         * bit 1 IDT, bits 15:3 the vector) before #DF: report the original.
         * EXT = 0 means the program's own INT n hit the gate: a real #GP. */
        if (f->vector == VEC_GP && (f->error_code & 3) == 3 && (f->error_code >> 3) < 32) {
            f->vector = (uint8_t)(f->error_code >> 3);
            f->error_code = 0;
        }
        f->eip = t->eip;
        f->cr2 = t->cr2;
        memcpy(f->regs, t->regs, sizeof f->regs);
        f->eflags = t->eflags;
    } else {
        f->vector = ev->vector;
        f->error_code = ev->error_code;
        f->eip = ev->from_eip;
        f->cr2 = ev->cr2;
    }
}

GuestProgState guestprog_run(GuestProg *g, uint64_t max_steps)
{
    if (g->state != GUESTPROG_READY && g->state != GUESTPROG_BUDGET)
        return g->state;
    bool faulted = false;
    CpuEvent ev;
    CpuStop s = machine_run_free(g->m, max_steps, &faulted, &ev);
    if (faulted) {
        record_fault(g, &ev);
        g->state = GUESTPROG_FAULTED;
    } else if (g->state == GUESTPROG_EXITED) {
        /* exit's body ran (the budget may have ended at that very step) */
    } else if (s == CPU_STOP_HLT) {
        g->state = GUESTPROG_HALTED;
    } else {
        g_assert(s == CPU_STOP_MAX_INSNS);   /* nothing else stops a free run */
        g->state = GUESTPROG_BUDGET;
    }
    return g->state;
}

GuestProgState guestprog_state(const GuestProg *g) { return g->state; }
int guestprog_exit_status(const GuestProg *g) { return g->exit_status; }
const GuestProgFault *guestprog_fault(const GuestProg *g) { return &g->fault; }
Machine *guestprog_machine(GuestProg *g) { return g->m; }
uint32_t guestprog_entry(const GuestProg *g) { return g->entry; }

GuestProgStats guestprog_stats(const GuestProg *g)
{
    return (GuestProgStats){
        .insns = cpu_insns(g->cpu) - g->insns0,
        .insns_user = cpu_insns_user(g->cpu) - g->user0,
        .cycles = cpu_cycles(g->cpu) - g->cycles0,
        .syscalls = machine_counts(g->m)->syscalls - g->sys0,
        .bytes_written = g->bytes_written,
        .kmaps = g->kmaps,
    };
}

static const char *const vec_names[32] = {
    "#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "CSO", "#TS", "#NP",
    "#SS", "#GP", "#PF", "15", "#MF", "#AC", "#MC", "#XM", "#VE", "21", "22", "23", "24",
    "25", "26", "27", "28", "29", "30", "31",
};

static const char *vec_name(uint8_t v) { return v < 32 ? vec_names[v] : "interrupt"; }

char *guestprog_describe_fault(const GuestProg *g)
{
    const GuestProgFault *f = &g->fault;
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "%s (vector %u, error code 0x%x) at EIP 0x%08x in ring %d",
                           vec_name(f->vector), f->vector, f->error_code, f->eip, f->cpl);
    if (f->vector == VEC_PF)
        g_string_append_printf(s, ", CR2 0x%08x", f->cr2);
    if (f->triple) {
        g_string_append(s, "\n  not deliverable: the kernel model installs no exception "
                           "handlers, so the core triple-faulted");
        g_string_append_printf(s, "\n  EAX=%08x ECX=%08x EDX=%08x EBX=%08x ESP=%08x EBP=%08x "
                                  "ESI=%08x EDI=%08x EFLAGS=%08x",
                               f->regs[0], f->regs[1], f->regs[2], f->regs[3], f->regs[4],
                               f->regs[5], f->regs[6], f->regs[7], f->eflags);
    }
    return g_string_free(s, FALSE);
}
