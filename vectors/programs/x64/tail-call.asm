# tail-call: epilogs ending in tail calls: f jumps to g (jmp rel), g jumps to h through rax (48 ff e0); at the capture in h, f and g are gone and h returns to main.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> f =[tail jmp]=> g =[tail jmp]=> h.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 232 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

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

# f: pushes [rbx, rsi], alloc 0x28, epilog add rsp, exit tail-jmp
# RUNTIME_FUNCTION 0x1020..0x1047, UnwindData 0x2008
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
capture_f:
    mov ecx, 0xa002                              # argument 1 for g, entered by the tail call
f_epilog_0:
    add rsp, 0x28                                # add rsp, imm8
f_epilog_1:
    pop rsi
f_epilog_2:
    pop rbx
f_epilog_3:
    jmp g                                        # tail call: the return address stays for the callee
f_end:
    .align 16, 0xcc

# g: pushes [rdi], alloc 0x20, epilog add rsp, exit tail-jmp-rax
# RUNTIME_FUNCTION 0x1050..0x1073, UnwindData 0x2014
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 5, CountOfCodes 2, FrameRegister none
#    0x5: UWOP_ALLOC_SMALL 0x20
#    0x1: UWOP_PUSH_NONVOL rdi
#   bytes: 01 05 02 00 05 32 01 70
g:
    push rdi                                     # UWOP_PUSH_NONVOL rdi
    sub rsp, 0x20                                # UWOP_ALLOC_SMALL 0x20
g_body:
    mov rdi, 0xBAD0000000000203                  # rdi is saved; use it
capture_g:
    mov ecx, 0xa003                              # argument 1 for h, entered by the tail call
    lea rax, [rip + h]                           # the tail-call target
g_epilog_0:
    add rsp, 0x20                                # add rsp, imm8
g_epilog_1:
    pop rdi
g_epilog_2:
    rex64 jmp rax                                # tail call through REX.W FF /4 (48 FF E0)
g_end:
    .align 16, 0xcc

# h: pushes [rbx], epilog of pops only
# RUNTIME_FUNCTION 0x1080..0x1092, UnwindData 0x201c
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 1, CountOfCodes 1, FrameRegister none
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 01 01 00 01 30 00 00
h:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
h_body:
    mov rbx, 0xBAD0000000000300                  # rbx is saved; use it
capture:
    mov eax, 3                                   # return value
    pop rbx
    ret
h_end:
