/* The replay engine: see replay.h. */
#include "replay/replay.h"

#include "kernel_model/body.h"
#include "kernel_model/layout_mem.h"
#include "kernel_model/machine.h"
#include "kernel_model/profiles.h"
#include "kernel_model/usermm.h"
#include "replay/replay_refs.h"
#include "replay/syscall_table.h"
#include "replay/trace.h"
#include "tlb/hierarchy.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#define WS_VA 0x20000000u            /* each task's working set */
#define WS_MAX_PAGES 8192u           /* 32 MiB: enough for the traces' working sets */
#define BUF_VA 0x18000000u           /* each task's I/O buffer (copies wrap in it) */
#define BUF_PAGES 16u
#define COPY_MAX (1u << 20)          /* one call copies at most 1 MiB in the model */
#define CLOSE_SLAB 256u              /* what close() gives back (open's slab) */

typedef struct {
    bool live;
    int task;                        /* machine task */
    uint32_t ws_pages;               /* working-set pages mapped so far */
    bool buf_mapped;
    uint64_t slab;                   /* outstanding slab bytes */
    uint64_t tables;                 /* page-table + stack bytes charged */
    uint64_t brk;                    /* last heap break seen (0: none yet) */
} Proc;

struct ReplayResult {
    ReplayConfig cfg;
    ReplayTotals t;
    TlbStats tlb;
    GPtrArray *sys;                  /* ReplaySyscall*, sorted at the end */
    double host_seconds;
    UserWorkSkips skips;             /* what the fast-forward skipped */
    ReplayRefs refs;                 /* version 2: references and faults */
};

/* What a syscall name resolves to, worked out at its first call and kept
 * for the rest of the replay: its profile, whether the table knows it, its
 * per-name totals and whether it is close (which gives slab back). */
typedef struct {
    const char *name;                /* interned */
    const SyscallProfile *prof;
    bool known;
    bool is_close;
    ReplaySyscall *sys;              /* created after its first call completes */
} SysSlot;

typedef struct {
    ReplayResult *res;
    Machine *m;
    Cpu *cpu;
    KernelBody *kb;
    ProfileTable *prof;
    LowmemState *low;
    GHashTable *procs;               /* pid -> Proc* */
    uint32_t last_pid;               /* proc_of's one-entry cache: */
    Proc *last_proc;                 /* NULL, or procs[last_pid] */
    GHashTable *sysidx;              /* interned name -> SysSlot* (owned) */
    SysSlot **byid;                  /* syscall id -> the slot last resolved with it */
    unsigned nids;
    int dead_task;                   /* a task that exited while running, to free */
    UserMm *um;                      /* version-2 traces: address spaces, faults */
    RefsTotals refs;
} Replay;

/* Most events belong to the pid of the event before (FORMAT.md's running
 * pid), so the last answer is kept. Exact: the cache holds the table's own
 * value for last_pid, and proc_new and proc_forget, the only places that
 * change the table, keep it so. */
static Proc *proc_of(Replay *r, uint32_t pid)
{
    if (r->last_proc && r->last_pid == pid)
        return r->last_proc;
    Proc *p = g_hash_table_lookup(r->procs, GUINT_TO_POINTER(pid));
    if (p) {
        r->last_pid = pid;
        r->last_proc = p;
    }
    return p;
}

/* Removes (and frees) pid's Proc. */
static void proc_forget(Replay *r, uint32_t pid)
{
    if (r->last_pid == pid)
        r->last_proc = NULL;
    g_hash_table_remove(r->procs, GUINT_TO_POINTER(pid));
}

static void charge_task(Replay *r, Proc *p)
{
    ProcSpace *ps = machine_task_space(r->m, p->task);
    p->tables = (uint64_t)pspace_table_pages(ps) * PAGE_SIZE + THREAD_SIZE;
    lowmem_charge(r->low, p->tables, LOWMEM_REASON_PAGE_TABLES);
}

/* Version 2: page tables that page faults and fork's copies added since
 * the task was charged. */
static void recharge_tables(Replay *r, Proc *p)
{
    ProcSpace *ps = machine_task_space(r->m, p->task);
    uint64_t now = (uint64_t)pspace_table_pages(ps) * PAGE_SIZE + THREAD_SIZE;
    if (now > p->tables) {
        lowmem_charge(r->low, now - p->tables, LOWMEM_REASON_PAGE_TABLES);
        p->tables = now;
    }
}

static Proc *proc_new(Replay *r, uint32_t pid, int task)
{
    Proc *p = g_new0(Proc, 1);
    p->live = true;
    p->task = task;
    g_assert(!g_hash_table_contains(r->procs, GUINT_TO_POINTER(pid)));
    g_hash_table_insert(r->procs, GUINT_TO_POINTER(pid), p);
    r->last_pid = pid;
    r->last_proc = p;
    charge_task(r, p);
    return p;
}

/* A pid the trace did not fork: a process that existed before it began. */
static Proc *proc_get(Replay *r, uint32_t pid, GError **err)
{
    Proc *p = proc_of(r, pid);
    if (p && p->live)
        return p;
    int t = machine_task_new(r->m, err);
    if (t < 0)
        return NULL;
    if (p)                           /* pid reused after an exit */
        proc_forget(r, pid);
    return proc_new(r, pid, t);
}

static void proc_release(Replay *r, Proc *p)
{
    lowmem_release(r->low, p->tables, LOWMEM_REASON_PAGE_TABLES);
    if (p->slab)
        lowmem_release(r->low, p->slab, LOWMEM_REASON_SLAB);
    p->slab = 0;
    p->live = false;
}

static bool map_more(Replay *r, Proc *p, uint32_t pages, GError **err)
{
    pages = MIN(pages, WS_MAX_PAGES);
    if (pages <= p->ws_pages)
        return true;
    if (!machine_map_user(r->m, p->task, WS_VA + p->ws_pages * PAGE_SIZE, pages - p->ws_pages,
                          true, err))
        return false;
    p->ws_pages = pages;
    return true;
}

/* User work: the loop steps through the working set; seq walks it a line
 * at a time, rand jumps 7 pages and a line per step (7 is coprime with any
 * power-of-two page count, so it visits every page), hot stays in the first
 * eighth of the pages. */
static bool do_user(Replay *r, const TraceEvent *ev, GError **err)
{
    Proc *p = proc_get(r, ev->pid, err);
    uint32_t pages = MAX(1u, MIN(ev->u.user.pages, WS_MAX_PAGES));
    if (!p || !map_more(r, p, pages, err))
        return false;
    uint32_t span = pages, stride = 64;
    if (ev->u.user.pattern == TRACE_PAT_RAND)
        stride = 7 * PAGE_SIZE + 64;
    else if (ev->u.user.pattern == TRACE_PAT_HOT)
        span = MAX(1u, pages / 8);
    uint64_t c0 = cpu_cycles(r->cpu), i0 = cpu_insns(r->cpu);
    if (!machine_user_work(r->m, ev->u.user.insns, WS_VA, span * PAGE_SIZE, stride, err))
        return false;
    r->res->t.user_cycles += cpu_cycles(r->cpu) - c0;
    r->res->t.user_insns += cpu_insns(r->cpu) - i0;
    return true;
}

/* The slot of a syscall event's name. The trace reader gives each event its
 * name interned and its syscall_table id, so the slot last resolved with
 * the same id is checked first; the interned pointers being equal proves
 * it is the same name (names the table does not know share id 0 and only
 * hit when they repeat). Otherwise the name's hash entry, made and its
 * profile looked up on the name's first call. */
static SysSlot *sys_slot(Replay *r, const TraceSyscall *s)
{
    unsigned id = s->nr < r->nids ? s->nr : SYSCALL_ID_UNKNOWN;
    SysSlot *slot = r->byid[id];
    if (slot && slot->name == s->name)
        return slot;
    slot = g_hash_table_lookup(r->sysidx, s->name);
    if (!slot) {
        slot = g_new0(SysSlot, 1);
        slot->name = g_intern_string(s->name);
        slot->prof = profiles_find(r->prof, slot->name, &slot->known);
        slot->is_close = !strcmp(slot->prof->name, "close");
        g_hash_table_insert(r->sysidx, (gpointer)slot->name, slot);
    }
    r->byid[id] = slot;
    return slot;
}

/* Its per-name totals, made at the name's first completed call. */
static void sys_free(gpointer p)
{
    ReplaySyscall *s = p;
    lhist_clear(&s->hist);
    g_free(s);
}

static ReplaySyscall *sys_entry(Replay *r, SysSlot *slot)
{
    if (!slot->sys) {
        ReplaySyscall *s = g_new0(ReplaySyscall, 1);
        s->name = slot->name;
        s->known = slot->known;
        g_ptr_array_add(r->res->sys, s);
        slot->sys = s;
    }
    return slot->sys;
}

static uint32_t copy_bytes(uint64_t traced, uint32_t profile)
{
    if (traced)
        return (uint32_t)MIN(traced, (uint64_t)COPY_MAX);
    return profile == COPY_ARG ? 0 : profile;
}

/* Whether the state event after a syscall says it unmapped or changed the
 * protection of the caller's memory, which on Linux 2.6 i386 ends with a
 * TLB flush (body.c, flush_mm): munmap, mprotect, and brk moving the break
 * down (do_munmap). mmap and a growing brk only add mappings: no flush. A
 * failed call has no state event after it (FORMAT.md). */
static bool changes_mm(Replay *r, const TraceEvent *ev, const TraceEvent *next)
{
    if (!next || next->pid != ev->pid)
        return false;
    if (next->kind == TRACE_EV_MUNMAP || next->kind == TRACE_EV_MPROTECT)
        return true;
    if (next->kind == TRACE_EV_BRK) {
        Proc *p = proc_of(r, ev->pid);
        return p && p->brk && next->u.brk.addr < p->brk;
    }
    return false;
}

static bool do_syscall(Replay *r, const TraceEvent *ev, int switch_to, bool flush_mm,
                       GError **err)
{
    Proc *p = proc_get(r, ev->pid, err);
    if (!p)
        return false;
    SysSlot *slot = sys_slot(r, &ev->u.sys);
    const SyscallProfile *prof = slot->prof;
    bool known = slot->known;
    SyscallCall call = {
        .profile = prof,
        .bytes_in = copy_bytes(ev->u.sys.in, prof->copy_in),
        .bytes_out = copy_bytes(ev->u.sys.out, prof->copy_out),
        .user_buf = BUF_VA, .user_buf_bytes = BUF_PAGES * PAGE_SIZE,
        .ret = (uint32_t)ev->u.sys.ret,
        .switch_to = switch_to,
        .flush_mm = flush_mm,
    };
    if ((call.bytes_in || call.bytes_out) && !p->buf_mapped) {
        if (!machine_map_user(r->m, p->task, BUF_VA, BUF_PAGES, true, err))
            return false;
        p->buf_mapped = true;
    }
    SyscallCost c;
    if (!measure_syscall(r->m, r->kb, &call, &c, err))
        return false;
    if (switch_to < 0 && ev->u.sys.ret_known) {   /* what the program sees in EAX */
        r->res->refs.results_checked++;
        r->res->refs.results_wrong += cpu_reg(r->cpu, REG_EAX) != (uint32_t)ev->u.sys.ret;
    }
    ReplaySyscall *s = sys_entry(r, slot);
    syscall_cost_add(&s->sum, &c);
    lhist_add(&s->hist, c.cycles);
    r->res->t.syscalls++;
    r->res->t.unknown_syscalls += !known;
    r->res->t.syscall_cycles += c.cycles;
    if (prof->slab) {
        lowmem_charge(r->low, prof->slab, LOWMEM_REASON_SLAB);
        p->slab += prof->slab;
    }
    if (slot->is_close && p->slab) {
        uint64_t back = MIN(p->slab, (uint64_t)CLOSE_SLAB);
        lowmem_release(r->low, back, LOWMEM_REASON_SLAB);
        p->slab -= back;
    }
    return true;
}

static bool do_switch(Replay *r, uint32_t pid, GError **err)
{
    Proc *p = proc_get(r, pid, err);
    if (!p)
        return false;
    uint64_t c0 = cpu_cycles(r->cpu);
    if (!machine_switch_to(r->m, p->task, err))
        return false;
    r->res->t.switch_cycles += cpu_cycles(r->cpu) - c0;
    return true;
}

/* A refs event: the program's own references (replay_refs.h), its
 * reference lines read from tr. */
static bool do_refs(Replay *r, TraceReader *tr, const TraceEvent *ev, GError **err)
{
    Proc *p = proc_get(r, ev->pid, err);
    if (!p)
        return false;
    uint64_t c0 = r->refs.cycles;
    if (!replay_refs_run(r->m, r->um, tr, ev, &r->refs, err))
        return false;
    recharge_tables(r, p);
    r->res->t.user_cycles += r->refs.cycles - c0;
    r->res->t.user_insns += ev->u.refs.insns;
    return true;
}

/* Version 2: the address-space events change the task's mappings (what
 * page faults find). */
static bool do_mm_event(Replay *r, const TraceEvent *ev, GError **err)
{
    Proc *p = proc_get(r, ev->pid, err);
    if (!p)
        return false;
    switch ((TraceEventKind)ev->kind) {
    case TRACE_EV_MMAP:
        return usermm_mmap(r->um, p->task, ev->u.map.addr, ev->u.map.len, ev->u.map.prot,
                           ev->u.map.flags, err);
    case TRACE_EV_MUNMAP:
        return usermm_munmap(r->um, p->task, ev->u.map.addr, ev->u.map.len, err);
    case TRACE_EV_MPROTECT:
        return usermm_mprotect(r->um, p->task, ev->u.map.addr, ev->u.map.len, ev->u.map.prot,
                               err);
    case TRACE_EV_BRK:
        return usermm_brk(r->um, p->task, ev->u.brk.addr, err);
    case TRACE_EV_EXEC:
        usermm_exec(r->um, p->task);
        return true;
    default:
        g_assert_not_reached();
    }
}

static void reap(Replay *r)
{
    if (r->dead_task >= 0 && r->dead_task != machine_current(r->m)) {
        machine_task_free(r->m, r->dead_task);
        r->dead_task = -1;
    }
}

static bool do_event(Replay *r, const TraceEvent *ev, const TraceEvent *next, bool *ate_next,
                     GError **err)
{
    *ate_next = false;
    switch ((TraceEventKind)ev->kind) {
    case TRACE_EV_USER:
        return do_user(r, ev, err);
    case TRACE_EV_SYSCALL: {
        int to = -1;
        if (ev->u.sys.blocked && next && next->kind == TRACE_EV_SWITCH && next->pid != ev->pid) {
            Proc *np = proc_get(r, next->pid, err);
            if (!np)
                return false;
            to = np->task;
            *ate_next = true;
        }
        bool ok = do_syscall(r, ev, to, changes_mm(r, ev, next), err);
        if (ok && to >= 0)
            r->res->t.switches++;
        return ok;
    }
    case TRACE_EV_SWITCH:
        r->res->t.switches++;
        return do_switch(r, ev->pid, err);
    case TRACE_EV_FORK: {
        if (!proc_get(r, ev->pid, err))
            return false;
        int t = machine_task_new(r->m, err);
        if (t < 0)
            return false;
        if (proc_of(r, ev->u.fork.child))
            proc_forget(r, ev->u.fork.child);
        Proc *child = proc_new(r, ev->u.fork.child, t);
        r->res->t.forks++;
        if (!r->um)
            return true;
        if (!usermm_fork(r->um, proc_of(r, ev->pid)->task, t, ev->u.fork.shared_vm, err))
            return false;
        recharge_tables(r, child);
        return true;
    }
    case TRACE_EV_EXIT: {
        Proc *p = proc_of(r, ev->pid);
        if (p && p->live) {
            if (r->um)
                usermm_exit(r->um, p->task);
            proc_release(r, p);
            if (p->task == machine_current(r->m))
                r->dead_task = p->task;      /* freed once another task runs */
            else
                machine_task_free(r->m, p->task);
        }
        r->res->t.exits++;
        return true;
    }
    case TRACE_EV_BRK: {
        Proc *p = proc_get(r, ev->pid, err);
        if (!p)
            return false;
        p->brk = ev->u.brk.addr;
        r->res->t.map_events++;
        return !r->um || do_mm_event(r, ev, err);
    }
    case TRACE_EV_MMAP:
    case TRACE_EV_MUNMAP:
    case TRACE_EV_MPROTECT:
        /* Their cost is the syscall before them (and its flush); the
         * model's user working set is its own region, so nothing is
         * mapped or unmapped here; a version-2 trace's mappings are what
         * its page faults find. */
        r->res->t.map_events++;
        return !r->um || do_mm_event(r, ev, err);
    case TRACE_EV_EXEC:
        return !r->um || do_mm_event(r, ev, err);
    default:
        return true;                         /* signal: counted as an event */
    }
}

static void finish(Replay *r)
{
    Mmu *mmu = machine_mmu(r->m);
    const MmuStats *ms = mmu_stats(mmu);
    ReplayTotals *t = &r->res->t;
    t->cycles = cpu_cycles(machine_cpu(r->m));
    t->insns = cpu_insns(machine_cpu(r->m));
    t->cr3_writes = ms->cr3_writes;
    t->walks = ms->walks;
    t->walk_cycles = ms->walk_cycles;
    t->kmaps = kbody_total(r->kb)->kmaps;
    t->mm_flushes = kbody_total(r->kb)->tlb_flushes;
    t->copied = kbody_total(r->kb)->copied;
    uint64_t cr3c = 0;
    for (guint i = 0; i < r->res->sys->len; i++)
        cr3c += ((ReplaySyscall *)g_ptr_array_index(r->res->sys, i))->sum.cr3;
    t->cr3_cycles = cr3c;
    r->res->tlb = *tlb_hier_stats(mmu_tlb(mmu));
    r->res->skips = *machine_fast_forward_skips(r->m);
    LowmemStats ls;
    lowmem_state_stats(r->low, &ls);
    t->lowmem_peak = ls.peak;
    t->lowmem_end = ls.current;
    t->lowmem_exhausted_at = ls.exhausted_at;
}

static gint by_cycles(gconstpointer a, gconstpointer b)
{
    const ReplaySyscall *x = *(ReplaySyscall *const *)a, *y = *(ReplaySyscall *const *)b;
    return x->sum.cycles < y->sum.cycles ? 1 : x->sum.cycles > y->sum.cycles ? -1
                                                                          : strcmp(x->name, y->name);
}

/* The lowmem the layout leaves free after boot on this much RAM. */
static LowmemState *lowmem_for(const ReplayConfig *cfg, ReplayTotals *t, GError **err)
{
    LowmemMap map;
    LowmemReport rep;
    LowmemParams lp = { 0 };
    lp.struct_page_bytes = cfg->struct_page ? cfg->struct_page : 40;
    if (!lowmem_map_default(&map, cfg->ram, err) ||
        !lowmem_compute(&cfg->layout->mem, &map, &lp, &rep, err))
        return NULL;
    t->lowmem_start_free = rep.lowmem_left_bytes > 0 ? (uint64_t)rep.lowmem_left_bytes : 0;
    return lowmem_state_new_for(&rep);
}

/* Every event of the trace, in order; false (err set, naming the line) on a
 * bad line or an event the machine could not run. */
static bool run_events(Replay *r, TraceReader *tr, GError **err)
{
    ReplayTotals *t = &r->res->t;
    const ReplayConfig *cfg = &r->res->cfg;
    /* The event and the one after it (do_event looks ahead), in two
     * buffers that swap roles rather than being copied. */
    TraceEvent buf[2], *ev = &buf[0], *next = &buf[1];
    GError *e = NULL;
    bool have = trace_reader_next(tr, ev, &e);
    bool tty = cfg->progress && isatty(STDERR_FILENO);
    if (have)   /* the trace's first pid runs on task 0, already in user mode */
        proc_new(r, ev->pid, machine_current(r->m));
    while (have && !e) {
        if (ev->kind == TRACE_EV_REFS) {     /* its lines come before the next event */
            if (!do_refs(r, tr, ev, err))
                return false;
            t->events++;
            have = trace_reader_next(tr, ev, &e);
            continue;
        }
        bool have_next = trace_reader_next(tr, next, &e);
        if (e)
            break;
        bool ate = false;
        if (!do_event(r, ev, have_next ? next : NULL, &ate, err)) {
            g_prefix_error(err, "%s:%" G_GUINT64_FORMAT ": ", trace_reader_name(tr),
                           trace_reader_line(tr) - (have_next ? 1 : 0));
            return false;
        }
        reap(r);
        t->events += 1 + ate;
        if (tty && t->events % 20000 <= (uint64_t)ate)
            fprintf(stderr, "\rreplay %s: %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT " syscalls",
                    cfg->layout->name, t->events, t->syscalls);
        if (ate)
            have_next = trace_reader_next(tr, next, &e);
        TraceEvent *done = ev;
        ev = next;
        next = done;
        have = have_next;
    }
    if (e) {
        g_propagate_error(err, e);
        return false;
    }
    if (tty)
        fprintf(stderr, "\r%60s\r", "");
    return true;
}

ReplayResult *replay_run(const ReplayConfig *cfg, const char *trace, GError **err)
{
    gint64 t0 = g_get_monotonic_time();
    ReplayResult *res = g_new0(ReplayResult, 1);
    res->cfg = *cfg;
    res->sys = g_ptr_array_new_with_free_func(sys_free);
    res->t.lowmem_exhausted_at = -1;
    Replay r = { .res = res, .dead_task = -1 };
    r.procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    r.sysidx = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    r.nids = syscall_table_size();
    r.byid = g_new0(SysSlot *, r.nids);
    TraceReader *tr = NULL;
    bool ok = false;
    MachineConfig mc = { .preset = cfg->preset, .layout = cfg->layout, .ram = cfg->ram,
                         .stubs = cfg->stubs, .sysenter = cfg->sysenter, .tlb = cfg->tlb };
    if (!(r.low = lowmem_for(cfg, &res->t, err)) || !(r.prof = profiles_load(cfg->profiles, err)) ||
        !(r.m = machine_new(&mc, err)) || !(r.kb = kbody_new(r.m, err)) ||
        !(tr = trace_reader_open(trace, err)))
        goto out;
    r.cpu = machine_cpu(r.m);
    if (trace_reader_version(tr) >= 2 && !(r.um = usermm_new(r.m, cfg->fault_profiles, err)))
        goto out;
    res->refs.has_refs = r.um != NULL;
    machine_set_fast_forward(r.m, !cfg->no_fast_forward);
    machine_set_host_shortcuts(r.m, !cfg->no_host_shortcuts);
    /* Statistics cover the trace, not the boot. */
    mmu_reset_stats(machine_mmu(r.m));
    uint64_t boot_cycles = cpu_cycles(r.cpu), boot_insns = cpu_insns(r.cpu);
    if (!run_events(&r, tr, err))
        goto out;
    finish(&r);
    if (r.um) {
        res->refs.events = r.refs.events;
        res->refs.lines = r.refs.lines;
        res->refs.refs = r.refs.refs;
        res->refs.insns = r.refs.insns;
        res->refs.cycles = r.refs.cycles;
        res->refs.walk_cycles = r.refs.walk_cycles;
        res->refs.collisions = r.refs.collisions + usermm_stats(r.um)->collisions;
        res->refs.faults = *usermm_stats(r.um);
    }
    res->t.cycles -= boot_cycles;
    res->t.insns -= boot_insns;
    g_ptr_array_sort(res->sys, by_cycles);
    ok = true;
out:
    trace_reader_close(tr);
    usermm_free(r.um);
    kbody_free(r.kb);
    machine_free(r.m);
    profiles_free(r.prof);
    if (r.low)
        lowmem_state_free(r.low);
    g_hash_table_destroy(r.procs);
    g_hash_table_destroy(r.sysidx);
    g_free(r.byid);
    res->host_seconds = (g_get_monotonic_time() - t0) / 1e6;
    if (!ok) {
        replay_result_free(res);
        return NULL;
    }
    return res;
}

static gpointer job_thread(gpointer data)
{
    ReplayJob *j = data;
    j->result = replay_run(&j->cfg, j->trace, &j->err);
    return NULL;
}

void replay_run_jobs(ReplayJob *jobs, size_t n, unsigned parallel)
{
    enum { MAX_THREADS = 16 };
    parallel = CLAMP(parallel, 1u, (unsigned)MAX_THREADS);
    for (size_t i = 0; i < n; i += parallel) {
        GThread *t[MAX_THREADS];
        size_t k = MIN((size_t)parallel, n - i);
        for (size_t j = 0; j < k; j++)
            t[j] = g_thread_new("replay", job_thread, &jobs[i + j]);
        for (size_t j = 0; j < k; j++)
            g_thread_join(t[j]);
    }
}

void replay_result_free(ReplayResult *r)
{
    if (!r)
        return;
    g_ptr_array_free(r->sys, TRUE);
    g_free(r);
}

const ReplayTotals *replay_totals(const ReplayResult *r) { return &r->t; }
const TlbStats *replay_tlb(const ReplayResult *r) { return &r->tlb; }
const ReplayConfig *replay_config(const ReplayResult *r) { return &r->cfg; }
double replay_seconds(const ReplayResult *r) { return r->t.cycles / (r->cfg.preset->clock_mhz * 1e6); }
double replay_host_seconds(const ReplayResult *r) { return r->host_seconds; }
const UserWorkSkips *replay_fast_forward(const ReplayResult *r) { return &r->skips; }
const ReplayRefs *replay_refs(const ReplayResult *r) { return &r->refs; }

uint64_t replay_fault_cycles(const ReplayResult *r)
{
    uint64_t c = r->refs.faults.flush_cycles;
    for (int k = 0; k < UFAULT_KINDS; k++)
        c += r->refs.faults.cycles[k];
    return c;
}
guint replay_nsyscalls(const ReplayResult *r) { return r->sys->len; }
const ReplaySyscall *replay_syscall(const ReplayResult *r, guint i) { return g_ptr_array_index(r->sys, i); }

static const struct { const char *name, *desc; size_t off; } totals[] = {
#define X(n, d) { #n, d, offsetof(ReplayTotals, n) },
    REPLAY_TOTALS(X)
#undef X
};

size_t replay_total_count(void) { return G_N_ELEMENTS(totals); }
const char *replay_total_name(size_t i) { return totals[i].name; }
const char *replay_total_desc(size_t i) { return totals[i].desc; }
uint64_t replay_total_value(const ReplayTotals *t, size_t i)
{
    return *(const uint64_t *)((const char *)t + totals[i].off);
}
