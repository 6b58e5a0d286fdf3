/* Valgrind Lackey memory traces (`valgrind --tool=lackey --trace-mem=yes`):
 *
 *   I  04001230,3        instruction fetch of 3 bytes at 0x04001230
 *    L 1ffefffd28,8      load
 *    S 1ffefffd28,8      store
 *    M 0804a010,4        modify (a load and a store to the same address)
 *
 * Lines starting with "==" are Valgrind's own messages and are skipped (and
 * counted). Anything else is an error naming the file and line, or with
 * skip_bad a counted, skipped line. Streaming, gzip accepted. */
#ifndef VMSPLIT_REPLAY_LACKEY_H
#define VMSPLIT_REPLAY_LACKEY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum { LACKEY_I = 'I', LACKEY_L = 'L', LACKEY_S = 'S', LACKEY_M = 'M' } LackeyKind;

typedef struct {
    LackeyKind kind;
    uint64_t addr;
    uint32_t size;
} LackeyRef;

typedef struct LackeyReader LackeyReader;

LackeyReader *lackey_open(const char *path, bool skip_bad, GError **err);
void lackey_close(LackeyReader *r);
/* 1: a reference; 0: end of trace; -1: error (err set: file, line, what was
 * expected). */
int lackey_next(LackeyReader *r, LackeyRef *ref, GError **err);

uint64_t lackey_lines(const LackeyReader *r);
uint64_t lackey_skipped_messages(const LackeyReader *r);  /* "==" lines */
uint64_t lackey_bad_lines(const LackeyReader *r);         /* with skip_bad */
/* Line number and text (truncated) of the first bad line, for warnings. */
uint64_t lackey_first_bad_line(const LackeyReader *r, const char **text);

#endif
