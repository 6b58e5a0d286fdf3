/* Syscall bodies: see body.h. */
#include "kernel_model/body.h"

#include "mmu/pae.h"

#include <string.h>

#define LINE 64                  /* copy granularity: one reference per 64 bytes */
#define KMAP_SLOT_OFF 0x8000u    /* KM_USER_COPY's fixmap slot in the window */

struct KernelBody {
    Machine *m;
    Cpu *cpu;                        /* the machine's core and MMU counters, */
    const MmuStats *ms;              /* looked up once (host bookkeeping) */
    const CpuCosts *cost;
    uint32_t data_va[KBODY_DATA_PAGES];
    uint32_t buf_va[KBODY_BUFFER_PAGES];
    uint32_t kmap_va;
    uint64_t kmap_pte_pa;
    unsigned next_buf;
    SyscallCall call;
    bool have_call;
    KBodyCost last, total;
};

static uint64_t now(KernelBody *kb) { return cpu_cycles(kb->cpu); }
static uint64_t walk_cycles(KernelBody *kb) { return kb->ms->walk_cycles; }

static void kread(KernelBody *kb, uint32_t va)
{
    uint32_t v;
    machine_kernel_read(kb->m, va, &v, 4);
}

/* The kernel data a body touches: a different set of pages per syscall,
 * spread over the pool by its number. */
static void touch_kdata(KernelBody *kb, const SyscallProfile *p)
{
    for (uint32_t i = 0; i < p->kdata_pages; i++)
        kread(kb, kb->data_va[(p->nr * 7 + i * 13) % KBODY_DATA_PAGES] + (i % 64) * LINE);
}

/* Physical address of the user page holding va, by a software walk of the
 * current task's user page tables whose reads (pgd, pmd, pte under PAE;
 * pgd, pte under legacy paging) are modelled kernel references through the
 * direct map (follow_page). 0 if not present. */
static uint64_t soft_walk(KernelBody *kb, uint32_t va)
{
    KernelSpace *ks = machine_kspace(kb->m);
    const PageTableFormat *f = kspace_paging(ks);
    PhysMem *pm = kspace_physmem(ks);
    ProcSpace *ps = machine_task_space(kb->m, machine_current(kb->m));
    uint64_t table = pspace_user_cr3(ps) & ~0xFFFu, e = 0;
    for (unsigned level = 0; level < f->levels; level++) {
        uint64_t pa = ptformat_entry_addr(f, level, table, va);
        e = ptformat_read(f, pm, pa);
        kread(kb, kspace_phys_to_virt(ks, pa));
        if (!(e & PAE_P) || (level == f->levels - 2 && (e & PAE_PS)))
            return 0;
        table = e & f->addr_4k;
    }
    return table;
}

/* kmap_atomic(page, KM_USER_COPY): point the fixmap PTE at the page and
 * flush the slot's old translation. */
static void kmap_atomic(KernelBody *kb, uint64_t frame)
{
    KernelSpace *ks = machine_kspace(kb->m);
    uint64_t pte = frame | PAE_P | PAE_RW | PAE_A | PAE_D |
                   (machine_layout(kb->m)->kmap_global ? PAE_G : 0);
    machine_kernel_write(kb->m, kspace_phys_to_virt(ks, kb->kmap_pte_pa), &pte,
                         kspace_paging(ks)->entry_bytes);
    mmu_invlpg(machine_mmu(kb->m), kb->kmap_va);
    machine_charge(kb->m, kb->cost->invlpg, 1);
    kb->last.kmaps++;
    kb->last.invlpgs++;
}

/* Copy n bytes between the user buffer (at offset off) and a kernel page;
 * to_user says which side is written. */
static void copy(KernelBody *kb, uint32_t n, bool to_user)
{
    const SyscallCall *c = &kb->call;
    bool indirect = machine_layout(kb->m)->indirect_uaccess;
    uint32_t span = c->user_buf_bytes ? c->user_buf_bytes : PAGE_SIZE;
    uint32_t done = 0;
    while (done < n) {
        uint32_t uva = c->user_buf + done % span;
        uint32_t chunk = MIN(n - done, PAGE_SIZE - (uva & (PAGE_SIZE - 1)));
        uint32_t kva = kb->buf_va[kb->next_buf++ % KBODY_BUFFER_PAGES];
        uint32_t access_base = uva;
        if (indirect) {
            uint64_t frame = soft_walk(kb, uva);
            if (!frame)
                break;               /* -EFAULT: nothing mapped there */
            kmap_atomic(kb, frame);
            access_base = kb->kmap_va + (uva & (PAGE_SIZE - 1));
            machine_charge(kb->m, (uint64_t)KBODY_RW_VM_INSNS * kb->cost->alu, KBODY_RW_VM_INSNS);
        }
        /* Each line: read the source's first dword, write the target's
         * (the chunk stays in one page of uva, so the kernel side is the
         * line's offset in that page). */
        uint32_t u = access_base, k = kva + (uva & (PAGE_SIZE - 1));
        uint32_t lines = (chunk + LINE - 1) / LINE;
        if (to_user)
            machine_kernel_copy_lines(kb->m, k, u, lines, LINE);
        else
            machine_kernel_copy_lines(kb->m, u, k, lines, LINE);
        /* __copy_user: rep movsl, one iteration per dword. */
        machine_charge(kb->m, (uint64_t)(chunk + 3) / 4 * kb->cost->string_iter, 1);
        done += chunk;
    }
    kb->last.copied += done;
}

/* __flush_tlb() of Linux 2.6 i386 (include/asm-i386/tlbflush.h): `movl
 * %cr3, %reg; movl %reg, %cr3`, which drops every non-global TLB entry and,
 * under PAE, reloads the PDPTE registers. On a uniprocessor flush_tlb_mm()
 * and flush_tlb_range() are exactly this when the mm is the current one,
 * which is how munmap (unmap_region -> tlb_finish_mmu -> tlb_flush ->
 * flush_tlb_mm) and mprotect (change_protection -> flush_tlb_range) end.
 * The CR3 write goes through the MMU like the core's MOV CR3 (same flush,
 * same PDPTE loads) and is charged the preset's MOV CR3 plus an ALU-class
 * MOV from CR3, as the core charges them. */
static void flush_mm(KernelBody *kb)
{
    Mmu *mmu = machine_mmu(kb->m);
    MmuFault f;
    bool ok = mmu_write_cr3(mmu, mmu_cr3(mmu), &f);
    g_assert(ok);                    /* the PDPTEs loaded before still load */
    machine_charge(kb->m, (uint64_t)kb->cost->alu + kb->cost->mov_cr3, 2);
    kb->last.tlb_flushes++;
}

static uint32_t body(Machine *m, uint32_t nr, const uint32_t args[6], void *user)
{
    (void)nr, (void)args;
    KernelBody *kb = user;
    memset(&kb->last, 0, sizeof kb->last);
    if (!kb->have_call)
        return 0;                    /* a syscall nobody described: nothing to do */
    const SyscallProfile *p = kb->call.profile;
    uint64_t t0 = now(kb), w0 = walk_cycles(kb);
    machine_charge(m, (uint64_t)p->insns * kb->cost->alu, p->insns);
    touch_kdata(kb, p);
    uint64_t t1 = now(kb), w1 = walk_cycles(kb);
    if (kb->call.bytes_in)
        copy(kb, kb->call.bytes_in, false);
    if (kb->call.bytes_out)
        copy(kb, kb->call.bytes_out, true);
    uint64_t t2 = now(kb), w2 = walk_cycles(kb);
    /* After the parts above: its cycles are the CR3 part of the call's
     * breakdown (measure.c counts CR3 writes), not body or uaccess. */
    if (kb->call.flush_mm)
        flush_mm(kb);
    kb->last.walks = w2 - w0;
    kb->last.body = (t1 - t0) - (w1 - w0);
    kb->last.uaccess = (t2 - t1) - (w2 - w1);
    kb->total.body += kb->last.body;
    kb->total.uaccess += kb->last.uaccess;
    kb->total.walks += kb->last.walks;
    kb->total.kmaps += kb->last.kmaps;
    kb->total.invlpgs += kb->last.invlpgs;
    kb->total.copied += kb->last.copied;
    kb->total.tlb_flushes += kb->last.tlb_flushes;
    if (kb->call.switch_to >= 0)
        machine_request_switch(m, kb->call.switch_to);
    kb->have_call = false;
    return kb->call.ret;
}

KernelBody *kbody_new(Machine *m, GError **err)
{
    KernelBody *kb = g_new0(KernelBody, 1);
    kb->m = m;
    kb->cpu = machine_cpu(m);
    kb->ms = mmu_stats(machine_mmu(m));
    kb->cost = cpu_costs(kb->cpu);
    KernelSpace *ks = machine_kspace(m);
    for (unsigned i = 0; i < KBODY_DATA_PAGES; i++) {
        uint64_t pa = kspace_alloc_frame(ks, err);
        if (!pa)
            goto fail;
        kb->data_va[i] = kspace_phys_to_virt(ks, pa);
    }
    for (unsigned i = 0; i < KBODY_BUFFER_PAGES; i++) {
        uint64_t pa = kspace_alloc_frame(ks, err);
        if (!pa)
            goto fail;
        kb->buf_va[i] = kspace_phys_to_virt(ks, pa);
    }
    const Layout *l = machine_layout(m);
    if (l->indirect_uaccess) {
        kb->kmap_va = l->window_base + KMAP_SLOT_OFF;
        uint64_t pa = kspace_alloc_frame(ks, err);   /* placeholder until the first kmap */
        if (!pa || !kspace_map_window(ks, kb->kmap_va, pa, true, err))
            goto fail;
        kb->kmap_pte_pa = kspace_window_pte(ks, kb->kmap_va);
    }
    machine_set_body(m, body, kb);
    return kb;
fail:
    g_free(kb);
    return NULL;
}

void kbody_free(KernelBody *kb)
{
    if (!kb)
        return;
    machine_set_body(kb->m, NULL, NULL);
    g_free(kb);
}

void kbody_set_call(KernelBody *kb, const SyscallCall *call)
{
    kb->call = *call;
    kb->have_call = true;
}

const KBodyCost *kbody_last(const KernelBody *kb) { return &kb->last; }
const KBodyCost *kbody_total(const KernelBody *kb) { return &kb->total; }
