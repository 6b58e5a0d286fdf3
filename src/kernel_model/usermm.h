/* The user address spaces of replayed programs (trace format version 2),
 * and their page faults as kernel entries.
 *
 * A program's pages start not present. The trace announces its mappings
 * (mmap, munmap, mprotect, brk, exec, fork); the first reference to a page
 * of a mapping is a page fault on the simulated core: a user-mode
 * instruction touches the page (machine_user_touch), the MMU raises #PF,
 * the core delivers it through the IDT to the layout's page-fault stub
 * (stubs/entry_*.asm, with 4G/4G's and KPTI's CR3 writes), and the stub
 * calls the fault body here, which does what Linux 2.6's do_page_fault
 * does for that case and writes the new PTE with modelled kernel stores;
 * the stub's IRET retries the instruction, which then hits. Kinds
 * (faults.ini has each body's instruction estimate and its reasoning):
 *
 *   anon-read    read of an untouched anonymous page: the shared zero page
 *                mapped read-only (2.6 do_anonymous_page, !write_access)
 *   demand-zero  write to an untouched anonymous page, or to one mapping
 *                the zero page: a new frame cleared (4 KiB, through
 *                kmap_atomic when it is in highmem) and mapped writable
 *   file         a page of a file mapping, found in the page cache (the
 *                replay assumes a warm cache: no I/O) and mapped
 *   cow-copy     a write to a private page shared since a fork, or the
 *                first write to a private file page: a new frame, the
 *                4 KiB copied, the PTE made writable, INVLPG
 *   cow-reuse    a write to a private page no other process still maps
 *                (do_wp_page's reuse): the PTE made writable, INVLPG
 *
 * A fork write-protects the parent's private writable pages and flushes
 * its TLB (dup_mmap's flush_tlb_mm: a CR3 reload, charged); an exec drops
 * every page (the new mm's CR3 load flushes). Threads (fork shared) share
 * one address space: a fault maps the page in every sharer's page table.
 *
 * Pages the machine itself maps in every task (user.asm's code page, the
 * model's user stack, the syscall buffer, the synthetic working set) stay
 * as they are: a reference that lands on one takes no fault (counted as a
 * collision; a write to the read-only code page is made as a read). */
#ifndef VMSPLIT_KERNEL_MODEL_USERMM_H
#define VMSPLIT_KERNEL_MODEL_USERMM_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel_model/machine.h"

#define USERMM_FAULT_KINDS(X)                                               \
    X(ANON_READ, "anon-read")                                               \
    X(DEMAND_ZERO, "demand-zero")                                           \
    X(FILE, "file")                                                         \
    X(COW_COPY, "cow-copy")                                                 \
    X(COW_REUSE, "cow-reuse")

typedef enum {
#define X(id, name) UFAULT_##id,
    USERMM_FAULT_KINDS(X)
#undef X
    UFAULT_KINDS
} UserFaultKind;

const char *usermm_fault_name(UserFaultKind k);

/* What the body of one kind of fault does besides its modelled references
 * (faults.ini says what the keys mean). */
typedef struct {
    uint32_t insns, kdata_pages;
} UserFaultProfile;

/* Reads and checks a page-fault profile table (`--fault-profiles FILE`;
 * path NULL: the bundled faults.ini) into prof, indexed by UserFaultKind,
 * as usermm_new does: a group for every kind and no other group, the keys
 * insns, kdata_pages (0 to 1000000) and range "LOW-HIGH" around insns, no
 * other key. An error names the file and what was expected. */
bool usermm_profiles_load(const char *path, UserFaultProfile prof[UFAULT_KINDS], GError **err);

typedef struct {
    uint64_t count[UFAULT_KINDS];
    uint64_t cycles[UFAULT_KINDS];   /* user mode to user mode, the touch included */
    uint64_t walk_cycles;            /* of those: page walks */
    uint64_t insns;                  /* instructions of the faults' runs */
    uint64_t fork_flushes;           /* CR3 reloads after fork write-protected pages */
    uint64_t exec_flushes;           /* CR3 reloads after an exec dropped pages */
    uint64_t pcid_flushes;           /* PCID flushes after munmap/mprotect/brk (kpti-pcid) */
    uint64_t flush_cycles;
    uint64_t collisions;             /* first touches of a page the machine maps itself */
    uint64_t pages_mapped, pages_peak;
    uint64_t bad_fault_info;         /* faults whose CR2 or error code, as the stub
                                      * passed them, differ from the touch's (0) */
} UserMmStats;

/* Page states, per 4 KiB page, kept beside the page tables so that the
 * replay's hot path knows whether a reference can fault (usermm_ready). */
enum {
    UPAGE_NONE = 0,      /* not present: the first touch faults */
    UPAGE_RO,            /* present, read-only mapping */
    UPAGE_RW,            /* present, writable */
    UPAGE_COW,           /* anonymous, present read-only; a write copies or reuses */
    UPAGE_FCOW,          /* a private file page, present read-only; a write copies */
    UPAGE_ZEROPG,        /* the zero page, read-only; a write demand-zeroes */
    UPAGE_MODEL,         /* the machine's own page, writable */
    UPAGE_MODEL_RO,      /* the machine's own read-only page (user.asm) */
};

typedef struct {
    uint8_t *leaf[1024];             /* [va >> 22]: 1024 states, or NULL */
} UserPageDir;

static inline uint8_t usermm_page_state(const UserPageDir *d, uint32_t va)
{
    const uint8_t *l = d->leaf[va >> 22];
    return l ? l[(va >> 12) & 1023] : UPAGE_NONE;
}

/* Whether a reference of this kind to va can be made without a fault. */
static inline bool usermm_ready(const UserPageDir *d, uint32_t va, bool write)
{
    uint8_t s = usermm_page_state(d, va);
    return write ? s == UPAGE_RW || s >= UPAGE_MODEL : s != UPAGE_NONE;
}

typedef struct UserMm UserMm;

/* Installs the fault body on m. profiles: the fault profile table (NULL:
 * the bundled faults.ini). */
UserMm *usermm_new(Machine *m, const char *profiles, GError **err);
void usermm_free(UserMm *um);
const UserMmStats *usermm_stats(const UserMm *um);

/* Address-space events by machine task. A task without an address space
 * gets an empty one at its first use. Addresses are user addresses; an
 * error names what was wrong (the caller adds file:line). */
UserPageDir *usermm_dir(UserMm *um, int task);
bool usermm_fork(UserMm *um, int parent, int child, bool shared_vm, GError **err);
void usermm_exec(UserMm *um, int task);
void usermm_exit(UserMm *um, int task);
bool usermm_mmap(UserMm *um, int task, uint64_t addr, uint64_t len, uint8_t prot,
                 uint8_t flags, GError **err);
bool usermm_munmap(UserMm *um, int task, uint64_t addr, uint64_t len, GError **err);
bool usermm_mprotect(UserMm *um, int task, uint64_t addr, uint64_t len, uint8_t prot,
                     GError **err);
bool usermm_brk(UserMm *um, int task, uint64_t addr, GError **err);

/* Makes a reference of kind `how` to va possible for the current task
 * (which must be at a rest point in user mode): the fault the first touch
 * raises, run on the core, or nothing if the page is the machine's own.
 * *made: the touch's retried instruction made that reference itself (a
 * load, a store or a fetch at va, through the MMU as any other), so the
 * caller makes one fewer; false when no touch ran or it had to be another
 * kind (a fetch from an anonymous page is touched with a load). An address
 * outside every mapping, or a write to a read-only one, is an error. */
bool usermm_fault_in(UserMm *um, uint32_t va, MachineTouch how, bool *made, GError **err);

#endif
