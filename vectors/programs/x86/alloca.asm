# alloca: grow is an EBP frame that allocates 40 bytes at run time (sub esp, eax) below its saved registers; only EBP locates its return address. Captured in grow and in the FPO leaf below the allocation.
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> grow -> leaf.
# Each function's FPO_DATA record (x86-fpo.md §1.1) is quoted above it.

# main: EBP frame, locals 1, saved [], params 0 (cdecl)
# FPO_DATA: ulOffStart=0x1000 cbProcSize=35 cdwLocals=1 cdwParams=0 cbProlog=6 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
main:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
main_body:
    mov dword ptr [ebp - 4], 0x4C000000  # local 0
    push 0xA0000100                      # argument 1 of 1
    call grow
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 0                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# grow: EBP frame, locals 2, saved [ebx, esi], params 1 (cdecl), alloca 40 bytes
# FPO_DATA: ulOffStart=0x1030 cbProcSize=64 cdwLocals=2 cdwParams=1 cbProlog=8 cbRegs=2 fUseBP=0 cbFrame=FRAME_NONFPO
grow:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 8                           # locals: 2 dwords
    push ebx                             # save a callee-saved register
    push esi                             # save a callee-saved register
grow_body:
    mov dword ptr [ebp - 8], 0x4C000100  # local 0
    mov dword ptr [ebp - 4], 0x4C000101  # local 1
    mov eax, 40                          # alloca: a size known only at run time
    sub esp, eax                         # ESP moves by a run-time amount; only EBP locates the frame now
    mov dword ptr [esp], eax             # touch the allocation
capture_grow:
    push 0xA0000201                      # argument 2 of 2
    push 0xA0000200                      # argument 1 of 2
    call leaf
    add esp, 8                           # cdecl: the caller removes the arguments
    mov eax, 1                           # return value
    lea esp, [ebp - 16]                  # drop the alloca area: ESP back at the saved registers
    pop esi
    pop ebx
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
grow_end:
    .align 16, 0xcc

# leaf: FPO frame, locals 1, saved [edi], params 2 (cdecl)
# FPO_DATA: ulOffStart=0x1070 cbProcSize=22 cdwLocals=1 cdwParams=2 cbProlog=4 cbRegs=1 fUseBP=0 cbFrame=FRAME_FPO
leaf:
    sub esp, 4                           # locals: 1 dword
    push edi                             # save a callee-saved register
leaf_body:
    mov dword ptr [esp + 4], 0x4C000200  # local 0
capture:
    mov eax, 2                           # return value
    pop edi
    add esp, 4                           # drop the locals
    ret
leaf_end:
