/* The ring-0 start both protected-mode suites (test_cpu_prot.c,
 * test_cpu_pmrefs.c) give their machine once the GDT, IDT, TSS and PAE
 * tables are in memory: GDTR/IDTR, CR4.PAE, CR3, CR0 = PG|WP|ET|PE, CS/SS
 * kernel, DS/ES user data, TR, the SYSENTER MSRs, then EIP and ESP.
 * Selectors are the suites' common ones: 0x08 kernel code, 0x10 kernel
 * data, 0x23 user data, 0x28 the TSS. */
#ifndef VMSPLIT_TESTS_CPU_PROT_BOOT_H
#define VMSPLIT_TESTS_CPU_PROT_BOOT_H

#include <check.h>

#include "cpu/cpu.h"

typedef struct {
    uint32_t gdt, idt, pdpt;
    uint16_t gdt_limit;
    uint32_t sysenter_esp, sysenter_eip;
    uint32_t eip, esp;
} ProtBoot;

static inline void prot_boot(Cpu *c, const ProtBoot *b)
{
    uint8_t vec;
    uint32_t err;
    cpu_set_gdtr(c, b->gdt, b->gdt_limit);
    cpu_set_idtr(c, b->idt, 256 * 8 - 1);
    ck_assert(cpu_write_cr(c, 4, CR4_PAE, &vec, &err));
    ck_assert(cpu_write_cr(c, 3, b->pdpt, &vec, &err));
    ck_assert(cpu_write_cr(c, 0, CR0_PG | CR0_WP | CR0_ET | CR0_PE, &vec, &err));
    ck_assert(cpu_load_segment(c, SEG_CS, 0x08, &vec, &err));
    ck_assert(cpu_load_segment(c, SEG_SS, 0x10, &vec, &err));
    ck_assert(cpu_load_segment(c, SEG_DS, 0x23, &vec, &err));
    ck_assert(cpu_load_segment(c, SEG_ES, 0x23, &vec, &err));
    ck_assert(cpu_load_tr(c, 0x28, &vec, &err));
    ck_assert(cpu_write_msr(c, MSR_SYSENTER_CS, 0x08));
    ck_assert(cpu_write_msr(c, MSR_SYSENTER_ESP, b->sysenter_esp));
    ck_assert(cpu_write_msr(c, MSR_SYSENTER_EIP, b->sysenter_eip));
    cpu_set_eip(c, b->eip);
    cpu_set_reg(c, REG_ESP, b->esp);
}

#endif
