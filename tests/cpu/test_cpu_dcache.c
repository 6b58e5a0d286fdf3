/* The decoded-instruction cache is a host-speed shortcut only: every
 * modelled figure (instructions, cycles, MMU counters, every TLB counter of
 * the hierarchy and of each array, every cache counter) must be the same
 * with it on and off, and code that changes under it (written by the guest,
 * written from C, remapped) must run as the new bytes say.
 *
 * Arguments: the guest objects to run (workloads/guest/tests/NAME.o etc.);
 * each must exit 0 under both settings. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/nasm.h"
#include "cpu/ports.h"
#include "preset/preset.h"
#include "cpu/runenv.h"
#include "mmu/mmu.h"
#include "tlb/tlb_state.h"

static char **objects;
static int n_objects;
static Preset *preset;           /* p4-northwood: TLB and caches in play */

/* Every modelled figure as "name=value" lines. */
static char *figures(RunEnv *e)
{
    GString *s = g_string_new(NULL);
    Cpu *c = runenv_cpu(e);
    Mmu *m = runenv_mmu(e);
    g_string_append_printf(s, "insns=%" G_GUINT64_FORMAT "\nuser=%" G_GUINT64_FORMAT
                              "\ncycles=%" G_GUINT64_FORMAT "\n",
                           cpu_insns(c), cpu_insns_user(c), cpu_cycles(c));
    const MmuStats *ms = mmu_stats(m);
    g_string_append_printf(s, "mmu=%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                              ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                              ",%" G_GUINT64_FORMAT "\n",
                           ms->cycles, ms->walk_cycles, ms->walks, ms->data_cycles,
                           ms->cr3_writes, ms->cr3_cycles, ms->invlpgs);
    TlbHierarchy *h = mmu_tlb(m);
    for (size_t i = 0; i < tlb_stats_count(); i++) {
        TlbStatItem it = tlb_stats_item(tlb_hier_stats(h), i);
        g_string_append_printf(s, "tlb.%s=%" G_GUINT64_FORMAT "\n", it.name, it.value);
    }
    for (unsigned a = 0; a < tlb_hier_array_count(h); a++) {
        const Tlb *t = tlb_hier_array(h, a);
        for (size_t i = 0; i < tlb_stats_count(); i++) {
            TlbStatItem it = tlb_stats_item(tlb_stats(t), i);
            g_string_append_printf(s, "%s.%s=%" G_GUINT64_FORMAT "\n", tlb_name(t), it.name,
                                   it.value);
        }
    }
    CacheHier *ch = mmu_cache(m);
    if (ch) {
        const CacheStats *cs = cache_stats(ch);
        g_string_append_printf(s, "cache=%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                  ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                  "\n", cs->accesses, cs->writes, cs->mem, cs->uncached,
                               cs->cycles);
        for (unsigned l = 0; l < CACHE_MAX_LEVELS; l++)
            g_string_append_printf(s, "L%u=%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                      ",%" G_GUINT64_FORMAT "\n", l + 1, cs->level[l].hits,
                                   cs->level[l].misses, cs->level[l].evictions);
    }
    for (int r = 0; r < CPU_NREGS; r++)
        g_string_append_printf(s, "r%d=%08x\n", r, cpu_reg(c, r));
    g_string_append_printf(s, "eip=%08x eflags=%08x\n", cpu_eip(c), cpu_eflags(c));
    return g_string_free(s, FALSE);
}

static char *run_one(const char *path, bool dcache, bool memos, GString *out, int *status)
{
    /* "Off" turns every host shortcut off: the decoded cache and blocks,
     * and the MMU's memos of TLB hits. */
    RunEnvOptions opt = { .preset = preset, .no_decode_cache = !dcache,
                          .no_mmu_shortcuts = !memos, .out = out, .err = out };
    GError *err = NULL;
    RunEnv *e = runenv_new(&opt, &err);
    ck_assert_msg(e, "%s", err ? err->message : "?");
    ck_assert_msg(runenv_load(e, path, &err), "%s", err ? err->message : "?");
    RunEnvState st = runenv_run(e, 50000000);
    ck_assert_msg(st == RUNENV_EXITED, "%s (decode cache %s): state %d", path,
                  dcache ? "on" : "off", st);
    *status = runenv_exit_status(e);
    char *f = figures(e);
    runenv_free(e);
    return f;
}

/* With the decoded cache on (and the memos on, or off: then block.c's
 * fetch references never find a memo), against every shortcut off. */
static void compare_runs_memos(const char *path, bool memos)
{
    GString *out_on = g_string_new(NULL), *out_off = g_string_new(NULL);
    int st_on, st_off;
    char *on = run_one(path, true, memos, out_on, &st_on);
    char *off = run_one(path, false, false, out_off, &st_off);
    ck_assert_msg(st_on == 0 && st_off == 0, "%s: exit %d (cache on) / %d (off): %s", path,
                  st_on, st_off, out_on->str);
    ck_assert_str_eq(out_on->str, out_off->str);
    if (strcmp(on, off) != 0) {
        /* Name the first differing line. */
        char **a = g_strsplit(on, "\n", -1), **b = g_strsplit(off, "\n", -1);
        for (int i = 0; a[i] && b[i]; i++)
            ck_assert_msg(!strcmp(a[i], b[i]), "%s: with the cache '%s', without '%s'", path,
                          a[i], b[i]);
        g_strfreev(a);
        g_strfreev(b);
    }
    g_free(on);
    g_free(off);
    g_string_free(out_on, TRUE);
    g_string_free(out_off, TRUE);
}

static void compare_runs(const char *path)
{
    compare_runs_memos(path, true);
}

START_TEST(test_same_figures)
{
    compare_runs(objects[_i]);
}
END_TEST

/* Self-modifying code: the program patches the immediate of an instruction
 * it has already executed (so it sits in the decoded cache), and an
 * instruction in the same 16-byte fetch block right ahead of the store, then
 * checks that the new values were used. Exit 0 only if they were. */
static const char *smc_source =
    "BITS 32\n"
    "section .smc exec write\n"
    "global _start\n"
    "_start:\n"
    "    mov ecx, 3\n"
    "again:\n"
    "patch: mov eax, 0x11111111\n"
    "    cmp ecx, 3\n"
    "    je first\n"
    "    cmp eax, 0x22222222\n"
    "    jne fail\n"
    "first:\n"
    "    mov dword [patch+1], 0x22222222\n"
    "    mov byte [ahead+1], 0x77\n"
    "ahead: mov bl, 0x55\n"
    "    cmp bl, 0x77\n"
    "    jne fail\n"
    "    mov byte [ahead+1], 0x55\n"
    "    loop again\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n"
    "fail:\n"
    "    mov eax, 1\n    mov ebx, 1\n    int 0x80\n";

/* Assemble source and compare_runs it (and with the memos off, if
 * no_memos). */
static void compare_source_memos(const char *name, const char *source, bool no_memos)
{
    char *dir = g_dir_make_tmp("vmsplit-dcache-XXXXXX", NULL);
    char *src = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(src, source, -1, NULL));
    GError *err = NULL;
    char *obj = nasm_assemble(src, &err);
    ck_assert_msg(obj, "%s", err ? err->message : "?");
    compare_runs(obj);
    if (no_memos)
        compare_runs_memos(obj, false);
    nasm_remove_output(obj);
    g_free(obj);
    g_unlink(src);
    g_rmdir(dir);
    g_free(src);
    g_free(dir);
}

static void compare_source(const char *name, const char *source)
{
    compare_source_memos(name, source, false);
}

START_TEST(test_self_modifying)
{
    compare_source("smc.asm", smc_source);
}
END_TEST

/* Taken jumps to the very next instruction (a short JMP, a CALL that pops
 * its return address, a taken Jcc): EIP ends where it would have fallen
 * through, yet each starts a new fetch block with its own fetch
 * reference (cpu_jump), so a decoded block must not run on past them. */
static const char *jump_next_source =
    "BITS 32\n"
    "section .text\n"
    "global _start\n"
    "_start:\n"
    "    mov ecx, 50\n"
    "again:\n"
    "    jmp short n1\n"
    "n1: call n2\n"
    "n2: pop eax\n"
    "    test ecx, ecx\n"
    "    jnz n3\n"
    "n3: add ebx, eax\n"
    "    dec ecx\n"
    "    jnz again\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n";

START_TEST(test_jump_to_next)
{
    compare_source("jumpnext.asm", jump_next_source);
}
END_TEST

/* Page loops (a load, an add and a store on each of 40 pages, as
 * workloads/guest/pageloop.asm) placed at each of the 16 offsets in a
 * fetch block: among them loops whose first instruction straddles two
 * fetch blocks (two fetch references at every loop-back, counted at once
 * by block.c) and loops with an instruction in the middle that does.
 * PAGELOOP's second argument adds the references 2 KiB on (below); without
 * them it is pageloop.asm's loop itself (15 bytes): at offsets 0, 1 and
 * 15 no instruction but the first makes a fetch reference, so that it goes
 * round in block.c's run_loop (at 15 with two references a pass). On
 * each page a load that misses every memo, a store that hits its memo and
 * its line in the MRU way of the L1 set, then a load and a store 2 KiB on
 * (the same L1 set on the P4) and a load back at the start: memo hits
 * whose line is in another way (exec_fast.c's handlers, all three paths). */
static const char *page_loops_source =
    "BITS 32\n"
    "section .bss\n"
    "alignb 4096\n"
    "buf: resb 40 * 4096\n"
    "section .text\n"
    "%macro PAGELOOP 2\n"
    "    mov ecx, 40\n"
    "    mov esi, buf\n"
    "    align 16, nop\n"
    "    times %1 nop\n"
    "%%page:\n"
    "    mov eax, [esi]\n"
    "    add eax, ecx\n"
    "    mov [esi], eax\n"
    "%if %2\n"
    "    mov edx, [esi + 2048]\n"
    "    mov [esi + 2048], edx\n"
    "    mov edx, [esi]\n"
    "%endif\n"
    "    add esi, 4096\n"
    "    dec ecx\n"
    "    jnz %%page\n"
    "%endmacro\n"
    "global _start\n"
    "_start:\n"
    "    mov ebp, 3\n"
    "pass:\n"
    "%assign p 0\n"
    "%rep 16\n"
    "    PAGELOOP p, 1\n"
    "    PAGELOOP p, 0\n"
    "%assign p p + 1\n"
    "%endrep\n"
    "    dec ebp\n"
    "    jnz pass\n"
    "    cmp dword [buf + 4096], 2 * 16 * 3 * 39\n"
    "    jne fail\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n"
    "fail:\n"
    "    mov eax, 1\n    mov ebx, 1\n    int 0x80\n";

START_TEST(test_page_loops)
{
    compare_source_memos("pageloops.asm", page_loops_source, true);
}
END_TEST

/* Loops that go round threaded in block.c's run_loop (each handler's
 * InsnTFn tail-calls the next one's), closed by each kind of jump back
 * (JNZ, JE, JB, LOOP; a JMP with a fault as its way out is in
 * test_run_inside_hook) and made of exec_fast.c's handlers and generic
 * ones: PUSH/POP, CMOV, ALU with a memory source, loads and stores with
 * and without an index, ADC/SBB, INC/DEC after a shift (their flags' slow
 * path), TEST with an immediate, register moves. Each loop fits its
 * fetch blocks as run_loop needs (16 bytes from an aligned start, or a
 * first instruction that straddles two). Then a loop whose store lands in
 * its own code in a later pass (the threaded store must stop the pass:
 * the next one runs the new bytes), and one whose store goes to its code
 * page but not its code (STORE_LOOP). Run with every shortcut on, with the memos off,
 * and with everything off. */
static const char *loop_forms_source =
    "BITS 32\n"
    "section .data\n"
    "arr: times 64 dd 7\n"
    "scratch: dd 0\n"
    "section .text\n"
    "global _start\n"
    "_start:\n"
    "    mov esi, arr\n"
    "    xor eax, eax\n"
    "    mov ebx, 1000\n"
    "    mov ecx, 50\n"
    "    align 16, nop\n"
    "l1: push ecx\n"
    "    add eax, [esi]\n"
    "    pop edx\n"
    "    xor edx, ecx\n"
    "    or eax, edx\n"
    "    loop l1\n"
    "    mov ecx, 50\n"
    "    align 16, nop\n"
    "l2: mov edx, [esi + ecx * 4 - 4]\n"
    "    mov [esi + ecx * 4 - 4], eax\n"
    "    cmp edx, ebx\n"
    "    cmovb ebx, edx\n"
    "    dec ecx\n"
    "    jnz l2\n"
    "    mov ecx, 50\n"
    "    align 16, nop\n"
    "l3: add eax, [esi + ecx * 4 - 4]\n"
    "    mov [esi + 4], edx\n"
    "    inc ebx\n"
    "    dec ecx\n"
    "    jnz l3\n"
    "    xor edi, edi\n"
    "    align 16, nop\n"
    "l4: add edi, 3\n"
    "    sub eax, edi\n"
    "    cmp edi, 300\n"
    "    jb l4\n"
    "    xor edx, edx\n"
    "    align 16, nop\n"
    "l5: inc edx\n"
    "    add eax, edx\n"
    "    test edx, 16\n"
    "    je l5\n"
    "    mov ecx, 40\n"
    "    mov ebx, 0x01234567\n"
    "    align 16, nop\n"
    "l6: shl ebx, 1\n"
    "    inc eax\n"
    "    adc edx, 0\n"
    "    sbb esi, ebx\n"
    "    dec edi\n"
    "    neg eax\n"
    "    dec ecx\n"
    "    jnz l6\n"
    "    add eax, edx\n"
    "    add eax, esi\n"
    "    add eax, edi\n"
    "    mov ecx, 30\n"
    "    align 16, nop\n"
    "l7: mov edi, eax\n"
    "    mov eax, 5\n"
    "    add eax, edi\n"
    "    dec ecx\n"
    "    jnz l7\n"
    "    mov ebp, eax\n"            /* the loops' sum, in the figures */
    "    call smc_loop\n"
    "    cmp edx, 10 + 2 * 0x100\n"
    "    jne fail\n"
    "    call near_code_loop\n"
    "    cmp edx, 12 + 0x100\n"
    "    jne fail\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n"
    "fail:\n"
    "    mov eax, 1\n    mov ebx, 1\n    int 0x80\n"
    "section .smc exec write\n"
    /* Passes 1-9 store to scratch (another page); pass 10 (ECX = 3)
     * stores to target, and so do the last two. With target the
     * immediate of the ADD at the top of the loop, those two must add
     * 0x100 (EDX ends at 10 + 2 * 0x100, then cell's 0 is added). The ADD straddles two fetch blocks, the rest is in the
     * second. The store before the loop (the same bytes) makes the
     * page's memo and puts the line in its L1 set's MRU way, so that the
     * loop's store into the code takes the threaded handler's own hit. */
    "%macro STORE_LOOP 2\n"
    "    push ebp\n"
    "    mov ecx, 12\n"
    "    xor edx, edx\n"
    "    mov ebp, %2\n"
    "    mov esi, scratch\n"
    "    mov edi, 0x100\n"
    "    mov dword [%1 + 2], 1\n"
    "    align 16, nop\n"
    "    times 15 nop\n"
    "%1: add edx, strict dword 1\n"
    "    cmp ecx, 3\n"
    "    cmove esi, ebp\n"
    "    mov [esi], edi\n"
    "    dec ecx\n"
    "    jnz %1\n"
    "    mov dword [%1 + 2], 1\n"
    "    add edx, [cell]\n"
    "    pop ebp\n"
    "    ret\n"
    "%endmacro\n"
    "smc_loop:\n"
    "    STORE_LOOP patch, patch + 2\n"
    /* A store into the page of the running loop but not into its code:
     * the pass stops (block_exit), the next goes on all the same (EDX
     * ends at 12 + cell's 0x100). */
    "near_code_loop:\n"
    "    STORE_LOOP patch2, cell\n"
    "align 4, db 0\n"
    "cell: dd 0\n";

START_TEST(test_loop_forms)
{
    compare_source_memos("loopforms.asm", loop_forms_source, true);
}
END_TEST

/* Dword loads, stores and ALU sources with and without an index register
 * (exec_fast.c's handlers compute the EA without one as base + disp), each
 * form twice so that the second finds its memo and line. Exit 0 only if
 * every value is the right one. */
static const char *indexed_source =
    "BITS 32\n"
    "section .data\n"
    "arr: dd 1, 2, 3, 4\n"
    "section .text\n"
    "global _start\n"
    "_start:\n"
    "    mov esi, arr\n"
    "    mov ecx, 2\n"
    "    xor eax, eax\n"
    "    add eax, [esi + ecx * 4]\n"
    "    add eax, [esi + ecx * 4]\n"
    "    add eax, [esi + 4]\n"
    "    add eax, [esi + 4]\n"
    "    mov edx, [esi + ecx * 4 + 4]\n"
    "    mov edx, [esi + ecx * 4 + 4]\n"
    "    add eax, edx\n"
    "    mov edi, [esi + 8]\n"
    "    mov edi, [esi + 8]\n"
    "    add eax, edi\n"
    "    mov [esi + ecx * 4 - 8], eax\n"
    "    mov [esi + ecx * 4 - 8], eax\n"
    "    mov [esi + 4], ecx\n"
    "    mov [esi + 4], ecx\n"
    "    cmp eax, 3 + 3 + 2 + 2 + 4 + 3\n"
    "    jne fail\n"
    "    cmp dword [arr], 17\n"
    "    jne fail\n"
    "    cmp dword [arr + 4], 2\n"
    "    jne fail\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n"
    "fail:\n"
    "    mov eax, 1\n    mov ebx, 1\n    int 0x80\n";

START_TEST(test_indexed_operands)
{
    compare_source("indexed.asm", indexed_source);
}
END_TEST

/* Dwords that cross a page, right after a reference to the first page
 * (so that its memo is there): exec_fast.c's handlers look the memo up
 * with the key of the dword's last byte, so that a crossing dword finds
 * none and goes to the generic path. Loads, stores, ALU sources, PUSH and
 * POP, each at every offset that crosses, in straight-line code and in a
 * loop. Exit 0 only if every value is the right one. */
static const char *crossing_source =
    "BITS 32\n"
    "section .bss\n"
    "alignb 4096\n"
    "two: resb 2 * 4096\n"
    "section .text\n"
    "global _start\n"
    "_start:\n"
    "    mov ebp, esp\n"
    "    mov edi, two + 4096 - 3\n"
    "    mov ecx, 3\n"
    "next:\n"
    "    mov dword [two + 4096 - 8], 0x11111111\n"   /* the first page's memo */
    "    mov dword [edi], 0x44332211\n"
    "    mov eax, [two + 4096 - 8]\n"
    "    mov eax, [edi]\n"
    "    cmp eax, 0x44332211\n"
    "    jne fail\n"
    "    mov ebx, [two + 4096 - 8]\n"
    "    add ebx, [edi]\n"
    "    cmp ebx, 0x55443322\n"
    "    jne fail\n"
    "    mov edx, [two + 4096 - 8]\n"
    "    mov [edi], edx\n"
    "    cmp dword [edi], 0x11111111\n"
    "    jne fail\n"
    "    lea esp, [edi + 4]\n"
    "    mov eax, [two + 4096 - 8]\n"
    "    push dword 0x01020304\n"
    "    mov eax, [two + 4096 - 8]\n"
    "    pop edx\n"
    "    mov esp, ebp\n"
    "    cmp edx, 0x01020304\n"
    "    jne fail\n"
    "    inc edi\n"
    "    dec ecx\n"
    "    jnz next\n"
    /* The same in loops that run_loop runs threaded: loads (bytes 1 to
     * 16 around the boundary, each dword from 7 before it to 2 after
     * it read twice), then stores (EBX gains twice each pass's ECX,
     * 2 * (10 + 9 + ... + 1) in all; a store that crosses ends the pass,
     * lin_write). */
    "    mov dword [two + 4096 - 8], 0x04030201\n"
    "    mov dword [two + 4096 - 4], 0x08070605\n"
    "    mov dword [two + 4096], 0x0C0B0A09\n"
    "    mov dword [two + 4096 + 4], 0x100F0E0D\n"
    "    mov esi, two + 4096 - 7\n"
    "    mov ecx, 10\n"
    "    xor ebx, ebx\n"
    "    align 16, nop\n"
    "cross_load:\n"
    "    mov eax, [esi]\n"
    "    add ebx, eax\n"
    "    add ebx, [esi]\n"
    "    inc esi\n"
    "    dec ecx\n"
    "    jnz cross_load\n"
    "%assign sum 0\n"
    "%assign o 1\n"
    "%rep 10\n"
    "%assign sum sum + (o + 1) + ((o + 2) << 8) + ((o + 3) << 16) + ((o + 4) << 24)\n"
    "%assign o o + 1\n"
    "%endrep\n"
    "    cmp ebx, (2 * sum) & 0xFFFFFFFF\n"
    "    jne fail\n"
    "    mov esi, two + 4096 - 7\n"
    "    mov ecx, 10\n"
    "    xor ebx, ebx\n"
    "    align 16, nop\n"
    "cross:\n"
    "    mov [esi], ecx\n"
    "    add ebx, [esi]\n"
    "    mov eax, [esi]\n"
    "    add ebx, eax\n"
    "    inc esi\n"
    "    dec ecx\n"
    "    jnz cross\n"
    "    cmp ebx, 110\n"
    "    jne fail\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n"
    "fail:\n"
    "    mov eax, 1\n    mov ebx, 1\n    int 0x80\n";

START_TEST(test_crossing_dwords)
{
    compare_source("crossing.asm", crossing_source);
}
END_TEST

/* Remapping and writes from outside the guest: a code page's PTE is pointed
 * at another frame (with INVLPG), and a frame is rewritten with physmem
 * writes; the core must run the new code each time, cache on or off. */
/* PAE paging on with linear 0x10000 mapped to the code frame 0x20000
 * (PDPT at 0x100000, page directory 0x101000, page table 0x102000). */
static void paging_on(Cpu *c, PhysMem *pm)
{
    physmem_write64(pm, 0x100000, 0x101000 | 1);             /* PDPTE 0 */
    physmem_write64(pm, 0x101000, 0x102000 | 3);             /* PDE 0 */
    physmem_write64(pm, 0x102000 + 8 * 0x10, 0x20000 | 3);   /* 0x10000 -> 0x20000 */
    uint8_t vec;
    uint32_t err;
    ck_assert(cpu_write_cr(c, 4, CR4_PAE, &vec, &err));
    ck_assert(cpu_write_cr(c, 3, 0x100000, &vec, &err));
    ck_assert(cpu_write_cr(c, 0, CR0_PG | CR0_ET | CR0_PE, &vec, &err));
}

static uint32_t run_at(Cpu *c, uint32_t eip)
{
    cpu_set_eip(c, eip);
    ck_assert_int_eq(cpu_run(c, 100), CPU_STOP_HLT);
    return cpu_reg(c, REG_EAX);
}

START_TEST(test_remap_and_rewrite)
{
    for (int on = 0; on < 2; on++) {
        PhysMem *pm = physmem_new();
        Mmu *m = mmu_new(pm, NULL);
        Cpu *c = cpu_new(m, NULL);
        cpu_set_decode_cache(c, on);
        /* mov eax, imm32; hlt in two frames. */
        const uint8_t a[] = { 0xB8, 1, 0, 0, 0, 0xF4 }, b[] = { 0xB8, 2, 0, 0, 0, 0xF4 };
        physmem_write(pm, 0x20000, a, sizeof a);
        physmem_write(pm, 0x21000, b, sizeof b);
        paging_on(c, pm);
        ck_assert_uint_eq(run_at(c, 0x10000), 1);
        ck_assert_uint_eq(run_at(c, 0x10000), 1);
        physmem_write64(pm, 0x102000 + 8 * 0x10, 0x21000 | 3);   /* remap */
        mmu_invlpg(m, 0x10000);
        ck_assert_uint_eq(run_at(c, 0x10000), 2);
        physmem_write8(pm, 0x21001, 9);                          /* rewrite */
        ck_assert_uint_eq(run_at(c, 0x10000), 9);
        cpu_free(c);
        mmu_free(m);
        physmem_free(pm);
    }
}
END_TEST

/* A breakpoint inside straight-line code the core has already run (and
 * decoded as one block): the run stops before it, as it does with the
 * caches off, and goes on from there when it is removed. */
START_TEST(test_breakpoint_in_block)
{
    for (int on = 0; on < 2; on++) {
        PhysMem *pm = physmem_new();
        Mmu *m = mmu_new(pm, NULL);
        Cpu *c = cpu_new(m, NULL);
        cpu_set_decode_cache(c, on);
        /* mov eax, 1; mov ebx, 2; mov ecx, 3; hlt (at 0x10000, 0x10005, 0x1000a, 0x1000f) */
        const uint8_t code[] = { 0xB8, 1, 0, 0, 0, 0xBB, 2, 0, 0, 0, 0xB9, 3, 0, 0, 0, 0xF4 };
        physmem_write(pm, 0x20000, code, sizeof code);
        paging_on(c, pm);
        ck_assert_uint_eq(run_at(c, 0x10000), 1);
        cpu_set_reg(c, REG_EBX, 0);
        cpu_set_reg(c, REG_ECX, 0);
        uint32_t bp = 0x1000a;
        cpu_set_breakpoints(c, &bp, 1);
        cpu_set_eip(c, 0x10000);
        ck_assert_int_eq(cpu_run(c, 100), CPU_STOP_BREAKPOINT);
        ck_assert_uint_eq(cpu_eip(c), 0x1000a);
        ck_assert_uint_eq(cpu_reg(c, REG_EBX), 2);
        ck_assert_uint_eq(cpu_reg(c, REG_ECX), 0);
        ck_assert_uint_eq(cpu_insns(c), 4 + 2);
        cpu_set_breakpoints(c, NULL, 0);
        ck_assert_int_eq(cpu_run(c, 100), CPU_STOP_HLT);
        ck_assert_uint_eq(cpu_reg(c, REG_ECX), 3);
        cpu_free(c);
        mmu_free(m);
        physmem_free(pm);
    }
}
END_TEST

/* A loop that branches back to its own start (a block that goes round
 * without leaving the block): a breakpoint at the loop head stops every
 * iteration, and the budget stops mid-loop, with or without the caches. */
START_TEST(test_breakpoint_loop_head)
{
    for (int on = 0; on < 2; on++) {
        PhysMem *pm = physmem_new();
        Mmu *m = mmu_new(pm, NULL);
        Cpu *c = cpu_new(m, NULL);
        cpu_set_decode_cache(c, on);
        /* 0x10000 mov ecx, 5; 0x10005 L: dec ecx; 0x10006 jnz L; 0x10008 hlt */
        const uint8_t code[] = { 0xB9, 5, 0, 0, 0, 0x49, 0x75, 0xFD, 0xF4 };
        physmem_write(pm, 0x20000, code, sizeof code);
        paging_on(c, pm);
        uint32_t bp = 0x10005;
        cpu_set_breakpoints(c, &bp, 1);
        cpu_set_eip(c, 0x10000);
        ck_assert_int_eq(cpu_run(c, 100), CPU_STOP_BREAKPOINT);   /* after the mov */
        for (uint32_t left = 4; left >= 1; left--) {
            ck_assert_int_eq(cpu_run(c, 100), CPU_STOP_BREAKPOINT);
            ck_assert_uint_eq(cpu_eip(c), 0x10005);
            ck_assert_uint_eq(cpu_reg(c, REG_ECX), left);
        }
        cpu_set_breakpoints(c, NULL, 0);
        /* ECX = 1: dec, jnz falls through, hlt; a budget of 1 stops after dec. */
        ck_assert_int_eq(cpu_run(c, 1), CPU_STOP_MAX_INSNS);
        ck_assert_uint_eq(cpu_eip(c), 0x10006);
        ck_assert_int_eq(cpu_run(c, 100), CPU_STOP_HLT);
        ck_assert_uint_eq(cpu_insns(c), 1 + 2 * 5 + 1);
        cpu_free(c);
        mmu_free(m);
        physmem_free(pm);
    }
}
END_TEST

/* Retire accounting is committed in bulk inside a decoded block
 * (block.c): whatever observes EIP or the counters in the middle of a
 * block must see the values single steps (caches off) leave. Observers
 * here: RDTSC (cycles), a port hook reading insns, cycles and EIP, and the
 * event hook of a fault taken in the middle of the block (a triple fault:
 * no IDT). Each run is repeated with every budget from 1 up, so that a run
 * stops at every instruction boundary inside the block too. */
typedef struct {
    GString *log;
} Observed;

static PortResult observe_out(Cpu *c, uint16_t port, unsigned size, uint32_t val, void *user)
{
    Observed *o = user;
    g_string_append_printf(o->log, "out %x/%u=%x insns=%" G_GUINT64_FORMAT " user=%" G_GUINT64_FORMAT
                                   " cycles=%" G_GUINT64_FORMAT " eip=%x\n",
                           port, size, val, cpu_insns(c), cpu_insns_user(c), cpu_cycles(c),
                           cpu_eip(c));
    return PORT_OK;
}

static void observe_event(Cpu *c, const CpuEvent *ev, void *user)
{
    Observed *o = user;
    g_string_append_printf(o->log, "event %d vec %u insns=%" G_GUINT64_FORMAT " cycles=%"
                                   G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " from=%x eip=%x\n",
                           (int)ev->kind, ev->vector, cpu_insns(c), ev->cycles, cpu_cycles(c),
                           ev->from_eip, cpu_eip(c));
}

/* What observe_run logs at a stop: the registers its code uses and the
 * hierarchy's TLB counts (the fetch references made, one per fetch block
 * entered, block.c, show in them). */
static void log_stop_totals(Cpu *c, CpuStop st, GString *log)
{
    g_string_append_printf(log, "stop %s insns=%" G_GUINT64_FORMAT " cycles=%" G_GUINT64_FORMAT
                                " eip=%x eax=%x ecx=%x esi=%x",
                           cpu_stop_name(st), cpu_insns(c), cpu_cycles(c), cpu_eip(c),
                           cpu_reg(c, REG_EAX), cpu_reg(c, REG_ECX), cpu_reg(c, REG_ESI));
    for (size_t k = 0; k < tlb_stats_count(); k++) {
        TlbStatItem it = tlb_stats_item(tlb_hier_stats(mmu_tlb(cpu_mmu(c))), k);
        g_string_append_printf(log, " %s=%" G_GUINT64_FORMAT, it.name, it.value);
    }
    g_string_append_c(log, '\n');
}

static void append_tlb_state(GString *s, TlbHierarchy *h);

/* What fault_loop_run logs at a stop: EDI, every array's counts and the
 * TLB's snapshot. */
static void log_stop_arrays(Cpu *c, CpuStop st, GString *log)
{
    g_string_append_printf(log, "stop %s insns=%" G_GUINT64_FORMAT " cycles=%" G_GUINT64_FORMAT
                                " eip=%x edi=%x\n",
                           cpu_stop_name(st), cpu_insns(c), cpu_cycles(c), cpu_eip(c),
                           cpu_reg(c, REG_EDI));
    TlbHierarchy *h = mmu_tlb(cpu_mmu(c));
    for (unsigned a = 0; a < tlb_hier_array_count(h); a++)
        for (size_t k = 0; k < tlb_stats_count(); k++) {
            TlbStatItem it = tlb_stats_item(tlb_stats(tlb_hier_array(h, a)), k);
            g_string_append_printf(log, " %s=%" G_GUINT64_FORMAT, it.name, it.value);
        }
    g_string_append_c(log, '\n');
    append_tlb_state(log, h);
}

/* Run c from linear 0x10000 twice (the second time through runs the
 * decoded block), reg zeroed before each, budget steps in slices of at
 * most slice, logging every stop; a stop that is not the slice's end
 * ends the time through. */
static void run_sliced_twice(Cpu *c, CpuReg reg, uint64_t budget, uint64_t slice,
                             void (*log_stop)(Cpu *, CpuStop, GString *), GString *log)
{
    for (int pass = 0; pass < 2; pass++) {
        cpu_set_eip(c, 0x10000);
        cpu_set_reg(c, reg, 0);
        for (uint64_t left = budget; left > 0;) {
            uint64_t n = MIN(left, slice);
            CpuStop st = cpu_run(c, n);
            log_stop(c, st, log);
            if (st != CPU_STOP_MAX_INSNS)
                break;
            left -= n;
        }
    }
}

/* Run code (at linear 0x10000, frame 0x20000) from its start with budget
 * steps at most, in slices of at most slice; return what was observed. */
static char *observe_run(const uint8_t *code, size_t len, bool on, uint64_t budget, uint64_t slice,
                         uint32_t bp)
{
    PhysMem *pm = physmem_new();
    Mmu *m = mmu_new(pm, NULL);
    Cpu *c = cpu_new(m, NULL);
    cpu_set_decode_cache(c, on);
    physmem_write(pm, 0x20000, code, len);
    paging_on(c, pm);
    Observed o = { g_string_new(NULL) };
    cpu_port_register(c, 0x80, 1, NULL, observe_out, &o);
    cpu_set_event_hook(c, observe_event, &o);
    if (bp)
        cpu_set_breakpoints(c, &bp, 1);
    run_sliced_twice(c, REG_ECX, budget, slice, log_stop_totals, o.log);
    cpu_free(c);
    mmu_free(m);
    physmem_free(pm);
    return g_string_free(o.log, FALSE);
}

START_TEST(test_counters_observed_mid_block)
{
    /* mov eax, 1; add eax, ebx; inc ecx; rdtsc; mov esi, eax; inc ecx;
     * out 0x80, al; dec ecx; lea edx, [ecx+4]; then one of: hlt; a load
     * from an unmapped page (#PF with no IDT: a triple fault); blocks that
     * jump to one another (the run goes from block to block without
     * cpu_run, block.c), with or without a breakpoint at one of them. */
    const uint8_t head[] = { 0xB8, 1, 0, 0, 0, 0x01, 0xD8, 0x41, 0x0F, 0x31, 0x89, 0xC6,
                             0x41, 0xE6, 0x80, 0x49, 0x8D, 0x51, 0x04 };
    const uint8_t tail_hlt[] = { 0xF4 };
    const uint8_t tail_fault[] = { 0x8B, 0x3D, 0x00, 0x00, 0x40, 0x00, 0xF4 };
    /* jmp +1; nop; inc ecx; jmp +1; nop; inc ecx; add esi, ecx; out 0x80, al; hlt */
    const uint8_t tail_jumps[] = { 0xEB, 0x01, 0x90, 0x41, 0xEB, 0x01, 0x90, 0x41, 0x01, 0xCE,
                                   0xE6, 0x80, 0xF4 };
    /* mov ecx, 3; L: inc esi; add eax, esi; dec ecx; jnz L; out 0x80, al; hlt: a
     * loop that goes round in its block (block.c's run_loop from its second
     * pass), stopped by the budget at every instruction of every pass. */
    const uint8_t tail_loop[] = { 0xB9, 3, 0, 0, 0, 0x46, 0x01, 0xF0, 0x49, 0x75, 0xFA,
                                  0xE6, 0x80, 0xF4 };
    /* mov edx, 0; lea esi, [esi]; mov ecx, 4; L: inc ebx; cmp ebx, 3; je X;
     * dec ecx; jnz L; X: out 0x80, al; hlt: a Jcc before the one that goes
     * round (L at 0x10020: the loop is in one fetch block), taken in the
     * loop's third pass (the first is in the block at 0x10000, the second
     * in L's, the third would be run_loop's): not a loop for run_loop,
     * whose Jcc must be the first to read next_eip */
    const uint8_t tail_loop_exit[] = { 0xBA, 0, 0, 0, 0, 0x8D, 0x76, 0x00, 0xB9, 4, 0, 0, 0,
                                       0x43, 0x83, 0xFB, 3, 0x74, 3, 0x49, 0x75, 0xF7, 0xE6,
                                       0x80, 0xF4 };
    /* mov ecx, 9; L: inc esi; dec ecx; jnz L; out 0x80, al; hlt: a loop
     * that goes round threaded in run_loop for several passes, stopped by
     * the budget after every instruction, in slices of every size (a run
     * that stops right after a jump back and the next that goes on from
     * there: the fetch reference at the loop's start is made again) */
    const uint8_t tail_loop9[] = { 0xB9, 9, 0, 0, 0, 0x46, 0x49, 0x75, 0xFC, 0xE6, 0x80, 0xF4 };
    const struct {
        const uint8_t *tail;
        size_t len;
        uint32_t bp;
        uint64_t budgets;
        bool all_slices;
    } tails[] = {
        { tail_hlt, sizeof tail_hlt, 0, 26, false },
        { tail_fault, sizeof tail_fault, 0, 26, false },
        { tail_jumps, sizeof tail_jumps, 0, 26, false },
        { tail_jumps, sizeof tail_jumps, 0x10000 + sizeof head + 7, 26, false }, /* 2nd inc */
        { tail_loop, sizeof tail_loop, 0, 26, false },
        { tail_loop_exit, sizeof tail_loop_exit, 0, 26, false },
        { tail_loop9, sizeof tail_loop9, 0, 42, true },
    };
    for (size_t t = 0; t < G_N_ELEMENTS(tails); t++) {
        uint8_t code[64];
        size_t len = sizeof head;
        memcpy(code, head, len);
        memcpy(code + len, tails[t].tail, tails[t].len);
        len += tails[t].len;
        for (uint64_t budget = 1; budget <= tails[t].budgets; budget++)
            for (uint64_t slice = 1; slice <= budget;
                 slice = tails[t].all_slices || slice == budget ? slice + 1 : budget) {
                char *on = observe_run(code, len, true, budget, slice, tails[t].bp);
                char *off = observe_run(code, len, false, budget, slice, tails[t].bp);
                ck_assert_msg(!strcmp(on, off), "tail %zu budget %" G_GUINT64_FORMAT
                              " slice %" G_GUINT64_FORMAT ":\ncache on:\n%s\ncache off:\n%s",
                              t, budget, slice, on, off);
                g_free(on);
                g_free(off);
            }
    }
}
END_TEST

/* A port hook that runs the core itself (cpu_run inside a handler of a
 * running block), stopping on its budget in the middle of straight-line
 * code: the outer instruction then retires to wherever the inner run left
 * EIP, as single steps do, and the outer block must not run on. */
static PortResult nested_run(Cpu *c, uint16_t port, unsigned size, uint32_t val, void *user)
{
    (void)port, (void)size, (void)val;
    cpu_set_eip(c, 0x10010);
    cpu_run(c, *(const uint64_t *)user);
    return PORT_OK;
}

static char *nested_figures(bool on, const uint8_t *sub, size_t sub_len, uint64_t sub_budget)
{
    PhysMem *pm = physmem_new();
    Mmu *m = mmu_new(pm, NULL);
    Cpu *c = cpu_new(m, NULL);
    cpu_set_decode_cache(c, on);
    /* 0x10000: inc ecx; out 0x81, al; inc ecx; inc ecx; add esi, ecx; hlt
     * 0x10010: sub (run by the hook with sub_budget steps) */
    uint8_t code[32] = { 0x41, 0xE6, 0x81, 0x41, 0x41, 0x01, 0xCE, 0xF4 };
    memcpy(code + 16, sub, sub_len);
    physmem_write(pm, 0x20000, code, sizeof code);
    paging_on(c, pm);
    cpu_port_register(c, 0x81, 1, NULL, nested_run, &sub_budget);
    GString *log = g_string_new(NULL);
    for (int pass = 0; pass < 3; pass++) {     /* later passes run decoded blocks */
        cpu_set_eip(c, 0x10000);
        CpuStop st = cpu_run(c, 100);
        g_string_append_printf(log, "stop %s insns=%" G_GUINT64_FORMAT " cycles=%" G_GUINT64_FORMAT
                                    " eip=%x ecx=%x esi=%x edi=%x\n",
                               cpu_stop_name(st), cpu_insns(c), cpu_cycles(c), cpu_eip(c),
                               cpu_reg(c, REG_ECX), cpu_reg(c, REG_ESI), cpu_reg(c, REG_EDI));
    }
    cpu_free(c);
    mmu_free(m);
    physmem_free(pm);
    return g_string_free(log, FALSE);
}

START_TEST(test_run_inside_hook)
{
    /* inc edi; inc edi; inc edi; add esi, edi; hlt */
    const uint8_t straight[] = { 0x47, 0x47, 0x47, 0x01, 0xFE, 0xF4 };
    /* L: inc edi; add esi, edi; test edi, 3; jnz L; hlt: the inner run stops
     * in a loop that goes round in its block (run_loop), at every
     * instruction, or when it falls through */
    const uint8_t loop[] = { 0x47, 0x01, 0xFE, 0xF7, 0xC7, 3, 0, 0, 0, 0x75, 0xF5, 0xF4 };
    /* L: add edi, 0x400; mov eax, [edi + 0xFC00]; jmp L: the load faults
     * (a triple fault: no IDT) in the loop's fifth pass, in run_loop */
    const uint8_t fault[] = { 0x81, 0xC7, 0x00, 0x04, 0, 0, 0x8B, 0x87, 0x00, 0xFC, 0, 0,
                              0xEB, 0xF2 };
    const struct {
        const uint8_t *sub;
        size_t len;
        uint64_t budgets;
    } subs[] = { { straight, sizeof straight, 2 }, { loop, sizeof loop, 12 },
                 { fault, sizeof fault, 16 } };
    for (size_t t = 0; t < G_N_ELEMENTS(subs); t++)
        for (uint64_t budget = 1; budget <= subs[t].budgets; budget++) {
            char *on = nested_figures(true, subs[t].sub, subs[t].len, budget);
            char *off = nested_figures(false, subs[t].sub, subs[t].len, budget);
            ck_assert_msg(!strcmp(on, off), "sub %zu budget %" G_GUINT64_FORMAT
                          ":\ncache on:\n%s\ncache off:\n%s", t, budget, on, off);
            g_free(on);
            g_free(off);
        }
}
END_TEST

/* INC and DEC right after an ADD, SUB, CMP or logic instruction in a loop
 * that goes round threaded (run_loop) take CF from that producer's kind,
 * known when the chain is built (exec_fast.c's incdec32_after): each
 * loop here makes CF 0 and 1 in different passes (a wrap, a borrow, an
 * unsigned compare), and ADC after the INC/DEC adds the CF it kept, so a
 * wrong CF changes EDX (compared, with every figure, against every
 * shortcut off). */
static const char *incdec_after_source =
    "BITS 32\n"
    "section .text\n"
    "%macro LOOP 3\n"                 /* producer, INC/DEC, its register */
    "    mov ecx, 24\n"
    "    mov ebx, 0xFFFFFFF4\n"
    "    mov esi, 0x0F0F0F0F\n"
    "    align 16, nop\n"
    "%%l:\n"
    "    %1\n"
    "    %2 %3\n"
    "    adc edx, 0\n"
    "    rol edx, 1\n"
    "    sub ecx, 1\n"
    "    jnz %%l\n"
    "%endmacro\n"
    "global _start\n"
    "_start:\n"
    "    xor edx, edx\n"
    "    LOOP {add ebx, 1}, dec, edi\n"
    "    LOOP {add ebx, esi}, inc, edi\n"
    "    LOOP {add ebx, ebx}, dec, eax\n"
    "    LOOP {add esi, 0}, dec, edi\n"
    "    LOOP {sub ebx, 0x40000000}, dec, edi\n"
    "    LOOP {sub esi, ebx}, inc, edi\n"
    "    LOOP {cmp ecx, 9}, dec, edi\n"
    "    LOOP {cmp ebx, esi}, inc, eax\n"
    "    LOOP {and ebx, esi}, dec, edi\n"
    "    LOOP {or ebx, ecx}, inc, edi\n"
    "    LOOP {xor esi, ebx}, dec, edi\n"
    "    LOOP {test ebx, ecx}, inc, edi\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n";

START_TEST(test_incdec_after_producer)
{
    compare_source("incdec.asm", incdec_after_source);
}
END_TEST

/* block.c's run_loop counts the instruction memo's hits of its threaded
 * passes once, when the passes end (mmu_memo_exec_apart): the TLB must
 * end up exactly as single steps with every shortcut off leave it, counts
 * and recency order (tlb_state's canonical snapshot, which holds the
 * order the stamps give: the P4's ITLB is fully associative, so every
 * entry's rank shows), at every point a run can be seen from outside: at
 * every stop of the budget, which cuts the passes anywhere, and after a
 * #PF raised inside a threaded pass, whose delivery fetches the runtime's
 * stub through the ITLB (so hits counted after it would stamp the loop's
 * page later than the stub's). Loops whose first instruction is in one
 * fetch block, and in two (two references a pass). */
static const char *deferred_hits_source =
    "BITS 32\n"
    "section .bss\n"
    "alignb 4096\n"
    "buf: resb 8 * 4096\n"
    "section .text\n"
    "global _start\n"
    "_start:\n"
    "    mov ebp, 3\n"
    "again:\n"
    "    mov ecx, 8\n"
    "    mov esi, buf\n"
    "    align 16, nop\n"
    "one:\n"
    "    mov eax, [esi]\n"
    "    add eax, ecx\n"
    "    mov [esi], eax\n"
    "    add esi, 4096\n"
    "    dec ecx\n"
    "    jnz one\n"
    "    mov ecx, 8\n"
    "    mov esi, buf\n"
    "    align 16, nop\n"
    "    times 13 nop\n"
    "two:\n"                       /* 6 bytes from 13: two fetch blocks */
    "    mov eax, [esi + 0x800]\n"
    "    add [esi], eax\n"
    "    add esi, 4096\n"
    "    dec ecx\n"
    "    jnz two\n"
    "    dec ebp\n"
    "    jnz again\n"
    "    mov ecx, 100\n"
    "    mov esi, buf\n"
    "    align 16, nop\n"
    "off:\n"                       /* runs off buf's end: #PF in a pass */
    "    mov eax, [esi]\n"
    "    add eax, ecx\n"
    "    mov [esi], eax\n"
    "    add esi, 4096\n"
    "    dec ecx\n"
    "    jnz off\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n";

/* Logs on (shortcuts on) and off must be equal: name the first line
 * that differs. Frees both. */
static void assert_same_lines(char *on, char *off, const char *what, uint64_t budget,
                              uint64_t slice)
{
    if (strcmp(on, off) != 0) {
        char **a = g_strsplit(on, "\n", -1), **b = g_strsplit(off, "\n", -1);
        for (int k = 0; a[k] && b[k]; k++)
            ck_assert_msg(!strcmp(a[k], b[k]), "%s budget %" G_GUINT64_FORMAT " slice %"
                          G_GUINT64_FORMAT ", line %d: shortcuts on '%.300s', off '%.300s'",
                          what, budget, slice, k, a[k], b[k]);
        ck_abort_msg("%s budget %" G_GUINT64_FORMAT " slice %" G_GUINT64_FORMAT
                     ": logs differ in length", what, budget, slice);
    }
    g_free(on);
    g_free(off);
}

/* The TLB's canonical snapshot, in hex. */
static void append_tlb_state(GString *s, TlbHierarchy *h)
{
    ck_assert(tlb_state_comparable(h));
    GByteArray *b = g_byte_array_new();
    for (unsigned i = 0; i < tlb_state_nparts(h); i++)
        tlb_state_append_part(h, i, b);
    for (guint k = 0; k < b->len; k++)
        g_string_append_printf(s, "%02x", b->data[k]);
    g_string_append_c(s, '\n');
    g_byte_array_free(b, TRUE);
}

/* Run obj in slices of slice steps with every shortcut on or off, and log
 * every modelled figure and the TLB snapshot after each slice. */
static char *sliced_run(const char *obj, bool on, uint64_t slice)
{
    GString *out = g_string_new(NULL), *log = g_string_new(NULL);
    RunEnvOptions opt = { .preset = preset, .no_decode_cache = !on, .no_mmu_shortcuts = !on,
                          .out = out, .err = out };
    GError *err = NULL;
    RunEnv *e = runenv_new(&opt, &err);
    ck_assert_msg(e, "%s", err ? err->message : "?");
    ck_assert_msg(runenv_load(e, obj, &err), "%s", err ? err->message : "?");
    RunEnvState st;
    unsigned n = 0;
    do {
        ck_assert_uint_lt(n++, 100000);
        st = runenv_run(e, slice);
        char *f = figures(e);
        g_string_append_printf(log, "state %d\n%s", (int)st, f);
        g_free(f);
        append_tlb_state(log, mmu_tlb(runenv_mmu(e)));
    } while (st == RUNENV_BUDGET);
    ck_assert_int_eq(st, RUNENV_FAULTED);
    ck_assert_uint_eq(runenv_fault(e)->vector, 14);
    runenv_free(e);
    g_string_free(out, TRUE);
    return g_string_free(log, FALSE);
}

/* A loop whose load runs off its page in its 17th pass (run_loop's
 * threaded passes) with a #PF that goes unhandled (no IDT: a triple
 * fault), its delivery watched by the event hook (cpu_cycles, which
 * includes the MMU's cycles: the ITLB here charges a cycle per hit, so a
 * hit counted after the delivery shows), with every budget and slice,
 * the TLB's counters and snapshot logged at every stop; every shortcut
 * on (decoded blocks, memos) against every one off. */
static char *fault_loop_run(bool on, uint64_t budget, uint64_t slice)
{
    /* L: add edi, 0x100; mov eax, [edi + 0xFF00]; jmp L */
    const uint8_t code[] = { 0x81, 0xC7, 0x00, 0x01, 0, 0, 0x8B, 0x87, 0x00, 0xFF, 0, 0,
                             0xEB, 0xF2 };
    TlbHierConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    TlbGeom g = { .entries = 16, .ways = 16, .page_sizes = PRESET_PG_4K, .hit_latency = 1 };
    cfg.itlb_4k = cfg.dtlb_4k = g;
    cfg.policy = "lru";
    PhysMem *pm = physmem_new();
    GError *err = NULL;
    Mmu *m = mmu_new_full(pm, NULL, &cfg, 1, &err);
    ck_assert_msg(m, "%s", err ? err->message : "?");
    mmu_set_shortcuts(m, on);
    Cpu *c = cpu_new(m, NULL);
    cpu_set_decode_cache(c, on);
    physmem_write(pm, 0x20000, code, sizeof code);
    paging_on(c, pm);
    Observed o = { g_string_new(NULL) };
    cpu_set_event_hook(c, observe_event, &o);
    run_sliced_twice(c, REG_EDI, budget, slice, log_stop_arrays, o.log);
    cpu_free(c);
    mmu_free(m);
    physmem_free(pm);
    return g_string_free(o.log, FALSE);
}

START_TEST(test_deferred_fetch_hits)
{
    for (uint64_t budget = 1; budget <= 60; budget++)
        for (uint64_t slice = 1; slice <= budget; slice++) {
            char *on = fault_loop_run(true, budget, slice);
            char *off = fault_loop_run(false, budget, slice);
            assert_same_lines(on, off, "budget", budget, slice);
        }

    char *dir = g_dir_make_tmp("vmsplit-dcache-XXXXXX", NULL);
    char *src = g_build_filename(dir, "deferred.asm", NULL);
    ck_assert(g_file_set_contents(src, deferred_hits_source, -1, NULL));
    GError *err = NULL;
    char *obj = nasm_assemble(src, &err);
    ck_assert_msg(obj, "%s", err ? err->message : "?");
    const uint64_t slices[] = { 1, 2, 3, 5, 7, 11, 13, 17, 29, 64, 1000000 };
    for (size_t i = 0; i < G_N_ELEMENTS(slices); i++)
        assert_same_lines(sliced_run(obj, true, slices[i]), sliced_run(obj, false, slices[i]),
                          "runenv", 0, slices[i]);
    nasm_remove_output(obj);
    g_free(obj);
    g_unlink(src);
    g_rmdir(dir);
    g_free(src);
    g_free(dir);
}
END_TEST

int main(int argc, char **argv)
{
    objects = argv + 1;
    n_objects = argc - 1;
    GError *err = NULL;
    preset = preset_load("p4-northwood", &err);
    if (!preset) {
        fprintf(stderr, "preset p4-northwood: %s\n", err->message);
        return 1;
    }
    Suite *s = suite_create("cpu_dcache");
    TCase *t = tcase_create("dcache");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_same_figures, 0, n_objects);
    tcase_add_test(t, test_self_modifying);
    tcase_add_test(t, test_jump_to_next);
    tcase_add_test(t, test_page_loops);
    tcase_add_test(t, test_loop_forms);
    tcase_add_test(t, test_indexed_operands);
    tcase_add_test(t, test_crossing_dwords);
    tcase_add_test(t, test_breakpoint_in_block);
    tcase_add_test(t, test_breakpoint_loop_head);
    tcase_add_test(t, test_remap_and_rewrite);
    tcase_add_test(t, test_counters_observed_mid_block);
    tcase_add_test(t, test_run_inside_hook);
    tcase_add_test(t, test_deferred_fetch_hits);
    tcase_add_test(t, test_incdec_after_producer);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    preset_free(preset);
    return failed ? 1 : 0;
}
