/* `vmsplit run` end to end: the built binary (argv[1]) on bundled and
 * generated programs. Checks the exit-status convention (0 guest exit 0,
 * 1 guest failure of any kind, 2 bad input), the report's content in text
 * and JSON, and that a fault is reported with its vector, address and CR2. */
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

START_TEST(test_hello_text)
{
    char *hello = test_source("workloads/guest/hello.asm");
    const char *args[] = { "--cpu", "p4-northwood", hello, NULL };
    TestRun r = run(args);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "Hello from a vmsplit guest.\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 0"));
    /* hello.asm: 10 user instructions (its header counts them). */
    ck_assert_ptr_nonnull(strstr(r.out, "(user 10, kernel "));
    ck_assert_ptr_nonnull(strstr(r.out, "p4-northwood (2800 MHz)"));
    ck_assert_ptr_nonnull(strstr(r.out, "simulated time"));
    ck_assert_ptr_nonnull(strstr(r.out, "lookups"));
    test_run_free(&r);
    g_free(hello);
}
END_TEST

START_TEST(test_json)
{
    char *hello = test_source("workloads/guest/hello.asm");
    const char *args[] = { "--json", "--no-decode-cache", hello, NULL };
    TestRun r = run(args);
    ck_assert_int_eq(r.status, 0);
    /* stdout is one JSON object; the guest's output is inside it. */
    JsonParser *p = json_parser_new();
    GError *e = NULL;
    ck_assert_msg(json_parser_load_from_data(p, r.out, -1, &e), "%s", e ? e->message : "?");
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_str_eq(json_object_get_string_member(o, "guest_stdout"),
                     "Hello from a vmsplit guest.\n");
    ck_assert_str_eq(json_object_get_string_member(o, "stopped"), "exit");
    ck_assert_int_eq(json_object_get_int_member(o, "exit_status"), 0);
    ck_assert_int_eq(json_object_get_int_member(o, "instructions_user"), 10);
    ck_assert(json_object_get_int_member(o, "cycles") > json_object_get_int_member(o, "instructions"));
    ck_assert(!json_object_get_boolean_member(o, "decode_cache"));
    ck_assert(json_object_has_member(o, "tlb"));
    ck_assert(json_object_has_member(o, "mmu"));
    g_object_unref(p);
    test_run_free(&r);
    g_free(hello);
}
END_TEST

/* The JSON report of `run ARGS... --json PROGRAM` with the host lines
 * removed: what the model computed, nothing about host time. */
static JsonObject *model_report(const char *const *args, JsonParser **keep)
{
    TestRun r = run(args);
    /* 1: the instruction budget ran out (checked below through "stopped"). */
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    *keep = json_parser_new();
    GError *e = NULL;
    ck_assert_msg(json_parser_load_from_data(*keep, r.out, -1, &e), "%s", e ? e->message : "?");
    test_run_free(&r);
    JsonObject *o = json_node_get_object(json_parser_get_root(*keep));
    json_object_remove_member(o, "host_seconds");
    json_object_remove_member(o, "host_minsns_per_second");
    return o;
}

/* --no-shortcuts turns the decoded cache and the MMU's memos off, and every
 * modelled figure stays what it is with them on (docs/speed.md). */
START_TEST(test_no_shortcuts)
{
    char *prog = test_source("workloads/guest/pageloop.asm");
    for (int layout = 0; layout < 2; layout++) {
        const char *on[] = { "--json", "--max-insns", "200000", layout ? "--layout" : prog,
                             layout ? "4g4g" : NULL, layout ? prog : NULL, NULL };
        const char *off[] = { "--json", "--no-shortcuts", "--max-insns", "200000",
                              layout ? "--layout" : prog, layout ? "4g4g" : NULL,
                              layout ? prog : NULL, NULL };
        JsonParser *pon, *poff;
        JsonObject *a = model_report(on, &pon), *b = model_report(off, &poff);
        ck_assert(json_object_get_boolean_member(a, "decode_cache"));
        ck_assert(json_object_get_boolean_member(a, "mmu_memos"));
        ck_assert(!json_object_get_boolean_member(b, "decode_cache"));
        ck_assert(!json_object_get_boolean_member(b, "mmu_memos"));
        json_object_remove_member(a, "decode_cache");
        json_object_remove_member(a, "mmu_memos");
        json_object_remove_member(b, "decode_cache");
        json_object_remove_member(b, "mmu_memos");
        ck_assert_int_eq(json_object_get_int_member(a, "instructions"), 200000);
        ck_assert_str_eq(json_object_get_string_member(a, "stopped"), "max-insns");
        JsonNode *na = json_node_init_object(json_node_alloc(), a);
        JsonNode *nb = json_node_init_object(json_node_alloc(), b);
        ck_assert_msg(json_node_equal(na, nb), "layout %d: figures differ", layout);
        json_node_unref(na);
        json_node_unref(nb);
        g_object_unref(pon);
        g_object_unref(poff);
    }
    g_free(prog);
}
END_TEST

START_TEST(test_guest_exit_status)
{
    char *p = test_write_asm("BITS 32\nglobal _start\n_start: mov eax, 1\n mov ebx, 42\n int 0x80\n");
    const char *args[] = { p, NULL };
    TestRun r = run(args);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 42"));
    test_run_free(&r);
    test_remove_asm(p);
}
END_TEST

START_TEST(test_guest_fault)
{
    /* A write to address 0x10 from ring 3: #PF, error code 6 (W U, not
     * present), CR2 0x10, at the MOV (the program's first instruction). */
    char *p = test_write_asm("BITS 32\nglobal _start\n_start: mov dword [0x10], 1\n");
    const char *args[] = { p, NULL };
    TestRun r = run(args);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "#PF (vector 14, error code 0x6) at EIP 0x08048000 in ring 3, CR2 0x00000010"));
    test_run_free(&r);
    test_remove_asm(p);
}
END_TEST

START_TEST(test_budget)
{
    char *p = test_write_asm("BITS 32\nglobal _start\n_start: jmp _start\n");
    const char *args[] = { "--max-insns", "1000", p, NULL };
    TestRun r = run(args);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "stopped         max-insns"));
    test_run_free(&r);
    test_remove_asm(p);
}
END_TEST

START_TEST(test_bad_input)
{
    /* Assembly error: nasm's message names the file and line. */
    char *p = test_write_asm("BITS 32\nglobal _start\n_start: mov eax, [[\n");
    const char *a1[] = { p, NULL };
    TestRun r = run(a1);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "prog.asm:3"));
    test_run_free(&r);
    test_remove_asm(p);
    /* Not an ELF object. */
    char *notelf = test_source("workloads/guest/README.md");
    const char *a2[] = { notelf, NULL };
    r = run(a2);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "README.md"));
    test_run_free(&r);
    g_free(notelf);
    /* Unknown preset, bad --max-insns, no program. */
    const char *a3[] = { "--cpu", "no-such-cpu", "x.o", NULL };
    r = run(a3);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no-such-cpu"));
    test_run_free(&r);
    const char *a4[] = { "--max-insns", "12x", "x.o", NULL };
    r = run(a4);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--max-insns"));
    test_run_free(&r);
    const char *a5[] = { NULL };
    r = run(a5);
    ck_assert_int_eq(r.status, 2);
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
    Suite *s = suite_create("cpu_run");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_hello_text);
    tcase_add_test(t, test_json);
    tcase_add_test(t, test_no_shortcuts);
    tcase_add_test(t, test_guest_exit_status);
    tcase_add_test(t, test_guest_fault);
    tcase_add_test(t, test_budget);
    tcase_add_test(t, test_bad_input);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
