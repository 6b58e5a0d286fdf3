; Entry and exit for the layouts with one page table per process (3g1g,
; 2g2g, 1g3g): no CR3 write anywhere on the syscall path. Follows Linux
; 2.6.12 arch/i386/kernel/entry.S (system_call, sysenter_entry).
BITS 32
%include "common.inc"

section .entry progbits alloc exec nowrite align=16
global int80_entry, sysenter_entry, irq_entry, ret_from_fork, cpu_data

; int $0x80 through a DPL-3 trap gate: the CPU switched to TSS.esp0 and
; pushed ss, esp, eflags, cs, eip.
int80_entry:
    push eax                        ; orig_eax
    SAVE_ALL
    CALL_BODY
    CONTEXT_SWITCH 1, restore_all
ret_from_fork:                      ; a new task's first return to user mode
restore_all:
    RESTORE_REGS
    add esp, 4                      ; orig_eax
    iretd

; A device interrupt through an interrupt gate (common_interrupt).
irq_entry:
    push dword -1                   ; orig_eax: not a system call
    SAVE_ALL
    CALL_IRQ
    CONTEXT_SWITCH 1, restore_all
    jmp restore_all

; SYSENTER: ESP = MSR SYSENTER_ESP (the TSS's esp0 slot); the CPU pushed
; nothing. Build the same frame the int path has (2.6 sysenter_entry).
sysenter_entry:
    mov esp, [esp]                  ; TSS_sysenter_esp0: the real stack top
    sti
    push dword USER_DS
    push ebp                        ; user esp (the vsyscall page saved it in ebp)
    pushfd
    push dword USER_CS
    push dword [cpu_data + CD_SYSENTER_RETURN]
    push eax
    SAVE_ALL
    CALL_BODY
    CONTEXT_SWITCH 1, restore_all
    mov edx, [esp + PT_EIP]         ; sysexit: EIP from EDX, ESP from ECX
    mov ecx, [esp + PT_OLDESP]
    xor ebp, ebp
    sti
    sysexit

section .entry_data progbits alloc noexec write align=32
cpu_data:
    times CD_SIZE db 0

; The page fault (vector 14, an interrupt gate: 2.6 set_intr_gate(14,
; &page_fault)), in a section of its own after cpu_data so that nothing
; above moves: the CPU switched to TSS.esp0 and pushed ss, esp, eflags, cs,
; eip and the error code; no CR3 write on this layout.
section .text progbits alloc exec nowrite align=16
global page_fault_entry
page_fault_entry:
    SAVE_ALL
    CALL_FAULT
    jmp restore_all
