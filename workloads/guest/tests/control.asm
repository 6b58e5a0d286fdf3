; control.asm -- CALL/RET (near, indirect, far), RET imm16, JMP (direct,
; indirect), all sixteen Jcc conditions (short and near forms), LOOP, JECXZ,
; and a recursive function.
;
; Jcc conditions (Intel SDM Vol. 2A "Jcc"):
;   o: OF=1   b: CF=1   e: ZF=1   be: CF=1 or ZF=1   s: SF=1   p: PF=1
;   l: SF!=OF   le: ZF=1 or SF!=OF; each n... form is the negation,
;   a = nbe, ae = nb, g = nle, ge = nl.
BITS 32
%include "check.inc"

section .data
fptr:   dd set42                ; near pointer for CALL/JMP [mem]
jptr:   dd jmem_target
farptr: dd far_target           ; m16:32 for CALL FAR [mem]: offset, then selector
        dw 0                    ; filled with CS at run time
saved_esp: dd 0

section .text
set42:
    mov eax, 42
    ret

sum_args:                       ; sum of two stack arguments, callee pops them
    mov eax, [esp + 4]
    add eax, [esp + 8]
    ret 8

far_target:                     ; reached by CALL FAR, returns with RETF
    mov eax, 0xFA
    retf

factorial:                      ; eax = n! for n = [esp + 4], recursive
    mov ecx, [esp + 4]
    cmp ecx, 1
    jbe .one
    dec ecx
    push ecx
    call factorial              ; eax = (n-1)!
    add esp, 4
    imul eax, [esp + 4]         ; * n
    ret
.one:
    mov eax, 1
    ret

global _start
_start:
    mov [saved_esp], esp

; ---- CALL / RET ----------------------------------------------------------------
    xor eax, eax
    call set42
    CHECK eax, 42
    CHECK esp, [saved_esp]      ; balanced

    push 1
    push 2
    call sum_args               ; 2 + 1, and RET 8 pops both arguments
    CHECK eax, 3
    CHECK esp, [saved_esp]

    xor eax, eax
    mov ebx, set42
    call ebx                    ; CALL r32
    CHECK eax, 42
    xor eax, eax
    call [fptr]                 ; CALL m32
    CHECK eax, 42

    mov [farptr + 4], cs        ; CALL FAR m16:32 to the same code segment
    xor eax, eax
    call far [farptr]
    CHECK eax, 0xFA
    CHECK esp, [saved_esp]      ; RETF popped EIP and CS

    push 10
    call factorial              ; 10! = 3628800 = 0x375F00
    add esp, 4
    CHECK eax, 3628800

; ---- JMP -------------------------------------------------------------------------
    mov ebx, jreg_target
    jmp ebx                     ; JMP r32
    CHECK_BEGIN "jmp ebx"
    CHECK_FAILED
jreg_target:
    jmp [jptr]                  ; JMP m32
    CHECK_BEGIN "jmp [jptr]"
    CHECK_FAILED
jmem_target:
    jmp near jnear_target       ; E9 rel32 even though it is close
    CHECK_BEGIN "jmp near"
    CHECK_FAILED
jnear_target:

; ---- Jcc after CMP 1, 2: 1 - 2 = 0xFFFFFFFF: CF=1 ZF=0 SF=1 OF=0 PF=1 (0xFF) ------------
    mov eax, 1
    cmp eax, 2
    CHECK_JCC o, 0
    CHECK_JCC no, 1
    CHECK_JCC b, 1
    CHECK_JCC ae, 0
    CHECK_JCC e, 0
    CHECK_JCC ne, 1
    CHECK_JCC be, 1
    CHECK_JCC a, 0
    CHECK_JCC s, 1
    CHECK_JCC ns, 0
    CHECK_JCC p, 1
    CHECK_JCC np, 0
    CHECK_JCC l, 1              ; SF(1) != OF(0): 1 < 2 signed
    CHECK_JCC ge, 0
    CHECK_JCC le, 1
    CHECK_JCC g, 0

; ---- after CMP 0x80000000, 1: = 0x7FFFFFFF: CF=0 ZF=0 SF=0 OF=1 PF=1 --------------
    mov eax, 0x80000000
    cmp eax, 1
    CHECK_JCC o, 1
    CHECK_JCC b, 0              ; 0x80000000 >= 1 unsigned
    CHECK_JCC a, 1
    CHECK_JCC s, 0
    CHECK_JCC l, 1              ; SF(0) != OF(1): -2^31 < 1 signed although SF=0
    CHECK_JCC ge, 0
    CHECK_JCC g, 0
    CHECK_JCC le, 1

; ---- after CMP 5, 5: ZF=1 CF=0 SF=0 OF=0 PF=1 ---------------------------------------
    mov eax, 5
    cmp eax, 5
    CHECK_JCC e, 1
    CHECK_JCC be, 1
    CHECK_JCC ae, 1
    CHECK_JCC le, 1
    CHECK_JCC ge, 1
    CHECK_JCC a, 0
    CHECK_JCC g, 0
    CHECK_JCC b, 0
    CHECK_JCC l, 0

; ---- after CMP 7, 3 = 4: all of CF ZF SF OF clear; 0x04 has one 1: PF=0 -----------
    mov eax, 7
    cmp eax, 3
    CHECK_JCC np, 1
    CHECK_JCC p, 0
    CHECK_JCC g, 1
    CHECK_JCC a, 1
    jne near .near_ok           ; 0F 85 rel32
    CHECK_BEGIN "jne near"
    CHECK_FAILED
.near_ok:

; ---- LOOP / JECXZ ----------------------------------------------------------------
    mov ecx, 10
    xor eax, eax
.sum:
    add eax, ecx                ; 10 + 9 + ... + 1 = 55
    loop .sum
    CHECK eax, 55
    CHECK ecx, 0

    mov eax, 5                  ; LOOP leaves the flags alone: ZF from the SUB stays
    sub eax, 5
    mov ecx, 2
.spin:
    loop .spin
    CHECK_FLAGS F_ZF, F_ZF

    xor ecx, ecx
    jecxz .ecx_zero
    CHECK_BEGIN "jecxz with ecx = 0"
    CHECK_FAILED
.ecx_zero:
    mov ecx, 0x10000
    jecxz .ecx_bad              ; ECX != 0 (even with CX = 0): not taken
    jmp .ecx_done
.ecx_bad:
    CHECK_BEGIN "jecxz with ecx = 0x10000"
    CHECK_FAILED
.ecx_done:

    PASS

CHECK_FAIL_ROUTINE
