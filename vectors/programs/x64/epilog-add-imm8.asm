# epilog-add-imm8: v1 epilogs add rsp, imm8 (40, and 120 just under the signed-imm8 limit); pops; ret, captured before each epilog instruction.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> f -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 304 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

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

# f: pushes [rbx, rsi], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x1050, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 6, CountOfCodes 3, FrameRegister none
#    0x6: UWOP_ALLOC_SMALL 0x28
#    0x2: UWOP_PUSH_NONVOL rsi
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 06 03 00 06 42 02 60 01 30 00 00
f:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    push rsi                                     # UWOP_PUSH_NONVOL rsi
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
f_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov ecx, 0xa002                              # argument 1
    call inner
    mov eax, 1                                   # return value
f_epilog_0:
    add rsp, 0x28                                # add rsp, imm8
f_epilog_1:
    pop rsi
f_epilog_2:
    pop rbx
f_epilog_3:
    ret
f_end:
    .align 16, 0xcc

# inner: pushes [rdi], alloc 0x78, epilog add rsp
# RUNTIME_FUNCTION 0x1050..0x106a, UnwindData 0x2014
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 5, CountOfCodes 2, FrameRegister none
#    0x5: UWOP_ALLOC_SMALL 0x78
#    0x1: UWOP_PUSH_NONVOL rdi
#   bytes: 01 05 02 00 05 e2 01 70
inner:
    push rdi                                     # UWOP_PUSH_NONVOL rdi
    sub rsp, 0x78                                # UWOP_ALLOC_SMALL 0x78
inner_body:
    mov rdi, 0xBAD0000000000203                  # rdi is saved; use it
capture:
    mov eax, 2                                   # return value
inner_epilog_0:
    add rsp, 0x78                                # add rsp, imm8
inner_epilog_1:
    pop rdi
inner_epilog_2:
    ret
inner_end:
