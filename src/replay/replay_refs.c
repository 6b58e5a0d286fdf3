/* Replaying a refs event's references: see replay_refs.h. */
#include "replay/replay_refs.h"

#include "mmu/mmu_fast.h"            /* mmu_access_fast, memos: the core's own hit path */

#define CHUNK 4096                   /* references per read from the trace */

/* n data references of one kind to addr, the first through the MMU's
 * full path, the others on the memo and the MRU line it left (each as
 * mmu_access_fast would make it, with the same counts). False if the
 * first faulted (f set). */
static inline bool data_refs(Mmu *mmu, uint32_t addr, Access acc, uint32_t n, MmuFault *f)
{
    if (G_UNLIKELY(!mmu_access_fast(mmu, addr, acc, 3, f)))
        return false;
    if (n > 1) {
        const MmuMemo *mm = mmu_memo_find(mmu, addr, acc, 3);
        for (uint32_t k = 1; k < n; k++)
            if (!mm || !mmu_access_memo_mru(mmu, mm, addr, acc, 3))
                mmu_access_fast(mmu, addr, acc, 3, f);
    }
    return true;
}

/* n read-modify-writes: a load and a store each, in that order. */
static inline bool modify_refs(Mmu *mmu, uint32_t addr, uint32_t n, MmuFault *f)
{
    for (uint32_t k = 0; k < n; k++)
        if (!mmu_access_fast(mmu, addr, ACCESS_READ, 3, f) ||
            !mmu_access_fast(mmu, addr, ACCESS_WRITE, 3, f))
            return false;
    return true;
}

/* n instructions fetched from addr's page: one translation, n - 1 hits. */
static inline bool fetch_refs(Mmu *mmu, uint32_t addr, uint32_t n, MmuFault *f)
{
    uint64_t pa;
    if (G_UNLIKELY(!mmu_translate_fast(mmu, addr, ACCESS_EXEC, 3, &pa, f)))
        return false;
    if (n > 1) {
        const MmuMemo *mm = mmu_memo_find(mmu, addr, ACCESS_EXEC, 3);
        if (mm)
            mmu_memo_hit_n(mmu, mm, ACCESS_EXEC, n - 1);
        else
            for (uint32_t k = 1; k < n; k++)
                mmu_translate_fast(mmu, addr, ACCESS_EXEC, 3, &pa, f);
    }
    return true;
}

static const MachineTouch touch_of[TRACE_REF_KINDS] = {
    [TRACE_REF_FETCH] = MACHINE_TOUCH_EXEC, [TRACE_REF_READ] = MACHINE_TOUCH_READ,
    [TRACE_REF_WRITE] = MACHINE_TOUCH_WRITE, [TRACE_REF_MODIFY] = MACHINE_TOUCH_WRITE,
};

/* One reference line. */
static bool one_ref(Machine *m, UserMm *um, const UserPageDir *dir, const TraceRef *r,
                    RefsTotals *t, GError **err)
{
    Mmu *mmu = machine_mmu(m);
    bool write = r->kind >= TRACE_REF_WRITE;
    uint32_t n = r->n;
    if (G_UNLIKELY(!usermm_ready(dir, r->addr, write))) {
        bool made;
        if (!usermm_fault_in(um, r->addr, touch_of[r->kind], &made, err))
            return false;
        /* The faulting instruction, retried, made the first reference (a
         * read-modify-write's store only: its load is still to come). */
        if (made && r->kind != TRACE_REF_MODIFY && --n == 0) {
            t->refs += r->kind == TRACE_REF_FETCH ? 0 : r->n;
            return true;
        }
        if (write && usermm_page_state(dir, r->addr) == UPAGE_MODEL_RO) {
            t->collisions += r->n;   /* user.asm's page: made as reads */
            write = false;
        }
    }
    MmuFault f;
    bool ok;
    switch (r->kind) {
    case TRACE_REF_FETCH: ok = fetch_refs(mmu, r->addr, n, &f); break;
    case TRACE_REF_READ: ok = data_refs(mmu, r->addr, ACCESS_READ, n, &f); break;
    case TRACE_REF_WRITE:
        ok = data_refs(mmu, r->addr, write ? ACCESS_WRITE : ACCESS_READ, n, &f);
        break;
    default:
        ok = write ? modify_refs(mmu, r->addr, n, &f)
                   : data_refs(mmu, r->addr, ACCESS_READ, 2 * n, &f);
        break;
    }
    if (G_UNLIKELY(!ok)) {
        g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "reference to 0x%08x faulted after its page was mapped (vector %u, error "
                    "code 0x%x)", r->addr, f.vector, f.error_code);
        return false;
    }
    t->refs += r->kind == TRACE_REF_FETCH ? 0 : r->n;
    return true;
}

bool replay_refs_run(Machine *m, UserMm *um, TraceReader *tr, const TraceEvent *ev,
                     RefsTotals *t, GError **err)
{
    static _Thread_local TraceRef buf[CHUNK];
    Cpu *cpu = machine_cpu(m);
    const MmuStats *ms = mmu_stats(machine_mmu(m));
    const UserMmStats *fs = usermm_stats(um);
    const UserPageDir *dir = usermm_dir(um, machine_current(m));
    uint64_t c0 = cpu_cycles(cpu), w0 = ms->walk_cycles;
    uint64_t fc0 = 0, fw0 = fs->walk_cycles;
    for (int k = 0; k < UFAULT_KINDS; k++)
        fc0 += fs->cycles[k];
    size_t n;
    GError *e = NULL;
    while (trace_reader_refs(tr, buf, CHUNK, &n, &e) && n) {
        for (size_t k = 0; k < n; k++)
            if (G_UNLIKELY(!one_ref(m, um, dir, &buf[k], t, &e))) {
                g_prefix_error(&e, "%s:%" G_GUINT64_FORMAT ": ", trace_reader_name(tr),
                               trace_reader_ref_line(tr, k));
                g_propagate_error(err, e);
                return false;
            }
        t->lines += n;
    }
    if (e) {
        g_propagate_error(err, e);
        return false;
    }
    cpu_add_user_work(cpu, ev->u.refs.insns * cpu_costs(cpu)->alu, ev->u.refs.insns);
    uint64_t fc1 = 0, fw1 = fs->walk_cycles;
    for (int k = 0; k < UFAULT_KINDS; k++)
        fc1 += fs->cycles[k];
    t->events++;
    t->insns += ev->u.refs.insns;
    t->refs += ev->u.refs.insns;
    t->cycles += cpu_cycles(cpu) - c0 - (fc1 - fc0);
    t->walk_cycles += ms->walk_cycles - w0 - (fw1 - fw0);
    return true;
}
