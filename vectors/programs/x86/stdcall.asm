# stdcall: stdcall functions (ret n) with 1-3 parameters, EBP and FPO frames: an unwind leaves the callee's arguments on the stack (x86-fpo.md §1.4 step 2).
#
# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),
# assembled at 0x00401000 (.text at RVA 0x1000 of an image based at 0x00400000).
# Entry point: main, entered with a return address of 0; every function returns normally.
# Call chain: main -> open_file -> read_block -> checksum.
# Each function's FPO_DATA record (x86-fpo.md §1.1) is quoted above it.

# main: EBP frame, locals 1, saved [], params 0 (cdecl)
# FPO_DATA: ulOffStart=0x1000 cbProcSize=37 cdwLocals=1 cdwParams=0 cbProlog=6 cbRegs=0 fUseBP=0 cbFrame=FRAME_NONFPO
main:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
main_body:
    mov dword ptr [ebp - 4], 0x4C000000  # local 0
    push 0xA0000101                      # argument 2 of 2
    push 0xA0000100                      # argument 1 of 2
    call open_file
    mov eax, 0                           # return value
    mov esp, ebp                         # drop the locals
    pop ebp
    ret
main_end:
    .align 16, 0xcc

# open_file: EBP frame, locals 1, saved [esi], params 2 (stdcall)
# FPO_DATA: ulOffStart=0x1030 cbProcSize=46 cdwLocals=1 cdwParams=2 cbProlog=7 cbRegs=1 fUseBP=0 cbFrame=FRAME_NONFPO
open_file:
    push ebp                             # save the caller's frame pointer
    mov ebp, esp                         # EBP frame: [ebp] = caller's EBP, [ebp+4] = return address
    sub esp, 4                           # locals: 1 dword
    push esi                             # save a callee-saved register
open_file_body:
    mov dword ptr [ebp - 4], 0x4C000100  # local 0
    push 0xA0000202                      # argument 3 of 3
    push 0xA0000201                      # argument 2 of 3
    push 0xA0000200                      # argument 1 of 3
    call read_block
    mov eax, 1                           # return value
    pop esi
    mov esp, ebp                         # drop the locals
    pop ebp
    ret 8                                # stdcall: the callee removes the arguments
open_file_end:
    .align 16, 0xcc

# read_block: FPO frame, locals 2, saved [ebx, edi], params 3 (stdcall)
# FPO_DATA: ulOffStart=0x1060 cbProcSize=44 cdwLocals=2 cdwParams=3 cbProlog=5 cbRegs=2 fUseBP=0 cbFrame=FRAME_FPO
read_block:
    sub esp, 8                           # locals: 2 dwords
    push ebx                             # save a callee-saved register
    push edi                             # save a callee-saved register
read_block_body:
    mov dword ptr [esp + 8], 0x4C000200  # local 0
    mov dword ptr [esp + 12], 0x4C000201 # local 1
    push 0xA0000300                      # argument 1 of 1
    call checksum
    mov eax, 2                           # return value
    pop edi
    pop ebx
    add esp, 8                           # drop the locals
    ret 12                               # stdcall: the callee removes the arguments
read_block_end:
    .align 16, 0xcc

# checksum: FPO frame, locals 0, saved [], params 1 (stdcall)
# FPO_DATA: ulOffStart=0x1090 cbProcSize=8 cdwLocals=0 cdwParams=1 cbProlog=0 cbRegs=0 fUseBP=0 cbFrame=FRAME_FPO
checksum:
checksum_body:
capture:
    mov eax, 3                           # return value
    ret 4                                # stdcall: the callee removes the arguments
checksum_end:
