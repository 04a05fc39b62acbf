# epilog-pops: v1 epilogs without a stack adjustment: inner pops five registers then ret; mid ends in rep ret (f3 c3).
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> mid -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 216 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call mid
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# mid: pushes [rbx, rsi], alloc 0x28, epilog add rsp, exit rep-ret
# RUNTIME_FUNCTION 0x1020..0x1051, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 6, CountOfCodes 3, FrameRegister none
#    0x6: UWOP_ALLOC_SMALL 0x28
#    0x2: UWOP_PUSH_NONVOL rsi
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 06 03 00 06 42 02 60 01 30 00 00
mid:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    push rsi                                     # UWOP_PUSH_NONVOL rsi
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
mid_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov ecx, 0xa002                              # argument 1
    call inner
    mov eax, 1                                   # return value
mid_epilog_0:
    add rsp, 0x28                                # add rsp, imm8
mid_epilog_1:
    pop rsi
mid_epilog_2:
    pop rbx
mid_epilog_3:
    rep ret                                      # F3 C3
mid_end:
    .align 16, 0xcc

# inner: pushes [rbx, rsi, rdi, r12, r13], epilog of pops only
# RUNTIME_FUNCTION 0x1060..0x10a6, UnwindData 0x2014
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 7, CountOfCodes 5, FrameRegister none
#    0x7: UWOP_PUSH_NONVOL r13
#    0x5: UWOP_PUSH_NONVOL r12
#    0x3: UWOP_PUSH_NONVOL rdi
#    0x2: UWOP_PUSH_NONVOL rsi
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 07 05 00 07 d0 05 c0 03 70 02 60 01 30 00 00
inner:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    push rsi                                     # UWOP_PUSH_NONVOL rsi
    push rdi                                     # UWOP_PUSH_NONVOL rdi
    push r12                                     # UWOP_PUSH_NONVOL r12
    push r13                                     # UWOP_PUSH_NONVOL r13
inner_body:
    mov rbx, 0xBAD0000000000200                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000202                  # rsi is saved; use it
    mov rdi, 0xBAD0000000000203                  # rdi is saved; use it
    mov r12, 0xBAD0000000000204                  # r12 is saved; use it
    mov r13, 0xBAD0000000000205                  # r13 is saved; use it
capture:
    mov eax, 2                                   # return value
inner_epilog_0:
    pop r13
inner_epilog_1:
    pop r12
inner_epilog_2:
    pop rdi
inner_epilog_3:
    pop rsi
inner_epilog_4:
    pop rbx
inner_epilog_5:
    ret
inner_end:
