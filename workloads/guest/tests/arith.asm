; arith.asm -- ADD/ADC/SUB/SBB/INC/DEC/NEG/CMP/AND/OR/XOR/TEST/NOT and the
; flags they leave, at the carry and overflow edges; SETcc after CMP.
;
; Flag rules used below (Intel SDM Vol. 1 §3.4.3, Vol. 2 per instruction):
;   CF  unsigned carry out of (ADD) or borrow into (SUB) the top bit
;   OF  signed overflow: operands of equal sign (ADD) / different sign (SUB)
;       giving a result of the other sign
;   SF  bit 31 of the result; ZF result == 0
;   PF  even number of 1s in the LOW BYTE of the result
;   AF  carry/borrow across bit 3, i.e. bit 4 of (a ^ b ^ result)
; Expected EFLAGS are written as sums of CF=0x001 PF=0x004 AF=0x010
; ZF=0x040 SF=0x080 OF=0x800.
BITS 32
%include "check.inc"

section .data
var:    dd 0

section .text
global _start
_start:
; ---- ADD ----------------------------------------------------------------
    mov eax, 0xFFFFFFFF
    add eax, 1                  ; 0xFFFFFFFF + 1 = 0x1_00000000 -> 0, carry out
    CHECK_FLAGS F_ARITH, 0x055  ; CF; PF (0x00: zero 1s); AF (0xF+0x1); ZF. -1+1 no OF
    CHECK eax, 0

    mov eax, 0x7FFFFFFF
    add eax, 1                  ; 0x80000000: pos + pos = neg
    CHECK_FLAGS F_ARITH, 0x894  ; OF, SF, AF (0xF+0x1), PF (low byte 0x00)
    CHECK eax, 0x80000000

    mov eax, 0x80000000
    add eax, 0x80000000         ; 0x1_00000000 -> 0: neg + neg = 0 (not neg)
    CHECK_FLAGS F_ARITH, 0x845  ; CF, OF, ZF, PF; AF: 0+0 in bit 3..0 -> 0
    CHECK eax, 0

    mov eax, 0x12345678
    add eax, 0x11111111         ; = 0x23456789
    CHECK_FLAGS F_ARITH, 0x000  ; low byte 0x89 = 10001001b: three 1s -> PF=0;
                                ; 0x8 + 0x1 = 0x9 no AF
    CHECK eax, 0x23456789

; ---- ADC ----------------------------------------------------------------
    stc
    mov eax, 0xFFFFFFFF
    adc eax, 0                  ; 0xFFFFFFFF + 0 + 1 = 0x1_00000000 -> 0
    CHECK_FLAGS F_ARITH, 0x055  ; CF, PF, AF (0xF+0+1), ZF
    CHECK eax, 0

    stc
    mov eax, 0x7FFFFFFF
    adc eax, 0                  ; 0x7FFFFFFF + 0 + 1 = 0x80000000
    CHECK_FLAGS F_ARITH, 0x894  ; OF, SF, AF, PF
    CHECK eax, 0x80000000

    stc
    mov eax, 0xFFFFFFFF
    adc eax, 0xFFFFFFFF         ; 0xFFFFFFFF + 0xFFFFFFFF + 1 = 0x1_FFFFFFFF
    CHECK_FLAGS F_ARITH, 0x095  ; CF; SF; PF (0xFF: eight 1s); AF (0xF+0xF+1=0x1F);
                                ; -1 + -1 + 1 = -1: no OF
    CHECK eax, 0xFFFFFFFF

    clc
    mov eax, 1
    adc eax, 2                  ; = 3 (no carry in)
    CHECK_FLAGS F_ARITH, 0x004  ; 0x03: two 1s -> PF
    CHECK eax, 3

    ; 64-bit add: 0x00000001_FFFFFFFF + 0x00000002_00000001 = 0x00000004_00000000
    mov eax, 0xFFFFFFFF
    mov edx, 1
    add eax, 1                  ; low: 0, CF=1
    adc edx, 2                  ; high: 1 + 2 + 1 = 4
    CHECK eax, 0
    CHECK edx, 4

    ; ADC to memory: 0xFFFFFFFE + 1 + CF(1) = 0x1_00000000 -> 0
    mov dword [var], 0xFFFFFFFE
    stc
    adc dword [var], 1
    CHECK_FLAGS F_ARITH, 0x055  ; CF, PF, AF (0xE+1+1 = 0x10), ZF; -2+1+1 = 0 no OF
    CHECK dword [var], 0

; ---- SUB / SBB / CMP ----------------------------------------------------
    mov eax, 0
    sub eax, 1                  ; 0 - 1 = 0xFFFFFFFF, borrow
    CHECK_FLAGS F_ARITH, 0x095  ; CF, SF, PF (0xFF), AF (0x0-0x1 borrows); 0-1 no OF
    CHECK eax, 0xFFFFFFFF

    mov eax, 0x80000000
    sub eax, 1                  ; = 0x7FFFFFFF: neg - pos = pos
    CHECK_FLAGS F_ARITH, 0x814  ; OF, AF, PF (0xFF)
    CHECK eax, 0x7FFFFFFF

    mov eax, 5
    sub eax, 5                  ; = 0
    CHECK_FLAGS F_ARITH, 0x044  ; ZF, PF
    CHECK eax, 0

    mov eax, 0x7FFFFFFF
    sub eax, 0xFFFFFFFF         ; 0x7FFFFFFF - (-1) = 0x80000000 (mod 2^32)
    CHECK_FLAGS F_ARITH, 0x885  ; CF (0x7FFFFFFF < 0xFFFFFFFF unsigned); OF (pos - neg
                                ; = neg); SF; PF (0x00); AF: 0x7FFFFFFF^0xFFFFFFFF^
                                ; 0x80000000 = 0 -> bit 4 clear
    CHECK eax, 0x80000000

    stc
    mov eax, 0
    sbb eax, 0                  ; 0 - 0 - 1 = 0xFFFFFFFF
    CHECK_FLAGS F_ARITH, 0x095  ; CF, SF, PF, AF
    CHECK eax, 0xFFFFFFFF

    stc
    mov eax, 0x80000000
    sbb eax, 0                  ; 0x80000000 - 0 - 1 = 0x7FFFFFFF
    CHECK_FLAGS F_ARITH, 0x814  ; OF, AF, PF
    CHECK eax, 0x7FFFFFFF

    stc
    mov eax, 0xFFFFFFFF
    sbb eax, 0xFFFFFFFF         ; -1 - (-1) - 1 = -1: borrow although a == b
    CHECK_FLAGS F_ARITH, 0x095  ; CF (b + CF > a), SF, PF, AF (0xF-0xF-1); no OF
    CHECK eax, 0xFFFFFFFF

    ; 64-bit sub: 0x00000005_00000000 - 0x00000001_00000001 = 0x00000003_FFFFFFFF
    mov eax, 0
    mov edx, 5
    sub eax, 1                  ; low: 0xFFFFFFFF, CF=1
    sbb edx, 1                  ; high: 5 - 1 - 1 = 3
    CHECK eax, 0xFFFFFFFF
    CHECK edx, 3

    mov eax, 3
    cmp eax, 5                  ; 3 - 5 = -2 = 0xFFFFFFFE
    CHECK_FLAGS F_ARITH, 0x091  ; CF, SF, AF (0x3-0x5 borrows); PF: 0xFE has seven 1s -> 0
    CHECK eax, 3                ; CMP writes nothing

    mov eax, 0xFFFFFFFF         ; SETcc after cmp -1, 1: 0xFFFFFFFE, CF=0 SF=1 OF=0 ZF=0
    cmp eax, 1
    setl al                     ; signed -1 < 1: SF != OF -> 1
    seta bl                     ; unsigned 0xFFFFFFFF > 1: CF=0 and ZF=0 -> 1
    setb cl                     ; CF=0 -> 0
    setg dl                     ; ZF=0 and SF == OF? no -> 0
    CHECK al, 1
    CHECK bl, 1
    CHECK cl, 0
    CHECK dl, 0

; ---- INC / DEC / NEG (INC/DEC leave CF alone) -----------------------------
    stc
    mov eax, 0xFFFFFFFF
    inc eax                     ; 0, CF stays 1
    CHECK_FLAGS F_ARITH, 0x055  ; CF (kept), PF, AF, ZF
    CHECK eax, 0

    clc
    mov eax, 0x7FFFFFFF
    inc eax                     ; 0x80000000
    CHECK_FLAGS F_ARITH, 0x894  ; OF, SF, AF, PF; CF stays 0

    stc
    mov eax, 0x80000000
    dec eax                     ; 0x7FFFFFFF
    CHECK_FLAGS F_ARITH, 0x815  ; OF, AF (0x0-1), PF (0xFF), CF (kept)

    clc
    mov eax, 1
    dec eax                     ; 0
    CHECK_FLAGS F_ARITH, 0x044  ; ZF, PF

    mov eax, 0
    neg eax                     ; 0: CF = (operand != 0) = 0
    CHECK_FLAGS F_ARITH, 0x044  ; ZF, PF
    CHECK eax, 0

    mov eax, 0x80000000
    neg eax                     ; 0 - 0x80000000 = 0x80000000
    CHECK_FLAGS F_ARITH, 0x885  ; CF, OF, SF, PF (0x00); AF: 0x0-0x0 -> 0
    CHECK eax, 0x80000000

    mov eax, 1
    neg eax                     ; 0xFFFFFFFF
    CHECK_FLAGS F_ARITH, 0x095  ; CF, SF, PF, AF
    CHECK eax, 0xFFFFFFFF

; ---- logic (AF undefined: masked) -----------------------------------------
    mov eax, 0xF0F0F0F0
    and eax, 0x0FF00FF0         ; = 0x00F000F0
    CHECK_FLAGS F_LOGIC, 0x004  ; CF=OF=0; low byte 0xF0: four 1s -> PF
    CHECK eax, 0x00F000F0

    mov eax, 0x80000000
    or eax, 1                   ; = 0x80000001
    CHECK_FLAGS F_LOGIC, 0x080  ; SF; 0x01: one 1 -> PF=0
    CHECK eax, 0x80000001

    stc
    xor eax, eax                ; 0, CF cleared
    CHECK_FLAGS F_LOGIC, 0x044  ; ZF, PF

    mov eax, 0x180
    test eax, 0x100             ; 0x100: low byte 0x00 -> PF
    CHECK_FLAGS F_LOGIC, 0x004
    CHECK eax, 0x180            ; TEST writes nothing

    mov eax, 0x0F0F0F0F
    stc
    not eax                     ; NOT changes no flag
    CHECK_FLAGS F_CF, F_CF
    CHECK eax, 0xF0F0F0F0

; ---- 8- and 16-bit operands (the rest of the register is kept) ------------
    mov eax, 0x123456FF
    add al, 1                   ; 0xFF + 1 = 0x100 -> al = 0
    CHECK_FLAGS F_ARITH, 0x055  ; CF, PF, AF, ZF (of the byte)
    CHECK eax, 0x12345600

    mov eax, 0xABCD7FFF
    add ax, 1                   ; 0x7FFF + 1 = 0x8000: word overflow
    CHECK_FLAGS F_ARITH, 0x894  ; OF, SF (bit 15), AF, PF (low byte 0x00)
    CHECK eax, 0xABCD8000

    mov ebx, 0x00000080
    sub bl, 1                   ; 0x80 - 1 = 0x7F: byte overflow
    CHECK_FLAGS F_ARITH, 0x810  ; OF, AF; 0x7F: seven 1s -> PF=0
    CHECK ebx, 0x7F

    mov ecx, 0x0000FF00
    add ch, 1                   ; ch: 0xFF + 1 -> 0, carry
    CHECK_FLAGS F_ARITH, 0x055
    CHECK ecx, 0

    PASS

CHECK_FAIL_ROUTINE
