/**
 * The picture `stackwalk roles --machine arm` prints under the role table: where an ARM frame's
 * return address lives, and the two frame pointers (docs/arm.md).
 */

/** The link register, the Thumb bit and the frame pair for a walk main -> f -> leaf, stopped in the leaf. */
export const ARM_LINK_REGISTER = `AddrReturn: on ARM the return address starts in a register, not on the stack.

  bl f        lr (r14) = the return address + 1 (bit 0 set: return to Thumb code); sp does not move
  leaf        never pushes lr: the caller's pc is lr; its sp, this sp plus what the leaf allocated
  non-leaf    the prolog pushes lr, with the frame pointer as a pair: push {r4-r7, r11, lr}

        memory stack (sp), grows DOWN              registers at the break (frame 0 = leaf)
 high  +---------------------------------+
       | main: locals                    |
       +---------------------------------+ <- AddrStack #2 = sp when main called f
       | f: saved lr -> main (odd)       |
       |    saved r11 = main's r11       | <------ r11 = AddrFrame #0 (Windows; r7 in Thumb
       |    saved r4-r7                  |          code on Linux and Android)
       +---------------------------------+ <- AddrStack #1 = sp when f called leaf
       | leaf: locals (sub sp, sp, #16)  |         lr = return address into f = AddrReturn #0
 low   +---------------------------------+ <- AddrStack #0 = sp            pc = AddrPC #0

  frame 0 -> 1: the leaf's .pdata entry says only "add sp, sp, #16" (a function with no stack has
                no entry at all): pc = lr, and nothing is read from the stack.
  frame 1 -> 2: f's unwind codes (or its packed word: Reg, L, C, Stack Adjust) pop r4-r7, r11
                and lr: pc = lr, sp above f's frame.
  The Thumb bit stays in return addresses; lookups clear it and step back 2 bytes into the call.
`;
