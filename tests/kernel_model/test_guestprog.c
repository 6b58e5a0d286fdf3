/* A user program run on the kernel model's machine under each layout
 * (guestprog.h). Expectations come from outside the implementation:
 *   - instruction counts worked by hand from the programs (hello.asm: 10,
 *     pageloop.asm: 12,321,289 by its header's arithmetic);
 *   - the designs' rule, one CR3 write per entry from and exit to user mode
 *     under 4g4g and kpti, none in the shared layouts (REFERENCES.md: the
 *     4G/4G patch's entry.S, pti.rst); PCID writes drop nothing;
 *   - rw_vm's one kmap_atomic (one INVLPG) per user page copied (4g4g);
 *   - the #PF error code bits (SDM Vol. 3A §4.7: bit 0 P, bit 1 W, bit 2
 *     U/S) for writes to kernel and unmapped addresses, per layout;
 *   - each layout's TASK_SIZE (REFERENCES.md) for what fits;
 *   - Linux i386 syscall numbers and errno values for the ABI. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/nasm.h"
#include "preset/preset.h"
#include "kernel_model/guestprog.h"
#include "tlb/hierarchy.h"

#include "../test_prog.h"

#define GiB (1024ULL * 1024 * 1024)

static const char *layouts[] = { "3g1g", "2g2g", "1g3g", "4g4g", "kpti", "kpti-pcid", "4g4g-2003" };
#define NLAYOUTS 7

static Preset *preset;

/* ---- helpers ---- */

typedef struct {
    GuestProg *g;
    GString *out, *err;
} Run;

static GuestProg *try_load(const char *layout, const char *obj, GString *out, GString *errs,
                           GError **err)
{
    GuestProgOptions o = {
        .machine = { .preset = preset, .layout = layout_find(layout), .ram = 4 * GiB },
        .out = out, .err = errs,
    };
    ck_assert_ptr_nonnull(o.machine.layout);
    return guestprog_new(&o, obj, err);
}

/* Load obj under layout and run it to its end (at most max_steps). */
static Run run_obj(const char *layout, const char *obj, uint64_t max_steps)
{
    Run r = { .out = g_string_new(NULL), .err = g_string_new(NULL) };
    GError *err = NULL;
    r.g = try_load(layout, obj, r.out, r.err, &err);
    ck_assert_msg(r.g != NULL, "%s: %s", layout, err ? err->message : "");
    guestprog_run(r.g, max_steps);
    return r;
}

/* Assemble source text and run it. */
static Run run_asm(const char *layout, const char *src)
{
    char *dir = g_dir_make_tmp("vmsplit-guestprog-XXXXXX", NULL);
    char *path = g_build_filename(dir, "prog.asm", NULL);
    ck_assert(g_file_set_contents(path, src, -1, NULL));
    GError *err = NULL;
    char *obj = nasm_assemble(path, &err);
    ck_assert_msg(obj != NULL, "%s", err ? err->message : "");
    Run r = run_obj(layout, obj, 1000000);
    nasm_remove_output(obj);
    g_free(obj);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    return r;
}

static void run_free(Run *r)
{
    guestprog_free(r->g);
    g_string_free(r->out, TRUE);
    g_string_free(r->err, TRUE);
}

static char *guest_object(const char *name)
{
    return g_build_filename(g_getenv("VMSPLIT_BUILD_DIR"), "workloads", "guest", name, NULL);
}

static Mmu *mmu_of(Run *r) { return machine_mmu(guestprog_machine(r->g)); }

static uint64_t tlbstat(Run *r, const char *name)
{
    uint64_t v = 0;
    ck_assert(tlb_stats_get(tlb_hier_stats(mmu_tlb(mmu_of(r))), name, &v));
    return v;
}

static void assert_exit(Run *r, int status)
{
    if (guestprog_state(r->g) == GUESTPROG_FAULTED) {
        char *d = guestprog_describe_fault(r->g);
        ck_abort_msg("guest fault: %s", d);
    }
    ck_assert_int_eq(guestprog_state(r->g), GUESTPROG_EXITED);
    ck_assert_int_eq(guestprog_exit_status(r->g), status);
}

/* ---- tests ---- */

/* hello.o prints its line and exits 0 under every layout; 10 user
 * instructions (README of workloads/guest), 2 system calls. */
START_TEST(hello_each_layout)
{
    char *obj = guest_object("hello.o");
    Run r = run_obj(layouts[_i], obj, 1000000);
    assert_exit(&r, 0);
    ck_assert_str_eq(r.out->str, "Hello from a vmsplit guest.\n");
    ck_assert_str_eq(r.err->str, "");
    GuestProgStats s = guestprog_stats(r.g);
    ck_assert_uint_eq(s.insns_user, 10);
    ck_assert_uint_eq(s.syscalls, 2);
    ck_assert_uint_eq(s.bytes_written, 28);
    ck_assert(s.insns > s.insns_user);           /* the stubs ran in ring 0 */
    ck_assert(s.cycles > s.insns);
    run_free(&r);
    g_free(obj);
}
END_TEST

/* Five 1-byte writes and exit: each completed call enters and leaves the
 * kernel once; exit only enters. User instructions by hand: 1 + 5 x 7 + 3. */
static const char *five_writes =
    "BITS 32\n"
    "section .rodata\n"
    "x: db 'x'\n"
    "section .text\n"
    "global _start\n"
    "_start: mov esi, 5\n"
    ".l: mov eax, 4\n mov ebx, 1\n mov ecx, x\n mov edx, 1\n int 0x80\n dec esi\n jnz .l\n"
    " mov eax, 1\n xor ebx, ebx\n int 0x80\n";

START_TEST(cr3_writes_per_call)
{
    /* CR3 writes per entry+exit pair: 0 shared, 2 for 4g4g and kpti. */
    static const unsigned per_call[NLAYOUTS] = { 0, 0, 0, 2, 2, 2, 2 };
    /* Of those, flushing writes: all but kpti-pcid's (PCID-tagged). */
    static const bool flushing[NLAYOUTS] = { false, false, false, true, true, false, true };
    Run r = run_asm(layouts[_i], five_writes);
    assert_exit(&r, 0);
    ck_assert_str_eq(r.out->str, "xxxxx");
    GuestProgStats s = guestprog_stats(r.g);
    ck_assert_uint_eq(s.insns_user, 39);
    ck_assert_uint_eq(s.syscalls, 6);
    uint64_t want = 5 * per_call[_i] + per_call[_i] / 2;
    ck_assert_uint_eq(mmu_stats(mmu_of(&r))->cr3_writes, want);
    ck_assert_uint_eq(tlbstat(&r, "flushes_cr3"), flushing[_i] ? want : 0);
    if (!flushing[_i])
        ck_assert_uint_eq(tlbstat(&r, "dropped_cr3"), 0);
    run_free(&r);
}
END_TEST

/* A 100-byte write straddling a page boundary (50 bytes each side): under
 * 4g4g rw_vm kmaps each of the two user pages (one INVLPG each); the
 * direct layouts copy through the user mappings, no INVLPG. */
static const char *straddle =
    "BITS 32\n"
    "section .data align=4096\n"
    "pad: times 4096 - 50 db '.'\n"
    "msg: times 10 db '0123456789'\n"
    "section .text\n"
    "global _start\n"
    "_start: mov eax, 4\n mov ebx, 2\n mov ecx, msg\n mov edx, 100\n int 0x80\n"
    " mov ebx, eax\n cmp ebx, 100\n jne .f\n xor ebx, ebx\n"
    ".f: mov eax, 1\n int 0x80\n";

START_TEST(uaccess_per_page)
{
    bool indirect = layout_find(layouts[_i])->indirect_uaccess;
    Run r = run_asm(layouts[_i], straddle);
    assert_exit(&r, 0);
    ck_assert_str_eq(r.out->str, "");
    ck_assert_uint_eq(r.err->len, 100);
    for (unsigned k = 0; k < 100; k++)
        ck_assert_int_eq(r.err->str[k], '0' + k % 10);
    GuestProgStats s = guestprog_stats(r.g);
    ck_assert_uint_eq(s.kmaps, indirect ? 2 : 0);
    ck_assert_uint_eq(mmu_stats(mmu_of(&r))->invlpgs, indirect ? 2 : 0);
    run_free(&r);
}
END_TEST

/* The ABI's error returns (Linux i386: ENOSYS 38, EBADF 9, EFAULT 14): the
 * program exits with -eax. */
START_TEST(abi_errors)
{
    static const struct { const char *call; int status; } cases[] = {
        { "mov eax, 20\n", 38 },                                           /* getpid */
        { "mov eax, 4\n mov ebx, 3\n mov ecx, _start\n mov edx, 1\n", 9 },  /* fd 3 */
        { "mov eax, 4\n mov ebx, 1\n mov ecx, 0x10\n mov edx, 4\n", 14 },   /* unmapped */
        { "mov eax, 4\n mov ebx, 1\n mov ecx, _start\n mov edx, 0\n", 0 },  /* 0 bytes */
        { "mov eax, 100000\n", 38 },              /* past nr_syscalls: syscall_badsys */
    };
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
        for (int l = 0; l < NLAYOUTS; l++) {
            char *src = g_strdup_printf("BITS 32\nglobal _start\n_start: %s int 0x80\n"
                                        " mov ebx, eax\n neg ebx\n mov eax, 1\n int 0x80\n",
                                        cases[c].call);
            Run r = run_asm(layouts[l], src);
            assert_exit(&r, cases[c].status);
            run_free(&r);
            g_free(src);
        }
    /* A buffer reaching past TASK_SIZE fails access_ok: 4g4g's top user
     * page is a stack page, but [TASK_SIZE - 2, +4) is not all user space. */
    Run r = run_asm("4g4g", "BITS 32\nglobal _start\n_start: mov eax, 4\n mov ebx, 1\n"
                            " mov ecx, 0xFEFFFFFE\n mov edx, 4\n int 0x80\n"
                            " mov ebx, eax\n neg ebx\n mov eax, 1\n int 0x80\n");
    assert_exit(&r, 14);
    run_free(&r);
}
END_TEST

/* Writes from ring 3 to addresses the user may not write. Error codes by
 * the SDM: W|U = 0x6 for a not-present page, P|W|U = 0x7 for a present
 * supervisor or read-only page. Kernel space is mapped (supervisor) in the
 * shared layouts' page table; 4g4g puts user space at 0xC0000000 (here
 * unmapped) and keeps only the window (0xFF000000) mapped; kpti's user
 * page table has no direct map, only the entry area (0xFFE00000). */
START_TEST(fault_error_codes)
{
    static const struct { const char *layout; uint32_t addr, ec; } cases[] = {
        { "3g1g", 0xC0000000u, 0x7 }, { "2g2g", 0x80000000u, 0x7 },
        { "1g3g", 0x40000000u, 0x7 }, { "4g4g", 0xC0000000u, 0x6 },
        { "4g4g", 0xFF000000u, 0x7 }, { "kpti", 0xC0000000u, 0x6 },
        { "kpti", 0xFFE00000u, 0x7 }, { "kpti-pcid", 0xC0000000u, 0x6 },
        { "3g1g", 0x00000010u, 0x6 }, { "4g4g", 0x00000010u, 0x6 },
    };
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        char *src = g_strdup_printf("BITS 32\nglobal _start\n_start: mov dword [0x%08x], 1\n",
                                    cases[c].addr);
        Run r = run_asm(cases[c].layout, src);
        ck_assert_int_eq(guestprog_state(r.g), GUESTPROG_FAULTED);
        const GuestProgFault *f = guestprog_fault(r.g);
        ck_assert_msg(f->vector == 14 && f->error_code == cases[c].ec && f->cr2 == cases[c].addr,
                      "%s 0x%08x: vector %u error 0x%x CR2 0x%08x", cases[c].layout,
                      cases[c].addr, f->vector, f->error_code, f->cr2);
        ck_assert_uint_eq(f->eip, guestprog_entry(r.g));
        ck_assert_int_eq(f->cpl, 3);
        char *d = guestprog_describe_fault(r.g);
        char *want = g_strdup_printf("#PF (vector 14, error code 0x%x) at EIP 0x%08x in ring 3, "
                                     "CR2 0x%08x", cases[c].ec, f->eip, cases[c].addr);
        ck_assert_msg(g_str_has_prefix(d, want), "%s", d);
        ck_assert_uint_eq(machine_counts(guestprog_machine(r.g))->guest_faults, 1);
        g_free(want);
        g_free(d);
        run_free(&r);
        g_free(src);
    }
    /* The program's text is read-only in every layout: P|W|U. */
    for (int l = 0; l < NLAYOUTS; l++) {
        Run r = run_asm(layouts[l], "BITS 32\nglobal _start\n_start: mov [_start], eax\n");
        ck_assert_int_eq(guestprog_state(r.g), GUESTPROG_FAULTED);
        ck_assert_uint_eq(guestprog_fault(r.g)->error_code, 0x7);
        ck_assert_uint_eq(guestprog_fault(r.g)->cr2, guestprog_entry(r.g));
        run_free(&r);
    }
    /* #UD is benign: its missing gate becomes #GP then #DF; the report
     * still names #UD (SDM §6.13 IDT error code). */
    Run r = run_asm("4g4g", "BITS 32\nglobal _start\n_start: nop\n ud2\n");
    ck_assert_int_eq(guestprog_state(r.g), GUESTPROG_FAULTED);
    ck_assert_uint_eq(guestprog_fault(r.g)->vector, 6);
    ck_assert_uint_eq(guestprog_fault(r.g)->eip, guestprog_entry(r.g) + 1);
    run_free(&r);
}
END_TEST

/* The model's sysenter convention (stubs/user.asm), with the program's own
 * sysenter_return: the write comes back through SYSEXIT, and 4g4g makes
 * its two CR3 writes for it as for int 0x80. */
static const char *via_sysenter =
    "BITS 32\n"
    "section .rodata\n"
    "msg: db 'via sysenter', 10\n"
    "section .text\n"
    "global _start, sysenter_return\n"
    "_start: mov eax, 4\n mov ebx, 1\n mov ecx, msg\n mov edx, 13\n"
    " push ecx\n push edx\n push ebp\n mov ebp, esp\n sysenter\n"
    "sysenter_return: pop ebp\n pop edx\n pop ecx\n"
    " mov ebx, eax\n cmp ebx, 13\n jne .f\n xor ebx, ebx\n"
    ".f: mov eax, 1\n int 0x80\n";

START_TEST(sysenter_convention)
{
    static const unsigned want_cr3[NLAYOUTS] = { 0, 0, 0, 3, 3, 3, 0 };
    if (layout_find(layouts[_i])->no_sysenter)
        return;                     /* 4g4g-2003: test_machine.c no_sysenter_2003 */
    Run r = run_asm(layouts[_i], via_sysenter);
    assert_exit(&r, 0);
    ck_assert_str_eq(r.out->str, "via sysenter\n");
    ck_assert_uint_eq(mmu_stats(mmu_of(&r))->cr3_writes, want_cr3[_i]);
    run_free(&r);
    /* Without the label SYSENTER raises #GP(0) at its own EIP: after
     * push ecx, push edx, push ebp (1 byte each) and mov ebp, esp (2). */
    r = run_asm(layouts[_i], "BITS 32\nglobal _start\n_start: push ecx\n push edx\n push ebp\n"
                             " mov ebp, esp\n sysenter\n");
    ck_assert_int_eq(guestprog_state(r.g), GUESTPROG_FAULTED);
    ck_assert_uint_eq(guestprog_fault(r.g)->vector, 13);
    ck_assert_uint_eq(guestprog_fault(r.g)->error_code, 0);
    ck_assert_uint_eq(guestprog_fault(r.g)->eip, guestprog_entry(r.g) + 5);
    run_free(&r);
}
END_TEST

/* What fits is the layout's user space: TASK_SIZE 3g1g/kpti 0xC0000000,
 * 2g2g 0x80000000, 1g3g 0x40000000, 4g4g 0xFF000000 (REFERENCES.md). A
 * program at 0xC0000000 runs only under 4g4g; one at 0x50000000 fits all
 * but 1g3g; nothing may sit in page 0. */
START_TEST(user_range)
{
    static const struct { uint32_t vaddr; bool fits[NLAYOUTS]; } cases[] = {
        { 0xC0000000u, { false, false, false, true, false, false, true } },
        { 0x50000000u, { true, true, false, true, true, true, true } },
        { 0x00000000u, { false, false, false, false, false, false, false } },
    };
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        char *path = test_write_exec(cases[c].vaddr);
        for (int l = 0; l < NLAYOUTS; l++) {
            GError *err = NULL;
            GuestProg *g = try_load(layouts[l], path, NULL, NULL, &err);
            if (cases[c].fits[l]) {
                ck_assert_msg(g != NULL, "%s 0x%08x: %s", layouts[l], cases[c].vaddr,
                              err ? err->message : "");
                ck_assert_int_eq(guestprog_run(g, 1000), GUESTPROG_EXITED);
                ck_assert_int_eq(guestprog_exit_status(g), 7);
                guestprog_free(g);
            } else {
                ck_assert_ptr_null(g);
                ck_assert_msg(g_error_matches(err, GUESTPROG_ERROR, GUESTPROG_ERROR_PROGRAM),
                              "%s", err ? err->message : "no error");
                ck_assert_msg(strstr(err->message, path) && strstr(err->message, layouts[l]),
                              "%s", err->message);
                g_error_free(err);
            }
        }
        g_unlink(path);
        g_free(path);
    }
}
END_TEST

/* The step budget stops an endless loop; the run can be resumed. */
START_TEST(budget)
{
    Run r = run_asm("4g4g", "BITS 32\nglobal _start\n_start: jmp _start\n");
    ck_assert_int_eq(guestprog_state(r.g), GUESTPROG_BUDGET);
    ck_assert_uint_eq(guestprog_stats(r.g).insns_user, 1000000);
    ck_assert_int_eq(guestprog_run(r.g, 500), GUESTPROG_BUDGET);
    ck_assert_uint_eq(guestprog_stats(r.g).insns_user, 1000500);
    run_free(&r);
}
END_TEST

/* An object without _start is refused before anything runs. */
START_TEST(no_entry)
{
    char *dir = g_dir_make_tmp("vmsplit-guestprog-XXXXXX", NULL);
    char *path = g_build_filename(dir, "noentry.asm", NULL);
    ck_assert(g_file_set_contents(path, "BITS 32\nglobal start\nstart: nop\n", -1, NULL));
    GError *err = NULL;
    char *obj = nasm_assemble(path, &err);
    ck_assert_ptr_nonnull(obj);
    GuestProg *g = try_load("3g1g", obj, NULL, NULL, &err);
    ck_assert_ptr_null(g);
    ck_assert(g_error_matches(err, GUESTPROG_ERROR, GUESTPROG_ERROR_PROGRAM));
    ck_assert_ptr_nonnull(strstr(err->message, "_start"));
    g_error_free(err);
    nasm_remove_output(obj);
    g_free(obj);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

/* pageloop.o: exits 0 with the 12,321,289 user instructions its header
 * counts by hand, under 3g1g and 4g4g alike (user code is the same code). */
START_TEST(pageloop)
{
    static const char *which[] = { "3g1g", "4g4g" };
    char *obj = guest_object("pageloop.o");
    Run r = run_obj(which[_i], obj, 100000000);
    assert_exit(&r, 0);
    ck_assert_uint_eq(guestprog_stats(r.g).insns_user, 12321289);
    ck_assert_uint_eq(guestprog_stats(r.g).syscalls, 1);
    run_free(&r);
    g_free(obj);
}
END_TEST

int main(void)
{
    GError *err = NULL;
    preset = preset_load("p4-northwood", &err);
    if (!preset) {
        fprintf(stderr, "%s\n", err->message);
        return EXIT_FAILURE;
    }
    Suite *s = suite_create("guestprog");
    TCase *tc = tcase_create("layouts");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, hello_each_layout, 0, NLAYOUTS);
    tcase_add_loop_test(tc, cr3_writes_per_call, 0, NLAYOUTS);
    tcase_add_loop_test(tc, uaccess_per_page, 0, NLAYOUTS);
    tcase_add_test(tc, abi_errors);
    tcase_add_test(tc, fault_error_codes);
    tcase_add_loop_test(tc, sysenter_convention, 0, NLAYOUTS);
    tcase_add_test(tc, user_range);
    tcase_add_test(tc, budget);
    tcase_add_test(tc, no_entry);
    tcase_add_loop_test(tc, pageloop, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    preset_free(preset);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
