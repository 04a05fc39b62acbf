# large-frame: a 0x7fff8-byte frame (512 KiB - 8, the largest 16-bit ALLOC_LARGE) probed page by page by __chkstk, captured inside __chkstk and along the prolog.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> big -> inner.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 524424 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 0xa001                              # argument 1
    call big
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# big: pushes [rbx, rsi], alloc 0x7fff8 via __chkstk, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x105c, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 15, CountOfCodes 4, FrameRegister none
#    0xf: UWOP_ALLOC_LARGE 0x7fff8 (16-bit scaled form)
#    0x2: UWOP_PUSH_NONVOL rsi
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 0f 04 00 0f 01 ff ff 02 60 01 30
big:
big_prolog_0:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
big_prolog_1:
    push rsi                                     # UWOP_PUSH_NONVOL rsi
big_prolog_2:
    mov eax, 0x7fff8                             # frame size for __chkstk
big_prolog_3:
    call __chkstk                                # touch every page of the new frame; the return address lies inside this prolog (§1.8)
big_prolog_4:
    sub rsp, rax                                 # UWOP_ALLOC_LARGE 0x7fff8 (16-bit scaled form)
big_prolog_5:
big_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
    mov ecx, 0xa002                              # argument 1
    call inner
    mov eax, 1                                   # return value
    add rsp, 0x7fff8                             # add rsp, imm32
    pop rsi
    pop rbx
    ret
big_end:
    .align 16, 0xcc

# inner: pushes [rdi], epilog of pops only
# RUNTIME_FUNCTION 0x1060..0x1072, UnwindData 0x2014
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 1, CountOfCodes 1, FrameRegister none
#    0x1: UWOP_PUSH_NONVOL rdi
#   bytes: 01 01 01 00 01 70 00 00
inner:
    push rdi                                     # UWOP_PUSH_NONVOL rdi
inner_body:
    mov rdi, 0xBAD0000000000203                  # rdi is saved; use it
capture:
    mov eax, 2                                   # return value
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
