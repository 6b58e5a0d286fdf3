/* vmsplit syscall end to end (the binary is argv[1]). Expectations come from
 * the designs: CR3 writes per call 0 under 3g1g and 2 under 4g4g, kpti and
 * kpti-pcid; kpti-pcid drops no TLB entry; 4g4g maps each user page it
 * copies with one kmap; the parts of the breakdown add up to the total;
 * editing a stub changes what is measured. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

static const char *vmsplit;

static int run(const char *const *args, char **out, char **err)
{
    GPtrArray *a = g_ptr_array_new();
    g_ptr_array_add(a, (char *)vmsplit);
    g_ptr_array_add(a, "syscall");
    for (; *args; args++)
        g_ptr_array_add(a, (char *)*args);
    g_ptr_array_add(a, NULL);
    int status = -1;
    ck_assert(g_spawn_sync(NULL, (char **)a->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, NULL));
    g_ptr_array_free(a, TRUE);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static double num(JsonObject *o, const char *k) { return json_object_get_double_member(o, k); }

static JsonArray *layouts_of(JsonParser *p, const char *out)
{
    ck_assert(json_parser_load_from_data(p, out, -1, NULL));
    return json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "layouts");
}

START_TEST(cr3_writes_per_layout)
{
    const char *args[] = { "--json", "--count", "50", NULL };
    char *out, *err;
    ck_assert_int_eq(run(args, &out, &err), 0);
    JsonParser *p = json_parser_new();
    JsonArray *ls = layouts_of(p, out);
    ck_assert_uint_eq(json_array_get_length(ls), 4);
    static const double want[] = { 0, 2, 2, 2 };
    for (guint i = 0; i < 4; i++) {
        JsonObject *o = json_array_get_object_element(ls, i);
        ck_assert(num(o, "cr3_writes") == want[i]);
        double parts = num(o, "base") + num(o, "cr3") + num(o, "walks") + num(o, "uaccess") + num(o, "body");
        ck_assert_msg(parts == num(o, "cycles"), "%s: parts %f total %f",
                      json_object_get_string_member(o, "layout"), parts, num(o, "cycles"));
    }
    ck_assert(num(json_array_get_object_element(ls, 1), "tlb_dropped") > 0);   /* 4g4g */
    ck_assert(num(json_array_get_object_element(ls, 3), "tlb_dropped") == 0);  /* kpti-pcid */
    ck_assert(json_object_get_boolean_member(json_array_get_object_element(ls, 3), "what_if"));
    g_object_unref(p);
    g_free(out);
    g_free(err);
}
END_TEST

START_TEST(kmap_per_page)
{
    const char *args[] = { "--json", "--count", "5", "--layouts", "4g4g,3g1g", "--bytes-out", "8192", "read", NULL };
    char *out, *err;
    ck_assert_int_eq(run(args, &out, &err), 0);
    JsonParser *p = json_parser_new();
    JsonArray *ls = layouts_of(p, out);
    ck_assert(num(json_array_get_object_element(ls, 0), "kmaps") == 2);
    ck_assert(num(json_array_get_object_element(ls, 1), "kmaps") == 0);
    ck_assert(num(json_array_get_object_element(ls, 0), "uaccess") > 0);
    g_object_unref(p);
    g_free(out);
    g_free(err);
}
END_TEST

/* A copy of the shared stub that reloads CR3 on every int 0x80 entry. */
START_TEST(edited_stub)
{
    char *dir = g_dir_make_tmp("vmsplit-stub-XXXXXX", NULL);
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    char *text = NULL, *inc = NULL;
    char *sp = g_build_filename(src, "src/kernel_model/stubs/entry_shared.asm", NULL);
    char *ip = g_build_filename(src, "src/kernel_model/stubs/common.inc", NULL);
    ck_assert(g_file_get_contents(sp, &text, NULL, NULL) && g_file_get_contents(ip, &inc, NULL, NULL));
    const char *anchor = "    SAVE_ALL\n    CALL_BODY\n";
    char *at = strstr(text, anchor);
    ck_assert_ptr_nonnull(at);
    GString *edited = g_string_new_len(text, at - text);
    g_string_append(edited, "    SAVE_ALL\n    mov edx, cr3\n    mov cr3, edx\n    CALL_BODY\n");
    g_string_append(edited, at + strlen(anchor));
    char *stub = g_build_filename(dir, "entry_shared.asm", NULL);
    char *incout = g_build_filename(dir, "common.inc", NULL);
    g_file_set_contents(stub, edited->str, -1, NULL);
    g_file_set_contents(incout, inc, -1, NULL);
    const char *args[] = { "--json", "--count", "5", "--layouts", "3g1g", "--stubs", stub, NULL };
    char *out, *err;
    ck_assert_int_eq(run(args, &out, &err), 0);
    JsonParser *p = json_parser_new();
    JsonArray *ls = layouts_of(p, out);
    ck_assert(num(json_array_get_object_element(ls, 0), "cr3_writes") == 1);
    g_object_unref(p);
    g_free(out);
    g_free(err);
    g_remove(stub);
    g_remove(incout);
    g_rmdir(dir);
    g_string_free(edited, TRUE);
    g_free(text);
    g_free(inc);
    g_free(sp);
    g_free(ip);
    g_free(stub);
    g_free(incout);
    g_free(dir);
}
END_TEST

START_TEST(bad_input)
{
    static const char *const cases[][5] = {
        { "no_such_call", NULL },
        { "--layouts", "5g5g", NULL },
        { "--count", "0", NULL },
        { "--stubs", "/nonexistent/stub.o", "--layouts", "3g1g", NULL },
        { "--cpu", "p9", NULL },
        { "--ram", "lots", NULL },
        { "a", "b", NULL },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *out, *err;
        ck_assert_int_eq(run(cases[i], &out, &err), 2);
        ck_assert_msg(strlen(err) > 0, "case %zu printed no message", i);
        g_free(out);
        g_free(err);
    }
}
END_TEST

int main(int argc, char **argv)
{
    g_assert(argc == 2);
    vmsplit = argv[1];
    Suite *s = suite_create("syscall-cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cr3_writes_per_layout);
    tcase_add_test(tc, kmap_per_page);
    tcase_add_test(tc, edited_stub);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
