/* Syscall profiles: the data that says what each system call's body does in
 * the model (src/kernel_model/syscalls.ini documents every key and where
 * each figure comes from). Loaded with GKeyFile, strictly: an unknown key,
 * a bad value or a missing insns is an error naming the file, the group and
 * the key. Names the table does not know get the [generic] profile and are
 * counted by the caller. */
#ifndef VMSPLIT_KERNEL_MODEL_PROFILES_H
#define VMSPLIT_KERNEL_MODEL_PROFILES_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    MM_NONE, MM_MMAP, MM_MUNMAP, MM_BRK, MM_MPROTECT, MM_FORK, MM_EXEC, MM_EXIT,
} MmEffect;

#define COPY_ARG UINT32_MAX      /* copy_in/copy_out = "arg": from the trace */

typedef struct {
    char *name;
    uint32_t nr;                 /* i386 syscall number */
    uint32_t insns;
    /* insns_range = LO..HI: the plausible range of an estimated count
     * whose value decides a verdict (getppid, the null call); both 0 if
     * none is declared. */
    uint32_t insns_lo, insns_hi;
    uint32_t kdata_pages;
    uint32_t copy_in, copy_out;  /* bytes, or COPY_ARG */
    uint32_t slab;               /* lowmem bytes per call */
    bool blocks;
    MmEffect mm;
} SyscallProfile;

typedef struct ProfileTable ProfileTable;

/* path NULL: the bundled table (source tree, then installed data). */
ProfileTable *profiles_load(const char *path, GError **err);
void profiles_free(ProfileTable *t);

/* The profile for a name; the generic one (and *known = false) if absent. */
const SyscallProfile *profiles_find(const ProfileTable *t, const char *name, bool *known);
/* By number (the body sees orig_eax); NULL if none. */
const SyscallProfile *profiles_by_nr(const ProfileTable *t, uint32_t nr);
const SyscallProfile *profiles_generic(const ProfileTable *t);
unsigned profiles_count(const ProfileTable *t);
/* The i-th profile in file order (0 <= i < profiles_count), else NULL. */
const SyscallProfile *profiles_at(const ProfileTable *t, unsigned i);
const char *mm_effect_name(MmEffect e);

#endif
