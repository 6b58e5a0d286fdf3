; lea.asm -- effective addresses: LEA and memory operands with ModR/M and
; SIB forms (base + index*scale + disp8/disp32, no base, ESP and EBP as
; base), address wrap-around, and 16-bit LEA results.
;
; Rules (Intel SDM Vol. 2A §2.1.5, Tables 2-2 and 2-3): the effective
; address is base + index * scale + displacement modulo 2^32. ESP as a base
; needs a SIB byte; EBP as a base needs a displacement (mod=01 with disp8
; 0 for [ebp]); a SIB with base=101 and mod=00 means "no base, disp32".
; LEA computes the address without touching memory or flags; with a 16-bit
; destination it keeps the low 16 bits of the address.
BITS 32
%include "check.inc"

section .data
table:  dd 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80
out:    dd 0, 0, 0, 0

section .text
global _start
_start:
; ---- LEA -------------------------------------------------------------------------
    mov ebx, 0x1000
    mov ecx, 3
    lea eax, [ebx + ecx*4 + 0x10]       ; 0x1000 + 12 + 0x10 = 0x101C
    CHECK eax, 0x101C

    lea eax, [ecx*8]                    ; SIB, no base: 0 + 3*8 = 0x18
    CHECK eax, 0x18

    lea eax, [esp + 8]                  ; ESP base (SIB 0x24)
    mov edx, esp
    add edx, 8
    CHECK eax, edx

    push ebp
    mov ebp, 0x100
    mov esi, 0x20
    lea eax, [ebp + esi*2 - 4]          ; 0x100 + 0x40 - 4 = 0x13C (disp8 -4)
    CHECK eax, 0x13C
    pop ebp

    mov eax, 7
    lea eax, [eax + eax*2]              ; 7 * 3 = 21
    CHECK eax, 21

    mov edx, 1
    lea eax, [edx + edx*8 + 0x7FFFFFFF] ; 1 + 8 + 0x7FFFFFFF = 0x80000008
    CHECK eax, 0x80000008

    mov ebx, 0x1000
    lea eax, [ebx - 0x2000]             ; 0x1000 - 0x2000 = -0x1000 = 0xFFFFF000
    CHECK eax, 0xFFFFF000

    mov edx, 0xFFFFFFFF
    lea eax, [edx + edx]                ; 2 * 0xFFFFFFFF = 0x1_FFFFFFFE -> 0xFFFFFFFE
    CHECK eax, 0xFFFFFFFE

    mov eax, 0xFFFFFFFF
    mov ebx, 0x1FFFF
    lea ax, [ebx + 1]                   ; 66 8D: 0x20000, low 16 bits 0x0000
    CHECK eax, 0xFFFF0000

    mov eax, 0
    cmp eax, 1                          ; CF=1
    lea eax, [eax + 0x7FFFFFFF]         ; no flag changes
    CHECK_FLAGS F_CF, F_CF

; ---- memory operands ------------------------------------------------------------------
    mov esi, 3
    mov eax, [table + esi*4]            ; no base, disp32 + index: table[3]
    CHECK eax, 0x40

    mov ebx, table
    mov esi, 1
    mov eax, [ebx + esi*4 + 4]          ; table[1 + 1]
    CHECK eax, 0x30

    mov eax, [ebx + 28]                 ; disp8: table[7]
    CHECK eax, 0x80

    mov edx, [table + 8]                ; mod=00 rm=101: absolute disp32
    CHECK edx, 0x30

    push ebp
    mov ebp, table
    mov eax, [ebp]                      ; encoded as [ebp + 0] (mod=01, disp8 0)
    mov ecx, [ebp + 4*4]
    pop ebp
    CHECK eax, 0x10
    CHECK ecx, 0x50

    mov edi, out
    mov ecx, 2
    mov dword [edi + ecx*4], 0xABCD     ; store through SIB: out[2]
    CHECK dword [out + 8], 0xABCD
    mov eax, 5
    mov [edi + ecx*2 + 8], ax           ; 16-bit store at out + 12
    CHECK dword [out + 12], 5

    sub esp, 8
    mov dword [esp + 4], 0x1234         ; ESP-relative store and load
    mov eax, [esp + 4]
    add esp, 8
    CHECK eax, 0x1234

    mov ebx, table + 0x100
    mov eax, [ebx - 0x100 + 4]          ; negative displacement: table[1]
    CHECK eax, 0x20

    PASS

CHECK_FAIL_ROUTINE
