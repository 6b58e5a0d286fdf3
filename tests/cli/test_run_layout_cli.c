/* `vmsplit run --layout L` end to end: the built binary (argv[1]) as a user
 * runs it. Expected values: hello.asm's 10 user instructions and its line;
 * one CR3 write per kernel entry and exit from user mode under 4g4g, none
 * under 3g1g (REFERENCES.md), so hello's write + exit make 2 + 1; the #PF
 * error code of a ring-3 write to a present supervisor page, P|W|U = 0x7
 * (SDM Vol. 3A §4.7); the exit-status convention (0 guest exit 0, 1 any
 * other end, 2 bad input); TASK_SIZE 0xC0000000 for 3g1g, 0xFF000000 for
 * 4g4g. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "../test_prog.h"

static const char *vmsplit;

/* `vmsplit run ARGS...` with the binary under test. */
static TestRun run(const char *const *args)
{
    return test_run_vmsplit(vmsplit, "run", args);
}

START_TEST(hello_4g4g_text)
{
    char *hello = test_source("workloads/guest/hello.asm");
    const char *args[] = { "--layout", "4g4g", hello, NULL };
    TestRun r = run(args);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "Hello from a vmsplit guest.\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "layout          4g4g ("));
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 0"));
    ck_assert_ptr_nonnull(strstr(r.out, "(user 10, kernel "));
    ck_assert_ptr_nonnull(strstr(r.out, "syscalls        2\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "CR3 writes      3 "));
    ck_assert_ptr_nonnull(strstr(r.out, "simulated time"));
    ck_assert_ptr_nonnull(strstr(r.out, "lookups"));
    test_run_free(&r);
    g_free(hello);
}
END_TEST

START_TEST(hello_3g1g_json)
{
    char *hello = test_source("workloads/guest/hello.asm");
    const char *args[] = { "--json", "--layout", "3g1g", hello, NULL };
    TestRun r = run(args);
    ck_assert_int_eq(r.status, 0);
    JsonParser *p = json_parser_new();
    GError *e = NULL;
    ck_assert_msg(json_parser_load_from_data(p, r.out, -1, &e), "%s", e ? e->message : "?");
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_str_eq(json_object_get_string_member(o, "layout"), "3g1g");
    ck_assert_str_eq(json_object_get_string_member(o, "guest_stdout"),
                     "Hello from a vmsplit guest.\n");
    ck_assert_str_eq(json_object_get_string_member(o, "stopped"), "exit");
    ck_assert_int_eq(json_object_get_int_member(o, "exit_status"), 0);
    ck_assert_int_eq(json_object_get_int_member(o, "instructions_user"), 10);
    ck_assert_int_eq(json_object_get_int_member(o, "syscalls"), 2);
    ck_assert_int_eq(json_object_get_int_member(o, "cr3_writes"), 0);
    ck_assert_int_eq(json_object_get_int_member(o, "tlb_flushes_cr3"), 0);
    ck_assert_int_eq(json_object_get_int_member(o, "bytes_written"), 28);
    ck_assert(json_object_has_member(o, "tlb"));
    g_object_unref(p);
    test_run_free(&r);
    g_free(hello);
}
END_TEST

/* --paging legacy: the same program on the same layout with 32-bit
 * (2-level) page tables. The stubs are the same, so the CR3 writes are too
 * (2 entries + 1 exit, as above); what differs is what a MOV CR3 does:
 * under PAE it loads the four PDPTEs from memory (SDM Vol. 3A 4.4.1), under
 * 32-bit paging there are no PDPTE registers (4.3), so the MMU's CR3 cycles
 * (its memory side) are zero. */
static JsonObject *run_json(const char *paging, const char *hello, JsonParser *p)
{
    const char *a_pae[] = { "--json", "--layout", "4g4g", hello, NULL };
    const char *a_other[] = { "--json", "--layout", "4g4g", "--paging", paging, hello, NULL };
    TestRun r = run(paging ? a_other : a_pae);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    GError *e = NULL;
    ck_assert_msg(json_parser_load_from_data(p, r.out, -1, &e), "%s", e ? e->message : "?");
    test_run_free(&r);
    return json_node_get_object(json_parser_get_root(p));
}

START_TEST(hello_legacy_paging)
{
    char *hello = test_source("workloads/guest/hello.asm");
    JsonParser *pl = json_parser_new(), *pp = json_parser_new();
    JsonObject *legacy = run_json("legacy", hello, pl), *pae = run_json(NULL, hello, pp);
    ck_assert_str_eq(json_object_get_string_member(legacy, "paging"), "legacy");
    ck_assert_str_eq(json_object_get_string_member(pae, "paging"), "pae");
    ck_assert_str_eq(json_object_get_string_member(legacy, "guest_stdout"),
                     "Hello from a vmsplit guest.\n");
    ck_assert_int_eq(json_object_get_int_member(legacy, "instructions_user"), 10);
    ck_assert_int_eq(json_object_get_int_member(legacy, "cr3_writes"), 3);
    ck_assert_int_eq(json_object_get_int_member(pae, "cr3_writes"), 3);
    JsonObject *ml = json_object_get_object_member(legacy, "mmu");
    JsonObject *mp = json_object_get_object_member(pae, "mmu");
    ck_assert_int_eq(json_object_get_int_member(ml, "cr3_cycles"), 0);
    ck_assert_int_gt(json_object_get_int_member(mp, "cr3_cycles"), 0);
    g_object_unref(pl);
    g_object_unref(pp);

    const char *text[] = { "--layout", "3g1g", "--paging", "legacy", hello, NULL };
    TestRun r = run(text);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "paging          legacy\n"));
    test_run_free(&r);
    /* bad input: exit status 2 and a message naming the problem */
    const char *b1[] = { "--paging", "legacy", hello, NULL };
    const char *b2[] = { "--layout", "4g4g", "--paging", "pse", hello, NULL };
    const char *b3[] = { "--layout", "4g4g", "--paging", "legacy", "--ram", "8G", hello, NULL };
    const char *const *bad[] = { b1, b2, b3 };
    const char *expect[] = { "need --layout", "'pse'", "at most 4 GiB" };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        r = run(bad[i]);
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, expect[i]), "%zu: %s", i, r.err);
        test_run_free(&r);
    }
    g_free(hello);
}
END_TEST

START_TEST(guest_fault_and_status)
{
    char *p = test_write_asm("BITS 32\nglobal _start\n_start: mov dword [0xC0000000], 1\n");
    const char *a1[] = { "--layout", "3g1g", p, NULL };
    TestRun r = run(a1);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "stopped         fault\n"));
    ck_assert_msg(strstr(r.out, "guest fault     #PF (vector 14, error code 0x7) at EIP "
                                "0x08048000 in ring 3, CR2 0xc0000000"), "%s", r.out);
    test_run_free(&r);
    test_remove_asm(p);
    p = test_write_asm("BITS 32\nglobal _start\n_start: mov eax, 1\n mov ebx, 42\n int 0x80\n");
    const char *a2[] = { "--layout", "kpti", p, NULL };
    r = run(a2);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 42"));
    test_run_free(&r);
    test_remove_asm(p);
}
END_TEST

START_TEST(user_range)
{
    char *exe = test_write_exec(0xC0000000u);
    const char *a1[] = { "--layout", "3g1g", exe, NULL };
    TestRun r = run(a1);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, exe) && strstr(r.err, "3g1g"), "%s", r.err);
    test_run_free(&r);
    const char *a2[] = { "--layout", "4g4g", exe, NULL };
    r = run(a2);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 7"));
    test_run_free(&r);
    g_unlink(exe);
    g_free(exe);
}
END_TEST

START_TEST(bad_options)
{
    const char *a1[] = { "--layout", "5g5g", "x.o", NULL };
    TestRun r = run(a1);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "5g5g"));
    ck_assert_ptr_nonnull(strstr(r.err, "4g4g"));
    test_run_free(&r);
    const char *a2[] = { "--ram", "1G", "x.o", NULL };
    r = run(a2);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--layout"));
    test_run_free(&r);
    const char *a3[] = { "--layout", "4g4g", "--ram", "lots", "x.o", NULL };
    r = run(a3);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "lots"));
    test_run_free(&r);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-VMSPLIT\n", argv[0]);
        return 2;
    }
    vmsplit = argv[1];
    Suite *s = suite_create("run-layout-cli");
    TCase *tc = tcase_create("run --layout");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hello_4g4g_text);
    tcase_add_test(tc, hello_3g1g_json);
    tcase_add_test(tc, hello_legacy_paging);
    tcase_add_test(tc, guest_fault_and_status);
    tcase_add_test(tc, user_range);
    tcase_add_test(tc, bad_options);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
