# machframe: UWOP_PUSH_MACHFRAME without error code: victim simulates an interrupt into isr, which calls inner. Below isr's frame the truth is the interrupted frame (pc victim_resume, sp victim's RSP), then main.
#
# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,
# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),
# assembled at 0x0000000140001000 (.text at RVA 0x1000 of an image based at 0x0000000140000000).
# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.
# Call chain: main -> victim =[interrupt]=> isr -> inner.
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
    call victim
    mov eax, 0                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    ret
main_end:
    .align 16, 0xcc

# victim: pushes [rbx, rsi], alloc 0x28, epilog add rsp
# RUNTIME_FUNCTION 0x1020..0x105f, UnwindData 0x2008
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 6, CountOfCodes 3, FrameRegister none
#    0x6: UWOP_ALLOC_SMALL 0x28
#    0x2: UWOP_PUSH_NONVOL rsi
#    0x1: UWOP_PUSH_NONVOL rbx
#   bytes: 01 06 03 00 06 42 02 60 01 30 00 00
victim:
    push rbx                                     # UWOP_PUSH_NONVOL rbx
    push rsi                                     # UWOP_PUSH_NONVOL rsi
    sub rsp, 0x28                                # UWOP_ALLOC_SMALL 0x28
victim_body:
    mov rbx, 0xBAD0000000000100                  # rbx is saved; use it
    mov rsi, 0xBAD0000000000102                  # rsi is saved; use it
victim_interrupt:
    mov r10, rsp                                 # simulated interrupt: the RSP of the interrupted code
    and rsp, -16                                 # the CPU aligns RSP to 16 before pushing the frame
    push 0x2b                                    # SS (x64 Windows' user data selector)
    push r10                                     # RSP
    pushfq                                       # RFLAGS
    push 0x33                                    # CS (x64 Windows' user code selector)
    lea r10, [rip + victim_resume]               # RIP: the interrupted instruction
    push r10                                     # RIP
    jmp isr                                      # enter the handler with the machine frame on the stack
victim_resume:
    mov eax, 1                                   # return value
    add rsp, 0x28                                # add rsp, imm8
    pop rsi
    pop rbx
    ret
victim_end:
    .align 16, 0xcc

# isr: pushes [rbp], alloc 0x20, entered through a machine frame
# RUNTIME_FUNCTION 0x1060..0x108e, UnwindData 0x2014
# UNWIND_INFO: Version 1, Flags 0, SizeOfProlog 5, CountOfCodes 3, FrameRegister none
#    0x5: UWOP_ALLOC_SMALL 0x20
#    0x1: UWOP_PUSH_NONVOL rbp
#    0x0: UWOP_PUSH_MACHFRAME without error code
#   bytes: 01 05 03 00 05 32 01 50 00 0a 00 00
# below this handler the truth is the interrupted frame: pc victim_resume (the RIP in the machine frame),
# sp = victim's RSP at victim_interrupt (the RSP in it). Its epilog pops the machine frame by hand,
# a form no epilog rule recognises (§1.5), so no capture is placed there.
isr:
isr_prolog_0:
    push rbp                                     # UWOP_PUSH_NONVOL rbp
isr_prolog_1:
    sub rsp, 0x20                                # UWOP_ALLOC_SMALL 0x20
isr_prolog_2:
isr_body:
    mov rbp, 0xBAD0000000000201                  # rbp is saved; use it
capture_isr:
    mov ecx, 0xa003                              # argument 1
    call inner
    mov eax, 2                                   # return value
    add rsp, 0x20
    pop rbp
    pop r11                                      # RIP of the interrupted code (r11 is volatile there)
    add rsp, 8                                   # CS
    popfq                                        # RFLAGS
    pop rsp                                      # RSP of the interrupted code; SS stays behind
    jmp r11                                      # resume: iretq without reloading selectors
isr_end:
    .align 16, 0xcc

# inner: pushes [rdi], epilog of pops only
# RUNTIME_FUNCTION 0x1090..0x10a2, UnwindData 0x2020
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
