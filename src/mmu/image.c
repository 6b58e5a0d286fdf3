/* Machine-image parser (docs/image-format.md). Every line is either blank,
 * a comment, or exactly one directive; anything else is an error naming the
 * file and line, never a silently ignored line. Stores are applied to
 * physical memory as they are read; overlapping stores are refused, since
 * an image describes memory, and two values for one byte is a mistake. */
#include "mmu/image.h"

#include <string.h>

G_DEFINE_QUARK(vmsplit-image-error-quark, image_error)

#define MAX_WORDS 4              /* directive + up to 2 operands + 1 extra */

/* Control directives: name, where the value goes, and what it may be. */
typedef enum { CTL_CR3, CTL_PG, CTL_WP, CTL_PAE, CTL_PGE, CTL_NXE, CTL_PSE, CTL_COUNT } CtlId;

static const char *const ctl_names[CTL_COUNT] = {
    [CTL_CR3] = "cr3",       [CTL_PG] = "cr0.pg",   [CTL_WP] = "cr0.wp",
    [CTL_PAE] = "cr4.pae",   [CTL_PGE] = "cr4.pge", [CTL_NXE] = "efer.nxe",
    [CTL_PSE] = "cr4.pse",
};

#define EXPECTED_DIRECTIVES "cr3, cr0.pg, cr0.wp, cr4.pae, cr4.pse, cr4.pge, efer.nxe, q or d"
#define EXPECTED_NUMBER "0x followed by at most 16 hex digits, or a decimal number below 2^64"

typedef struct {
    const char *name;
    unsigned line;
    PhysMem *pm;
    MachineImage *img;
    unsigned ctl_line[CTL_COUNT];    /* where each control directive was set */
    GHashTable *stored;              /* 4-byte unit (pa >> 2) -> line */
} Parser;

bool image_parse_number(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        if (!*s)
            return false;
        for (; *s; s++) {
            int d = g_ascii_xdigit_value(*s);
            if (d < 0 || v > (UINT64_MAX >> 4))
                return false;
            v = (v << 4) | (uint64_t)d;
        }
    } else {
        if (!*s)
            return false;
        for (; *s; s++) {
            int d = g_ascii_digit_value(*s);
            if (d < 0 || v > (UINT64_MAX - (uint64_t)d) / 10)
                return false;
            v = v * 10 + (uint64_t)d;
        }
    }
    *out = v;
    return true;
}

static bool fail(Parser *p, GError **err, ImageError code, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static bool fail(Parser *p, GError **err, ImageError code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, IMAGE_ERROR, code, "%s:%u: %s", p->name, p->line, msg);
    return false;
}

static bool number(Parser *p, const char *word, const char *what, uint64_t *out,
                   GError **err)
{
    if (image_parse_number(word, out))
        return true;
    return fail(p, err, IMAGE_ERROR_SYNTAX, "bad number '%s' for %s (expected %s)",
                word, what, EXPECTED_NUMBER);
}

static bool extra_word(Parser *p, char **w, int n, GError **err)
{
    return fail(p, err, IMAGE_ERROR_SYNTAX,
                "unexpected '%s' after '%s %s%s%s' (expected end of line or a # comment)",
                w[n], w[0], w[1], n > 2 ? " " : "", n > 2 ? w[2] : "");
}

static bool control(Parser *p, CtlId id, char **w, int nw, GError **err)
{
    const char *name = ctl_names[id];
    if (nw < 2)
        return fail(p, err, IMAGE_ERROR_SYNTAX, "'%s' needs a value (expected '%s VALUE')",
                    name, name);
    if (nw > 2)
        return extra_word(p, w, 2, err);
    if (p->ctl_line[id])
        return fail(p, err, IMAGE_ERROR_DUPLICATE, "%s already set at line %u", name,
                    p->ctl_line[id]);
    uint64_t v;
    g_autofree char *what = g_strdup_printf("'%s'", name);
    if (!number(p, w[1], what, &v, err))
        return false;
    if (id == CTL_CR3) {
        if (v > UINT32_MAX)
            return fail(p, err, IMAGE_ERROR_RANGE,
                        "cr3 value %s does not fit in 32 bits (expected at most 0xffffffff)",
                        w[1]);
        p->img->cr3 = (uint32_t)v;
    } else {
        if (v > 1)
            return fail(p, err, IMAGE_ERROR_RANGE, "'%s' value %s is not a flag (expected 0 or 1)",
                        name, w[1]);
        if (id == CTL_PG && v != 1)
            return fail(p, err, IMAGE_ERROR_RANGE,
                        "'%s 0' is not supported: an image describes paging turned on "
                        "(expected 1)",
                        name);
        bool *flag[CTL_COUNT] = {
            [CTL_PG] = &p->img->cr0_pg, [CTL_WP] = &p->img->cr0_wp,
            [CTL_PAE] = &p->img->cr4_pae, [CTL_PGE] = &p->img->cr4_pge,
            [CTL_NXE] = &p->img->efer_nxe, [CTL_PSE] = &p->img->cr4_pse,
        };
        *flag[id] = v != 0;
    }
    p->ctl_line[id] = p->line;
    return true;
}

/* Refuse a store that overlaps an earlier one; record this one. */
static bool claim(Parser *p, uint64_t pa, unsigned size, GError **err)
{
    for (uint64_t u = pa >> 2; u < (pa + size) >> 2; u++) {
        gint64 key = (gint64)u;
        gpointer prev = g_hash_table_lookup(p->stored, &key);
        if (prev)
            return fail(p, err, IMAGE_ERROR_DUPLICATE,
                        "store to 0x%llx overlaps the store at line %u (expected each "
                        "byte of memory to be written once)",
                        (unsigned long long)pa, GPOINTER_TO_UINT(prev));
    }
    for (uint64_t u = pa >> 2; u < (pa + size) >> 2; u++)
    {
        gint64 *key = g_new(gint64, 1);
        *key = (gint64)u;
        g_hash_table_insert(p->stored, key, GUINT_TO_POINTER(p->line));
    }
    return true;
}

static bool store(Parser *p, unsigned size, char **w, int nw, GError **err)
{
    const char *d = w[0];
    if (nw < 3)
        return fail(p, err, IMAGE_ERROR_SYNTAX,
                    "'%s' needs an address and a value (expected '%s ADDR VALUE')", d, d);
    if (nw > 3)
        return extra_word(p, w, 3, err);
    uint64_t pa, v;
    g_autofree char *wa = g_strdup_printf("the address of '%s'", d);
    g_autofree char *wv = g_strdup_printf("the value of '%s'", d);
    if (!number(p, w[1], wa, &pa, err) || !number(p, w[2], wv, &v, err))
        return false;
    if (pa % size)
        return fail(p, err, IMAGE_ERROR_RANGE,
                    "'%s' address %s is not %u-byte aligned (expected a multiple of %u)", d,
                    w[1], size, size);
    if (pa > PHYS_ADDR_LIMIT - size)
        return fail(p, err, IMAGE_ERROR_RANGE,
                    "'%s' address %s is beyond the %d-bit physical address space "
                    "(expected at most 0x%llx)",
                    d, w[1], PHYS_ADDR_BITS, (unsigned long long)(PHYS_ADDR_LIMIT - size));
    if (size == 4 && v > UINT32_MAX)
        return fail(p, err, IMAGE_ERROR_RANGE,
                    "'d' value %s does not fit in 32 bits (expected at most 0xffffffff; "
                    "use 'q' for 64-bit entries)",
                    w[2]);
    if (!claim(p, pa, size, err))
        return false;
    if (size == 8)
        physmem_write64(p->pm, pa, v);
    else
        physmem_write32(p->pm, pa, (uint32_t)v);
    p->img->nstores++;
    return true;
}

/* Split one line (already without its newline) into words, dropping a
 * comment. Returns the number of words (at most MAX_WORDS are kept). */
static int split_words(char *s, char **w)
{
    char *hash = strchr(s, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, " \t\r\v\f", &save); tok;
         tok = strtok_r(NULL, " \t\r\v\f", &save)) {
        if (n < MAX_WORDS)
            w[n] = tok;
        n++;
    }
    return n;
}

static bool parse_line(Parser *p, char *s, GError **err)
{
    char *w[MAX_WORDS];
    int nw = split_words(s, w);
    if (nw == 0)
        return true;
    if (!g_ascii_strcasecmp(w[0], "q"))
        return store(p, 8, w, nw, err);
    if (!g_ascii_strcasecmp(w[0], "d"))
        return store(p, 4, w, nw, err);
    for (int id = 0; id < CTL_COUNT; id++)
        if (!g_ascii_strcasecmp(w[0], ctl_names[id]))
            return control(p, (CtlId)id, w, nw, err);
    return fail(p, err, IMAGE_ERROR_SYNTAX, "unknown directive '%s' (expected %s)", w[0],
                EXPECTED_DIRECTIVES);
}

bool image_parse(const char *name, const char *text, size_t len, PhysMem *pm,
                 MachineImage *img, GError **err)
{
    *img = (MachineImage){ .cr0_pg = true, .cr4_pae = true };
    Parser p = { .name = name, .pm = pm, .img = img,
                 .stored = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL) };
    bool ok = true;
    size_t pos = 0;
    while (ok && pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        p.line++;
        if (memchr(text + pos, '\0', n)) {
            ok = fail(&p, err, IMAGE_ERROR_SYNTAX,
                      "NUL byte in the line (expected a text file, one directive per line)");
            break;
        }
        char *s = g_strndup(text + pos, n);
        ok = parse_line(&p, s, err);
        g_free(s);
        pos += n + 1;
    }
    g_hash_table_destroy(p.stored);
    if (ok && !p.ctl_line[CTL_CR3]) {
        g_set_error(err, IMAGE_ERROR, IMAGE_ERROR_MISSING,
                    "%s: no cr3 directive (expected a line such as 'cr3 0x1000' giving the "
                    "physical address of the PDPT, or of the page directory with 'cr4.pae 0')",
                    name);
        ok = false;
    }
    return ok;
}

bool image_load(const char *path, PhysMem *pm, MachineImage *img, GError **err)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    GError *io = NULL;
    if (!g_file_get_contents(path, &text, &len, &io)) {
        g_set_error(err, IMAGE_ERROR, IMAGE_ERROR_IO,
                    "%s: cannot read the machine image: %s", path, io->message);
        g_error_free(io);
        return false;
    }
    return image_parse(path, text, len, pm, img, err);
}

PagingMode image_paging_mode(const MachineImage *img)
{
    return img->cr4_pae ? PAGING_PAE : PAGING_LEGACY;
}

bool image_load_cr3(const MachineImage *img, const PhysMem *pm, PaeRegs *regs,
                    int *bad_pdpte, PaeRef refs[4])
{
    PagingMode mode = image_paging_mode(img);
    const PagingRules *r = paging_rules(mode);
    *regs = (PaeRegs){ .wp = img->cr0_wp, .nxe = img->efer_nxe, .mode = mode,
                       .pse = img->cr4_pse };
    if (!r->top_loaded) {
        /* 32-bit paging: CR3 names the page directory; nothing is loaded
         * and no memory is read (SDM Vol. 3A §4.3), so nothing can fail. */
        regs->cr3 = img->cr3;
        return true;
    }
    if (pae_load_cr3(regs, pm, img->cr3, refs))
        return true;
    if (bad_pdpte) {
        /* Which PDPTE made the load fail: the first present one with a
         * reserved bit (SDM Vol. 3A §4.4.1, Table 4-8). */
        *bad_pdpte = -1;
        uint64_t base = img->cr3 & r->cr3_base_mask;
        for (int i = 0; i < PAE_PTRS_PER_PDPT && *bad_pdpte < 0; i++) {
            uint64_t e = physmem_read64(pm, base + 8 * (uint64_t)i);
            if ((e & PAE_P) && (e & r->rsvd_top))
                *bad_pdpte = i;
        }
    }
    return false;
}
