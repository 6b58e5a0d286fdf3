/* Inside the preset reader (src/preset/preset.c and preset_range.c only):
 * the key table's types, the source-position helpers and value parsers
 * both files use, and the range functions preset.c calls. Not for any
 * other file: everything else reads presets through preset/preset.h. */
#ifndef VMSPLIT_PRESET_PRESET_PRIV_H
#define VMSPLIT_PRESET_PRESET_PRIV_H

#include "preset/preset.h"

#include <json-glib/json-glib.h>
#include <stddef.h>

typedef enum { T_STR, T_BOOL, T_UINT, T_MHZ, T_BYTES, T_PGSIZES, T_POLICY } KeyType;

enum {
    K_REQ = 0,                   /* always required */
    K_GATE = 1 << 0,             /* required; 0 means the structure is absent */
    K_GATED = 1 << 1,            /* required when the group's gate is non-zero */
    K_OPT = 1 << 2,              /* optional, default 0 */
};

typedef struct {
    const char *group;
    const char *key;
    KeyType type;
    size_t off;
    unsigned flags;
    unsigned min;                /* T_UINT, T_BYTES, T_PGSIZES: least value */
    const char *doc;
} KeyDef;

typedef struct {
    const char *path;
    GHashTable *lines;           /* "group" and "group\x1fkey" -> line (int) */
} Src;

bool preset_src_fail(GError **err, int code, const Src *s, int line, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);
bool preset_parse_uint(const char *v, uint64_t max, uint64_t *out);
bool preset_parse_bytes(const char *v, uint64_t *out);
char *preset_key_expect(const KeyDef *k);                  /* g_free */
const KeyDef *preset_key_find(const char *group, const char *key);
void preset_value_text(GString *out, const Preset *p, const KeyDef *k);

/* preset_range.c: the range and origin in the comment of k's raw value,
 * checked against the parsed value and appended to p->ranges. */
bool preset_range_read(Preset *p, const KeyDef *k, const char *raw, const Src *s, int line,
                       GError **err);
void preset_ranges_free(PresetRange *r, unsigned n);
/* "estimate: range 60..700; " for a key with a range, else nothing. */
void preset_range_text(GString *out, const Preset *p, const KeyDef *k);
void preset_ranges_json(JsonBuilder *b, const Preset *p);

#endif
