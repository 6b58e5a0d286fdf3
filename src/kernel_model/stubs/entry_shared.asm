; Entry and exit for the layouts with one page table per process (3g1g,
; 2g2g, 1g3g): no CR3 write anywhere on the syscall path. Follows vanilla
; Linux 2.6.9 arch/i386/kernel/entry.S (system_call, sysenter_entry,
; restore_all), block by block; the syscall path between SAVE_ALL and the
; exit is CALL_BODY (common.inc).
BITS 32
%include "common.inc"

; __PAGE_OFFSET of the layout (0xC0000000, 0x80000000, 0x40000000): an
; immediate in Linux, resolved here when the model loads the stubs.
extern PAGE_OFFSET

section .entry progbits alloc exec nowrite align=16
global int80_entry, sysenter_entry, irq_entry, ret_from_fork, cpu_data

; entry.S system_call: int $0x80 through a DPL-3 trap gate; the CPU
; switched to TSS.esp0 and pushed ss, esp, eflags, cs, eip.
int80_entry:
    push eax                        ; orig_eax
    SAVE_ALL
    CALL_BODY
    CONTEXT_SWITCH 1, restore_all
ret_from_fork:                      ; a new task's first return to user mode
restore_all:                        ; entry.S restore_all: RESTORE_ALL
    RESTORE_REGS
    add esp, 4                      ; orig_eax
    iretd

; entry.S common_interrupt: a device interrupt through an interrupt gate.
irq_entry:
    push dword -1                   ; orig_eax: not a system call
    SAVE_ALL
    CALL_IRQ
    CONTEXT_SWITCH 1, restore_all
    jmp restore_all

; entry.S sysenter_entry: ESP = MSR SYSENTER_ESP (the TSS's esp0 slot);
; the CPU pushed nothing. Build the same frame the int path has.
sysenter_entry:
    mov esp, [esp]                  ; movl TSS_sysenter_esp0(%esp),%esp
    sti
    push dword USER_DS
    push ebp                        ; user esp (the vsyscall page saved it in ebp)
    pushfd
    push dword USER_CS
    ; pushl $SYSENTER_RETURN: an immediate in Linux (the vsyscall page is
    ; at a fixed address); the model's return point depends on the program
    ; (vmsplit run), so it is read from the per-CPU block: one load more.
    push dword [cpu_data + CD_SYSENTER_RETURN]
    ; Load the potential sixth argument from the user stack, "careful about
    ; security": an address at or above __PAGE_OFFSET - 3 goes to
    ; syscall_fault; a fault on the load itself would too (the exception
    ; table entry; the model's user stack is always mapped).
    cmp ebp, PAGE_OFFSET - 3
    jae syscall_fault
    mov ebp, [ebp]
    push eax
    SAVE_ALL
    CALL_BODY
    CONTEXT_SWITCH 1, restore_all
    ; "if something modifies registers it must also disable sysexit"
    mov edx, [esp + PT_EIP]         ; sysexit: EIP from EDX, ESP from ECX
    mov ecx, [esp + PT_OLDESP]
    xor ebp, ebp
    sti
    sysexit

; entry.S syscall_fault: the sixth argument's address was bad; -EFAULT,
; back through resume_userspace (the iret path).
syscall_fault:
    push eax
    SAVE_ALL
    GET_THREAD_INFO ebp
    mov dword [esp + PT_EAX], -14   ; -EFAULT
    jmp restore_all

NOT_MODELLED

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
