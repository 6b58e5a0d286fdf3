/* End-to-end tests of `vmsplit walk`: run the built binary (its path is
 * argv[1]) on the bundled images in workloads/images/ and on malformed
 * input, as a user would. Expected values are worked by hand from the image
 * files (their comments show the arithmetic); JSON output is parsed with
 * json-glib and checked field by field. */
#include <check.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

static const char *vmsplit_path;
static const char *source_dir;

typedef struct {
    int status;                  /* exit status, or 128 + signal */
    char *out, *err;
} Run;

static void run_clear(Run *r)
{
    g_free(r->out);
    g_free(r->err);
}

/* Run `vmsplit walk ARGS...` (NULL-terminated) in the source directory. */
static Run run_walk(const char *first, ...)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)vmsplit_path);
    g_ptr_array_add(argv, (char *)"walk");
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (char *)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    Run r = { 0 };
    int wait_status = 0;
    GError *err = NULL;
    gboolean ok = g_spawn_sync(source_dir, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL,
                               NULL, &r.out, &r.err, &wait_status, &err);
    ck_assert_msg(ok, "cannot run %s: %s", vmsplit_path, err ? err->message : "");
    g_ptr_array_free(argv, TRUE);
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
    return r;
}

/* ---- JSON helpers ---- */

static JsonParser *parse_json(const char *text)
{
    JsonParser *p = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_data(p, text, -1, &err), "bad JSON (%s):\n%s",
                  err ? err->message : "", text);
    ck_assert(JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)));
    return p;
}

static JsonObject *root_of(JsonParser *p)
{
    return json_node_get_object(json_parser_get_root(p));
}

static uint64_t hex_member(JsonObject *o, const char *name)
{
    ck_assert_msg(json_object_has_member(o, name), "no member '%s'", name);
    JsonNode *n = json_object_get_member(o, name);
    ck_assert_msg(JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING,
                  "'%s' is not a string", name);
    const char *s = json_node_get_string(n);
    ck_assert_msg(g_str_has_prefix(s, "0x"), "'%s' = '%s' is not a hex string", name, s);
    char *end = NULL;
    uint64_t v = g_ascii_strtoull(s + 2, &end, 16);
    ck_assert_msg(end && *end == '\0' && end != s + 2, "'%s' = '%s'", name, s);
    return v;
}

static bool is_null(JsonObject *o, const char *name)
{
    return json_object_has_member(o, name) && JSON_NODE_HOLDS_NULL(json_object_get_member(o, name));
}

/* Check entries[i]. The PDPTE of a walk comes from its register; every
 * other entry (and the offending PDPTE of a #GP) from memory. */
static void check_entry_from(JsonArray *a, guint i, const char *level, uint64_t pa,
                             uint64_t before, uint64_t after, bool from_register)
{
    ck_assert_uint_gt(json_array_get_length(a), i);
    JsonObject *e = json_array_get_object_element(a, i);
    ck_assert_str_eq(json_object_get_string_member(e, "level"), level);
    ck_assert_uint_eq(hex_member(e, "paddr"), pa);
    ck_assert_uint_eq(hex_member(e, "before"), before);
    ck_assert_uint_eq(hex_member(e, "after"), after);
    ck_assert(json_object_get_boolean_member(e, "from_register") == from_register);
}

static void check_entry(JsonArray *a, guint i, const char *level, uint64_t pa, uint64_t before,
                        uint64_t after)
{
    check_entry_from(a, i, level, pa, before, after, !strcmp(level, "PDPTE"));
}

/* Run a walk with --json; check exit status and the fault fields. */
static JsonParser *walk_json(const char *img, const char *access, const char *cpl,
                             const char *vaddr, int want_status)
{
    g_autofree char *path = g_strdup_printf("workloads/images/%s", img);
    Run r = run_walk("--mem", path, "--access", access, "--cpl", cpl, vaddr, "--json", NULL);
    ck_assert_msg(r.status == want_status, "%s %s cpl%s %s: exit %d, expected %d\n%s%s", img,
                  access, cpl, vaddr, r.status, want_status, r.out, r.err);
    JsonParser *p = parse_json(r.out);
    JsonObject *o = root_of(p);
    ck_assert(json_object_get_boolean_member(o, "fault") == (want_status == 1));
    ck_assert_uint_eq(hex_member(o, "linear"), g_ascii_strtoull(vaddr, NULL, 0));
    ck_assert_str_eq(json_object_get_string_member(o, "access"), access);
    ck_assert_int_eq(json_object_get_int_member(o, "cpl"), atoi(cpl));
    run_clear(&r);
    return p;
}

/* A #PF: vector 14, the error code, CR2 = the address, no translation. */
static JsonObject *check_pf(JsonParser *p, uint32_t ec, uint32_t cr2)
{
    JsonObject *o = root_of(p);
    ck_assert_str_eq(json_object_get_string_member(o, "stage"), "walk");
    ck_assert_int_eq(json_object_get_int_member(o, "vector"), 14);
    ck_assert_int_eq(json_object_get_int_member(o, "error_code"), ec);
    JsonObject *bits = json_object_get_object_member(o, "error_code_bits");
    ck_assert(json_object_get_boolean_member(bits, "p") == !!(ec & 1));
    ck_assert(json_object_get_boolean_member(bits, "w") == !!(ec & 2));
    ck_assert(json_object_get_boolean_member(bits, "u") == !!(ec & 4));
    ck_assert(json_object_get_boolean_member(bits, "rsvd") == !!(ec & 8));
    ck_assert(json_object_get_boolean_member(bits, "id") == !!(ec & 16));
    ck_assert_uint_eq(hex_member(o, "cr2"), cr2);
    ck_assert(is_null(o, "paddr") && is_null(o, "page_size"));
    /* A faulting walk changes no entry, except that a protection fault
     * (P=1, RSVD=0) of a 4 KiB walk sets the PDE's A bit (SDM Vol. 3A
     * §6.15 footnote): then exactly that bit changes, by one write. */
    bool protection = (ec & 1) && !(ec & 8);
    JsonArray *ents = json_object_get_array_member(o, "entries");
    guint n = json_array_get_length(ents), writes = 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *e = json_array_get_object_element(ents, i);
        uint64_t before = hex_member(e, "before"), after = hex_member(e, "after");
        bool pde_of_4k = protection && n == 3 &&
                         !strcmp(json_object_get_string_member(e, "level"), "PDE");
        if (pde_of_4k) {
            ck_assert_uint_eq(after, before | 0x20);
            writes += after != before;
        } else {
            ck_assert_uint_eq(before, after);
        }
    }
    JsonArray *refs = json_object_get_array_member(o, "refs");
    guint nw = 0;
    for (guint i = 0; i < json_array_get_length(refs); i++)
        nw += !strcmp(json_object_get_string_member(json_array_get_object_element(refs, i),
                                                    "kind"), "write");
    ck_assert_uint_eq(nw, writes);
    return o;
}

static JsonObject *check_ok(JsonParser *p, uint64_t paddr, uint32_t page_size)
{
    JsonObject *o = root_of(p);
    ck_assert(is_null(o, "vector") && is_null(o, "error_code") && is_null(o, "cr2"));
    ck_assert_uint_eq(hex_member(o, "paddr"), paddr);
    ck_assert_int_eq(json_object_get_int_member(o, "page_size"), page_size);
    return o;
}

/* ---- bundled images ---- */

START_TEST(test_user_4k_text)
{
    Run r = run_walk("--mem", "workloads/images/user-4k.img", "--access", "write", "--cpl", "3",
                     "0x0804a123", NULL);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    ck_assert_str_eq(r.err, "");
    const char *want[] = { "0x0804a123", "0x123456123", "4 KiB", "PDE", "PTE",
                           "0x0000000123456007", "0x0000000123456067", "(+A +D)", "(+A)" };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_msg(strstr(r.out, want[i]), "output lacks '%s':\n%s", want[i], r.out);
    run_clear(&r);
}
END_TEST

START_TEST(test_user_4k_json)
{
    JsonParser *p = walk_json("user-4k.img", "write", "3", "0x0804a123", 0);
    JsonObject *o = check_ok(p, 0x123456123ULL, 4096);
    ck_assert_uint_eq(hex_member(o, "cr3"), 0x0ab3c040);
    ck_assert(json_object_get_boolean_member(o, "cr0_wp") &&
              json_object_get_boolean_member(o, "efer_nxe"));
    JsonArray *e = json_object_get_array_member(o, "entries");
    ck_assert_uint_eq(json_array_get_length(e), 3);
    check_entry(e, 0, "PDPTE", 0x0ab3c040, 0x0ab3d001, 0x0ab3d001);
    check_entry(e, 1, "PDE", 0x0ab3d200, 0x0ab3e007, 0x0ab3e027);          /* +A */
    check_entry(e, 2, "PTE", 0x0ab3e250, 0x123456007ULL, 0x123456067ULL);  /* +A +D */
    JsonArray *refs = json_object_get_array_member(o, "refs");
    ck_assert_uint_eq(json_array_get_length(refs), 4);
    uint64_t want_pa[] = { 0x0ab3d200, 0x0ab3e250 };
    for (guint i = 0; i < 2; i++) {
        JsonObject *ref = json_array_get_object_element(refs, i);
        ck_assert_str_eq(json_object_get_string_member(ref, "kind"), "read");
        ck_assert_uint_eq(hex_member(ref, "paddr"), want_pa[i]);
    }
    uint64_t w2 = hex_member(json_array_get_object_element(refs, 2), "paddr");
    uint64_t w3 = hex_member(json_array_get_object_element(refs, 3), "paddr");
    ck_assert((w2 == want_pa[0] && w3 == want_pa[1]) || (w2 == want_pa[1] && w3 == want_pa[0]));
    g_object_unref(p);
}
END_TEST

START_TEST(test_user_4k_other_addresses)
{
    /* The text page 0x08048000: P US A, read-only; A already set. */
    JsonParser *p = walk_json("user-4k.img", "exec", "3", "0x08048010", 0);
    JsonObject *o = check_ok(p, 0x1c2d010, 4096);
    JsonArray *e = json_object_get_array_member(o, "entries");
    check_entry(e, 2, "PTE", 0x0ab3e240, 0x1c2d025, 0x1c2d025);
    g_object_unref(p);
    p = walk_json("user-4k.img", "write", "3", "0x08048010", 1);
    check_pf(p, 0x7, 0x08048010);                            /* P W U */
    g_object_unref(p);
    /* PDPTEs 1..3 are not present: P=0, the PDPTE register is the only level. */
    p = walk_json("user-4k.img", "read", "3", "0x40000000", 1);
    o = check_pf(p, 0x4, 0x40000000);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "entries")), 1);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "refs")), 0);
    g_object_unref(p);
    /* A PDE never written: not present; fetch with NXE=1 sets I/D. */
    p = walk_json("user-4k.img", "exec", "0", "0x00400000", 1);
    check_pf(p, 0x10, 0x00400000);
    g_object_unref(p);
}
END_TEST

START_TEST(test_kernel_2m)
{
    JsonParser *p = walk_json("kernel-2m.img", "write", "0", "0xc0345678", 0);
    JsonObject *o = check_ok(p, 0x345678, 2 * 1024 * 1024);
    JsonArray *e = json_object_get_array_member(o, "entries");
    ck_assert_uint_eq(json_array_get_length(e), 2);                   /* no PTE level */
    check_entry(e, 0, "PDPTE", 0x00c0a018, 0xc0b001, 0xc0b001);
    check_entry(e, 1, "PDE", 0x00c0b008, 0x2001a3, 0x2001e3);         /* +D */
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "refs")), 2);
    g_object_unref(p);
    p = walk_json("kernel-2m.img", "read", "0", "0xc0000000", 0);
    check_ok(p, 0, 2 * 1024 * 1024);
    g_object_unref(p);
    p = walk_json("kernel-2m.img", "read", "3", "0xc0345678", 1);
    check_pf(p, 0x5, 0xc0345678);                                     /* user -> supervisor */
    g_object_unref(p);

    Run r = run_walk("--mem", "workloads/images/kernel-2m.img", "--cpl", "0", "0xc0345678", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "2 MiB") && strstr(r.out, "0x000345678") &&
                  strstr(r.out, "offset 0x145678"), "%s", r.out);
    run_clear(&r);
}
END_TEST

/* 32-bit paging ('cr4.pae 0'): two levels of 4-byte entries, no PDPTE,
 * no register level, no I/D; the values are worked in the images'
 * comments (SDM Vol. 3A §4.3). */
START_TEST(test_legacy_images)
{
    JsonParser *p = walk_json("legacy-user-4k.img", "write", "3", "0x0804a123", 0);
    JsonObject *o = check_ok(p, 0x01234123, 4096);
    ck_assert_str_eq(json_object_get_string_member(o, "paging"), "32-bit");
    JsonArray *e = json_object_get_array_member(o, "entries");
    ck_assert_uint_eq(json_array_get_length(e), 2);
    check_entry(e, 0, "PDE", 0x0ab3c080, 0x0ab3d007, 0x0ab3d027);      /* +A */
    check_entry(e, 1, "PTE", 0x0ab3d128, 0x01234007, 0x01234067);      /* +A +D */
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "refs")), 4);
    g_object_unref(p);
    /* No XD: a user fetch of the text page translates. */
    p = walk_json("legacy-user-4k.img", "exec", "3", "0x08048010", 0);
    check_ok(p, 0x01c2d010, 4096);
    g_object_unref(p);
    /* A not-present PDE, fetched at CPL 3: U only, never I/D. */
    p = walk_json("legacy-user-4k.img", "exec", "3", "0x00400000", 1);
    o = check_pf(p, 0x4, 0x00400000);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "entries")), 1);
    g_object_unref(p);

    p = walk_json("legacy-kernel-4m.img", "write", "0", "0xc0412345", 0);
    o = check_ok(p, 0x00412345, 4 * 1024 * 1024);
    e = json_object_get_array_member(o, "entries");
    ck_assert_uint_eq(json_array_get_length(e), 1);                      /* no PTE level */
    check_entry(e, 0, "PDE", 0x00c0ac04, 0x004001a3, 0x004001e3);        /* +D */
    g_object_unref(p);
    p = walk_json("legacy-kernel-4m.img", "read", "0", "0xffc12345", 0);
    check_ok(p, 0x240812345ULL, 4 * 1024 * 1024);                        /* PSE-36 */
    g_object_unref(p);
    p = walk_json("legacy-kernel-4m.img", "read", "3", "0xc0345678", 1);
    check_pf(p, 0x5, 0xc0345678);
    g_object_unref(p);

    p = walk_json("legacy-pse-off.img", "read", "0", "0xc0345678", 0);
    o = check_ok(p, 0x00345678, 4096);
    e = json_object_get_array_member(o, "entries");
    check_entry(e, 1, "PTE", 0x00c0bd14, 0x00345163, 0x00345163);
    g_object_unref(p);

    p = walk_json("legacy-fault-rsvd-4m.img", "read", "0", "0xc0345678", 1);
    check_pf(p, 0x9, 0xc0345678);                                        /* P RSVD */
    g_object_unref(p);
    p = walk_json("legacy-fault-user-supervisor.img", "read", "3", "0xc0001234", 1);
    check_pf(p, 0x5, 0xc0001234);
    g_object_unref(p);
    p = walk_json("legacy-fault-user-supervisor.img", "read", "0", "0xc0001234", 0);
    check_ok(p, 0x00001234, 4096);
    g_object_unref(p);

    Run r = run_walk("--mem", "workloads/images/legacy-kernel-4m.img", "0xc0345678", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "32-bit (CR4.PAE=0)") && strstr(r.out, "4 MiB page") &&
                  strstr(r.out, "PD index 0x300, offset 0x345678") &&
                  !strstr(r.out, "PDPT index") && !strstr(r.out, "PDPTE register"), "%s", r.out);
    run_clear(&r);
}
END_TEST

START_TEST(test_fault_images)
{
    JsonParser *p = walk_json("fault-pte-not-present.img", "read", "3", "0x0804a123", 1);
    JsonObject *o = check_pf(p, 0x4, 0x0804a123);
    check_entry(json_object_get_array_member(o, "entries"), 2, "PTE", 0x0ab3e250,
                0x0000034100000000ULL, 0x0000034100000000ULL);
    g_object_unref(p);
    p = walk_json("fault-pte-not-present.img", "write", "3", "0x0804a123", 1);
    check_pf(p, 0x6, 0x0804a123);
    g_object_unref(p);

    p = walk_json("fault-user-supervisor.img", "read", "3", "0xffffd123", 1);
    check_pf(p, 0x5, 0xffffd123);
    g_object_unref(p);
    p = walk_json("fault-user-supervisor.img", "read", "0", "0xffffd123", 0);
    check_ok(p, 0x1f3e123, 4096);
    g_object_unref(p);

    p = walk_json("fault-write-ro-wp.img", "write", "0", "0x0804a123", 1);
    check_pf(p, 0x3, 0x0804a123);
    g_object_unref(p);
    p = walk_json("fault-write-ro-wp.img", "write", "3", "0x0804a123", 1);
    check_pf(p, 0x7, 0x0804a123);
    g_object_unref(p);
    p = walk_json("fault-write-ro-wp.img", "read", "0", "0x0804a123", 0);
    check_ok(p, 0x123456123ULL, 4096);
    g_object_unref(p);

    p = walk_json("fault-rsvd-pde.img", "read", "0", "0xc0212345", 1);
    o = check_pf(p, 0x9, 0xc0212345);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "entries")), 2);
    g_object_unref(p);

    p = walk_json("fault-nx.img", "exec", "3", "0xbffff123", 1);
    check_pf(p, 0x15, 0xbffff123);
    g_object_unref(p);
    p = walk_json("fault-nx.img", "write", "3", "0xbffff123", 0);
    check_ok(p, 0x12345123, 4096);
    g_object_unref(p);
}
END_TEST

START_TEST(test_fault_text)
{
    Run r = run_walk("--mem", "workloads/images/fault-nx.img", "--access", "exec", "--cpl", "3",
                     "0xbffff123", NULL);
    ck_assert_int_eq(r.status, 1);
    const char *want[] = { "#PF", "vector 14", "0x0015", "CR2", "0xbffff123", "XD=1" };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_msg(strstr(r.out, want[i]), "output lacks '%s':\n%s", want[i], r.out);
    run_clear(&r);
}
END_TEST

START_TEST(test_gp_at_cr3_load)
{
    JsonParser *p = walk_json("gp-pdpte-rsvd.img", "read", "0", "0xc0001000", 1);
    JsonObject *o = root_of(p);
    ck_assert_str_eq(json_object_get_string_member(o, "stage"), "cr3-load");
    ck_assert_int_eq(json_object_get_int_member(o, "vector"), 13);
    ck_assert_int_eq(json_object_get_int_member(o, "error_code"), 0);
    ck_assert_int_eq(json_object_get_int_member(o, "bad_pdpte"), 3);
    ck_assert(is_null(o, "cr2") && is_null(o, "paddr"));
    JsonArray *e = json_object_get_array_member(o, "entries");
    ck_assert_uint_eq(json_array_get_length(e), 1);
    check_entry_from(e, 0, "PDPTE", 0x00c0a018, 0xc0b067, 0xc0b067, false);
    g_object_unref(p);
    Run r = run_walk("--mem", "workloads/images/gp-pdpte-rsvd.img", "0xc0001000", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.out, "#GP(0)") && strstr(r.out, "PDPTE 3"), "%s", r.out);
    run_clear(&r);
}
END_TEST

/* ---- bad input: exit 2, a message, nothing on stdout ---- */

static char *tmp_dir;

static char *write_tmp(const char *name, const char *text, gssize len)
{
    char *path = g_build_filename(tmp_dir, name, NULL);
    ck_assert(g_file_set_contents(path, text, len, NULL));
    return path;
}

static void check_bad(Run *r, const char *what, const char *want1, const char *want2)
{
    ck_assert_msg(r->status == 2, "%s: exit %d, expected 2\n%s%s", what, r->status, r->out, r->err);
    ck_assert_msg(r->out[0] == '\0', "%s: stdout should be empty:\n%s", what, r->out);
    ck_assert_msg(strstr(r->err, want1) && (!want2 || strstr(r->err, want2)),
                  "%s: stderr should name '%s' and '%s':\n%s", what, want1, want2 ? want2 : "",
                  r->err);
    run_clear(r);
}

START_TEST(test_malformed_images)
{
    static const struct { const char *name, *text, *line, *expected; } t[] = {
        { "directive.img", "cr3 0x1000\n# fine\nfrobnicate 1\n", "directive.img:3:", "expected cr3" },
        { "unaligned.img", "cr3 0x1000\nq 0x1004 1\n", "unaligned.img:2:", "expected a multiple of 8" },
        { "number.img", "cr3 0x1O00\n", "number.img:1:", "expected 0x" },
        { "toohigh.img", "cr3 0x1000\n\nq 0x1000000000 0\n", "toohigh.img:3:", "expected at most" },
        { "nocr3.img", "q 0x1000 0x2001\n", "nocr3.img: no cr3", "expected a line such as" },
        { "flag.img", "cr3 0x1000\ncr0.wp yes\n", "flag.img:2:", "expected" },
        { "empty.img", "", "empty.img: no cr3", "expected" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++) {
        g_autofree char *path = write_tmp(t[i].name, t[i].text, -1);
        for (int json = 0; json < 2; json++) {
            Run r = run_walk("--mem", path, "--access", "read", "--cpl", "0", "0x1000",
                             json ? "--json" : NULL, NULL);
            check_bad(&r, t[i].name, t[i].line, t[i].expected);
        }
        g_unlink(path);
    }
    /* Binary junk with NUL bytes: an error, not a crash. */
    static const char junk[] = "\x7f" "ELF\x01\x01\x01\0\0\0\0\0\xff\xfe\n\0\0\0";
    g_autofree char *jpath = write_tmp("junk.img", junk, sizeof junk);
    Run r = run_walk("--mem", jpath, "0x1000", NULL);
    check_bad(&r, "junk", "junk.img:1:", NULL);
    g_unlink(jpath);
    /* Missing file; a directory. */
    r = run_walk("--mem", "/nonexistent/tables.img", "0x1000", NULL);
    check_bad(&r, "missing file", "/nonexistent/tables.img", NULL);
    r = run_walk("--mem", tmp_dir, "0x1000", NULL);
    check_bad(&r, "directory", tmp_dir, NULL);
}
END_TEST

START_TEST(test_bad_options)
{
    const char *img = "workloads/images/user-4k.img";
    Run r = run_walk("--mem", img, "--access", "fetch", "0x1000", NULL);
    check_bad(&r, "access", "--access", "read, write or exec");
    r = run_walk("--mem", img, "--cpl", "5", "0x1000", NULL);
    check_bad(&r, "cpl 5", "--cpl", "expected 0, 1, 2 or 3");
    r = run_walk("--mem", img, "--cpl", "03", "0x1000", NULL);
    check_bad(&r, "cpl 03", "--cpl", NULL);
    r = run_walk("--mem", img, NULL);
    check_bad(&r, "no vaddr", "VADDR", NULL);
    r = run_walk("--mem", img, "0x1000", "0x2000", NULL);
    check_bad(&r, "two vaddrs", "too many", NULL);
    r = run_walk("--mem", img, "0x100000000", NULL);
    check_bad(&r, "vaddr > 32 bits", "0x100000000", "32-bit");
    r = run_walk("--mem", img, "main+4", NULL);
    check_bad(&r, "vaddr junk", "main+4", NULL);
    r = run_walk("0x1000", NULL);
    check_bad(&r, "no --mem", "--mem", NULL);
    r = run_walk("--mem", img, "--bogus", "0x1000", NULL);
    check_bad(&r, "unknown option", "bogus", NULL);
    r = run_walk("--mem", img, "--json", "--cpl", NULL);
    check_bad(&r, "option without value", "cpl", NULL);
}
END_TEST

START_TEST(test_help_and_decimal)
{
    Run r = run_walk("--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "VADDR") && strstr(r.out, "--mem"), "%s", r.out);
    run_clear(&r);
    /* VADDR in decimal: 134521123 = 0x0804a123. */
    JsonParser *p = walk_json("user-4k.img", "read", "3", "134521123", 0);
    check_ok(p, 0x123456123ULL, 4096);
    g_object_unref(p);
}
END_TEST

/* The scratch directory is made and removed by main(), in the parent
 * process, so that a failing test (whose forked child stops at the failed
 * check) leaves nothing behind. */
static void remove_tmp(void)
{
    GDir *d = g_dir_open(tmp_dir, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        g_autofree char *path = g_build_filename(tmp_dir, name, NULL);
        g_unlink(path);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(tmp_dir);
}

static Suite *walk_cli_suite(void)
{
    Suite *s = suite_create("walk-cli");
    TCase *tc = tcase_create("images");
    tcase_add_test(tc, test_user_4k_text);
    tcase_add_test(tc, test_user_4k_json);
    tcase_add_test(tc, test_user_4k_other_addresses);
    tcase_add_test(tc, test_kernel_2m);
    tcase_add_test(tc, test_legacy_images);
    tcase_add_test(tc, test_fault_images);
    tcase_add_test(tc, test_fault_text);
    tcase_add_test(tc, test_gp_at_cr3_load);
    tcase_add_test(tc, test_help_and_decimal);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad-input");
    tcase_add_test(tc, test_malformed_images);
    tcase_add_test(tc, test_bad_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-vmsplit\n", argv[0]);
        return 2;
    }
    /* meson passes the binary relative to the build directory (our cwd);
     * the walks run in the source directory, so make it absolute. */
    vmsplit_path = g_canonicalize_filename(argv[1], NULL);
    source_dir = g_getenv("VMSPLIT_SOURCE_DIR");
    if (!source_dir) {
        fprintf(stderr, "VMSPLIT_SOURCE_DIR is not set\n");
        return 2;
    }
    GError *err = NULL;
    tmp_dir = g_dir_make_tmp("vmsplit-walk-XXXXXX", &err);
    if (!tmp_dir) {
        fprintf(stderr, "cannot make a scratch directory: %s\n", err->message);
        return 2;
    }
    SRunner *sr = srunner_create(walk_cli_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    remove_tmp();
    g_free(tmp_dir);
    return failed ? 1 : 0;
}
