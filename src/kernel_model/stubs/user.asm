; The user side of every simulated process: how a program enters the
; kernel, and the user work between its system calls. Mapped read-only and
; executable at USER_CODE_VA in every process (like the text of a program
; and its vsyscall page). The replay sets registers and EIP and runs the
; core until EIP reaches the matching *_done label (a breakpoint the core
; checks; it costs the guest nothing).
BITS 32

section .text progbits alloc exec nowrite align=16
global user_int80, user_int80_done, user_sysenter, user_sysenter_done
global user_work, user_work_loop, user_work_done

; A system call through int $0x80: EAX = number, EBX, ECX, EDX, ESI, EDI,
; EBP = arguments (the Linux i386 ABI).
user_int80:
    int 0x80
user_int80_done:
    nop

; A system call through the vsyscall page's __kernel_vsyscall (Linux 2.6
; arch/i386/kernel/vsyscall-sysenter.S): the kernel returns with SYSEXIT to
; SYSENTER_RETURN below (the model stores its address in cpu_data).
user_sysenter:
    push ecx
    push edx
    push ebp
    mov ebp, esp
    sysenter
global sysenter_return
sysenter_return:
    pop ebp
    pop edx
    pop ecx
user_sysenter_done:
    nop

; User work: ECX iterations of a loop that loads, adds to and stores one
; dword, stepping EDX bytes through the EDI-byte working set at ESI and
; wrapping. Each iteration is 8 instructions; the replay turns an
; instruction count into iterations (USER_WORK_INSNS_PER_ITER). This is what makes user TLB
; entries matter: after a flush, each page of the working set walks again.
user_work:
    test ecx, ecx
    jz user_work_done
    mov ebx, esi                    ; cursor
    lea ebp, [esi + edi]            ; end of the working set
user_work_loop:                     ; the loop head: the fast-forward (userwork.h)
.loop:                              ; counts periods from here
    mov eax, [ebx]
    add eax, ecx
    mov [ebx], eax
    add ebx, edx
    cmp ebx, ebp
    cmovae ebx, esi
    dec ecx
    jnz .loop
user_work_done:
    nop

; A first touch of a page (kernel_model/usermm.h): EBX = the address. The
; reference faults (#PF) if the page is not present or, for a write, not
; writable; the kernel's handler maps it and the return retries the
; instruction, which then completes. One byte, so that it stays in the
; page. The fetch touch calls the page: a file-backed page the handler
; maps for it holds RET (0xC3) bytes, so the call returns at once.
global user_touch_read, user_touch_write, user_touch_exec
user_touch_read:
    mov al, [ebx]
    jmp user_int80_done
user_touch_write:
    mov [ebx], al
    jmp user_int80_done
user_touch_exec:
    call ebx
    jmp user_int80_done
