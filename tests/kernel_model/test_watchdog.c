/* The machine's watchdog (issue 19): it guards the kernel stubs, not user
 * work. User work of any size a trace may hold (up to TRACE_USER_INSNS_MAX)
 * runs, and costs time in proportion to its instructions: once the
 * working set is warm the loop (stubs/user.asm, USER_WORK_INSNS_PER_ITER
 * instructions an iteration) has one cost per iteration whatever the run's
 * length, so every run's cycles per instruction must agree within 1 %, and
 * with those of the same work executed instruction by instruction (the
 * fast-forward off) for the size where that is affordable. A stub that
 * never returns is still caught, and the error says where it spins. */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "preset/preset.h"
#include "kernel_model/machine.h"
#include "mmu/pae.h"
#include "replay/strace_import.h"
#include "replay/trace.h"

#define GiB (1024ULL * 1024 * 1024)
#define WS_VA 0x20000000u

typedef struct {
    Preset *p;
    Machine *m;
} Fix;

static Fix boot(bool ffwd)
{
    Fix f = { 0 };
    GError *err = NULL;
    f.p = preset_load("p4-northwood", &err);
    ck_assert_msg(f.p, "%s", err ? err->message : "");
    MachineConfig mc = { .preset = f.p, .layout = layout_find("3g1g"), .ram = 4 * GiB };
    f.m = machine_new(&mc, &err);
    ck_assert_msg(f.m, "%s", err ? err->message : "");
    machine_set_fast_forward(f.m, ffwd);
    ck_assert(machine_map_user(f.m, machine_current(f.m), WS_VA, 16, true, &err));
    return f;
}

static void fix_free(Fix *f)
{
    machine_free(f->m);
    preset_free(f->p);
}

/* One user-work run of insns instructions over the replay's `16 hot` set
 * (2 pages, a line a step: replay.c do_user), then a null system call, as
 * in `1 user N 16 hot` followed by a syscall. Returns the run's cycles;
 * *ran gets its instructions. */
static uint64_t user_then_syscall(Fix *f, uint64_t insns, uint64_t *ran)
{
    Cpu *cpu = machine_cpu(f->m);
    GError *err = NULL;
    uint64_t c0 = cpu_cycles(cpu), i0 = cpu_insns(cpu);
    ck_assert_msg(machine_user_work(f->m, insns, WS_VA, 2 * PAGE_SIZE, 64, &err),
                  "%" G_GUINT64_FORMAT " instructions: %s", insns, err ? err->message : "");
    uint64_t cycles = cpu_cycles(cpu) - c0;
    *ran = cpu_insns(cpu) - i0;
    ck_assert_msg(machine_syscall(f->m, 20, NULL, NULL, &err), "%s", err ? err->message : "");
    return cycles;
}

static double cpi(uint64_t cycles, uint64_t insns)
{
    return (double)cycles / (double)insns;
}

/* 10^6, 10^8, 10^10 and the largest count a trace may hold (which takes
 * several ECX-sized runs of the loop): each finishes, runs its
 * instructions (the loop's prologue and epilogue add a few), and costs the
 * same per instruction as the others and as 10^6 instructions executed one
 * by one. Before the fix, 5 * 10^7 and more failed with "no return to user
 * mode after 50000000 instructions". */
START_TEST(user_work_any_size)
{
    static const uint64_t sizes[] = { 1000000ULL, 100000000ULL, 10000000000ULL,
                                      TRACE_USER_INSNS_MAX };
    Fix plain = boot(false);
    uint64_t ran;
    user_then_syscall(&plain, 1000000, &ran);                   /* warm up */
    double want = cpi(user_then_syscall(&plain, 1000000, &ran), ran);
    fix_free(&plain);
    ck_assert(want > 0.5 && want < 20);

    Fix f = boot(true);
    user_then_syscall(&f, 1000000, &ran);                       /* warm up */
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint64_t c = user_then_syscall(&f, sizes[i], &ran);
        ck_assert_uint_ge(ran, sizes[i]);
        ck_assert_uint_le(ran, sizes[i] + 64 * (sizes[i] / (8ULL * UINT32_MAX) + 1));
        double got = cpi(c, ran);
        ck_assert_msg(got > want * 0.99 && got < want * 1.01,
                      "%" G_GUINT64_FORMAT " instructions: %.6f cycles per instruction, "
                      "%.6f executed one by one", sizes[i], got, want);
    }
    ck_assert_uint_gt(machine_fast_forward_skips(f.m)->insns, TRACE_USER_INSNS_MAX / 2);
    fix_free(&f);
}
END_TEST

/* A body that turns the stub code it returns to into a loop: a sled of
 * NOPs ending in a jump back to its start, so that wherever in the first
 * bytes the core resumes, it spins in kernel mode for ever. */
static uint32_t spin_body(Machine *m, uint32_t nr, const uint32_t args[6], void *user)
{
    (void)nr, (void)args;
    uint8_t sled[16];
    memset(sled, 0x90, sizeof sled);
    sled[14] = 0xEB;                     /* jmp rel8 -16: back to the sled's start */
    sled[15] = 0xF0;
    uint32_t eip = cpu_eip(machine_cpu(m));
    *(uint32_t *)user = eip;
    ck_assert(machine_kernel_write(m, eip, sled, sizeof sled));
    return 0;
}

START_TEST(stub_runaway_caught)
{
    Fix f = boot(true);
    uint32_t at = 0;
    machine_set_body(f.m, spin_body, &at);
    GError *err = NULL;
    ck_assert(!machine_syscall(f.m, 20, NULL, NULL, &err));
    ck_assert(err != NULL);
    ck_assert_msg(g_error_matches(err, G_IO_ERROR, G_IO_ERROR_TIMED_OUT), "%s", err->message);
    ck_assert_msg(strstr(err->message, "no return to user mode after 50000000 instructions"),
                  "%s", err->message);
    uint32_t eip = cpu_eip(machine_cpu(f.m));
    ck_assert_uint_ge(eip, at);
    ck_assert_uint_lt(eip, at + 16);
    char *where = g_strdup_printf("EIP 0x%08x = ", eip);
    ck_assert_msg(strstr(err->message, where) && strstr(err->message, " in the kernel stubs, CPL 0"),
                  "%s", err->message);
    g_free(where);
    g_error_free(err);
    fix_free(&f);
}
END_TEST

/* The limit in the format (workloads/FORMAT.md): 10^12 reads, one more is
 * an error that says what is allowed. */
START_TEST(trace_user_limit)
{
    TraceEvent ev;
    GError *err = NULL;
    ck_assert_msg(trace_parse_event("7 user 1000000000000 16 hot", &ev, "t.vmt", 3, &err), "%s",
                  err ? err->message : "");
    ck_assert_uint_eq(ev.u.user.insns, 1000000000000ULL);
    ck_assert(!trace_parse_event("7 user 1000000000001 16 hot", &ev, "t.vmt", 3, &err));
    ck_assert_msg(strstr(err->message, "t.vmt:3: expected an instruction count of at most "
                                       "1000000000000") != NULL, "%s", err->message);
    g_clear_error(&err);
}
END_TEST

static void no_header(const TraceHeader *h, void *ud)
{
    (void)h, (void)ud;
}

static void sum_user(const TraceEvent *ev, void *ud)
{
    uint64_t *acc = ud;                  /* [0] events, [1] instructions, [2] largest */
    if (ev->kind != TRACE_EV_USER)
        return;
    acc[0]++;
    acc[1] += ev->u.user.insns;
    acc[2] = MAX(acc[2], ev->u.user.insns);
}

/* An hour between two calls at the importer's default 2 GHz and one
 * instruction a cycle: 3600 s * 2e9 = 7.2 * 10^12 instructions, written
 * as seven events of 10^12 and one of 2 * 10^11 (worked by hand). */
START_TEST(import_splits_long_gap)
{
    StraceImportOptions o;
    strace_import_options_init(&o);
    ck_assert(o.clock_mhz == 2000.0 && o.ipc == 1.0 && o.overhead_us == 0.0);
    uint64_t acc[3] = { 0 };
    StraceImporter *imp = strace_importer_new(&o, "gap.strace", no_header, sum_user, acc);
    GError *err = NULL;
    ck_assert(strace_importer_feed(imp, "1 1700000000.000000 getpid() = 1 <0.000000>", 1, &err));
    ck_assert(strace_importer_feed(imp, "1 1700003600.000000 getpid() = 1 <0.000000>", 2, &err));
    strace_importer_finish(imp);
    strace_importer_free(imp);
    ck_assert_uint_eq(acc[0], 8);
    ck_assert_uint_eq(acc[1], 7200000000000ULL);
    ck_assert_uint_eq(acc[2], TRACE_USER_INSNS_MAX);
}
END_TEST

/* Found by tests/fuzz (strace, regress/strace/timeout-huge-gap): a
 * timestamp 10^10 s after the last one made 2 * 10^7 user events of
 * 10^12 and hung the import. A gap is cut to STRACE_MAX_GAP_INSNS
 * (1000 events) and counted. */
START_TEST(import_caps_absurd_gap)
{
    StraceImportOptions o;
    strace_import_options_init(&o);
    uint64_t acc[3] = { 0 };
    StraceImporter *imp = strace_importer_new(&o, "jump.strace", no_header, sum_user, acc);
    GError *err = NULL;
    ck_assert(strace_importer_feed(imp, "1 1000000000.000000 getpid() = 1 <0.000000>", 1, &err));
    ck_assert(strace_importer_feed(imp, "1 11000000000.000000 getpid() = 1 <0.000000>", 2, &err));
    strace_importer_finish(imp);
    ck_assert_uint_eq(strace_importer_stats(imp)->gaps_capped, 1);
    strace_importer_free(imp);
    ck_assert_uint_eq(acc[0], 1000);
    ck_assert_uint_eq(acc[1], STRACE_MAX_GAP_INSNS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("watchdog");
    TCase *tc = tcase_create("watchdog");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, user_work_any_size);
    tcase_add_test(tc, stub_runaway_caught);
    tcase_add_test(tc, trace_user_limit);
    tcase_add_test(tc, import_splits_long_gap);
    tcase_add_test(tc, import_caps_absurd_gap);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
