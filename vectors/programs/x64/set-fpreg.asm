# set-fpreg: UWOP_SET_FPREG: w1 is x64-unwind.md W1 (rbp = rsp + 0x80, rsi saved at 0x20, alloca in the body, epilog lea rsp, [rbp+0x80]); r13fn uses r13 with FrameOffset 0x10 (epilog 49 8d 65 10).
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> w1 -> r13fn -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 520 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call w1
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# w1: pushes [rbp, rbx, rdi], alloc 0x100, frame rbp+0x80, save rsi@0x20, alloca 64, epilog lea rsp
# RUNTIME_FUNCTION 0x1020..0x107f, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 23, CountOfCodes 8, FrameRegister rbp, FrameOffset 0x80
#   0x17: UWOP_SAVE_NONVOL rsi at 0x20
#   0x12: UWOP_SET_FPREG
#    0xa: UWOP_ALLOC_LARGE 0x100 (16-bit scaled form)
#    0x3: UWOP_PUSH_NONVOL rdi
#    0x2: UWOP_PUSH_NONVOL rbx
#    0x1: UWOP_PUSH_NONVOL rbp
#   bytes: 01 17 08 85 17 64 04 00 12 03 0a 01 20 00 03 70 02 30 01 50
w1:
w1_prolog_0:
    push rbp                                     # UWOP_PUSH_NONVOL rbp
w1_prolog_1:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
w1_prolog_2:
    push rdi                                     # UWOP_PUSH_NONVOL rdi
w1_prolog_3:
    sub rsp, 0x100                               # UWOP_ALLOC_LARGE 0x100 (16-bit scaled form)
w1_prolog_4:
    lea rbp, [rsp + 0x80]                        # UWOP_SET_FPREG: FrameRegister rbp, FrameOffset 0x80
w1_prolog_5:
    mov qword ptr [rsp + 0x20], rsi              # UWOP_SAVE_NONVOL rsi at 0x20
w1_prolog_6:
w1_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rdi, 0xBAD0000000000103                  # rdi is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov eax, 64                                  # alloca: a size known only at run time
    sub rsp, rax                                 # RSP moves by a run-time amount; only rbp locates the frame now
    mov qword ptr [rsp], rax                     # touch the allocation
capture_w1:
    mov ecx, 0xa002                              # argument 1
    call r13fn
    mov eax, 1                                   # return value
    mov rsi, qword ptr [rbp - 0x60]              # restore the saved register
w1_epilog_0:
    lea rsp, [rbp + 0x80]                        # RSP = rbp - FrameOffset + alloc: back at the pushes
w1_epilog_1:
    pop rdi
w1_epilog_2:
    pop rbx
w1_epilog_3:
    pop rbp
w1_epilog_4:
    ret
w1_end:
    .align 16, 0xcc

# r13fn: pushes [r13], alloc 0x20, frame r13+0x10, epilog lea rsp
# RUNTIME_FUNCTION 0x1080..0x10a1, UnwindData 0x201c
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 11, CountOfCodes 3, FrameRegister r13, FrameOffset 0x10
#    0xb: UWOP_SET_FPREG
#    0x6: UWOP_ALLOC_SMALL 0x20
#    0x2: UWOP_PUSH_NONVOL r13
#   bytes: 01 0b 03 1d 0b 03 06 32 02 d0 00 00
r13fn:
r13fn_prolog_0:
    push r13                                     # UWOP_PUSH_NONVOL r13
r13fn_prolog_1:
    sub rsp, 0x20                                # UWOP_ALLOC_SMALL 0x20
r13fn_prolog_2:
    lea r13, [rsp + 0x10]                        # UWOP_SET_FPREG: FrameRegister r13, FrameOffset 0x10
r13fn_prolog_3:
r13fn_body:
    mov ecx, 0xa003                              # argument 1
    call inner
    mov eax, 2                                   # return value
r13fn_epilog_0:
    lea rsp, [r13 + 0x10]                        # RSP = r13 - FrameOffset + alloc: back at the pushes
r13fn_epilog_1:
    pop r13
r13fn_epilog_2:
    ret
r13fn_end:
    .align 16, 0xcc

# inner: pushes [rbx], epilog of pops only
# RUNTIME_FUNCTION 0x10b0..0x10c2, UnwindData 0x2028
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
