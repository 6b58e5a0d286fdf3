; reloc.asm -- test data for tests/cpu/test_elfload.c: every relocation
; `nasm -f elf32` emits for flat 32-bit code, in code and in data, against
; external symbols, section symbols and with nonzero implicit addends.
; The expected bytes after linking are worked out by hand in the test.
BITS 32
extern ext_func                 ; resolved from the caller's table
extern ext_data
global _start, counter

section .text
_start:
    call ext_func               ; 0x00 E8 rel32   R_386_PC32 ext_func, A = -4
    mov eax, [counter]          ; 0x05 A1 abs32   R_386_32 .data, A = 4
    mov ebx, ext_data + 8       ; 0x0A BB imm32   R_386_32 ext_data, A = 8
    call local_fn               ; 0x0F E8 rel32   same section: no relocation
    mov ecx, table              ; 0x14 B9 imm32   R_386_32 .rodata, A = 2
    mov edx, buf + 16           ; 0x19 BA imm32   R_386_32 .bss, A = 16
    ret                         ; 0x1E
local_fn:
    ret                         ; 0x1F

section .data
    dd 0x11111111               ; 0x00
counter:
    dd 0x12345678               ; 0x04
ptr_to_start:
    dd _start                   ; 0x08 R_386_32 .text, A = 0
pc_ext:
    dd ext_func - $             ; 0x0C R_386_PC32 ext_func, A = 0
pc_table:
    dd table - $                ; 0x10 R_386_PC32 .rodata, A = 2

section .rodata
    db 0xAA, 0xBB               ; 0x00
table:
    db 1, 2, 3, 4               ; 0x02

section .bss
buf:
    resb 64
