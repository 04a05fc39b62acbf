# chkstk-x86.s - stack probe for the x86 (i686-pc-windows-msvc) builds.
#
# The compiler calls _chkstk (symbol __chkstk) when a frame needs more than a page, or for
# __builtin_alloca, with the allocation size in EAX. Semantics (those of the MSVC
# routine): every page from the caller's stack top down to the new stack top is touched
# in order, highest first; on return ESP = (caller's ESP before the call) - EAX, i.e. the
# routine itself performs the allocation. ECX and every other register except EAX are
# preserved; flags are not. _alloca_probe (symbol __alloca_probe) is the same routine.
# A size larger than the stack top wraps to a target of 0 and keeps probing down, so an
# impossible request faults instead of corrupting memory.
#
# No FrameData: like any hand-written assembly, this routine has no record in the PDB.

        .intel_syntax noprefix

        .def    @feat.00
        .scl    3
        .type   0
        .endef
        .globl  @feat.00
        .set    @feat.00, 1

        .text
        .globl  __chkstk
        .globl  __alloca_probe
        .def    __chkstk
        .scl    2
        .type   32
        .endef
        .def    __alloca_probe
        .scl    2
        .type   32
        .endef
        .p2align 4, 0x90
__alloca_probe:
__chkstk:
        push    ecx                      # [esp] = caller's ECX, [esp+4] = return address
        lea     ecx, [esp + 4]           # address of the return-address slot
        sub     ecx, eax                 # new slot for the return address
        jae     1f
        xor     ecx, ecx                 # wrapped around: probe everything (faults)
1:      mov     eax, esp
        and     eax, -4096               # page of the current stack top (already in use)
2:      cmp     ecx, eax
        jae     3f                       # new top lies in a page already touched
        sub     eax, 4096
        test    dword ptr [eax], eax     # touch the next page down
        jmp     2b
3:      mov     eax, esp                 # EAX = old top: saved ECX, then return address
        mov     esp, ecx
        mov     ecx, dword ptr [eax]     # restore the caller's ECX
        mov     eax, dword ptr [eax + 4]
        mov     dword ptr [esp], eax     # return address at the new top
        ret                              # ESP = caller's ESP - requested size
