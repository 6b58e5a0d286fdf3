/* A uniprocessor schedule from a multi-CPU log; see uniproc_sched.h.
 * Waiting events sit in per-task queues stamped with their arrival number;
 * the running task's events go out as they come. */
#include "replay/uniproc_sched.h"

#include <glib.h>

typedef struct {
    TraceEvent ev;
    bool yields;
    uint64_t seq;
} Held;

struct UniprocSched {
    UniprocOrder order;
    uint64_t slice_ns;
    size_t max_held;
    UniprocSchedOut out;
    void *ud;
    GHashTable *queues;     /* pid -> GQueue of Held* */
    size_t held;            /* events waiting, all tasks */
    uint64_t seq;
    bool started;           /* an event went out */
    bool running;           /* cur holds the CPU (it has not exited) */
    bool yielded;           /* ... but gave it up */
    uint32_t cur;
    bool have_now;          /* the log has timestamps */
    uint64_t slice_start, now;
};

static void queue_free(gpointer q)
{
    g_queue_free_full(q, g_free);
}

UniprocSched *uniproc_sched_new(UniprocOrder order, uint64_t slice_ns, size_t max_held,
                              UniprocSchedOut out, void *ud)
{
    UniprocSched *s = g_new0(UniprocSched, 1);
    s->order = order;
    s->slice_ns = slice_ns;
    s->max_held = max_held ? max_held : 1;
    s->out = out;
    s->ud = ud;
    s->queues = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, queue_free);
    return s;
}

void uniproc_sched_free(UniprocSched *s)
{
    if (!s)
        return;
    g_hash_table_unref(s->queues);
    g_free(s);
}

/* Sends ev, preceded by a switch when another task (or none) runs. */
static void send(UniprocSched *s, const TraceEvent *ev)
{
    if (s->started && (!s->running || s->cur != ev->pid)) {
        TraceEvent sw;
        trace_event_init(&sw, TRACE_EV_SWITCH, ev->pid);
        s->out(&sw, s->ud);
    }
    if (!s->running || s->cur != ev->pid)
        s->slice_start = s->now; /* a new time slice */
    s->started = s->running = true;
    s->cur = ev->pid;
    s->out(ev, s->ud);
    if (ev->kind == TRACE_EV_EXIT) {
        s->running = false;
        /* The table holds live tasks only (a pid reused later gets a new queue). */
        GQueue *q = g_hash_table_lookup(s->queues, GUINT_TO_POINTER(ev->pid));
        if (q && g_queue_is_empty(q))
            g_hash_table_remove(s->queues, GUINT_TO_POINTER(ev->pid));
    }
}

static GQueue *queue_of(UniprocSched *s, uint32_t pid)
{
    return g_hash_table_lookup(s->queues, GUINT_TO_POINTER(pid));
}

/* The task whose oldest waiting event arrived first; false if none waits. */
static bool oldest_waiting(UniprocSched *s, uint32_t *pid)
{
    GHashTableIter it;
    gpointer k, v;
    uint64_t best = UINT64_MAX;
    g_hash_table_iter_init(&it, s->queues);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        Held *h = g_queue_peek_head(v);
        if (h && h->seq < best) {
            best = h->seq;
            *pid = GPOINTER_TO_UINT(k);
        }
    }
    return best != UINT64_MAX;
}

static bool slice_over(const UniprocSched *s)
{
    return s->have_now && s->now - s->slice_start >= s->slice_ns;
}

/* Sends what the schedule allows now; final: the log has ended. */
static void pump(UniprocSched *s, bool final)
{
    for (;;) {
        uint32_t pid = s->cur;
        bool runs = s->running && !s->yielded;
        GQueue *q = runs ? queue_of(s, s->cur) : NULL;
        size_t mine = q ? q->length : 0;
        if (runs && s->held > mine && (slice_over(s) || s->held > s->max_held))
            runs = false; /* preempted: the others waited long enough */
        if (runs && !mine) {
            if (!final)
                return; /* the running task may have more to come */
            runs = false;
        }
        if (!runs && !oldest_waiting(s, &pid))
            return;
        Held *h = g_queue_pop_head(queue_of(s, pid));
        s->held--;
        send(s, &h->ev);
        s->yielded = h->yields;
        g_free(h);
    }
}

static void set_now(UniprocSched *s, uint64_t now)
{
    s->now = now;
    if (!s->have_now)
        s->slice_start = now;
    s->have_now = true;
}

void uniproc_sched_push(UniprocSched *s, const TraceEvent *ev, bool yields, bool has_time,
                       uint64_t now)
{
    if (has_time)
        set_now(s, now);
    if (s->order == UNIPROC_ORDER_INTERLEAVE) {
        send(s, ev);
        return;
    }
    GQueue *q = queue_of(s, ev->pid);
    if (!q) {
        q = g_queue_new();
        g_hash_table_insert(s->queues, GUINT_TO_POINTER(ev->pid), q);
    }
    Held *h = g_new(Held, 1);
    *h = (Held){.ev = *ev, .yields = yields, .seq = s->seq++};
    g_queue_push_tail(q, h);
    s->held++;
    pump(s, false);
}

void uniproc_sched_tick(UniprocSched *s, uint64_t now)
{
    set_now(s, now);
    if (s->order == UNIPROC_ORDER_BLOCK)
        pump(s, false);
}

void uniproc_sched_yield(UniprocSched *s)
{
    if (s->order == UNIPROC_ORDER_INTERLEAVE || !s->running)
        return;
    s->yielded = true;
    pump(s, false);
}

bool uniproc_sched_running(const UniprocSched *s, uint32_t *pid)
{
    if (!s->running || s->yielded)
        return false;
    *pid = s->cur;
    return true;
}

void uniproc_sched_flush(UniprocSched *s)
{
    if (s->order == UNIPROC_ORDER_BLOCK)
        pump(s, true);
}
