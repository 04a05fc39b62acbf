# save-nonvol-far: UWOP_SAVE_NONVOL_FAR for rsi at 0x80010 (unscaled), beside UWOP_SAVE_NONVOL for rdi at 0x7fff8 (the largest near offset), in a 0x80020-byte frame.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> farsave -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 524456 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call farsave
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# farsave: pushes [rbx], alloc 0x80020 via __chkstk, save rsi@0x80010, save rdi@0x7fff8, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x1084, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 30, CountOfCodes 9, FrameRegister none
#   0x1e: UWOP_SAVE_NONVOL rdi at 0x7fff8
#   0x16: UWOP_SAVE_NONVOL_FAR rsi at 0x80010
#    0xe: UWOP_ALLOC_LARGE 0x80020 (32-bit unscaled form)
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 1e 09 00 1e 74 ff ff 16 65 10 00 08 00 0e 11 20 00 08 00 01 30 00 00
farsave:
farsave_prolog_0:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
farsave_prolog_1:
    mov eax, 0x80020                             # frame size for __chkstk
farsave_prolog_2:
    call __chkstk                                # touch every page of the new frame; the return address lies inside this prolog (§1.8)
farsave_prolog_3:
    sub rsp, rax                                 # UWOP_ALLOC_LARGE 0x80020 (32-bit unscaled form)
farsave_prolog_4:
    mov qword ptr [rsp + 0x80010], rsi           # UWOP_SAVE_NONVOL_FAR rsi at 0x80010
farsave_prolog_5:
    mov qword ptr [rsp + 0x7fff8], rdi           # UWOP_SAVE_NONVOL rdi at 0x7fff8
farsave_prolog_6:
farsave_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov rdi, 0xBAD0000000000103                  # rdi is saved; use it
    mov ecx, 0xa002                              # argument 1
    call inner
    mov eax, 1                                   # return value
    mov rsi, qword ptr [rsp + 0x80010]           # restore the saved register
    mov rdi, qword ptr [rsp + 0x7fff8]           # restore the saved register
    add rsp, 0x80020                             # add rsp, imm32
    pop rbx
    ret
farsave_end:
    .align 16, 0xcc

# inner: pushes [rsi], epilog of pops only
# RUNTIME_FUNCTION 0x1090..0x10a2, UnwindData 0x2020
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 1, CountOfCodes 1, FrameRegister none
#    0x1: UWOP_PUSH_NONVOL rsi
#   bytes: 01 01 01 00 01 60 00 00
inner:
    push rsi                                     # UWOP_PUSH_NONVOL rsi
inner_body:
    mov rsi, 0xBAD0000000000202                  # rsi is saved; use it
capture:
    mov eax, 2                                   # return value
    pop rsi
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
    ret                                          # RSP never moved: a leaf without pdata
__chkstk_end:
