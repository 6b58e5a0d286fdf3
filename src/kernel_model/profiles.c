/* Syscall profile table: see profiles.h and syscalls.ini. */
#include "kernel_model/profiles.h"
#include "textfile/textfile.h"

#include "config.h"

#include <string.h>

struct ProfileTable {
    GPtrArray *list;             /* SyscallProfile*, file order */
    GHashTable *by_name;
    SyscallProfile *generic;
};

static const char *mm_names[] = { "none", "mmap", "munmap", "brk", "mprotect",
                                  "fork", "exec", "exit" };

const char *mm_effect_name(MmEffect e) { return mm_names[e]; }

static void profile_free(gpointer p)
{
    SyscallProfile *s = p;
    g_free(s->name);
    g_free(s);
}

static char *default_path(void)
{
    char *p = g_build_filename(VMSPLIT_SOURCE_DIR, "src", "kernel_model", "syscalls.ini", NULL);
    if (g_file_test(p, G_FILE_TEST_EXISTS))
        return p;
    g_free(p);
    return g_build_filename(VMSPLIT_DATADIR, "syscalls.ini", NULL);
}

static bool bad(GError **err, const char *path, const char *group, const char *key,
                const char *what)
{
    g_set_error(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                "%s: [%s] %s: expected %s", path, group, key, what);
    return false;
}

/* A non-negative integer below 2^32. */
static bool get_u32(GKeyFile *kf, const char *path, const char *g, const char *k,
                    uint32_t *out, GError **err)
{
    char *v = g_key_file_get_value(kf, g, k, NULL);
    char *end = NULL;
    guint64 n = v ? g_ascii_strtoull(v, &end, 10) : 0;
    bool ok = v && *v && end && *end == '\0' && n <= UINT32_MAX;
    if (ok)
        *out = (uint32_t)n;
    g_free(v);
    return ok || bad(err, path, g, k, "a non-negative integer");
}

static bool get_copy(GKeyFile *kf, const char *path, const char *g, const char *k,
                     uint32_t *out, GError **err)
{
    char *v = g_key_file_get_value(kf, g, k, NULL);
    bool arg = v && !strcmp(v, "arg");
    g_free(v);
    if (arg) {
        *out = COPY_ARG;
        return true;
    }
    return get_u32(kf, path, g, k, out, err) ||
           (g_clear_error(err), bad(err, path, g, k, "'arg' or a byte count"));
}

/* "LO..HI" with LO <= HI. */
static bool get_range(GKeyFile *kf, const char *path, const char *g, const char *k,
                      uint32_t *lo, uint32_t *hi, GError **err)
{
    char *v = g_key_file_get_value(kf, g, k, NULL);
    char *end = NULL;
    guint64 l = v ? g_ascii_strtoull(v, &end, 10) : 0, h = 0;
    bool ok = v && g_ascii_isdigit(*v) && end && g_str_has_prefix(end, "..") &&
              g_ascii_isdigit(end[2]);
    if (ok) {
        h = g_ascii_strtoull(end + 2, &end, 10);
        ok = *end == '\0' && h <= UINT32_MAX;
    }
    g_free(v);
    if (!ok)
        return bad(err, path, g, k, "LO..HI, two non-negative integers");
    if (l > h)
        return bad(err, path, g, k, "LO <= HI (the range has low > high)");
    *lo = (uint32_t)l;
    *hi = (uint32_t)h;
    return true;
}

static bool parse_group(GKeyFile *kf, const char *path, const char *g, SyscallProfile *p,
                        GError **err)
{
    gsize nkeys = 0;
    char **keys = g_key_file_get_keys(kf, g, &nkeys, NULL);
    bool ok = true, have_insns = false;
    for (gsize i = 0; ok && i < nkeys; i++) {
        const char *k = keys[i];
        if (!strcmp(k, "nr"))
            ok = get_u32(kf, path, g, k, &p->nr, err);
        else if (!strcmp(k, "insns"))
            ok = have_insns = get_u32(kf, path, g, k, &p->insns, err);
        else if (!strcmp(k, "insns_range"))
            ok = get_range(kf, path, g, k, &p->insns_lo, &p->insns_hi, err);
        else if (!strcmp(k, "kdata_pages"))
            ok = get_u32(kf, path, g, k, &p->kdata_pages, err) &&
                 (p->kdata_pages <= 64 || bad(err, path, g, k, "at most 64 pages"));
        else if (!strcmp(k, "copy_in"))
            ok = get_copy(kf, path, g, k, &p->copy_in, err);
        else if (!strcmp(k, "copy_out"))
            ok = get_copy(kf, path, g, k, &p->copy_out, err);
        else if (!strcmp(k, "slab"))
            ok = get_u32(kf, path, g, k, &p->slab, err);
        else if (!strcmp(k, "blocks")) {
            GError *e = NULL;
            p->blocks = g_key_file_get_boolean(kf, g, k, &e);
            ok = !e || (g_error_free(e), bad(err, path, g, k, "true or false"));
        } else if (!strcmp(k, "mm")) {
            char *v = g_key_file_get_value(kf, g, k, NULL);
            ok = false;
            for (unsigned j = 0; j < G_N_ELEMENTS(mm_names); j++)
                if (v && !strcmp(v, mm_names[j])) {
                    p->mm = (MmEffect)j;
                    ok = true;
                }
            g_free(v);
            if (!ok)
                bad(err, path, g, k, "none, mmap, munmap, brk, mprotect, fork, exec or exit");
        } else {
            ok = bad(err, path, g, k,
                     "a known key (nr, insns, insns_range, kdata_pages, copy_in, copy_out, slab, "
                     "blocks, mm)");
        }
    }
    g_strfreev(keys);
    if (ok && !have_insns)
        ok = bad(err, path, g, "insns", "this key (the body's instruction count)");
    if (ok && p->insns_hi && (p->insns < p->insns_lo || p->insns > p->insns_hi)) {
        char *what = g_strdup_printf("a value inside insns_range %u..%u", p->insns_lo,
                                     p->insns_hi);
        ok = bad(err, path, g, "insns", what);
        g_free(what);
    }
    return ok;
}

ProfileTable *profiles_load(const char *path, GError **err)
{
    char *def = path ? NULL : default_path();
    const char *file = path ? path : def;
    GKeyFile *kf = g_key_file_new();
    ProfileTable *t = NULL;
    GError *e = NULL;
    char *text = NULL;
    gsize len = 0;
    bool read = g_file_get_contents(file, &text, &len, &e) &&
                textfile_check(text, len, file, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE, &e);
    if (read && !g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &e))
        g_prefix_error(&e, "%s: ", file);
    g_free(text);
    if (e) {
        /* GLib's read errors name the file; the others are prefixed with it */
        g_set_error(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE, "%s", e->message);
        g_error_free(e);
        goto out;
    }
    t = g_new0(ProfileTable, 1);
    t->list = g_ptr_array_new_with_free_func(profile_free);
    t->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    gsize n = 0;
    char **groups = g_key_file_get_groups(kf, &n);
    for (gsize i = 0; i < n; i++) {
        SyscallProfile *p = g_new0(SyscallProfile, 1);
        p->name = g_strdup(groups[i]);
        g_ptr_array_add(t->list, p);
        if (!parse_group(kf, file, groups[i], p, err)) {
            g_strfreev(groups);
            profiles_free(t);
            t = NULL;
            goto out;
        }
        g_hash_table_insert(t->by_name, p->name, p);
    }
    g_strfreev(groups);
    t->generic = g_hash_table_lookup(t->by_name, "generic");
    if (!t->generic) {
        g_set_error(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_GROUP_NOT_FOUND,
                    "%s: expected a [generic] profile for syscalls the table does not name", file);
        profiles_free(t);
        t = NULL;
    }
out:
    g_key_file_free(kf);
    g_free(def);
    return t;
}

void profiles_free(ProfileTable *t)
{
    if (!t)
        return;
    g_hash_table_destroy(t->by_name);
    g_ptr_array_free(t->list, TRUE);
    g_free(t);
}

const SyscallProfile *profiles_find(const ProfileTable *t, const char *name, bool *known)
{
    const SyscallProfile *p = g_hash_table_lookup(t->by_name, name);
    if (known)
        *known = p != NULL && p != t->generic;
    return p ? p : t->generic;
}

const SyscallProfile *profiles_by_nr(const ProfileTable *t, uint32_t nr)
{
    for (guint i = 0; i < t->list->len; i++) {
        const SyscallProfile *p = g_ptr_array_index(t->list, i);
        if (p->nr == nr)
            return p;
    }
    return NULL;
}

const SyscallProfile *profiles_generic(const ProfileTable *t) { return t->generic; }
unsigned profiles_count(const ProfileTable *t) { return t->list->len; }

const SyscallProfile *profiles_at(const ProfileTable *t, unsigned i)
{
    return i < t->list->len ? t->list->pdata[i] : NULL;
}
