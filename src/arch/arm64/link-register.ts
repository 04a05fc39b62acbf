/**
 * The picture `stackwalk roles --machine arm64` prints under the role table: where an ARM64
 * frame's return address lives. `bl` leaves it in the link register (x30), not on the stack; a
 * leaf never stores it, a non-leaf prolog saves it, usually with x29 as a frame record
 * (arm64.md §1.10, Part 4; Microsoft's "Overview of ARM64 ABI conventions").
 */

/** The link register and the frame record for a three-frame walk main -> f -> leaf, stopped in the leaf. */
export const ARM64_LINK_REGISTER = `AddrReturn: on ARM64 the return address starts in a register, not on the stack.

  bl f        lr (x30) = the return address; nothing is pushed and sp does not move
  leaf        never stores lr: the caller's pc is lr; its sp, this sp plus what the leaf allocated
  non-leaf    the prolog saves lr, usually with x29 as a frame record: stp x29, lr, [sp, #-16]!

        memory stack (sp), grows DOWN              registers at the break (frame 0 = leaf)
 high  +---------------------------------+
       | main: locals                    |
       +---------------------------------+ <- AddrStack #2 = sp when main called f
       | f: frame record                 |
       |    [x29+8] = saved lr -> main   |
       |    [x29]   = main's x29         | <------ x29 (fp) = AddrFrame #0: still f's record
       |    saved x19-x28, d8-d15        |
       +---------------------------------+ <- AddrStack #1 = sp when f called leaf
       | leaf: locals (sub sp, sp, #32)  |         lr = return address into f = AddrReturn #0
 low   +---------------------------------+ <- AddrStack #0 = sp            pc = AddrPC #0

  frame 0 -> 1: the leaf's .pdata entry says only "add sp, sp, #32" (a function with no stack has
                no entry at all): pc = lr, and nothing is read from the stack.
  frame 1 -> 2: f's unwind codes reload x29 and lr from the record: pc = lr, sp above f's frame.
  A frame-record walker that read [x29+8] at frame 0 would skip f: lr comes first while the
  function has not stored its own record, and is stale once it has (only unwind data tells which).
  Return addresses may be signed (pointer authentication): the walker strips bits 48-63.
`;
