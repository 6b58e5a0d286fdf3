/* db: a PostgreSQL backend serving pgbench's TPC-B-like transactions.
 *
 * The script is pgbench's built-in "tpcb-like" (PostgreSQL docs, pgbench):
 *   BEGIN; UPDATE pgbench_accounts ...; SELECT abalance ...; UPDATE
 *   pgbench_tellers ...; UPDATE pgbench_branches ...; INSERT INTO
 *   pgbench_history ...; END;
 * with aid, tid, bid and delta drawn uniformly as pgbench does. `procs`
 * backends (pgbench -c) share one CPU. Per statement a backend:
 *   - recvfrom the query on its socket (blocked: it waits for its client;
 *     pre-9.5 backends slept in recv on a blocking socket);
 *   - UPDATE pgbench_accounts: for the index leaf and the heap page, a
 *     shared-buffer miss with probability `miss` is a pread64 of one 8 KiB
 *     block (BLCKSZ) from the OS page cache (not blocked), preceded with
 *     probability `dirty` by a pwrite64 of the dirty victim buffer;
 *   - END (commit): XLogFlush takes WALWriteLock, pwrite64s the WAL page
 *     (XLogWrite writes whole 8 KiB XLOG_BLCKSZ pages) and fsyncs it
 *     (blocked; PostgreSQL's Linux default wal_sync_method is fdatasync,
 *     which has the same profile in syscalls.ini). If another backend holds
 *     WALWriteLock (it is asleep in its fsync) the backend sleeps on its
 *     semaphore: futex FUTEX_WAIT (PostgreSQL's unnamed POSIX semaphores are
 *     process-shared, so not the _PRIVATE op); the holder, when it runs
 *     again, releases the lock with one FUTEX_WAKE per waiter;
 *   - sendto the reply.
 * A blocked call hands the CPU to the next backend in turn (a switch); with
 * procs=1 the CPU idles and the same backend continues. A backend waiting on
 * the lock is always woken before its turn comes back, because the holder's
 * turn comes first in the rotation.
 *
 * Byte counts are the frontend/backend protocol 3.0's ("Message Formats"):
 * a Query is 'Q', an int32 length, the text and a NUL; replies are
 * CommandComplete ('C', length, tag, NUL), for the SELECT a RowDescription
 * of one int4 column and a DataRow, then ReadyForQuery (6 bytes).
 * Random: the pgbench variables and the misses. */
#include "replay/gen.h"

#include <stdio.h>
#include <string.h>

#define DB_PID0 1000
#define DB_MAX_PROCS 64
#define FD_SOCKET 9   /* the client connection (fd numbers: estimates) */
#define FD_ACCOUNTS 10
#define FD_WAL 11
#define BLCKSZ 8192   /* PostgreSQL's block size, also XLOG_BLCKSZ */
#define PQ_RECV_BUFFER_SIZE 8192 /* src/backend/libpq/pqcomm.c */
#define NONE UINT32_MAX

enum { ST_BEGIN, ST_UPD_ACC, ST_SEL_ACC, ST_UPD_TEL, ST_UPD_BR, ST_INSERT, ST_END, ST_COUNT };
enum { PH_RECV, PH_BODY, PH_RELEASE, PH_SEND };

typedef struct {
    uint32_t pid;
    int stmt, phase;
    uint64_t aid, bid, tid;
    int64_t delta;
} Backend;

typedef struct {
    Backend b[DB_MAX_PROCS];
    unsigned procs;
    uint32_t holder;   /* index of the backend holding WALWriteLock, or NONE */
    unsigned waiters;  /* backends asleep on it */
    uint64_t scale;
    double miss, dirty;
} Db;

/* Length of the statement's Query message. */
static uint64_t db_query_bytes(const Backend *b)
{
    char q[256];
    switch (b->stmt) {
    case ST_BEGIN: g_snprintf(q, sizeof q, "BEGIN;"); break;
    case ST_UPD_ACC:
        g_snprintf(q, sizeof q, "UPDATE pgbench_accounts SET abalance = abalance + %" G_GINT64_FORMAT
                   " WHERE aid = %" G_GUINT64_FORMAT ";", b->delta, b->aid);
        break;
    case ST_SEL_ACC:
        g_snprintf(q, sizeof q, "SELECT abalance FROM pgbench_accounts WHERE aid = %"
                   G_GUINT64_FORMAT ";", b->aid);
        break;
    case ST_UPD_TEL:
        g_snprintf(q, sizeof q, "UPDATE pgbench_tellers SET tbalance = tbalance + %" G_GINT64_FORMAT
                   " WHERE tid = %" G_GUINT64_FORMAT ";", b->delta, b->tid);
        break;
    case ST_UPD_BR:
        g_snprintf(q, sizeof q, "UPDATE pgbench_branches SET bbalance = bbalance + %"
                   G_GINT64_FORMAT " WHERE bid = %" G_GUINT64_FORMAT ";", b->delta, b->bid);
        break;
    case ST_INSERT:
        g_snprintf(q, sizeof q, "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) "
                   "VALUES (%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                   ", %" G_GINT64_FORMAT ", CURRENT_TIMESTAMP);", b->tid, b->bid, b->aid, b->delta);
        break;
    default: g_snprintf(q, sizeof q, "END;"); break;
    }
    return 1 + 4 + strlen(q) + 1;
}

#define COMMAND_COMPLETE(tag) (1 + 4 + sizeof(tag)) /* sizeof counts the NUL */
#define READY_FOR_QUERY 6
/* 'T', int32, int16 field count, "abalance\0", table oid 4, column 2, type
 * oid 4, type size 2, typmod 4, format 2. */
#define ROW_DESCRIPTION (1 + 4 + 2 + 9 + 4 + 2 + 4 + 2 + 4 + 2)

/* Length of the reply. The SELECT's DataRow holds abalance as text: the
 * delta just added, since pgbench -i starts every balance at 0 and a run
 * rarely draws the same one of its 100 000 x scale accounts twice. */
static uint64_t db_reply_bytes(const Backend *b)
{
    char v[32];
    switch (b->stmt) {
    case ST_BEGIN: return COMMAND_COMPLETE("BEGIN") + READY_FOR_QUERY;
    case ST_SEL_ACC:
        g_snprintf(v, sizeof v, "%" G_GINT64_FORMAT, b->delta);
        return ROW_DESCRIPTION + (1 + 4 + 2 + 4 + strlen(v)) + COMMAND_COMPLETE("SELECT 1") +
               READY_FOR_QUERY;
    case ST_INSERT: return COMMAND_COMPLETE("INSERT 0 1") + READY_FOR_QUERY;
    case ST_END: return COMMAND_COMPLETE("COMMIT") + READY_FOR_QUERY;
    default: return COMMAND_COMPLETE("UPDATE 1") + READY_FOR_QUERY;
    }
}

static void db_block_io(GenContext *g, uint32_t pid, const char *name, int fd)
{
    TraceEvent ev = gen_sys_event(pid, name, BLCKSZ);
    ev.u.sys.fd = fd;
    ev.u.sys.req = BLCKSZ;
    if (name[1] == 'r')
        ev.u.sys.out = BLCKSZ;
    else
        ev.u.sys.in = BLCKSZ;
    gen_loop_sys(g, &ev);
}

static void db_futex(GenContext *g, uint32_t pid, bool wait)
{
    TraceEvent ev = gen_sys_event(pid, "futex", wait ? 0 : 1);
    ev.u.sys.op = g_intern_string(wait ? "FUTEX_WAIT" : "FUTEX_WAKE");
    ev.u.sys.in = wait ? 4 : 0; /* the futex word, FORMAT.md */
    ev.u.sys.blocked = wait;
    gen_loop_sys(g, &ev);
}

static void db_socket(GenContext *g, const Backend *b, bool recv)
{
    uint64_t n = recv ? db_query_bytes(b) : db_reply_bytes(b);
    TraceEvent ev = gen_sys_event(b->pid, recv ? "recvfrom" : "sendto", (int64_t)n);
    ev.u.sys.fd = FD_SOCKET;
    ev.u.sys.req = recv ? PQ_RECV_BUFFER_SIZE : n;
    if (recv)
        ev.u.sys.out = n; /* recv() passes no address: addrlen 0 */
    else
        ev.u.sys.in = n;
    ev.u.sys.blocked = recv;
    gen_loop_sys(g, &ev);
}

static void db_new_txn(GenContext *g, const Db *d, Backend *b)
{
    /* pgbench tpcb-like: aid in [1, 100000 s], bid in [1, s], tid in
     * [1, 10 s], delta in [-5000, 5000]. */
    b->aid = 1 + gen_below(g, 100000 * d->scale);
    b->bid = 1 + gen_below(g, d->scale);
    b->tid = 1 + gen_below(g, 10 * d->scale);
    b->delta = (int64_t)gen_below(g, 10001) - 5000;
}

/* Runs backend i until it makes a blocked call (or the trace is full). */
static void db_step(GenContext *g, Db *d, unsigned i)
{
    Backend *b = &d->b[i];
    while (!gen_done(g)) {
        switch (b->phase) {
        case PH_RECV:
            if (b->stmt == ST_BEGIN)
                db_new_txn(g, d, b);
            db_socket(g, b, true);
            b->phase = PH_BODY;
            return;
        case PH_BODY:
            if (b->stmt == ST_UPD_ACC) {
                for (int page = 0; page < 2; page++) /* index leaf, heap page */
                    if (gen_chance(g, d->miss)) {
                        if (gen_chance(g, d->dirty))
                            db_block_io(g, b->pid, "pwrite64", FD_ACCOUNTS);
                        db_block_io(g, b->pid, "pread64", FD_ACCOUNTS);
                    }
            } else if (b->stmt == ST_END) {
                if (d->holder != NONE) {
                    g_assert(d->holder != i);
                    d->waiters++;
                    db_futex(g, b->pid, true);
                    return; /* retries the lock when it runs again */
                }
                d->holder = i;
                db_block_io(g, b->pid, "pwrite64", FD_WAL);
                TraceEvent ev = gen_sys_event(b->pid, "fsync", 0);
                ev.u.sys.fd = FD_WAL;
                ev.u.sys.blocked = true;
                gen_loop_sys(g, &ev);
                b->phase = PH_RELEASE;
                return;
            }
            b->phase = PH_SEND;
            break;
        case PH_RELEASE:
            for (; d->waiters; d->waiters--)
                db_futex(g, b->pid, false);
            d->holder = NONE;
            b->phase = PH_SEND;
            break;
        default:
            db_socket(g, b, false);
            b->stmt = (b->stmt + 1) % ST_COUNT;
            b->phase = PH_RECV;
            break;
        }
    }
}

static void db_run(GenContext *g)
{
    Db d = {.procs = (unsigned)gen_param(g, "procs"), .holder = NONE,
            .scale = (uint64_t)gen_param(g, "scale"), .miss = gen_param(g, "miss"),
            .dirty = gen_param(g, "dirty")};
    for (unsigned i = 0; i < d.procs; i++)
        d.b[i] = (Backend){.pid = DB_PID0 + i, .stmt = ST_BEGIN, .phase = PH_RECV};
    for (unsigned i = 0; !gen_done(g); i = (i + 1) % d.procs) {
        db_step(g, &d, i);
        if (d.procs > 1)
            gen_switch(g, d.b[(i + 1) % d.procs].pid);
    }
}

static const GenParam db_params[] = {
    {"procs", 4, 1, DB_MAX_PROCS, true,
     "backends sharing the CPU, one per pgbench client (pgbench -c; estimate: a small pool)"},
    {"scale", 10, 1, 100000, true, "pgbench scale factor (-s): 100 000 accounts per unit"},
    {"miss", 0.5, 0, 1, false,
     "shared-buffer miss ratio of an account page (estimate: aid is uniform, so a table twice\n"
     "        the size of shared_buffers misses half the time)"},
    {"dirty", 0.5, 0, 1, false,
     "probability that the evicted buffer is dirty and written first (estimate: every account\n"
     "        page is updated, but the background writer cleans some)"},
    {NULL, 0, 0, 0, false, NULL},
};

const Generator gen_db = {
    .name = "db",
    .summary = "PostgreSQL backends running pgbench's TPC-B-like script",
    .imitates = "PostgreSQL backends (one per pgbench -c client) running pgbench's built-in\n"
                "tpcb-like script: per statement recvfrom the query (blocked) and sendto the\n"
                "reply, sizes from the 3.0 protocol's message formats; account-page misses\n"
                "as pread64 of 8 KiB blocks (BLCKSZ), dirty victims as pwrite64; at commit a\n"
                "pwrite64 of the 8 KiB WAL page and fsync (blocked), with futex waits and\n"
                "wakes when WALWriteLock is held by a backend asleep in its fsync. The miss\n"
                "and dirty ratios are estimates (parameters).",
    .default_user_insns = 10000,
    .user_insns_source = "estimate: pgbench tpcb-like runs at roughly 10 000 transactions per\n"
                         "second per modern core, ~200 000 instructions per transaction over\n"
                         "~18 syscalls",
    .default_pages = 128,
    .default_pattern = TRACE_PAT_HOT,
    .pages_source = "estimate: shared-buffer pages of the touched rows and indexes, the\n"
                    "executor's memory, catalog caches: 512 KiB with a hot core",
    .params = db_params,
    .run = db_run,
};
