# alloc-small: UWOP_ALLOC_SMALL for 40, 128 (the largest, whose add rsp needs an imm32) and 8 bytes (the smallest).
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> max128 -> small8.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 264 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call max128
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# max128: pushes [rbx], alloc 0x80, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x104a, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 8, CountOfCodes 2, FrameRegister none
#    0x8: UWOP_ALLOC_SMALL 0x80
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 08 02 00 08 f2 01 30
max128:
max128_prolog_0:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
max128_prolog_1:
    sub rsp, 0x80                                # UWOP_ALLOC_SMALL 0x80
max128_prolog_2:
max128_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov ecx, 0xa002                              # argument 1
    call small8
    mov eax, 1                                   # return value
max128_epilog_0:
    add rsp, 0x80                                # add rsp, imm32
max128_epilog_1:
    pop rbx
max128_epilog_2:
    ret
max128_end:
    .align 16, 0xcc

# small8: pushes [], alloc 8, epilog add rsp
# RUNTIME_FUNCTION 0x1050..0x105e, UnwindData 0x2010
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x8
#   bytes: 01 04 01 00 04 02 00 00
small8:
small8_prolog_0:
    sub rsp, 8                                   # UWOP_ALLOC_SMALL 0x8
small8_prolog_1:
small8_body:
capture:
    mov eax, 2                                   # return value
    add rsp, 8                                   # add rsp, imm8
    ret
small8_end:
