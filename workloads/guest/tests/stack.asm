; stack.asm -- PUSH/POP (register, immediate, memory, segment register,
; 16-bit), PUSH ESP, PUSHAD/POPAD, PUSHFD/POPFD.
;
; Rules (Intel SDM Vol. 2B "PUSH", "POP", "PUSHA/PUSHAD", "POPA/POPAD",
; "PUSHF/PUSHFD", "POPF/POPFD"):
;   - PUSH imm8 (6A ib) sign-extends the byte to 32 bits;
;   - PUSH ESP pushes ESP as it was before the push;
;   - PUSHAD pushes EAX, ECX, EDX, EBX, the original ESP, EBP, ESI, EDI, so
;     EDI ends at [ESP] and EAX at [ESP+28]; POPAD pops them back in reverse
;     order and discards the ESP slot;
;   - with a 0x66 prefix PUSH/POP move 2 bytes;
;   - PUSH Sreg with 32-bit operand size may write only the low 16 bits of
;     the slot (recent Intel parts do): only the low 16 bits are checked.
BITS 32
%include "check.inc"

section .data
var:    dd 0xCAFEF00D
var2:   dd 0
saved:  dd 0

section .text
global _start
_start:
    mov ebp, esp

; ---- PUSH / POP ----------------------------------------------------------------
    push 0x12345678             ; 68 id
    lea edx, [ebp - 4]
    CHECK esp, edx
    CHECK dword [esp], 0x12345678
    pop eax
    CHECK eax, 0x12345678
    CHECK esp, ebp

    push byte -1                ; 6A FF: sign-extended
    push byte 0x7F              ; 6A 7F
    pop ebx
    pop ecx
    CHECK ebx, 0x7F
    CHECK ecx, 0xFFFFFFFF

    push dword [var]            ; FF /6
    pop dword [var2]            ; 8F /0
    CHECK dword [var2], 0xCAFEF00D
    CHECK esp, ebp

    push esp                    ; the value before the decrement
    CHECK dword [esp], ebp
    pop eax
    CHECK eax, ebp

    push 5
    push 6
    mov eax, [esp + 4]          ; the first pushed is the deeper one
    CHECK eax, 5
    add esp, 8

    mov eax, 0xFFFFFFFF
    push word 0x1234            ; 66 68 iw: 2 bytes
    lea edx, [ebp - 2]
    CHECK esp, edx
    pop ax                      ; 66 58: AX only
    CHECK eax, 0xFFFF1234
    CHECK esp, ebp

    mov ax, ds                  ; PUSH DS / POP ES
    push ds
    pop ebx
    CHECK bx, ax                ; low 16 bits only (see above)
    push ds
    pop es
    mov bx, es
    CHECK bx, ax
    CHECK esp, ebp

; ---- PUSHAD / POPAD ------------------------------------------------------------------
    mov eax, 1
    mov ecx, 2
    mov edx, 3
    mov ebx, 4
    mov esi, 7
    mov edi, 8
    push ebp                    ; keep the frame pointer
    mov [saved], esp
    mov ebp, 6
    pushad
    CHECK dword [esp + 0], 8    ; EDI
    CHECK dword [esp + 4], 7    ; ESI
    CHECK dword [esp + 8], 6    ; EBP
    mov eax, [saved]
    CHECK dword [esp + 12], eax ; ESP before PUSHAD
    CHECK dword [esp + 16], 4   ; EBX
    CHECK dword [esp + 20], 3   ; EDX
    CHECK dword [esp + 24], 2   ; ECX
    CHECK dword [esp + 28], 1   ; original EAX (eax was overwritten after the push)

    mov dword [esp + 0], 0x108      ; new EDI
    mov dword [esp + 4], 0x107      ; ESI
    mov dword [esp + 8], 0x106      ; EBP
    mov dword [esp + 12], 0xDEADBEEF ; ESP slot: ignored by POPAD
    mov dword [esp + 16], 0x104     ; EBX
    mov dword [esp + 20], 0x103     ; EDX
    mov dword [esp + 24], 0x102     ; ECX
    mov dword [esp + 28], 0x101     ; EAX
    popad
    CHECK esp, [saved]
    CHECK eax, 0x101
    CHECK ecx, 0x102
    CHECK edx, 0x103
    CHECK ebx, 0x104
    CHECK ebp, 0x106
    CHECK esi, 0x107
    CHECK edi, 0x108
    pop ebp

; ---- PUSHFD / POPFD ----------------------------------------------------------------
    clc
    pushfd
    or dword [esp], F_CF | F_ZF ; set CF and ZF in the saved image
    popfd
    CHECK_FLAGS F_CF | F_ZF, F_CF | F_ZF
    stc
    pushfd
    and dword [esp], ~F_CF      ; clear CF in the image
    popfd
    CHECK_FLAGS F_CF, 0
    pushfd
    pop eax
    CHECK_BEGIN "pushfd: reserved bit 1 set"
    test eax, 2                 ; EFLAGS bit 1 always reads 1
    jnz .bit1_ok
    CHECK_FAILED
.bit1_ok:
    CHECK esp, ebp

    PASS

CHECK_FAIL_ROUTINE
