/* Core benchmark: guest instructions per host second.
 *
 *   pageloop    workloads/guest/pageloop.asm (issue 4's 256-page loop: a
 *               load, an add and a store per page, every data reference a
 *               DTLB miss on the P4's 64-entry DTLB), p4-northwood preset
 *   pageloop-nodc  the same with the decoded-instruction cache off
 *   pageloop-nopreset  no preset: default TLB, no caches
 *   hotloop     the same instructions over 8 pages (every reference a TLB
 *               and L1 hit), p4-northwood: the interpreter's own speed
 *
 * Each runs RUNS times; the median and the spread of the rate are printed,
 * from the thread's CPU time (the machines are shared; time spent
 * descheduled is not the simulator's). The TLB is looked up and cycles are
 * counted on every reference in every configuration. A benchmark, never a
 * test: it asserts nothing about speed (it does check the guest exits 0).
 *
 * Arguments: the pageloop object. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu/cpu.h"
#include "cpu/nasm.h"
#include "preset/preset.h"
#include "cpu/runenv.h"

#include "../bench_util.h"

#define RUNS 5

static const char *hotloop_src =
    "BITS 32\n%define PASSES 400000\nsection .bss\nalignb 4096\npages: resb 8*4096\n"
    "section .text\nglobal _start\n_start:\n    mov ebp, PASSES\n.pass:\n    mov esi, pages\n"
    "    mov ecx, 8\n.page:\n    mov eax, [esi]\n    add eax, ecx\n    mov [esi], eax\n"
    "    add esi, 4096\n    dec ecx\n    jnz .page\n    dec ebp\n    jnz .pass\n"
    "    mov eax, 1\n    xor ebx, ebx\n    int 0x80\n";

static void bench(const char *name, const char *obj, const Preset *p, bool dcache)
{
    double rate[RUNS];
    uint64_t insns = 0, cycles = 0;
    for (int k = 0; k < RUNS; k++) {
        RunEnvOptions opt = { .preset = p, .no_decode_cache = !dcache };
        GError *err = NULL;
        RunEnv *e = runenv_new(&opt, &err);
        if (!e || !runenv_load(e, obj, &err)) {
            fprintf(stderr, "%s: %s\n", name, err->message);
            exit(1);
        }
        double t0 = bench_thread_seconds();
        RunEnvState st = runenv_run(e, 1000000000);
        double t = bench_thread_seconds() - t0;
        if (st != RUNENV_EXITED || runenv_exit_status(e) != 0) {
            fprintf(stderr, "%s: the guest did not exit 0 (state %d)\n", name, st);
            exit(1);
        }
        insns = cpu_insns(runenv_cpu(e));
        cycles = cpu_cycles(runenv_cpu(e));
        rate[k] = (double)insns / t / 1e6;
        runenv_free(e);
    }
    qsort(rate, RUNS, sizeof rate[0], bench_cmp_double);
    printf("%-18s %12" G_GUINT64_FORMAT " insns %13" G_GUINT64_FORMAT " cycles   "
           "median %6.1f M insns/s  (min %.1f, max %.1f, %d runs)\n",
           name, insns, cycles, rate[RUNS / 2], rate[0], rate[RUNS - 1], RUNS);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s pageloop.o\n", argv[0]);
        return 2;
    }
    GError *err = NULL;
    Preset *p4 = preset_load("p4-northwood", &err);
    if (!p4) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    char *dir = g_dir_make_tmp("vmsplit-bench-XXXXXX", NULL);
    char *src = g_build_filename(dir, "hotloop.asm", NULL);
    g_file_set_contents(src, hotloop_src, -1, NULL);
    char *hot = nasm_assemble(src, &err);
    if (!hot) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    bench("pageloop", argv[1], p4, true);
    bench("pageloop-nodc", argv[1], p4, false);
    bench("pageloop-nopreset", argv[1], NULL, true);
    bench("hotloop", hot, p4, true);
    nasm_remove_output(hot);
    g_free(hot);
    g_unlink(src);
    g_rmdir(dir);
    g_free(src);
    g_free(dir);
    preset_free(p4);
    return 0;
}
