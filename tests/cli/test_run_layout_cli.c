/* `vmsplit run --layout L` end to end: the built binary (argv[1]) as a user
 * runs it. Expected values: hello.asm's 10 user instructions and its line;
 * one CR3 write per kernel entry and exit from user mode under 4g4g, none
 * under 3g1g (REFERENCES.md), so hello's write + exit make 2 + 1; the #PF
 * error code of a ring-3 write to a present supervisor page, P|W|U = 0x7
 * (SDM Vol. 3A §4.7); the exit-status convention (0 guest exit 0, 1 any
 * other end, 2 bad input); TASK_SIZE 0xC0000000 for 3g1g, 0xFF000000 for
 * 4g4g. */
#include <check.h>
#include <elf.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *vmsplit;

typedef struct {
    char *out, *err;
    int status;
} Result;

static Result run(const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)vmsplit);
    g_ptr_array_add(argv, (char *)"run");
    for (; *args; args++)
        g_ptr_array_add(argv, (char *)*args);
    g_ptr_array_add(argv, NULL);
    Result r = { 0 };
    int ws;
    GError *e = NULL;
    ck_assert_msg(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &r.out, &r.err, &ws, &e), "%s", e ? e->message : "?");
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    g_ptr_array_free(argv, TRUE);
    return r;
}

static void result_free(Result *r)
{
    g_free(r->out);
    g_free(r->err);
}

static char *source(const char *rel)
{
    return g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), rel, NULL);
}

static char *write_asm(const char *text)
{
    char *dir = g_dir_make_tmp("vmsplit-runl-XXXXXX", NULL);
    char *p = g_build_filename(dir, "prog.asm", NULL);
    ck_assert(g_file_set_contents(p, text, -1, NULL));
    g_free(dir);
    return p;
}

static void remove_asm(char *p)
{
    char *dir = g_path_get_dirname(p);
    g_unlink(p);
    g_rmdir(dir);
    g_free(dir);
    g_free(p);
}

/* A minimal ET_EXEC at vaddr: exit(7). */
static char *write_exec(uint32_t vaddr)
{
    static const uint8_t code[] = { 0xB8, 1, 0, 0, 0, 0xBB, 7, 0, 0, 0, 0xCD, 0x80 };
    uint8_t img[sizeof(Elf32_Ehdr) + sizeof(Elf32_Phdr) + sizeof code];
    Elf32_Ehdr eh = { 0 };
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS32;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_EXEC;
    eh.e_machine = EM_386;
    eh.e_version = EV_CURRENT;
    eh.e_entry = vaddr + sizeof(Elf32_Ehdr) + sizeof(Elf32_Phdr);
    eh.e_phoff = sizeof(Elf32_Ehdr);
    eh.e_ehsize = sizeof(Elf32_Ehdr);
    eh.e_phentsize = sizeof(Elf32_Phdr);
    eh.e_phnum = 1;
    Elf32_Phdr ph = { .p_type = PT_LOAD, .p_vaddr = vaddr, .p_paddr = vaddr,
                      .p_filesz = sizeof img, .p_memsz = sizeof img, .p_flags = PF_R | PF_X,
                      .p_align = 0x1000 };
    memcpy(img, &eh, sizeof eh);
    memcpy(img + sizeof eh, &ph, sizeof ph);
    memcpy(img + sizeof eh + sizeof ph, code, sizeof code);
    char *path = NULL;
    int fd = g_file_open_tmp("vmsplit-exec-XXXXXX", &path, NULL);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert(g_file_set_contents(path, (const char *)img, sizeof img, NULL));
    return path;
}

START_TEST(hello_4g4g_text)
{
    char *hello = source("workloads/guest/hello.asm");
    const char *args[] = { "--layout", "4g4g", hello, NULL };
    Result r = run(args);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "Hello from a vmsplit guest.\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "layout          4g4g ("));
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 0"));
    ck_assert_ptr_nonnull(strstr(r.out, "(user 10, kernel "));
    ck_assert_ptr_nonnull(strstr(r.out, "syscalls        2\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "CR3 writes      3 "));
    ck_assert_ptr_nonnull(strstr(r.out, "simulated time"));
    ck_assert_ptr_nonnull(strstr(r.out, "lookups"));
    result_free(&r);
    g_free(hello);
}
END_TEST

START_TEST(hello_3g1g_json)
{
    char *hello = source("workloads/guest/hello.asm");
    const char *args[] = { "--json", "--layout", "3g1g", hello, NULL };
    Result r = run(args);
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
    result_free(&r);
    g_free(hello);
}
END_TEST

START_TEST(guest_fault_and_status)
{
    char *p = write_asm("BITS 32\nglobal _start\n_start: mov dword [0xC0000000], 1\n");
    const char *a1[] = { "--layout", "3g1g", p, NULL };
    Result r = run(a1);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "stopped         fault\n"));
    ck_assert_msg(strstr(r.out, "guest fault     #PF (vector 14, error code 0x7) at EIP "
                                "0x08048000 in ring 3, CR2 0xc0000000"), "%s", r.out);
    result_free(&r);
    remove_asm(p);
    p = write_asm("BITS 32\nglobal _start\n_start: mov eax, 1\n mov ebx, 42\n int 0x80\n");
    const char *a2[] = { "--layout", "kpti", p, NULL };
    r = run(a2);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 42"));
    result_free(&r);
    remove_asm(p);
}
END_TEST

START_TEST(user_range)
{
    char *exe = write_exec(0xC0000000u);
    const char *a1[] = { "--layout", "3g1g", exe, NULL };
    Result r = run(a1);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, exe) && strstr(r.err, "3g1g"), "%s", r.err);
    result_free(&r);
    const char *a2[] = { "--layout", "4g4g", exe, NULL };
    r = run(a2);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "guest exit status 7"));
    result_free(&r);
    g_unlink(exe);
    g_free(exe);
}
END_TEST

START_TEST(bad_options)
{
    const char *a1[] = { "--layout", "5g5g", "x.o", NULL };
    Result r = run(a1);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "5g5g"));
    ck_assert_ptr_nonnull(strstr(r.err, "4g4g"));
    result_free(&r);
    const char *a2[] = { "--ram", "1G", "x.o", NULL };
    r = run(a2);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--layout"));
    result_free(&r);
    const char *a3[] = { "--layout", "4g4g", "--ram", "lots", "x.o", NULL };
    r = run(a3);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "lots"));
    result_free(&r);
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
