# recursion-1000: recurse calls itself 1000 times (1001 frames of 48 bytes: return address, rbx, 32-byte home area), then calls a leaf without pdata.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> recurse (x1001) -> leaf.
# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA 0x2000, RUNTIME_FUNCTIONs in .pdata at RVA 0x3000;
# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset.
# Stack: the deepest point is 48160 bytes below the top; map at least 0x100000 bytes (SizeOfStackReserve).

# main: pushes [], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1000..0x1018, UnwindData 0x2000
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 4, CountOfCodes 1, FrameRegister none
#    0x4: UWOP_ALLOC_SMALL 0x28
#   bytes: 01 04 01 00 04 42 00 00
main:
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
main_body:
    mov ecx, 1000                                # argument 1: remaining recursion depth
    call recurse
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# recurse: pushes [rbx], alloc 0x20, epilog add rsp, calls itself 1000 times
# RUNTIME_FUNCTION 0x1020..0x1051, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 5, CountOfCodes 2, FrameRegister none
#    0x5: UWOP_ALLOC_SMALL 0x20
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 05 02 00 05 32 01 30
recurse:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    sub rsp, 0x20                                # UWOP_ALLOC_SMALL 0x20
recurse_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    test ecx, ecx                                # remaining recursion depth (argument 1)
    jz recurse_base                              # depth 0: this is the deepest activation
    dec ecx
    call recurse                                 # ECX = the remaining depth - 1
    jmp recurse_exit
recurse_base:
    mov ecx, 0xa002                              # argument 1
    call leaf
    mov eax, 1                                   # return value
recurse_exit:
    add rsp, 0x20                                # add rsp, imm8
    pop rbx
    ret
recurse_end:
    .align 16, 0xcc

# leaf: leaf without pdata
# no RUNTIME_FUNCTION: unwinding it is RIP = [RSP], RSP += 8 (x64-unwind.md §1.1)
leaf:
leaf_body:
capture:
    mov eax, 2                                   # return value; RSP has not moved: the return address is at [rsp]
    ret
leaf_end:
