/* Replacement policies on hand-worked sequences: the exact victim at each
 * step, worked out by hand in the comments (not captured from the code). */
#include "tlb_test.h"

/* Pages A..H of the hand-worked sequences: distinct 4 KiB pages. */
#define PAGE(i) (0x08048000u + (i) * 0x1000u)
enum { A, B, C, D, E, F, G, H };

/* Fill page i; check it went to `way` and evicted page `victim` (-1: none). */
static void fill_expect(Tlb *t, int i, unsigned way, int victim)
{
    TlbEntry e = ent_4k(PAGE(i), 0, false);
    TlbFillInfo fi;
    tlb_fill(t, &e, ACCESS_READ, 3, &fi);
    ck_assert_uint_eq(fi.set, 0);
    ck_assert_msg(fi.way == way, "page %c went to way %u, expected %u", 'A' + i,
                  fi.way, way);
    ck_assert_int_eq(fi.evicted, victim >= 0);
    if (victim >= 0)
        ck_assert_msg(fi.old.vpn == PAGE(victim) >> 12, "evicted vpn %#x, expected page %c",
                      fi.old.vpn, 'A' + victim);
}

static void hit(Tlb *t, int i)
{
    const TlbEntry *e;
    ck_assert_int_eq(tlb_lookup(t, PAGE(i), 0, ACCESS_READ, 3, &e), TLB_HIT);
}

/* The common prefix: A B C D fill ways 0-3 of an empty 4-way set (the
 * array takes the lowest invalid way without asking the policy). */
static Tlb *fill_abcd(const char *policy)
{
    Tlb *t = new_tlb(4, 4, PG_4K, policy, 1);
    fill_expect(t, A, 0, -1);
    fill_expect(t, B, 1, -1);
    fill_expect(t, C, 2, -1);
    fill_expect(t, D, 3, -1);
    return t;
}

START_TEST(lru_sequence)
{
    /* Use order after each step (least recent first):
     * fill ABCD        A B C D
     * hit A            B C D A
     * fill E -> B      C D A E   (E in way 1)
     * hit C            D A E C
     * fill F -> D      A E C F   (F in way 3)
     * fill G -> A      E C F G   (G in way 0)
     * hit E            C F G E
     * fill H -> C      F G E H   (H in way 2) */
    Tlb *t = fill_abcd("lru");
    hit(t, A);
    fill_expect(t, E, 1, B);
    hit(t, C);
    fill_expect(t, F, 3, D);
    fill_expect(t, G, 0, A);
    hit(t, E);
    fill_expect(t, H, 2, C);
    tlb_free(t);
}
END_TEST

START_TEST(fifo_sequence)
{
    /* Same references; FIFO ignores hits. Insertion order (oldest first):
     * fill ABCD        A B C D
     * hit A            A B C D
     * fill E -> A      B C D E   (E in way 0)
     * hit C            B C D E
     * fill F -> B      C D E F   (F in way 1)
     * fill G -> C      D E F G   (G in way 2)
     * hit E            D E F G
     * fill H -> D      E F G H   (H in way 3) */
    Tlb *t = fill_abcd("fifo");
    hit(t, A);
    fill_expect(t, E, 0, A);
    hit(t, C);
    fill_expect(t, F, 1, B);
    fill_expect(t, G, 2, C);
    hit(t, E);
    fill_expect(t, H, 3, D);
    tlb_free(t);
}
END_TEST

START_TEST(plru_sequence_4way)
{
    /* Tree bits b1 (root), b2 (ways 0|1), b3 (ways 2|3); 0 = victim on the
     * left. Touching way w points every bit on its path away from w.
     *                     b1 b2 b3
     * start                0  0  0
     * fill A (way 0)       1  1  0
     * fill B (way 1)       1  0  0
     * fill C (way 2)       0  0  1
     * fill D (way 3)       0  0  0
     * hit A  (way 0)       1  1  0
     * fill E: b1=1 right, b3=0 left -> way 2 (C)    then 0 1 1
     * hit B  (way 1)       1  0  1
     * fill F: b1=1 right, b3=1 right -> way 3 (D)   then 0 0 0
     * fill G: b1=0 left, b2=0 left -> way 0 (A)     then 1 1 0
     * fill H: b1=1 right, b3=0 left -> way 2 (E)
     * (True LRU would have evicted B at E's fill.) */
    Tlb *t = fill_abcd("plru");
    hit(t, A);
    fill_expect(t, E, 2, C);
    hit(t, B);
    fill_expect(t, F, 3, D);
    fill_expect(t, G, 0, A);
    fill_expect(t, H, 2, E);
    tlb_free(t);
}
END_TEST

START_TEST(plru_sequence_8way)
{
    /* 8 ways: b1 root; b2 (0-3), b3 (4-7); b4 (0|1), b5 (2|3), b6 (4|5),
     * b7 (6|7). Fill pages 0..7 into ways 0..7; after the last fill (way 7:
     * b1=0, b3=0, b7=0) the bits are
     *   b1=0 b2=0 b3=0 b4=0 b5=0 b6=0 b7=0
     * (way 0 set b1,b2,b4=1; way1 b4=0; way2 b2=0,b5=1; way3 b5=0; way4
     * b1=0,b3=1,b6=1; way5 b6=0; way6 b3=0,b7=1; way7 b7=0).
     * hit way 0: b1=1 b2=1 b4=1.
     * hit way 5 (left half of b3's 4-7, right of b6's 4|5): b1=0 b3=1 b6=0.
     *   now b1=0 b2=1 b3=1 b4=1 b5=0 b6=0 b7=0
     * victim: b1=0 left, b2=1 right (2-3), b5=0 left -> way 2.
     * insert way 2: b1=1 b2=0 b5=1.
     *   now b1=1 b2=0 b3=1 b4=1 b5=1 b6=0 b7=0
     * victim: b1=1 right, b3=1 right (6-7), b7=0 left -> way 6.
     * insert way 6: b1=0 b3=0 b7=1.
     *   now b1=0 b2=0 b3=0 b4=1 b5=1 b6=0 b7=1
     * victim: b1=0 left, b2=0 left (0-1), b4=1 right -> way 1. */
    Tlb *t = new_tlb(8, 8, PG_4K, "plru", 1);
    TlbFillInfo fi;
    for (int i = 0; i < 8; i++) {
        TlbEntry e = ent_4k(PAGE(i), 0, false);
        tlb_fill(t, &e, ACCESS_READ, 0, &fi);
        ck_assert_uint_eq(fi.way, (unsigned)i);
    }
    hit(t, 0);
    hit(t, 5);
    const unsigned expect[] = { 2, 6, 1 };
    for (int k = 0; k < 3; k++) {
        TlbEntry e = ent_4k(PAGE(20 + k), 0, false);
        tlb_fill(t, &e, ACCESS_READ, 0, &fi);
        ck_assert(fi.evicted);
        ck_assert_uint_eq(fi.way, expect[k]);
    }
    tlb_free(t);
}
END_TEST

START_TEST(lru_order_fully_associative_hashed)
{
    /* A 16-way fully associative array is found through the hash index;
     * LRU must still evict in exact least-recent order. Fill pages 0..15,
     * touch them in the order perm[], then fill 16 new pages: the victims
     * are perm[0], perm[1], ... in turn. */
    const int perm[16] = { 7, 3, 12, 0, 15, 9, 1, 14, 4, 11, 6, 2, 13, 8, 5, 10 };
    Tlb *t = new_tlb(16, 16, PG_4K, "lru", 1);
    for (int i = 0; i < 16; i++) {
        TlbEntry e = ent_4k(PAGE(i), 0, false);
        tlb_fill(t, &e, ACCESS_READ, 0, NULL);
    }
    for (int i = 0; i < 16; i++)
        hit(t, perm[i]);
    for (int i = 0; i < 16; i++) {
        TlbEntry e = ent_4k(PAGE(100 + i), 0, false);
        TlbFillInfo fi;
        tlb_fill(t, &e, ACCESS_READ, 0, &fi);
        ck_assert(fi.evicted);
        ck_assert_uint_eq(fi.old.vpn, PAGE(perm[i]) >> 12);
    }
    tlb_free(t);
}
END_TEST

START_TEST(lru_per_set)
{
    /* 8 entries, 2 ways, 4 sets: set = VPN mod 4. Pages 0,4,8 share set 0;
     * page 1 is in set 1 and does not disturb set 0's order. */
    Tlb *t = new_tlb(8, 2, PG_4K, "lru", 1);
    TlbFillInfo fi;
    TlbEntry e0 = ent_4k(0x1000u * 0x100, 0, false);   /* vpn 0x100: set 0 */
    TlbEntry e4 = ent_4k(0x1000u * 0x104, 0, false);   /* set 0 */
    TlbEntry e1 = ent_4k(0x1000u * 0x101, 0, false);   /* set 1 */
    TlbEntry e8 = ent_4k(0x1000u * 0x108, 0, false);   /* set 0 */
    tlb_fill(t, &e0, ACCESS_READ, 0, &fi);
    ck_assert_uint_eq(fi.set, 0);
    tlb_fill(t, &e4, ACCESS_READ, 0, &fi);
    tlb_fill(t, &e1, ACCESS_READ, 0, &fi);
    ck_assert_uint_eq(fi.set, 1);
    ck_assert(!fi.evicted);
    const TlbEntry *x;
    ck_assert_int_eq(tlb_lookup(t, 0x100000, 0, ACCESS_READ, 0, &x), TLB_HIT);
    tlb_fill(t, &e8, ACCESS_READ, 0, &fi);       /* set 0 full: LRU is vpn 0x104 */
    ck_assert(fi.evicted);
    ck_assert_uint_eq(fi.set, 0);
    ck_assert_uint_eq(fi.way, 1);
    ck_assert_uint_eq(fi.old.vpn, 0x104);
    tlb_free(t);
}
END_TEST

/* Victim ways of 64 fills into a full 4-way set under a given seed. */
static void random_victims(uint64_t seed, unsigned out[64])
{
    Tlb *t = new_tlb(4, 4, PG_4K, "random", seed);
    for (int i = 0; i < 4; i++) {
        TlbEntry e = ent_4k(PAGE(i), 0, false);
        tlb_fill(t, &e, ACCESS_READ, 0, NULL);
    }
    for (int i = 0; i < 64; i++) {
        TlbEntry e = ent_4k(PAGE(10 + i), 0, false);
        TlbFillInfo fi;
        tlb_fill(t, &e, ACCESS_READ, 0, &fi);
        ck_assert(fi.evicted);
        out[i] = fi.way;
    }
    tlb_free(t);
}

START_TEST(random_same_seed_same_victims)
{
    unsigned a[64], b[64], c[64];
    random_victims(42, a);
    random_victims(42, b);
    random_victims(43, c);
    ck_assert_mem_eq(a, b, sizeof a);
    /* 64 draws of 4 ways agreeing by chance: probability 4^-64. */
    ck_assert(memcmp(a, c, sizeof a) != 0);
    unsigned seen[4] = { 0 };
    for (int i = 0; i < 64; i++) {
        ck_assert_uint_lt(a[i], 4);
        seen[a[i]]++;
    }
    for (int w = 0; w < 4; w++)
        ck_assert_uint_gt(seen[w], 0);   /* each way drawn at least once */
}
END_TEST

START_TEST(policy_registry)
{
    const char *names[] = { "lru", "plru", "fifo", "random" };
    for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
        GError *err = NULL;
        const TlbPolicy *p = tlb_policy_find(names[i], &err);
        ck_assert_ptr_nonnull(p);
        ck_assert_str_eq(p->name, names[i]);
    }
    GError *err = NULL;
    ck_assert_ptr_null(tlb_policy_find("mru", &err));
    ck_assert(g_error_matches(err, TLB_ERROR, TLB_ERROR_POLICY));
    ck_assert_ptr_nonnull(strstr(err->message, "mru"));
    ck_assert_ptr_nonnull(strstr(err->message, "plru"));
    g_error_free(err);
}
END_TEST

static void expect_geom_error(unsigned entries, unsigned ways, unsigned sizes,
                              const char *policy, const char *needle)
{
    GError *err = NULL;
    TlbGeom g = geom(entries, ways, sizes);
    Tlb *t = tlb_new("dtlb_4k", &g, tlb_policy_find(policy, NULL), 1, &err);
    ck_assert_ptr_null(t);
    ck_assert(g_error_matches(err, TLB_ERROR, TLB_ERROR_GEOMETRY));
    ck_assert_msg(strstr(err->message, needle) && strstr(err->message, "dtlb_4k"),
                  "message '%s' lacks '%s'", err->message, needle);
    g_error_free(err);
}

START_TEST(geometry_rejected)
{
    expect_geom_error(48, 4, PG_4K, "lru", "12 sets, which is not a power of two");
    expect_geom_error(64, 3, PG_4K, "lru", "do not divide");
    expect_geom_error(64, 0, PG_4K, "lru", "do not divide");
    expect_geom_error(0, 0, PG_4K, "lru", "no entries");
    expect_geom_error(64, 4, 0, "lru", "no page size");
    expect_geom_error(12, 12, PG_4K, "plru", "power-of-two number of ways");
    /* 12-way sets are fine for the other policies (Skylake's STLB is 12-way). */
    GError *err = NULL;
    TlbGeom g = geom(1536, 12, PG_4K2M);
    Tlb *t = tlb_new("stlb", &g, tlb_policy_find("lru", NULL), 1, &err);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(tlb_sets(t), 128);
    tlb_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tlb");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, lru_sequence);
    tcase_add_test(tc, fifo_sequence);
    tcase_add_test(tc, plru_sequence_4way);
    tcase_add_test(tc, plru_sequence_8way);
    tcase_add_test(tc, lru_order_fully_associative_hashed);
    tcase_add_test(tc, lru_per_set);
    tcase_add_test(tc, random_same_seed_same_victims);
    tcase_add_test(tc, policy_registry);
    tcase_add_test(tc, geometry_rejected);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
