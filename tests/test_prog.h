/* Helpers shared by the tests that run guest programs (tests/cpu,
 * tests/kernel_model, tests/cli): running the built binary, bundled
 * sources, scratch .asm files and a minimal ELF executable. */
#ifndef VMSPLIT_TESTS_TEST_PROG_H
#define VMSPLIT_TESTS_TEST_PROG_H

#include <check.h>
#include <elf.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a run of the binary printed, and its exit status (-1: killed). */
typedef struct {
    char *out, *err;
    int status;
} TestRun;

/* Runs `vmsplit CMD ARGS...` (args NULL-terminated). */
static inline TestRun test_run_vmsplit(const char *vmsplit, const char *cmd,
                                       const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)vmsplit);
    g_ptr_array_add(argv, (char *)cmd);
    for (; *args; args++)
        g_ptr_array_add(argv, (char *)*args);
    g_ptr_array_add(argv, NULL);
    TestRun r = { 0 };
    int ws;
    GError *e = NULL;
    ck_assert_msg(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &r.out, &r.err, &ws, &e), "%s", e ? e->message : "?");
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    g_ptr_array_free(argv, TRUE);
    return r;
}

static inline void test_run_free(TestRun *r)
{
    g_free(r->out);
    g_free(r->err);
}

/* A file of the source tree (VMSPLIT_SOURCE_DIR). */
static inline char *test_source(const char *rel)
{
    return g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), rel, NULL);
}

/* A program written to a temporary .asm; test_remove_asm removes it. */
static inline char *test_write_asm(const char *text)
{
    char *dir = g_dir_make_tmp("vmsplit-prog-XXXXXX", NULL);
    char *p = g_build_filename(dir, "prog.asm", NULL);
    ck_assert(g_file_set_contents(p, text, -1, NULL));
    g_free(dir);
    return p;
}

static inline void test_remove_asm(char *p)
{
    char *dir = g_path_get_dirname(p);
    g_unlink(p);
    g_rmdir(dir);
    g_free(dir);
    g_free(p);
}

/* A minimal ET_EXEC in a temporary file: one PT_LOAD at vaddr holding the
 * headers and `mov eax, 1; mov ebx, 7; int 0x80` (exit(7)). NULL if the
 * file cannot be written. No Check assertions: test_host_runs_i386 calls
 * it before any test runs. */
static inline char *test_exec_file(uint32_t vaddr)
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
    Elf32_Phdr ph = { .p_type = PT_LOAD, .p_offset = 0, .p_vaddr = vaddr, .p_paddr = vaddr,
                      .p_filesz = sizeof img, .p_memsz = sizeof img, .p_flags = PF_R | PF_X,
                      .p_align = 0x1000 };
    memcpy(img, &eh, sizeof eh);
    memcpy(img + sizeof eh, &ph, sizeof ph);
    memcpy(img + sizeof eh + sizeof ph, code, sizeof code);
    char *path = NULL;
    int fd = g_file_open_tmp("vmsplit-exec-XXXXXX", &path, NULL);
    if (fd < 0)
        return NULL;
    close(fd);
    if (!g_file_set_contents(path, (const char *)img, sizeof img, NULL)) {
        g_unlink(path);
        g_free(path);
        return NULL;
    }
    return path;
}

/* test_exec_file inside a test. */
static inline char *test_write_exec(uint32_t vaddr)
{
    char *path = test_exec_file(vaddr);
    ck_assert_msg(path, "cannot write a temporary ELF file");
    return path;
}

/* Whether this host executes i386 programs: the tests that take the host
 * CPU as their oracle (tests/cpu: cpu_oracle, guest_native) need it, and
 * not every x86-64 machine has it (a kernel without IA-32 emulation, or a
 * hypervisor that gives 32-bit code segments no way to run, refuses the
 * exec or faults the first 32-bit instruction). Runs test_write_exec's
 * exit(7) through posix_spawn, which, unlike g_spawn and execvp, never
 * hands an unrunnable file to /bin/sh. On false, *why says what happened
 * (g_free it). */
static inline bool test_host_runs_i386(char **why)
{
    char *path = test_exec_file(0x08048000);
    if (!path) {
        *why = g_strdup("cannot write a temporary file to probe i386 execution");
        return false;
    }
    g_chmod(path, 0755);
    char *argv[] = { path, NULL };
    pid_t pid;
    int status = 0, err = posix_spawn(&pid, path, NULL, NULL, argv, NULL);
    if (err == 0 && waitpid(pid, &status, 0) < 0)
        err = errno;
    g_unlink(path);
    g_free(path);
    if (err != 0)
        *why = g_strdup_printf("the host cannot execute i386 programs (exec: %s)", g_strerror(err));
    else if (WIFSIGNALED(status))
        *why = g_strdup_printf("the host cannot execute i386 programs (an i386 exit(7) was "
                               "killed by signal %d)", WTERMSIG(status));
    else if (WEXITSTATUS(status) != 7)
        *why = g_strdup_printf("the host cannot execute i386 programs (an i386 exit(7) exited "
                               "with %d)", WEXITSTATUS(status));
    else
        return true;
    return false;
}

/* meson's exit status for a skipped test. */
#define TEST_EXIT_SKIP 77

#endif
