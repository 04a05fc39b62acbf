# recursion-1000: recurse calls itself 1000 times (1001 FPO frames of 16 bytes each), then calls the leaf.
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> recurse (x1001) -> leaf.
# Each function's FPO_DATA record (x86-fpo.md §1.1) is quoted above it.

# main: EBP frame, locals 0, saved [], params 0 (cdecl)
# FPO_DATA: ulOffStart=0x1000 cbProcSize=25 cdwLocals=0 cdwParams=0 cbProlog=3 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
main:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
main_body:
    push 1000                            # argument 1: recursion depth
    call recurse
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 0                           # return value
    mov esp, ebp                         # restore ESP from the frame pointer
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# recurse: FPO frame, locals 1, saved [esi], params 1 (cdecl), calls itself 1000 times
# FPO_DATA: ulOffStart=0x1020 cbProcSize=55 cdwLocals=1 cdwParams=1 cbProlog=4 cbRegs=1 fUseBP=0 cbFrame=FRAME_FPO
recurse:
    sub esp, 4                           # locals: 1 dword
    push esi                             # save a callee-saved register
recurse_body:
    mov dword ptr [esp + 4], 0x4C000100  # local 0
    mov eax, dword ptr [esp + 12]        # remaining recursion depth (argument 1)
    test eax, eax
    jz recurse_base                      # depth 0: this is the deepest activation
    dec eax
    push eax                             # argument 1: recursion depth
    call recurse
    add esp, 4                           # cdecl: the caller removes the arguments
    jmp recurse_exit
recurse_base:
    push 0xA0000200                      # argument 1 of 1
    call leaf
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 1                           # return value
recurse_exit:
    pop esi
    add esp, 4                           # drop the locals
    ret
recurse_end:
    .align 16, 0xcc

# leaf: FPO frame, locals 0, saved [], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1060 cbProcSize=6 cdwLocals=0 cdwParams=1 cbProlog=0 cbRegs=0 fUseBP=0 cbFrame=FRAME_FPO
leaf:
leaf_body:
capture:
    mov eax, 2                           # return value
    ret
leaf_end:
