/* Helpers shared by the tlb Check suites: build entries and arrays without
 * ceremony. Each test file has its own main(). */
#ifndef VMSPLIT_TESTS_TLB_TEST_H
#define VMSPLIT_TESTS_TLB_TEST_H

#include <check.h>
#include <glib.h>

#include "tlb/hierarchy.h"
#include "tlb/tlb.h"

#define PG_4K PRESET_PG_4K
#define PG_2M PRESET_PG_2M
#define PG_4K2M (PRESET_PG_4K | PRESET_PG_2M)

/* A 4 KiB translation of lin, mapped 4 GiB higher (any recognisable frame). */
static inline TlbEntry ent_4k(uint32_t lin, uint16_t pcid, bool global)
{
    return (TlbEntry){ .vpn = lin >> 12, .page_size = TLB_PAGE_4K, .pcid = pcid,
                       .frame = 0x100000000ULL + (lin & ~0xFFFu), .rw = true,
                       .us = true, .dirty = true, .global = global };
}

static inline TlbEntry ent_2m(uint32_t lin, uint16_t pcid, bool global)
{
    return (TlbEntry){ .vpn = lin >> 21, .page_size = TLB_PAGE_2M, .pcid = pcid,
                       .frame = 0x200000000ULL + (lin & ~0x1FFFFFu), .rw = true,
                       .us = false, .dirty = true, .global = global };
}

static inline TlbEntry ent_4m(uint32_t lin, uint16_t pcid, bool global)
{
    return (TlbEntry){ .vpn = lin >> 22, .page_size = TLB_PAGE_4M, .pcid = pcid,
                       .frame = 0x300000000ULL + (lin & ~0x3FFFFFu), .rw = true,
                       .us = false, .dirty = true, .global = global };
}

static inline TlbGeom geom(unsigned entries, unsigned ways, unsigned sizes)
{
    return (TlbGeom){ .entries = entries, .ways = ways, .page_sizes = sizes };
}

static inline Tlb *new_tlb(unsigned entries, unsigned ways, unsigned sizes,
                           const char *policy, uint64_t seed)
{
    GError *err = NULL;
    const TlbPolicy *p = tlb_policy_find(policy, &err);
    ck_assert_msg(p, "%s", err ? err->message : "?");
    TlbGeom g = geom(entries, ways, sizes);
    Tlb *t = tlb_new("test", &g, p, seed, &err);
    ck_assert_msg(t, "%s", err ? err->message : "?");
    return t;
}

/* Count valid entries by visiting every slot (independent of the counters). */
static inline unsigned count_valid(const Tlb *t)
{
    unsigned n = 0;
    for (unsigned s = 0; s < tlb_sets(t); s++)
        for (unsigned w = 0; w < tlb_geom(t)->ways; w++)
            n += tlb_entry_at(t, s, w, NULL);
    return n;
}

static inline int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
