# epilog-add-imm32: v1 epilogs add rsp, imm32 (0x90 and 0x3f8); pops; ret, captured before each epilog instruction.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> f -> g -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 1304 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

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

# f: pushes [rbx], alloc 0x90, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x104a, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 8, CountOfCodes 3, FrameRegister none
#    0x8: UWOP_ALLOC_LARGE 0x90 (16-bit scaled form)
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 08 03 00 08 01 12 00 01 30 00 00
f:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    sub rsp, 0x90                                # UWOP_ALLOC_LARGE 0x90 (16-bit scaled form)
f_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov ecx, 0xa002                              # argument 1
    call g
    mov eax, 1                                   # return value
f_epilog_0:
    add rsp, 0x90                                # add rsp, imm32
f_epilog_1:
    pop rbx
f_epilog_2:
    ret
f_end:
    .align 16, 0xcc

# g: pushes [], alloc 0x3f8, epilog add rsp
# RUNTIME_FUNCTION 0x1050..0x106e, UnwindData 0x2014
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 7, CountOfCodes 2, FrameRegister none
#    0x7: UWOP_ALLOC_LARGE 0x3f8 (16-bit scaled form)
#   bytes: 01 07 02 00 07 01 7f 00
g:
    sub rsp, 0x3f8                               # UWOP_ALLOC_LARGE 0x3f8 (16-bit scaled form)
g_body:
    mov ecx, 0xa003                              # argument 1
    call inner
    mov eax, 2                                   # return value
g_epilog_0:
    add rsp, 0x3f8                               # add rsp, imm32
g_epilog_1:
    ret
g_end:
    .align 16, 0xcc

# inner: pushes [rsi], epilog of pops only
# RUNTIME_FUNCTION 0x1070..0x1082, UnwindData 0x201c
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 1, CountOfCodes 1, FrameRegister none
#    0x1: UWOP_PUSH_NONVOL rsi
#   bytes: 01 01 01 00 01 60 00 00
inner:
    push rsi                                     # UWOP_PUSH_NONVOL rsi
inner_body:
    mov rsi, 0xBAD0000000000302                  # rsi is saved; use it
capture:
    mov eax, 3                                   # return value
    pop rsi
    ret
inner_end:
