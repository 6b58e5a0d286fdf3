; Entry and exit for KPTI on 32-bit PAE (Linux 4.19 arch/x86/entry/entry_32.S:
; SWITCH_TO_KERNEL_STACK, SWITCH_TO_KERNEL_CR3, SWITCH_TO_USER_CR3,
; SWITCH_TO_ENTRY_STACK). The CPU enters on the small entry stack in the
; cpu_entry_area (mapped in the user page table); the stub loads the kernel
; page table and copies the hardware frame to the task stack; the exit
; copies the frame back to the entry stack, loads the user page table and
; returns. Linux finds the other page table by flipping a bit of CR3 (the
; kernel and user PGDs are adjacent); the model's per-CPU block holds both
; values, one load instead of one OR.
BITS 32
%include "common.inc"

%define HW_FRAME 20                 ; eip, cs, eflags, esp, ss

extern PAGE_OFFSET                  ; __PAGE_OFFSET, resolved when the model loads the stubs

section .entry progbits alloc exec nowrite align=16
global int80_entry, sysenter_entry, irq_entry, ret_from_fork, cpu_data

; SWITCH_TO_KERNEL_CR3 + SWITCH_TO_KERNEL_STACK (scratch: the user's
; edi/esi/ecx, saved on the entry stack and restored from it after the copy).
; %1: the bytes the CPU pushed (HW_FRAME, or HW_FRAME + 4 with an error code).
%macro ENTER_KERNEL 1
    push edi
    push esi
    push ecx
    mov edi, [cpu_data + CD_KERNEL_CR3]
    mov cr3, edi
    lea esi, [esp + 12]
    mov edi, [cpu_data + CD_STACK_TOP]
    sub edi, %1
    mov ecx, (%1) / 4
    rep movsd
    mov esi, esp
    mov esp, [cpu_data + CD_STACK_TOP]
    sub esp, %1
    mov ecx, [esi]
    mov edi, [esi + 8]
    mov esi, [esi + 4]
%endmacro

int80_entry:
    ENTER_KERNEL HW_FRAME
    jmp syscall_call

; Interrupts arrive from user mode in this model (the replay raises them
; only between user instructions), so they always switch.
irq_entry:
    ENTER_KERNEL HW_FRAME
    jmp irq_call

; The page fault from user mode (4.19 entry_32.S page_fault -> common_exception:
; the same SWITCH_TO_KERNEL_STACK/CR3, the error code copied with the frame,
; where orig_eax goes).
global page_fault_entry
page_fault_entry:
    ENTER_KERNEL HW_FRAME + 4
    jmp fault_call

sysenter_entry:
    mov esp, [esp]                  ; the entry stack top
    push edi
    mov edi, [cpu_data + CD_KERNEL_CR3]
    mov cr3, edi
    pop edi
    mov esp, [cpu_data + CD_STACK_TOP]
    push dword USER_DS
    push ebp
    pushfd
    push dword USER_CS
    push dword [cpu_data + CD_SYSENTER_RETURN]
    jmp sysenter_call

; Exit: copy the hardware frame to the entry stack, switch CR3, return.
ret_from_fork:                      ; a new task's first return to user mode
restore_all:
    RESTORE_REGS
    add esp, 4                      ; orig_eax
    push edi
    push esi
    push ecx
    lea esi, [esp + 12]
    mov edi, [cpu_data + CD_ENTRY_STACK]
    sub edi, HW_FRAME
    mov ecx, HW_FRAME / 4
    rep movsd
    mov esi, esp
    mov esp, [cpu_data + CD_ENTRY_STACK]
    sub esp, HW_FRAME + 12
    mov ecx, [esi]
    mov [esp], ecx
    mov ecx, [esi + 4]
    mov [esp + 4], ecx
    mov ecx, [esi + 8]
    mov [esp + 8], ecx
    mov edi, [cpu_data + CD_USER_CR3]   ; SWITCH_TO_USER_CR3
    mov cr3, edi
    pop ecx
    pop esi
    pop edi
    iretd

sysexit_path:
    ; EBX, ESI, EDI were never clobbered (the body preserves them, as C
    ; callee-saved registers); EDX/ECX are SYSEXIT's operands.
    mov edx, [esp + PT_EIP]
    mov ecx, [esp + PT_OLDESP]
    mov esp, [cpu_data + CD_ENTRY_STACK]
    push edi
    mov edi, [cpu_data + CD_USER_CR3]   ; SWITCH_TO_USER_CR3
    mov cr3, edi
    pop edi
    xor ebp, ebp
    sti
    sysexit

section .text progbits alloc exec nowrite align=16
syscall_call:
    push eax                        ; orig_eax
    SAVE_ALL
    CALL_BODY
    CONTEXT_SWITCH 1, restore_all
    jmp restore_all

sysenter_call:
    push eax
    SAVE_ALL
    ; do_fast_syscall_32 (4.19 arch/x86/entry/common.c): "Fetch EBP from
    ; where the vDSO stashed it", get_user(regs->bp, regs->sp): the user
    ; limit check, the load from the user stack, the store into pt_regs.
    ; A bad pointer returns -EFAULT there; the model's user stack is always
    ; below the limit, so that branch is never taken (not_modelled).
    mov edx, [esp + PT_OLDESP]
    cmp edx, PAGE_OFFSET - 3
    jae not_modelled
    mov edx, [edx]
    mov [esp + PT_EBP], edx
    CALL_BODY
    CONTEXT_SWITCH 1, restore_all
    jmp sysexit_path

irq_call:
    push dword -1
    SAVE_ALL
    CALL_IRQ
    CONTEXT_SWITCH 1, restore_all
    jmp restore_all

NOT_MODELLED
fault_call:
    SAVE_ALL
    CALL_FAULT
    jmp restore_all

section .entry_data progbits alloc noexec write align=32
cpu_data:
    times CD_SIZE db 0
