; muldiv.asm -- MUL/IMUL (one-, two- and three-operand forms) and DIV/IDIV,
; with EDX:EAX (DX:AX, AX) results.
;
; Rules (Intel SDM Vol. 2A/2B "MUL", "IMUL", "DIV", "IDIV"):
;   MUL:  CF = OF = 1 iff the upper half of the product is not zero.
;   IMUL: CF = OF = 1 iff the product does not fit the destination as a
;         signed value (one-operand: EDX:EAX != sign extension of EAX).
;   SF/ZF/AF/PF after MUL/IMUL and every flag after DIV/IDIV are undefined:
;   not checked.
;   DIV/IDIV: quotient in EAX (AL, AX), remainder in EDX (AH, DX); IDIV
;   truncates toward zero, the remainder has the dividend's sign.
BITS 32
%include "check.inc"

section .data
m40:    dd 0x40000000

section .text
global _start
_start:
; ---- MUL ------------------------------------------------------------------
    mov eax, 0xFFFFFFFF
    mov ebx, 0xFFFFFFFF
    mul ebx                     ; (2^32-1)^2 = 2^64 - 2^33 + 1 = 0xFFFFFFFE_00000001
    CHECK_FLAGS F_CO, 0x801
    CHECK edx, 0xFFFFFFFE
    CHECK eax, 0x00000001

    mov eax, 0x10000
    mov ebx, 0x10000
    mul ebx                     ; 2^16 * 2^16 = 2^32 = 0x00000001_00000000
    CHECK_FLAGS F_CO, 0x801
    CHECK edx, 1
    CHECK eax, 0

    mov eax, 0x12345678
    mov ebx, 2
    mul ebx                     ; 0x2468ACF0, upper half 0
    CHECK_FLAGS F_CO, 0
    CHECK edx, 0
    CHECK eax, 0x2468ACF0

    mov eax, 0xAAAA0080
    mov bl, 2
    mul bl                      ; AX = AL * BL = 0x80 * 2 = 0x0100; AH != 0
    CHECK_FLAGS F_CO, 0x801
    CHECK eax, 0xAAAA0100

    mov eax, 0x1234FFFF
    mov edx, 0x56789ABC
    mov bx, 0xFFFF
    mul bx                      ; DX:AX = 0xFFFF^2 = 0xFFFE0001
    CHECK_FLAGS F_CO, 0x801
    CHECK eax, 0x12340001
    CHECK edx, 0x5678FFFE

; ---- IMUL, one operand ------------------------------------------------------
    mov eax, 0xFFFFFFFF
    mov ebx, 0xFFFFFFFF
    imul ebx                    ; -1 * -1 = 1
    CHECK_FLAGS F_CO, 0
    CHECK edx, 0
    CHECK eax, 1

    mov eax, 0x80000000
    mov ebx, 0xFFFFFFFF
    imul ebx                    ; -2^31 * -1 = 2^31 = 0x00000000_80000000: does not
    CHECK_FLAGS F_CO, 0x801     ; fit 32 signed bits (EDX is not the sign of EAX)
    CHECK edx, 0
    CHECK eax, 0x80000000

    mov eax, 0xFFFFFFFE
    mov ebx, 3
    imul ebx                    ; -2 * 3 = -6 = 0xFFFFFFFF_FFFFFFFA
    CHECK_FLAGS F_CO, 0
    CHECK edx, 0xFFFFFFFF
    CHECK eax, 0xFFFFFFFA

    mov eax, 0x7FFFFFFF
    imul eax                    ; (2^31-1)^2 = 2^62 - 2^32 + 1 = 0x3FFFFFFF_00000001
    CHECK_FLAGS F_CO, 0x801
    CHECK edx, 0x3FFFFFFF
    CHECK eax, 1

    mov eax, 0x0000FFF0
    mov bl, 0x10
    imul bl                     ; AX = AL * BL = (-16) * 16 = -256 = 0xFF00; AX is the
    CHECK_FLAGS F_CO, 0x801     ; sign extension of AL (0x00)? no -> CF=OF=1
    CHECK eax, 0x0000FF00

; ---- IMUL, two and three operands (truncated product) ---------------------
    mov ecx, 0x10000
    imul ecx, ecx               ; 2^32 -> 0, overflow
    CHECK_FLAGS F_CO, 0x801
    CHECK ecx, 0

    mov ecx, -5
    imul ecx, 7                 ; -35 = 0xFFFFFFDD (imm8 form)
    CHECK_FLAGS F_CO, 0
    CHECK ecx, 0xFFFFFFDD

    imul edx, [m40], 2          ; 0x40000000 * 2 = 2^31: not a signed 32-bit value
    CHECK_FLAGS F_CO, 0x801
    CHECK edx, 0x80000000

    mov ebx, 1000
    imul eax, ebx, 1000000      ; 10^9 = 0x3B9ACA00 (imm32 form)
    CHECK_FLAGS F_CO, 0
    CHECK eax, 0x3B9ACA00

    mov eax, 0x00010000
    mov bx, 0x4000
    imul ax, bx, 2              ; 16-bit: 0x4000 * 2 = 0x8000 = -32768 != 32768: OF
    CHECK_FLAGS F_CO, 0x801
    CHECK eax, 0x00018000

; ---- DIV ------------------------------------------------------------------
    mov edx, 1
    mov eax, 0
    mov ebx, 2
    div ebx                     ; 2^32 / 2 = 2^31 rem 0
    CHECK eax, 0x80000000
    CHECK edx, 0

    mov edx, 0
    mov eax, 100
    mov ebx, 7
    div ebx                     ; 100 = 7 * 14 + 2
    CHECK eax, 14
    CHECK edx, 2

    mov edx, 0x12345678
    mov eax, 0x9ABCDEF0
    mov ebx, 0xFFFFFFFF
    div ebx                     ; N = h*2^32 + l = h*(2^32-1) + (h + l), and h + l =
    CHECK eax, 0x12345678       ; 0x12345678 + 0x9ABCDEF0 = 0xACF13568 < 2^32-1, so
    CHECK edx, 0xACF13568       ; quotient h, remainder h + l

    mov eax, 0xBEEF0107
    mov bl, 0x10
    div bl                      ; AX = 263 = 16 * 16 + 7: AL = 0x10, AH = 0x07
    CHECK eax, 0xBEEF0710

    mov edx, 0xAAAA0001
    mov eax, 0xBBBB0000
    mov cx, 3
    div cx                      ; DX:AX = 65536 = 3 * 21845 + 1: AX = 0x5555, DX = 1
    CHECK eax, 0xBBBB5555
    CHECK edx, 0xAAAA0001

; ---- IDIV -----------------------------------------------------------------
    mov edx, 0xFFFFFFFF
    mov eax, 0xFFFFFFF9
    mov ebx, 2
    idiv ebx                    ; -7 / 2 = -3 rem -1 (toward zero)
    CHECK eax, 0xFFFFFFFD
    CHECK edx, 0xFFFFFFFF

    mov edx, 0
    mov eax, 7
    mov ebx, -2
    idiv ebx                    ; 7 / -2 = -3 rem 1
    CHECK eax, 0xFFFFFFFD
    CHECK edx, 1

    mov edx, 0xFFFFFFFF
    mov eax, -7
    mov ebx, -2
    idiv ebx                    ; -7 / -2 = 3 rem -1
    CHECK eax, 3
    CHECK edx, 0xFFFFFFFF

    mov edx, 0xFFFFFFFF
    mov eax, 0x80000000
    mov ebx, 1
    idiv ebx                    ; -2^31 / 1 = -2^31 rem 0
    CHECK eax, 0x80000000
    CHECK edx, 0

    mov eax, 0x0000FF9C
    mov bl, 7
    idiv bl                     ; AX = -100 = 7 * -14 - 2: AL = -14 = 0xF2, AH = -2 = 0xFE
    CHECK eax, 0x0000FEF2

    PASS

CHECK_FAIL_ROUTINE
