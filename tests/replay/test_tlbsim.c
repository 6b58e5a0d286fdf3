/* tlbsim on hand-worked traces. With no preset the memory system has a
 * 64-entry 4-way LRU ITLB and DTLB holding 4 KiB and 2 MiB pages and no
 * caches: every memory reference costs exactly 1 cycle and a walk has no
 * base cost, so each figure below can be worked out by hand. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/tlbsim.h"
#include "tlb/hierarchy.h"

static char *write_tmp(const char *text)
{
    char *dir = g_dir_make_tmp("vmsplit-tlbsim-XXXXXX", NULL);
    char *path = g_build_filename(dir, "t.lackey", NULL);
    g_file_set_contents(path, text, -1, NULL);
    g_free(dir);
    return path;
}

static TlbSim *run(const char *text, uint64_t flush_every, bool large)
{
    char *p = write_tmp(text);
    TlbSimConfig cfg = { .trace = p, .flush_every = flush_every, .large_pages = large, .seed = 1 };
    GError *err = NULL;
    TlbSim *s = tlbsim_run(&cfg, &err);
    ck_assert_msg(s != NULL, "%s", err ? err->message : "");
    g_free(p);
    return s;
}

static uint64_t tlb(TlbSim *s, const char *name)
{
    uint64_t v = 0;
    ck_assert_msg(tlb_stats_get(tlb_hier_stats(mmu_tlb(tlbsim_mmu(s))), name, &v), "%s", name);
    return v;
}

/* Two fetches in one page, two loads in another, a store in a third.
 *  ITLB: 08048000 miss, 08048004 hit.
 *  DTLB: 0804a000 miss, 0804a004 hit, 0804b000 miss.
 *  Each walk: PDE read (A already set in the table entry), PTE read, PTE
 *  write (A, plus D for the store) = 3 references = 3 cycles.
 *  Data: 2 loads + 1 store = 3 cycles (fetches are not timed in caches).
 *  Statistics start after the set-up (paging enabled, PDPTEs loaded).
 *  Total 3*3 + 3 = 12. */
START_TEST(hand_worked)
{
    TlbSim *s = run("I  08048000,4\n L 0804a000,4\n L 0804a004,4\n S 0804b000,4\nI  08048004,4\n", 0, false);
    const TlbSimCounters *c = tlbsim_counters(s);
    ck_assert_uint_eq(c->refs, 5);
    ck_assert_uint_eq(c->fetches, 2);
    ck_assert_uint_eq(c->loads, 2);
    ck_assert_uint_eq(c->stores, 1);
    ck_assert_uint_eq(c->pages_mapped, 3);
    ck_assert_uint_eq(tlb(s, "lookups"), 5);
    ck_assert_uint_eq(tlb(s, "lookups_fetch"), 2);
    ck_assert_uint_eq(tlb(s, "misses_fetch"), 1);
    ck_assert_uint_eq(tlb(s, "misses_read"), 1);
    ck_assert_uint_eq(tlb(s, "misses_write"), 1);
    ck_assert_uint_eq(tlb(s, "hits"), 2);
    ck_assert_uint_eq(tlb(s, "lookups_user"), 5);
    ck_assert_uint_eq(c->walks, 3);
    ck_assert_uint_eq(c->walk_cycles, 9);
    ck_assert_uint_eq(c->data_cycles, 3);
    ck_assert_uint_eq(c->cr3_cycles, 0);
    ck_assert_uint_eq(c->cycles, 12);
    tlbsim_free(s);
}
END_TEST

/* A load after a store to the same page hits; a store after a load to a
 * clean page must walk to set D (the entry's dirty bit is not known). */
START_TEST(dirty_walk)
{
    TlbSim *s = run(" L 0804a000,4\n S 0804a000,4\n S 0804a008,4\n", 0, false);
    ck_assert_uint_eq(tlb(s, "misses_read"), 1);
    ck_assert_uint_eq(tlb(s, "misses_write"), 1);
    ck_assert_uint_eq(tlb(s, "dirty_walks"), 1);
    ck_assert_uint_eq(tlb(s, "hits_write"), 1);
    ck_assert_uint_eq(tlbsim_counters(s)->walks, 2);
    tlbsim_free(s);
}
END_TEST

/* A CR3 write every 2 references: load, load (hit), flush, load (miss),
 * load (hit), flush. */
START_TEST(flush_every)
{
    TlbSim *s = run(" L 1000,4\n L 1004,4\n L 1008,4\n L 100c,4\n", 2, false);
    ck_assert_uint_eq(tlbsim_counters(s)->cr3_writes, 2);
    ck_assert_uint_eq(tlb(s, "misses"), 2);
    ck_assert_uint_eq(tlb(s, "hits"), 2);
    ck_assert_uint_eq(tlb(s, "flushes_cr3"), 2);
    ck_assert_uint_eq(tlb(s, "flushes_pge"), 0);      /* the set-up's are not reported */
    ck_assert_uint_eq(tlbsim_counters(s)->cr3_cycles, 8);  /* 2 x 4 PDPTE loads */
    /* Each flush drops the one valid DTLB entry. */
    ck_assert_uint_eq(tlb(s, "dropped_cr3"), 2);
    tlbsim_free(s);
}
END_TEST

/* A 4-byte load at 0x0804affe touches two pages: two lookups, two walks.
 * A 64-bit address is folded to its low 32 bits. */
START_TEST(crossing_and_folding)
{
    TlbSim *s = run(" L 0804affe,4\n L 100001000,4\n L 1000,4\n", 0, false);
    const TlbSimCounters *c = tlbsim_counters(s);
    ck_assert_uint_eq(c->page_crossings, 1);
    ck_assert_uint_eq(c->folded, 1);
    ck_assert_uint_eq(tlb(s, "lookups"), 4);
    ck_assert_uint_eq(tlb(s, "misses"), 3);   /* 0804a, 0804b, 00001; then 00001 hits */
    tlbsim_free(s);
}
END_TEST

/* With 2 MiB pages, references 1 MiB apart share one entry; the walk reads
 * only the PDE (plus its A write). */
START_TEST(large_pages)
{
    TlbSim *s = run(" L 00400000,4\n L 00500000,4\n", 0, true);
    ck_assert_uint_eq(tlb(s, "misses"), 1);
    ck_assert_uint_eq(tlb(s, "hits"), 1);
    ck_assert_uint_eq(tlbsim_counters(s)->walk_cycles, 2);
    tlbsim_free(s);
}
END_TEST

START_TEST(bad_line)
{
    char *p = write_tmp("I  1000,4\nX  2000,4\n");
    TlbSimConfig cfg = { .trace = p };
    GError *err = NULL;
    ck_assert_ptr_null(tlbsim_run(&cfg, &err));
    ck_assert_msg(strstr(err->message, ":2:") != NULL, "%s", err->message);
    g_error_free(err);
    cfg.skip_bad = true;
    TlbSim *s = tlbsim_run(&cfg, &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(tlbsim_counters(s)->bad_lines, 1);
    tlbsim_free(s);
    g_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tlbsim");
    TCase *tc = tcase_create("hand-worked");
    tcase_add_test(tc, hand_worked);
    tcase_add_test(tc, dirty_walk);
    tcase_add_test(tc, flush_every);
    tcase_add_test(tc, crossing_and_folding);
    tcase_add_test(tc, large_pages);
    tcase_add_test(tc, bad_line);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
