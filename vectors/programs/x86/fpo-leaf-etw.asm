# fpo-leaf-etw: fpo-leaf logging an ETW event at the capture in leaf, an FPO function that leaves EBP alone: the array goes from leaf straight to main, skipping caller (x86-fpo.md §6, effect 1).
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> caller -> leaf.
# Each function's FPO_DATA record (x86-fpo.md §1.1) is quoted above it.
# ETW: each capture label calls etwlog.dll!EtwEventWrite at 0x77001000, which logs the stack (x86-fpo.md §6).
# Run beside the logging modules (emulator/etw-capture.ts), where etwlog.dll!RtlUserThreadStart calls main.

# main: EBP frame, locals 1, saved [], params 0 (cdecl)
# FPO_DATA: ulOffStart=0x1000 cbProcSize=35 cdwLocals=1 cdwParams=0 cbProlog=6 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
main:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
main_body:
    mov dword ptr [ebp - 4], 0x4C000000  # local 0
    push 0xA0000100                      # argument 1 of 1
    call caller
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 0                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# caller: EBP frame, locals 2, saved [], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1030 cbProcSize=47 cdwLocals=2 cdwParams=1 cbProlog=6 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
caller:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 8                           # locals: 2 dwords
caller_body:
    mov dword ptr [ebp - 8], 0x4C000100  # local 0
    mov dword ptr [ebp - 4], 0x4C000101  # local 1
    push 0xA0000201                      # argument 2 of 2
    push 0xA0000200                      # argument 1 of 2
    call leaf
    add esp, 8                           # cdecl: the caller removes the arguments
    mov eax, 1                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
caller_end:
    .align 16, 0xcc

# leaf: FPO frame, locals 2, saved [], params 2 (cdecl)
# FPO_DATA: ulOffStart=0x1060 cbProcSize=32 cdwLocals=2 cdwParams=2 cbProlog=3 cbRegs=0 fUseBP=0 cbFrame=FRAME_FPO
leaf:
    sub esp, 8                           # locals: 2 dwords
leaf_body:
    mov dword ptr [esp], 0x4C000200      # local 0
    mov dword ptr [esp + 4], 0x4C000201  # local 1
capture:
    call 0x77001000                      # etwlog.dll!EtwEventWrite: log an event with the stack
    mov eax, 2                           # return value
    add esp, 8                           # drop the locals
    ret
leaf_end:
