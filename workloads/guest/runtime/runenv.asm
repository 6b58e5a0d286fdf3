; runenv.asm -- the ring-0 side of `vmsplit run` (src/cpu/runenv.c): the
; minimal kernel a ring-3 guest program runs under until the kernel model
; provides real layouts. Executed by the simulated core like any guest code;
; only the I/O itself is done in C, behind two ports (the hypercall
; interface, src/cpu/runenv.h):
;
;   out RUNENV_PORT_SYSCALL, eax   system call: EAX = number, EBX, ECX, EDX
;                                  = arguments; the C hook performs it and
;                                  leaves the result in EAX (exit stops the
;                                  core).
;   out RUNENV_PORT_FAULT, eax     the guest took an exception it cannot
;                                  survive: EAX = address of the frame
;                                  (PUSHAD image, vector, error code, then
;                                  the CPU's EIP, CS, EFLAGS, ESP, SS); the
;                                  C hook reports it and stops the core.
;
; Linked by runenv.c at 0xC0100000 (kernel space, supervisor pages).
BITS 32

%define RUNENV_PORT_SYSCALL 0xE0     ; keep in step with src/cpu/runenv.h
%define RUNENV_PORT_FAULT   0xE1
%define KERNEL_CS 0x08
%define KERNEL_DS 0x10
%define USER_DS   0x23

section .text

; boot: entered from C at CPL 0 with paging on and flat segment caches.
;   EAX = address of the GDT pseudo-descriptor (limit16, base32)
;   EBX = address of the IDT pseudo-descriptor
;   ECX = TSS selector
;   EDX = address of the IRET frame to the program: EIP, CS, EFLAGS, ESP, SS
global boot
boot:
    lgdt [eax]
    lidt [ebx]
    jmp KERNEL_CS:.reload           ; reload CS from the new GDT
.reload:
    mov ax, KERNEL_DS
    mov ss, ax
    ltr cx
    mov ax, USER_DS                 ; the program's data segments; the
    mov ds, ax                      ; kernel uses them too (flat)
    mov es, ax
    xor eax, eax
    mov fs, ax                      ; null, as Linux leaves them
    mov gs, ax
    mov esp, edx
    xor ebx, ebx                    ; the program starts with clear registers
    xor ecx, ecx
    xor edx, edx
    xor esi, esi
    xor edi, edi
    xor ebp, ebp
    iretd                           ; to ring 3 (loads SS:ESP from the frame)

; int 0x80: a DPL-3 trap gate.
global int80_entry
int80_entry:
    out RUNENV_PORT_SYSCALL, eax
    iretd

; Exceptions 0..31: push a dummy error code where the CPU pushes none, then
; the vector, so that every frame has the same layout.
%macro EXC_NOERR 1
global exc_%1
exc_%1:
    push dword 0
    push dword %1
    jmp exc_common
%endmacro
%macro EXC_ERR 1
global exc_%1
exc_%1:
    push dword %1
    jmp exc_common
%endmacro

; Vectors with an error code: 8, 10-14, 17 (SDM Vol. 3A Table 6-1).
%assign v 0
%rep 32
%if v == 8 || (v >= 10 && v <= 14) || v == 17
    EXC_ERR v
%else
    EXC_NOERR v
%endif
%assign v v+1
%endrep

exc_common:
    pushad
    mov eax, esp
    out RUNENV_PORT_FAULT, eax      ; does not return: the hook stops the core
.halt:
    hlt
    jmp .halt

; The stub table runenv.c reads to fill the IDT: 32 addresses.
section .rodata
global exc_table
exc_table:
%assign v 0
%rep 32
    dd exc_ %+ v
%assign v v+1
%endrep
