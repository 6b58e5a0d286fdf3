; Entry and exit for the 4G/4G split (Ingo Molnar, 2003; RHEL4 entry.S
; __SWITCH_KERNELSPACE / __SWITCH_USERSPACE). The code in .entry runs in the
; 16 MiB window at 0xFF000000 that both page tables map; it arrives on the
; task's "virtual stack" (a window alias of the real kernel stack pages),
; loads the kernel page table, and moves ESP to the same offset in the real
; stack. The exit does the reverse. Kernel-to-kernel entries (ESP already
; below the window) switch nothing.
BITS 32
%include "common.inc"

%define WINDOW_BASE 0xFF000000

; One CR3 write per entry from user mode.
%macro SWITCH_KERNELSPACE 0
    cmp esp, WINDOW_BASE
    jb %%done
    mov edx, [cpu_data + CD_KERNEL_CR3]
    mov ebx, esp
    sub ebx, [cpu_data + CD_VIRTUAL_STACK]
    add ebx, [cpu_data + CD_REAL_STACK]
    mov cr3, edx
    mov esp, ebx
%%done:
%endmacro

; One CR3 write per exit to user mode (only when returning to ring 3).
%macro SWITCH_USERSPACE 0
    test byte [esp + PT_CS], 3
    jz %%done
    mov ecx, [cpu_data + CD_USER_CR3]
    mov edx, esp
    sub edx, [cpu_data + CD_REAL_STACK]
    add edx, [cpu_data + CD_VIRTUAL_STACK]
    mov esp, edx
    mov cr3, ecx
%%done:
%endmacro

section .entry progbits alloc exec nowrite align=16
global int80_entry, sysenter_entry, irq_entry, ret_from_fork, cpu_data

int80_entry:
    push eax                        ; orig_eax
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp syscall_call                ; kernel text: mapped only after the switch

sysenter_entry:
    mov esp, [esp]                  ; the virtual stack top (TSS esp0 slot)
    sti
    push dword USER_DS
    push ebp
    pushfd
    push dword USER_CS
    push dword [cpu_data + CD_SYSENTER_RETURN]
    push eax
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp sysenter_call

; Interrupts switch page tables only if they came from user mode (the
; SWITCH_KERNELSPACE ESP test): "IRQ entry only causes a TLB flush if a
; userspace pagetable is loaded".
irq_entry:
    push dword -1
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp irq_call

; The page fault from user mode (the patch's error_code path has the same
; __SWITCH_KERNELSPACE as system_call): a CR3 write in, one out.
global page_fault_entry
page_fault_entry:
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp fault_call

ret_from_fork:                      ; a new task's first return to user mode
restore_all:
    SWITCH_USERSPACE
    RESTORE_REGS
    add esp, 4
    iretd

sysexit_path:
    mov ebx, [esp + PT_EBX]         ; SWITCH_KERNELSPACE used EBX as scratch
    SWITCH_USERSPACE
    mov edx, [esp + PT_EIP]
    mov ecx, [esp + PT_OLDESP]
    xor ebp, ebp
    sti
    sysexit

section .text progbits alloc exec nowrite align=16
syscall_call:
    CALL_BODY
    CONTEXT_SWITCH 0, restore_all
    jmp restore_all

sysenter_call:
    CALL_BODY
    CONTEXT_SWITCH 0, restore_all
    jmp sysexit_path

irq_call:
    CALL_IRQ
    CONTEXT_SWITCH 0, restore_all
    jmp restore_all

fault_call:
    CALL_FAULT
    jmp restore_all

section .entry_data progbits alloc noexec write align=32
cpu_data:
    times CD_SIZE db 0
