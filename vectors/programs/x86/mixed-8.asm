# mixed-8: eight frames alternating FPO and EBP frames, with 0-4 locals, 0-4 saved registers (two fUseBP functions), 0-3 parameters, cdecl and stdcall.
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> alpha -> beta -> gamma -> delta -> epsilon -> zeta -> eta.
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
    call alpha
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 0                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# alpha: FPO frame, locals 2, saved [esi], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1030 cbProcSize=45 cdwLocals=2 cdwParams=1 cbProlog=4 cbRegs=1 fUseBP=0 cbFrame=FRAME_FPO
alpha:
    sub esp, 8                           # locals: 2 dwords
    push esi                             # save a callee-saved register
alpha_body:
    mov dword ptr [esp + 4], 0x4C000100  # local 0
    mov dword ptr [esp + 8], 0x4C000101  # local 1
    push 0xA0000201                      # argument 2 of 2
    push 0xA0000200                      # argument 1 of 2
    call beta
    mov eax, 1                           # return value
    pop esi
    add esp, 8                           # drop the locals
    ret
alpha_end:
    .align 16, 0xcc

# beta: EBP frame, locals 3, saved [ebx, edi], params 2 (stdcall)
# FPO_DATA: ulOffStart=0x1060 cbProcSize=58 cdwLocals=3 cdwParams=2 cbProlog=8 cbRegs=2 fUseBP=0 cbFrame=FRAME_NONFPO
beta:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 12                          # locals: 3 dwords
    push ebx                             # save a callee-saved register
    push edi                             # save a callee-saved register
beta_body:
    mov dword ptr [ebp - 12], 0x4C000200 # local 0
    mov dword ptr [ebp - 4], 0x4C000202  # local 2
    push 0xA0000302                      # argument 3 of 3
    push 0xA0000301                      # argument 2 of 3
    push 0xA0000300                      # argument 1 of 3
    call gamma
    add esp, 12                          # cdecl: the caller removes the arguments
    mov eax, 2                           # return value
    pop edi
    pop ebx
    mov esp, ebp                         # drop the locals
    pop ebp
    ret 8                                # stdcall: the callee removes the arguments
beta_end:
    .align 16, 0xcc

# gamma: FPO frame, locals 0, saved [ebx, ebp, esi], params 3 (cdecl)
# FPO_DATA: ulOffStart=0x10A0 cbProcSize=30 cdwLocals=0 cdwParams=3 cbProlog=3 cbRegs=3 fUseBP=1 cbFrame=FRAME_FPO
gamma:
    push ebx                             # save a callee-saved register
    push ebp                             # save the caller's EBP: this function allocates EBP (fUseBP)
    push esi                             # save a callee-saved register
gamma_body:
    mov ebp, 0xBAD003EF                  # EBP is now a general register holding garbage
    push 0xA0000400                      # argument 1 of 1
    call delta
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 3                           # return value
    pop esi
    pop ebp
    pop ebx
    ret
gamma_end:
    .align 16, 0xcc

# delta: EBP frame, locals 0, saved [], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x10C0 cbProcSize=17 cdwLocals=0 cdwParams=1 cbProlog=3 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
delta:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
delta_body:
    call epsilon
    mov eax, 4                           # return value
    mov esp, ebp                         # restore ESP from the frame pointer
    pop ebp
    ret
delta_end:
    .align 16, 0xcc

# epsilon: FPO frame, locals 4, saved [ebx, esi, edi], params 0 (cdecl)
# FPO_DATA: ulOffStart=0x10E0 cbProcSize=49 cdwLocals=4 cdwParams=0 cbProlog=6 cbRegs=3 fUseBP=0 cbFrame=FRAME_FPO
epsilon:
    sub esp, 16                          # locals: 4 dwords
    push ebx                             # save a callee-saved register
    push esi                             # save a callee-saved register
    push edi                             # save a callee-saved register
epsilon_body:
    mov dword ptr [esp + 12], 0x4C000500 # local 0
    mov dword ptr [esp + 24], 0x4C000503 # local 3
    push 0xA0000601                      # argument 2 of 2
    push 0xA0000600                      # argument 1 of 2
    call zeta
    mov eax, 5                           # return value
    pop edi
    pop esi
    pop ebx
    add esp, 16                          # drop the locals
    ret
epsilon_end:
    .align 16, 0xcc

# zeta: FPO frame, locals 1, saved [ebx, ebp, esi, edi], params 2 (stdcall)
# FPO_DATA: ulOffStart=0x1120 cbProcSize=48 cdwLocals=1 cdwParams=2 cbProlog=7 cbRegs=4 fUseBP=1 cbFrame=FRAME_FPO
zeta:
    sub esp, 4                           # locals: 1 dword
    push ebx                             # save a callee-saved register
    push ebp                             # save the caller's EBP: this function allocates EBP (fUseBP)
    push esi                             # save a callee-saved register
    push edi                             # save a callee-saved register
zeta_body:
    mov ebp, 0xBAD006EF                  # EBP is now a general register holding garbage
    mov dword ptr [esp + 16], 0x4C000600 # local 0
    push 0xA0000700                      # argument 1 of 1
    call eta
    add esp, 4                           # cdecl: the caller removes the arguments
    mov eax, 6                           # return value
    pop edi
    pop esi
    pop ebp
    pop ebx
    add esp, 4                           # drop the locals
    ret 8                                # stdcall: the callee removes the arguments
zeta_end:
    .align 16, 0xcc

# eta: FPO frame, locals 0, saved [], params 1 (cdecl)
# FPO_DATA: ulOffStart=0x1150 cbProcSize=6 cdwLocals=0 cdwParams=1 cbProlog=0 cbRegs=0 fUseBP=0 cbFrame=FRAME_FPO
eta:
eta_body:
capture:
    mov eax, 7                           # return value
    ret
eta_end:
