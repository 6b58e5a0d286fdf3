/* Evaluating syscall_table.h's rules on one strace call. */
#include "replay/strace_event.h"

#include <string.h>

#define OP_MAX 127

void strace_call_split(StraceCall *c)
{
    c->nargs = strace_split_args(c->all_args, c->args, STRACE_EVENT_MAX_ARGS);
}

bool strace_call_ok(const StraceCall *c)
{
    return c->ret_known && c->ret >= 0 && c->err.len == 0;
}

static const StraceText *arg(const StraceCall *c, int i)
{
    if (i < 0 || (unsigned)i >= c->nargs || i >= STRACE_EVENT_MAX_ARGS)
        return NULL;
    return &c->args[i];
}

static bool arg_int(const StraceCall *c, int i, int64_t *v)
{
    const StraceText *a = arg(c, i);
    return a && strace_arg_int(*a, v);
}

static uint64_t arg_count(const StraceCall *c, int i)
{
    int64_t v;
    return arg_int(c, i, &v) && v > 0 ? (uint64_t)v : 0;
}

/* The futex ops that read the user-space futex word (kernel/futex: the
 * wait paths get_user() it; WAKE_OP and the requeue and PI ops read or
 * modify it too). FUTEX_WAKE and FUTEX_WAKE_BITSET only hash the address. */
static bool futex_reads_word(const StraceText *op)
{
    static const char *const readers[] = {"FUTEX_WAIT", "FUTEX_CMP_REQUEUE", "FUTEX_WAKE_OP",
                                          "FUTEX_LOCK_PI", "FUTEX_TRYLOCK_PI", "FUTEX_UNLOCK_PI"};
    for (unsigned i = 0; op && i < G_N_ELEMENTS(readers); i++) {
        size_t n = strlen(readers[i]);
        if (op->len >= n && memcmp(op->p, readers[i], n) == 0)
            return true;
    }
    return false;
}

static uint64_t term(const SyscallBytes *t, const StraceCall *c)
{
    size_t len;
    bool cut;
    const StraceText *a = arg(c, t->arg);
    uint64_t ret = strace_call_ok(c) ? (uint64_t)c->ret : 0;
    switch ((SyscallBytesKind)t->kind) {
    case BYTES_NONE: return 0;
    case BYTES_RET: return ret;
    case BYTES_RET_TIMES: return ret * t->size;
    case BYTES_ARG: return arg_count(c, t->arg);
    case BYTES_ARG_TIMES: return arg_count(c, t->arg) * t->size;
    case BYTES_FIXED: return t->size;
    case BYTES_PTR: return a && strace_arg_nonnull(*a) ? t->size : 0;
    case BYTES_STR: return a && strace_arg_strlen(*a, &len, &cut) ? len + 1 : 0;
    case BYTES_FDSET: {
        uint64_t per = (arg_count(c, t->arg) + 31) / 32 * 4, sum = 0;
        for (int i = 1; i <= 3; i++) {
            const StraceText *set = arg(c, t->arg + i);
            sum += set && strace_arg_nonnull(*set) ? per : 0;
        }
        return sum;
    }
    case BYTES_FUTEX: return futex_reads_word(arg(c, 1)) ? 4 : 0;
    }
    g_assert_not_reached();
}

static const char *op_name(const StraceText *a)
{
    size_t n = 0;
    if (!a)
        return NULL;
    while (n < a->len && n < OP_MAX && (g_ascii_isalnum(a->p[n]) || a->p[n] == '_' ||
                                        a->p[n] == '|'))
        n++;
    if (n == 0)
        return NULL;
    char buf[OP_MAX + 1];
    memcpy(buf, a->p, n);
    buf[n] = '\0';
    return g_intern_string(buf);
}

void strace_call_to_syscall(const StraceCall *c, uint32_t pid, TraceEvent *ev)
{
    trace_event_init(ev, TRACE_EV_SYSCALL, pid);
    TraceSyscall *s = &ev->u.sys;
    char name[SYSCALL_NAME_MAX + 1];
    size_t nlen = MIN(c->name.len, (size_t)SYSCALL_NAME_MAX);
    memcpy(name, c->name.p, nlen);
    name[nlen] = '\0';
    s->name = g_intern_string(name);
    unsigned id = syscall_lookup(name, nlen);
    s->nr = (uint16_t)id;
    s->ret_known = c->ret_known;
    s->ret = c->ret_known ? c->ret : 0;
    if (c->err.len) {
        char *e = g_strndup(c->err.p, MIN(c->err.len, (size_t)OP_MAX));
        s->err = g_intern_string(e);
        g_free(e);
    }
    const SyscallInfo *info = syscall_info(id);
    int64_t v;
    if (arg_int(c, info->fd_arg, &v) && v > INT32_MIN && v <= INT32_MAX)
        s->fd = (int32_t)v;
    s->req = arg_count(c, info->req_arg);
    s->op = op_name(arg(c, info->op_arg));
    for (int i = 0; i < SYSCALL_MAX_TERMS; i++) {
        s->in += term(&info->in[i], c);
        if (strace_call_ok(c))
            s->out += term(&info->out[i], c);
    }
}

static uint8_t prot_bits(const StraceText *a)
{
    uint8_t p = 0;
    if (a && strace_text_has_symbol(*a, "PROT_READ"))
        p |= TRACE_PROT_READ;
    if (a && strace_text_has_symbol(*a, "PROT_WRITE"))
        p |= TRACE_PROT_WRITE;
    if (a && strace_text_has_symbol(*a, "PROT_EXEC"))
        p |= TRACE_PROT_EXEC;
    return p;
}

void strace_call_to_map(const StraceCall *c, SyscallRole role, uint32_t pid, TraceEvent *ev)
{
    int64_t addr = 0;
    const StraceText *flags = arg(c, 3);
    switch (role) {
    case SYSCALL_ROLE_MMAP:
        trace_event_init(ev, TRACE_EV_MMAP, pid);
        ev->u.map.addr = (uint64_t)c->ret;
        ev->u.map.prot = prot_bits(arg(c, 2));
        if (flags && (strace_text_has_symbol(*flags, "MAP_SHARED") ||
                      strace_text_has_symbol(*flags, "MAP_SHARED_VALIDATE")))
            ev->u.map.flags |= TRACE_MAP_SHARED;
        if (flags && (strace_text_has_symbol(*flags, "MAP_ANONYMOUS") ||
                      strace_text_has_symbol(*flags, "MAP_ANON")))
            ev->u.map.flags |= TRACE_MAP_ANON;
        break;
    case SYSCALL_ROLE_MUNMAP:
    case SYSCALL_ROLE_MPROTECT:
        trace_event_init(ev, role == SYSCALL_ROLE_MUNMAP ? TRACE_EV_MUNMAP : TRACE_EV_MPROTECT,
                         pid);
        arg_int(c, 0, &addr);
        ev->u.map.addr = (uint64_t)addr;
        if (role == SYSCALL_ROLE_MPROTECT)
            ev->u.map.prot = prot_bits(arg(c, 2));
        break;
    default: g_assert_not_reached();
    }
    ev->u.map.len = arg_count(c, 1);
}

bool strace_call_shares_vm(const StraceCall *c)
{
    if (c->name.len == 5 && memcmp(c->name.p, "vfork", 5) == 0)
        return true;
    return strace_text_has_symbol(c->all_args, "CLONE_VM");
}

char *strace_call_exec_path(const StraceCall *c)
{
    bool execveat = c->name.len == 8 && memcmp(c->name.p, "execveat", 8) == 0;
    const StraceText *a = arg(c, execveat ? 1 : 0);
    bool cut;
    return a ? strace_arg_unquote(*a, &cut) : NULL;
}

char *strace_call_exec_command(const StraceCall *c)
{
    bool execveat = c->name.len == 8 && memcmp(c->name.p, "execveat", 8) == 0;
    const StraceText *a = arg(c, execveat ? 2 : 1);
    if (!a || a->len < 2 || a->p[0] != '[' || a->p[a->len - 1] != ']')
        return NULL;
    StraceText inner = {a->p + 1, a->len - 2}, words[64];
    unsigned n = strace_split_args(inner, words, G_N_ELEMENTS(words));
    GString *cmd = g_string_new(NULL);
    for (unsigned i = 0; i < MIN(n, G_N_ELEMENTS(words)); i++) {
        bool cut = false;
        char *w = strace_arg_unquote(words[i], &cut);
        if (cmd->len)
            g_string_append_c(cmd, ' ');
        /* Control characters would break the one-line header value. */
        for (char *p = w; p && *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
        g_string_append(cmd, w ? w : "...");
        if (cut)
            g_string_append(cmd, "...");
        g_free(w);
    }
    if (n > G_N_ELEMENTS(words))
        g_string_append(cmd, " ...");
    return g_string_free(cmd, FALSE);
}
