/**
 * Which address to look a frame's function up at. A caller frame's PC is a return address: the
 * instruction after a call. When the call is the last instruction of a function (a noreturn
 * call), the return address is already the first byte of the next function, so unwind tables
 * and symbols must be looked up at return address − 1, which is inside the call instruction.
 * The context frame's PC is the interrupted instruction itself and is used as it is.
 * This is the only place that subtraction happens.
 */

/** The address at which to look up unwind data and symbols for a frame's PC. */
export function lookupAddress(pc: bigint, pcIsReturnAddress: boolean): bigint {
  return pcIsReturnAddress && pc > 0n ? pc - 1n : pc;
}
