; pageloop_boot.asm -- workloads/guest/pageloop.asm on a bare PC, for Bochs.
;
; A floppy boot image (NASM flat binary, loaded by the BIOS at 0x7c00) that
; runs issue 4's 256-page loop under Bochs so that Bochs and vmsplit can be
; timed on the same instructions. It does not copy the loop: it %includes
; the pageloop source (run.sh passes a copy of workloads/guest/pageloop.asm
; whose only change is the PASSES value: -DPAGELOOP_SRC='"file"'), so the
; instructions between _start and the int 0x80 are byte for byte the ones
; vmsplit runs.
;
; What this file adds around the loop:
;   16-bit   the boot sector reads the rest of the image (int 13h), turns
;            on A20, loads a GDT and an IDT and enters protected mode;
;   32-bit   flat 4 GiB code and data segments, CPL 0 (vmsplit runs the
;            loop at CPL 3; no instruction of the loop depends on the CPL);
;            checks CPUID for PAE, builds PAE page tables identity-mapping
;            0-4 MiB with 4 KiB pages (a PDPT, one page directory, two page
;            tables), sets CR4.PAE, CR3 and CR0.PG, then jumps to _start;
;   int 0x80 the loop's exit: writes 'P' (exit status 0, the verify loop
;            passed) or 'F' (any other status) and a newline to the Bochs
;            debug port 0xe9, then asks Bochs to quit through the
;            "Shutdown" port 0x8900;
;   faults   every exception vector 0-31 writes 'E' to port 0xe9 and quits
;            the same way, so a mistake ends the run instead of resetting.
; Interrupts stay off (cli) from the boot sector on: no timer interrupt
; runs during the loop.
;
; Memory: the loop's .bss (1 MiB of pages) is placed at 2 MiB, above the
; 640K-1M hole; the page tables at 0x10000-0x13fff; the stack below
; 0x90000; the IDT at 0x14000; the image itself at 0x7c00.
;
; Instruction count of the loop part: the pageloop.asm header's arithmetic,
; 1 + 1540 x PASSES + 1288 from _start to the int 0x80 (see README.md).

%ifdef MAPFILE
  [map symbols MAPFILE]         ; run.sh's checks read _start, sys_exit here
%endif
%ifndef PAGELOOP_SRC
  %error "assemble with -DPAGELOOP_SRC='\"path/to/pageloop.asm\"' (run.sh does)"
%endif

PDPT        equ 0x10000         ; 32-byte aligned page-directory-pointer table
PD          equ 0x11000         ; page directory for 0-1 GiB
PT0         equ 0x12000         ; page table for 0-2 MiB
PT1         equ 0x13000         ; page table for 2-4 MiB
IDT         equ 0x14000         ; 256 gates, filled by idt_fill
STACK_TOP   equ 0x90000
CODE_SEL    equ 0x08
DATA_SEL    equ 0x10
E9          equ 0xe9            ; Bochs debug port (port_e9_hack)
SHUTDOWN    equ 0x8900          ; Bochs shutdown port

; The loop's pages: at 2 MiB, mapped by PT1. Declared before the include so
; that pageloop.asm's own "section .bss" reopens this section.
section .bss nobits start=0x200000 align=4096

section .text
org 0x7c00
BITS 16
boot:
    cli
    xor ax, ax
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov sp, 0x7c00
    ; Read the sectors after the boot sector to 0x7e00 (DL: the BIOS's
    ; boot drive). Cylinder 0, head 0, from sector 2.
    mov ax, 0x0200 | REST_SECTORS
    mov cx, 0x0002
    xor dh, dh
    mov bx, 0x7e00
    int 0x13
    jc boot_error
    in al, 0x92                 ; fast A20
    or al, 2
    and al, 0xfe                ; bit 0 would reset the machine
    out 0x92, al
    lgdt [gdt_desc]
    lidt [idt_desc]
    mov eax, cr0
    or eax, 1                   ; CR0.PE
    mov cr0, eax
    jmp CODE_SEL:pmode

boot_error:
    mov al, 'D'                 ; disk read failed
    out E9, al
    jmp shutdown16

; The shutdown sequence, usable from both modes (only out dx, al).
shutdown16:
    mov si, shutdown_str
    mov dx, SHUTDOWN
.next:
    mov al, [si]
    test al, al
    jz .hang
    out dx, al
    inc si
    jmp .next
.hang:
    hlt
    jmp .hang

shutdown_str: db "Shutdown", 0

align 8
gdt:
    dq 0
    dq 0x00cf9a000000ffff       ; 0x08: code, base 0, limit 4 GiB, 32-bit, DPL 0
    dq 0x00cf92000000ffff       ; 0x10: data, base 0, limit 4 GiB, DPL 0
gdt_end:
gdt_desc:
    dw gdt_end - gdt - 1
    dd gdt
idt_desc:
    dw 256 * 8 - 1
    dd IDT

    times 510 - ($ - $$) db 0
    dw 0xaa55

; ---- sector 2 onwards: 32-bit code ------------------------------------------
BITS 32
pmode:
    mov ax, DATA_SEL
    mov ds, ax
    mov es, ax
    mov fs, ax
    mov gs, ax
    mov ss, ax
    mov esp, STACK_TOP
    call idt_fill
    mov eax, 1                  ; CPUID.1:EDX bit 6 = PAE
    cpuid
    test edx, 1 << 6
    jz no_pae
    call paging_build
    mov edi, pages              ; zero the loop's .bss, as a loader would
    mov ecx, (bss_end - pages) / 4
    xor eax, eax
    rep stosd
    mov eax, cr4
    or eax, 1 << 5              ; CR4.PAE
    mov cr4, eax
    mov eax, PDPT
    mov cr3, eax
    mov eax, cr0
    or eax, 1 << 31             ; CR0.PG
    mov cr0, eax
    jmp _start

no_pae:
    mov al, 'X'
    out E9, al
    jmp shutdown

; Identity-map 0-4 MiB with 4 KiB pages: PT0 and PT1 are 1024 consecutive
; 8-byte entries (present, writable); PD entries 0-1 point to them; PDPT
; entry 0 points to PD (a PAE PDPTE has only P, PWT, PCD: RW is reserved).
paging_build:
    mov edi, PDPT
    mov ecx, (PT1 + 0x1000 - PDPT) / 4
    xor eax, eax
    rep stosd
    mov edi, PT0
    mov eax, 0x003
    mov ecx, 1024
.pte:
    mov [edi], eax
    add eax, 0x1000
    add edi, 8
    loop .pte
    mov dword [PD], PT0 | 3
    mov dword [PD + 8], PT1 | 3
    mov dword [PDPT], PD | 1
    ret

; IDT: vectors 0-31 -> fault, 0x80 -> sys_exit; the rest not present.
idt_fill:
    mov edi, IDT
    xor ecx, ecx
.gate:
    mov eax, fault
    cmp ecx, 32
    jb .set
    mov eax, sys_exit
    cmp ecx, 0x80
    je .set
    xor eax, eax
    mov [edi], eax
    mov [edi + 4], eax
    jmp .step
.set:                           ; 32-bit interrupt gate, DPL 0, present
    mov edx, eax
    and eax, 0xffff
    or eax, CODE_SEL << 16
    mov [edi], eax
    and edx, 0xffff0000
    or edx, 0x8e00
    mov [edi + 4], edx
.step:
    add edi, 8
    inc ecx
    cmp ecx, 256
    jb .gate
    ret

; int 0x80 from the loop: eax = 1 (exit), ebx = status.
sys_exit:
    mov al, 'P'
    test ebx, ebx
    jz .out
    mov al, 'F'
.out:
    out E9, al
    mov al, 10
    out E9, al
    jmp shutdown

fault:
    mov al, 'E'
    out E9, al
    mov al, 10
    out E9, al
shutdown:
    mov esi, shutdown_str
    mov dx, SHUTDOWN
.next:
    mov al, [esi]
    test al, al
    jz .hang
    out dx, al
    inc esi
    jmp .next
.hang:
    hlt
    jmp .hang

; ---- the loop ---------------------------------------------------------------
%include PAGELOOP_SRC

section .text
image_end:
REST_SECTORS equ (image_end - boot + 511) / 512 - 1   ; run.sh checks <= 17

section .bss
bss_end:
