/**
 * Pointer authentication (arm64.md §1.12). A return address signed by `pacibsp` (or clang's
 * `paciasp`) carries a code in its unused top bits: bits [54:N] and [63:56], N = 64 − TxSZ being
 * the virtual-address size. Stripping it (the Arm `Strip()` pseudocode, `xpaci`) replaces those
 * bits with copies of bit 55: a user address (bit 55 = 0) loses every bit from N up. The walker
 * has no keys to authenticate with, so it strips: every return address taken from lr or from
 * memory, whether or not the function's codes include pac_sign_lr, since clang signs return
 * addresses without describing it.
 */
import { moduleAt, type Module } from "../../model/snapshot.js";

/** The virtual-address size the stripping assumes: 48 bits keeps every canonical user address (arm64.md §1.12). */
export const PAC_VA_BITS = 48;

const LOW = (1n << BigInt(PAC_VA_BITS)) - 1n;
const HIGH = 0xffff_ffff_ffff_ffffn ^ LOW;
const BIT55 = 1n << 55n;

/** `p` without its pointer authentication code: bits 48-63 copied from bit 55. */
export function stripPac(p: bigint): bigint {
  return (p & BIT55) === 0n ? p & LOW : p | HIGH;
}

/** {@link stripPac} on the high half of a 64-bit value given as two 32-bit halves: the stripped high half. */
export function stripPacHigh(high: number): number {
  return (high & 0x80_0000) === 0 ? high & 0xffff : (high | 0xffff_0000) >>> 0;
}

/**
 * Breakpad's guess at the address bits (arm64.md Part 5, `StackwalkerARM64`): the end of the
 * highest module (base + size) with every lower bit set; all ones without modules.
 */
export function breakpadPacMask(modules: readonly Module[]): bigint {
  let end = 0n;
  for (const m of modules) if (m.base + m.size > end) end = m.base + m.size;
  if (end === 0n) return 0xffff_ffff_ffff_ffffn;
  let mask = end;
  for (const s of [1n, 2n, 4n, 8n, 16n, 32n]) mask |= mask >> s;
  return mask;
}

/** Breakpad's `PtrauthStrip`: `p` under {@link breakpadPacMask} when that lies in a module, else `p` as it is. */
export function breakpadStripPac(modules: readonly Module[], mask: bigint, p: bigint): bigint {
  const stripped = p & mask;
  return moduleAt(modules, stripped) !== undefined ? stripped : p;
}
