/* Privilege and fault delivery (Intel SDM Vol. 3A ch. 5-6) on a small
 * machine built here by hand: PAE identity mapping of the first 2 MiB,
 * a GDT in Linux's order, a TSS, an IDT, and NASM code (assembled at test
 * time) with a ring-0 part and a ring-3 part. Every ring-0 handler records
 * what the CPU pushed (and CR2, its own CS and ESP) in a log and halts, so
 * each test runs one scenario and compares the log with what the SDM says
 * the CPU must have done. The expected values are worked out in each test
 * from the layout below, not taken from the core. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/elfload.h"
#include "cpu/nasm.h"
#include "cpu/ports.h"
#include "mmu/mmu.h"
#include "prot_boot.h"

/* Physical = linear (identity) layout. */
#define GDT 0x1000u
#define IDT 0x2000u
#define TSS 0x3000u
#define KTEXT 0x4000u
#define KDATA 0x6000u
#define KSTACK_TOP 0x9000u
#define UTEXT 0x10000u
#define UDATA 0x11000u
#define URO 0x12000u             /* user read-only page */
#define USTACK_TOP 0x31000u      /* user stack page 0x30000 */
#define UNMAPPED 0x00300000u     /* beyond the one page table */
#define PDPT 0x100000u
#define PD 0x101000u
#define PT 0x102000u

#define KCS 0x08
#define KDS 0x10
#define UCS 0x1B
#define UDS 0x23
#define TSS_SEL 0x28
#define NP_DS 0x30               /* a data segment marked not present */

static const char *source =
    "BITS 32\n"
    "section .ktext\n"
    "global kstart\n"
    "kstart:                      ; EAX = user entry\n"
    "    push dword 0x23\n    push dword 0x31000\n    push dword 0x202\n"
    "    push dword 0x1b\n    push eax\n    iretd\n"
    "%macro ERR 1\n"
    "global h%1\nh%1: mov dword [log_vec], %1\n    pop dword [log_err]\n    jmp hcommon\n"
    "%endmacro\n"
    "%macro NOERR 1\n"
    "global h%1\nh%1: mov dword [log_vec], %1\n    mov dword [log_err], 0xffffffff\n"
    "    jmp hcommon\n"
    "%endmacro\n"
    "NOERR 0\nNOERR 6\nERR 8\nERR 11\nERR 12\nERR 13\nERR 14\nNOERR 32\n"
    "hcommon:\n"
    "    mov [log_kesp], esp\n"
    "    push eax\n    mov eax, [esp+4]\n    mov [log_eip], eax\n    mov eax, [esp+8]\n"
    "    mov [log_cs], eax\n    mov eax, [esp+12]\n    mov [log_eflags], eax\n"
    "    mov eax, [esp+16]\n    mov [log_esp], eax\n    mov eax, [esp+20]\n"
    "    mov [log_ss], eax\n    mov eax, cr2\n    mov [log_cr2], eax\n"
    "    mov eax, cs\n    mov [log_kcs], eax\n    pop eax\n    hlt\n"
    "    iretd                    ; resumed by the IRQ test\n"
    "global h128\n"
    "h128:                        ; int 0x80: a DPL-3 trap gate; count and return\n"
    "    inc dword [log_count]\n    mov [log_kesp], esp\n    push eax\n"
    "    mov eax, [esp+4]\n    mov [log_eip], eax\n    mov eax, [esp+8]\n    mov [log_cs], eax\n"
    "    mov eax, [esp+16]\n    mov [log_esp], eax\n    mov eax, [esp+20]\n    mov [log_ss], eax\n"
    "    mov eax, cs\n    mov [log_kcs], eax\n    pop eax\n    add eax, 100\n    iretd\n"
    "global h129\n"
    "h129: hlt                    ; int 0x81: the scenario is over\n"
    "global k_int80, k_int80_ret\n"
    "k_int80:                     ; ring 0: INT 0x80 without a stack switch\n"
    "    mov esp, 0x8800\n    mov eax, 1\n    int 0x80\n"
    "k_int80_ret:\n    mov [log_esp], esp\n    mov [log_err], eax\n    hlt\n"
    "global sysenter_entry\n"
    "sysenter_entry:\n"
    "    mov [log_kesp], esp\n    mov eax, cs\n    mov [log_kcs], eax\n    mov eax, ss\n"
    "    mov [log_ss], eax\n    inc dword [log_count]\n    sysexit\n"
    "section .kdata write\n"
    "global log\n"
    "log:\nlog_vec: dd 0\nlog_err: dd 0\nlog_eip: dd 0\nlog_cs: dd 0\nlog_eflags: dd 0\n"
    "log_esp: dd 0\nlog_ss: dd 0\nlog_cr2: dd 0\nlog_kcs: dd 0\nlog_kesp: dd 0\nlog_count: dd 0\n"
    "section .utext\n"
    "global u_int80, u_int80_ret, u_gp_gate, u_pf_read, u_pf_write, u_pf_kernel, u_sysenter\n"
    "global u_sysexit_ret, u_cli, u_hlt, u_movcr, u_in, u_ud, u_de, u_ds0, u_np, u_ss0, u_loop\n"
    "global u_fpu\n"
    "u_int80: mov eax, 5\n    int 0x80\nu_int80_ret: mov [udata], eax\n    int 0x81\n"
    "u_gp_gate: int 0x82\n"
    "u_pf_read: mov eax, [0x300010]\n"
    "u_pf_write: mov dword [0x12008], 1\n"
    "u_pf_kernel: mov eax, [0x6000]\n"
    "u_sysenter: mov ecx, esp\n    sub ecx, 64\n    mov edx, u_sysexit_ret\n    sysenter\n"
    "u_sysexit_ret: mov [udata], esp\n    int 0x81\n"
    "u_cli: cli\n"
    "u_hlt: hlt\n"
    "u_movcr: mov cr3, eax\n"
    "u_in: in al, 0x60\n"
    "global u_sysexit\nu_sysexit: sysexit\n"
    "u_ud: ud2\n"
    "u_fpu: fld1\n"
    "u_de: xor edx, edx\n    xor ecx, ecx\n    mov eax, 7\n    div ecx\n"
    "u_ds0: mov ax, 0x10\n    mov ds, ax\n"
    "u_np: mov ax, 0x33\n    mov es, ax\n"
    "u_ss0: xor eax, eax\n    mov ss, ax\n"
    "u_loop: inc dword [udata+4]\n    jmp u_loop\n"
    "section .udata write\n"
    "global udata\nudata: dd 0, 0\n";

typedef struct {
    PhysMem *pm;
    Mmu *mmu;
    Cpu *cpu;
    ElfObject *obj;
} Machine;

static Machine M;

static uint32_t sym(const char *name)
{
    uint32_t a;
    ck_assert_msg(elfload_symbol(M.obj, name, &a), "no symbol %s", name);
    return a;
}

static uint32_t logv(unsigned k) { return physmem_read32(M.pm, sym("log") + 4 * k); }
enum { L_VEC, L_ERR, L_EIP, L_CS, L_EFLAGS, L_ESP, L_SS, L_CR2, L_KCS, L_KESP, L_COUNT };

static uint64_t seg_desc(uint32_t base, uint32_t limit, unsigned access, unsigned flags)
{
    return (limit & 0xFFFF) | ((uint64_t)(base & 0xFFFFFF) << 16) | ((uint64_t)access << 40) |
           ((uint64_t)((limit >> 16) & 0xF) << 48) | ((uint64_t)flags << 52) |
           ((uint64_t)(base >> 24) << 56);
}

/* 32-bit gate: type 0xE interrupt, 0xF trap; present. */
static void set_gate(unsigned vec, uint32_t off, unsigned type, unsigned dpl)
{
    uint32_t lo = ((uint32_t)KCS << 16) | (off & 0xFFFF);
    uint32_t hi = (off & 0xFFFF0000u) | 0x8000u | (dpl << 13) | (type << 8);
    physmem_write64(M.pm, IDT + 8 * vec, ((uint64_t)hi << 32) | lo);
}

/* A gate descriptor of type 0 (invalid: #GP when used, SDM §6.12.1.1), or
 * a valid interrupt gate with P=0 (#NP). */
static void clear_gate(unsigned vec) { physmem_write64(M.pm, IDT + 8 * vec, 0); }
static void unpresent_gate(unsigned vec)
{
    uint64_t d = physmem_read64(M.pm, IDT + 8 * vec);
    physmem_write64(M.pm, IDT + 8 * vec, d & ~(1ULL << 47));
}

static void map(uint32_t lin, uint64_t flags)
{
    physmem_write64(M.pm, PT + 8 * (lin >> 12), lin | flags | 1);
}

static bool place(void *data, const char *section, uint32_t size, uint32_t align,
                  unsigned flags, uint32_t *addr)
{
    (void)data; (void)size; (void)align; (void)flags;
    static const struct { const char *name; uint32_t addr; } at[] = {
        { ".ktext", KTEXT }, { ".kdata", KDATA }, { ".utext", UTEXT }, { ".udata", UDATA },
    };
    for (unsigned k = 0; k < G_N_ELEMENTS(at); k++)
        if (!strcmp(section, at[k].name)) {
            *addr = at[k].addr;
            return true;
        }
    return false;
}

static void load_code(void)
{
    char *dir = g_dir_make_tmp("vmsplit-prot-XXXXXX", NULL);
    char *src = g_build_filename(dir, "prot.asm", NULL);
    ck_assert(g_file_set_contents(src, source, -1, NULL));
    GError *err = NULL;
    char *obj = nasm_assemble(src, &err);
    ck_assert_msg(obj, "nasm: %s", err ? err->message : "?");
    ElfLoadOptions lo = { .place = place };
    M.obj = elfload_file(obj, &lo, &err);
    ck_assert_msg(M.obj, "elfload: %s", err ? err->message : "?");
    ck_assert(elfload_write_physmem(M.obj, M.pm, 0, &err));
    nasm_remove_output(obj);
    g_free(obj);
    g_unlink(src);
    g_rmdir(dir);
    g_free(src);
    g_free(dir);
}

static void setup(void)
{
    M.pm = physmem_new();
    M.mmu = mmu_new(M.pm, NULL);
    M.cpu = cpu_new(M.mmu, NULL);
    load_code();
    /* Paging: kernel pages supervisor, user pages U/S=1, URO read-only. */
    physmem_write64(M.pm, PDPT, PD | 1);
    for (unsigned k = 1; k < 4; k++)
        physmem_write64(M.pm, PDPT + 8 * k, 0);
    physmem_write64(M.pm, PD, PT | 7);
    for (uint32_t a = 0x1000; a < 0x10000; a += 0x1000)
        map(a, 2);                                       /* RW, supervisor */
    map(UTEXT, 4);                                       /* user, read-only code */
    map(UDATA, 6);
    map(URO, 4);
    map(USTACK_TOP - 0x1000, 6);
    const uint64_t gdt[] = {
        0, seg_desc(0, 0xFFFFF, 0x9B, 0xC), seg_desc(0, 0xFFFFF, 0x93, 0xC),
        seg_desc(0, 0xFFFFF, 0xFB, 0xC), seg_desc(0, 0xFFFFF, 0xF3, 0xC),
        seg_desc(TSS, 103, 0x89, 0),
        seg_desc(0, 0xFFFFF, 0x73, 0xC),                 /* 0x30: DPL 3 data, not present */
    };
    for (unsigned k = 0; k < G_N_ELEMENTS(gdt); k++)
        physmem_write64(M.pm, GDT + 8 * k, gdt[k]);
    physmem_write32(M.pm, TSS + 4, KSTACK_TOP);
    physmem_write32(M.pm, TSS + 8, KDS);
    physmem_write32(M.pm, TSS + 0x64, 104u << 16);
    static const unsigned vecs[] = { 0, 6, 8, 11, 12, 13, 14, 32 };
    for (unsigned k = 0; k < G_N_ELEMENTS(vecs); k++) {
        char name[8];
        snprintf(name, sizeof name, "h%u", vecs[k]);
        set_gate(vecs[k], sym(name), 0xE, 0);
    }
    set_gate(0x80, sym("h128"), 0xF, 3);
    set_gate(0x81, sym("h129"), 0xE, 3);
    set_gate(0x82, sym("h129"), 0xE, 0);                 /* DPL 0: not for ring 3 */

    prot_boot(M.cpu, &(ProtBoot){ .gdt = GDT, .gdt_limit = 8 * G_N_ELEMENTS(gdt) - 1,
                                  .idt = IDT, .pdpt = PDPT,
                                  .sysenter_esp = KSTACK_TOP - 0x100,
                                  .sysenter_eip = sym("sysenter_entry"),
                                  .eip = sym("kstart"), .esp = KSTACK_TOP });
}

static void teardown(void)
{
    elfload_free(M.obj);
    cpu_free(M.cpu);
    mmu_free(M.mmu);
    physmem_free(M.pm);
}

/* Run the user scenario starting at label; it must end in a ring-0 HLT. */
static void scenario(const char *label)
{
    cpu_set_reg(M.cpu, REG_EAX, sym(label));
    CpuStop s = cpu_run(M.cpu, 100000);
    ck_assert_msg(s == CPU_STOP_HLT, "%s: stopped with %s", label, cpu_stop_name(s));
    ck_assert_int_eq(cpu_cpl(M.cpu), 0);
}

/* A fault from ring 3: the handler's frame holds the faulting EIP, CS 0x1B,
 * and the user SS:ESP (SDM §6.12.1: stack switch to TSS.SS0:ESP0 first). */
static void expect_user_fault(const char *label, unsigned vec, uint32_t err)
{
    scenario(label);
    ck_assert_uint_eq(logv(L_VEC), vec);
    ck_assert_uint_eq(logv(L_ERR), err);
    ck_assert_uint_eq(logv(L_EIP), sym(label) + (strcmp(label, "u_de") ? 0 : 9));
    ck_assert_uint_eq(logv(L_CS), UCS);
    ck_assert_uint_eq(logv(L_SS), UDS);
    ck_assert_uint_eq(logv(L_ESP), USTACK_TOP);
    ck_assert_uint_eq(logv(L_KCS), KCS);
    /* Kernel ESP after the CPU's pushes: SS ESP EFLAGS CS EIP (+ error
     * code, which the stub popped) = 20 bytes below ESP0. */
    ck_assert_uint_eq(logv(L_KESP), KSTACK_TOP - 20);
}

START_TEST(test_int80_dpl3_gate_and_iret)
{
    scenario("u_int80");
    /* The trap gate ran in ring 0 on the TSS stack; IRET went back to ring 3
     * right after the INT with EAX + 100 (the handler's result). */
    ck_assert_uint_eq(logv(L_COUNT), 1);
    ck_assert_uint_eq(logv(L_KCS), KCS);
    ck_assert_uint_eq(logv(L_KESP), KSTACK_TOP - 20);
    ck_assert_uint_eq(logv(L_EIP), sym("u_int80_ret"));
    ck_assert_uint_eq(logv(L_CS), UCS);
    ck_assert_uint_eq(logv(L_ESP), USTACK_TOP);
    ck_assert_uint_eq(logv(L_SS), UDS);
    ck_assert_uint_eq(physmem_read32(M.pm, sym("udata")), 105);
}
END_TEST

START_TEST(test_gp_dpl0_gate)
{
    /* INT n through a gate with DPL < CPL: #GP(n*8 + 2), EXT = 0 (§6.13). */
    expect_user_fault("u_gp_gate", 13, 0x82 * 8 + 2);
}
END_TEST

START_TEST(test_pf_cr2_error_codes)
{
    /* Not present, user read: P=0 W=0 U=1 -> 4; CR2 = the address. */
    expect_user_fault("u_pf_read", 14, 0x4);
    ck_assert_uint_eq(logv(L_CR2), 0x300010);
    ck_assert_uint_eq(cpu_cr2(M.cpu), 0x300010);
}
END_TEST

START_TEST(test_pf_write_readonly)
{
    expect_user_fault("u_pf_write", 14, 0x7);   /* P W U */
    ck_assert_uint_eq(logv(L_CR2), URO + 8);
}
END_TEST

START_TEST(test_pf_supervisor_page)
{
    expect_user_fault("u_pf_kernel", 14, 0x5);  /* P U, read */
    ck_assert_uint_eq(logv(L_CR2), KDATA);
}
END_TEST

START_TEST(test_privileged_instructions)
{
    /* CLI at CPL 3 > IOPL 0, HLT, MOV CR3, IN without I/O bitmap: #GP(0). */
    static const char *const labels[] = { "u_cli", "u_hlt", "u_movcr", "u_in" };
    for (unsigned k = 0; k < G_N_ELEMENTS(labels); k++) {
        teardown();
        setup();
        expect_user_fault(labels[k], 13, 0);
    }
}
END_TEST

START_TEST(test_same_level_int_iret)
{
    /* INT from CPL 0 through a DPL-3 gate to a DPL-0 handler: no stack
     * switch, EFLAGS CS EIP pushed on the current stack (12 bytes), IRET
     * returns to ring 0 with ESP restored. */
    cpu_set_eip(M.cpu, sym("k_int80"));
    ck_assert_int_eq(cpu_run(M.cpu, 100), CPU_STOP_HLT);
    ck_assert_uint_eq(logv(L_KESP), 0x8800 - 12);
    ck_assert_uint_eq(logv(L_EIP), sym("k_int80_ret"));
    ck_assert_uint_eq(logv(L_CS), KCS);
    ck_assert_uint_eq(logv(L_ESP), 0x8800);     /* overwritten after the IRET */
    ck_assert_uint_eq(logv(L_ERR), 101);        /* EAX + 100 from the handler */
}
END_TEST

START_TEST(test_sysexit_from_ring3)
{
    expect_user_fault("u_sysexit", 13, 0);      /* SYSEXIT at CPL 3: #GP(0) */
}
END_TEST

START_TEST(test_ud_de)
{
    expect_user_fault("u_ud", 6, 0xFFFFFFFF);
    teardown();
    setup();
    expect_user_fault("u_fpu", 6, 0xFFFFFFFF);  /* no x87 in the core: #UD */
    teardown();
    setup();
    expect_user_fault("u_de", 0, 0xFFFFFFFF);   /* DIV by 0; EIP = the DIV (u_de + 9) */
}
END_TEST

START_TEST(test_segment_loads)
{
    /* DS <- a DPL-0 data segment at CPL 3: #GP(selector); ES <- a
     * not-present segment: #NP(selector); SS <- null: #GP(0). EIP is the
     * MOV Sreg (after the 4-byte mov ax, imm16 / 2-byte xor). */
    scenario("u_ds0");
    ck_assert_uint_eq(logv(L_VEC), 13);
    ck_assert_uint_eq(logv(L_ERR), 0x10);
    ck_assert_uint_eq(logv(L_EIP), sym("u_ds0") + 4);
    teardown();
    setup();
    scenario("u_np");
    ck_assert_uint_eq(logv(L_VEC), 11);
    ck_assert_uint_eq(logv(L_ERR), 0x30);
    teardown();
    setup();
    scenario("u_ss0");
    ck_assert_uint_eq(logv(L_VEC), 13);
    ck_assert_uint_eq(logv(L_ERR), 0);
    ck_assert_uint_eq(logv(L_EIP), sym("u_ss0") + 2);
}
END_TEST

START_TEST(test_sysenter_sysexit)
{
    scenario("u_sysenter");
    /* SYSENTER: CS = SYSENTER_CS, SS = SYSENTER_CS + 8, ESP = SYSENTER_ESP,
     * CPL 0; SYSEXIT: CS = SYSENTER_CS + 16 | 3, SS = + 24 | 3, ESP = ECX,
     * EIP = EDX (SDM Vol. 2B). */
    ck_assert_uint_eq(logv(L_COUNT), 1);
    ck_assert_uint_eq(logv(L_KCS), KCS);
    ck_assert_uint_eq(logv(L_SS), KDS);
    ck_assert_uint_eq(logv(L_KESP), KSTACK_TOP - 0x100);
    ck_assert_uint_eq(physmem_read32(M.pm, sym("udata")), USTACK_TOP - 64);
    /* Then int 0x81 from ring 3 with the selectors SYSEXIT made. */
    ck_assert_uint_eq(cpu_seg_selector(M.cpu, SEG_CS), KCS);
}
END_TEST

START_TEST(test_double_fault)
{
    /* #PF whose gate is not present: delivering it raises #NP (contributory
     * after a page fault) -> #DF, error code 0, through gate 8 (§6.15). */
    unpresent_gate(14);
    scenario("u_pf_read");
    ck_assert_uint_eq(logv(L_VEC), 8);
    ck_assert_uint_eq(logv(L_ERR), 0);
    ck_assert_uint_eq(logv(L_CR2), 0x300010);
}
END_TEST

START_TEST(test_triple_fault)
{
    /* #PF -> gate 14 not present (#NP) -> #DF -> gate 8 of type 0 (#GP):
     * shutdown. The core stops with the three vectors; the error codes name
     * the IDT entries (bit 1) and say the event was external (bit 0). */
    unpresent_gate(14);
    clear_gate(8);
    cpu_set_reg(M.cpu, REG_EAX, sym("u_pf_read"));
    CpuStop s = cpu_run(M.cpu, 100000);
    ck_assert_int_eq(s, CPU_STOP_TRIPLE_FAULT);
    const CpuTripleFault *t = cpu_triple_fault(M.cpu);
    ck_assert_uint_eq(t->vectors[0], 14);
    ck_assert_uint_eq(t->vectors[1], 11);
    ck_assert_uint_eq(t->error_codes[1], 14 * 8 + 2 + 1);   /* IDT bit, EXT */
    ck_assert_uint_eq(t->vectors[2], 13);
    ck_assert_uint_eq(t->error_codes[2], 8 * 8 + 2 + 1);
    ck_assert_uint_eq(t->eip, sym("u_pf_read"));
    char *d = cpu_describe_triple_fault(M.cpu);
    ck_assert_ptr_nonnull(strstr(d, "triple fault"));
    g_free(d);
}
END_TEST

START_TEST(test_irq_and_hlt_wakeup)
{
    /* An external interrupt is taken at an instruction boundary with IF=1
     * (the user runs with IF set): vector 32, no error code, return EIP =
     * the next instruction of the loop. */
    cpu_set_reg(M.cpu, REG_EAX, sym("u_loop"));
    ck_assert_int_eq(cpu_run(M.cpu, 50), CPU_STOP_MAX_INSNS);
    cpu_raise_irq(M.cpu, 32);
    ck_assert_int_eq(cpu_run(M.cpu, 1000), CPU_STOP_HLT);
    ck_assert_uint_eq(logv(L_VEC), 32);
    ck_assert_uint_eq(logv(L_CS), UCS);
    uint32_t eip = logv(L_EIP);
    ck_assert(eip == sym("u_loop") || eip == sym("u_loop") + 6);
    /* Halted in the handler (IF=0, nothing pending): running again stops
     * at once. */
    ck_assert_int_eq(cpu_run(M.cpu, 10), CPU_STOP_HLT);
}
END_TEST

static unsigned n_events[CPU_EV_TRIPLE_FAULT + 1];
static void count_event(Cpu *c, const CpuEvent *ev, void *user)
{
    (void)c;
    (void)user;
    n_events[ev->kind]++;
}

START_TEST(test_event_hook)
{
    memset(n_events, 0, sizeof n_events);
    cpu_set_event_hook(M.cpu, count_event, NULL);
    scenario("u_int80");
    /* kstart's IRET to ring 3, INT 0x80, its IRET, INT 0x81. */
    ck_assert_uint_eq(n_events[CPU_EV_SOFT_INT], 2);
    ck_assert_uint_eq(n_events[CPU_EV_IRET], 2);
    ck_assert_uint_eq(n_events[CPU_EV_EXCEPTION], 0);
}
END_TEST

static Suite *prot_suite(void)
{
    Suite *s = suite_create("cpu_prot");
    TCase *t = tcase_create("delivery");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_int80_dpl3_gate_and_iret);
    tcase_add_test(t, test_gp_dpl0_gate);
    tcase_add_test(t, test_pf_cr2_error_codes);
    tcase_add_test(t, test_pf_write_readonly);
    tcase_add_test(t, test_pf_supervisor_page);
    tcase_add_test(t, test_privileged_instructions);
    tcase_add_test(t, test_ud_de);
    tcase_add_test(t, test_same_level_int_iret);
    tcase_add_test(t, test_sysexit_from_ring3);
    tcase_add_test(t, test_segment_loads);
    tcase_add_test(t, test_sysenter_sysexit);
    tcase_add_test(t, test_double_fault);
    tcase_add_test(t, test_triple_fault);
    tcase_add_test(t, test_irq_and_hlt_wakeup);
    tcase_add_test(t, test_event_hook);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(prot_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
