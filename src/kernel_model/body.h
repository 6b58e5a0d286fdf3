/* Syscall bodies: what the kernel does between entry and exit, driven by a
 * profile (profiles.h). This is the model's one C shortcut (reached from
 * the stubs through the hypercall port), so everything it does is charged
 * as modelled work on the core:
 *
 *   instructions   profile insns x the preset's ALU cost
 *   kernel data    one cache line in each of kdata_pages kernel pages, read
 *                  through the current page tables at CPL 0 (after a 4G/4G
 *                  or KPTI flush, each is a DTLB miss and a walk)
 *   uaccess        copy_from_user / copy_to_user of the call's bytes:
 *     direct       (3g1g, 2g2g, 1g3g, kpti) the kernel touches the user
 *                  buffer through the user mappings: per cache line a
 *                  user-side and a kernel-side reference, per dword one
 *                  string iteration (__copy_user's rep movsl)
 *     indirect     (4g4g, the patch's rw_vm in mm/usercopy.c) per user
 *                  page: a software walk of the user page tables (three
 *                  reads through the direct map), kmap_atomic(KM_USER_COPY)
 *                  = one fixmap PTE write + one INVLPG, then the copy
 *                  through the kmap address; kunmap_atomic does nothing
 *                  (no CONFIG_DEBUG_HIGHMEM). Instruction estimate per page
 *                  beside KBODY_RW_VM_INSNS.
 *
 * Every figure the breakdown reports is measured from the core's and the
 * MMU's counters around the parts, not computed from the profile. */
#ifndef VMSPLIT_KERNEL_MODEL_BODY_H
#define VMSPLIT_KERNEL_MODEL_BODY_H

#include <glib.h>
#include <stdint.h>

#include "kernel_model/machine.h"
#include "kernel_model/profiles.h"

/* estimate: rw_vm per page: spin_lock/unlock(page_table_lock) ~10,
 * follow_page's pgd/pmd/pte offsets and checks ~40, kmap_atomic's
 * __fix_to_virt and set_pte ~15, loop bookkeeping ~20, plus the software
 * walk's three loads modelled separately: ~100 instructions. */
#define KBODY_RW_VM_INSNS 100
#define KBODY_DATA_PAGES 64          /* pool of kernel data pages */
#define KBODY_BUFFER_PAGES 16        /* kernel-side buffers (page cache) */

typedef struct {
    const SyscallProfile *profile;
    uint32_t bytes_in, bytes_out;    /* resolved copy sizes */
    uint32_t user_buf;               /* user address of the buffer */
    uint32_t user_buf_bytes;         /* its mapped size (copies wrap in it) */
    uint32_t ret;                    /* the value the call returns */
    int switch_to;                   /* >= 0: block and switch to this task */
    bool flush_mm;                   /* it changed the current mm's mappings
                                      * (munmap, mprotect, a shrinking brk):
                                      * the body ends with __flush_tlb() */
} SyscallCall;

/* Cycles of one body, by part (exclusive). */
typedef struct {
    uint64_t body;               /* instructions and kernel data (walks excluded) */
    uint64_t uaccess;            /* the copies (walks excluded) */
    uint64_t walks;              /* TLB refills taken inside the body */
    uint64_t kmaps, invlpgs;     /* indirect uaccess */
    uint64_t copied;             /* bytes */
    uint64_t tlb_flushes;        /* __flush_tlb() calls (SyscallCall.flush_mm) */
} KBodyCost;

typedef struct KernelBody KernelBody;

/* Installs itself as the machine's body (machine_set_body). */
KernelBody *kbody_new(Machine *m, GError **err);
void kbody_free(KernelBody *kb);

/* The call the next machine_syscall runs (copied). */
void kbody_set_call(KernelBody *kb, const SyscallCall *call);
/* What the last body cost. */
const KBodyCost *kbody_last(const KernelBody *kb);
/* Totals since kbody_new. */
const KBodyCost *kbody_total(const KernelBody *kb);

#endif
