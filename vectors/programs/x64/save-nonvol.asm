# save-nonvol: UWOP_SAVE_NONVOL: saver saves rsi and rdi in its frame and r12 in the home area above its return address; inner saves at offsets 0 and 8 of a frame with no home area.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> saver -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 192 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call saver
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# saver: pushes [rbx], alloc 0x30, save rsi@0x20, save rdi@0x28, save r12@0x40, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x1080, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 20, CountOfCodes 8, FrameRegister none
#   0x14: UWOP_SAVE_NONVOL r12 at 0x40
#    0xf: UWOP_SAVE_NONVOL rdi at 0x28
#    0xa: UWOP_SAVE_NONVOL rsi at 0x20
#    0x5: UWOP_ALLOC_SMALL 0x30
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 14 08 00 14 c4 08 00 0f 74 05 00 0a 64 04 00 05 52 01 30
saver:
saver_prolog_0:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
saver_prolog_1:
    sub rsp, 0x30                                # UWOP_ALLOC_SMALL 0x30
saver_prolog_2:
    mov qword ptr [rsp + 0x20], rsi              # UWOP_SAVE_NONVOL rsi at 0x20
saver_prolog_3:
    mov qword ptr [rsp + 0x28], rdi              # UWOP_SAVE_NONVOL rdi at 0x28
saver_prolog_4:
    mov qword ptr [rsp + 0x40], r12              # UWOP_SAVE_NONVOL r12 at 0x40
saver_prolog_5:
saver_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov rdi, 0xBAD0000000000103                  # rdi is saved; use it
    mov r12, 0xBAD0000000000104                  # r12 is saved; use it
    mov ecx, 0xa002                              # argument 1
    call inner
    mov eax, 1                                   # return value
    mov rsi, qword ptr [rsp + 0x20]              # restore the saved register
    mov rdi, qword ptr [rsp + 0x28]              # restore the saved register
    mov r12, qword ptr [rsp + 0x40]              # restore the saved register
saver_epilog_0:
    add rsp, 0x30                                # add rsp, imm8
saver_epilog_1:
    pop rbx
saver_epilog_2:
    ret
saver_end:
    .align 16, 0xcc

# inner: pushes [], alloc 0x10, save rbx@0, save rbp@8, epilog add rsp
# RUNTIME_FUNCTION 0x1080..0x10b4, UnwindData 0x201c
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 13, CountOfCodes 5, FrameRegister none
#    0xd: UWOP_SAVE_NONVOL rbp at 0x8
#    0x8: UWOP_SAVE_NONVOL rbx at 0x0
#    0x4: UWOP_ALLOC_SMALL 0x10
#   bytes: 01 0d 05 00 0d 54 01 00 08 34 00 00 04 12 00 00
inner:
inner_prolog_0:
    sub rsp, 0x10                                # UWOP_ALLOC_SMALL 0x10
inner_prolog_1:
    mov qword ptr [rsp + 0], rbx                 # UWOP_SAVE_NONVOL rbx at 0x0
inner_prolog_2:
    mov qword ptr [rsp + 8], rbp                 # UWOP_SAVE_NONVOL rbp at 0x8
inner_prolog_3:
inner_body:
    mov rbx, 0xBAD0000000000200                  # rbx is saved; use it
    mov rbp, 0xBAD0000000000201                  # rbp is saved; use it
capture:
    mov eax, 2                                   # return value
    mov rbx, qword ptr [rsp + 0]                 # restore the saved register
    mov rbp, qword ptr [rsp + 8]                 # restore the saved register
    add rsp, 0x10                                # add rsp, imm8
    ret
inner_end:
