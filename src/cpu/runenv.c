/* The `vmsplit run` environment: see runenv.h for the layout. Building it
 * writes page tables and descriptor tables straight into physical memory
 * (setup, not modelled); everything after cpu_set_eip(boot) is executed by
 * the core and counted. */
#include "cpu/runenv.h"

#include <stdio.h>

#include "config.h"
#include "cpu/elfload.h"
#include "cpu/ports.h"
#include "mmu/mmu.h"

G_DEFINE_QUARK(vmsplit-runenv-error-quark, runenv_error)

/* Physical placement. Kernel linear addresses map to physical - 3 GiB. */
#define PHYS_PDPT 0x00400000u
#define PHYS_PD0 0x00401000u     /* 4 page directories */
#define PHYS_PT_FIRST 0x00405000u
#define PHYS_PT_LIMIT 0x01000000u
#define PHYS_USER_FIRST 0x01000000u

#define LIN_GDT 0xC0001000u
#define LIN_IDT 0xC0002000u
#define LIN_TSS 0xC0003000u
#define LIN_BOOT 0xC0004000u     /* GDT/IDT pseudo-descriptors, IRET frame */
#define LIN_KSTACK_LOW 0xC000C000u
#define LIN_KSTACK_TOP 0xC0010000u
#define LIN_RUNTIME 0xC0100000u
#define USER_STACK_PAGES 64u

#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_UCODE 0x1B
#define SEL_UDATA 0x23
#define SEL_TSS 0x28
#define GDT_ENTRIES 6
#define TSS_SIZE 104


struct RunEnv {
    RunEnvOptions opt;
    PhysMem *pm;
    Mmu *mmu;
    Cpu *cpu;
    ElfObject *runtime;
    bool nx, pge, loaded;
    uint32_t next_pt, next_user;
    GHashTable *user_pages;      /* linear page -> physical page + 1 */
    RunEnvState state;
    int exit_status;
    uint64_t syscalls;
    RunEnvFault fault;
};

/* ---- page tables (PAE, SDM Vol. 3A §4.4) ---- */

static uint64_t *entry_in(RunEnv *e, uint32_t table_pa, unsigned idx)
{
    return (uint64_t *)(physmem_frame_get(e->pm, table_pa) + idx * 8);
}

static bool map_page(RunEnv *e, uint32_t lin, uint64_t pa, uint64_t flags, GError **err)
{
    uint64_t *pde = entry_in(e, PHYS_PD0 + (lin >> 30) * PAGE_SIZE, (lin >> 21) & 511);
    if (!(*pde & PAE_P)) {
        if (e->next_pt >= PHYS_PT_LIMIT) {
            g_set_error(err, RUNENV_ERROR, RUNENV_ERROR_PROGRAM,
                        "the program needs more page tables than the environment reserves");
            return false;
        }
        *pde = e->next_pt | PAE_P | PAE_RW | PAE_US;
        e->next_pt += PAGE_SIZE;
    }
    uint64_t *pte = entry_in(e, (uint32_t)(*pde & PAE_ADDR_4K), (lin >> 12) & 511);
    *pte = (pa & PAE_ADDR_4K) | flags | PAE_P;
    return true;
}

static uint64_t kernel_flags(const RunEnv *e, bool exec)
{
    return PAE_RW | (e->pge ? PAE_G : 0) | (e->nx && !exec ? PAE_XD : 0);
}

static bool map_kernel(RunEnv *e, uint32_t lin, uint32_t size, bool exec, GError **err)
{
    for (uint32_t p = lin & ~(PAGE_SIZE - 1); p < lin + size; p += PAGE_SIZE)
        if (!map_page(e, p, p - RUNENV_KERNEL_BASE, kernel_flags(e, exec), err))
            return false;
    return true;
}

/* A user page: mapped once; a later segment sharing it widens the rights. */
static bool map_user(RunEnv *e, uint32_t page, unsigned elf_flags, uint64_t *pa, GError **err)
{
    gpointer v = g_hash_table_lookup(e->user_pages, GUINT_TO_POINTER(page));
    uint64_t flags = PAE_US | ((elf_flags & ELFLOAD_W) ? PAE_RW : 0) |
                     (e->nx && !(elf_flags & ELFLOAD_X) ? PAE_XD : 0);
    if (v) {
        *pa = (uint64_t)GPOINTER_TO_UINT(v) - 1;
        uint64_t *pde = entry_in(e, PHYS_PD0 + (page >> 30) * PAGE_SIZE, (page >> 21) & 511);
        uint64_t *pte = entry_in(e, (uint32_t)(*pde & PAE_ADDR_4K), (page >> 12) & 511);
        *pte |= flags & (PAE_RW | PAE_US);
        if (!(flags & PAE_XD))
            *pte &= ~PAE_XD;
        return true;
    }
    *pa = e->next_user;
    e->next_user += PAGE_SIZE;
    g_hash_table_insert(e->user_pages, GUINT_TO_POINTER(page), GUINT_TO_POINTER((guint)*pa + 1));
    return map_page(e, page, *pa, flags, err);
}

/* ---- descriptor tables ---- */

static uint64_t seg_desc(uint32_t base, uint32_t limit, unsigned access, unsigned flags)
{
    return (limit & 0xFFFF) | ((uint64_t)(base & 0xFFFFFF) << 16) | ((uint64_t)access << 40) |
           ((uint64_t)((limit >> 16) & 0xF) << 48) | ((uint64_t)flags << 52) |
           ((uint64_t)(base >> 24) << 56);
}

static uint64_t gate_desc(uint16_t sel, uint32_t off, unsigned type, unsigned dpl)
{
    uint32_t lo = ((uint32_t)sel << 16) | (off & 0xFFFF);
    uint32_t hi = (off & 0xFFFF0000u) | 0x8000u | (dpl << 13) | (type << 8);
    return ((uint64_t)hi << 32) | lo;
}

static void put64(RunEnv *e, uint32_t lin, uint64_t v)
{
    physmem_write64(e->pm, lin - RUNENV_KERNEL_BASE, v);
}

static void put32(RunEnv *e, uint32_t lin, uint32_t v)
{
    physmem_write32(e->pm, lin - RUNENV_KERNEL_BASE, v);
}

static void build_tables(RunEnv *e, uint32_t int80, const uint32_t exc[32])
{
    /* Access bytes: P | DPL | S | type, accessed bit preset as Linux does;
     * flags: G=1 (4 KiB units), D=1 (32-bit). */
    const uint64_t gdt[GDT_ENTRIES] = {
        0,
        seg_desc(0, 0xFFFFF, 0x9B, 0xC),           /* 0x08 kernel code */
        seg_desc(0, 0xFFFFF, 0x93, 0xC),           /* 0x10 kernel data */
        seg_desc(0, 0xFFFFF, 0xFB, 0xC),           /* 0x18 user code, DPL 3 */
        seg_desc(0, 0xFFFFF, 0xF3, 0xC),           /* 0x20 user data, DPL 3 */
        seg_desc(LIN_TSS, TSS_SIZE - 1, 0x89, 0),  /* 0x28 32-bit TSS, available */
    };
    for (unsigned k = 0; k < GDT_ENTRIES; k++)
        put64(e, LIN_GDT + 8 * k, gdt[k]);
    for (unsigned v = 0; v < 32; v++)    /* interrupt gates; #BP and #OF reachable from ring 3 */
        put64(e, LIN_IDT + 8 * v, gate_desc(SEL_KCODE, exc[v], 0xE, v == 3 || v == 4 ? 3 : 0));
    put64(e, LIN_IDT + 8 * 0x80, gate_desc(SEL_KCODE, int80, 0xF, 3));
    put32(e, LIN_TSS + 4, LIN_KSTACK_TOP);     /* ESP0 */
    put32(e, LIN_TSS + 8, SEL_KDATA);          /* SS0 */
    put32(e, LIN_TSS + 0x64, (uint32_t)TSS_SIZE << 16);  /* I/O map base past the limit */
    /* Pseudo-descriptors for LGDT/LIDT: limit16 then base32. */
    physmem_write16(e->pm, LIN_BOOT - RUNENV_KERNEL_BASE, GDT_ENTRIES * 8 - 1);
    put32(e, LIN_BOOT + 2, LIN_GDT);
    physmem_write16(e->pm, LIN_BOOT + 8 - RUNENV_KERNEL_BASE, 256 * 8 - 1);
    put32(e, LIN_BOOT + 10, LIN_IDT);
}

/* ---- the hypercall ports ---- */

#define LINUX_EBADF 9
#define LINUX_EFAULT 14
#define LINUX_ENOSYS 38

static uint32_t sys_write(RunEnv *e, uint32_t fd, uint32_t buf, uint32_t len)
{
    if (fd != 1 && fd != 2)
        return (uint32_t)-LINUX_EBADF;
    GString *sink = fd == 1 ? e->opt.out : e->opt.err;
    uint8_t chunk[4096];
    uint32_t done = 0;
    while (done < len) {
        uint32_t n = MIN(len - done, (uint32_t)sizeof chunk);
        if (!cpu_read_linear(e->cpu, buf + done, chunk, n))
            return done ? done : (uint32_t)-LINUX_EFAULT;
        if (sink)
            g_string_append_len(sink, (const char *)chunk, n);
        else
            fwrite(chunk, 1, n, fd == 1 ? stdout : stderr);
        done += n;
    }
    if (!sink)
        fflush(fd == 1 ? stdout : stderr);
    return done;
}

static PortResult port_syscall(Cpu *cpu, uint16_t port, unsigned size, uint32_t val, void *user)
{
    (void)port;
    (void)size;
    (void)val;
    RunEnv *e = user;
    e->syscalls++;
    uint32_t a1 = cpu_reg(cpu, REG_EBX), a2 = cpu_reg(cpu, REG_ECX), a3 = cpu_reg(cpu, REG_EDX);
    switch (cpu_reg(cpu, REG_EAX)) {
    case 1:
        e->exit_status = (int)(a1 & 0xFF);
        e->state = RUNENV_EXITED;
        return PORT_STOP;
    case 4:
        cpu_set_reg(cpu, REG_EAX, sys_write(e, a1, a2, a3));
        return PORT_OK;
    default:
        cpu_set_reg(cpu, REG_EAX, (uint32_t)-LINUX_ENOSYS);
        return PORT_OK;
    }
}

/* The frame exc_common hands over: PUSHAD image (EDI first), vector, error
 * code, EIP, CS, EFLAGS, and ESP, SS when the exception came from ring 3. */
static PortResult port_fault(Cpu *cpu, uint16_t port, unsigned size, uint32_t val, void *user)
{
    (void)port;
    (void)size;
    RunEnv *e = user;
    uint32_t f[15] = { 0 };
    RunEnvFault *r = &e->fault;
    memset(r, 0, sizeof *r);
    if (cpu_read_linear(cpu, val, f, 13 * 4)) {
        for (unsigned k = 0; k < 8; k++)
            r->regs[7 - k] = f[k];
        r->vector = (uint8_t)f[8];
        r->error_code = f[9];
        r->eip = f[10];
        r->cs = (uint16_t)f[11];
        r->eflags = f[12];
        r->esp = val + 13 * 4;                     /* same-level: above the frame */
        if ((r->cs & 3) && cpu_read_linear(cpu, val + 13 * 4, &f[13], 8))
            r->esp = f[13];
        r->regs[REG_ESP] = r->esp;
    }
    r->cr2 = cpu_cr2(cpu);
    e->state = RUNENV_FAULTED;
    return PORT_STOP;
}

/* ---- construction ---- */

char *runenv_runtime_path(void)
{
    const char *env = g_getenv("VMSPLIT_RUNTIME");
    if (env && *env)
        return g_strdup(env);
    char *p = g_build_filename(VMSPLIT_BUILD_DIR, "workloads", "guest", "runtime", "runenv.o", NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
        return p;
    g_free(p);
    return g_build_filename(VMSPLIT_DATADIR, "guest", "runtime", "runenv.o", NULL);
}

static bool load_runtime(RunEnv *e, GError **err)
{
    char *path = runenv_runtime_path();
    ElfLoadOptions lo = { .base = LIN_RUNTIME };
    GError *lerr = NULL;
    e->runtime = elfload_file(path, &lo, &lerr);
    if (!e->runtime) {
        g_set_error(err, RUNENV_ERROR, RUNENV_ERROR_RUNTIME,
                    "cannot load the ring-0 runtime of `vmsplit run`: %s", lerr->message);
        g_error_free(lerr);
        g_free(path);
        return false;
    }
    uint32_t boot, int80, table;
    if (!elfload_symbol(e->runtime, "boot", &boot) ||
        !elfload_symbol(e->runtime, "int80_entry", &int80) ||
        !elfload_symbol(e->runtime, "exc_table", &table)) {
        g_set_error(err, RUNENV_ERROR, RUNENV_ERROR_RUNTIME,
                    "%s: missing one of the symbols boot, int80_entry, exc_table", path);
        g_free(path);
        return false;
    }
    g_free(path);
    for (size_t k = 0; k < elfload_n_segments(e->runtime); k++) {
        const ElfSegment *s = elfload_segment(e->runtime, k);
        physmem_write(e->pm, s->vaddr - RUNENV_KERNEL_BASE, s->bytes, s->size);
        if (!map_kernel(e, s->vaddr, s->size, (s->flags & ELFLOAD_X) != 0, err))
            return false;
    }
    uint32_t exc[32];
    for (unsigned v = 0; v < 32; v++)
        exc[v] = physmem_read32(e->pm, table - RUNENV_KERNEL_BASE + 4 * v);
    build_tables(e, int80, exc);
    cpu_set_eip(e->cpu, boot);
    return true;
}

static bool setup_cpu(RunEnv *e, GError **err)
{
    if (!map_kernel(e, LIN_GDT, LIN_KSTACK_TOP - LIN_GDT, false, err))
        return false;
    for (unsigned k = 0; k < 4; k++)             /* PDPTEs: P and the address only */
        physmem_write64(e->pm, PHYS_PDPT + 8 * k, (PHYS_PD0 + k * PAGE_SIZE) | PAE_P);
    uint8_t vec;
    uint32_t code;
    if (e->nx && !cpu_write_msr(e->cpu, MSR_EFER, EFER_NXE))
        goto fail;
    if (!cpu_write_cr(e->cpu, 4, CR4_PAE | (e->pge ? CR4_PGE : 0), &vec, &code) ||
        !cpu_write_cr(e->cpu, 3, PHYS_PDPT, &vec, &code) ||
        !cpu_write_cr(e->cpu, 0, CR0_PE | CR0_ET | CR0_WP | CR0_PG, &vec, &code))
        goto fail;
    cpu_port_register(e->cpu, RUNENV_PORT_SYSCALL, 1, NULL, port_syscall, e);
    cpu_port_register(e->cpu, RUNENV_PORT_FAULT, 1, NULL, port_fault, e);
    return true;
fail:
    g_set_error(err, RUNENV_ERROR, RUNENV_ERROR_SETUP,
                "the core refused the environment's control registers");
    return false;
}

RunEnv *runenv_new(const RunEnvOptions *opt, GError **err)
{
    RunEnv *e = g_new0(RunEnv, 1);
    if (opt)
        e->opt = *opt;
    const Preset *p = e->opt.preset;
    e->nx = p && p->nx;
    e->pge = !p || p->pge;
    e->pm = physmem_new();
    e->mmu = mmu_new(e->pm, p);
    e->cpu = cpu_new(e->mmu, p);
    cpu_set_decode_cache(e->cpu, !e->opt.no_decode_cache);
    mmu_set_shortcuts(e->mmu, !e->opt.no_mmu_shortcuts);
    e->next_pt = PHYS_PT_FIRST;
    e->next_user = PHYS_USER_FIRST;
    e->user_pages = g_hash_table_new(NULL, NULL);
    e->state = RUNENV_READY;
    if (!setup_cpu(e, err) || !load_runtime(e, err)) {
        runenv_free(e);
        return NULL;
    }
    return e;
}

void runenv_free(RunEnv *e)
{
    if (!e)
        return;
    if (e->runtime)
        elfload_free(e->runtime);
    if (e->user_pages)
        g_hash_table_destroy(e->user_pages);
    cpu_free(e->cpu);
    mmu_free(e->mmu);
    physmem_free(e->pm);
    g_free(e);
}

static bool load_segment(RunEnv *e, const char *path, const ElfSegment *s, GError **err)
{
    if (s->size == 0)
        return true;
    uint64_t end = (uint64_t)s->vaddr + s->size;
    if (s->vaddr < PAGE_SIZE || end > RUNENV_USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE) {
        g_set_error(err, RUNENV_ERROR, RUNENV_ERROR_PROGRAM,
                    "%s: %s at 0x%08x-0x%08llx is outside the user area "
                    "(0x00001000-0x%08x)", path, s->name, s->vaddr, (unsigned long long)end,
                    RUNENV_USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE);
        return false;
    }
    for (uint64_t a = s->vaddr; a < end;) {
        uint32_t page = (uint32_t)a & ~(PAGE_SIZE - 1);
        uint64_t pa, next = MIN(end, (uint64_t)page + PAGE_SIZE);
        if (!map_user(e, page, s->flags, &pa, err))
            return false;
        const uint8_t *src = s->bytes + (a - s->vaddr);
        uint32_t n = (uint32_t)(next - a);
        bool zero = true;
        for (uint32_t k = 0; k < n && zero; k++)
            zero = src[k] == 0;
        if (!zero)                       /* .bss pages stay unallocated until written */
            physmem_write(e->pm, pa + (a & (PAGE_SIZE - 1)), src, n);
        a = next;
    }
    return true;
}

bool runenv_load(RunEnv *e, const char *path, GError **err)
{
    g_return_val_if_fail(!e->loaded, false);
    ElfLoadOptions lo = { .base = RUNENV_USER_BASE };
    ElfObject *obj = elfload_file(path, &lo, err);
    if (!obj)
        return false;
    uint32_t entry;
    bool ok = true;
    if (!elfload_entry(obj, &entry)) {
        g_set_error(err, RUNENV_ERROR, RUNENV_ERROR_PROGRAM,
                    "%s: no entry point (an object file needs a global _start)", path);
        ok = false;
    }
    for (size_t k = 0; ok && k < elfload_n_segments(obj); k++)
        ok = load_segment(e, path, elfload_segment(obj, k), err);
    for (uint32_t k = 0; ok && k < USER_STACK_PAGES; k++) {
        uint64_t pa;
        ok = map_user(e, RUNENV_USER_STACK_TOP - (k + 1) * PAGE_SIZE, ELFLOAD_W, &pa, err);
    }
    elfload_free(obj);
    if (!ok)
        return false;
    /* IRET frame to ring 3: EIP, CS, EFLAGS (IF set, as Linux starts a
     * program), ESP, SS. ESP points at argc = 0, argv = envp = NULL. */
    const uint32_t frame[5] = { entry, SEL_UCODE, EFLAGS_FIXED1 | EFLAGS_IF,
                                RUNENV_USER_STACK_TOP - 16, SEL_UDATA };
    for (unsigned k = 0; k < 5; k++)
        put32(e, LIN_BOOT + 16 + 4 * k, frame[k]);
    cpu_set_reg(e->cpu, REG_EAX, LIN_BOOT);
    cpu_set_reg(e->cpu, REG_EBX, LIN_BOOT + 8);
    cpu_set_reg(e->cpu, REG_ECX, SEL_TSS);
    cpu_set_reg(e->cpu, REG_EDX, LIN_BOOT + 16);
    cpu_set_reg(e->cpu, REG_ESP, LIN_KSTACK_TOP);
    e->loaded = true;
    return true;
}

RunEnvState runenv_run(RunEnv *e, uint64_t max_insns)
{
    g_return_val_if_fail(e->loaded, RUNENV_READY);
    if (e->state != RUNENV_READY && e->state != RUNENV_BUDGET)
        return e->state;
    CpuStop s = cpu_run(e->cpu, max_insns);
    switch (s) {
    case CPU_STOP_EXIT: break;   /* the hook set EXITED or FAULTED */
    case CPU_STOP_TRIPLE_FAULT: e->state = RUNENV_TRIPLE_FAULT; break;
    case CPU_STOP_HLT: e->state = RUNENV_HALTED; break;
    default: e->state = RUNENV_BUDGET; break;
    }
    return e->state;
}

RunEnvState runenv_state(const RunEnv *e) { return e->state; }
int runenv_exit_status(const RunEnv *e) { return e->exit_status; }
const RunEnvFault *runenv_fault(const RunEnv *e) { return &e->fault; }
uint64_t runenv_syscalls(const RunEnv *e) { return e->syscalls; }
Cpu *runenv_cpu(RunEnv *e) { return e->cpu; }
Mmu *runenv_mmu(RunEnv *e) { return e->mmu; }

static const char *const vec_names[32] = {
    "#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "CSO", "#TS", "#NP",
    "#SS", "#GP", "#PF", "15", "#MF", "#AC", "#MC", "#XM", "#VE", "21", "22", "23", "24",
    "25", "26", "27", "28", "29", "30", "31",
};

char *runenv_describe_fault(const RunEnv *e)
{
    const RunEnvFault *f = &e->fault;
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "%s (vector %u, error code 0x%x) at EIP 0x%08x in ring %u",
                           vec_names[f->vector & 31], f->vector, f->error_code, f->eip,
                           f->cs & 3);
    if (f->vector == VEC_PF)
        g_string_append_printf(s, ", CR2 0x%08x", f->cr2);
    g_string_append_printf(s, "\n  EAX=%08x ECX=%08x EDX=%08x EBX=%08x ESP=%08x EBP=%08x "
                              "ESI=%08x EDI=%08x EFLAGS=%08x",
                           f->regs[0], f->regs[1], f->regs[2], f->regs[3], f->regs[4],
                           f->regs[5], f->regs[6], f->regs[7], f->eflags);
    return g_string_free(s, FALSE);
}
