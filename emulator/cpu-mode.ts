/**
 * The CPUs the emulator layer handles. Mode 32 is IA-32 protected mode with a flat address space
 * (what a 32-bit Windows thread sees); mode 64 is long mode (x64); "arm64" is AArch64 at EL0,
 * little-endian, as a Windows on ARM thread runs; "arm" is 32-bit ARM in Thumb state (ARMv7,
 * little-endian), as a Windows RT (ARMNT) thread runs.
 */

/** The CPU: 32 for x86, 64 for x64, "arm64" for AArch64, "arm" for 32-bit ARM (Thumb-2). */
export type CpuMode = 32 | 64 | "arm64" | "arm";

/** Every CPU the emulator layer opens. */
export const CPU_MODES: readonly CpuMode[] = [32, 64, "arm64", "arm"];

/** Throws a RangeError unless `mode` is 32, 64, "arm64" or "arm" (for callers that are not type-checked). */
export function assertCpuMode(mode: unknown): asserts mode is CpuMode {
  if (mode !== 32 && mode !== 64 && mode !== "arm64" && mode !== "arm") throw new RangeError(`mode must be 32, 64, "arm64" or "arm", not ${String(mode)}`);
}

/** The address width of a CPU in bits: 32 for x86 and ARM, 64 for x64 and AArch64. */
export function addressBits(mode: CpuMode): 32 | 64 {
  return mode === 32 || mode === "arm" ? 32 : 64;
}

/** The size of a pointer (and of a return-address slot) in bytes. */
export function pointerWidth(mode: CpuMode): 4 | 8 {
  return mode === 32 || mode === "arm" ? 4 : 8;
}

/** The CPU's name in messages: "32-bit", "64-bit", "ARM64" or "ARM". */
export function cpuName(mode: CpuMode): string {
  return mode === "arm64" ? "ARM64" : mode === "arm" ? "ARM" : `${mode}-bit`;
}

/** Throws a RangeError unless `address` is a valid linear address for `mode`. */
export function assertAddress(address: bigint, mode: CpuMode): void {
  const bits = addressBits(mode);
  if (address < 0n || address >= 1n << BigInt(bits)) {
    throw new RangeError(`0x${address.toString(16)} is not a ${bits}-bit address`);
  }
}

/** Whether a call leaves its return address in the link register (AArch64, ARM) rather than on the stack (x86, x64). */
export function linkRegisterCalls(mode: CpuMode): boolean {
  return mode === "arm64" || mode === "arm";
}
