/* Shared by oracle.c (the program, the runs, the comparison) and
 * oracle_long.c (which cases the long-mode host program leaves out). */
#ifndef VMSPLIT_TESTS_CPU_ORACLE_PRIV_H
#define VMSPLIT_TESTS_CPU_ORACLE_PRIV_H

#include "oracle.h"

typedef struct {
    char *name, *code;
    char *init[8];
    uint32_t eflags, undef;
    /* ORACLE_HOST_LONG: why the host cannot run this case in long mode
     * (a static string, NULL if it can) and the mnemonic that is why. */
    const char *excluded;
    char *excluded_insn;
} OracleCase;

struct OracleSet {
    char *title;
    GPtrArray *cases;
};

/* Exclude the cases that assemble as BITS 64 but do something else in
 * long mode (oracle_long.c's denylist). */
void oracle_long_exclude_denied(OracleSet *s);

/* After nasm rejected the long-mode program: exclude the case of every
 * `FILE:LINE: error:` in nasm_err. text is the program, case_line[n] the
 * 1-based line of case n's label (n = 0..cases; [cases]: the line after
 * the last case). False, with report filled, if an error is outside every
 * case (a harness bug) or nasm failed without one. */
bool oracle_long_exclude_rejected(OracleSet *s, const char *text, const guint *case_line,
                                  const char *nasm_err, GString *report);

#endif
