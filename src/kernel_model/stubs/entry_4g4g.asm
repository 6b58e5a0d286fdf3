; Entry and exit for the 4G/4G split as Red Hat Enterprise Linux 4 shipped
; it: 2.6.9 with CONFIG_X86_4G (X86_SWITCH_PAGETABLES, X86_HIGH_ENTRY),
; arch/i386/kernel/entry.S, macros __SWITCH_KERNELSPACE and
; __SWITCH_USERSPACE, and sysenter_entry. This is Ingo Molnar's reworked
; form (July 2003, after Kirill Korotaev's review): an ESP test instead of a
; CR3 read on entry, return markers as immediates. The first form, which
; the seed's "+3 usecs" was measured on, is entry_4g4g_2003.asm.
;
; Everything in .entry runs in the 16 MiB window at 0xFF000000 that both
; page tables map (RHEL4 puts all of entry.S in .entry.text). A task enters
; on its "virtual stack", the window alias of its kernel stack pages that
; __switch_to maps (machine.c, install_task), switches to the kernel page
; table and moves ESP to the same offset of the real stack; the exit does
; the reverse. Kernel-to-kernel entries (ESP already below the window)
; switch nothing.
BITS 32
%include "common.inc"

; swapper_pg_dir - __PAGE_OFFSET: an immediate in Linux, resolved here when
; the model loads the stubs (the physical address of the kernel's PDPT).
extern KERNEL_PGD
; The window's base (0xFF000000 in RHEL4), from the layout's row: a stack
; pointer at or above it is the virtual stack, so entry came from user mode.
extern WINDOW_BASE

; entry.S __SWITCH_KERNELSPACE (RHEL4; clobbers ebx, edx, ebp). The real
; stack comes from thread_info->real_stack, read through the virtual stack
; before the switch (GET_THREAD_INFO intermixed).
%macro SWITCH_KERNELSPACE 0
    cmp esp, WINDOW_BASE
    jb %%done
    mov edx, KERNEL_PGD
    mov ebp, esp
    mov ebx, esp
    and ebp, -THREAD_SIZE
    and ebx, THREAD_SIZE - 1
    or ebx, [ebp + TI_REAL_STACK]
    mov cr3, edx
    mov esp, ebx
%%done:
%endmacro

section .entry progbits alloc exec nowrite align=16
global int80_entry, sysenter_entry, irq_entry, ret_from_fork, cpu_data
global int80_ret_start_marker, int80_ret_end_marker
global sysexit_ret_start_marker, sysexit_ret_end_marker

; entry.S system_call: SAVE_ALL includes __SWITCH_KERNELSPACE.
int80_entry:
    push eax                        ; orig_eax
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp syscall_call                ; kernel text: mapped only after the switch

; entry.S sysenter_entry (CONFIG_X86_SWITCH_PAGETABLES): no sixth-argument
; load ("No six-argument syscall is ever used with sysenter"); the return
; address comes from thread_info, read through the virtual stack.
sysenter_entry:
    mov esp, [esp]                  ; movl TSS_sysenter_esp0(%esp),%esp: the virtual stack top
    sti
    push dword USER_DS
    push ebp
    pushfd
    push dword USER_CS
    ; pushl (TI_sysenter_return-THREAD_SIZE+4*4)(%esp)
    push dword [esp + TI_SYSENTER_RETURN - THREAD_SIZE + 4 * 4]
    push eax
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp sysenter_call

; entry.S common_interrupt: SAVE_ALL switches only if the interrupt came
; from user mode (the ESP test): "IRQ entry only causes a TLB flush if a
; userspace pagetable is loaded".
irq_entry:
    push dword -1
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp irq_call

; entry.S page_fault -> error_code: the same __SWITCH_KERNELSPACE as
; system_call (its pushes are SAVE_ALL's here): a CR3 write in, one out.
global page_fault_entry
page_fault_entry:
    SAVE_ALL
    SWITCH_KERNELSPACE
    jmp fault_call

; entry.S restore_all: RESTORE_ALL = __SWITCH_USERSPACE + __RESTORE_ALL.
ret_from_fork:                      ; a new task's first return to user mode
restore_all:
    ; Interrupted any of the user return paths (an NMI between the CR3
    ; write and the iret)? Then finish it on the virtual stack.
    mov eax, [esp + PT_EIP]
    cmp eax, int80_ret_start_marker
    jb restore_check_sysexit        ; nope - continue with sysexit check
    cmp eax, int80_ret_end_marker
    jb restore_to_user              ; yes - switch to virtual stack
restore_check_sysexit:
    cmp eax, sysexit_ret_start_marker
    jb restore_check_user           ; nope - continue with user check
    cmp eax, sysexit_ret_end_marker
    jb restore_to_user
restore_check_user:                 ; return to user space (or vm86)?
    mov ecx, [esp + PT_EFLAGS]
    mov cl, [esp + PT_CS]
    test ecx, VM_MASK | 3
    jz restore_to_kernel
restore_to_user:
    ; Switch to the virtual stack, then to the user page table.
    GET_THREAD_INFO ebp
    mov edx, [ebp + TI_VIRTUAL_STACK]
    mov ecx, [ebp + TI_USER_PGD]
    mov ebx, esp
    and ebx, THREAD_SIZE - 1
    or edx, ebx
int80_ret_start_marker:
    mov esp, edx
    mov cr3, ecx
    RESTORE_REGS                    ; __RESTORE_ALL_USER
    add esp, 4
    iretd
int80_ret_end_marker:
restore_to_kernel:                  ; __RESTORE_ALL
    RESTORE_REGS
    add esp, 4
    iretd

; entry.S sysenter_entry's exit (CONFIG_X86_SWITCH_PAGETABLES).
sysexit_path:
    GET_THREAD_INFO ebp
    mov edx, [ebp + TI_VIRTUAL_STACK]
    mov ecx, [ebp + TI_USER_PGD]
    mov ebx, esp
    and ebx, THREAD_SIZE - 1
    or edx, ebx
sysexit_ret_start_marker:
    mov esp, edx
    mov cr3, ecx
    ; "only ebx is not restored by the userspace sysenter vsyscall code,
    ; it assumes it to be callee-saved"
    mov ebx, [esp + PT_EBX]
    mov edx, [esp + PT_EIP]         ; sysexit: EIP from EDX, ESP from ECX
    mov ecx, [esp + PT_OLDESP]
    xor ebp, ebp
    sti
    sysexit
sysexit_ret_end_marker:
    nop

NOT_MODELLED

; The rest of the path runs on the kernel page table: kernel text.
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
