/* The MMU's inline fast path, for the core (src/cpu/cpu_priv.h), whose
 * every data reference and fetch goes through it, and the kernel model's
 * batched references (kernel_model/machine.c, userwork_refs.c) and a
 * program's own references in a replay (replay/replay_refs.c). mmu.c and
 * mmu_state.c see the whole Mmu through mmu_priv.h; everyone else uses
 * mmu.h. This header shows only the part of the Mmu the fast path reads
 * (MmuFast, the Mmu's first member): the memos, the cache hierarchy's
 * handle, the MMU's counters.
 *
 * mmu_access_fast(m, lin, access, cpl, f) is mmu_access (mmu.h) with the
 * commonest case decided without a call: a memo (below) answers the page,
 * and the cache reference hits the MRU way of its L1 set. It counts and
 * charges exactly what mmu_access would (the TLB's and MMU's statistics,
 * the cache reference). Anything else goes to mmu_access_lookup (mmu.c):
 * the TLB's own hit path, then the miss path (lookup, walk, fill), and a
 * new memo for the page. mmu_translate_fast is the same without the cache
 * reference and the host pointer. */
#ifndef VMSPLIT_MMU_MMU_FAST_H
#define VMSPLIT_MMU_MMU_FAST_H

#include "mmu/cache_priv.h"
#include "mmu/mmu.h"
#include "tlb/tlb_token.h"

#if defined(__GNUC__)
#define MMU_HOT static inline __attribute__((always_inline))
#else
#define MMU_HOT static inline
#endif

/* Memos of first-level TLB hits, a small direct-mapped table per side
 * (data, instructions): a host-speed shortcut that changes no modelled
 * figure.
 *
 * When the hit path (tlb_hier_hit_fast) finds page `page` in a slot of
 * the side's first-level array, or the miss path fills it there, the
 * next reference to that page at the same CPL would find the same slot
 * again, as long as the slot still holds that entry and nothing changed
 * what a hit means. The TLB hands out a token for the hit
 * (tlb/tlb_token.h) that tells the first: it holds until a fill,
 * invalidation or flush of the slot. The second is the MMU's own state
 * (the PCID, CR0.WP and PG, CR4, EFER.NXE), and every write to it empties
 * the table (memo_clear in mmu.c). No other slot can start answering the
 * page meanwhile: at most one slot answers a page (a fill of the page
 * replaces its entry in place). The memo then skips the probe, the rights
 * check (done when the memo was made, for each access type: `key` holds
 * the page for each Access that the hit path would take, MEMO_NONE for
 * the others) and the frame lookup, has the TLB record the hit through
 * the token (tlb_token_record: the count and stamp the hit path makes)
 * and charges the hit latency. Frames never move once they exist
 * (physmem.h), so `host` stays valid; no memo is made for a frame never
 * written (its host page does not exist yet). */
typedef struct {
    uint32_t key[2];             /* [MEMO_KEY(access)]: linear page | CPL
                                  * (0-3), compared at once, if the memo
                                  * answers that access, else MEMO_NONE (so
                                  * the rights are in the compare); both
                                  * MEMO_NONE when empty */
    TlbHitToken tok;             /* the TLB's token for the hit */
    uint64_t pa;                 /* physical address of the page */
    uint8_t *host;               /* its frame */
} MmuMemo;

G_STATIC_ASSERT(sizeof(MmuMemo) == 64);

#define MEMO_NONE 0xFFFu         /* never a key: page | CPL leaves bits 11:2 clear */
/* A memo's key for an access: a data memo's READ and WRITE keys, an
 * instruction memo's (its own table) EXEC key in key[0]. */
#define MEMO_KEY(access) ((unsigned)(access) & 1u)
#define MEMO_BITS 6              /* 64 per side: with 16, a syscall's stack,
                                  * task, descriptor and user pages still
                                  * collided (a 3G/1G null syscall made 2.6 %
                                  * more host instructions); a clear
                                  * (memo_clear) costs 128 stores */

/* The part of the Mmu that the fast path reads: the Mmu's first member
 * (mmu_priv.h), so that mmu_fast(m) is the Mmu's own address. */
typedef struct {
    /* [access == ACCESS_EXEC][page bits]. Each memo (64 bytes) is one
     * host cache line (the Mmu is allocated so aligned, mmu.c): a hit
     * reads most of it, a miss writes most of it. */
    _Alignas(64) MmuMemo memo[2][1u << MEMO_BITS];
    unsigned hit_lat[2];         /* [access == ACCESS_EXEC]: the latency a
                                  * memo's hit charges
                                  * (tlb_hier_token_latency), set with the
                                  * shortcuts (mmu_set_shortcuts) */
    CacheHier *cache;
    bool exec_apart;             /* mmu_memo_exec_apart's answer
                                  * (tlb_hier_insn_hits_apart), set with
                                  * the shortcuts */
    MmuStats stats;
} MmuFast;

MMU_HOT MmuFast *mmu_fast(Mmu *m)
{
    return (MmuFast *)(void *)m;
}

MMU_HOT const MmuFast *mmu_fast_c(const Mmu *m)
{
    return (const MmuFast *)(const void *)m;
}

/* Where the memo for lin's page would be. */
MMU_HOT MmuMemo *mmu_memo_at(Mmu *m, uint32_t lin, Access access)
{
    return &mmu_fast(m)->memo[access == ACCESS_EXEC][(lin >> PAGE_SHIFT) & ((1u << MEMO_BITS) - 1)];
}

/* A memo's key for the page of lin at cpl. */
MMU_HOT uint32_t mmu_memo_key(uint32_t lin, int cpl)
{
    return (lin & ~(uint32_t)(PAGE_SIZE - 1)) | (uint32_t)cpl;
}

/* Whether mm, the memo where key's page would be (mmu_memo_at), answers
 * access for key (mmu_memo_key): mmu_memo_find's test, for a caller that
 * found the slot and the key once (the core's loops, block.c). */
MMU_HOT bool mmu_memo_answers(const MmuMemo *mm, uint32_t key, Access access)
{
    return mm->key[MEMO_KEY(access)] == key && tlb_token_holds(&mm->tok);
}

/* The memo for lin at cpl answering access, or NULL. */
MMU_HOT const MmuMemo *mmu_memo_find(Mmu *m, uint32_t lin, Access access, int cpl)
{
    const MmuMemo *mm = mmu_memo_at(m, lin, access);
    return mmu_memo_answers(mm, mmu_memo_key(lin, cpl), access) ? mm : NULL;
}

/* Count n hits answered by the memo, one right after another with nothing
 * in between, as the hit path would count them (see MmuMemo): the TLB
 * records them (n counts, the stamp set to the clock's n-th tick), the
 * MMU charges n hit latencies. The core's
 * loops (block.c) also count an instruction memo's hits this way after
 * data references made in between, where mmu_memo_exec_apart allows it;
 * n is 64-bit for them. */
MMU_HOT void mmu_memo_hit_n(Mmu *m, const MmuMemo *mm, Access access, uint64_t n)
{
    tlb_token_record(&mm->tok, access, n);
    mmu_fast(m)->stats.cycles += n * mmu_fast(m)->hit_lat[access == ACCESS_EXEC];
}

/* Whether data references touch nothing that an instruction memo's hit
 * writes but m->stats.cycles (to which both only add): the TLB's
 * tlb_hier_insn_hits_apart (the instruction side's tokens record into an
 * array and a clock no data reference touches). Then hits of the
 * instruction side may be counted after data references that were made
 * after them, with the same result (block.c's run_loop). The hierarchy
 * makes every array a Tlb of its own (hierarchy.c), so this holds for
 * every preset; it is tested, not assumed. */
MMU_HOT bool mmu_memo_exec_apart(const Mmu *m)
{
    return mmu_fast_c(m)->exec_apart;
}

/* Count a hit answered by the memo, as the hit path would (see MmuMemo). */
MMU_HOT void mmu_memo_hit(Mmu *m, const MmuMemo *mm, Access access, int cpl)
{
    (void)cpl;                   /* in the memo's key and hits */
    mmu_memo_hit_n(m, mm, access, 1);
}

/* n rounds (n >= 1) of the hits mmu_memo_hit(m, mm[j], access[j]) for
 * j = 0 .. k - 1 at once, for a run of references that the memos answer
 * in that order with nothing else touching the TLB in between
 * (machine_kernel_copy_lines, kernel_model/userwork_refs.c): the same
 * counts and cycles, and the stamps and clocks where the last round
 * leaves them, whether the memos share a clock, a slot or are one. The
 * stamps of the earlier rounds are overwritten in their own slots before
 * anything could read them. */
MMU_HOT void mmu_memo_hit_rounds(Mmu *m, const MmuMemo *const *mm, const Access *access,
                                 unsigned k, uint64_t n)
{
    for (unsigned j = 0; j < k; j++) {
        tlb_token_count(&mm[j]->tok, access[j], n);
        mmu_fast(m)->stats.cycles += n * mmu_fast(m)->hit_lat[access[j] == ACCESS_EXEC];
    }
    for (unsigned j = 0; j < k; j++)      /* the last round, as it is made */
        tlb_token_stamp(&mm[j]->tok);
}

/* Out of line (mmu.c): mmu_translate and mmu_access when no memo answers
 * (a first-level hit on the TLB's own hit path, or the miss path), one
 * copy per access type, picked inline below (no dispatch at all when the
 * caller's type is a constant). */
bool mmu_translate_lookup_read(Mmu *m, uint32_t lin, int cpl, uint64_t *pa, MmuFault *f);
bool mmu_translate_lookup_write(Mmu *m, uint32_t lin, int cpl, uint64_t *pa, MmuFault *f);
bool mmu_translate_lookup_exec(Mmu *m, uint32_t lin, int cpl, uint64_t *pa, MmuFault *f);
uint8_t *mmu_access_lookup_read(Mmu *m, uint32_t lin, int cpl, MmuFault *f);
uint8_t *mmu_access_lookup_write(Mmu *m, uint32_t lin, int cpl, MmuFault *f);
uint8_t *mmu_access_lookup_exec(Mmu *m, uint32_t lin, int cpl, MmuFault *f);

MMU_HOT bool mmu_translate_lookup(Mmu *m, uint32_t lin, Access access, int cpl,
                                  uint64_t *pa, MmuFault *f)
{
    switch (access) {
    case ACCESS_READ: return mmu_translate_lookup_read(m, lin, cpl, pa, f);
    case ACCESS_WRITE: return mmu_translate_lookup_write(m, lin, cpl, pa, f);
    default: return mmu_translate_lookup_exec(m, lin, cpl, pa, f);
    }
}

MMU_HOT uint8_t *mmu_access_lookup(Mmu *m, uint32_t lin, Access access, int cpl,
                                   MmuFault *f)
{
    switch (access) {
    case ACCESS_READ: return mmu_access_lookup_read(m, lin, cpl, f);
    case ACCESS_WRITE: return mmu_access_lookup_write(m, lin, cpl, f);
    default: return mmu_access_lookup_exec(m, lin, cpl, f);
    }
}

/* mmu_translate (mmu.h) with a memo's hit inline. */
MMU_HOT bool mmu_translate_fast(Mmu *m, uint32_t lin, Access access, int cpl,
                                uint64_t *pa, MmuFault *f)
{
    const MmuMemo *mm = mmu_memo_find(m, lin, access, cpl);
    if (G_LIKELY(mm)) {
        mmu_memo_hit(m, mm, access, cpl);
        *pa = mm->pa | (lin & (PAGE_SIZE - 1));
        return true;
    }
    return mmu_translate_lookup(m, lin, access, cpl, pa, f);
}

/* mmu_time_phys (mmu.h) inline: a data reference's cache reference, as
 * the hit path makes it. */
MMU_HOT unsigned mmu_time_phys_fast(Mmu *m, uint64_t pa, bool write)
{
    unsigned c = cache_access_fast(mmu_fast(m)->cache, pa, write);
    mmu_fast(m)->stats.cycles += c;
    mmu_fast(m)->stats.data_cycles += c;
    return c;
}

/* The rest of mmu_access_fast once memo mm answers lin (mmu_memo_find):
 * the hit, the cache reference, the host pointer. */
MMU_HOT uint8_t *mmu_access_memo(Mmu *m, const MmuMemo *mm, uint32_t lin, Access access,
                                 int cpl)
{
    mmu_memo_hit(m, mm, access, cpl);
    uint32_t off = lin & (PAGE_SIZE - 1);
    if (access != ACCESS_EXEC)       /* no instruction-cache model: see mmu.h */
        mmu_time_phys_fast(m, mm->pa | off, access == ACCESS_WRITE);
    uint8_t *p = mm->host + off;
    if (!p)
        __builtin_unreachable();     /* a memo's frame exists: not a fault */
    return p;
}

/* mmu_access (mmu.h) with a memo's hit inline: the hit, the cache
 * reference, the host pointer. */
MMU_HOT uint8_t *mmu_access_fast(Mmu *m, uint32_t lin, Access access, int cpl,
                                 MmuFault *f)
{
    const MmuMemo *mm = mmu_memo_find(m, lin, access, cpl);
    if (G_UNLIKELY(!mm))
        return mmu_access_lookup(m, lin, access, cpl, f);
    return mmu_access_memo(m, mm, lin, access, cpl);
}

/* The rest of mmu_access_fast when memo mm answers lin (mmu_memo_find)
 * and the data reference hits the MRU way of its L1 set: counts and
 * charges exactly what mmu_access_fast does and returns the host pointer,
 * calling nothing. NULL (the line is not in that way): nothing done, and
 * mmu_access_fast would find the same memo. Data references only. */
MMU_HOT uint8_t *mmu_access_memo_mru(Mmu *m, const MmuMemo *mm, uint32_t lin, Access access,
                                     int cpl)
{
    uint32_t off = lin & (PAGE_SIZE - 1);
    uint64_t line;
    if (G_UNLIKELY(cache_l1_row(mmu_fast(m)->cache, mm->pa | off, &line)[0] != line))
        return NULL;
    mmu_memo_hit(m, mm, access, cpl);
    mmu_fast(m)->cache->n.writes += access == ACCESS_WRITE;
    unsigned c = cache_mru_hit(mmu_fast(m)->cache);
    mmu_fast(m)->stats.cycles += c;
    mmu_fast(m)->stats.data_cycles += c;
    uint8_t *p = mm->host + off;
    if (!p)
        __builtin_unreachable();     /* a memo's frame exists: no NULL to
                                      * confuse with the miss's */
    return p;
}

#endif
