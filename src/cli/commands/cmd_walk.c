/* vmsplit walk: explain one translation on a machine image, under PAE
 * paging or (an image with 'cr4.pae 0') 32-bit paging.
 *
 *   vmsplit walk --mem IMAGE --access read|write|exec --cpl 0..3 VADDR [--json]
 *
 * Loads the image (docs/image-format.md), performs its MOV CR3 (under PAE
 * a bad PDPTE is a #GP(0) there), walks VADDR with the library's walker
 * and prints every level, the outcome and the entries as the walk left
 * them. What differs between the modes (levels, index split, reserved
 * bits, XD) is read from the mode's PagingRules (mmu/pae.h).
 * The explanation of a fault ("why") is derived here from the entries the
 * walker reported; the fault itself is always the walker's.
 *
 * Exit: 0 translated, 1 architectural fault (#PF, or #GP at the CR3
 * load), 2 bad input. */
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "mmu/image.h"
#include "mmu/pae.h"
#include "mmu/physmem.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char *mem;                   /* image path (owned) */
    Access access;
    int cpl;
    uint32_t lin;
    bool json;
} WalkArgs;

typedef struct {
    const WalkArgs *args;
    const MachineImage *img;
    const PaeRegs *regs;
    const PagingRules *rules;    /* the image's paging mode */
    bool gp;                     /* #GP(0) at the CR3 load */
    int bad_pdpte;               /* which PDPTE caused it */
    uint64_t bad_value;
    PaeWalk walk;
} WalkResult;

static const char *const access_names[] = { "read", "write", "exec" };

static const char *level_name(PaeLevelId l)
{
    return l == PAE_LEVEL_PDPTE ? "PDPTE" : l == PAE_LEVEL_PDE ? "PDE" : "PTE";
}

static bool parse_access(const char *s, Access *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, access_names[i])) {
            *out = (Access)i;
            return true;
        }
    return false;
}

/* Returns -1 when the arguments are good, else the exit status. */
static int parse_args(int argc, char **argv, WalkArgs *a)
{
    g_autofree char *mem = NULL, *access = NULL, *cpl = NULL;
    gboolean json = FALSE;
    GOptionEntry entries[] = {
        { "mem", 'm', 0, G_OPTION_ARG_FILENAME, &mem, "Machine image (docs/image-format.md)", "FILE" },
        { "access", 'a', 0, G_OPTION_ARG_STRING, &access, "read, write or exec (default read)", "KIND" },
        { "cpl", 0, 0, G_OPTION_ARG_STRING, &cpl, "Privilege level 0..3; 3 is user mode (default 0)", "N" },
        { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object instead of text", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("VADDR - explain one translation (PAE or 32-bit paging)");
    g_option_context_set_description(ctx,
        "VADDR is a 32-bit linear address, hex (0x...) or decimal. The image's\n"
        "'cr4.pae' selects PAE paging (1, the default) or 32-bit paging (0).\n"
        "Exit status: 0 translated, 1 architectural fault (#PF, or #GP at the CR3 load),\n"
        "2 bad input.\n\n"
        "Example:\n  vmsplit walk --mem workloads/images/user-4k.img --access write --cpl 3 0x0804a123\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!cli_parse(ctx, &argc, &argv, "walk"))
        return VMS_EXIT_USAGE;
    *a = (WalkArgs){ .access = ACCESS_READ, .json = json };
    if (!mem) {
        fprintf(stderr, "vmsplit walk: --mem FILE is required (see 'vmsplit walk --help')\n");
        return VMS_EXIT_USAGE;
    }
    if (access && !parse_access(access, &a->access)) {
        fprintf(stderr, "vmsplit walk: --access '%s': expected read, write or exec\n", access);
        return VMS_EXIT_USAGE;
    }
    if (cpl && (strlen(cpl) != 1 || cpl[0] < '0' || cpl[0] > '3')) {
        fprintf(stderr, "vmsplit walk: --cpl '%s': expected 0, 1, 2 or 3 (3 is user mode)\n", cpl);
        return VMS_EXIT_USAGE;
    }
    a->cpl = cpl ? cpl[0] - '0' : 0;
    if (argc != 2) {
        fprintf(stderr, "vmsplit walk: %s (expected one VADDR; see 'vmsplit walk --help')\n",
                argc < 2 ? "missing the linear address VADDR" : "too many arguments");
        return VMS_EXIT_USAGE;
    }
    uint64_t v;
    if (!image_parse_number(argv[1], &v) || v > UINT32_MAX) {
        fprintf(stderr, "vmsplit walk: VADDR '%s': expected a 32-bit linear address "
                        "(0x0 to 0xffffffff, or decimal)\n", argv[1]);
        return VMS_EXIT_USAGE;
    }
    a->lin = (uint32_t)v;
    a->mem = g_steal_pointer(&mem);
    return -1;
}

/* ---- explanation of a fault, from the entries the walker reported ---- */

/* "bits 40, 63" for the set bits of m. */
static char *bit_list(uint64_t m)
{
    GString *s = g_string_new(NULL);
    for (int b = 0; b < 64; b++)
        if (m & (1ULL << b))
            g_string_append_printf(s, "%s%d", s->len ? ", " : "", b);
    return g_string_free(s, FALSE);
}

static bool level_large(const WalkResult *r, const PaeLevel *l)
{
    return l->level == PAE_LEVEL_PDE && paging_pde_large(r->rules, l->before, r->regs->pse);
}

static char *explain_rsvd(const WalkResult *r, const PaeLevel *l)
{
    const PagingRules *rules = r->rules;
    bool large = level_large(r, l);
    bool nxe = r->regs->nxe && rules->xd;
    uint64_t m = l->before & paging_reserved_bits(rules, large, nxe);
    g_autofree char *bits = bit_list(m);
    GString *s = g_string_new(NULL);
    g_string_printf(s, "the %s at 0x%09llx has reserved bit%s %s set", level_name(l->level),
                    (unsigned long long)l->paddr, strchr(bits, ',') ? "s" : "", bits);
    if (m & rules->rsvd)
        g_string_append(s, "; bits 62:36 lie above MAXPHYADDR=36");
    if (m & rules->xd)
        g_string_append(s, "; bit 63 (XD) is reserved while EFER.NXE=0");
    if ((m & rules->rsvd_large) && rules->mode == PAGING_PAE)
        g_string_append(s, "; bits 20:13 of a 2 MiB PDE must be 0 (is the frame 2 MiB aligned?)");
    else if (m & rules->rsvd_large)
        g_string_append(s, "; a 4 MiB PDE's bit 21 is reserved, and bits 20:17 would be "
                           "address bits above MAXPHYADDR=36 (PSE-36: bits 16:13 give 35:32)");
    return g_string_free(s, FALSE);
}

/* Which levels (of PDE, PTE) have `bit` equal to `val`: "PDE", "PTE", "PDE and PTE". */
static const char *levels_with(const PaeWalk *w, uint64_t bit, bool val)
{
    bool in[2] = { false, false };
    for (int i = 0; i < w->nlevels; i++)
        if (w->levels[i].level != PAE_LEVEL_PDPTE)
            in[w->levels[i].level == PAE_LEVEL_PTE] = ((w->levels[i].before & bit) != 0) == val;
    return in[0] && in[1] ? "PDE and PTE" : in[0] ? "PDE" : in[1] ? "PTE" : "no entry";
}

static char *explain_fault(const WalkResult *r)
{
    const PaeWalk *w = &r->walk;
    const PaeLevel *last = &w->levels[w->nlevels - 1];
    bool user = r->args->cpl == 3;
    if (!(w->error_code & PF_ERR_P))
        return g_strdup_printf("the %s at 0x%09llx is not present (P=0): no translation",
                               level_name(last->level), (unsigned long long)last->paddr);
    if (w->error_code & PF_ERR_RSVD)
        return explain_rsvd(r, last);
    if (user && strcmp(levels_with(w, PAE_US, false), "no entry"))
        return g_strdup_printf("user-mode access to a supervisor page: U/S=0 in the %s",
                               levels_with(w, PAE_US, false));
    if (r->args->access == ACCESS_WRITE)
        return g_strdup_printf("write to a read-only page: R/W=0 in the %s%s",
                               levels_with(w, PAE_RW, false),
                               user ? "" : ", and CR0.WP=1 makes supervisor writes honour it");
    if (r->args->access == ACCESS_EXEC)
        return g_strdup_printf("instruction fetch from an execute-disabled page: XD=1 in the %s "
                               "(EFER.NXE=1)", levels_with(w, PAE_XD, true));
    return g_strdup("protection violation");
}

/* ---- text output ---- */

static void print_entry(const WalkResult *r, PaeLevelId level, uint64_t pa, uint64_t v,
                        const char *note)
{
    char bits[128];
    if (v & PAE_P)
        paging_describe_entry(r->rules, level, v, r->regs->pse, bits, sizeof bits);
    else
        g_strlcpy(bits, "not present (P=0; the CPU ignores the other bits)", sizeof bits);
    if (r->rules->entry_bytes == 4)
        printf("%-6s 0x%09llx  0x%08llx          %s%s\n", level_name(level),
               (unsigned long long)pa, (unsigned long long)v, bits, note);
    else
        printf("%-6s 0x%09llx  0x%016llx  %s%s\n", level_name(level),
               (unsigned long long)pa, (unsigned long long)v, bits, note);
}

static void print_header(const WalkResult *r)
{
    const WalkArgs *a = r->args;
    const MachineImage *img = r->img;
    const PagingRules *rules = r->rules;
    printf("machine image  %s\n", a->mem);
    const PaeLevel *pde = &r->walk.levels[r->walk.nlevels > 0 ? r->walk.nlevels - 1 : 0];
    for (int i = 0; !r->gp && i < r->walk.nlevels; i++)
        if (r->walk.levels[i].level == PAE_LEVEL_PDE)
            pde = &r->walk.levels[i];
    bool large = !r->gp && pde->level == PAE_LEVEL_PDE && (pde->before & PAE_P) &&
                 level_large(r, pde);
    if (rules->top_loaded) {
        printf("control        CR3=0x%08x (PDPT at 0x%09x)  CR0.WP=%d  CR4.PGE=%d  EFER.NXE=%d\n",
               img->cr3, img->cr3 & rules->cr3_base_mask, img->cr0_wp, img->cr4_pge,
               img->efer_nxe);
    } else {
        printf("paging         32-bit (CR4.PAE=0): two levels, 4-byte entries, no PDPTEs%s\n",
               img->cr4_pse ? ", 4 MiB pages (CR4.PSE=1)" : "; CR4.PSE=0: PDE.PS is ignored");
        printf("control        CR3=0x%08x (page directory at 0x%08x)  CR0.WP=%d  CR4.PGE=%d  "
               "EFER.NXE=%d%s\n",
               img->cr3, img->cr3 & rules->cr3_base_mask, img->cr0_wp, img->cr4_pge,
               img->efer_nxe, img->efer_nxe ? " (no effect: no XD in 32-bit paging)" : "");
    }
    printf("access         %s at CPL %d (%s mode), linear address 0x%08x\n",
           access_names[a->access], a->cpl, a->cpl == 3 ? "user" : "supervisor", a->lin);
    /* The split depends on where the walk ended: 2:9:21 (PAE) or 10:22
     * (32-bit) for a large page. */
    unsigned idx = (1u << rules->index_bits) - 1;
    unsigned pd = (a->lin >> rules->pde_shift) & idx, pt = (a->lin >> PAGE_SHIFT) & idx;
    const char *top = rules->top_loaded ? "PDPT index " : "";
    char topi[8] = "";
    if (rules->top_loaded)
        snprintf(topi, sizeof topi, "%u, ", a->lin >> PAE_PDPTE_SHIFT);
    if (large)
        printf("               = %s%sPD index 0x%03x, offset 0x%06x in a %s page\n", top, topi, pd,
               a->lin & (rules->large_page - 1), rules->large_page == PAE_PAGE_2M ? "2 MiB" : "4 MiB");
    else
        printf("               = %s%sPD index 0x%03x, PT index 0x%03x, offset 0x%03x\n", top, topi,
               pd, pt, a->lin & 0xfff);
}

static void print_error_code(const WalkResult *r, uint32_t ec)
{
    const struct { uint32_t bit; const char *name, *off, *on; } b[] = {
        { PF_ERR_P, "P", "not present: no translation", "protection or reserved-bit violation" },
        { PF_ERR_W, "W/R", "the access was a read or fetch", "the access was a write" },
        { PF_ERR_U, "U/S", "supervisor-mode access (CPL < 3)", "user-mode access (CPL 3)" },
        { PF_ERR_RSVD, "RSVD", "no reserved bit set", "a reserved bit was set in an entry" },
        { PF_ERR_ID, "I/D", r->rules->xd ? "not an instruction fetch (or EFER.NXE=0)"
                                          : "never set in 32-bit paging (no XD)",
          "instruction fetch" },
    };
    printf("error code     0x%04x\n", ec);
    for (size_t i = 0; i < G_N_ELEMENTS(b); i++)
        printf("  %-5s %d  %s\n", b[i].name, (ec & b[i].bit) != 0, ec & b[i].bit ? b[i].on : b[i].off);
}

static void print_outcome(const WalkResult *r)
{
    const PaeWalk *w = &r->walk;
    if (w->fault) {
        g_autofree char *why = explain_fault(r);
        printf("\noutcome        #PF (page fault, vector %u)\n", w->vector);
        printf("why            %s\n", why);
        print_error_code(r, w->error_code);
        printf("CR2            0x%08x\n", w->cr2);
        return;
    }
    printf("\noutcome        translated: linear 0x%08x -> physical 0x%09llx\n", r->args->lin,
           (unsigned long long)w->paddr);
    printf("page           %s page at 0x%09llx\n",
           w->page_size == PAE_PAGE_2M   ? "2 MiB"
           : w->page_size == LEG_PAGE_4M ? "4 MiB"
                                         : "4 KiB",
           (unsigned long long)w->frame);
    printf("rights         %s, %s, %s%s; %s\n", w->rw ? "writable" : "read-only",
           w->us ? "user" : "supervisor", w->nx ? "execute-disabled" : "executable",
           !r->rules->xd ? " (no XD in 32-bit paging)"
           : r->regs->nxe ? "" : " (XD not honoured: EFER.NXE=0)",
           w->global ? (r->img->cr4_pge ? "global (G=1, CR4.PGE=1)" : "G=1 but CR4.PGE=0: not global")
                     : "not global");
}

static void print_after(const WalkResult *r)
{
    const PaeWalk *w = &r->walk;
    printf("\nentries after the walk%s\n",
           w->fault ? ": unchanged (a faulting walk sets no A/D bits)" : "");
    if (w->fault)
        return;
    for (int i = 0; i < w->nlevels; i++) {
        const PaeLevel *l = &w->levels[i];
        uint64_t set = l->after & ~l->before;
        g_autofree char *note = l->from_register ? g_strdup("   (register; no A/D bits in PAE PDPTEs)")
                                : !set ? g_strdup("   (unchanged)")
                                : g_strdup_printf("   (%s%s)", set & PAE_A ? "+A" : "",
                                                  set & PAE_D ? (set & PAE_A ? " +D" : "+D") : "");
        print_entry(r, l->level, l->paddr, l->after, note);
    }
}

static void print_refs(const WalkResult *r)
{
    const PaeWalk *w = &r->walk;
    printf("\nmemory references (%d, %s)\n", w->nrefs,
           r->rules->top_loaded ? "besides the 4 PDPTE reads at MOV CR3"
                                : "and none at MOV CR3: 32-bit paging loads nothing");
    for (int i = 0; i < w->nrefs; i++)
        printf("  %-5s 0x%09llx%s\n", w->refs[i].write ? "write" : "read",
               (unsigned long long)w->refs[i].paddr,
               w->refs[i].write ? "  (locked A/D update)" : "");
}

static void print_text(const WalkResult *r)
{
    print_header(r);
    if (r->gp) {
        printf("\noutcome        #GP(0) (general protection, vector %d) at the MOV to CR3\n", VEC_GP);
        printf("why            PDPTE %d at 0x%09llx = 0x%016llx is present with reserved bit(s) set\n",
               r->bad_pdpte,
               (unsigned long long)((r->img->cr3 & r->rules->cr3_base_mask) + 8u * (unsigned)r->bad_pdpte),
               (unsigned long long)r->bad_value);
        g_autofree char *bits = bit_list(r->bad_value & r->rules->rsvd_top);
        printf("               (bits %s; PAE PDPTE bits 2:1, 8:5 and 63:36 are reserved,\n"
               "               SDM Vol. 3A §4.4.1: nothing is loaded, no walk happens)\n", bits);
        return;
    }
    printf("\n%-6s %-11s  %-18s  %s\n", "level", "entry at", "value", "decoded");
    for (int i = 0; i < r->walk.nlevels; i++) {
        const PaeLevel *l = &r->walk.levels[i];
        print_entry(r, l->level, l->paddr, l->before,
                    l->from_register ? "   (PDPTE register, loaded at MOV CR3)" : "");
    }
    print_outcome(r);
    print_after(r);
    print_refs(r);
}

/* ---- JSON output: numbers that can exceed 2^53 are hex strings ---- */

static void json_hex(JsonBuilder *b, const char *name, uint64_t v, int width)
{
    char s[24];
    snprintf(s, sizeof s, "0x%0*llx", width, (unsigned long long)v);
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, s);
}

static void json_null(JsonBuilder *b, const char *name)
{
    json_builder_set_member_name(b, name);
    json_builder_add_null_value(b);
}

static void json_int(JsonBuilder *b, const char *name, int64_t v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, v);
}

static void json_bool(JsonBuilder *b, const char *name, bool v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_boolean_value(b, v);
}

static void json_str(JsonBuilder *b, const char *name, const char *v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, v);
}

static void json_entry(JsonBuilder *b, const WalkResult *r, PaeLevelId level, uint64_t pa,
                       uint64_t before, uint64_t after, bool from_register)
{
    char bits[128];
    json_builder_begin_object(b);
    json_str(b, "level", level_name(level));
    json_hex(b, "paddr", pa, 9);
    json_hex(b, "before", before, 16);
    json_hex(b, "after", after, 16);
    json_bool(b, "from_register", from_register);
    if (after & PAE_P)
        paging_describe_entry(r->rules, level, after, r->regs->pse, bits, sizeof bits);
    else
        g_strlcpy(bits, "not present", sizeof bits);
    json_str(b, "decoded", bits);
    json_builder_end_object(b);
}

static void json_fault(JsonBuilder *b, const WalkResult *r)
{
    const PaeWalk *w = &r->walk;
    json_int(b, "vector", w->vector);
    json_int(b, "error_code", w->error_code);
    json_builder_set_member_name(b, "error_code_bits");
    json_builder_begin_object(b);
    json_bool(b, "p", w->error_code & PF_ERR_P);
    json_bool(b, "w", w->error_code & PF_ERR_W);
    json_bool(b, "u", w->error_code & PF_ERR_U);
    json_bool(b, "rsvd", w->error_code & PF_ERR_RSVD);
    json_bool(b, "id", w->error_code & PF_ERR_ID);
    json_builder_end_object(b);
    json_hex(b, "cr2", w->cr2, 8);
    g_autofree char *why = explain_fault(r);
    json_str(b, "why", why);
}

static void json_outcome(JsonBuilder *b, const WalkResult *r)
{
    const PaeWalk *w = &r->walk;
    json_bool(b, "fault", r->gp || w->fault);
    json_str(b, "stage", r->gp ? "cr3-load" : "walk");
    if (r->gp) {
        json_int(b, "vector", VEC_GP);
        json_int(b, "error_code", 0);
        json_null(b, "error_code_bits");
        json_null(b, "cr2");
        json_int(b, "bad_pdpte", r->bad_pdpte);
    } else if (w->fault) {
        json_fault(b, r);
    } else {
        json_null(b, "vector");
        json_null(b, "error_code");
        json_null(b, "error_code_bits");
        json_null(b, "cr2");
    }
    bool ok = !r->gp && !w->fault;
    if (ok) {
        json_hex(b, "paddr", w->paddr, 9);
        json_int(b, "page_size", w->page_size);
    } else {
        json_null(b, "paddr");
        json_null(b, "page_size");
    }
}

static void print_json(const WalkResult *r)
{
    const PaeWalk *w = &r->walk;
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_str(b, "image", r->args->mem);
    json_hex(b, "linear", r->args->lin, 8);
    json_str(b, "access", access_names[r->args->access]);
    json_int(b, "cpl", r->args->cpl);
    json_str(b, "paging", r->rules->name);
    json_hex(b, "cr3", r->img->cr3, 8);
    json_bool(b, "cr4_pse", r->img->cr4_pse);
    json_bool(b, "cr0_wp", r->img->cr0_wp);
    json_bool(b, "cr4_pge", r->img->cr4_pge);
    json_bool(b, "efer_nxe", r->img->efer_nxe);
    json_outcome(b, r);
    json_builder_set_member_name(b, "entries");
    json_builder_begin_array(b);
    if (r->gp) {
        uint64_t pa = (r->img->cr3 & r->rules->cr3_base_mask) + 8u * (unsigned)r->bad_pdpte;
        json_entry(b, r, PAE_LEVEL_PDPTE, pa, r->bad_value, r->bad_value, false);
    }
    for (int i = 0; !r->gp && i < w->nlevels; i++)
        json_entry(b, r, w->levels[i].level, w->levels[i].paddr, w->levels[i].before,
                   w->levels[i].after, w->levels[i].from_register);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "refs");
    json_builder_begin_array(b);
    for (int i = 0; !r->gp && i < w->nrefs; i++) {
        json_builder_begin_object(b);
        json_hex(b, "paddr", w->refs[i].paddr, 9);
        json_str(b, "kind", w->refs[i].write ? "write" : "read");
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);

    cli_print_json_keep(b);
}

static int walk_run(const WalkArgs *a)
{
    PhysMem *pm = physmem_new();
    MachineImage img;
    GError *err = NULL;
    if (!image_load(a->mem, pm, &img, &err)) {
        physmem_free(pm);
        return cli_fail("walk", err);
    }
    PaeRegs regs;
    WalkResult r = { .args = a, .img = &img, .regs = &regs,
                     .rules = paging_rules(image_paging_mode(&img)) };
    r.gp = !image_load_cr3(&img, pm, &regs, &r.bad_pdpte, NULL);
    if (r.gp) {
        g_assert(r.bad_pdpte >= 0);
        r.bad_value = physmem_read64(pm, (img.cr3 & r.rules->cr3_base_mask) + 8u * (unsigned)r.bad_pdpte);
    } else {
        pae_walk(&regs, pm, a->lin, a->access, a->cpl, &r.walk);
    }
    if (a->json)
        print_json(&r);
    else
        print_text(&r);
    physmem_free(pm);
    return r.gp || r.walk.fault ? VMS_EXIT_FAULT : VMS_EXIT_OK;
}

int cmd_walk(int argc, char **argv)
{
    WalkArgs a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = walk_run(&a);
    g_free(a.mem);
    return rc;
}
