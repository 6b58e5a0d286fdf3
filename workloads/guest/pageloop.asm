; pageloop.asm -- the simulator-speed benchmark (issue 4): a loop that walks
; 256 pages, 4 KiB apart, doing a load, an add and a store on each page,
; repeated PASSES times; then it checks every page and exits 0 if all hold
; what they must, 1 otherwise.
;
; 256 pages are 1 MiB of .bss: more pages than any modelled DTLB holds
; (64 entries on the P4), so every pass misses the DTLB on every page, and
; the walk's page-table reads and the data lines go through the caches.
;
; Instruction count (every instruction executed, _start to the exit int 0x80):
;   setup                              1   (mov ebp, PASSES)
;   per pass   2 + 256 x 6 + 2     = 1540  (2 setup, 6 per page, dec/jnz)
;   verify     3 + 256 x 5         = 1283  (3 setup, 5 per page)
;   exit       test, jnz, mov, xor, int = 5
;   total      1 + 1540 x PASSES + 1283 + 5
;            = 1 + 1540 x 8000 + 1288 = 12,321,289 instructions
; (the int 0x80 itself counted as one instruction of the guest; the
; environment's handler is not part of this count).
;
; After the passes page i holds PASSES x (256 - i): on pass p the page
; counter ecx counts 256 down to 1 and page i is visited when ecx = 256 - i.
; With PASSES = 8000 the largest is 8000 x 256 = 2,048,000, far from 2^32.
BITS 32

%define PAGES  256
%define PASSES 8000

section .bss
alignb 4096
pages:  resb PAGES * 4096

section .text
global _start
_start:
    mov ebp, PASSES
.pass:
    mov esi, pages
    mov ecx, PAGES
.page:                          ; 6 instructions per page
    mov eax, [esi]              ; load
    add eax, ecx                ; add
    mov [esi], eax              ; store
    add esi, 4096
    dec ecx
    jnz .page
    dec ebp
    jnz .pass

    ; Verify: page i must hold PASSES * (256 - i); edx walks down from
    ; PASSES * 256 by PASSES and must end at 0.
    mov esi, pages
    mov ecx, PAGES
    mov edx, PASSES * PAGES
.check:                         ; 5 instructions per page
    cmp [esi], edx
    jne .fail
    sub edx, PASSES
    add esi, 4096
    loop .check
    test edx, edx
    jnz .fail
    mov eax, 1                  ; exit(0)
    xor ebx, ebx
    int 0x80
.fail:
    mov eax, 1                  ; exit(1)
    mov ebx, 1
    int 0x80
