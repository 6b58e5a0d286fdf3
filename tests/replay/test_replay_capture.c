/* Replay of a real capture with a known pattern (issue 18): the bundled
 * capture of `pagetouch 8 4` (tests/capture/data/pagetouch-8x4.vmt.gz,
 * made by scripts/capture from tests/capture/data/pagetouch.c under
 * Valgrind, so it carries the C library's start-up too). In each of its 4
 * rounds the program calls getppid, writes one int into each of 8 pages
 * of an mmap'ed area at offset 0x123, and calls getppid again.
 *
 * The expectation comes from the program's design and the trace's text,
 * not from a previous replay: the test cuts the trace just after each
 * getppid and replays the prefixes, so the difference of two prefixes is
 * what the block between a round's two getppid calls cost.
 *
 *  - 4g4g flushes the user TLB on every exit, so in every round after the
 *    first the block takes one user DTLB miss per distinct data page it
 *    references: by the program's design 8 + 2, the 8 area pages, the
 *    page of its globals (`area` is volatile: read on every store) and one
 *    stack page (syscall()'s return and call); the test checks that the
 *    trace's text shows exactly these (the two extra pages inside the
 *    executable's writable mapping and the stack mapping) and that the
 *    replay misses on each;
 *  - 3g1g keeps the program's entries: no user DTLB miss after round one;
 *  - the first round's block first touches the 8 area pages, all of them
 *    anonymous and never touched before: 8 demand-zero faults, in every
 *    layout. */
#include <check.h>
#include <gio/gio.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset/preset.h"
#include "replay/replay.h"
#include "test_tmp.h"

enum { N = 8, R = 4 };

static Preset *preset;
static char *tmpdir;
static char **lines;       /* the fixture's lines */
static unsigned nlines;
static unsigned getppid_at[2 * R]; /* line index of each getppid */
/* The program's globals and its stack: the first writable file mapping
 * (the executable's data segment) and the mapping marked `stack`. */
static unsigned long data_lo, data_hi, stack_lo, stack_hi;

static char *read_gzip(const char *path)
{
    g_autoptr(GFile) f = g_file_new_for_path(path);
    GError *err = NULL;
    g_autoptr(GInputStream) raw = G_INPUT_STREAM(g_file_read(f, NULL, &err));
    if (!raw)
        g_error("%s", err->message);
    g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
    g_autoptr(GInputStream) in = g_converter_input_stream_new(raw, G_CONVERTER(z));
    GString *s = g_string_new(NULL);
    char buf[65536];
    gssize n;
    while ((n = g_input_stream_read(in, buf, sizeof buf, NULL, &err)) > 0)
        g_string_append_len(s, buf, n);
    if (n < 0)
        g_error("%s: %s", path, err->message);
    return g_string_free(s, FALSE);
}

/* The first `upto` lines (through index upto-1) as a trace file. */
static char *prefix(unsigned upto)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < upto; i++)
        g_string_append_printf(s, "%s\n", lines[i]);
    char *p = g_strdup_printf("%s/prefix-%u.vmt", tmpdir, upto);
    ck_assert(g_file_set_contents(p, s->str, (gssize)s->len, NULL));
    g_string_free(s, TRUE);
    return p;
}

static ReplayResult *replay_prefix(unsigned upto, const char *layout)
{
    g_autofree char *p = prefix(upto);
    ReplayConfig cfg = { .preset = preset, .layout = layout_find(layout), .ram = 4ULL << 30 };
    GError *err = NULL;
    ReplayResult *r = replay_run(&cfg, p, &err);
    ck_assert_msg(r, "%s, first %u lines: %s", layout, upto, err ? err->message : "");
    return r;
}

static uint64_t user_dtlb_misses(const ReplayResult *r)
{
    const TlbStats *s = replay_tlb(r);
    return s->misses[ACCESS_READ][TLB_PRIV_USER] + s->misses[ACCESS_WRITE][TLB_PRIV_USER];
}

/* Distinct data pages referenced between lines a and b (exclusive), and
 * how many of them hold a write at offset 0x123 (the area's pages), lie in
 * the executable's data mapping and in the stack. */
static unsigned block_pages(unsigned a, unsigned b, unsigned *area, unsigned *data, unsigned *stack)
{
    g_autoptr(GHashTable) pages = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GHashTable) area_pages = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (unsigned i = a + 1; i < b; i++) {
        const char *l = lines[i];
        if (!strchr("rwm", l[0]) || l[1] != ' ')
            continue;
        unsigned long addr = strtoul(l + 2, NULL, 16);
        g_hash_table_add(pages, GUINT_TO_POINTER(addr >> 12));
        if (l[0] == 'w' && (addr & 4095) == 0x123)
            g_hash_table_add(area_pages, GUINT_TO_POINTER(addr >> 12));
    }
    *area = g_hash_table_size(area_pages);
    *data = *stack = 0;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, pages);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        unsigned long pg = GPOINTER_TO_UINT(key) * 4096ul;
        if (g_hash_table_contains(area_pages, key))
            continue;
        *data += pg >= data_lo && pg < data_hi;
        /* the stack grows down from its mapping (up to 8 MiB, FORMAT.md) */
        *stack += pg >= stack_lo - (8ul << 20) && pg < stack_hi;
    }
    return g_hash_table_size(pages);
}

START_TEST(test_rounds_4g4g_refill)
{
    for (unsigned k = 1; k < R; k++) {
        unsigned a = getppid_at[2 * k], b = getppid_at[2 * k + 1], area, data, stack;
        unsigned pages = block_pages(a, b, &area, &data, &stack);
        ck_assert_uint_eq(area, N);              /* the fixture is the program we think */
        ck_assert_uint_eq(data, 1);              /* its globals */
        ck_assert_uint_eq(stack, 1);
        ck_assert_uint_eq(pages, N + 2);         /* and nothing else */
        ReplayResult *x = replay_prefix(a + 1, "4g4g"), *y = replay_prefix(b + 1, "4g4g");
        ck_assert_msg(user_dtlb_misses(y) - user_dtlb_misses(x) == pages,
                      "4g4g round %u: %lu user DTLB misses, expected %u (%u area pages)", k + 1,
                      (unsigned long)(user_dtlb_misses(y) - user_dtlb_misses(x)), pages, N);
        replay_result_free(x);
        replay_result_free(y);
        x = replay_prefix(a + 1, "3g1g"), y = replay_prefix(b + 1, "3g1g");
        ck_assert_msg(user_dtlb_misses(y) == user_dtlb_misses(x), "3g1g round %u: %lu misses",
                      k + 1, (unsigned long)(user_dtlb_misses(y) - user_dtlb_misses(x)));
        replay_result_free(x);
        replay_result_free(y);
    }
}
END_TEST

START_TEST(test_first_round_faults)
{
    static const char *layouts[] = { "3g1g", "4g4g", "kpti" };
    for (int i = 0; i < 3; i++) {
        ReplayResult *x = replay_prefix(getppid_at[0] + 1, layouts[i]);
        ReplayResult *y = replay_prefix(getppid_at[1] + 1, layouts[i]);
        const UserMmStats *fx = &replay_refs(x)->faults, *fy = &replay_refs(y)->faults;
        ck_assert_msg(fy->count[UFAULT_DEMAND_ZERO] - fx->count[UFAULT_DEMAND_ZERO] == N,
                      "%s: %lu demand-zero faults in round 1, expected %d", layouts[i],
                      (unsigned long)(fy->count[UFAULT_DEMAND_ZERO] - fx->count[UFAULT_DEMAND_ZERO]),
                      N);
        for (int k = 0; k < UFAULT_KINDS; k++)
            if (k != UFAULT_DEMAND_ZERO)
                ck_assert_uint_eq(fy->count[k], fx->count[k]);
        replay_result_free(x);
        replay_result_free(y);
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
    g_autofree char *path = g_build_filename(g_getenv("VMSPLIT_SOURCE_DIR"), "tests", "capture",
                                             "data", "pagetouch-8x4.vmt.gz", NULL);
    g_autofree char *text = read_gzip(path);
    lines = g_strsplit(text, "\n", -1);
    nlines = g_strv_length(lines);
    unsigned g = 0;
    for (unsigned i = 0; i < nlines; i++)
        if (strstr(lines[i], " sys getppid ")) {
            g_assert(g < 2 * R);
            getppid_at[g++] = i;
        }
    g_assert(g == 2 * R);
    for (unsigned i = 0; i < nlines && (!data_hi || !stack_hi); i++) {
        unsigned long lo, len;
        char prot[4], flags[32] = "";
        const char *mm = strstr(lines[i], " mmap ");
        if (!mm || sscanf(mm, " mmap %lx %lu %3s %31[a-z ]", &lo, &len, prot, flags) < 3)
            continue;
        if (!data_hi && strcmp(prot, "rw-") == 0 && !flags[0])
            data_lo = lo, data_hi = lo + len;
        if (!stack_hi && strstr(flags, "stack"))
            stack_lo = lo, stack_hi = lo + len;
    }
    g_assert(data_hi && stack_hi);
    Suite *s = suite_create("replay-capture");
    TCase *tc = tcase_create("pagetouch");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_rounds_4g4g_refill);
    tcase_add_test(tc, test_first_round_faults);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    g_strfreev(lines);
    preset_free(preset);
    return failed ? 1 : 0;
}
