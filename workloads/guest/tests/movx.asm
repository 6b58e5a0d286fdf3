; movx.asm -- MOV forms (8/16/32-bit, high-byte registers, moffs, memory
; immediates), MOVZX/MOVSX, XCHG, and the sign extensions CBW/CWDE/CWD/CDQ.
;
; Rules (Intel SDM Vol. 2B "MOV", "MOVZX", "MOVSX", "XCHG", "CBW/CWDE",
; "CWD/CDQ"): writes to an 8- or 16-bit register keep the other bits of the
; 32-bit register; MOVZX fills with zeros, MOVSX with copies of the source's
; top bit; none of these instructions changes a flag.
BITS 32
%include "check.inc"

section .data
b80:    db 0x80
        align 2
w8000:  dw 0x8000
        align 4
d:      dd 0x11223344
m:      dd 0

section .text
global _start
_start:
; ---- MOVZX / MOVSX -------------------------------------------------------------
    mov eax, 0xFFFFFFFF
    movzx eax, byte [b80]
    CHECK eax, 0x00000080
    movsx eax, byte [b80]
    CHECK eax, 0xFFFFFF80
    movzx eax, word [w8000]
    CHECK eax, 0x00008000
    movsx eax, word [w8000]
    CHECK eax, 0xFFFF8000

    mov ebx, 0x1234567F
    movsx ebx, bl               ; 0x7F: top bit 0
    CHECK ebx, 0x0000007F
    mov ecx, 0x0000FF00
    movsx ecx, ch               ; CH = 0xFF
    CHECK ecx, 0xFFFFFFFF
    mov eax, 0x00000080
    mov edx, 0xAAAAAAAA
    movzx dx, al                ; 16-bit destination: upper half of EDX kept
    CHECK edx, 0xAAAA0080
    mov eax, 0x12345678
    movzx eax, al               ; same register as source
    CHECK eax, 0x78

    stc                         ; no flag changes
    movsx eax, byte [b80]
    CHECK_FLAGS F_CF, F_CF

; ---- MOV -----------------------------------------------------------------------------
    mov eax, 0xFFFFFFFF
    mov ax, 0x1234              ; 66 B8 iw
    CHECK eax, 0xFFFF1234
    mov ah, 0x56                ; B4 ib
    CHECK eax, 0xFFFF5634
    mov al, 0x78
    CHECK eax, 0xFFFF5678

    mov eax, [d]                ; A1 moffs32
    CHECK eax, 0x11223344
    mov ebx, 0
    mov bh, [d + 1]             ; byte 1 of 0x11223344 is 0x33
    CHECK ebx, 0x00003300
    mov [m], eax                ; A3 moffs32
    CHECK dword [m], 0x11223344
    mov byte [m + 3], 0x99      ; C6 /0 ib
    CHECK dword [m], 0x99223344
    mov word [m], 0xBEEF        ; 66 C7 /0 iw
    CHECK dword [m], 0x9922BEEF
    mov dword [m], 0xFFFFFFFF   ; C7 /0 id
    CHECK dword [m], 0xFFFFFFFF

; ---- XCHG -----------------------------------------------------------------------------
    mov eax, 1
    mov ebx, 2
    xchg eax, ebx
    CHECK eax, 2
    CHECK ebx, 1
    mov ecx, 3
    xchg eax, ecx               ; 91: the short EAX form
    CHECK eax, 3
    CHECK ecx, 2
    mov edx, 0x55667788
    mov dword [m], 0x01020304
    xchg [m], edx               ; memory form
    CHECK edx, 0x01020304
    CHECK dword [m], 0x55667788
    mov eax, 0x00001234
    xchg ah, al
    CHECK eax, 0x00003412

; ---- CBW / CWDE / CWD / CDQ -----------------------------------------------------------
    mov eax, 0x12345680
    cbw                         ; AX = sign extension of AL (0x80) = 0xFF80
    CHECK eax, 0x1234FF80
    mov eax, 0x0000FF80
    cwde                        ; EAX = sign extension of AX = 0xFFFFFF80
    CHECK eax, 0xFFFFFF80
    mov eax, 0x00008000
    mov edx, 0x12345678
    cwd                         ; DX = sign of AX (0x8000) = 0xFFFF
    CHECK edx, 0x1234FFFF
    mov eax, 0x80000000
    cdq                         ; EDX = sign of EAX
    CHECK edx, 0xFFFFFFFF
    mov eax, 0x7FFFFFFF
    cdq
    CHECK edx, 0

    PASS

CHECK_FAIL_ROUTINE
