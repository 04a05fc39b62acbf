# kernel-user: submit enters the kernel (etwkrnl.sys at 0x80400000), which logs the kernel part of the stack at once and the user part, walked from the trap frame's EBP, on the way back: two items sharing one nonzero MatchId (etw.md §2.3).
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> request -> submit.
# Each function's FPO_DATA record (x86-fpo.md §1.1) is quoted above it.
# ETW: each capture label calls etwkrnl.sys!KiSystemService at 0x80401000, which logs a kernel and a user part (etw.md §2.3).
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
    call request
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 0                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# request: EBP frame, locals 2, saved [esi], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1030 cbProcSize=49 cdwLocals=2 cdwParams=1 cbProlog=7 cbRegs=1 fUseBP=0 cbFrame=FRAME_NONFPO
request:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 8                           # locals: 2 dwords
    push esi                             # save a callee-saved register
request_body:
    mov dword ptr [ebp - 8], 0x4C000100  # local 0
    mov dword ptr [ebp - 4], 0x4C000101  # local 1
    push 0xA0000201                      # argument 2 of 2
    push 0xA0000200                      # argument 1 of 2
    call submit
    add esp, 8                           # cdecl: the caller removes the arguments
    mov eax, 1                           # return value
    pop esi
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
request_end:
    .align 16, 0xcc

# submit: EBP frame, locals 1, saved [ebx], params 2 (cdecl)
# FPO_DATA: ulOffStart=0x1070 cbProcSize=29 cdwLocals=1 cdwParams=2 cbProlog=7 cbRegs=1 fUseBP=0 cbFrame=FRAME_NONFPO
submit:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
    push ebx                             # save a callee-saved register
submit_body:
    mov dword ptr [ebp - 4], 0x4C000200  # local 0
capture:
    call 0x80401000                      # etwkrnl.sys!KiSystemService: enter the kernel, which logs the event
    mov eax, 2                           # return value
    pop ebx
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
submit_end:
