/* The host-oracle harness: see oracle.h. */
#include "oracle.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <gio/gio.h>

#include "cpu/cpu.h"
#include "cpu/runenv.h"
#include "config.h"

/* One result: EAX..EDI, EFLAGS, buf[64], the top 32 bytes of the stack. */
#define RES_REGS 0
#define RES_FLAGS 32
#define RES_BUF 36
#define RES_STACK 100
#define RES_SIZE 132
#define BUF_SIZE 64
#define STACK_CHECK 32

typedef struct {
    char *name, *code;
    char *init[8];
    uint32_t eflags, undef;
} OracleCase;

struct OracleSet {
    char *title;
    GPtrArray *cases;
};

static void case_free(gpointer p)
{
    OracleCase *c = p;
    g_free(c->name);
    g_free(c->code);
    for (int k = 0; k < 8; k++)
        g_free(c->init[k]);
    g_free(c);
}

OracleSet *oracle_set_new(const char *title)
{
    OracleSet *s = g_new0(OracleSet, 1);
    s->title = g_strdup(title);
    s->cases = g_ptr_array_new_with_free_func(case_free);
    return s;
}

void oracle_set_free(OracleSet *s)
{
    g_ptr_array_free(s->cases, TRUE);
    g_free(s->title);
    g_free(s);
}

size_t oracle_set_size(const OracleSet *s) { return s->cases->len; }

void oracle_add(OracleSet *s, const char *name, const char *code,
                const char *const init[8], uint32_t eflags, uint32_t undef)
{
    OracleCase *c = g_new0(OracleCase, 1);
    c->name = g_strdup(name);
    c->code = g_strdup(code);
    for (int k = 0; k < 8; k++)
        c->init[k] = g_strdup(init && init[k] ? init[k] : "0");
    c->eflags = eflags;
    c->undef = undef;
    g_ptr_array_add(s->cases, c);
}

void oracle_addv(OracleSet *s, const char *name, const char *code,
                 const uint32_t init[8], uint32_t eflags, uint32_t undef)
{
    char buf[8][16];
    const char *p[8];
    for (int k = 0; k < 8; k++) {
        snprintf(buf[k], sizeof buf[k], "0x%08x", init ? init[k] : 0);
        p[k] = buf[k];
    }
    oracle_add(s, name, code, p, eflags, undef);
}

/* The pattern buf is reset to before each case: bytes 32..43 repeat bytes
 * 0..11, so that REPE CMPS finds equal runs. */
static uint8_t pattern_byte(unsigned i)
{
    unsigned j = i >= 32 && i < 44 ? i - 32 : i;
    return (uint8_t)(j * 37u + 11u + (j >> 3) * 64u);
}

static const char *const reg_names[8] = { "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi" };

static char *program_text(const OracleSet *s)
{
    GString *t = g_string_new("BITS 32\nsection .data\nalign 64\npattern: db ");
    for (unsigned i = 0; i < BUF_SIZE; i++)
        g_string_append_printf(t, "%s%u", i ? "," : "", pattern_byte(i));
    g_string_append(t, "\nalign 64\nglobal buf\nbuf: times 64 db 0\n"
                       "section .bss\nalignb 64\nresults: resb ");
    g_string_append_printf(t, "%u\n", s->cases->len * RES_SIZE);
    g_string_append(t,
        "alignb 64\nstack: resb 4096\nstack_top:\ntstack: resb 256\ntstack_top:\n"
        "section .text\nglobal _start\n"
        "reset:\n    xor esi, esi\n.l: mov eax, [pattern+esi]\n    mov [buf+esi], eax\n"
        "    add esi, 4\n    cmp esi, 64\n    jne .l\n    xor eax, eax\n"
        "    mov [stack_top-32], eax\n    mov [stack_top-28], eax\n    mov [stack_top-24], eax\n"
        "    mov [stack_top-20], eax\n    mov [stack_top-16], eax\n    mov [stack_top-12], eax\n"
        "    mov [stack_top-8], eax\n    mov [stack_top-4], eax\n    ret\n"
        "save:\n    xor esi, esi\n.l: mov eax, [buf+esi]\n    mov [edi+36+esi], eax\n"
        "    add esi, 4\n    cmp esi, 64\n    jne .l\n    xor esi, esi\n"
        ".m: mov eax, [stack_top-32+esi]\n    mov [edi+100+esi], eax\n    add esi, 4\n"
        "    cmp esi, 32\n    jne .m\n    ret\n"
        "_start:\n");
    for (guint n = 0; n < s->cases->len; n++) {
        const OracleCase *c = g_ptr_array_index(s->cases, n);
        unsigned res = n * RES_SIZE;
        g_string_append_printf(t, "case_%u:\n    mov esp, tstack_top\n    call reset\n"
                                  "    push dword 0x%x\n    popfd\n    mov esp, stack_top\n",
                               n, c->eflags | 0x2);
        for (int k = 0; k < 8; k++)
            if (k != 4)
                g_string_append_printf(t, "    mov %s, %s\n", reg_names[k], c->init[k]);
        char *comment = g_strdelimit(g_strdup(c->name), "\n", ';');
        g_string_append_printf(t, "; %s\n%s\n", comment, c->code);
        g_free(comment);
        for (int k = 0; k < 8; k++)
            g_string_append_printf(t, "    mov [results+%u], %s\n", res + 4 * k, reg_names[k]);
        g_string_append_printf(t, "    mov esp, tstack_top\n    pushfd\n    pop dword [results+%u]\n"
                                  "    cld\n    mov edi, results+%u\n    call save\n",
                               res + RES_FLAGS, res);
    }
    g_string_append_printf(t, "    mov eax, 4\n    mov ebx, 1\n    mov ecx, results\n"
                              "    mov edx, %u\n    int 0x80\n    mov eax, 1\n    xor ebx, ebx\n"
                              "    int 0x80\n", s->cases->len * RES_SIZE);
    return g_string_free(t, FALSE);
}

/* Run argv; its stdout (binary) into *out if out is not NULL. */
static bool spawn(const char *const argv[], GString **out, GString *report)
{
    GError *e = NULL;
    GSubprocess *p = g_subprocess_newv(argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                       G_SUBPROCESS_FLAGS_STDERR_PIPE, &e);
    GBytes *ob = NULL, *eb = NULL;
    bool ok = p && g_subprocess_communicate(p, NULL, NULL, &ob, &eb, &e);
    if (!ok) {
        g_string_append_printf(report, "cannot run %s: %s\n", argv[0], e->message);
        g_error_free(e);
    } else if (!g_subprocess_get_if_exited(p) || g_subprocess_get_exit_status(p) != 0) {
        gsize n;
        const char *err = g_bytes_get_data(eb, &n);
        g_string_append_printf(report, "%s failed: %.*s\n", argv[0], (int)n, err ? err : "");
        ok = false;
    } else if (out) {
        gsize n;
        const char *d = g_bytes_get_data(ob, &n);
        *out = g_string_new_len(d, (gssize)n);
    }
    if (ob)
        g_bytes_unref(ob);
    if (eb)
        g_bytes_unref(eb);
    if (p)
        g_object_unref(p);
    return ok;
}

/* Assemble, link, run natively; returns the executable's path. */
static char *build_native(const OracleSet *s, const char *dir, GString **native, GString *report)
{
    char *src = g_build_filename(dir, "oracle.asm", NULL);
    char *obj = g_build_filename(dir, "oracle.o", NULL);
    char *exe = g_build_filename(dir, "oracle", NULL);
    char *text = program_text(s);
    bool ok = g_file_set_contents(src, text, -1, NULL);
    g_free(text);
    const char *nasm[] = { VMSPLIT_NASM, "-f", "elf32", src, "-o", obj, NULL };
    const char *ld[] = { "ld", "-m", "elf_i386", obj, "-o", exe, NULL };
    const char *run[] = { exe, NULL };
    ok = ok && spawn(nasm, NULL, report) && spawn(ld, NULL, report) &&
         spawn(run, native, report);
    g_free(src);
    g_free(obj);
    if (!ok) {
        g_free(exe);
        return NULL;
    }
    return exe;
}

static GString *run_simulated(const char *exe, bool decode_cache, GString *report)
{
    GString *out = g_string_new(NULL);
    RunEnvOptions opt = { .preset = NULL, .no_decode_cache = !decode_cache, .out = out };
    GError *err = NULL;
    RunEnv *e = runenv_new(&opt, &err);
    if (!e || !runenv_load(e, exe, &err)) {
        g_string_append_printf(report, "runenv: %s\n", err->message);
        g_error_free(err);
        runenv_free(e);
        g_string_free(out, TRUE);
        return NULL;
    }
    RunEnvState st = runenv_run(e, 100000000);
    if (st != RUNENV_EXITED || runenv_exit_status(e) != 0) {
        char *d = st == RUNENV_FAULTED         ? runenv_describe_fault(e)
                  : st == RUNENV_TRIPLE_FAULT  ? cpu_describe_triple_fault(runenv_cpu(e))
                  : st == RUNENV_EXITED        ? g_strdup_printf("exit status %d",
                                                                 runenv_exit_status(e))
                                               : g_strdup("instruction budget or halt");
        g_string_append_printf(report, "simulated run did not exit 0 (state %d): %s\n", st, d);
        g_free(d);
        g_string_free(out, TRUE);
        out = NULL;
    }
    runenv_free(e);
    return out;
}

static uint32_t get32(const GString *g, size_t off)
{
    uint32_t v;
    memcpy(&v, g->str + off, 4);
    return v;
}

static bool compare_case(const OracleCase *c, const GString *nat, const GString *sim,
                         size_t base, GString *msg)
{
    bool same = true;
    for (int k = 0; k < 8; k++) {
        uint32_t a = get32(nat, base + 4 * k), b = get32(sim, base + 4 * k);
        if (a != b) {
            g_string_append_printf(msg, " %s: host 0x%08x core 0x%08x;", reg_names[k], a, b);
            same = false;
        }
    }
    uint32_t mask = ORACLE_FLAGS & ~c->undef;
    uint32_t fa = get32(nat, base + RES_FLAGS), fb = get32(sim, base + RES_FLAGS);
    if ((fa ^ fb) & mask) {
        g_string_append_printf(msg, " eflags: host 0x%04x core 0x%04x (compared 0x%04x);",
                               fa & ORACLE_FLAGS, fb & ORACLE_FLAGS, mask);
        same = false;
    }
    for (unsigned i = RES_BUF; i < RES_SIZE; i++)
        if (nat->str[base + i] != sim->str[base + i]) {
            g_string_append_printf(msg, " %s[%u]: host 0x%02x core 0x%02x;",
                                   i < RES_STACK ? "buf" : "stack_top-32",
                                   i < RES_STACK ? i - RES_BUF : i - RES_STACK,
                                   (uint8_t)nat->str[base + i], (uint8_t)sim->str[base + i]);
            same = false;
            break;
        }
    return same;
}

int oracle_run(OracleSet *s, bool decode_cache, GString *report, int max_report)
{
    char *dir = g_dir_make_tmp("vmsplit-oracle-XXXXXX", NULL);
    if (!dir) {
        g_string_append(report, "cannot create a temporary directory\n");
        return -1;
    }
    GString *nat = NULL, *sim = NULL;
    char *exe = build_native(s, dir, &nat, report);
    int bad = -1;
    if (exe)
        sim = run_simulated(exe, decode_cache, report);
    if (sim && (sim->len != nat->len || nat->len != s->cases->len * RES_SIZE))
        g_string_append_printf(report, "%s: core wrote %zu bytes, host %zu\n", s->title,
                               sim->len, nat->len);
    else if (sim) {
        bad = 0;
        for (guint n = 0; n < s->cases->len; n++) {
            const OracleCase *c = g_ptr_array_index(s->cases, n);
            GString *msg = g_string_new(NULL);
            if (!compare_case(c, nat, sim, n * RES_SIZE, msg)) {
                if (bad < max_report)
                    g_string_append_printf(report, "%s case %u [%s]:%s\n", s->title, n, c->name,
                                           msg->str);
                bad++;
            }
            g_string_free(msg, TRUE);
        }
    }
    /* Clean up the temporary files (kept with VMSPLIT_ORACLE_KEEP set, for
     * debugging a case by hand). */
    if (g_getenv("VMSPLIT_ORACLE_KEEP")) {
        g_string_append_printf(report, "(files kept in %s)\n", dir);
        g_free(dir);
        dir = NULL;
    }
    for (unsigned k = 0; dir && k < 3; k++) {
        static const char *const names[] = { "oracle.asm", "oracle.o", "oracle" };
        char *p = g_build_filename(dir, names[k], NULL);
        g_unlink(p);
        g_free(p);
    }
    if (dir)
        g_rmdir(dir);
    g_free(dir);
    g_free(exe);
    if (nat)
        g_string_free(nat, TRUE);
    if (sim)
        g_string_free(sim, TRUE);
    return bad;
}
