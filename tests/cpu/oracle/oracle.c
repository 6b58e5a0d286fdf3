/* The host-oracle harness: see oracle.h. */
#include "oracle_priv.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <gio/gio.h>

#include "cpu/cpu.h"
#include "cpu/elfload.h"
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

static void case_free(gpointer p)
{
    OracleCase *c = p;
    g_free(c->name);
    g_free(c->code);
    for (int k = 0; k < 8; k++)
        g_free(c->init[k]);
    g_free(c->excluded_insn);
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

const char *oracle_set_title(const OracleSet *s) { return s->title; }

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

/* The data, the stacks and the two subroutines both programs share: the
 * text of reset and save assembles to the same operations in BITS 32 and
 * BITS 64 (in the latter, nasm gives the [pattern+esi]-style operands an
 * address-size prefix; every label is below 2 GiB). The .data and .bss
 * layouts must stay the same in both: the long-mode program is linked at
 * the i386 program's addresses. */
static void append_common(GString *t, const OracleSet *s, OracleHost host)
{
    g_string_append(t, host == ORACLE_HOST_LONG ? "BITS 64\ndefault abs\n" : "BITS 32\n");
    g_string_append(t, "section .data\nalign 64\npattern: db ");
    for (unsigned i = 0; i < BUF_SIZE; i++)
        g_string_append_printf(t, "%s%u", i ? "," : "", pattern_byte(i));
    g_string_append(t, "\nalign 64\nglobal buf\nbuf: times 64 db 0\n"
                       "section .bss\nalignb 64\nresults: resb ");
    g_string_append_printf(t, "%u\n", s->cases->len * RES_SIZE);
    g_string_append(t, "alignb 64\nstack: resb 4096\nstack_top:\ntstack: resb 256\ntstack_top:\n");
    /* Long mode only, after everything the i386 program has: per case the
     * upper halves of the registers ORed (see case_epilogue), then the
     * addresses of pattern and results, to check the link. */
    if (host == ORACLE_HOST_LONG)
        g_string_append_printf(t, "upper: resd %u\naddrs: resd 2\n", s->cases->len);
    g_string_append(t,
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
}

/* Case n up to the end of its snippet: EFLAGS, then the registers. In long
 * mode `mov esp, ...` and the 32-bit MOVs zero bits 63..32 of every
 * register the snippet can name, which the string, LOOP and XLAT
 * instructions (64-bit addresses there) rely on. */
static void case_prologue(GString *t, const OracleCase *c, guint n, OracleHost host)
{
    g_string_append_printf(t, "case_%u:\n    mov esp, tstack_top\n    call reset\n"
                              "    push %s 0x%x\n    %s\n    mov esp, stack_top\n",
                           n, host == ORACLE_HOST_LONG ? "qword" : "dword", c->eflags | 0x2,
                           host == ORACLE_HOST_LONG ? "popfq" : "popfd");
    for (int k = 0; k < 8; k++)
        if (k != 4)
            g_string_append_printf(t, "    mov %s, %s\n", reg_names[k], c->init[k]);
    char *comment = g_strdelimit(g_strdup(c->name), "\n", ';');
    g_string_append_printf(t, "; %s\n%s\n", comment, c->code);
    g_free(comment);
}

/* After the snippet: the registers, EFLAGS, buf and the stack into results.
 * Long mode also stores, in upper[n], bits 63..32 of RAX..RDI ORed: an i386
 * snippet never sets them, so nonzero means the snippet did something
 * 64-bit there (and compare fails it). */
static void case_epilogue(GString *t, guint n, OracleHost host)
{
    unsigned res = n * RES_SIZE;
    for (int k = 0; k < 8; k++)
        g_string_append_printf(t, "    mov [results+%u], %s\n", res + 4 * k, reg_names[k]);
    if (host == ORACLE_HOST_LONG) {
        g_string_append_printf(t, "    mov r9, rsp\n    mov esp, tstack_top\n    pushfq\n"
                                  "    pop r8\n    mov [results+%u], r8d\n",
                               res + RES_FLAGS);
        static const char *const r64[] = { "rax", "rcx", "rdx", "rbx", "rbp", "rsi", "rdi" };
        for (unsigned k = 0; k < G_N_ELEMENTS(r64); k++)
            g_string_append_printf(t, "    or r9, %s\n", r64[k]);
        g_string_append_printf(t, "    shr r9, 32\n    mov [upper+%u], r9d\n", 4 * n);
    } else {
        g_string_append_printf(t, "    mov esp, tstack_top\n    pushfd\n"
                                  "    pop dword [results+%u]\n", res + RES_FLAGS);
    }
    g_string_append_printf(t, "    cld\n    mov edi, results+%u\n    call save\n", res);
}

/* write(1, results, size) and exit(0): Linux i386 int 0x80 (which the
 * runtime provides too) or x86-64 syscall; in long mode a second write of
 * upper and addrs. */
static void append_exit(GString *t, const OracleSet *s, OracleHost host)
{
    unsigned size = s->cases->len * RES_SIZE;
    if (host == ORACLE_HOST_LONG)
        g_string_append_printf(t, "    mov dword [addrs], pattern\n    mov dword [addrs+4], results\n"
                                  "    mov eax, 1\n    mov edi, 1\n    mov esi, results\n"
                                  "    mov edx, %u\n    syscall\n"
                                  "    mov eax, 1\n    mov edi, 1\n    mov esi, upper\n"
                                  "    mov edx, %u\n    syscall\n"
                                  "    mov eax, 60\n    xor edi, edi\n    syscall\n",
                               size, s->cases->len * 4 + 8);
    else
        g_string_append_printf(t, "    mov eax, 4\n    mov ebx, 1\n    mov ecx, results\n"
                                  "    mov edx, %u\n    int 0x80\n    mov eax, 1\n    xor ebx, ebx\n"
                                  "    int 0x80\n", size);
}

static guint count_lines(const char *p)
{
    guint n = 0;
    for (; *p; p++)
        n += *p == '\n';
    return n;
}

/* The program for host. The long-mode one leaves out the excluded cases
 * (their results stay zero). If case_line is not NULL it receives the
 * 1-based line of each case's label, and at [cases] the line after the
 * last case, for mapping nasm's complaints back to cases. */
static char *program_text(const OracleSet *s, OracleHost host, guint *case_line)
{
    GString *t = g_string_new(NULL);
    append_common(t, s, host);
    guint line = 1 + count_lines(t->str);
    for (guint n = 0; n < s->cases->len; n++) {
        const OracleCase *c = g_ptr_array_index(s->cases, n);
        gsize from = t->len;
        if (case_line)
            case_line[n] = line;
        if (host == ORACLE_HOST_LONG && c->excluded) {
            g_string_append_printf(t, "case_%u: ; excluded: %s\n", n, c->excluded);
        } else {
            case_prologue(t, c, n, host);
            case_epilogue(t, n, host);
        }
        line += count_lines(t->str + from);
    }
    if (case_line)
        case_line[s->cases->len] = line;
    append_exit(t, s, host);
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

/* dir/name (g_free it). */
static char *path_in(const char *dir, const char *name)
{
    return g_build_filename(dir, name, NULL);
}

/* text into dir/NAME.asm, assembled (nasm -f format) into dir/NAME.o. */
static bool assemble(const char *dir, const char *name, const char *text, const char *format,
                     GString *report)
{
    char *base = path_in(dir, name);
    char *src = g_strconcat(base, ".asm", NULL), *obj = g_strconcat(base, ".o", NULL);
    const char *nasm[] = { VMSPLIT_NASM, "-f", format, src, "-o", obj, NULL };
    bool ok = g_file_set_contents(src, text, -1, NULL) && spawn(nasm, NULL, report);
    g_free(base);
    g_free(src);
    g_free(obj);
    return ok;
}

/* dir/NAME.o linked into dir/NAME with ld and the options (NULL-ended);
 * the executable's path, or NULL. */
static char *link_exe(const char *dir, const char *name, const char *const opts[],
                      GString *report)
{
    char *exe = path_in(dir, name), *obj = g_strconcat(exe, ".o", NULL);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "ld");
    for (; *opts; opts++)
        g_ptr_array_add(argv, (char *)*opts);
    const char *tail[] = { obj, "-o", exe, NULL };
    for (unsigned k = 0; k < G_N_ELEMENTS(tail); k++)
        g_ptr_array_add(argv, (char *)tail[k]);
    bool ok = spawn((const char *const *)argv->pdata, NULL, report);
    g_ptr_array_free(argv, TRUE);
    g_free(obj);
    if (!ok) {
        g_free(exe);
        return NULL;
    }
    return exe;
}

/* The i386 program, assembled and linked; its path, or NULL. */
static char *build_i386(const OracleSet *s, const char *dir, GString *report)
{
    char *text = program_text(s, ORACLE_HOST_I386, NULL);
    static const char *const opts[] = { "-m", "elf_i386", NULL };
    char *exe = assemble(dir, "oracle", text, "elf32", report)
                    ? link_exe(dir, "oracle", opts, report)
                    : NULL;
    g_free(text);
    return exe;
}

/* Run exe natively; its output, or NULL. */
static GString *run_native(const char *exe, GString *report)
{
    const char *run[] = { exe, NULL };
    GString *out = NULL;
    return spawn(run, &out, report) ? out : NULL;
}

/* Assemble the long-mode program, excluding the denied cases first and then
 * those nasm rejects. A second assembly takes the rejected cases out; a
 * third is allowed in case nasm reports in stages, then it is a failure. */
static bool assemble_long(OracleSet *s, const char *dir, GString *report)
{
    oracle_long_exclude_denied(s);
    guint *case_line = g_new(guint, s->cases->len + 1);
    bool ok = false, rejected = true;
    for (int round = 0; round < 3 && rejected; round++) {
        char *text = program_text(s, ORACLE_HOST_LONG, case_line);
        GString *err = g_string_new(NULL);
        ok = assemble(dir, "oracle64", text, "elf64", err);
        rejected = !ok && oracle_long_exclude_rejected(s, text, case_line, err->str, report);
        g_string_free(err, TRUE);
        g_free(text);
    }
    if (!ok && rejected)
        g_string_append(report, "nasm still rejects the long-mode program after 3 rounds\n");
    g_free(case_line);
    return ok;
}

/* The i386 program's .data and .bss addresses (pattern and results are
 * the first label of each), which the long-mode program is linked at. */
static bool i386_layout(const char *exe, uint32_t *data, uint32_t *bss, GString *report)
{
    GError *err = NULL;
    ElfObject *o = elfload_file(exe, NULL, &err);
    bool ok = o && elfload_symbol(o, "pattern", data) && elfload_symbol(o, "results", bss);
    if (!ok)
        g_string_append_printf(report, "no pattern/results in %s: %s\n", exe,
                               err ? err->message : "symbol missing");
    if (err)
        g_error_free(err);
    if (o)
        elfload_free(o);
    return ok;
}

/* Build and run the long-mode program at exe32's addresses. Its results
 * table, or NULL; *upper receives the per-case upper-half words. */
static GString *run_long(OracleSet *s, const char *dir, const char *exe32, GString **upper,
                         GString *report)
{
    uint32_t data, bss;
    if (!i386_layout(exe32, &data, &bss, report) || !assemble_long(s, dir, report))
        return NULL;
    char *tdata = g_strdup_printf("-Tdata=0x%x", data), *tbss = g_strdup_printf("-Tbss=0x%x", bss);
    const char *const opts[] = { "-m", "elf_x86_64", "-no-pie", tdata, tbss, NULL };
    char *exe = link_exe(dir, "oracle64", opts, report);
    GString *out = exe ? run_native(exe, report) : NULL;
    g_free(exe);
    g_free(tdata);
    g_free(tbss);
    size_t size = s->cases->len * RES_SIZE;
    if (out && out->len != size + s->cases->len * 4 + 8) {
        g_string_append_printf(report, "the long-mode program wrote %zu bytes\n", out->len);
    } else if (out) {
        uint32_t at[2];
        memcpy(at, out->str + out->len - 8, 8);
        if (at[0] == data && at[1] == bss) {
            *upper = g_string_new_len(out->str + size, (gssize)(out->len - size - 8));
            g_string_truncate(out, size);
            return out;
        }
        g_string_append_printf(report, "the long-mode program is linked at 0x%x/0x%x, "
                                       "not 0x%x/0x%x\n", at[0], at[1], data, bss);
    }
    if (out)
        g_string_free(out, TRUE);
    return NULL;
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

/* Compare every case the host ran; the number that differ. */
static int compare_all(const OracleSet *s, const GString *nat, const GString *upper,
                       const GString *sim, GString *report, int max_report)
{
    int bad = 0;
    for (guint n = 0; n < s->cases->len; n++) {
        const OracleCase *c = g_ptr_array_index(s->cases, n);
        if (upper && c->excluded)
            continue;
        GString *msg = g_string_new(NULL);
        bool same = compare_case(c, nat, sim, n * RES_SIZE, msg);
        if (upper && get32(upper, 4 * n)) {
            g_string_append_printf(msg, " long mode: bits 63..32 of a register became 0x%08x "
                                        "(not the i386 instruction there);", get32(upper, 4 * n));
            same = false;
        }
        if (!same) {
            if (bad < max_report)
                g_string_append_printf(report, "%s case %u [%s]:%s\n", s->title, n, c->name,
                                       msg->str);
            bad++;
        }
        g_string_free(msg, TRUE);
    }
    return bad;
}

/* Remove the temporary files (kept with VMSPLIT_ORACLE_KEEP set, for
 * debugging a case by hand). */
static void remove_files(char *dir, GString *report)
{
    if (g_getenv("VMSPLIT_ORACLE_KEEP")) {
        g_string_append_printf(report, "(files kept in %s)\n", dir);
        g_free(dir);
        return;
    }
    static const char *const names[] = { "oracle.asm",   "oracle.o",   "oracle",
                                         "oracle64.asm", "oracle64.o", "oracle64" };
    for (unsigned k = 0; k < G_N_ELEMENTS(names); k++) {
        char *p = path_in(dir, names[k]);
        g_unlink(p);
        g_free(p);
    }
    g_rmdir(dir);
    g_free(dir);
}

int oracle_run(OracleSet *s, OracleHost host, bool decode_cache, GString *report,
               int max_report)
{
    char *dir = g_dir_make_tmp("vmsplit-oracle-XXXXXX", NULL);
    if (!dir) {
        g_string_append(report, "cannot create a temporary directory\n");
        return -1;
    }
    GString *nat = NULL, *upper = NULL, *sim = NULL;
    char *exe = build_i386(s, dir, report);
    if (exe)
        nat = host == ORACLE_HOST_LONG ? run_long(s, dir, exe, &upper, report)
                                       : run_native(exe, report);
    if (nat)
        sim = run_simulated(exe, decode_cache, report);
    int bad = -1;
    if (sim && (sim->len != nat->len || nat->len != s->cases->len * RES_SIZE))
        g_string_append_printf(report, "%s: core wrote %zu bytes, host %zu\n", s->title,
                               sim->len, nat->len);
    else if (sim)
        bad = compare_all(s, nat, upper, sim, report, max_report);
    remove_files(dir, report);
    g_free(exe);
    GString *outs[] = { nat, upper, sim };
    for (unsigned k = 0; k < G_N_ELEMENTS(outs); k++)
        if (outs[k])
            g_string_free(outs[k], TRUE);
    return bad;
}
