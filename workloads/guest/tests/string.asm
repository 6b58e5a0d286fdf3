; string.asm -- MOVS/STOS/LODS/CMPS/SCAS, with REP/REPE/REPNE, both
; directions (CLD/STD).
;
; Rules (Intel SDM Vol. 2B "REP/REPE/REPZ/REPNE/REPNZ", "MOVS", "CMPS",
; "SCAS"): each iteration moves ESI/EDI by the operand size, up with DF=0,
; down with DF=1, and decrements ECX; REP stops when ECX reaches 0 (ECX = 0
; at the start: no iteration at all); REPE/REPNE also stop after an
; iteration whose comparison leaves ZF=0 (REPE) or ZF=1 (REPNE). CMPS
; compares [ESI] - [EDI], SCAS AL - [EDI], and sets the flags like CMP.
; Little-endian: the bytes "ABCD" read as the dword 0x44434241.
BITS 32
%include "check.inc"

section .rodata
src:    db "ABCDEFGHIJKLMNOP"       ; 16 bytes, 'A' = 0x41
s_hw:   db "HELLO WORLD"            ; 11 bytes
s_ht:   db "HELLO THERE"            ; differs first at index 6: 'W' (0x57) vs 'T' (0x54)

section .bss
alignb 4
dst:    resb 64
dst2:   resb 64
buf:    resb 64

section .text
global _start
_start:
    cld
; ---- REP MOVSB / MOVSD forward ----------------------------------------------
    mov esi, src
    mov edi, dst
    mov ecx, 16
    rep movsb
    CHECK ecx, 0
    CHECK esi, src + 16
    CHECK edi, dst + 16
    CHECK dword [dst], 0x44434241       ; "ABCD"
    CHECK dword [dst + 12], 0x504F4E4D  ; "MNOP"

    mov esi, src
    mov edi, dst2
    mov ecx, 4
    rep movsd
    CHECK esi, src + 16
    CHECK edi, dst2 + 16
    CHECK dword [dst2 + 4], 0x48474645  ; "EFGH"

    mov esi, src                ; ECX = 0: no iteration
    mov edi, dst2
    xor ecx, ecx
    rep movsb
    CHECK esi, src
    CHECK edi, dst2

; ---- REP STOSD forward and backward -----------------------------------------
    mov eax, 0xDEADBEEF
    mov edi, buf
    mov ecx, 8
    rep stosd                   ; buf[0..31]
    CHECK edi, buf + 32
    CHECK dword [buf + 28], 0xDEADBEEF
    CHECK dword [buf + 32], 0   ; one past the end: untouched .bss

    std
    mov eax, 0x11223344
    mov edi, buf + 60
    mov ecx, 3
    rep stosd                   ; writes buf+60, buf+56, buf+52
    cld
    CHECK edi, buf + 48
    CHECK dword [buf + 52], 0x11223344
    CHECK dword [buf + 60], 0x11223344
    CHECK dword [buf + 48], 0   ; not reached

; ---- REP MOVSB backward -----------------------------------------------------
    std
    mov esi, src + 15
    mov edi, dst + 32 + 15
    mov ecx, 16
    rep movsb                   ; copies index 15 down to 0
    cld
    CHECK esi, src - 1
    CHECK edi, dst + 31
    CHECK dword [dst + 32], 0x44434241
    CHECK dword [dst + 44], 0x504F4E4D

; ---- single MOVSD, LODSB/LODSD, STOSB ----------------------------------------
    mov esi, src + 4
    mov edi, buf
    movsd
    CHECK dword [buf], 0x48474645       ; "EFGH"
    CHECK esi, src + 8
    mov esi, src
    lodsd
    CHECK eax, 0x44434241
    CHECK esi, src + 4
    lodsb
    CHECK al, 0x45                      ; 'E'
    mov edi, buf
    mov al, 0x7A
    stosb
    CHECK dword [buf], 0x4847467A       ; first byte replaced
    CHECK edi, buf + 1

; ---- REPE CMPSB --------------------------------------------------------------
    mov esi, s_hw
    mov edi, s_ht
    mov ecx, 11
    repe cmpsb                  ; stops after index 6: 7 iterations
    CHECK_FLAGS F_ARITH, 0x004  ; 'W' - 'T' = 3: ZF=0, CF=0; 0x03 two 1s -> PF
    CHECK ecx, 4                ; 11 - 7
    CHECK esi, s_hw + 7
    CHECK edi, s_ht + 7

    mov esi, s_hw
    mov edi, s_ht
    mov ecx, 5
    repe cmpsb                  ; "HELLO" == "HELLO": runs out, ZF=1
    CHECK_FLAGS F_ZF, F_ZF
    CHECK ecx, 0

    mov esi, s_ht + 6           ; single CMPSB: 'T' - 'W' = 0x54 - 0x57 = -3 = 0xFD
    mov edi, s_hw + 6
    cmpsb
    CHECK_FLAGS F_ARITH, 0x091  ; CF (borrow), AF (0x4 - 0x7 borrows), SF; ZF=0, OF=0;
                                ; 0xFD = 11111101b, seven 1s -> PF=0
    CHECK esi, s_ht + 7

; ---- REPNE SCASB -------------------------------------------------------------
    mov edi, src
    mov al, 'G'
    mov ecx, 16
    repne scasb                 ; 'G' is index 6: 7 iterations, ZF=1
    CHECK_FLAGS F_ZF, F_ZF
    CHECK ecx, 9
    CHECK edi, src + 7

    mov edi, src
    mov al, 'z'
    mov ecx, 16
    repne scasb                 ; not there: ECX runs out, ZF=0
    CHECK_FLAGS F_ZF, 0
    CHECK ecx, 0
    CHECK edi, src + 16

    std
    mov edi, src + 15
    mov al, 'A'
    mov ecx, 16
    repne scasb                 ; backward: 'A' is the 16th and last compared
    cld
    CHECK_FLAGS F_ZF, F_ZF      ; found (ZF=1) although ECX = 0
    CHECK ecx, 0
    CHECK edi, src - 1

    PASS

CHECK_FAIL_ROUTINE
