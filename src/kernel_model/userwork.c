/* The user-work fast-forward: see userwork.h.
 *
 * The state at a period boundary is kept in parts (the core's front end,
 * then mmu_state.h's: paging, each TLB array, the PDE cache, each cache
 * level), and a comparison re-reads only the parts whose counters moved
 * since the checkpoint it compares with: a part that did not move is
 * equal at both boundaries by construction. Each stored part, once read,
 * equals that part's state at the checkpoint (it is re-read at each new
 * checkpoint if it moved), so comparing the moved parts compares the whole
 * state. A part never read yet compares unequal. */
#include "kernel_model/userwork.h"

#include <string.h>

#include "kernel_model/machine.h"
#include "kernel_model/userwork_refs.h"
#include "mmu/mmu_state.h"

/* How long a cycle of states is looked for: a run whose states have not
 * repeated within MAX_POWER periods of a checkpoint (Brent's checkpoints
 * double, see userwork_fast_forward) gives up and runs on normally. A
 * cyclic reference stream longer than a fully associative TLB moves each
 * page to another way every period, so its state repeats only after up to
 * ways / gcd(ways, pages per period) periods: 64 for the P4's 64-way
 * DTLB. Host-speed tuning only: a give-up costs speed, never exactness
 * (the tests compare every counter with and without the fast-forward). */
#define MAX_POWER 128
/* The usual repeat is a fixed point reached after a period or two (a
 * flush refilled in the first period). Brent's doubling would find one
 * reached after two periods only at the fourth; the first
 * CONSECUTIVE_CHECKS checkpoints are therefore taken every period (each
 * boundary compared with the one before), and the doubling starts after
 * them. */
#define CONSECUTIVE_CHECKS 3
#define MAX_PARTS 16             /* 1 + paging + 5 arrays + PDE cache + 3 levels */
/* Cycles kept for reuse, one per loop (CR3, va, bytes, stride), the
 * oldest replaced: a trace's user work is a few loops per task. */
#define MAX_LEARNED 16
/* A run of a loop with a learned cycle usually reaches it after a period
 * or two (userwork_fast_forward), and until then only the learned cycle is
 * looked for: the checkpoints of the cycle detection start at the
 * boundary after LEARNED_GRACE periods. Host-speed tuning only: a cycle
 * is skipped only on a match either way. */
#define LEARNED_GRACE 2
/* The first boundaries of a run at which learned_match remembers which
 * part differed, to compare that part first at the same boundary of the
 * next run (the front end before the first period, an L1 set the first
 * period's walks disturbed after it): a mismatch found without reading
 * the parts before it. */
#define FAIL_BOUNDARIES 4
/* One of those boundaries at which the learned cycle failed to match in
 * the last MISSES_TO_PASS runs is passed over without a look, but in every
 * RECHECK_EVERY-th run: under 4g4g the first period's walks leave an L1
 * set that only the second period restores, run after run. Host-speed
 * tuning only: a boundary passed over costs at most a period more, never
 * a skip without a match. */
#define MISSES_TO_PASS 4
#define RECHECK_EVERY 16

typedef struct {
    MmuStatsAll mem;
    uint64_t cycles, insns, insns_user;   /* the core's */
} Counters;

/* A cycle found by an earlier run of the same loop: the state its block
 * starts from (and returns to), its length q in periods and what a block
 * counts. The future of the loop is a function of that state and of the
 * loop's parameters alone, so a later run that reaches the same state is
 * in the same cycle. */
typedef struct {
    bool used;
    uint32_t cr3, va, bytes, stride;
    uint64_t q, age;
    Counters d;
    GByteArray *part[MAX_PARTS];
    unsigned nparts;
    unsigned failed[FAIL_BOUNDARIES];   /* the part that differed at boundary b */
    unsigned misses[FAIL_BOUNDARIES];   /* runs in a row it did not match at b */
} Learned;

struct UserWorkScratch {
    GByteArray *cur[MAX_PARTS];  /* part i at the current boundary */
    bool cur_valid[MAX_PARTS];
    GByteArray *ckpt[MAX_PARTS]; /* part i at the checkpoint */
    bool ckpt_valid[MAX_PARTS];
    Learned learned[MAX_LEARNED];
    uint64_t clock;              /* ages the learned cycles */
    MmuStateSpans *spans;        /* of the current boundary (reset at each) */
    LoopPlan plan;               /* the loop's references (userwork_refs.h) */
    GByteArray *front;           /* the core's front end after a run's first iteration */
    GByteArray *front_now;
};

UserWorkScratch *userwork_scratch_new(void)
{
    UserWorkScratch *s = g_new0(UserWorkScratch, 1);
    s->spans = mmu_state_spans_new();
    s->front = g_byte_array_new();
    s->front_now = g_byte_array_new();
    for (unsigned i = 0; i < MAX_PARTS; i++) {
        s->cur[i] = g_byte_array_new();
        s->ckpt[i] = g_byte_array_new();
        for (unsigned k = 0; k < MAX_LEARNED; k++)
            s->learned[k].part[i] = g_byte_array_new();
    }
    return s;
}

void userwork_scratch_free(UserWorkScratch *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < MAX_PARTS; i++) {
        g_byte_array_unref(s->cur[i]);
        g_byte_array_unref(s->ckpt[i]);
        for (unsigned k = 0; k < MAX_LEARNED; k++)
            g_byte_array_unref(s->learned[k].part[i]);
    }
    mmu_state_spans_free(s->spans);
    g_byte_array_unref(s->front);
    g_byte_array_unref(s->front_now);
    g_free(s);
}

static uint64_t period_of(uint32_t bytes, uint32_t stride)
{
    return ((uint64_t)bytes + stride - 1) / stride;
}

bool userwork_worth(uint64_t iters, uint32_t stride)
{
    return stride >= 4 && iters >= USERWORK_MIN_ITERS;
}

/* Whether a run of iters iterations can skip: a stride of at least 4 and
 * room for two checked periods, one to skip and one to run. */
static bool can_skip(uint64_t iters, uint32_t bytes, uint32_t stride)
{
    /* A stride below 4 makes consecutive words overlap, and the closed
     * form of what each word receives would not hold. */
    return stride >= 4 && bytes > 0 && iters > 3 * period_of(bytes, stride);
}

static void counters_get(Cpu *cpu, Counters *c)
{
    mmu_state_stats_get(cpu_mmu(cpu), &c->mem);
    c->cycles = cpu_cycles(cpu);
    c->insns = cpu_insns(cpu);
    c->insns_user = cpu_insns_user(cpu);
}

static void counters_diff(Counters *d, const Counters *a, const Counters *b)
{
    mmu_state_stats_diff(&d->mem, &a->mem, &b->mem);
    d->cycles = a->cycles - b->cycles;
    d->insns = a->insns - b->insns;
    d->insns_user = a->insns_user - b->insns_user;
}

static unsigned nparts(const UserWork *w)
{
    unsigned n = 1 + mmu_state_nparts(cpu_mmu(w->cpu));
    g_assert(n <= MAX_PARTS);
    return n;
}

/* Whether the work with counts d moved part i (the core's front end and
 * the paging entries are always re-read). */
static bool moved(const UserWork *w, unsigned i, const Counters *d)
{
    return i <= 1 || mmu_state_part_moved(cpu_mmu(w->cpu), i - 1, &d->mem);
}

/* What the loop references: its words and its code. */
static void loop_ranges(const UserWork *w, uint64_t P, MmuRange r[2])
{
    uint64_t end = (uint64_t)w->va + (P - 1) * w->stride + 4;
    r[0] = (MmuRange){ w->va, end >= (1ULL << 32) ? 0 : (uint32_t)end };
    r[1] = (MmuRange){ w->code_lo, w->code_hi };
}

/* Part i of the state at the current boundary, read if it moved since it
 * was last read: 0 the core's front end, then the memory system's, with
 * the paging entries of the words the loop touches and of its code. */
static const GByteArray *part(const UserWork *w, uint64_t P, unsigned i)
{
    UserWorkScratch *s = w->scratch;
    if (s->cur_valid[i])
        return s->cur[i];
    g_byte_array_set_size(s->cur[i], 0);
    s->cur_valid[i] = true;
    if (i == 0) {
        cpu_append_model_state(w->cpu, s->cur[i]);
        return s->cur[i];
    }
    MmuRange r[2];
    loop_ranges(w, P, r);
    mmu_state_append_part(cpu_mmu(w->cpu), i - 1, r, G_N_ELEMENTS(r), s->spans, s->cur[i]);
    return s->cur[i];
}

static bool same_bytes(const GByteArray *a, const GByteArray *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* A new boundary after work with counts d since the last one: the parts
 * it moved must be read again. */
static void boundary(const UserWork *w, const Counters *d)
{
    mmu_state_spans_reset(w->scratch->spans);
    for (unsigned i = 0; i < nparts(w); i++)
        if (moved(w, i, d))
            w->scratch->cur_valid[i] = false;
}

/* Compare the state now with the one stored for the checkpoint, reading
 * only the parts that the work since then (delta d) moved; true if equal.
 * keep: make now the checkpoint (store what differs). */
static bool compare(const UserWork *w, uint64_t P, const Counters *d, bool keep)
{
    UserWorkScratch *s = w->scratch;
    unsigned n = nparts(w);
    bool same = true;
    for (unsigned i = 0; i < n && (same || keep); i++) {
        if (!moved(w, i, d))
            continue;
        const GByteArray *now = part(w, P, i);
        if (s->ckpt_valid[i] && same_bytes(s->ckpt[i], now))
            continue;
        same = false;
        if (keep) {
            g_byte_array_set_size(s->ckpt[i], 0);
            g_byte_array_append(s->ckpt[i], now->data, now->len);
            s->ckpt_valid[i] = true;
        }
    }
    return same;
}

/* The cycle learned for this loop, or NULL. */
static Learned *learned_find(const UserWork *w, uint32_t cr3)
{
    UserWorkScratch *s = w->scratch;
    for (unsigned k = 0; k < MAX_LEARNED; k++) {
        Learned *l = &s->learned[k];
        if (l->used && l->cr3 == cr3 && l->va == w->va && l->bytes == w->bytes &&
            l->stride == w->stride)
            return l;
    }
    return NULL;
}

/* Whether part i now may stand for the learned cycle's: equal, or
 * equivalent for this loop (mmu_state_part_equivalent: entries the loop
 * neither reaches nor reorders may differ, given the block's counts). */
static bool learned_part_matches(const UserWork *w, uint64_t P, const Learned *l, unsigned i)
{
    const GByteArray *now = part(w, P, i);
    if (same_bytes(now, l->part[i]))
        return true;
    if (i == 0)
        return false;
    MmuRange r[2];
    loop_ranges(w, P, r);
    const MmuWords words = { w->va, w->stride, P };
    return mmu_state_part_equivalent(cpu_mmu(w->cpu), i - 1, r, G_N_ELEMENTS(r), &words,
                                     &l->d.mem, w->scratch->spans, l->part[i], now);
}

/* Whether every part matches (learned_part_matches), part *first first;
 * if not, *first is the part that did not. */
static bool parts_match(const UserWork *w, uint64_t P, const Learned *l, unsigned *first)
{
    if (!learned_part_matches(w, P, l, *first))
        return false;
    for (unsigned i = 0; i < l->nparts; i++)
        if (i != *first && !learned_part_matches(w, P, l, i)) {
            *first = i;
            return false;
        }
    return true;
}

/* Whether the state now, at boundary b of the run (periods run so far),
 * may stand for the learned cycle's start: every part matches (the
 * equivalence's proof assumes each other part equal or equivalent, which
 * this checks for all at once). The loop then runs from now exactly as
 * from the start, and each block leaves the state as it found it. At the
 * first boundaries the part that differed there last time is compared
 * first, and a boundary that keeps failing is passed over
 * (MISSES_TO_PASS); neither decides more than how soon a mismatch is
 * found. */
static bool learned_match(const UserWork *w, uint64_t P, Learned *l, uint64_t b)
{
    if (l->nparts != nparts(w))
        return false;
    unsigned first = 0;
    if (b >= FAIL_BOUNDARIES)
        return parts_match(w, P, l, &first);
    if (l->misses[b] >= MISSES_TO_PASS && ++l->misses[b] % RECHECK_EVERY != 0)
        return false;
    bool ok = parts_match(w, P, l, &l->failed[b]);
    l->misses[b] = ok ? 0 : l->misses[b] + 1;
    return ok;
}

/* Keep the cycle just found (the state now starts it) for later runs of
 * this loop, in its old place or the least recently used. */
static void learned_store(const UserWork *w, uint64_t P, uint32_t cr3, uint64_t q,
                          const Counters *d)
{
    UserWorkScratch *s = w->scratch;
    Learned *l = learned_find(w, cr3);
    if (!l) {
        l = &s->learned[0];
        for (unsigned k = 1; k < MAX_LEARNED; k++)   /* unused ones have age 0 */
            if (s->learned[k].age < l->age)
                l = &s->learned[k];
    }
    l->used = true;
    l->cr3 = cr3;
    l->va = w->va;
    l->bytes = w->bytes;
    l->stride = w->stride;
    l->q = q;
    l->d = *d;
    l->age = ++s->clock;
    l->nparts = nparts(w);
    memset(l->failed, 0, sizeof l->failed);
    memset(l->misses, 0, sizeof l->misses);
    for (unsigned i = 0; i < l->nparts; i++) {
        const GByteArray *now = part(w, P, i);
        g_byte_array_set_size(l->part[i], 0);
        g_byte_array_append(l->part[i], now->data, now->len);
    }
}

/* The host memory of the frame last written through (page 1: none). */
typedef struct {
    uint32_t page;
    uint8_t *host;
} HostPage;

/* Add add to the 32-bit word at lin in physical memory, with no modelled
 * reference; returns the new value. The loop has already touched the word
 * (so it is mapped and its frames exist). A word within one page goes
 * through the host pointer of its frame, fetched once per page
 * (physmem_frame_get, as physmem_write32 would: frames are never freed,
 * and the page tables do not change while skip_memory runs). */
static uint32_t word_add(Mmu *mmu, MmuPeekCache *pc, HostPage *hp, uint32_t lin, uint32_t add)
{
    PhysMem *pm = mmu_physmem(mmu);
    uint64_t pa[4];
    uint8_t b[4];
    uint32_t off = lin & (PAGE_SIZE - 1);
    if (off <= PAGE_SIZE - 4) {                          /* in one page: one 32-bit value */
        uint32_t page = lin - off, v;
        if (page != hp->page) {
            bool ok = mmu_state_peek_cached(mmu, lin, pc, &pa[0]);
            g_assert(ok);
            hp->host = physmem_frame_get(pm, pa[0] - off);
            hp->page = page;
        }
        memcpy(&v, hp->host + off, sizeof v);
        v += add;
        memcpy(hp->host + off, &v, sizeof v);
        return v;
    }
    for (unsigned k = 0; k < 4; k++) {
        bool ok = mmu_state_peek_cached(mmu, lin + k, pc, &pa[k]);
        g_assert(ok);
        b[k] = physmem_read8(pm, pa[k]);
    }
    uint32_t v = (b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24) + add;
    for (unsigned k = 0; k < 4; k++)
        physmem_write8(pm, pa[k], (uint8_t)(v >> (8 * k)));
    return v;
}

/* Skip M periods of P iterations from a boundary with R iterations to go:
 * word j is visited with ECX = R - j - k P for k = 0..M-1. */
static uint32_t skip_memory(const UserWork *w, uint64_t P, uint64_t M, uint64_t R)
{
    Mmu *mmu = cpu_mmu(w->cpu);
    /* M (M - 1) / 2 exactly (M < 2^32), then everything mod 2^32. */
    uint64_t tri = M % 2 ? M * ((M - 1) / 2) : (M / 2) * (M - 1);
    uint32_t last = 0;
    MmuPeekCache pc = MMU_PEEK_CACHE_INIT;
    HostPage hp = { 1, NULL };
    for (uint64_t j = 0; j < P; j++) {
        uint32_t add = (uint32_t)(M * (R - j) - P * tri);
        last = word_add(mmu, &pc, &hp, w->va + (uint32_t)(j * w->stride), add);
    }
    return last;
}

/* Account times more blocks of q periods of P iterations (a cycle of q
 * periods, q = 1 for a fixed point), each counting d, from a boundary with
 * R iterations to go. */
static void skip(const UserWork *w, uint64_t P, uint64_t q, uint64_t R, const Counters *d,
                 uint64_t times, UserWorkSkips *sk)
{
    Cpu *cpu = w->cpu;
    uint64_t Q = q * P;
    g_assert(d->insns == Q * USER_WORK_INSNS_PER_ITER && d->insns_user == d->insns);
    mmu_state_stats_add(cpu_mmu(cpu), &d->mem, times);
    cpu_add_user_work(cpu, times * (d->cycles - d->mem.mmu.cycles), times * d->insns);
    uint32_t last = skip_memory(w, P, times * q, R);
    cpu_set_reg(cpu, REG_ECX, (uint32_t)(R - times * Q));
    cpu_set_reg(cpu, REG_EAX, last);
    sk->runs++;
    sk->periods += times * q;
    sk->insns += times * d->insns;
}

/* Skip from a boundary with R iterations to go whose state starts the
 * learned cycle l, if a whole block fits before the last iteration. */
static void skip_learned(const UserWork *w, uint64_t P, uint64_t R, Learned *l,
                         UserWorkSkips *sk)
{
    l->age = ++w->scratch->clock;
    if (R <= l->q * P)
        return;
    skip(w, P, l->q, R, &l->d, (R - 1) / (l->q * P), sk);
    sk->reused++;
}

/* Whether a run's iterations may be made as references (userwork_refs.h)
 * instead of on the core, and what each costs the core itself. */
typedef struct {
    bool ok;
    uint64_t own;                /* the core's own cycles per iteration */
} Direct;

/* Whether the loop's words are aligned (none lies across pages) and
 * neither ESI + EDI nor the cursor's step past the last word wraps the
 * address space: what userwork_refs.h assumes of them. */
static bool words_plain(const UserWork *w)
{
    return w->va % 4 == 0 && w->stride % 4 == 0 &&
           (uint64_t)w->va + w->bytes + w->stride <= (1ULL << 32);
}

/* The core's own cycles (its total less the memory system's) and its
 * instructions so far. */
typedef struct {
    uint64_t own, insns;
} CoreCount;

static CoreCount core_count(Cpu *cpu)
{
    return (CoreCount){ cpu_cycles(cpu) - mmu_stats(cpu_mmu(cpu))->cycles, cpu_insns(cpu) };
}

/* After the run's first iteration, on the core with counts d: the core's
 * own cycles are those of an iteration whose JNZ was taken, the same for
 * each (a fixed cost per instruction: the memory system charges all the
 * rest; a learned cycle's block, which only hit, must agree), and its
 * front end now is the one every later iteration starts with
 * (userwork_refs.h: no fetch block, nothing pending, CPL 3). */
static void direct_setup(const UserWork *w, uint64_t P, const Learned *l, const CoreCount *d,
                         Direct *dr)
{
    UserWorkScratch *s = w->scratch;
    dr->own = d->own;
    dr->ok = d->insns == USER_WORK_INSNS_PER_ITER &&
             (!l || l->d.cycles - l->d.mem.mmu.cycles == l->q * P * dr->own) &&
             loop_plan_make(&s->plan, w->cpu, cpu_eip(w->cpu));   /* user CS is flat */
    g_byte_array_set_size(s->front, 0);
    cpu_append_model_state(w->cpu, s->front);
}

/* Run n iterations (the core at the loop head with more than n to go, on
 * pages the core has referenced in this run: first_iters): as references
 * where direct_setup allowed it and the core's front end is still the one
 * it recorded, else on the core. */
static bool run_iters(const UserWork *w, const Direct *dr, uint64_t n, UserWorkSkips *sk)
{
    UserWorkScratch *s = w->scratch;
    if (dr->ok) {
        g_byte_array_set_size(s->front_now, 0);
        cpu_append_model_state(w->cpu, s->front_now);
        if (same_bytes(s->front, s->front_now)) {
            loop_plan_run(&s->plan, w->cpu, w->va, w->bytes, w->stride, n, dr->own);
            sk->insns_refs += n * USER_WORK_INSNS_PER_ITER;
            return true;
        }
    }
    return w->run(w->user, n * USER_WORK_INSNS_PER_ITER);
}

/* One iteration on the core; the run's first sets up what may be made
 * as references, a later one must cost the core the same. */
static bool core_iteration(const UserWork *w, uint64_t P, const Learned *l, bool first,
                           Direct *dr)
{
    CoreCount a = core_count(w->cpu);
    if (!w->run(w->user, USER_WORK_INSNS_PER_ITER))
        return false;
    CoreCount b = core_count(w->cpu);
    CoreCount d = { b.own - a.own, b.insns - a.insns };
    if (first)
        direct_setup(w, P, l, &d, dr);
    else if (d.insns != USER_WORK_INSNS_PER_ITER || d.own != dr->own)
        dr->ok = false;
    return true;
}

/* The index of the first word after word k on another page (the words of
 * a period ascend), P if none. */
static uint64_t next_page_word(const UserWork *w, uint64_t P, uint64_t k)
{
    uint64_t page_end = ((w->va + k * w->stride) | (PAGE_SIZE - 1)) + 1;
    return MIN(P, (page_end - w->va + w->stride - 1) / w->stride);
}

/* The run's first n iterations (n <= P): each that is the first on one
 * of the loop's pages on the core, the others as references where
 * run_iters can. A reference made so is then to a page the core has just
 * referenced the same way without a fault, and nothing changes the page
 * tables while the loop runs, so it cannot fault. Words that are not
 * plain are never made as references: all on the core. */
static bool first_iters(const UserWork *w, uint64_t P, uint64_t n, const Learned *l,
                        Direct *dr, UserWorkSkips *sk)
{
    if (!words_plain(w))
        return w->run(w->user, n * USER_WORK_INSNS_PER_ITER);
    for (uint64_t i = 0; i < n;) {
        if (!core_iteration(w, P, l, i == 0, dr))
            return false;
        uint64_t next = next_page_word(w, P, i++);
        next = MIN(next, n);
        if (next > i && !run_iters(w, dr, next - i, sk))
            return false;
        i = MAX(i, next);
    }
    return true;
}

/* Brent's cycle detection over the states at period boundaries: a
 * checkpoint is compared with each following boundary; after 1, 2, 4, ...
 * periods without a match (1 for the first CONSECUTIVE_CHECKS) the current
 * boundary becomes the checkpoint. A match after lam periods is a cycle of
 * lam periods (lam = 1: a fixed point), found within about twice the
 * periods it takes the states to enter it plus its length, with one
 * stored state. A cycle learned by an earlier run of the loop is checked
 * for at every boundary from the first (before any period) on, and the
 * checkpoints start only after LEARNED_GRACE periods then. The periods
 * are made as references where run_iters can, all but the first's start
 * (first_iters). */
static bool run_and_skip(const UserWork *w, UserWorkSkips *sk, Direct *dr)
{
    Cpu *cpu = w->cpu;
    uint64_t R = cpu_reg(cpu, REG_ECX);
    UserWorkScratch *s = w->scratch;
    memset(s->cur_valid, 0, sizeof s->cur_valid);
    memset(s->ckpt_valid, 0, sizeof s->ckpt_valid);
    mmu_state_spans_reset(s->spans);       /* a new state, new ranges */
    const uint32_t cr3 = mmu_cr3(cpu_mmu(cpu));
    const uint64_t P = period_of(w->bytes, w->stride);
    Learned *l = learned_find(w, cr3);
    uint64_t run = 0;                      /* periods run */
    if (l && learned_match(w, P, l, run)) {
        skip_learned(w, P, R, l, sk);
        return true;
    }
    uint64_t power = 1, lam = 0;
    unsigned checkpoints = 0;
    Counters at_checkpoint, prev, now, d;
    counters_get(cpu, &at_checkpoint);
    prev = at_checkpoint;
    /* A period, then at least one to skip and one iteration to run. */
    while (R > 2 * P) {
        if (!(run ? run_iters(w, dr, P, sk) : first_iters(w, P, P, l, dr, sk)))
            return false;
        R -= P;
        lam++;
        run++;
        sk->periods_run++;
        counters_get(cpu, &now);
        counters_diff(&d, &now, &prev);
        boundary(w, &d);
        prev = now;
        if (l && learned_match(w, P, l, run)) {
            skip_learned(w, P, R, l, sk);
            return true;
        }
        if (l && run < LEARNED_GRACE) {
            /* No checkpoint yet: this boundary stands where the run's
             * first one would (nothing stored, everything re-read). */
            at_checkpoint = now;
            lam = 0;
            continue;
        }
        counters_diff(&d, &now, &at_checkpoint);
        bool checkpoint = lam == power;
        if (compare(w, P, &d, checkpoint)) {
            learned_store(w, P, cr3, lam, &d);
            if (R > lam * P)
                skip(w, P, lam, R, &d, (R - 1) / (lam * P), sk);
            return true;
        }
        if (checkpoint) {
            at_checkpoint = now;
            if (++checkpoints >= CONSECUTIVE_CHECKS)
                power *= 2;
            lam = 0;
            if (power > MAX_POWER)
                return true;
        }
    }
    return true;
}

/* The run as run_and_skip leaves it (a run too short to skip anything:
 * its first period or all but its last iteration, as first_iters makes
 * them), then all but its last iteration as references where run_iters
 * can: the core runs the last, so the flags, EIP and front end at the end
 * come from real execution. */
bool userwork_fast_forward(const UserWork *w, UserWorkSkips *sk)
{
    Direct dr = { 0 };
    uint64_t R = cpu_reg(w->cpu, REG_ECX), P = period_of(w->bytes, w->stride);
    g_assert(R >= 1 && cpu_reg(w->cpu, REG_EBX) == w->va);
    bool ok = can_skip(R, w->bytes, w->stride) && mmu_state_comparable(cpu_mmu(w->cpu))
                  ? run_and_skip(w, sk, &dr)
                  : first_iters(w, P, MIN(P, R - 1), NULL, &dr, sk);
    if (!ok)
        return false;
    uint32_t left = cpu_reg(w->cpu, REG_ECX);
    return !dr.ok || left <= 1 || run_iters(w, &dr, left - 1, sk);
}
