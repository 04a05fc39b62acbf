# chkstk-x64.s - stack probe for the x64 (x86_64-pc-windows-msvc) build.
#
# The compiler calls __chkstk when a frame needs more than a page, or for
# __builtin_alloca, with the allocation size in RAX, and subtracts RAX from RSP itself
# after the call. Semantics (those of the MSVC routine): every page from the caller's
# stack top down to (caller's RSP - RAX) is touched in order, highest first; RSP is left
# unchanged for the caller and every register, RAX included, is preserved; flags are not.
# Unlike the MSVC routine this one does not read the stack limit from the TEB: it probes
# every page, so it needs no operating system. A size larger than RSP wraps to a target
# of 0 and keeps probing down, so an impossible request faults.
#
# The routine has unwind data: two pushes (of volatile registers, recorded as
# UWOP_PUSH_NONVOL RCX and RAX), undone by a `pop; pop; ret` epilog.

        .intel_syntax noprefix
        .text
        .globl  __chkstk
        .def    __chkstk
        .scl    2
        .type   32
        .endef
        .p2align 4, 0x90
__chkstk:
        .seh_proc __chkstk
        push    rcx
        .seh_pushreg rcx
        push    rax
        .seh_pushreg rax
        .seh_endprologue
        lea     rcx, [rsp + 24]          # caller's RSP before the call
        sub     rcx, rax                 # lowest address the caller will own
        jae     1f
        xor     ecx, ecx                 # wrapped around: probe everything (faults)
1:      mov     rax, rsp
        and     rax, -4096               # page of the current stack top (already in use)
2:      cmp     rcx, rax
        jae     3f                       # target lies in a page already touched
        sub     rax, 4096
        test    byte ptr [rax], al       # touch the next page down
        jmp     2b
3:      pop     rax
        pop     rcx
        ret
        .seh_endproc
