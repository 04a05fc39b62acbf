/**
 * The picture `stackwalk roles --machine ia64` prints under the role table: Itanium's two stacks
 * and where AddrStack and AddrBStore point in each (ia64.md §1, §2, §4.2). Marked [A] where it is
 * documented architecture and [M] where it is this project's modelling choice.
 */

/** Itanium's memory stack and register backing store side by side, for a three-frame walk main -> a -> b. */
export const IA64_TWO_STACKS = `AddrBStore: Itanium has two stacks, so a frame is the pair (AddrStack, AddrBStore).

        memory stack (r12 = sp)                 register backing store (ar.bsp)
        grows DOWN                              grows UP
 high  +----------------------------+          +----------------------------+  high
       | main: locals, spills       |          | b: r32 .. r32+sof-1        |
       |                            |          |   (covered and flushed)    |
       +----------------------------+ sp #2    +----------------------------+ <- AddrBStore #0 = RsBSP
       | a: locals, spills          |          | a: r32 .. ; r33 = rp,      |
       |                            |          |    r34 = ar.pfs (saved)    |
       +----------------------------+ sp #1    +----------------------------+ <- AddrBStore #1
       | b (frame 0)                |          | main: r32 = rp, r33 = pfs  |
 low   +----------------------------+ sp #0    +----------------------------+ <- AddrBStore #2   low
                                 = AddrStack #0

 - AddrStack is r12 (IntSp) and AddrBStore the address where the frame's r32 is saved (RsBSP for
   frame 0). There is no frame pointer: AddrFrame is 0. [A]
 - br.call leaves the return address in b0; a non-leaf prologue saves it, usually in a stacked
   register (so in the backing store), or in memory. The unwind descriptors of the function's
   IMAGE_IA64_RUNTIME_FUNCTION_ENTRY say where, and from which slot on. [A]
 - Unwinding a frame: caller sp = psp (sp + the fixed frame size, or the saved psp); caller bsp =
   skip_regs(bsp, -sol), sol being the caller's inputs + locals from the saved ar.pfs: the
   caller's outputs are this frame's inputs, so the two frames overlap. [A]
 - Every 64th backing-store word (address & 0x1f8 == 0x1f8) holds NaT bits, not a register, so
   bsp moves by registers, not bytes: skip_regs(B + 0x1f0, 1) = B + 0x200. [A]
 - AddrPC is bundle | slot*4 (StIIP + StIPSR.ri); Params are r32-r35 from the backing store; the
   CONTEXT is taken after cover + flushrs. These are this project's choices. [M]
`;
