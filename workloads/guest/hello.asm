; hello.asm -- the smallest guest program: write one line, exit 0.
;
; Guest ABI of `vmsplit run` (Linux i386 numbers, so this also runs natively
; when linked with `ld -m elf_i386`): int 0x80 with
;   eax = 4  write(ebx = fd, ecx = buffer, edx = length) -> eax = bytes written
;   eax = 1  exit(ebx = status)
; Ring 3, flat segments, entry at _start, the stack set up by the loader.
BITS 32

section .rodata
msg:    db "Hello from a vmsplit guest.", 10
MSG_LEN equ $ - msg

section .text
global _start
_start:
    mov eax, 4                  ; write(1, msg, MSG_LEN)
    mov ebx, 1
    mov ecx, msg
    mov edx, MSG_LEN
    int 0x80
    cmp eax, MSG_LEN            ; a short or failed write is a failure
    jne .fail
    mov eax, 1                  ; exit(0)
    xor ebx, ebx
    int 0x80
.fail:
    mov eax, 1                  ; exit(1)
    mov ebx, 1
    int 0x80
