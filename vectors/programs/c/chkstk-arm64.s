// chkstk-arm64.s - stack probe for the arm64 (aarch64-pc-windows-msvc) build.
//
// The compiler calls __chkstk when a frame needs more than a page, or for __builtin_alloca,
// with the allocation size in 16-byte units in x15, and subtracts x15 * 16 from sp itself
// after the call (`sub sp, sp, x15, lsl #4`). Semantics (those of the Windows routine):
// every page from the caller's stack top down to (sp - 16 * x15) is touched in order,
// highest first; sp and every register but x16 and x17 (the intra-procedure-call scratch
// registers) are preserved; flags are not. Unlike the Windows routine this one does not read
// the stack limit from the TEB: it probes every page, so it needs no operating system.
//
// It allocates nothing and saves nothing, so it has no unwind data: a walker finds its
// return address in lr, as for any leaf function without a .pdata entry.

        .text
        .globl  __chkstk
        .p2align 2
__chkstk:
        lsl     x16, x15, #4
        mov     x17, sp
        subs    x16, x17, x16            // lowest address the caller will own
        csel    x16, xzr, x16, lo        // wrapped around: probe everything (faults)
        and     x17, x17, #~0xfff        // page of the current stack top (already in use)
1:      cmp     x16, x17
        b.hs    2f                       // target lies in a page already touched
        sub     x17, x17, #0x1000
        ldrb    wzr, [x17]               // touch the next page down
        b       1b
2:      ret
