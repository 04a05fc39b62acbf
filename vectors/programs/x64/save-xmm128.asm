# save-xmm128: UWOP_SAVE_XMM128 (offsets scaled by 16): xsaver saves xmm6, xmm7 and xmm15 with movaps and rsi with mov; inner saves xmm8 at offset 0.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> xsaver -> inner.
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
    call xsaver
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# xsaver: pushes [rbx], alloc 0x60, save rsi@0x50, save xmm6@0x20, save xmm7@0x30, save xmm15@0x40, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x1085, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 26, CountOfCodes 10, FrameRegister none
#   0x1a: UWOP_SAVE_XMM128 xmm15 at 0x40
#   0x14: UWOP_SAVE_XMM128 xmm7 at 0x30
#    0xf: UWOP_SAVE_XMM128 xmm6 at 0x20
#    0xa: UWOP_SAVE_NONVOL rsi at 0x50
#    0x5: UWOP_ALLOC_SMALL 0x60
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 1a 0a 00 1a f8 04 00 14 78 03 00 0f 68 02 00 0a 64 0a 00 05 b2 01 30
xsaver:
xsaver_prolog_0:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
xsaver_prolog_1:
    sub rsp, 0x60                                # UWOP_ALLOC_SMALL 0x60
xsaver_prolog_2:
    mov qword ptr [rsp + 0x50], rsi              # UWOP_SAVE_NONVOL rsi at 0x50
xsaver_prolog_3:
    movaps xmmword ptr [rsp + 0x20], xmm6        # UWOP_SAVE_XMM128 xmm6 at 0x20
xsaver_prolog_4:
    movaps xmmword ptr [rsp + 0x30], xmm7        # UWOP_SAVE_XMM128 xmm7 at 0x30
xsaver_prolog_5:
    movaps xmmword ptr [rsp + 0x40], xmm15       # UWOP_SAVE_XMM128 xmm15 at 0x40
xsaver_prolog_6:
xsaver_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    pcmpeqd xmm6, xmm6                           # xmm6 is saved; use it
    pcmpeqd xmm7, xmm7                           # xmm7 is saved; use it
    pcmpeqd xmm15, xmm15                         # xmm15 is saved; use it
    mov ecx, 0xa002                              # argument 1
    call inner
    mov eax, 1                                   # return value
    mov rsi, qword ptr [rsp + 0x50]              # restore the saved register
    movaps xmm6, xmmword ptr [rsp + 0x20]        # restore the saved XMM register
    movaps xmm7, xmmword ptr [rsp + 0x30]        # restore the saved XMM register
    movaps xmm15, xmmword ptr [rsp + 0x40]       # restore the saved XMM register
xsaver_epilog_0:
    add rsp, 0x60                                # add rsp, imm8
xsaver_epilog_1:
    pop rbx
xsaver_epilog_2:
    ret
xsaver_end:
    .align 16, 0xcc

# inner: pushes [], alloc 0x18, save xmm8@0, epilog add rsp
# RUNTIME_FUNCTION 0x1090..0x10ad, UnwindData 0x2020
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 9, CountOfCodes 3, FrameRegister none
#    0x9: UWOP_SAVE_XMM128 xmm8 at 0x0
#    0x4: UWOP_ALLOC_SMALL 0x18
#   bytes: 01 09 03 00 09 88 00 00 04 22 00 00
inner:
    sub rsp, 0x18                                # UWOP_ALLOC_SMALL 0x18
    movaps xmmword ptr [rsp + 0], xmm8           # UWOP_SAVE_XMM128 xmm8 at 0x0
inner_body:
    pcmpeqd xmm8, xmm8                           # xmm8 is saved; use it
capture:
    mov eax, 2                                   # return value
    movaps xmm8, xmmword ptr [rsp + 0]           # restore the saved XMM register
    add rsp, 0x18                                # add rsp, imm8
    ret
inner_end:
