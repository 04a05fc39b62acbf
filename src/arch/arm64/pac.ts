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
import { keyed, keyedSlot, type UnwindCache } from "../../unwind/cache.js";
import type { PacStrip } from "../step.js";

/** The virtual-address size the stripping assumes by default: 48 bits keeps every canonical user address (arm64.md §1.12). */
export const PAC_VA_BITS = 48;
/** The virtual-address sizes a walk accepts: TxSZ from 12 (52 bits, large VAs) to 48 (16 bits). */
export const PAC_VA_BITS_MIN = 16;
export const PAC_VA_BITS_MAX = 52;

export type { PacStrip };

/** A {@link PacStrip} from its function and plain limit. */
function pacStrip(f: (p: bigint) => bigint, plainBelow: bigint): PacStrip {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  return Object.assign(f, { plainBelow, plainBelowNumber: plainBelow < max ? Number(plainBelow) : Number.MAX_SAFE_INTEGER });
}

const ALL = 0xffff_ffff_ffff_ffffn;
const BIT55 = 1n << 55n;

/**
 * The stripping for an `vaBits`-bit virtual address (N = 64 − TxSZ): bits N-63 copied from bit 55,
 * so a user address (bit 55 clear) keeps bits 0 to N − 1 only.
 */
export function pacStripper(vaBits: number): PacStrip {
  if (!Number.isInteger(vaBits) || vaBits < PAC_VA_BITS_MIN || vaBits > PAC_VA_BITS_MAX) {
    throw new RangeError(`the virtual-address size for pointer authentication must be a whole number from ${PAC_VA_BITS_MIN} to ${PAC_VA_BITS_MAX}, not ${vaBits}`);
  }
  const low = (1n << BigInt(vaBits)) - 1n;
  const high = ALL ^ low;
  return pacStrip((p) => ((p & BIT55) === 0n ? p & low : p | high), low);
}

/** `p` without its pointer authentication code at the default size ({@link PAC_VA_BITS}): bits 48-63 copied from bit 55. */
export const stripPac: PacStrip = pacStripper(PAC_VA_BITS);

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
  for (let i = 0; i < modules.length; i++) {
    const m = modules[i]!;
    if (m.base + m.size > end) end = m.base + m.size;
  }
  if (end === 0n) return 0xffff_ffff_ffff_ffffn;
  let mask = end;
  mask |= mask >> 1n;
  mask |= mask >> 2n;
  mask |= mask >> 4n;
  mask |= mask >> 8n;
  mask |= mask >> 16n;
  return mask | (mask >> 32n);
}

const PAC_MASKS = keyedSlot<readonly Module[], bigint>("Breakpad's PAC mask");

/** {@link breakpadPacMask} of a module list, worked out once per list in a walk's cache (a step asks for it every frame). */
export function cachedBreakpadPacMask(cache: UnwindCache, modules: readonly Module[]): bigint {
  return keyed(cache, PAC_MASKS, modules, () => breakpadPacMask(modules));
}

/** Breakpad's `PtrauthStrip`: `p` under {@link breakpadPacMask} when that lies in a module, else `p` as it is. */
export function breakpadStripPac(modules: readonly Module[], mask: bigint, p: bigint): bigint {
  const stripped = p & mask;
  return moduleAt(modules, stripped) !== undefined ? stripped : p;
}

/** Breakpad's `PtrauthStrip` for a module list, as a {@link PacStrip} (its mask from the walk's cache). */
export function breakpadPacStripper(cache: UnwindCache, modules: readonly Module[]): PacStrip {
  const mask = cachedBreakpadPacMask(cache, modules);
  return pacStrip((p) => breakpadStripPac(modules, mask, p), mask);
}
