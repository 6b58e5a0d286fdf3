/* A captured syscall as a trace's `sys` event: the same fields
 * import-strace fills from strace's text, here from register values. */
#include "replay/capture_syscall.h"

#include "replay/capture_import.h"

#include <string.h>

/* The futex operation's name as strace prints it (uapi/linux/futex.h). */
static const char *futex_op_name(uint64_t op)
{
    static const char *const names[] = {
        "FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_FD", "FUTEX_REQUEUE", "FUTEX_CMP_REQUEUE",
        "FUTEX_WAKE_OP", "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI", "FUTEX_TRYLOCK_PI",
        "FUTEX_WAIT_BITSET", "FUTEX_WAKE_BITSET", "FUTEX_WAIT_REQUEUE_PI",
        "FUTEX_CMP_REQUEUE_PI", "FUTEX_LOCK_PI2"};
    unsigned cmd = (unsigned)(op & 0x7f);
    if (cmd >= G_N_ELEMENTS(names))
        return NULL;
    if (!(op & 128)) /* FUTEX_PRIVATE_FLAG */
        return g_intern_static_string(names[cmd]);
    char buf[64];
    g_snprintf(buf, sizeof buf, "%s_PRIVATE", names[cmd]);
    return g_intern_string(buf);
}

void capture_syscall_event(const CaptureSys *s, uint32_t tid, uint64_t block_ns, TraceEvent *ev,
                           bool *known)
{
    trace_event_init(ev, TRACE_EV_SYSCALL, tid);
    TraceSyscall *t = &ev->u.sys;
    const char *name = capture_syscall_name(s->nr);
    *known = name != NULL;
    if (name) {
        t->name = g_intern_string(name);
    } else {
        char buf[32];
        g_snprintf(buf, sizeof buf, "syscall_%u", (unsigned)s->nr);
        t->name = g_intern_string(buf);
    }
    unsigned id = syscall_lookup(t->name, strlen(t->name));
    const SyscallInfo *info = syscall_info(id);
    t->nr = (uint16_t)id;
    bool ends = s->nr == X64_EXIT || s->nr == X64_EXIT_GROUP;
    t->ret_known = s->has_exit && !ends;
    bool failed = capture_sys_failed(s);
    if (t->ret_known) {
        t->ret = failed ? -1 : s->regs.ret;
        if (failed) {
            const char *e = strerrorname_np((int)-s->regs.ret);
            char buf[32];
            if (!e) {
                g_snprintf(buf, sizeof buf, "E%d", (int)-s->regs.ret);
                e = buf;
            }
            t->err = g_intern_string(e);
        }
    }
    if (info->fd_arg >= 0)
        t->fd = (int32_t)(uint32_t)s->regs.args[info->fd_arg]; /* an int in the ABI */
    if (info->req_arg >= 0)
        t->req = s->regs.args[info->req_arg];
    if (s->nr == 202) /* futex */
        t->op = futex_op_name(s->regs.args[1]);
    for (int i = 0; i < SYSCALL_MAX_TERMS; i++) {
        t->in += syscall_bytes_regs(&info->in[i], &s->regs);
        if (t->ret_known && !failed)
            t->out += syscall_bytes_regs(&info->out[i], &s->regs);
    }
    if (s->has_exit && s->t_exit > s->t_entry && !ends)
        t->dur_ns = s->t_exit - s->t_entry;
    t->blocked = info->may_block && t->dur_ns >= block_ns && block_ns > 0;
}
