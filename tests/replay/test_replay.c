/* The replay engine on hand-written traces, against what each layout's
 * design says: CR3 writes per syscall (0 under 3g1g, 2 under 4g4g and
 * kpti), per context switch (3g1g: switch_mm's one; 4g4g: the interrupt's
 * entry and exit, none in switch_mm), determinism, lowmem accounting. */
#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "preset/preset.h"
#include "replay/replay.h"

static Preset *preset;

static char *write_trace(const char *body)
{
    char *dir = g_dir_make_tmp("vmsplit-replay-XXXXXX", NULL);
    char *p = g_build_filename(dir, "t.vmt", NULL);
    char *text = g_strconcat("#vmsplit-trace 1\n@source test\n", body, NULL);
    g_file_set_contents(p, text, -1, NULL);
    g_free(text);
    g_free(dir);
    return p;
}

static ReplayResult *replay(const char *trace, const char *layout)
{
    ReplayConfig cfg = { .preset = preset, .layout = layout_find(layout), .ram = 4ULL << 30 };
    GError *err = NULL;
    ReplayResult *r = replay_run(&cfg, trace, &err);
    ck_assert_msg(r != NULL, "%s: %s", layout, err ? err->message : "");
    return r;
}

static char *nullcalls(int n)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append(s, "100 sys getppid 1\n100 user 800 4 seq\n");
    return g_string_free(s, FALSE);
}

START_TEST(cr3_per_syscall)
{
    char *body = nullcalls(50);
    char *t = write_trace(body);
    static const char *names[] = { "3g1g", "4g4g", "kpti", "kpti-pcid" };
    static const uint64_t want[] = { 0, 100, 100, 100 };
    for (int i = 0; i < 4; i++) {
        ReplayResult *r = replay(t, names[i]);
        ck_assert_uint_eq(replay_totals(r)->syscalls, 50);
        ck_assert_uint_eq(replay_totals(r)->cr3_writes, want[i]);
        ck_assert_uint_eq(replay_totals(r)->events, 100);
        ck_assert_uint_eq(replay_nsyscalls(r), 1);
        ck_assert_uint_eq(replay_syscall(r, 0)->hist.n, 50);
        /* user + syscall cycles account for everything (no switches) */
        const ReplayTotals *tt = replay_totals(r);
        ck_assert_uint_eq(tt->user_cycles + tt->syscall_cycles, tt->cycles);
        replay_result_free(r);
    }
    g_free(body);
    g_free(t);
}
END_TEST

/* Two processes, 10 switches. 3g1g: one CR3 write per switch (switch_mm);
 * 4g4g: two per syscall and two per switch (the timer interrupt enters
 * from and returns to user mode), none in switch_mm. */
START_TEST(cr3_per_switch)
{
    GString *s = g_string_new("100 sys getppid 1\n100 fork 200\n");
    for (int i = 0; i < 5; i++)
        g_string_append(s, "200 switch\n200 sys getppid 1\n100 switch\n100 sys getppid 1\n");
    char *t = write_trace(s->str);
    ReplayResult *a = replay(t, "3g1g"), *b = replay(t, "4g4g");
    ck_assert_uint_eq(replay_totals(a)->switches, 10);
    ck_assert_uint_eq(replay_totals(a)->syscalls, 11);
    ck_assert_uint_eq(replay_totals(a)->forks, 1);
    ck_assert_uint_eq(replay_totals(a)->cr3_writes, 10);
    ck_assert_uint_eq(replay_totals(b)->cr3_writes, 2 * 11 + 2 * 10);
    ck_assert_uint_gt(replay_totals(b)->cycles, replay_totals(a)->cycles);
    replay_result_free(a);
    replay_result_free(b);
    g_string_free(s, TRUE);
    g_free(t);
}
END_TEST

/* A blocked call followed by a switch switches inside the call: no timer
 * interrupt, so 4g4g writes CR3 only on the syscall's entry and exit. */
START_TEST(blocked_switch)
{
    char *t = write_trace("100 fork 200\n100 sys read 1 out=1 blocked\n200 switch\n200 sys getppid 1\n");
    ReplayResult *b = replay(t, "4g4g");
    ck_assert_uint_eq(replay_totals(b)->switches, 1);
    ck_assert_uint_eq(replay_totals(b)->cr3_writes, 4);
    ck_assert_uint_eq(replay_totals(b)->switch_cycles, 0);
    replay_result_free(b);
    g_free(t);
}
END_TEST

static char *json_of(ReplayResult *r)
{
    JsonBuilder *b = json_builder_new();
    replay_to_json(r, b);
    JsonNode *root = json_builder_get_root(b);
    char *s = json_to_string(root, FALSE);
    json_node_unref(root);
    g_object_unref(b);
    return s;
}

START_TEST(deterministic)
{
    char *t = write_trace("100 sys open 3 in=20\n100 user 20000 64 rand\n100 sys read 4096 out=4096\n"
                          "100 user 5000 64 hot\n100 sys write 100 in=100\n100 sys frobnicate 0\n");
    ReplayResult *a = replay(t, "4g4g"), *b = replay(t, "4g4g");
    char *ja = json_of(a), *jb = json_of(b);
    ck_assert_str_eq(ja, jb);
    ck_assert_uint_eq(replay_totals(a)->unknown_syscalls, 1);
    ck_assert_uint_eq(replay_totals(a)->copied, 20 + 4096 + 100);
    ck_assert_uint_eq(replay_totals(a)->kmaps, 3);      /* one page each */
    g_free(ja);
    g_free(jb);
    replay_result_free(a);
    replay_result_free(b);
    g_free(t);
}
END_TEST

/* Lowmem: a fork allocates the child's page tables and kernel stack; its
 * exit gives them back, so the end is below the peak. */
START_TEST(lowmem_follows_tasks)
{
    char *t = write_trace("100 fork 200\n100 sys wait4 200 blocked\n200 switch\n200 sys getppid 1\n"
                          "200 exit 0\n100 switch\n100 sys getppid 1\n");
    ReplayResult *r = replay(t, "3g1g");
    const ReplayTotals *tt = replay_totals(r);
    ck_assert_uint_ge(tt->lowmem_peak, 2 * (4 * 4096 + 8192));   /* two tasks' tables + stacks */
    ck_assert_uint_lt(tt->lowmem_end, tt->lowmem_peak);
    ck_assert_uint_gt(tt->lowmem_start_free, 800u << 20);         /* 4 GiB 3g1g: ~860 MiB free */
    ck_assert_int_eq(tt->lowmem_exhausted_at, -1);
    replay_result_free(r);
    g_free(t);
}
END_TEST

START_TEST(bad_trace)
{
    char *t = write_trace("100 sys getppid 1\n100 bogus event\n");
    ReplayConfig cfg = { .preset = preset, .layout = layout_find("3g1g"), .ram = 4ULL << 30 };
    GError *err = NULL;
    ck_assert_ptr_null(replay_run(&cfg, t, &err));
    ck_assert_msg(strstr(err->message, ":4:") != NULL, "%s", err->message);
    g_error_free(err);
    g_free(t);
}
END_TEST

/* Unmapping or re-protecting memory ends with __flush_tlb() on Linux 2.6
 * i386 (flush_tlb_mm / flush_tlb_range on a uniprocessor: one CR3 reload of
 * the current mm). Which calls flush, by hand from mm/mmap.c and
 * mm/mprotect.c: munmap and mprotect when they succeed (a state event
 * follows), brk when it moves the break down; mmap, a growing or first brk
 * and a failed call do not. Six syscalls here, three of them flush. */
START_TEST(flush_on_unmap)
{
    char *t = write_trace("7 sys brk 134217728\n7 brk 0x8000000\n"      /* first: no flush */
                          "7 user 800 4 seq\n"
                          "7 sys munmap 0\n7 munmap 0x40000000 4096\n"  /* flush */
                          "7 sys mprotect 0\n7 mprotect 0x40001000 4096 r--\n" /* flush */
                          "7 sys munmap -1 err=EINVAL\n"                /* failed: none */
                          "7 sys brk 125829120\n7 brk 0x7800000\n"     /* shrinks: flush */
                          "7 sys brk 130023424\n7 brk 0x7c00000\n"     /* grows: none */
                          "7 user 800 4 seq\n");
    static const char *names[] = { "3g1g", "4g4g" };
    static const uint64_t want_cr3[] = { 3, 2 * 6 + 3 };
    for (int i = 0; i < 2; i++) {
        ReplayResult *r = replay(t, names[i]);
        const ReplayTotals *tt = replay_totals(r);
        ck_assert_uint_eq(tt->syscalls, 6);
        ck_assert_uint_eq(tt->mm_flushes, 3);
        ck_assert_uint_eq(tt->cr3_writes, want_cr3[i]);
        replay_result_free(r);
    }
    /* Under 3g1g the flush is what drops the user's TLB entries: the same
     * trace without the state events (every call failed) drops none. */
    char *t2 = write_trace("7 user 800 4 seq\n7 sys munmap -1 err=EINVAL\n7 user 800 4 seq\n");
    char *t3 = write_trace("7 user 800 4 seq\n7 sys munmap 0\n7 munmap 0x40000000 4096\n"
                           "7 user 800 4 seq\n");
    ReplayResult *a = replay(t2, "3g1g"), *b = replay(t3, "3g1g");
    ck_assert_uint_eq(replay_tlb(a)->dropped_cr3, 0);
    ck_assert_uint_gt(replay_tlb(b)->dropped_cr3, 0);
    ck_assert_uint_gt(replay_totals(b)->walks, replay_totals(a)->walks);
    replay_result_free(a);
    replay_result_free(b);
    g_free(t);
    g_free(t2);
    g_free(t3);
}
END_TEST

/* Per-name totals, counted by hand: names the syscall table does not know
 * all get the generic profile but stay separate entries, however they
 * interleave with each other and with known names. */
START_TEST(names_counted_apart)
{
    char *t = write_trace("100 sys frob 0\n100 sys blah 0\n100 sys frob 0\n100 sys getppid 1\n"
                          "100 sys close 0\n100 sys frob 0\n100 sys getppid 1\n100 sys blah 0\n"
                          "100 sys frob 0\n");
    ReplayResult *r = replay(t, "4g4g");
    ck_assert_uint_eq(replay_totals(r)->syscalls, 9);
    ck_assert_uint_eq(replay_totals(r)->unknown_syscalls, 6);
    static const struct { const char *name; uint64_t n; bool known; } want[] = {
        {"frob", 4, false}, {"blah", 2, false}, {"getppid", 2, true}, {"close", 1, true},
    };
    ck_assert_uint_eq(replay_nsyscalls(r), G_N_ELEMENTS(want));
    for (size_t w = 0; w < G_N_ELEMENTS(want); w++) {
        const ReplaySyscall *found = NULL;
        for (guint i = 0; i < replay_nsyscalls(r); i++)
            if (!strcmp(replay_syscall(r, i)->name, want[w].name))
                found = replay_syscall(r, i);
        ck_assert_msg(found, "%s", want[w].name);
        ck_assert_uint_eq(found->hist.n, want[w].n);
        ck_assert_int_eq(found->known, want[w].known);
    }
    replay_result_free(r);
    g_free(t);
}
END_TEST

/* Pids are names only: a trace that reuses pid 200 after it exited (by a
 * second fork, and by a switch to it) replays exactly as the same trace
 * with fresh pids. */
START_TEST(pid_reuse)
{
    char *a = write_trace("100 fork 200\n100 sys getppid 1\n200 switch\n200 sys getppid 1\n"
                          "200 exit 0\n100 switch\n100 fork 200\n100 user 800 4 seq\n"
                          "200 switch\n200 sys getppid 1\n200 exit 0\n200 switch\n"
                          "200 sys getppid 1\n200 exit 0\n100 switch\n100 sys getppid 1\n");
    char *b = write_trace("100 fork 200\n100 sys getppid 1\n200 switch\n200 sys getppid 1\n"
                          "200 exit 0\n100 switch\n100 fork 300\n100 user 800 4 seq\n"
                          "300 switch\n300 sys getppid 1\n300 exit 0\n400 switch\n"
                          "400 sys getppid 1\n400 exit 0\n100 switch\n100 sys getppid 1\n");
    ReplayResult *ra = replay(a, "4g4g"), *rb = replay(b, "4g4g");
    ck_assert_uint_eq(replay_totals(ra)->forks, 2);
    ck_assert_uint_eq(replay_totals(ra)->exits, 3);
    ck_assert_uint_eq(replay_totals(ra)->syscalls, 5);
    for (size_t i = 0; i < replay_total_count(); i++)
        ck_assert_msg(replay_total_value(replay_totals(ra), i) ==
                      replay_total_value(replay_totals(rb), i), "%s", replay_total_name(i));
    replay_result_free(ra);
    replay_result_free(rb);
    g_free(a);
    g_free(b);
}
END_TEST

int main(void)
{
    GError *err = NULL;
    preset = preset_load("p4-northwood", &err);
    g_assert(preset);
    Suite *s = suite_create("replay-engine");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cr3_per_syscall);
    tcase_add_test(tc, cr3_per_switch);
    tcase_add_test(tc, blocked_switch);
    tcase_add_test(tc, deterministic);
    tcase_add_test(tc, lowmem_follows_tasks);
    tcase_add_test(tc, bad_trace);
    tcase_add_test(tc, flush_on_unmap);
    tcase_add_test(tc, names_counted_apart);
    tcase_add_test(tc, pid_reuse);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    preset_free(preset);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
