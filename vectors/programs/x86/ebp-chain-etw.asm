# ebp-chain-etw: ebp-chain-5 logging an ETW event at the capture in f4: every frame is an EBP frame, so after the logging path's frames the ETW array equals the return addresses of the truth (x86-fpo.md §6).
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> f1 -> f2 -> f3 -> f4.
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
    call f1
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 0                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# f1: EBP frame, locals 2, saved [esi], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1030 cbProcSize=49 cdwLocals=2 cdwParams=1 cbProlog=7 cbRegs=1 fUseBP=0 cbFrame=FRAME_NONFPO
f1:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 8                           # locals: 2 dwords
    push esi                             # save a callee-saved register
f1_body:
    mov dword ptr [ebp - 8], 0x4C000100  # local 0
    mov dword ptr [ebp - 4], 0x4C000101  # local 1
    push 0xA0000201                      # argument 2 of 2
    push 0xA0000200                      # argument 1 of 2
    call f2
    add esp, 8                           # cdecl: the caller removes the arguments
    mov eax, 1                           # return value
    pop esi
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
f1_end:
    .align 16, 0xcc

# f2: EBP frame, locals 0, saved [], params 2 (cdecl)
# FPO_DATA: ulOffStart=0x1070 cbProcSize=25 cdwLocals=0 cdwParams=2 cbProlog=3 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
f2:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
f2_body:
    push 0xA0000300                      # argument 1 of 1
    call f3
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 2                           # return value
    mov esp, ebp                         # restore ESP from the frame pointer
    pop ebp
    ret
f2_end:
    .align 16, 0xcc

# f3: EBP frame, locals 3, saved [ebx, esi, edi], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1090 cbProcSize=58 cdwLocals=3 cdwParams=1 cbProlog=9 cbRegs=3 fUseBP=0 cbFrame=FRAME_NONFPO
f3:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 12                          # locals: 3 dwords
    push ebx                             # save a callee-saved register
    push esi                             # save a callee-saved register
    push edi                             # save a callee-saved register
f3_body:
    mov dword ptr [ebp - 12], 0x4C000300 # local 0
    mov dword ptr [ebp - 4], 0x4C000302  # local 2
    push 0xA0000402                      # argument 3 of 3
    push 0xA0000401                      # argument 2 of 3
    push 0xA0000400                      # argument 1 of 3
    call f4
    add esp, 12                          # cdecl: the caller removes the arguments
    mov eax, 3                           # return value
    pop edi
    pop esi
    pop ebx
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
f3_end:
    .align 16, 0xcc

# f4: EBP frame, locals 1, saved [], params 3 (cdecl)
# FPO_DATA: ulOffStart=0x10D0 cbProcSize=27 cdwLocals=1 cdwParams=3 cbProlog=6 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
f4:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
f4_body:
    mov dword ptr [ebp - 4], 0x4C000400  # local 0
capture:
    call 0x77001000                      # etwlog.dll!EtwEventWrite: log an event with the stack
    mov eax, 4                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
f4_end:
