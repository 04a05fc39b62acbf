/**
 * Bigints made from recent values, direct-mapped by their low bits. A stack walk reads the same
 * return addresses and saved registers over and over (recursion, loops, the snapshots of a
 * sweep), and making a bigint from a number costs several times more than looking one up.
 */

const SLOTS = 1024;
const lows = new Uint32Array(SLOTS);
const highs = new Uint32Array(SLOTS);
const values: bigint[] = new Array<bigint>(SLOTS).fill(0n);

/** The bigint `high * 2^32 + low` (both unsigned 32-bit numbers). */
export function bigintOf(low: number, high: number): bigint {
  const slot = (low ^ (low >>> 10) ^ high) & (SLOTS - 1);
  if (lows[slot] === low && highs[slot] === high) return values[slot]!;
  const value = high === 0 ? BigInt(low) : high < 0x20_0000 ? BigInt(high * 4294967296 + low) : (BigInt(high) << 32n) | BigInt(low);
  lows[slot] = low;
  highs[slot] = high;
  values[slot] = value;
  return value;
}

/** The bigint of an unsigned 32-bit number. */
export function bigintOfU32(value: number): bigint {
  return bigintOf(value, 0);
}
