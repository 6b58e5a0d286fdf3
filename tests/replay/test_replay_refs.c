/* Version-2 replay: a program's own references through the MMU, and its
 * page faults as kernel entries, on hand-written traces whose expected
 * counts follow from their design (not from a previous run):
 *
 *  - pattern: N distinct data pages written between two getppid calls, R
 *    rounds. Every round after the first, 4g4g and kpti (whose exits
 *    flush the user TLB) take exactly N user DTLB misses, 3g1g and
 *    kpti-pcid none; the faults are N demand-zero (the data pages) and
 *    one file fault (the code page), in every layout; the refills show in
 *    the 4g4g breakdown, not in 3g1g's.
 *  - fork: K pages written before a fork; the child writes J of them and
 *    two new pages, then exits; the parent then writes all K: J cow-copy
 *    faults (the child's, the frames shared), K cow-reuse (the parent's,
 *    the child gone), K + 2 demand-zero; a reference below the stack grows
 *    it.
 *  - errors: a reference outside every mapping, a write to a read-only
 *    mapping: file:line of the reference line.
 *  - munmap/mmap/brk/mprotect/threads/exec: the faults each one causes.
 *  - merged and unmerged forms of one reference stream (a generated one,
 *    and the bundled Lackey trace of a real program) give the same TLB
 *    lookups, misses and walks, walk cycles and cycles within 1 %, and the
 *    same faults; the host shortcuts change no figure.
 *  - outputs: JSON and CSV carry the faults for version 2 only. */
#include <check.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset/preset.h"
#include "replay/lackey.h"
#include "replay/replay.h"
#include "test_tmp.h"

static Preset *preset;
static char *tmpdir;

static char *write_trace(const char *name, const char *text)
{
    char *p = g_build_filename(tmpdir, name, NULL);
    ck_assert(g_file_set_contents(p, text, -1, NULL));
    return p;
}

static ReplayResult *replay(const char *trace, const char *layout, GError **err)
{
    ReplayConfig cfg = { .preset = preset, .layout = layout_find(layout), .ram = 4ULL << 30 };
    return replay_run(&cfg, trace, err);
}

static ReplayResult *replay_ok(const char *trace, const char *layout)
{
    GError *err = NULL;
    ReplayResult *r = replay(trace, layout, &err);
    ck_assert_msg(r, "%s: %s", layout, err ? err->message : "");
    return r;
}

static uint64_t user_dtlb_misses(const ReplayResult *r)
{
    const TlbStats *s = replay_tlb(r);
    return s->misses[ACCESS_READ][TLB_PRIV_USER] + s->misses[ACCESS_WRITE][TLB_PRIV_USER];
}

#define CODE 0x10000000u
#define DATA 0x30000000u
#define STACK 0x3fff0000u

static const char header[] = "#vmsplit-trace 2\n@source test\n"
                             "1 mmap 0x10000000 4096 r-x\n"
                             "1 mmap 0x3fff0000 65536 rw- anon\n";

/* The pattern program: R rounds of 100 instructions on one code page
 * writing one dword in each of n data pages, then getppid. */
static char *pattern(unsigned n, unsigned rounds)
{
    GString *s = g_string_new(header);
    g_string_append_printf(s, "1 mmap 0x%x %u rw- anon\n", DATA, n * 4096);
    for (unsigned r = 0; r < rounds; r++) {
        g_string_append_printf(s, "1 refs 100 %u\ni 0x%x 100\n", n + 1, CODE);
        for (unsigned k = 0; k < n; k++)
            g_string_append_printf(s, "w 0x%x 4\n", DATA + k * 4096 + 64 * r);
        g_string_append(s, "1 sys getppid 1\n");
    }
    return g_string_free(s, FALSE);
}

START_TEST(test_pattern)
{
    enum { N = 8, R = 6 };           /* N well below the 64-entry DTLB */
    g_autofree char *t1 = pattern(N, 1), *tr = pattern(N, R);
    g_autofree char *p1 = write_trace("p1.vmt", t1), *pr = write_trace("pr.vmt", tr);
    static const char *layouts[] = { "3g1g", "4g4g", "kpti", "kpti-pcid", "4g4g-2003" };
    static const unsigned per_round[] = { 0, N, N, 0, N };
    uint64_t refill[5];
    for (int i = 0; i < 5; i++) {
        ReplayResult *a = replay_ok(p1, layouts[i]), *b = replay_ok(pr, layouts[i]);
        ck_assert_msg(user_dtlb_misses(b) - user_dtlb_misses(a) == (uint64_t)(R - 1) * per_round[i],
                      "%s: %lu user DTLB misses in rounds 2..%d, expected %u", layouts[i],
                      (unsigned long)(user_dtlb_misses(b) - user_dtlb_misses(a)), R,
                      (R - 1) * per_round[i]);
        const UserMmStats *f = &replay_refs(b)->faults;
        ck_assert_uint_eq(f->count[UFAULT_DEMAND_ZERO], N);
        ck_assert_uint_eq(f->count[UFAULT_FILE], 1);
        ck_assert_uint_eq(f->count[UFAULT_ANON_READ] + f->count[UFAULT_COW_COPY] +
                              f->count[UFAULT_COW_REUSE], 0);
        ck_assert_uint_eq(f->bad_fault_info, 0);
        ck_assert_uint_eq(replay_totals(b)->syscalls, R);
        ck_assert_uint_eq(replay_refs(b)->results_checked, R);   /* getppid's 1 in EAX */
        ck_assert_uint_eq(replay_refs(b)->results_wrong, 0);
        ck_assert_uint_eq(replay_refs(b)->insns, 100 * R);
        ck_assert_uint_eq(replay_refs(b)->refs, (100 + N) * R);
        /* the breakdown still adds up to the total */
        double parts[REPLAY_NPARTS], sum = 0;
        replay_breakdown(b, parts);
        for (int p = 0; p < REPLAY_NPARTS; p++)
            sum += parts[p];
        ck_assert_msg(sum == (double)replay_totals(b)->cycles, "%s: parts %.0f of %lu",
                      layouts[i], sum, (unsigned long)replay_totals(b)->cycles);
        refill[i] = replay_refs(b)->walk_cycles - replay_refs(a)->walk_cycles;
        replay_result_free(a);
        replay_result_free(b);
    }
    ck_assert_uint_eq(refill[0], 0);   /* 3g1g keeps the program's TLB entries */
    ck_assert_uint_gt(refill[1], 0);   /* 4g4g refills them after every return */
    ck_assert_uint_gt(refill[2], 0);
    ck_assert_uint_gt(refill[4], 0);   /* the 2003 entry path flushes them as well */
}
END_TEST

START_TEST(test_fork_cow)
{
    enum { K = 5, J = 3 };
    GString *s = g_string_new(header);
    g_string_append_printf(s, "1 mmap 0x%x %u rw- anon\n", DATA, (K + 2) * 4096);
    g_string_append_printf(s, "1 refs 10 %u\ni 0x%x 10\n", K + 1, CODE);
    for (unsigned k = 0; k < K; k++)
        g_string_append_printf(s, "w 0x%x 4\n", DATA + k * 4096);
    g_string_append(s, "1 sys clone 2\n1 fork 2\n2 switch\n");
    /* the child: J pre-fork pages written, one read, two new pages, and
     * one reference 2 pages below the stack mapping (growth) */
    g_string_append_printf(s, "2 refs 10 %u\ni 0x%x 10\n", J + 5, CODE);
    for (unsigned k = 0; k < J; k++)
        g_string_append_printf(s, "w 0x%x 4 3\n", DATA + k * 4096 + 8);
    g_string_append_printf(s, "r 0x%x 4\n", DATA + (K - 1) * 4096);
    g_string_append_printf(s, "w 0x%x 8\nm 0x%x 4\n", DATA + K * 4096, DATA + (K + 1) * 4096);
    g_string_append_printf(s, "w 0x%x 4\n", STACK - 2 * 4096 + 16);
    g_string_append(s, "2 sys exit_group ?\n2 exit 0\n1 switch\n");
    g_string_append_printf(s, "1 refs 10 %u\ni 0x%x 10\n", K + 1, CODE);
    for (unsigned k = 0; k < K; k++)
        g_string_append_printf(s, "m 0x%x 4\n", DATA + k * 4096 + 32);
    g_string_append(s, "1 sys getppid 1\n");
    g_autofree char *text = g_string_free(s, FALSE);
    g_autofree char *path = write_trace("fork.vmt", text);
    static const char *layouts[] = { "3g1g", "4g4g", "kpti" };
    for (int i = 0; i < 3; i++) {
        ReplayResult *r = replay_ok(path, layouts[i]);
        const UserMmStats *f = &replay_refs(r)->faults;
        ck_assert_uint_eq(f->count[UFAULT_COW_COPY], J);
        ck_assert_uint_eq(f->count[UFAULT_COW_REUSE], K);
        ck_assert_uint_eq(f->count[UFAULT_DEMAND_ZERO], K + 3);   /* + the grown stack page */
        ck_assert_uint_eq(f->count[UFAULT_FILE], 1);              /* the child inherits it */
        ck_assert_uint_eq(f->count[UFAULT_ANON_READ], 0);
        ck_assert_uint_eq(f->fork_flushes, 1);
        ck_assert_uint_eq(f->bad_fault_info, 0);   /* CR2 and error codes as the SDM says */
        ck_assert_uint_eq(replay_totals(r)->syscalls, 3);
        ck_assert_uint_eq(replay_refs(r)->results_checked, 2);   /* exit_group's is '?' */
        ck_assert_uint_eq(replay_refs(r)->results_wrong, 0);
        replay_result_free(r);
    }
}
END_TEST

/* A read of an untouched anonymous page maps the zero page; the write
 * after it demand-zeroes it (two faults, as 2.6 takes them). */
START_TEST(test_read_then_write)
{
    GString *s = g_string_new(header);
    g_string_append_printf(s, "1 mmap 0x%x 8192 rw- anon\n", DATA);
    g_string_append_printf(s, "1 refs 3 4\ni 0x%x 3\nr 0x%x 4\nw 0x%x 4\nr 0x%x 4\n", CODE, DATA,
                           DATA + 4, DATA + 4096);
    g_autofree char *text = g_string_free(s, FALSE);
    g_autofree char *path = write_trace("rw.vmt", text);
    ReplayResult *r = replay_ok(path, "4g4g");
    const UserMmStats *f = &replay_refs(r)->faults;
    ck_assert_uint_eq(f->count[UFAULT_ANON_READ], 2);
    ck_assert_uint_eq(f->count[UFAULT_DEMAND_ZERO], 1);
    replay_result_free(r);
}
END_TEST

/* munmap, mmap again, brk, mprotect there and back, a thread sharing the
 * address space, an exec that leaves it: each comment says the fault the
 * next reference takes. */
static const char mm_events[] =
    "#vmsplit-trace 2\n"
    "1 mmap 0x10000000 8192 r-x\n"
    "1 mmap 0x3fff0000 65536 rw- anon\n"
    "1 mmap 0x30000000 16384 rw- anon\n"
    "1 refs 4 3\n"
    "i 0x10000000 4\n"
    "w 0x30000000 4\n"
    "w 0x30001000 4\n"
    "1 sys munmap 0 req=4096\n"
    "1 munmap 0x30001000 4096\n"
    "1 sys mmap 805310464 req=4096\n"
    "1 mmap 0x30001000 4096 rw- anon\n"
    "1 refs 4 3\n"
    "i 0x10000000 4\n"
    "w 0x30000000 4\n"
    "r 0x30001000 4\n"
    "1 sys brk 805339136\n"
    "1 brk 0x30008000\n"
    "1 sys brk 805347328\n"
    "1 brk 0x3000a000\n"
    "1 refs 2 2\n"
    "i 0x10000000 2\n"
    "w 0x30009000 4\n"
    "1 sys mprotect 0 req=4096\n"
    "1 mprotect 0x30000000 4096 r--\n"
    "1 sys mprotect 0 req=4096\n"
    "1 mprotect 0x30000000 4096 rw-\n"
    "1 refs 2 2\n"
    "i 0x10000000 2\n"
    "w 0x30000000 4\n"
    "1 sys clone 2\n"
    "1 fork 2 shared\n"
    "2 switch\n"
    "2 refs 2 3\n"
    "i 0x10001000 2\n"
    "w 0x30002000 4\n"
    "w 0x30000010 4\n"
    "1 switch\n"
    "1 refs 1 2\n"
    "i 0x10000000 1\n"
    "r 0x30002000 4\n"
    "1 sys execve 0\n"
    "1 exec \"/bin/true\"\n"
    "1 mmap 0x10000000 4096 r-x\n"
    "1 mmap 0x3fff0000 65536 rw- anon\n"
    "1 refs 1 2\n"
    "i 0x10000000 1\n"
    "w 0x3fffff00 4\n"
    "1 sys exit_group ?\n"
    "1 exit 0\n"
    "2 switch\n"
    "2 refs 1 2\n"
    "i 0x10001000 1\n"
    "r 0x30002000 4\n"
    "2 sys exit_group ?\n"
    "2 exit 0\n"
;

START_TEST(test_mm_events)
{
    /* file: code page, the thread's code page, the new program's code
     * page; demand-zero: two data pages, the brk page, the thread's page,
     * the new program's stack; anon-read: the page mapped again after its
     * munmap, read; cow-reuse: the page made writable again by mprotect. */
    g_autofree char *path = write_trace("mm.vmt", mm_events);
    static const char *layouts[] = { "3g1g", "1g3g", "4g4g", "kpti", "kpti-pcid" };
    for (int i = 0; i < 5; i++) {
        ReplayResult *r = replay_ok(path, layouts[i]);
        const UserMmStats *f = &replay_refs(r)->faults;
        ck_assert_uint_eq(f->count[UFAULT_FILE], 3);
        ck_assert_uint_eq(f->count[UFAULT_DEMAND_ZERO], 5);
        ck_assert_uint_eq(f->count[UFAULT_ANON_READ], 1);
        ck_assert_uint_eq(f->count[UFAULT_COW_REUSE], 1);
        ck_assert_uint_eq(f->count[UFAULT_COW_COPY], 0);
        ck_assert_uint_eq(f->exec_flushes, 1);
        ck_assert_uint_eq(f->bad_fault_info, 0);
        ck_assert_uint_eq(f->pages_mapped, 0);    /* every page released at the exits */
        replay_result_free(r);
    }
}
END_TEST

/* The outputs: a version-2 replay's JSON and CSV carry the faults by kind
 * (the pattern's N demand-zero faults), a version-1 replay's do not. */
START_TEST(test_outputs)
{
    g_autofree char *t2 = pattern(8, 2);
    g_autofree char *p2 = write_trace("out2.vmt", t2);
    g_autofree char *p1 = write_trace("out1.vmt", "#vmsplit-trace 1\n1 user 100 4 hot\n"
                                                  "1 sys getppid 1\n");
    for (int v = 1; v <= 2; v++) {
        ReplayResult *r = replay_ok(v == 2 ? p2 : p1, "4g4g");
        JsonBuilder *b = json_builder_new();
        replay_to_json(r, b);
        JsonNode *root = json_builder_get_root(b);
        JsonObject *o = json_node_get_object(root);
        ck_assert_int_eq(json_object_has_member(o, "page_faults"), v == 2);
        ck_assert_int_eq(json_object_has_member(o, "refs"), v == 2);
        if (v == 2) {
            JsonObject *dz = json_object_get_object_member(
                json_object_get_object_member(o, "page_faults"), "demand-zero");
            ck_assert_int_eq(json_object_get_int_member(dz, "count"), 8);
        }
        json_node_unref(root);
        g_object_unref(b);
        char *csv = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&csv, &len);
        replay_print_csv(r, f);
        fclose(f);
        ck_assert_int_eq(strstr(csv, ",#pf:demand-zero,pae,8,") != NULL, v == 2);
        free(csv);
        replay_result_free(r);
    }
}
END_TEST

typedef struct {
    const char *refs;
    unsigned line;
    const char *expected;
} BadRefs;

static const BadRefs bad_refs[] = {
    {"1 refs 1 2\ni 0x10000000 1\nr 0x20000000 4\n", 7, "outside every mapping"},
    {"1 refs 1 2\ni 0x10000000 1\nw 0x10000010 4\n", 7, "without write permission"},
    {"1 refs 1 1\ni 0x3f000000 1\n", 6, "outside every mapping"},   /* 15 MiB below the stack */
    {"1 mmap 0x100000000 4096 rw- anon\n", 5, "outside the i686 address space"},
};

START_TEST(test_bad_refs)
{
    const BadRefs *c = &bad_refs[_i];
    g_autofree char *text = g_strconcat(header, c->refs, NULL);
    g_autofree char *name = g_strdup_printf("bad%d.vmt", _i);
    g_autofree char *path = write_trace(name, text);
    GError *err = NULL;
    ck_assert_ptr_null(replay(path, "3g1g", &err));
    ck_assert(err);
    g_autofree char *where = g_strdup_printf("%s:%u: ", path, c->line);
    ck_assert_msg(strstr(err->message, where) && strstr(err->message, c->expected),
                  "case %d: '%s' lacks '%s' or '%s'", _i, err->message, where, c->expected);
    g_error_free(err);
}
END_TEST

/* ---- merged and unmerged forms of one stream ---- */

typedef struct {
    GString *out;
    bool merge;
    GPtrArray *block;                /* lines of the current refs block */
    uint64_t insns;
    uint32_t ipage, icount;          /* pending i run */
    uint32_t daddr, dcount;          /* pending data run */
    bool d_first;                    /* the data run started before the i run */
    GHashTable *touched;             /* pages referenced so far */
    char dkind;
    unsigned dsize;
} Emitter;

static void emit_line(Emitter *e, char *line) { g_ptr_array_add(e->block, line); }

static void emit_i(Emitter *e)
{
    if (e->icount)
        emit_line(e, g_strdup_printf("i 0x%x %u", e->ipage, e->icount));
    e->icount = 0;
}

static void emit_d(Emitter *e)
{
    if (e->dcount)
        emit_line(e, e->dcount > 1 ? g_strdup_printf("%c 0x%x %u %u", e->dkind, e->daddr,
                                                     e->dsize, e->dcount)
                                   : g_strdup_printf("%c 0x%x %u", e->dkind, e->daddr, e->dsize));
    e->dcount = 0;
}

/* Both pending runs, the one that started first first (program order of
 * each side is kept; a run only absorbs references of its own side). */
static void flush_i(Emitter *e)
{
    if (e->d_first)
        emit_d(e);
    emit_i(e);
    emit_d(e);
}

static void flush_d(Emitter *e) { flush_i(e); }

/* A page's first reference is a page fault in the replay, a kernel entry
 * (which under 4g4g flushes the TLB): no run may carry a reference from
 * after it to before it, so every pending run ends there. */
static void first_touch(Emitter *e, uint32_t addr)
{
    gpointer k = GUINT_TO_POINTER(addr >> 12);
    if (g_hash_table_contains(e->touched, k))
        return;
    g_hash_table_add(e->touched, k);
    flush_i(e);
}

static void insn(Emitter *e, uint32_t addr)
{
    e->insns++;
    first_touch(e, addr);
    if (e->merge && e->icount && (addr & ~4095u) == (e->ipage & ~4095u)) {
        e->icount++;
        return;
    }
    flush_i(e);
    e->ipage = addr;
    e->icount = 1;
    e->d_first = false;
}

static void data(Emitter *e, char kind, uint32_t addr, unsigned size)
{
    first_touch(e, addr);
    if (e->merge && e->dcount && kind == e->dkind && size == e->dsize &&
        (addr & ~63u) == (e->daddr & ~63u) && (e->daddr & 63u) + size <= 64) {
        e->dcount++;
        return;
    }
    if (e->dcount)
        flush_d(e);                  /* a data reference to another line ends both runs */
    e->dkind = kind;
    e->daddr = addr;
    e->dsize = size;
    e->dcount = 1;
    e->d_first = e->icount == 0;
    if (!e->merge)
        flush_d(e);
}

static void end_block(Emitter *e)
{
    flush_i(e);
    g_string_append_printf(e->out, "1 refs %" G_GUINT64_FORMAT " %u\n", e->insns, e->block->len);
    for (guint k = 0; k < e->block->len; k++)
        g_string_append_printf(e->out, "%s\n", (char *)e->block->pdata[k]);
    g_ptr_array_set_size(e->block, 0);
    e->insns = 0;
    g_string_append(e->out, "1 sys getppid 1\n");
}

/* A program with locality: code on 4 pages, loops over 40 data pages
 * (under the DTLB size on some presets, over it on others), runs of loads
 * and stores to one line, after a first block that touches every page. */
static char *stream(bool merge)
{
    Emitter e = { .out = g_string_new(header), .merge = merge,
                  .block = g_ptr_array_new_with_free_func(g_free),
                  .touched = g_hash_table_new(g_direct_hash, g_direct_equal) };
    g_string_append_printf(e.out, "1 mmap 0x%x 16384 r-x\n1 mmap 0x%x %u rw- anon\n", CODE,
                           DATA, 40 * 4096);
    for (unsigned p = 0; p < 40; p++) {
        insn(&e, CODE);
        data(&e, 'w', DATA + p * 4096, 4);
    }
    for (unsigned p = 0; p < 4; p++)
        insn(&e, CODE + p * 4096);
    end_block(&e);
    uint32_t x = 12345;
    for (unsigned b = 0; b < 20; b++) {
        for (unsigned k = 0; k < 400; k++) {
            x = x * 1103515245u + 12345u;
            uint32_t pc = CODE + ((x >> 8) % 4) * 4096 + (k % 64) * 16;
            uint32_t page = (x >> 12) % 40, line = (x >> 20) % 64;
            unsigned run = 1 + (x >> 28) % 6;
            for (unsigned j = 0; j < run; j++) {
                insn(&e, pc + j * 3);
                char kind = "rrwm"[(x >> 4) & 3];
                data(&e, kind, DATA + page * 4096 + line * 64 + (j % 4) * 8, 8);
            }
        }
        end_block(&e);
    }
    g_ptr_array_free(e.block, TRUE);
    g_hash_table_destroy(e.touched);
    return g_string_free(e.out, FALSE);
}

static uint64_t user_misses(const ReplayResult *r)
{
    const TlbStats *s = replay_tlb(r);
    uint64_t n = 0;
    for (int a = 0; a < TLB_NACCESS; a++)
        n += s->misses[a][TLB_PRIV_USER];
    return n;
}

static uint64_t user_lookups(const ReplayResult *r, Access a)
{
    return replay_tlb(r)->lookups[a][TLB_PRIV_USER];
}

START_TEST(test_merged_unmerged)
{
    g_autofree char *ts = stream(false), *tm = stream(true);
    g_autofree char *us = write_trace("unmerged.vmt", ts), *ms = write_trace("merged.vmt", tm);
    static const char *layouts[] = { "3g1g", "4g4g" };
    for (int i = 0; i < 2; i++) {
        ReplayResult *a = replay_ok(us, layouts[i]), *b = replay_ok(ms, layouts[i]);
        const ReplayRefs *ra = replay_refs(a), *rb = replay_refs(b);
        ck_assert_uint_lt(rb->lines * 2, ra->lines);            /* merging did merge */
        ck_assert_uint_eq(ra->refs, rb->refs);
        ck_assert_uint_eq(user_misses(a), user_misses(b));
        for (int acc = 0; acc < TLB_NACCESS; acc++)   /* every reference a lookup */
            ck_assert_uint_eq(user_lookups(a, (Access)acc), user_lookups(b, (Access)acc));
        ck_assert_uint_eq(replay_totals(a)->walks, replay_totals(b)->walks);
        double dw = (double)replay_totals(a)->walk_cycles - (double)replay_totals(b)->walk_cycles;
        double dc = (double)ra->cycles - (double)rb->cycles;
        ck_assert_msg(dw * dw <= 1e-4 * (double)replay_totals(a)->walk_cycles *
                                     (double)replay_totals(a)->walk_cycles,
                      "%s: walk cycles %lu vs %lu", layouts[i],
                      (unsigned long)replay_totals(a)->walk_cycles,
                      (unsigned long)replay_totals(b)->walk_cycles);
        ck_assert_msg(dc * dc <= 1e-4 * (double)ra->cycles * (double)ra->cycles,
                      "%s: cycles %lu vs %lu", layouts[i], (unsigned long)ra->cycles,
                      (unsigned long)rb->cycles);
        replay_result_free(a);
        replay_result_free(b);
    }
}
END_TEST

/* A real program's stream: the bundled Lackey trace of qsortwords (a
 * 32-bit program: its stack folded down by 0xC0000000 into the 1g3g
 * window, references that cross a page split in two), pages executed and
 * never written announced as file r-x mappings, the rest anonymous, a
 * getppid every 100000 references. */
static uint32_t fold(uint64_t a) { return (uint32_t)(a >= 0xC0000000u ? a - 0xC0000000u : a); }

static GString *lackey_mappings(const char *path)
{
    GError *err = NULL;
    LackeyReader *lr = lackey_open(path, false, &err);
    ck_assert_msg(lr, "%s", err ? err->message : "");
    GHashTable *code = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *other = g_hash_table_new(g_direct_hash, g_direct_equal);
    LackeyRef r;
    while (lackey_next(lr, &r, &err) == 1)
        for (uint32_t a = fold(r.addr), end = a + r.size; a < end; a = (a | 4095u) + 1) {
            gpointer k = GUINT_TO_POINTER(a >> 12);
            if (r.kind == LACKEY_I)
                g_hash_table_add(code, k);
            else if (r.kind != LACKEY_L)
                g_hash_table_add(other, k);
        }
    ck_assert(!err);
    lackey_close(lr);
    /* The whole window anonymous, then each code page mapped over it as a
     * file page (one mmap per page: mmap over a mapping replaces it). */
    GString *m = g_string_new("#vmsplit-trace 2\n@source test: qsortwords.lackey.gz\n"
                              "1 mmap 0x1000 1056964608 rwx anon\n");
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, code);
    while (g_hash_table_iter_next(&it, &k, NULL))
        if (!g_hash_table_contains(other, k))
            g_string_append_printf(m, "1 mmap 0x%x 4096 r-x\n", GPOINTER_TO_UINT(k) << 12);
    g_hash_table_destroy(code);
    g_hash_table_destroy(other);
    return m;
}

static char *lackey_stream(bool merge)
{
    g_autofree char *path = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "workloads",
                                             "memtraces", "qsortwords.lackey.gz", NULL);
    Emitter e = { .out = lackey_mappings(path), .merge = merge, .block = g_ptr_array_new_with_free_func(g_free),
                  .touched = g_hash_table_new(g_direct_hash, g_direct_equal) };
    GError *err = NULL;
    LackeyReader *lr = lackey_open(path, false, &err);
    LackeyRef r;
    uint64_t n = 0;
    while (lackey_next(lr, &r, &err) == 1) {
        for (uint32_t a = fold(r.addr), end = a + r.size; a < end; a = (a | 4095u) + 1) {
            uint32_t part = MIN(end, (a | 4095u) + 1) - a;
            if (r.kind == LACKEY_I)
                insn(&e, a);
            else
                data(&e, r.kind == LACKEY_L ? 'r' : r.kind == LACKEY_S ? 'w' : 'm', a,
                     MIN(part, 64u));
            if (r.kind == LACKEY_I)
                break;               /* one fetch per instruction */
        }
        if (++n % 100000 == 0)
            end_block(&e);
    }
    ck_assert(!err);
    lackey_close(lr);
    end_block(&e);
    g_ptr_array_free(e.block, TRUE);
    g_hash_table_destroy(e.touched);
    return g_string_free(e.out, FALSE);
}

START_TEST(test_merged_unmerged_real)
{
    g_autofree char *ts = lackey_stream(false), *tm = lackey_stream(true);
    g_autofree char *us = write_trace("qs-u.vmt", ts), *ms = write_trace("qs-m.vmt", tm);
    static const char *layouts[] = { "3g1g", "4g4g" };
    for (int i = 0; i < 2; i++) {
        ReplayResult *a = replay_ok(us, layouts[i]), *b = replay_ok(ms, layouts[i]);
        const ReplayRefs *ra = replay_refs(a), *rb = replay_refs(b);
        ck_assert_uint_lt(rb->lines * 2, ra->lines);
        ck_assert_uint_eq(ra->refs, rb->refs);
        ck_assert_uint_eq(user_misses(a), user_misses(b));
        for (int acc = 0; acc < TLB_NACCESS; acc++)
            ck_assert_uint_eq(user_lookups(a, (Access)acc), user_lookups(b, (Access)acc));
        ck_assert_uint_eq(replay_totals(a)->walks, replay_totals(b)->walks);
        double dw = (double)replay_totals(a)->walk_cycles - (double)replay_totals(b)->walk_cycles;
        double dc = (double)ra->cycles - (double)rb->cycles;
        ck_assert(dw * dw <= 1e-4 * (double)replay_totals(a)->walk_cycles *
                                 (double)replay_totals(a)->walk_cycles);
        ck_assert(dc * dc <= 1e-4 * (double)ra->cycles * (double)ra->cycles);
        for (int k = 0; k < UFAULT_KINDS; k++)
            ck_assert_uint_eq(ra->faults.count[k], rb->faults.count[k]);
        replay_result_free(a);
        replay_result_free(b);
    }
}
END_TEST

/* The host shortcuts (the MMU's memos, which count a merged run's
 * repeats as hits at once) change no figure: the merged stream replayed
 * with and without them gives the same cycles, walks and TLB counts. */
START_TEST(test_shortcuts_exact)
{
    g_autofree char *tm = stream(true);
    g_autofree char *ms = write_trace("merged.vmt", tm);
    static const char *layouts[] = { "3g1g", "4g4g", "kpti" };
    for (int i = 0; i < 3; i++) {
        ReplayResult *res[2];
        for (int off = 0; off < 2; off++) {
            ReplayConfig cfg = { .preset = preset, .layout = layout_find(layouts[i]),
                                 .ram = 4ULL << 30, .no_host_shortcuts = off };
            GError *err = NULL;
            res[off] = replay_run(&cfg, ms, &err);
            ck_assert_msg(res[off], "%s", err ? err->message : "");
        }
        const ReplayTotals *a = replay_totals(res[0]), *b = replay_totals(res[1]);
        ck_assert_uint_eq(a->cycles, b->cycles);
        ck_assert_uint_eq(a->walks, b->walks);
        ck_assert_uint_eq(a->walk_cycles, b->walk_cycles);
        ck_assert_uint_eq(replay_refs(res[0])->cycles, replay_refs(res[1])->cycles);
        const TlbStats *ta = replay_tlb(res[0]), *tb = replay_tlb(res[1]);
        for (int acc = 0; acc < TLB_NACCESS; acc++)
            for (int priv = 0; priv < 2; priv++) {
                ck_assert_uint_eq(ta->lookups[acc][priv], tb->lookups[acc][priv]);
                ck_assert_uint_eq(ta->hits[acc][priv], tb->hits[acc][priv]);
                ck_assert_uint_eq(ta->misses[acc][priv], tb->misses[acc][priv]);
            }
        replay_result_free(res[0]);
        replay_result_free(res[1]);
    }
}
END_TEST

static void setup(void) { tmpdir = test_tmpdir_new(); }
static void teardown(void) { test_tmpdir_free(tmpdir); }

int main(void)
{
    GError *err = NULL;
    preset = preset_load("p4-northwood", &err);
    g_assert(preset);
    Suite *s = suite_create("replay-refs");
    TCase *tc = tcase_create("refs");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_pattern);
    tcase_add_test(tc, test_fork_cow);
    tcase_add_test(tc, test_read_then_write);
    tcase_add_test(tc, test_mm_events);
    tcase_add_test(tc, test_outputs);
    tcase_add_loop_test(tc, test_bad_refs, 0, G_N_ELEMENTS(bad_refs));
    tcase_add_test(tc, test_merged_unmerged);
    tcase_add_test(tc, test_shortcuts_exact);
    tcase_add_test(tc, test_merged_unmerged_real);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    preset_free(preset);
    return failed ? 1 : 0;
}
