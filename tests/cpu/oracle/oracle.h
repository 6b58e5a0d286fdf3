/* The host CPU as the oracle for instruction semantics.
 *
 * A set of cases (a NASM snippet, the registers and EFLAGS it starts from,
 * the flags the SDM leaves undefined after it) becomes ONE program: for each
 * case it resets a 64-byte data buffer (`buf`) from a fixed pattern, clears
 * the top of a private stack, loads EFLAGS and the registers, runs the
 * snippet, and stores the eight registers, EFLAGS, the buffer and the top 32
 * bytes of the stack into a result table; at the end it writes the table to
 * fd 1 and exits 0 (Linux i386 int 0x80, which `vmsplit run` provides too).
 *
 * The program is assembled with nasm, linked with `ld -m elf_i386`, run
 * natively, and run in the simulated core (src/cpu/runenv.h) from the same
 * executable, so every address is the same on both sides. The two tables
 * must agree register for register, byte for byte, and flag for flag except
 * the case's undefined flags (and the system flags, which differ between a
 * Linux process and the runtime).
 *
 * On a host that cannot execute i386 code (ORACLE_HOST_LONG), the host side
 * is a second program instead: the same snippets assembled BITS 64 (nasm -f
 * elf64, linked with .data and .bss at the i386 program's addresses, so that
 * every register holding an address is the same) and run in x86-64 long
 * mode, with a long-mode harness (PUSHFQ/POPFQ, syscall) and the same result
 * table. Cases that are not the same instruction there are left out and
 * counted, with the reason (oracle_long.c); the simulated side still runs
 * the whole i386 program.
 *
 * Snippets may use the symbols buf (64 bytes, writable) and may push/pop
 * (ESP starts at the private stack's top). They must not fault. */
#ifndef VMSPLIT_TESTS_CPU_ORACLE_H
#define VMSPLIT_TESTS_CPU_ORACLE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* Flags compared: the six arithmetic flags and DF. */
#define ORACLE_FLAGS 0x0CD5u

typedef struct OracleSet OracleSet;

OracleSet *oracle_set_new(const char *title);
void oracle_set_free(OracleSet *s);
size_t oracle_set_size(const OracleSet *s);
const char *oracle_set_title(const OracleSet *s);

/* Add a case. init: the initial EAX, ECX, EDX, EBX, (ESP: ignored), EBP,
 * ESI, EDI as NASM expressions (NULL entries mean 0), e.g. "0x7fffffff" or
 * "buf+8". eflags: the initial arithmetic flags and DF. undef: EFLAGS bits
 * the SDM leaves undefined after the snippet. name describes the case in
 * failure messages. */
void oracle_add(OracleSet *s, const char *name, const char *code,
                const char *const init[8], uint32_t eflags, uint32_t undef);
/* The same with numeric initial registers. */
void oracle_addv(OracleSet *s, const char *name, const char *code,
                 const uint32_t init[8], uint32_t eflags, uint32_t undef);

/* What the host runs as the oracle. */
typedef enum {
    ORACLE_HOST_I386,     /* the i386 program itself: every case */
    ORACLE_HOST_LONG,     /* the long-mode program: the cases it can run */
} OracleHost;

/* Build and run on both sides. Returns the number of cases that differ
 * (or -1 if the harness itself failed); report receives a description of
 * each difference (at most max_report of them) or of the failure. */
int oracle_run(OracleSet *s, OracleHost host, bool decode_cache, GString *report,
               int max_report);

/* After an ORACLE_HOST_LONG run: how many cases the host did not run, and
 * why, grouped by reason and mnemonic ("<reason>: 12 [daa 6, das 6]; ...";
 * g_free it). */
size_t oracle_set_excluded(const OracleSet *s);
char *oracle_set_describe_exclusions(const OracleSet *s);

#endif
