# epilog-lea: v1 epilogs lea rsp, [rbp+8] (MinGW's FrameOffset 0x20 frame: 48 8d 65 08 5b 5d c3) and lea rsp, [rbp+0x90] after alloca (48 8d a5 90 00 00 00); pops; ret.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> f -> g -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 408 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

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

# f: pushes [rbp, rbx], alloc 0x28, frame rbp+0x20, epilog lea rsp
# RUNTIME_FUNCTION 0x1020..0x104b, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 11, CountOfCodes 4, FrameRegister rbp, FrameOffset 0x20
#    0xb: UWOP_SET_FPREG
#    0x6: UWOP_ALLOC_SMALL 0x28
#    0x2: UWOP_PUSH_NONVOL rbx
#    0x1: UWOP_PUSH_NONVOL rbp
#   bytes: 01 0b 04 25 0b 03 06 42 02 30 01 50
f:
    push rbp                                     # UWOP_PUSH_NONVOL rbp
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
    lea rbp, [rsp + 0x20]                        # UWOP_SET_FPREG: FrameRegister rbp, FrameOffset 0x20
f_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov ecx, 0xa002                              # argument 1
    call g
    mov eax, 1                                   # return value
f_epilog_0:
    lea rsp, [rbp + 8]                           # RSP = rbp - FrameOffset + alloc: back at the pushes
f_epilog_1:
    pop rbx
f_epilog_2:
    pop rbp
f_epilog_3:
    ret
f_end:
    .align 16, 0xcc

# g: pushes [rbp, rsi, rdi], alloc 0x90, frame rbp+0, alloca 48, epilog lea rsp
# RUNTIME_FUNCTION 0x1050..0x1097, UnwindData 0x2014
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 13, CountOfCodes 6, FrameRegister rbp, FrameOffset 0x0
#    0xd: UWOP_SET_FPREG
#    0xa: UWOP_ALLOC_LARGE 0x90 (16-bit scaled form)
#    0x3: UWOP_PUSH_NONVOL rdi
#    0x2: UWOP_PUSH_NONVOL rsi
#    0x1: UWOP_PUSH_NONVOL rbp
#   bytes: 01 0d 06 05 0d 03 0a 01 12 00 03 70 02 60 01 50
g:
    push rbp                                     # UWOP_PUSH_NONVOL rbp
    push rsi                                     # UWOP_PUSH_NONVOL rsi
    push rdi                                     # UWOP_PUSH_NONVOL rdi
    sub rsp, 0x90                                # UWOP_ALLOC_LARGE 0x90 (16-bit scaled form)
    mov rbp, rsp                                 # UWOP_SET_FPREG: FrameRegister rbp, FrameOffset 0x0
g_body:
    mov rsi, 0xBAD0000000000202                  # rsi is saved; use it
    mov rdi, 0xBAD0000000000203                  # rdi is saved; use it
    mov eax, 48                                  # alloca: a size known only at run time
    sub rsp, rax                                 # RSP moves by a run-time amount; only rbp locates the frame now
    mov qword ptr [rsp], rax                     # touch the allocation
    mov ecx, 0xa003                              # argument 1
    call inner
    mov eax, 2                                   # return value
g_epilog_0:
    lea rsp, [rbp + 0x90]                        # RSP = rbp - FrameOffset + alloc: back at the pushes
g_epilog_1:
    pop rdi
g_epilog_2:
    pop rsi
g_epilog_3:
    pop rbp
g_epilog_4:
    ret
g_end:
    .align 16, 0xcc

# inner: pushes [rbx], epilog of pops only
# RUNTIME_FUNCTION 0x10a0..0x10b2, UnwindData 0x2024
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
