/**
 * x86 STACKFRAME Params: the four DWORDs at [EBP+8], [EBP+12], [EBP+16], [EBP+20], where the
 * first stack arguments sit above the saved EBP and the return address (stackwalk64.md §4, §6.2).
 */
import { readU32, type MemoryReader } from "../../memory/reader.js";

/**
 * Reads the four parameter slots above `frame` (AddrFrame). A slot that cannot be read keeps
 * the previous slot's value, and 0 for the first (the deterministic form of Wine's behaviour,
 * stackwalk64.md §6.2 notes).
 */
export function x86Params(frame: bigint, memory: MemoryReader): [bigint, bigint, bigint, bigint] {
  const out: [bigint, bigint, bigint, bigint] = [0n, 0n, 0n, 0n];
  let previous = 0n;
  for (let i = 0; i < 4; i++) {
    const v = readU32(memory, (frame + 8n + 4n * BigInt(i)) & 0xffff_ffffn);
    out[i] = v ?? previous;
    previous = out[i]!;
  }
  return out;
}
