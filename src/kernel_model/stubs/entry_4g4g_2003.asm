; Entry and exit for the 4G/4G split in its first form, the one the July
; 2003 announcement ("+3 usecs of syscall latency") was measured on:
; Red Hat Enterprise Linux 3's 2.4.21 backport, arch/i386/kernel/entry.S
; with CONFIG_X86_HIGH_ENTRY and CONFIG_X86_SWITCH_PAGETABLES, macros
; __SWITCH (__SWITCH_TO_KERNEL_PGD) and RESTORE_ALL. Against the later form
; (entry_4g4g.asm):
;   - every entry reads CR3 and compares it with the kernel's, and always
;     recomputes the stack from real_stack(current), even from the kernel;
;   - the exit compares the saved EIP with return_path_start/_end, two
;     variables in kernel data (loads, not immediates), and finds the task
;     with GET_CURRENT (2.4 keeps task_struct at the stack base);
;   - 2.4 has no sysenter path: this layout refuses --sysenter.
; Kirill Korotaev's review pointed at exactly these ("%cr3 vs %esp check...
; Your RESTORE_ALL is too long"); Ingo Molnar's answer: "the TLB flush
; dominates the overhead anyway" (REFERENCES.md).
;
; What the model cannot reproduce of it is listed in docs/entry-paths.md.
BITS 32
%include "common.inc"

extern KERNEL_PGD                   ; swapper_pg_dir - __PAGE_OFFSET (an immediate)

; entry.S __SWITCH (clobbers edx, ebx): __SWITCH_TO_KERNEL_PGD, then "load
; the real stack - keep the offset". The CR3 read happens on every entry,
; also for interrupts taken in the kernel (then no write).
%macro SWITCH 0
    mov edx, cr3
    cmp edx, KERNEL_PGD
    jz %%on_kernel_pgd
    mov edx, KERNEL_PGD
    mov cr3, edx
%%on_kernel_pgd:
    mov ebx, -THREAD_SIZE           ; GET_CURRENT(%ebx): movl $-8192, reg; andl %esp, reg
    and ebx, esp
    mov edx, [ebx + TI_REAL_STACK]  ; real_stack(%ebx)
    mov ebx, esp
    and ebx, THREAD_SIZE - 1
    or edx, ebx
    mov esp, edx
%endmacro

section .entry progbits alloc exec nowrite align=16
global int80_entry, sysenter_entry, irq_entry, ret_from_fork, cpu_data
global return_path_start_marker, return_path_end_marker

; entry.S system_call: SAVE_ALL = __SAVE_ALL + __SWITCH.
int80_entry:
    push eax                        ; orig_eax
    SAVE_ALL
    SWITCH
    jmp syscall_call

; No sysenter in 2.4: the model refuses --sysenter for this layout before
; booting (layout.h: has_sysenter). The symbol must exist for the loader.
sysenter_entry:
    jmp not_modelled

irq_entry:
    push dword -1
    SAVE_ALL
    SWITCH
    jmp irq_call

; entry.S page_fault -> error_code: the same __SWITCH as system_call (its
; pushes are SAVE_ALL's here).
global page_fault_entry
page_fault_entry:
    SAVE_ALL
    SWITCH
    jmp fault_call

; entry.S restore_all: RESTORE_ALL.
ret_from_fork:
restore_all:
    ; interrupted the user return path?
    mov eax, [return_path_start]
    cmp [esp + PT_EIP], eax
    jb restore_check_user           ; nope - continue with user check
    mov eax, [return_path_end]
    cmp [esp + PT_EIP], eax
    jb restore_to_user              ; yes - switch to virtual stack
restore_check_user:                 ; return to userspace?
    mov ecx, [esp + PT_EFLAGS]
    mov cl, [esp + PT_CS]
    test ecx, VM_MASK | 3
    jz restore_to_kernel
restore_to_user:
    ; switch to the virtual stack, then switch userspace pagetable.
    mov esi, -THREAD_SIZE           ; GET_CURRENT(%esi)
    and esi, esp
    mov edx, [esi + TI_VIRTUAL_STACK]
    mov ecx, [esi + TI_USER_PGD]
    nop
return_path_start_marker:
    nop
    mov ebx, esp
    and ebx, THREAD_SIZE - 1
    or edx, ebx
    mov eax, esp
    mov esp, edx
    mov cr3, ecx                    ; __SWITCH_TO_USER_PGD
    RESTORE_REGS                    ; __RESTORE_ALL
    add esp, 4
    iretd
    nop
return_path_end_marker:
    nop
restore_to_kernel:                  ; 2: __RESTORE_ALL
    RESTORE_REGS
    add esp, 4
    iretd

NOT_MODELLED

section .text progbits alloc exec nowrite align=16
syscall_call:
    CALL_BODY
    CONTEXT_SWITCH 0, restore_all
    jmp restore_all

irq_call:
    CALL_IRQ
    CONTEXT_SWITCH 0, restore_all
    jmp restore_all

fault_call:
    CALL_FAULT
    jmp restore_all

; return_path_start/_end: kernel variables holding the markers' addresses
; (2.4.21 arch/i386/kernel, set at boot), read by every exit.
section .data progbits alloc noexec write align=4
return_path_start:
    dd return_path_start_marker
return_path_end:
    dd return_path_end_marker

section .entry_data progbits alloc noexec write align=32
cpu_data:
    times CD_SIZE db 0
