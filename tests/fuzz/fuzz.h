/* Shared by the fuzz harnesses (tests/fuzz/README.md).
 *
 * Each harness is one libFuzzer/AFL++ entry point, LLVMFuzzerTestOneInput,
 * over one of vmsplit's input parsers, called in-process on the library.
 * Built two ways: with clang and -fsanitize=fuzzer (meson -Dfuzz=true,
 * scripts/fuzz) to search, and with the normal compiler and replay_main.c
 * to replay the regression corpus tests/fuzz/regress/KIND/ as a meson test.
 *
 * The contract every harness checks: any input ends in a result or a
 * GError with a message, never a crash, a leak, undefined behaviour or an
 * abort. Several readers take a path (they stream and detect gzip), so the
 * input is written to a private temporary file first: fuzz_input_path(). */
#ifndef VMSPLIT_TESTS_FUZZ_H
#define VMSPLIT_TESTS_FUZZ_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to a file in this process's own temporary directory and
 * returns its path (owned by the harness, rewritten on every call; the
 * directory is removed at exit). suffix (".ini", ".gz", "") is appended,
 * for the readers that look at the name. */
const char *fuzz_input_path(const uint8_t *data, size_t size, const char *suffix);

/* A GError from the parser: it must carry a message. Frees it. */
void fuzz_check_error(GError *e);

#endif
