/**
 * The two x86 widths the emulator layer handles. Mode 32 is IA-32 protected mode with a flat
 * address space (what a 32-bit Windows thread sees); mode 64 is long mode (x64).
 */

/** The CPU width: 32 for x86, 64 for x64. */
export type CpuMode = 32 | 64;

/** Throws a RangeError unless `mode` is 32 or 64 (for callers that are not type-checked). */
export function assertCpuMode(mode: unknown): asserts mode is CpuMode {
  if (mode !== 32 && mode !== 64) throw new RangeError(`mode must be 32 or 64, not ${String(mode)}`);
}

/** Throws a RangeError unless `address` is a valid linear address for `mode`. */
export function assertAddress(address: bigint, mode: CpuMode): void {
  if (address < 0n || address >= 1n << BigInt(mode)) {
    throw new RangeError(`0x${address.toString(16)} is not a ${mode}-bit address`);
  }
}
