; failcheck.asm -- proves that the self-checking harness fails: check 1
; holds, check 2 does not (4 != 5), so the program must print
; "check 2 failed: cmp eax, 5" and exit with status 2, and never reach
; check 3. Used by tests/cpu/test_guest_native.c.
BITS 32
%include "check.inc"

section .text
global _start
_start:
    mov eax, 4
    CHECK eax, 4
    CHECK eax, 5
    CHECK eax, 6
    PASS

CHECK_FAIL_ROUTINE
