# chained: UNW_FLAG_CHAININFO: hot's fragment (after every function) saves rsi in the home area (x64-unwind.md W4); cool's fragment (before every function: a negative prolog offset for the parent) saves r12 and keeps cool's rbp frame.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> hot -> cool -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 232 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# cool_chained: the chained fragment of cool, placed before every function; it saves r12 only on this path.
# RUNTIME_FUNCTION 0x1000..0x1020, UnwindData 0x2030
# UNWIND_INFO: Version 1, Flags UNW_FLAG_CHAININFO, SizeOfProlog 5, CountOfCodes 2, FrameRegister rbp, FrameOffset 0x20
#    0x5: UWOP_SAVE_NONVOL r12 at 0x40
#   chained to RUNTIME_FUNCTION 0x1060..0x1083, UnwindData 0x2024
#   bytes: 21 05 02 25 05 c4 08 00 60 10 00 00 83 10 00 00 24 20 00 00
cool_chained:
cool_chained_prolog_0:
    mov qword ptr [rsp + 0x40], r12              # UWOP_SAVE_NONVOL r12 at 0x40: home area slot 0
cool_chained_prolog_1:
cool_chained_body:
    mov r12, 0xBAD0000000000204                  # r12 is saved; use it
capture_cool:
    mov ecx, 0xa003                              # argument 1
    call inner
    mov r12, qword ptr [rsp + 0x40]              # restore it
    jmp cool_rejoin                              # back into cool: not an epilog (§1.5 D)
cool_chained_end:
    .align 16, 0xcc

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x1038, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call hot
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# hot: pushes [rbx], alloc 0x20, epilog add rsp
# RUNTIME_FUNCTION 0x1040..0x105c, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 5, CountOfCodes 2, FrameRegister none
#    0x5: UWOP_ALLOC_SMALL 0x20
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 05 02 00 05 32 01 30
hot:
hot_prolog_0:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
hot_prolog_1:
    sub rsp, 0x20                                # UWOP_ALLOC_SMALL 0x20
hot_prolog_2:
hot_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    jmp hot_chained                              # continue in the chained fragment: not an epilog (§1.5 D)
hot_rejoin:
    mov eax, 1                                   # return value
    add rsp, 0x20                                # add rsp, imm8
    pop rbx
    ret
hot_end:
    .align 16, 0xcc

# cool: pushes [rbp, rdi], alloc 0x28, frame rbp+0x20, epilog add rsp
# RUNTIME_FUNCTION 0x1060..0x1083, UnwindData 0x2024
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 11, CountOfCodes 4, FrameRegister rbp, FrameOffset 0x20
#    0xb: UWOP_SET_FPREG
#    0x6: UWOP_ALLOC_SMALL 0x28
#    0x2: UWOP_PUSH_NONVOL rdi
#    0x1: UWOP_PUSH_NONVOL rbp
#   bytes: 01 0b 04 25 0b 03 06 42 02 70 01 50
cool:
cool_prolog_0:
    push rbp                                     # UWOP_PUSH_NONVOL rbp
cool_prolog_1:
    push rdi                                     # UWOP_PUSH_NONVOL rdi
cool_prolog_2:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
cool_prolog_3:
    lea rbp, [rsp + 0x20]                        # UWOP_SET_FPREG: FrameRegister rbp, FrameOffset 0x20
cool_prolog_4:
cool_body:
    mov rdi, 0xBAD0000000000203                  # rdi is saved; use it
    jmp cool_chained                             # continue in the chained fragment: not an epilog (§1.5 D)
cool_rejoin:
    mov eax, 2                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    pop rdi
    pop rbp
    ret
cool_end:
    .align 16, 0xcc

# inner: pushes [rbx], epilog of pops only
# RUNTIME_FUNCTION 0x1090..0x10a2, UnwindData 0x2044
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 1, CountOfCodes 1, FrameRegister none
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 01 01 00 01 30 00 00
inner:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
inner_body:
    mov rbx, 0xBAD0000000000300                  # rbx is saved; use it
capture:
    mov eax, 3                                   # return value
    pop rbx
    ret
inner_end:
    .align 16, 0xcc

# hot_chained: the chained fragment of hot, placed after every function; it saves rsi only on this path.
# RUNTIME_FUNCTION 0x10b0..0x10d0, UnwindData 0x2010
# UNWIND_INFO: Version 1, Flags UNW_FLAG_CHAININFO, SizeOfProlog 5, CountOfCodes 2, FrameRegister none
#    0x5: UWOP_SAVE_NONVOL rsi at 0x30
#   chained to RUNTIME_FUNCTION 0x1040..0x105c, UnwindData 0x2008
#   bytes: 21 05 02 00 05 64 06 00 40 10 00 00 5c 10 00 00 08 20 00 00
hot_chained:
hot_chained_prolog_0:
    mov qword ptr [rsp + 0x30], rsi              # UWOP_SAVE_NONVOL rsi at 0x30: home area slot 0
hot_chained_prolog_1:
hot_chained_body:
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
capture_hot:
    mov ecx, 0xa002                              # argument 1
    call cool
    mov rsi, qword ptr [rsp + 0x30]              # restore it
    jmp hot_rejoin                               # back into hot: not an epilog (§1.5 D)
hot_chained_end:
