# fpo-usebp-etw: fpo-usebp logging an ETW event at both captures: in worker, EBP holds garbage and the array ends at worker; in inner, the chain reaches worker through inner's frame link and ends there (x86-fpo.md §6, effect 2).
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> outer -> worker -> inner.
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
    call outer
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 0                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# outer: EBP frame, locals 1, saved [], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1030 cbProcSize=40 cdwLocals=1 cdwParams=1 cbProlog=6 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
outer:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
outer_body:
    mov dword ptr [ebp - 4], 0x4C000100  # local 0
    push 0xA0000201                      # argument 2 of 2
    push 0xA0000200                      # argument 1 of 2
    call worker
    add esp, 8                           # cdecl: the caller removes the arguments
    mov eax, 1                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
outer_end:
    .align 16, 0xcc

# worker: FPO frame, locals 2, saved [ebx, ebp, esi], params 2 (cdecl)
# FPO_DATA: ulOffStart=0x1060 cbProcSize=57 cdwLocals=2 cdwParams=2 cbProlog=6 cbRegs=3 fUseBP=1 cbFrame=FRAME_FPO
worker:
    sub esp, 8                           # locals: 2 dwords
    push ebx                             # save a callee-saved register
    push ebp                             # save the caller's EBP: this function allocates EBP (fUseBP)
    push esi                             # save a callee-saved register
worker_body:
    mov ebp, 0xBAD002EF                  # EBP is now a general register holding garbage
    mov dword ptr [esp + 12], 0x4C000200 # local 0
    mov dword ptr [esp + 16], 0x4C000201 # local 1
capture_worker:
    call 0x77001000                      # etwlog.dll!EtwEventWrite: log an event with the stack
    push 0xA0000300                      # argument 1 of 1
    call inner
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 2                           # return value
    pop esi
    pop ebp
    pop ebx
    add esp, 8                           # drop the locals
    ret
worker_end:
    .align 16, 0xcc

# inner: EBP frame, locals 1, saved [], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x10A0 cbProcSize=27 cdwLocals=1 cdwParams=1 cbProlog=6 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
inner:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
inner_body:
    mov dword ptr [ebp - 4], 0x4C000300  # local 0
capture:
    call 0x77001000                      # etwlog.dll!EtwEventWrite: log an event with the stack
    mov eax, 3                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
inner_end:
