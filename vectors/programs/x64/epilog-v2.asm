# epilog-v2: UNWIND_INFO version 2: f is x64-unwind.md W3 byte for byte (EPILOG size 3 at the end and at End-0xf; it returns through the early one); g pops r12/r13 (2-byte pops); inner has no allocation.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> f -> g -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 248 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call f
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# f: pushes [rsi, rdi], alloc 0x28, epilog add rsp, early return
# RUNTIME_FUNCTION 0x1020..0x1061, UnwindData 0x2008
# UNWIND_INFO: Version 2, Flags 0, SizeOfProlog 6, CountOfCodes 5, FrameRegister none
#   UWOP_EPILOG size 3, one ending at EndAddress; one at EndAddress-0xf
#    0x6: UWOP_ALLOC_SMALL 0x28
#    0x2: UWOP_PUSH_NONVOL rdi
#    0x1: UWOP_PUSH_NONVOL rsi
#   bytes: 02 06 05 00 03 16 0f 06 06 42 02 70 01 60 00 00
f:
    push rsi                                     # UWOP_PUSH_NONVOL rsi
    push rdi                                     # UWOP_PUSH_NONVOL rdi
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
f_body:
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov rdi, 0xBAD0000000000103                  # rdi is saved; use it
    mov ecx, 0xa002                              # argument 1
    call g
    mov eax, 1                                   # return value
    cmp eax, 1                                   # the early return is taken in this run
    jne f_slow
f_epilog_0:
    add rsp, 0x28                                # add rsp, imm8
f_epilog_1:
    pop rdi
f_epilog_2:
    pop rsi
f_epilog_3:
    ret
f_slow:
    mov eax, -1                                  # not reached in this run
    add rsp, 0x28                                # add rsp, imm8
    pop rdi
    pop rsi
    ret
f_end:
    .align 16, 0xcc

# g: pushes [rbx, r12, r13], alloc 0x20, epilog add rsp
# RUNTIME_FUNCTION 0x1070..0x10b0, UnwindData 0x2018
# UNWIND_INFO: Version 2, Flags 0, SizeOfProlog 9, CountOfCodes 6, FrameRegister none
#   UWOP_EPILOG size 6, one ending at EndAddress
#    0x9: UWOP_ALLOC_SMALL 0x20
#    0x5: UWOP_PUSH_NONVOL r13
#    0x3: UWOP_PUSH_NONVOL r12
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 02 09 06 00 06 16 00 06 09 32 05 d0 03 c0 01 30
g:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    push r12                                     # UWOP_PUSH_NONVOL r12
    push r13                                     # UWOP_PUSH_NONVOL r13
    sub rsp, 0x20                                # UWOP_ALLOC_SMALL 0x20
g_body:
    mov rbx, 0xBAD0000000000200                  # rbx is saved; use it
    mov r12, 0xBAD0000000000204                  # r12 is saved; use it
    mov r13, 0xBAD0000000000205                  # r13 is saved; use it
    mov ecx, 0xa003                              # argument 1
    call inner
    mov eax, 2                                   # return value
g_epilog_0:
    add rsp, 0x20                                # add rsp, imm8
g_epilog_1:
    pop r13
g_epilog_2:
    pop r12
g_epilog_3:
    pop rbx
g_epilog_4:
    ret
g_end:
    .align 16, 0xcc

# inner: pushes [r14], epilog of pops only
# RUNTIME_FUNCTION 0x10b0..0x10c4, UnwindData 0x2028
# UNWIND_INFO: Version 2, Flags 0, SizeOfProlog 2, CountOfCodes 3, FrameRegister none
#   UWOP_EPILOG size 3, one ending at EndAddress
#    0x2: UWOP_PUSH_NONVOL r14
#   bytes: 02 02 03 00 03 16 00 06 02 e0 00 00
inner:
    push r14                                     # UWOP_PUSH_NONVOL r14
inner_body:
    mov r14, 0xBAD0000000000306                  # r14 is saved; use it
capture:
    mov eax, 3                                   # return value
inner_epilog_0:
    pop r14
inner_epilog_1:
    ret
inner_end:
