; dtlb64.asm -- Ingo Molnar's "worst-case for 64 dTLB misses is ~25000
; cycles" (LKML <20040407082350.GB32140@elte.hu>, 7 Apr 2004: "300 cycles
; per L2 cachemiss", "the TLB miss is two cachemisses"), as a program:
; after a system call -- whose return writes CR3 under 4g4g and kpti, so
; the TLB holds no user entry -- it loads one dword from each of 64 pages it
; never touched before, timed with RDTSC, and prints the cycles.
;
; Worst case, as the mail means it: every miss is a page walk whose PTE is
; not in any cache, followed by a data access that is not either.
;   - the pages lie 16 pages (64 KiB) apart, so their PAE PTEs (8 bytes
;     each) are 128 bytes apart: each in its own cache line, on the P4's
;     128-byte L2 lines too;
;   - within its page, page i is read at byte 64 x i, so that the 64 data
;     lines fall into different cache sets rather than one;
;   - nothing has read the pages or their page tables before: execve (the
;     loader) writes them to memory directly, as DMA would, not through
;     the caches.
; The 64 pages share one or two page directory entries (4 MiB of .bss), as
; they would in a real program's heap: the PDE is a miss once, then a hit.
;
; The figure printed is the loop's RDTSC difference less that of an empty
; RDTSC pair (the instruction's own cost), as Linus Torvalds's cycle
; counts of 2001 subtract their "nothing" measurement. It includes the
; loop's own instructions (4 per page). Output, on fd 1:
;     64 cold pages after a CR3 write: N cycles
; `vmsplit validate` takes N (the last number written) for the row
; ingo-64-dtlb-misses (experiment `guest dtlb64 4g4g`). Exit 0.
BITS 32

%define PAGES  64
%define STRIDE (16 * 4096 + 64)

section .bss
alignb 4096
area:   resb PAGES * 16 * 4096

section .data
msg:    db "64 cold pages after a CR3 write: "
msglen  equ $ - msg
tail:   db " cycles", 10
taillen equ $ - tail
digits: times 12 db 0
digend:

section .text
global _start
_start:
    ; The empty measurement.
    rdtsc
    mov esi, eax
    rdtsc
    sub eax, esi
    mov ebp, eax                ; RDTSC's own cost

    ; A system call with no effect (getpid is not in the guest ABI: it
    ; returns -ENOSYS through the layout's full entry and exit path).
    mov eax, 20
    int 0x80

    ; 64 cold pages.
    rdtsc
    mov esi, eax
    mov ebx, area
    mov ecx, PAGES
.touch:
    mov eax, [ebx]
    add ebx, STRIDE
    dec ecx
    jnz .touch
    rdtsc
    sub eax, esi
    sub eax, ebp

    ; Decimal digits of eax, right to left.
    mov edi, digend
    mov ebx, 10
.digit:
    xor edx, edx
    div ebx
    add dl, '0'
    dec edi
    mov [edi], dl
    test eax, eax
    jnz .digit
    mov esi, edi                ; first digit

    mov eax, 4                  ; write(1, msg, msglen)
    mov ebx, 1
    mov ecx, msg
    mov edx, msglen
    int 0x80
    mov eax, 4                  ; write(1, digits, n)
    mov ebx, 1
    mov ecx, esi
    mov edx, digend
    sub edx, esi
    int 0x80
    mov eax, 4                  ; write(1, tail, taillen)
    mov ebx, 1
    mov ecx, tail
    mov edx, taillen
    int 0x80
    mov eax, 1                  ; exit(0)
    xor ebx, ebx
    int 0x80
