# alloc-large-16: UWOP_ALLOC_LARGE with a 16-bit scaled size: 136 bytes, and 0x4e40 allocated through __chkstk (x64-unwind.md W2) with captures inside __chkstk and at the return address inside the prolog.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> f136 -> w2 -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 20312 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call f136
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# f136: pushes [], alloc 0x88, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x103e, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 7, CountOfCodes 2, FrameRegister none
#    0x7: UWOP_ALLOC_LARGE 0x88 (16-bit scaled form)
#   bytes: 01 07 02 00 07 01 11 00
f136:
    sub rsp, 0x88                                # UWOP_ALLOC_LARGE 0x88 (16-bit scaled form)
f136_body:
    mov ecx, 0xa002                              # argument 1
    call w2
    mov eax, 1                                   # return value
    add rsp, 0x88                                # add rsp, imm32
    ret
f136_end:
    .align 16, 0xcc

# w2: pushes [rsi], alloc 0x4e40 via __chkstk, epilog add rsp
# RUNTIME_FUNCTION 0x1040..0x1070, UnwindData 0x2010
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 14, CountOfCodes 3, FrameRegister none
#    0xe: UWOP_ALLOC_LARGE 0x4e40 (16-bit scaled form)
#    0x1: UWOP_PUSH_NONVOL rsi
#   bytes: 01 0e 03 00 0e 01 c8 09 01 60 00 00
w2:
w2_prolog_0:
    push rsi                                     # UWOP_PUSH_NONVOL rsi
w2_prolog_1:
    mov eax, 0x4e40                              # frame size for __chkstk
w2_prolog_2:
    call __chkstk                                # touch every page of the new frame; the return address lies inside this prolog (§1.8)
w2_prolog_3:
    sub rsp, rax                                 # UWOP_ALLOC_LARGE 0x4e40 (16-bit scaled form)
w2_prolog_4:
w2_body:
    mov rsi, 0xBAD0000000000202                  # rsi is saved; use it
    mov ecx, 0xa003                              # argument 1
    call inner
    mov eax, 2                                   # return value
    add rsp, 0x4e40                              # add rsp, imm32
    pop rsi
    ret
w2_end:
    .align 16, 0xcc

# inner: pushes [rdi], epilog of pops only
# RUNTIME_FUNCTION 0x1070..0x1082, UnwindData 0x201c
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 1, CountOfCodes 1, FrameRegister none
#    0x1: UWOP_PUSH_NONVOL rdi
#   bytes: 01 01 01 00 01 70 00 00
inner:
    push rdi                                     # UWOP_PUSH_NONVOL rdi
inner_body:
    mov rdi, 0xBAD0000000000303                  # rdi is saved; use it
capture:
    mov eax, 3                                   # return value
    pop rdi
    ret
inner_end:
    .align 16, 0xcc

# __chkstk: probes the pages of a large frame (RAX bytes) without moving RSP: a leaf without pdata (x64-unwind.md §1.10 W2).
__chkstk:
    lea r10, [rsp + 8]                           # the caller's RSP once this returns
    sub r10, rax                                 # the lowest byte of the frame it allocates
    and r10, -4096                               # that byte's page
    mov r11, rsp
    and r11, -4096                               # the page RSP is in, already touched
__chkstk_loop:
    cmp r11, r10
    je __chkstk_done
    sub r11, 4096
    test qword ptr [r11], r11                    # touch the next page down
    jmp __chkstk_loop
__chkstk_done:
chkstk_capture:
    ret                                          # RSP never moved: a leaf without pdata
__chkstk_end:
