/* Which oracle cases the host can run in x86-64 long mode (oracle.h,
 * ORACLE_HOST_LONG), and why the others are left out.
 *
 * A case runs there as the same snippet text assembled BITS 64. That is the
 * same instruction with the same 32-bit-operand result when the snippet
 * only names 32-, 16- and 8-bit registers (no REX.W, so an operation on a
 * 32-bit register zero-extends into bits 63..32 and one on 8/16 bits keeps
 * them) and the few instructions whose address size defaults to 64 bits
 * (string instructions: RSI/RDI/RCX; LOOPcc: RCX; XLAT: RBX) start with
 * bits 63..32 clear, which the harness ensures (every register is loaded
 * with a 32-bit MOV), and never carry or borrow across bit 31 (the pointers
 * stay inside buf, below 2 GiB; no LOOP starts at ECX = 0), which the
 * harness checks: it stores the OR of the upper halves after each case,
 * and nonzero fails the case (oracle.c). Two kinds of snippet are not
 * the same program in long mode, and are left out by name:
 *   - nasm rejects the line in BITS 64 (no encoding: DAA, DAS, AAA, AAS,
 *     AAM, AAD, PUSHA/POPA, PUSH/POP of 32-bit operands, PUSHFD/POPFD):
 *     found by assembling and mapping nasm's error lines back to cases;
 *   - the line assembles but means something else: the denylist below.
 * LAHF and SAHF, which long mode has only on CPUs with CPUID
 * 80000001H:ECX.LAHF-SAHF[bit 0] (every x86-64 part since about 2006), are
 * kept: on an older host the program's SIGILL fails the test loudly. */
#include "oracle_priv.h"

#include <stdlib.h>
#include <string.h>

static const char why_rejected[] = "nasm rejects it in BITS 64 (no long-mode encoding)";
static const char why_stack[] = "stack operation (8-byte slots in long mode, 4 in i386)";
static const char why_invalid[] = "#UD in long mode, though nasm assembles it";

/* Instructions nasm assembles in BITS 64 whose long-mode meaning differs
 * (Intel SDM Vol. 2, each instruction's "64-Bit Mode" column and notes). */
static const struct {
    const char *insn, *why;
} denied[] = {
    /* Stack operations default to 64-bit operands: RSP moves by 8 per
     * slot and 8 bytes are stored, so ESP and the top of the stack, which
     * the oracle compares, differ from i386. */
    { "push", why_stack },  { "pop", why_stack },   { "pushf", why_stack },
    { "popf", why_stack },  { "pushfq", why_stack }, { "popfq", why_stack },
    { "enter", why_stack }, { "leave", why_stack }, { "call", why_stack },
    { "ret", why_stack },
    /* SALC (D6) is invalid in 64-bit mode (SDM Vol. 2, Table A-2). */
    { "salc", why_invalid },
};

/* Mark c excluded from the long-mode host program. */
static void exclude(OracleCase *c, const char *why, const char *insn)
{
    if (c->excluded)
        return;                      /* the first reason found stays */
    c->excluded = why;
    c->excluded_insn = g_strdup(insn);
}

/* The mnemonic of one line of assembly (label and REP/LOCK prefixes
 * skipped), lower case; "" for a line without one. g_free it. */
static char *line_mnemonic(const char *line)
{
    static const char *const prefixes[] = { "rep", "repe", "repz", "repne", "repnz", "lock" };
    char **w = g_strsplit_set(line, " \t,", -1);
    const char *m = "";
    for (char **p = w; *p; p++) {
        size_t n = strlen(*p);
        bool prefix = false;
        for (unsigned k = 0; k < G_N_ELEMENTS(prefixes); k++)
            prefix = prefix || g_ascii_strcasecmp(*p, prefixes[k]) == 0;
        if (n == 0 || (*p)[n - 1] == ':' || prefix)
            continue;                /* blank, a label or a prefix */
        m = (*p)[0] == ';' ? "" : *p;
        break;
    }
    char *r = g_ascii_strdown(m, -1);
    g_strfreev(w);
    return r;
}

void oracle_long_exclude_denied(OracleSet *s)
{
    for (guint n = 0; n < s->cases->len; n++) {
        OracleCase *c = g_ptr_array_index(s->cases, n);
        char **lines = g_strsplit(c->code, "\n", -1);
        for (char **l = lines; *l; l++) {
            char *m = line_mnemonic(*l);
            for (unsigned k = 0; k < G_N_ELEMENTS(denied); k++)
                if (strcmp(m, denied[k].insn) == 0)
                    exclude(c, denied[k].why, m);
            g_free(m);
        }
        g_strfreev(lines);
    }
}

/* The case whose lines include line (1-based), or -1 (the harness). */
static int case_of_line(const OracleSet *s, const guint *case_line, guint line)
{
    guint lo = 0, hi = s->cases->len;
    if (line < case_line[0] || line >= case_line[hi])
        return -1;
    while (hi - lo > 1) {            /* case_line[lo] <= line < case_line[hi] */
        guint mid = (lo + hi) / 2;
        if (case_line[mid] <= line)
            lo = mid;
        else
            hi = mid;
    }
    return (int)lo;
}

bool oracle_long_exclude_rejected(OracleSet *s, const char *text, const guint *case_line,
                                  const char *nasm_err, GString *report)
{
    char **lines = g_strsplit(text, "\n", -1);
    guint nlines = g_strv_length(lines);
    char **errs = g_strsplit(nasm_err, "\n", -1);
    bool ok = true;
    unsigned found = 0;
    for (char **e = errs; *e && ok; e++) {
        /* "DIR/oracle64.asm:LINE: error: ..." (warnings are harmless) */
        const char *tag = strstr(*e, ": error:");
        const char *colon = tag ? g_strrstr_len(*e, tag - *e, ".asm:") : NULL;
        if (!colon)
            continue;
        guint line = (guint)strtoul(colon + 5, NULL, 10);
        int n = case_of_line(s, case_line, line);
        if (n < 0 || line > nlines) {
            g_string_append_printf(report, "long-mode harness rejected by nasm: %s\n", *e);
            ok = false;
            break;
        }
        char *m = line_mnemonic(lines[line - 1]);
        exclude(g_ptr_array_index(s->cases, n), why_rejected, m);
        g_free(m);
        found++;
    }
    if (ok && found == 0) {
        g_string_append_printf(report, "nasm failed on the long-mode program: %s\n", nasm_err);
        ok = false;
    }
    g_strfreev(errs);
    g_strfreev(lines);
    return ok;
}

/* One line of the exclusion summary: a reason, a mnemonic, how often. */
typedef struct {
    const char *why, *insn;
    unsigned count;
} Exclusion;

static void tally(GArray *t, const OracleCase *c)
{
    for (guint k = 0; k < t->len; k++) {
        Exclusion *x = &g_array_index(t, Exclusion, k);
        if (x->why == c->excluded && strcmp(x->insn, c->excluded_insn) == 0) {
            x->count++;
            return;
        }
    }
    Exclusion x = { c->excluded, c->excluded_insn, 1 };
    g_array_append_val(t, x);
}

size_t oracle_set_excluded(const OracleSet *s)
{
    size_t n = 0;
    for (guint k = 0; k < s->cases->len; k++)
        n += ((const OracleCase *)g_ptr_array_index(s->cases, k))->excluded != NULL;
    return n;
}

char *oracle_set_describe_exclusions(const OracleSet *s)
{
    GArray *t = g_array_new(FALSE, FALSE, sizeof(Exclusion));
    for (guint k = 0; k < s->cases->len; k++) {
        const OracleCase *c = g_ptr_array_index(s->cases, k);
        if (c->excluded)
            tally(t, c);
    }
    GString *d = g_string_new(NULL);
    static const char *const whys[] = { why_rejected, why_stack, why_invalid };
    for (unsigned w = 0; w < G_N_ELEMENTS(whys); w++) {
        unsigned total = 0;
        GString *insns = g_string_new(NULL);
        for (guint k = 0; k < t->len; k++) {
            const Exclusion *x = &g_array_index(t, Exclusion, k);
            if (x->why != whys[w])
                continue;
            total += x->count;
            g_string_append_printf(insns, "%s%s %u", insns->len ? ", " : "", x->insn, x->count);
        }
        if (total)
            g_string_append_printf(d, "%s%s: %u [%s]", d->len ? "; " : "", whys[w], total,
                                   insns->str);
        g_string_free(insns, TRUE);
    }
    g_array_free(t, TRUE);
    return g_string_free(d, FALSE);
}
