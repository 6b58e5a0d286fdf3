/* vmcap: a Valgrind tool that records what vmsplit replays of a real
 * program: its user-mode memory references (instruction fetches, loads,
 * stores, modifies, with sizes), merged as they happen, its system calls
 * (number, arguments, result, host timestamps), its thread switches, the
 * signals delivered to its handlers and the mappings its exec made. One compact binary stream per process image
 * (tools/vmcap/vmcap_stream.h); `vmsplit import-capture` turns the streams
 * of a run into a version-2 trace.
 *
 * Why a tool of our own: Lackey prints every reference as text (0.8 M
 * references/s and 14 bytes each, issue 18); this one merges runs before
 * they reach the buffer and writes a few bytes per run.
 *
 * Merging (the rule the trace format documents): instruction fetches and
 * data references are two independent streams, each with one open run. An
 * instruction on the open instruction run's 4 KiB page extends it; a data
 * reference of the open data run's kind and size whose address lies in its
 * 64-byte line extends it; anything else closes that stream's run and opens
 * a new one. Runs are written in the order of their first reference (a small
 * queue holds runs closed while an older run is still open), so each TLB
 * sees exactly the page sequence of the unmerged stream. A data reference
 * that crosses a 4 KiB page is two references, one per page (and one longer
 * than 64 bytes, an FXSAVE, is split by 64-byte line).
 *
 * Instrumentation: at translation time, consecutive instructions of a
 * superblock on one page with no side exit between them are counted by one
 * helper call at the first of them (a side exit may skip the rest, so a
 * group ends there); each load, store and modify calls the data helper with
 * its address (guarded accesses only when their guard holds) and the number
 * of the group's instructions after its own, so that a fault can split the
 * group's run where it happens (data_one). A load and a
 * store of the same address and size in one instruction are one modify, as
 * Lackey does.
 *
 * Outputs: the merged form (the default), the unmerged one (--merge=no,
 * one reference a run: what merging must not change), or both from one
 * run (--merge=both, for scripts/capture-mergecheck), each with its own
 * merging state and fault table (the Out struct). */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_xarray.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "vmcap_stream.h"

/* ---------------- options ---------------- */
static const HChar *clo_out_dir = ".";
static const HChar *clo_unmerged_dir = NULL;
static const HChar *clo_merge = "yes";
static Bool has_merged = True, has_unmerged = False;

static Bool vc_process_cmd_line_option(const HChar *arg)
{
    if VG_STR_CLO(arg, "--out-dir", clo_out_dir) {}
    else if VG_STR_CLO(arg, "--unmerged-dir", clo_unmerged_dir) {}
    else if VG_STR_CLO(arg, "--merge", clo_merge) {
        has_merged = VG_(strcmp)(clo_merge, "no") != 0;
        has_unmerged = VG_(strcmp)(clo_merge, "yes") != 0;
        if (!has_merged && !has_unmerged) return False;
        if (has_merged && has_unmerged && VG_(strcmp)(clo_merge, "both") != 0) return False;
    } else return False;
    return True;
}

static void vc_print_usage(void)
{
    VG_(printf)("    --out-dir=DIR        write DIR/vmcap.PID.SEQ streams [.]\n"
                "    --merge=no           every reference its own run (the unmerged form,\n"
                "                         to check what merging changes) [yes]\n"
                "    --merge=both         both forms of the same run: merged in --out-dir,\n"
                "                         unmerged in --unmerged-dir\n"
                "    --unmerged-dir=DIR   with --merge=both [OUT-DIR/unmerged]\n");
}

static void vc_print_debug_usage(void) {}

/* ---------------- output buffer ---------------- */
#define BUF_SIZE (1 << 20)
#define BUF_SLACK 512 /* the largest record fits in the slack */

typedef struct {
    Addr addr;
    ULong n;
    UChar kind; /* 0 instruction, 1 read, 2 write, 3 modify */
    UChar size;
    UChar open;
} Run;

#define PG_FRONT 512 /* a direct-mapped cache in front of the fault table */
#define QN 4096 /* power of two */
#define QMASK (QN - 1)
/* One output: a stream file and the merging state that feeds it. */
typedef struct {
    Bool merge;                 /* merged runs, or one reference a run */
    const HChar *dir;
    UChar buf[BUF_SIZE + BUF_SLACK];
    UInt buf_used;
    Int out_fd;
    ULong bytes_written;
    Run q[QN];
    UInt q_head, q_tail;        /* free-running indices */
    Run *i_run, *d_run;         /* the open runs, or NULL */
    Addr i_page, d_line;
    UWord d_sk;                 /* size | kind << 8 of the open data run */
    Addr last_i_addr, last_d_addr;
    ULong raw_refs, runs_written;
    /* the pages whose next reference may fault (below) */
    UWord *pg_key;              /* page + 1, or 0 for an empty slot */
    UChar *pg_flag;
    UWord pg_cap, pg_n;
    UWord front_key[PG_FRONT];
    UChar front_flag[PG_FRONT];
} Out;

/* Every output: one normally; with --merge=both the merged form (outs[0])
 * and the unmerged one (outs[1]) of the same run, so that the two differ
 * by merging alone (two runs of a program with several processes are
 * scheduled differently). O is the output being written: the helpers and
 * hooks set it before they touch the state. */
static Out outs[2];
static Int n_outs = 1;
static Out *O = &outs[0];
#define FOR_OUTS for (O = outs; O < outs + n_outs; O++)

static void buf_flush(void)
{
    UInt off = 0;
    while (off < O->buf_used) {
        Int n = VG_(write)(O->out_fd, O->buf + off, O->buf_used - off);
        if (n <= 0) {
            VG_(umsg)("vmcap: write to the stream failed; stopping\n");
            VG_(exit)(3);
        }
        off += (UInt)n;
    }
    O->bytes_written += O->buf_used;
    O->buf_used = 0;
}

static inline void put_u8(UInt v) { O->buf[O->buf_used++] = (UChar)v; }
static inline void put_le(ULong v, Int bytes)
{
    for (Int i = 0; i < bytes; i++) O->buf[O->buf_used++] = (UChar)(v >> (8 * i));
}
static inline void put_uleb(ULong v)
{
    while (v >= 0x80) {
        O->buf[O->buf_used++] = (UChar)(v | 0x80);
        v >>= 7;
    }
    O->buf[O->buf_used++] = (UChar)v;
}
static inline ULong zigzag(Long v) { return ((ULong)v << 1) ^ (ULong)(v >> 63); }
static void put_str(const HChar *s, UInt max)
{
    UInt n = s ? VG_(strlen)(s) : 0;
    if (n > max) n = max;
    put_le(n, 2);
    VG_(memcpy)(O->buf + O->buf_used, s, n);
    O->buf_used += n;
}
static inline void buf_room(UInt need)
{
    if (O->buf_used + need > BUF_SIZE) buf_flush();
}

static ULong now_ns(void)
{
    struct vki_timespec ts;
    VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
    return (ULong)ts.tv_sec * 1000000000ULL + (ULong)ts.tv_nsec;
}

/* ---------------- runs ---------------- */

static UInt size_code(UInt size)
{
    for (UInt c = 0; c < VMCAP_DATA_SZ_EXPLICIT; c++)
        if (size == (1u << c)) return c;
    return VMCAP_DATA_SZ_EXPLICIT;
}

static void run_encode(const Run *r)
{
    ULong n = r->n;
    while (n > 0) { /* the format's N is at most 2^32-1 */
        ULong part = n > 0xffffffffULL ? 0xffffffffULL : n;
        buf_room(32);
        if (r->kind == 0) {
            put_u8(VMCAP_TAG_INSN);
            put_uleb(zigzag((Long)(r->addr - O->last_i_addr)));
            put_uleb(part);
            O->last_i_addr = r->addr;
        } else {
            UInt code = size_code(r->size);
            put_u8(VMCAP_TAG_DATA | (UInt)(r->kind - 1) << 5 | (part == 1 ? VMCAP_DATA_ONE : 0) | code);
            if (code == VMCAP_DATA_SZ_EXPLICIT) put_u8(r->size);
            put_uleb(zigzag((Long)(r->addr - O->last_d_addr)));
            if (part != 1) put_uleb(part);
            O->last_d_addr = r->addr;
        }
        O->runs_written++;
        n -= part;
    }
}

static void q_drain(void)
{
    while (O->q_head != O->q_tail && !O->q[O->q_head & QMASK].open) {
        run_encode(&O->q[O->q_head & QMASK]);
        O->q_head++;
    }
}

static void close_run(Run *r)
{
    r->open = 0;
    if (r == O->i_run) O->i_run = NULL;
    if (r == O->d_run) O->d_run = NULL;
    q_drain();
}

static Run *open_run(UChar kind, Addr a, UChar size)
{
    if (O->q_tail - O->q_head == QN) /* full: the oldest run is open; close it */
        close_run(&O->q[O->q_head & QMASK]);
    Run *r = &O->q[O->q_tail & QMASK];
    O->q_tail++;
    r->addr = a;
    r->n = 0;
    r->kind = kind;
    r->size = size;
    r->open = 1;
    return r;
}

/* Ends both runs and writes everything queued: before any other record. */
static void runs_flush(void)
{
    if (O->i_run) close_run(O->i_run);
    if (O->d_run) close_run(O->d_run);
    tl_assert(O->q_head == O->q_tail);
}

/* ---------------- pages whose next reference may fault ----------------
 * Merging an instruction run across a data reference that faults in the
 * replay would move fetches from after the fault to before it. Under 4g4g
 * and KPTI the fault's kernel entry flushes the user TLB, so the unmerged
 * stream fetches the code page again and misses, and the merged one would
 * not (measured on gzip before this rule: 69 fewer ITLB misses of 7,406
 * under 4g4g). So a data reference that may fault (the first reference to
 * its page, or the first write, since the table was last cleared) closes
 * the open instruction run, and a fetch that may fault (the first from its
 * page) closes the open data run. The replay's faults happen only there: first
 * touch (demand-zero, file, zero page) and first write (copy-on-write). The
 * table forgets the writes at a fork (copy-on-write in both processes) and
 * everything at a syscall that can change mappings or protections: never
 * fewer splits than the replay's faults need; an extra split costs a few
 * bytes and no figure. */
#define PG_R 1
#define PG_W 2

static void pg_alloc(UWord cap)
{
    O->pg_cap = cap;
    O->pg_n = 0;
    O->pg_key = VG_(calloc)("vmcap.pages", cap, sizeof *O->pg_key);
    O->pg_flag = VG_(calloc)("vmcap.pages", cap, sizeof *O->pg_flag);
}

static UChar *pg_slot(UWord page)
{
    if (O->pg_key == NULL) pg_alloc(1 << 14);
    UWord mask = O->pg_cap - 1, i = (page * 0x9E3779B97F4A7C15ULL) >> 20 & mask;
    while (O->pg_key[i] != 0 && O->pg_key[i] != page + 1) i = (i + 1) & mask;
    if (O->pg_key[i] == 0) {
        if (2 * (O->pg_n + 1) > O->pg_cap) { /* grow: rehash into twice the slots */
            UWord *ok = O->pg_key, oc = O->pg_cap;
            UChar *of = O->pg_flag;
            pg_alloc(oc * 2);
            for (UWord j = 0; j < oc; j++)
                if (ok[j] != 0) *pg_slot(ok[j] - 1) = of[j];
            VG_(free)(ok);
            VG_(free)(of);
            return pg_slot(page);
        }
        O->pg_key[i] = page + 1;
        O->pg_flag[i] = 0;
        O->pg_n++;
    }
    return &O->pg_flag[i];
}

/* Records a data reference (kind 1 read, 2 write, 3 modify) and says
 * whether the replay may take a page fault at it. */
static Bool pg_may_fault(Addr a, UWord kind)
{
    UWord page = a >> 12, f = page & (PG_FRONT - 1);
    UChar need = kind == 1 ? PG_R : PG_W, set = kind == 1 ? PG_R : PG_R | PG_W;
    if (LIKELY(O->front_key[f] == page + 1 && (O->front_flag[f] & need))) return False;
    UChar *fl = pg_slot(page);
    Bool fault = (*fl & need) == 0;
    *fl |= set;
    O->front_key[f] = page + 1;
    O->front_flag[f] = *fl;
    return fault;
}

static void pg_forget(UChar keep)
{
    for (UWord i = 0; i < O->pg_cap; i++) O->pg_flag[i] &= keep;
    for (UWord i = 0; i < PG_FRONT; i++) O->front_flag[i] &= keep;
}

static inline void insns_to(Addr a, UWord n)
{
    O->raw_refs += n;
    if (LIKELY(O->i_run != NULL && (a >> 12) == O->i_page && O->merge)) {
        O->i_run->n += n;
        return;
    }
    if (pg_may_fault(a, 1) && O->d_run) close_run(O->d_run); /* a fetch may fault too */
    if (O->i_run) close_run(O->i_run);
    O->i_run = open_run(0, a, 0);
    O->i_run->n = n;
    O->i_page = a >> 12;
}

/* A group of n instructions (merged output); one instruction (unmerged). */
static VG_REGPARM(2) void vc_insns(Addr a, UWord n)
{
    O = &outs[0];
    insns_to(a, n);
}

static VG_REGPARM(1) void vc_insn_u(Addr a)
{
    O = &outs[n_outs - 1];
    insns_to(a, 1);
}

/* A data reference that may fault ends the open instruction run, which
 * must then hold no fetch made after it. But a group's fetches are counted
 * at its first instruction (instrumentation, below), so the run already
 * holds the `after` (pos >> 12) instructions of the group that follow the
 * one making this reference: they leave the run and open a new one (same
 * page, the first at page offset pos & 0xfff) behind the reference's own
 * run. Without this the replay would make their fetches before the fault's
 * TLB flush instead of after it:
 * a group [load from a new page; more instructions] followed by a jump to
 * another page misses once on the group's page after the fault unmerged and
 * not at all merged (gzip: 6 fewer ITLB misses of 4,437 under 4g4g).
 * A run left with no instruction (they all followed an earlier fault of the
 * same instruction) is written as nothing. */
static void data_one(Addr a, UWord size, UWord kind, UWord pos)
{
    UWord sk = size | (kind << 8);
    O->raw_refs++;
    if (O->d_run != NULL && (a >> 6) == O->d_line && sk == O->d_sk && O->merge) {
        O->d_run->n++;
        return;
    }
    Bool fault = pg_may_fault(a, kind);
    UWord after = pos >> 12;
    Addr page = O->i_page;
    Bool reopen = fault && O->i_run != NULL && after > 0;
    if (fault && O->i_run) {
        tl_assert(O->i_run->n >= after);
        O->i_run->n -= after;
        close_run(O->i_run);
    }
    if (O->d_run) close_run(O->d_run);
    O->d_run = open_run((UChar)kind, a, (UChar)size);
    O->d_run->n = 1;
    O->d_line = a >> 6;
    O->d_sk = sk;
    if (reopen) {
        O->i_run = open_run(0, page << 12 | (pos & 0xfff), 0);
        O->i_run->n = after;
        O->i_page = page;
    }
}

/* sk = size | kind << 8, kind 1 read, 2 write, 3 modify; pos = after << 12
 * | the page offset of the next instruction of its group (data_one). */
static inline void data_to(Addr a, UWord sk, UWord pos)
{
    UWord size = sk & 0xff;
    if (LIKELY(O->d_run != NULL && (a >> 6) == O->d_line && sk == O->d_sk &&
               (a & 0xfff) + size <= 0x1000 && O->merge)) {
        O->raw_refs++;
        O->d_run->n++;
        return;
    }
    UWord kind = sk >> 8;
    while (size > 0) {
        UWord piece = size;
        if (piece > VMCAP_DATA_MAX) /* long accesses: one piece per 64-byte line */
            piece = VMCAP_DATA_MAX - (a & (VMCAP_DATA_MAX - 1));
        if ((a & 0xfff) + piece > 0x1000) /* never across a page */
            piece = 0x1000 - (a & 0xfff);
        data_one(a, piece, kind, pos);
        a += piece;
        size -= piece;
    }
}

/* Accesses longer than 255 bytes (XSAVE areas): the size does not fit sk. */
static void data_big_to(Addr a, UWord sk, UWord pos)
{
    UWord size = sk >> 8, kind = sk & 0xff;
    while (size > 0) {
        UWord piece = VMCAP_DATA_MAX - (a & (VMCAP_DATA_MAX - 1));
        if (piece > size) piece = size;
        if ((a & 0xfff) + piece > 0x1000) piece = 0x1000 - (a & 0xfff);
        data_one(a, piece, kind, pos);
        a += piece;
        size -= piece;
    }
}

/* The merged output's helpers get pos; the unmerged one's need none (every
 * instruction is its own run). */
static VG_REGPARM(3) void vc_data(Addr a, UWord sk, UWord pos)
{
    O = &outs[0];
    data_to(a, sk, pos);
}

static VG_REGPARM(3) void vc_data_big(Addr a, UWord sk, UWord pos)
{
    O = &outs[0];
    data_big_to(a, sk, pos);
}

static VG_REGPARM(2) void vc_data_u(Addr a, UWord sk)
{
    O = &outs[n_outs - 1];
    data_to(a, sk, 0);
}

static VG_REGPARM(2) void vc_data_big_u(Addr a, UWord sk)
{
    O = &outs[n_outs - 1];
    data_big_to(a, sk, 0);
}

/* ---------------- threads ---------------- */
static Int cur_tid = -1;
static Int lwp_of[1024]; /* Valgrind thread id -> Linux tid (0: not known yet) */

static Int lwp_for(ThreadId tid)
{
    if (tid < 1024) {
        if (lwp_of[tid] == 0) lwp_of[tid] = VG_(gettid)();
        return lwp_of[tid];
    }
    return VG_(gettid)();
}

static void vc_start_client_code(ThreadId tid, ULong blocks)
{
    (void)blocks;
    Int lwp = lwp_for(tid);
    if (lwp == cur_tid) return;
    FOR_OUTS {
        runs_flush();
        buf_room(8);
        put_u8(VMCAP_TAG_THREAD);
        put_le((ULong)(UInt)lwp, 4);
    }
    cur_tid = lwp;
}

static void vc_thread_exit(ThreadId tid)
{
    if (tid < 1024) lwp_of[tid] = 0;
}

/* ---------------- syscalls ---------------- */
/* Path arguments (x86-64 numbers, asm/unistd_64.h through Valgrind's vki):
 * the converter needs their length for the bytes copied from user space. */
static Int path_args(UInt nr, Int out[VMCAP_MAX_STRS])
{
    switch (nr) {
    case __NR_open: case __NR_stat: case __NR_lstat: case __NR_access:
    case __NR_execve: case __NR_truncate: case __NR_chdir: case __NR_mkdir:
    case __NR_rmdir: case __NR_creat: case __NR_unlink: case __NR_readlink:
    case __NR_chmod: case __NR_chown: case __NR_lchown: case __NR_statfs:
    case __NR_memfd_create:
        out[0] = 0; return 1;
    case __NR_rename: case __NR_link: case __NR_symlink:
        out[0] = 0; out[1] = 1; return 2;
    case __NR_openat: case __NR_mkdirat: case __NR_newfstatat: case __NR_unlinkat:
    case __NR_readlinkat: case __NR_fchmodat: case __NR_faccessat: case __NR_utimensat:
    case __NR_execveat: case __NR_statx: case __NR_fchownat: case __NR_mknodat:
#ifdef __NR_faccessat2
    case __NR_faccessat2:
#endif
#ifdef __NR_openat2
    case __NR_openat2:
#endif
        out[0] = 1; return 1;
    case __NR_renameat: case __NR_linkat: case __NR_renameat2:
        out[0] = 1; out[1] = 3; return 2;
    case __NR_symlinkat:
        out[0] = 0; out[1] = 2; return 2;
    default:
        return 0;
    }
}

static UInt client_strlen(Addr a)
{
    UInt n = 0;
    if (a == 0) return VMCAP_STR_NONE;
    while (n < 65536) {
        if (((a + n) & 0xfff) == 0 || n == 0)
            if (!VG_(am_is_valid_for_client)(a + n, 1, VKI_PROT_READ)) return VMCAP_STR_NONE;
        if (((const HChar *)a)[n] == 0) return n;
        n++;
    }
    return VMCAP_STR_NONE;
}

/* The hooks write the same record, with the same time, to every output. */
static void pre_syscall_to(Int lwp, UInt nr, UWord *args, UInt nargs, ULong t)
{
    Int which[VMCAP_MAX_STRS];
    Int nstr = path_args(nr, which);
    runs_flush();
    if ((nr == __NR_execve || nr == __NR_execveat) && nargs > 1) {
        Addr p = (Addr)args[nr == __NR_execve ? 0 : 1];
        UInt len = client_strlen(p);
        if (len != VMCAP_STR_NONE) {
            buf_room(8 + 400);
            put_u8(VMCAP_TAG_EXECPATH);
            put_str((const HChar *)p, 400);
        }
    }
    buf_room(128);
    put_u8(VMCAP_TAG_SYS_PRE);
    put_le((ULong)(UInt)lwp, 4);
    put_le(nr, 2);
    put_le(t, 8);
    for (UInt i = 0; i < VMCAP_NARGS; i++) put_le(i < nargs ? args[i] : 0, 8);
    put_u8((UInt)nstr);
    for (Int i = 0; i < nstr; i++) {
        put_u8((UInt)which[i]);
        put_le((UInt)which[i] < nargs ? client_strlen((Addr)args[which[i]]) : VMCAP_STR_NONE, 4);
    }
    /* The image may end in this call (execve, exit_group): nothing may stay
     * in the buffer that a new image or a dying process would lose. */
    if (nr == __NR_execve || nr == __NR_execveat || nr == __NR_exit_group || nr == __NR_exit)
        buf_flush();
}

static void vc_pre_syscall(ThreadId tid, UInt nr, UWord *args, UInt nargs)
{
    Int lwp = lwp_for(tid);
    ULong t = now_ns();
    FOR_OUTS pre_syscall_to(lwp, nr, args, nargs, t);
}

static void post_syscall_to(Int lwp, UInt nr, SysRes res, ULong t)
{
    runs_flush();
    switch (nr) { /* mappings or protections may have changed */
    case __NR_mmap: case __NR_munmap: case __NR_mremap: case __NR_mprotect:
    case __NR_brk: case __NR_madvise: case __NR_shmat: case __NR_shmdt:
    case __NR_remap_file_pages: case __NR_pkey_mprotect:
        pg_forget(0);
        break;
    default:
        break;
    }
    buf_room(32);
    put_u8(VMCAP_TAG_SYS_POST);
    put_le((ULong)(UInt)lwp, 4);
    put_le(nr, 2);
    put_le(t, 8);
    Long r = sr_isError(res) ? -(Long)sr_Err(res) : (Long)sr_Res(res);
    put_le((ULong)r, 8);
}

static void vc_post_syscall(ThreadId tid, UInt nr, UWord *args, UInt nargs, SysRes res)
{
    (void)args;
    (void)nargs;
    Int lwp = lwp_for(tid);
    ULong t = now_ns();
    FOR_OUTS post_syscall_to(lwp, nr, res, t);
}

/* A signal delivered to a handler: the handler's code follows as user work. */
static void vc_pre_deliver_signal(ThreadId tid, Int signo, Bool alt_stack)
{
    (void)alt_stack;
    Int lwp = lwp_for(tid);
    FOR_OUTS {
        runs_flush();
        buf_room(8);
        put_u8(VMCAP_TAG_SIGNAL);
        put_le((ULong)(UInt)lwp, 4);
        put_u8((UInt)signo);
    }
}

/* ---------------- stream files ---------------- */
static void stream_open(void)
{
    HChar path[4096];
    Int pid = VG_(getpid)();
    for (Int seq = 0; seq < 1000; seq++) {
        VG_(snprintf)(path, sizeof path, "%s/vmcap.%d.%d", O->dir, pid, seq);
        SysRes r = VG_(open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_EXCL, 0644);
        if (!sr_isError(r)) {
            O->out_fd = (Int)sr_Res(r);
            break;
        }
        if (sr_Err(r) != VKI_EEXIST) break;
    }
    if (O->out_fd < 0) {
        VG_(umsg)("vmcap: cannot create a stream in '%s'\n", O->dir);
        VG_(exit)(3);
    }
    O->buf_used = 0;
    VG_(memcpy)(O->buf, VMCAP_MAGIC, VMCAP_MAGIC_LEN);
    O->buf_used = VMCAP_MAGIC_LEN;
}

static void put_proc(ULong t)
{
    HChar cmd[1024];
    UInt used = 0;
    cmd[0] = 0;
    if (VG_(args_the_exename)) { /* argv[0] as the kernel resolved it, then the arguments */
        used = VG_(strlen)(VG_(args_the_exename));
        if (used > 500) used = 500;
        VG_(memcpy)(cmd, VG_(args_the_exename), used);
        cmd[used] = 0;
    }
    for (Word i = 0; VG_(args_for_client) && i < VG_(sizeXA)(VG_(args_for_client)); i++) {
        const HChar *a = *(HChar **)VG_(indexXA)(VG_(args_for_client), i);
        UInt n = VG_(strlen)(a);
        if (used + n + 2 >= sizeof cmd) break;
        if (used) cmd[used++] = ' ';
        VG_(memcpy)(cmd + used, a, n);
        used += n;
        cmd[used] = 0;
    }
    buf_room(8 + 16 + 2 * 1100);
    put_u8(VMCAP_TAG_PROC);
    put_le((ULong)(UInt)VG_(getpid)(), 4);
    put_le((ULong)(UInt)VG_(getppid)(), 4);
    put_le(t, 8);
    put_str(VG_(args_the_exename), 1000);
    put_str(cmd, 1000);
}

/* A fork: the child writes its own stream from here on. The parent's
 * buffer was flushed before the fork, so the child inherits nothing. */
static void vc_fork_pre(ThreadId tid)
{
    (void)tid;
    FOR_OUTS {
        pg_forget(PG_R); /* every written page is copy-on-write in both now */
        runs_flush();
        buf_flush();
    }
}

static void vc_fork_child(ThreadId tid)
{
    ULong t = now_ns();
    for (Int i = 0; i < 1024; i++) lwp_of[i] = 0;
    cur_tid = -1;
    FOR_OUTS {
        VG_(close)(O->out_fd);
        O->out_fd = -1;
        O->raw_refs = O->runs_written = O->bytes_written = 0;
        O->last_i_addr = O->last_d_addr = 0;
        stream_open();
        put_proc(t);
    }
    (void)tid;
}

/* The exec-time mappings, as the core announces them before the first
 * instruction. The aspace manager says file or anonymous. */
static void vc_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
    (void)di;
    const NSegment *seg = VG_(am_find_nsegment)(a);
    UInt flags = 0;
    if (!seg || seg->kind != SkFileC) flags |= VMCAP_MAP_ANON;
    if (seg && seg->kind == SkShmC) flags |= VMCAP_MAP_SHARED;
    /* the initial stack: the core keeps a reservation that shrinks from
     * above (SmUpper) right under it, for its growth */
    const NSegment *below = a > 0 ? VG_(am_find_nsegment)(a - 1) : NULL;
    if (seg && seg->kind == SkAnonC && below && below->kind == SkResvn && below->smode == SmUpper)
        flags |= VMCAP_MAP_STACK;
    FOR_OUTS {
        buf_room(32);
        put_u8(VMCAP_TAG_MAP);
        put_le(a, 8);
        put_le(len, 8);
        put_u8((rr ? VMCAP_PROT_R : 0) | (ww ? VMCAP_PROT_W : 0) | (xx ? VMCAP_PROT_X : 0));
        put_u8(flags);
    }
}

/* ---------------- instrumentation ---------------- */
typedef struct {
    IRExpr *addr;
    Int size;
    Int kind; /* 1 read, 2 write, 3 modify */
    IRExpr *guard;
    UWord pos; /* after << 12 | next's page offset (data_one) */
} DataEv;

#define MAX_EVS 64
static DataEv evs[MAX_EVS];
static Int n_evs;

static void add_dirty(IRSB *sb, Int regparms, const HChar *name, void *fn, IRExpr **argv,
                      IRExpr *guard)
{
    IRDirty *di = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), argv);
    if (guard) di->guard = guard;
    addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void flush_evs(IRSB *sb)
{
    for (Int i = 0; i < n_evs; i++) {
        DataEv *e = &evs[i];
        Bool big = e->size > 255;
        UWord sk = big ? (UWord)e->kind | ((UWord)e->size << 8) : (UWord)e->size | ((UWord)e->kind << 8);
        if (has_merged)
            add_dirty(sb, 3, big ? "vc_data_big" : "vc_data", big ? (void *)vc_data_big : (void *)vc_data,
                      mkIRExprVec_3(e->addr, mkIRExpr_HWord(sk), mkIRExpr_HWord(e->pos)), e->guard);
        if (has_unmerged)
            add_dirty(sb, 2, big ? "vc_data_big_u" : "vc_data_u",
                      big ? (void *)vc_data_big_u : (void *)vc_data_u,
                      mkIRExprVec_2(e->addr, mkIRExpr_HWord(sk)), e->guard);
    }
    n_evs = 0;
}

static UWord cur_pos; /* the pos of the current instruction's references */

static void add_ev(IRSB *sb, IRExpr *addr, Int size, Int kind, IRExpr *guard)
{
    tl_assert(isIRAtom(addr));
    /* A store after a load of the same address and size in the same
     * instruction: one modify. */
    if (kind == 2 && n_evs > 0 && !guard) {
        DataEv *last = &evs[n_evs - 1];
        if (last->kind == 1 && last->size == size && !last->guard && eqIRAtom(last->addr, addr)) {
            last->kind = 3;
            return;
        }
    }
    if (n_evs == MAX_EVS) flush_evs(sb);
    evs[n_evs].addr = addr;
    evs[n_evs].size = size;
    evs[n_evs].kind = kind;
    evs[n_evs].guard = guard;
    evs[n_evs].pos = cur_pos;
    n_evs++;
}

/* How many instructions, from the IMark at index i, form one group: same
 * 4 KiB page, no side exit in between. */
static UWord group_len(IRSB *sb, Int i)
{
    Addr page = sb->stmts[i]->Ist.IMark.addr >> 12;
    UWord n = 1;
    for (Int j = i + 1; j < sb->stmts_used; j++) {
        IRStmt *st = sb->stmts[j];
        if (!st) continue;
        if (st->tag == Ist_Exit) break;
        if (st->tag == Ist_IMark) {
            if ((st->Ist.IMark.addr >> 12) != page) break;
            n++;
        }
    }
    return n;
}

static IRSB *vc_instrument(VgCallbackClosure *closure, IRSB *sb_in, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
    (void)closure; (void)layout; (void)vge; (void)archinfo_host;
    if (gWordTy != hWordTy) VG_(tool_panic)("vmcap: host/guest word size mismatch");
    IRSB *sb = deepCopyIRSBExceptStmts(sb_in);
    IRTypeEnv *tyenv = sb_in->tyenv;
    Int i = 0;
    UWord group_left = 0;
    n_evs = 0;
    cur_pos = 0;
    while (i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark) {
        addStmtToIRSB(sb, sb_in->stmts[i]);
        i++;
    }
    for (; i < sb_in->stmts_used; i++) {
        IRStmt *st = sb_in->stmts[i];
        if (!st || st->tag == Ist_NoOp) continue;
        switch (st->tag) {
        case Ist_IMark:
            flush_evs(sb);
            if (has_merged && group_left == 0) {
                UWord n = group_len(sb_in, i);
                add_dirty(sb, 2, "vc_insns", (void *)vc_insns,
                          mkIRExprVec_2(mkIRExpr_HWord((HWord)st->Ist.IMark.addr), mkIRExpr_HWord(n)),
                          NULL);
                group_left = n;
            }
            if (has_unmerged) /* one call, and one run, per instruction */
                add_dirty(sb, 1, "vc_insn_u", (void *)vc_insn_u,
                          mkIRExprVec_1(mkIRExpr_HWord((HWord)st->Ist.IMark.addr)), NULL);
            if (!has_merged)
                group_left = 1;
            group_left--;
            cur_pos = 0;
            if (group_left > 0) /* the group's next instruction: the next IMark */
                for (Int j = i + 1; j < sb_in->stmts_used; j++)
                    if (sb_in->stmts[j] && sb_in->stmts[j]->tag == Ist_IMark) {
                        cur_pos = group_left << 12 | (sb_in->stmts[j]->Ist.IMark.addr & 0xfff);
                        break;
                    }
            addStmtToIRSB(sb, st);
            break;
        case Ist_WrTmp: {
            IRExpr *data = st->Ist.WrTmp.data;
            if (data->tag == Iex_Load)
                add_ev(sb, data->Iex.Load.addr, sizeofIRType(data->Iex.Load.ty), 1, NULL);
            addStmtToIRSB(sb, st);
            break;
        }
        case Ist_Store: {
            IRType ty = typeOfIRExpr(tyenv, st->Ist.Store.data);
            add_ev(sb, st->Ist.Store.addr, sizeofIRType(ty), 2, NULL);
            addStmtToIRSB(sb, st);
            break;
        }
        case Ist_StoreG: {
            IRStoreG *sg = st->Ist.StoreG.details;
            IRType ty = typeOfIRExpr(tyenv, sg->data);
            add_ev(sb, sg->addr, sizeofIRType(ty), 2, sg->guard);
            addStmtToIRSB(sb, st);
            break;
        }
        case Ist_LoadG: {
            IRLoadG *lg = st->Ist.LoadG.details;
            IRType ty = Ity_INVALID, wide = Ity_INVALID;
            typeOfIRLoadGOp(lg->cvt, &wide, &ty);
            add_ev(sb, lg->addr, sizeofIRType(ty), 1, lg->guard);
            addStmtToIRSB(sb, st);
            break;
        }
        case Ist_Dirty: {
            IRDirty *d = st->Ist.Dirty.details;
            if (d->mFx != Ifx_None) {
                if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) add_ev(sb, d->mAddr, d->mSize, 1, NULL);
                if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) add_ev(sb, d->mAddr, d->mSize, 2, NULL);
            }
            addStmtToIRSB(sb, st);
            break;
        }
        case Ist_CAS: {
            IRCAS *cas = st->Ist.CAS.details;
            Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
            if (cas->dataHi) size *= 2;
            add_ev(sb, cas->addr, size, 3, NULL);
            addStmtToIRSB(sb, st);
            break;
        }
        case Ist_LLSC: {
            if (st->Ist.LLSC.storedata == NULL) {
                add_ev(sb, st->Ist.LLSC.addr, sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)), 1, NULL);
                flush_evs(sb);
            } else {
                add_ev(sb, st->Ist.LLSC.addr, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)), 2, NULL);
            }
            addStmtToIRSB(sb, st);
            break;
        }
        case Ist_Exit:
            flush_evs(sb);
            addStmtToIRSB(sb, st);
            break;
        default:
            addStmtToIRSB(sb, st);
            break;
        }
    }
    flush_evs(sb);
    return sb;
}

/* ---------------- start and end ---------------- */
static void vc_post_clo_init(void)
{
    ULong t = now_ns();
    n_outs = has_merged && has_unmerged ? 2 : 1;
    outs[0].merge = has_merged;
    outs[0].dir = clo_out_dir;
    if (n_outs == 2) {
        outs[1].merge = False;
        outs[1].dir = clo_unmerged_dir ? clo_unmerged_dir
                                       : VG_(strcat)(VG_(strcpy)(VG_(malloc)("vmcap.dir",
                                             VG_(strlen)(clo_out_dir) + 10), clo_out_dir), "/unmerged");
    }
    FOR_OUTS {
        O->out_fd = -1;
        stream_open();
        put_proc(t);
    }
}

static void vc_fini(Int exitcode)
{
    (void)exitcode; /* always 0 here: the converter reads the exit syscall */
    ULong t = now_ns();
    FOR_OUTS {
        runs_flush();
        buf_room(32);
        put_u8(VMCAP_TAG_END);
        put_le(t, 8);
        put_le(O->raw_refs, 8);
        put_le(O->runs_written, 8);
        buf_flush();
        VG_(close)(O->out_fd);
        O->out_fd = -1;
    }
}

static void vc_pre_clo_init(void)
{
    VG_(details_name)("vmcap");
    VG_(details_version)("1");
    VG_(details_description)("vmsplit capture: merged memory references and syscalls");
    VG_(details_copyright_author)("vmsplit authors");
    VG_(details_bug_reports_to)("the vmsplit issue tracker");
    VG_(details_avg_translation_sizeB)(400);
    VG_(basic_tool_funcs)(vc_post_clo_init, vc_instrument, vc_fini);
    VG_(needs_command_line_options)(vc_process_cmd_line_option, vc_print_usage, vc_print_debug_usage);
    VG_(needs_syscall_wrapper)(vc_pre_syscall, vc_post_syscall);
    VG_(track_start_client_code)(vc_start_client_code);
    VG_(track_pre_thread_ll_exit)(vc_thread_exit);
    VG_(track_new_mem_startup)(vc_new_mem_startup);
    VG_(track_pre_deliver_signal)(vc_pre_deliver_signal);
    VG_(atfork)(vc_fork_pre, NULL, vc_fork_child);
}

VG_DETERMINE_INTERFACE_VERSION(vc_pre_clo_init)
