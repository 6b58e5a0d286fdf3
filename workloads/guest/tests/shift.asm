; shift.asm -- SHL/SHR/SAR/ROL/ROR/RCL/RCR with counts 0, 1, 31, 32 and 33.
;
; Rules (Intel SDM Vol. 2B "SAL/SAR/SHL/SHR", Vol. 2B "RCL/RCR/ROL/ROR"):
;   - the count is masked to 5 bits: 32 -> 0, 33 -> 1;
;   - a masked count of 0 changes neither the operand nor any flag;
;   - CF = the last bit shifted (rotated) out;
;   - OF is defined only for a count of 1: SHL: MSB(result) ^ CF,
;     SHR: MSB(original), SAR: 0, ROL: MSB(result) ^ CF,
;     ROR: bit 31 ^ bit 30 of the result, RCL: MSB(result) ^ CF,
;     RCR: MSB(original) ^ CF(before);
;   - shifts set SF/ZF/PF from the result (AF undefined: masked); rotates
;     touch only CF and OF;
;   - 8-bit ROL/ROR rotate by (count & 31) mod 8, but CF is still written
;     when (count & 31) != 0.
; Masks: F_LOGIC = CF|PF|ZF|SF|OF (count 1), F_SZPC = CF|PF|ZF|SF (count > 1),
; F_CO = CF|OF (rotate by 1). Values: CF=0x001 PF=0x004 ZF=0x040 SF=0x080 OF=0x800.
BITS 32
%include "check.inc"

section .text
global _start
_start:
; ---- SHL ------------------------------------------------------------------
    mov eax, 0x80000001
    shl eax, 1                  ; 0x00000002, bit 31 (1) out
    CHECK_FLAGS F_LOGIC, 0x801  ; CF=1, OF = MSB(0) ^ CF(1) = 1; 0x02: one 1 -> PF=0
    CHECK eax, 2

    mov eax, 0x40000000
    shl eax, 1                  ; 0x80000000, bit 31 (0) out
    CHECK_FLAGS F_LOGIC, 0x884  ; OF = 1 ^ 0; SF; PF (0x00)
    CHECK eax, 0x80000000

    mov eax, 1
    mov cl, 31
    shl eax, cl                 ; 0x80000000; last bit out = bit 32-31 = bit 1 = 0
    CHECK_FLAGS F_SZPC, 0x084   ; SF, PF
    CHECK eax, 0x80000000

    mov eax, 3
    mov cl, 31
    shl eax, cl                 ; 0x80000000; last bit out = bit 1 of 3 = 1
    CHECK_FLAGS F_SZPC, 0x085   ; CF, SF, PF
    CHECK eax, 0x80000000

    mov eax, 0x12345678         ; count 32 -> 0: nothing changes
    mov cl, 32
    mov edx, 5
    sub edx, 5                  ; known flags: ZF, PF (0x044)
    shl eax, cl
    CHECK_FLAGS F_ARITH, 0x044
    CHECK eax, 0x12345678

    mov eax, 0x12345678         ; immediate count 0: nothing changes
    mov edx, 0
    cmp edx, 1                  ; known flags: 0 - 1 -> CF, SF, PF, AF (0x095)
    shl eax, 0
    CHECK_FLAGS F_ARITH, 0x095
    CHECK eax, 0x12345678

    mov eax, 0x80000001
    mov cl, 33                  ; 33 & 31 = 1: as shl eax, 1
    shl eax, cl
    CHECK_FLAGS F_LOGIC, 0x801
    CHECK eax, 2

    mov eax, 0xDEAD0001
    mov cl, 16
    shl ax, cl                  ; 16-bit by 16: ax = 0 (CF undefined: count >= size)
    CHECK_FLAGS F_ZF|F_SF|F_PF, 0x044
    CHECK eax, 0xDEAD0000

; ---- SHR ------------------------------------------------------------------
    mov eax, 0x80000001
    shr eax, 1                  ; 0x40000000, bit 0 (1) out
    CHECK_FLAGS F_LOGIC, 0x805  ; CF, OF = MSB(original) = 1, PF (0x00)
    CHECK eax, 0x40000000

    mov eax, 0x80000000
    mov cl, 31
    shr eax, cl                 ; 1; last bit out = bit 30 = 0
    CHECK_FLAGS F_SZPC, 0x000   ; 0x01: one 1 -> PF=0
    CHECK eax, 1

    mov eax, 0xC0000000
    mov cl, 31
    shr eax, cl                 ; 1; last bit out = bit 30 = 1
    CHECK_FLAGS F_SZPC, 0x001
    CHECK eax, 1

    mov eax, 0xFFFFFFFF
    mov cl, 32
    shr eax, cl                 ; count 0
    CHECK eax, 0xFFFFFFFF

; ---- SAR ------------------------------------------------------------------
    mov eax, 0x80000001
    sar eax, 1                  ; 0xC0000000, bit 0 (1) out
    CHECK_FLAGS F_LOGIC, 0x085  ; CF, OF = 0, SF, PF (0x00)
    CHECK eax, 0xC0000000

    mov eax, 0x80000000
    mov cl, 31
    sar eax, cl                 ; 0xFFFFFFFF; last bit out = bit 30 = 0
    CHECK_FLAGS F_SZPC, 0x084   ; SF, PF (0xFF)
    CHECK eax, 0xFFFFFFFF

    mov eax, 0x7FFFFFFF
    mov cl, 31
    sar eax, cl                 ; 0; last bit out = bit 30 = 1
    CHECK_FLAGS F_SZPC, 0x045   ; CF, ZF, PF
    CHECK eax, 0

    mov eax, 0x80000000
    mov cl, 33                  ; -> 1
    sar eax, cl                 ; 0xC0000000, bit 0 (0) out
    CHECK_FLAGS F_LOGIC, 0x084  ; SF, PF
    CHECK eax, 0xC0000000

; ---- ROL / ROR ------------------------------------------------------------
    mov eax, 0x80000001
    rol eax, 1                  ; 0x00000003; CF = new bit 0 = 1
    CHECK_FLAGS F_CO, 0x801     ; OF = MSB(0) ^ CF(1) = 1
    CHECK eax, 3

    mov eax, 0x80000001
    ror eax, 1                  ; 0xC0000000; CF = new bit 31 = 1
    CHECK_FLAGS F_CO, 0x001     ; OF = bit31 ^ bit30 = 1 ^ 1 = 0
    CHECK eax, 0xC0000000

    mov eax, 0x12345678
    mov cl, 31
    rol eax, cl                 ; = ror by 1: 0x12345678 >> 1 = 0x091A2B3C, bit 0 (0)
    CHECK_FLAGS F_CF, 0         ;   goes to bit 31; CF = new bit 0 = 0
    CHECK eax, 0x091A2B3C

    mov eax, 0x80000001
    mov cl, 31
    ror eax, cl                 ; = rol by 1: 0x00000003; CF = new bit 31 = 0
    CHECK_FLAGS F_CF, 0
    CHECK eax, 3

    mov eax, 0x12345678
    mov cl, 32
    stc
    rol eax, cl                 ; count 0: CF stays 1
    CHECK_FLAGS F_CF, F_CF
    CHECK eax, 0x12345678

    mov eax, 0xAABBCC81
    rol al, 1                   ; 0x81 -> 0x03; CF = 1; OF = 0 ^ 1
    CHECK_FLAGS F_CO, 0x801
    CHECK eax, 0xAABBCC03

    mov eax, 0x00000081
    mov cl, 8
    clc
    rol al, cl                  ; (8 & 31) mod 8 = 0: al unchanged, but the masked
    CHECK_FLAGS F_CF, F_CF      ; count 8 != 0, so CF = bit 0 of al = 1
    CHECK eax, 0x81

    mov eax, 0x00000081
    mov cl, 9
    ror al, cl                  ; 9 mod 8 = 1: 0x81 -> 0xC0; CF = new bit 7 = 1
    CHECK_FLAGS F_CF, F_CF
    CHECK eax, 0xC0

; ---- RCL / RCR: a 33-bit rotation through CF -------------------------------
    stc
    mov eax, 0x80000000
    rcl eax, 1                  ; (eax << 1) | CF = 1; CF = old bit 31 = 1
    CHECK_FLAGS F_CO, 0x801     ; OF = MSB(0) ^ CF(1) = 1
    CHECK eax, 1

    clc
    mov eax, 1
    rcr eax, 1                  ; (CF << 31) | (eax >> 1) = 0; CF = old bit 0 = 1
    CHECK_FLAGS F_CO, 0x001     ; OF = MSB(original 0) ^ CF(before, 0) = 0
    CHECK eax, 0

    stc
    mov eax, 0
    mov cl, 31
    rcl eax, cl                 ; 33-bit CF:eax = 1:0; rcl by 31 = rcr by 2 in 33 bits:
    CHECK_FLAGS F_CF, 0         ; the 1 moves from bit 32 to bit 30 -> eax 0x40000000,
    CHECK eax, 0x40000000       ; CF = 0

    stc
    mov eax, 0x12345678
    mov cl, 32
    rcl eax, cl                 ; count 0: nothing
    CHECK_FLAGS F_CF, F_CF
    CHECK eax, 0x12345678

    clc
    mov eax, 0xFFFF8001
    rcr ax, 1                   ; 16-bit: 0x8001 -> (0 << 15) | 0x4000 = 0x4000; CF = 1
    CHECK_FLAGS F_CF, F_CF
    CHECK eax, 0xFFFF4000

    PASS

CHECK_FAIL_ROUTINE
