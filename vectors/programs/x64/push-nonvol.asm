# push-nonvol: UWOP_PUSH_NONVOL for all eight nonvolatile registers (r12-r15 take 2-byte pushes), captured before every prolog instruction (partial prologs).
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> saver -> wide -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 288 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [rbx], alloc 0x20, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1024, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 5, CountOfCodes 2, FrameRegister none
#    0x5: UWOP_ALLOC_SMALL 0x20
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 05 02 00 05 32 01 30
main:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    sub rsp, 0x20                                # UWOP_ALLOC_SMALL 0x20
main_body:
    mov rbx, 0xBAD0000000000000                  # rbx is saved; use it
    mov ecx, 0xa001                              # argument 1
    call saver
    mov eax, 0                                   # return value
    add rsp, 0x20                                # add rsp, imm8
    pop rbx
    ret
main_end:
    .align 16, 0xcc

# saver: pushes [rbp, rbx, rsi, rdi], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1030..0x1078, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 8, CountOfCodes 5, FrameRegister none
#    0x8: UWOP_ALLOC_SMALL 0x28
#    0x4: UWOP_PUSH_NONVOL rdi
#    0x3: UWOP_PUSH_NONVOL rsi
#    0x2: UWOP_PUSH_NONVOL rbx
#    0x1: UWOP_PUSH_NONVOL rbp
#   bytes: 01 08 05 00 08 42 04 70 03 60 02 30 01 50 00 00
saver:
saver_prolog_0:
    push rbp                                     # UWOP_PUSH_NONVOL rbp
saver_prolog_1:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
saver_prolog_2:
    push rsi                                     # UWOP_PUSH_NONVOL rsi
saver_prolog_3:
    push rdi                                     # UWOP_PUSH_NONVOL rdi
saver_prolog_4:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
saver_prolog_5:
saver_body:
    mov rbp, 0xBAD0000000000101                  # rbp is saved; use it
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov rdi, 0xBAD0000000000103                  # rdi is saved; use it
    mov ecx, 0xa002                              # argument 1
    call wide
    mov eax, 1                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    pop rdi
    pop rsi
    pop rbx
    pop rbp
    ret
saver_end:
    .align 16, 0xcc

# wide: pushes [r12, r13, r14, r15], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1080..0x10d0, UnwindData 0x2018
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 12, CountOfCodes 5, FrameRegister none
#    0xc: UWOP_ALLOC_SMALL 0x28
#    0x8: UWOP_PUSH_NONVOL r15
#    0x6: UWOP_PUSH_NONVOL r14
#    0x4: UWOP_PUSH_NONVOL r13
#    0x2: UWOP_PUSH_NONVOL r12
#   bytes: 01 0c 05 00 0c 42 08 f0 06 e0 04 d0 02 c0 00 00
wide:
wide_prolog_0:
    push r12                                     # UWOP_PUSH_NONVOL r12
wide_prolog_1:
    push r13                                     # UWOP_PUSH_NONVOL r13
wide_prolog_2:
    push r14                                     # UWOP_PUSH_NONVOL r14
wide_prolog_3:
    push r15                                     # UWOP_PUSH_NONVOL r15
wide_prolog_4:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
wide_prolog_5:
wide_body:
    mov r12, 0xBAD0000000000204                  # r12 is saved; use it
    mov r13, 0xBAD0000000000205                  # r13 is saved; use it
    mov r14, 0xBAD0000000000206                  # r14 is saved; use it
    mov r15, 0xBAD0000000000207                  # r15 is saved; use it
    mov ecx, 0xa003                              # argument 1
    call inner
    mov eax, 2                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    pop r15
    pop r14
    pop r13
    pop r12
    ret
wide_end:
    .align 16, 0xcc

# inner: pushes [rbx, r12], epilog of pops only
# RUNTIME_FUNCTION 0x10d0..0x10f0, UnwindData 0x2028
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 3, CountOfCodes 2, FrameRegister none
#    0x3: UWOP_PUSH_NONVOL r12
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 03 02 00 03 c0 01 30
inner:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    push r12                                     # UWOP_PUSH_NONVOL r12
inner_body:
    mov rbx, 0xBAD0000000000300                  # rbx is saved; use it
    mov r12, 0xBAD0000000000304                  # r12 is saved; use it
capture:
    mov eax, 3                                   # return value
    pop r12
    pop rbx
    ret
inner_end:
