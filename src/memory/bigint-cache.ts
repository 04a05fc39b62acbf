/**
 * Bigints made from recent values. A stack walk reads the same return addresses and saved
 * registers over and over (recursion, loops, the snapshots of a sweep), and making a bigint from a
 * number costs several times more than looking one up. Two ways per set, the one used less
 * recently replaced: a direct-mapped table loses both values, frame after frame, when two that
 * alternate (a saved register and a return address) share a slot.
 */

/** Sets of two entries each (a power of two). */
const SETS = 512;
const lows = new Uint32Array(2 * SETS);
const highs = new Uint32Array(2 * SETS);
const values: bigint[] = new Array<bigint>(2 * SETS).fill(0n);
/** Per set, the way a miss replaces: the one not used last. */
const victims = new Uint8Array(SETS);

/** The set a value `high * 2^32 + low` is kept in. */
export function bigintSetOf(low: number, high: number): number {
  return Math.imul(low ^ Math.imul(high, 0x85eb_ca6b), 0x9e37_79b1) >>> 23;
}

/** Whether the table holds the bigint of `high * 2^32 + low` now (it is not changed). */
export function bigintHeld(low: number, high: number): boolean {
  const at = bigintSetOf(low, high) << 1;
  return (lows[at] === low && highs[at] === high) || (lows[at + 1] === low && highs[at + 1] === high);
}

/** The bigint `high * 2^32 + low` (both unsigned 32-bit numbers). */
export function bigintOf(low: number, high: number): bigint {
  const set = bigintSetOf(low, high);
  const at = set << 1;
  if (lows[at] === low && highs[at] === high) {
    victims[set] = 1;
    return values[at]!;
  }
  if (lows[at + 1] === low && highs[at + 1] === high) {
    victims[set] = 0;
    return values[at + 1]!;
  }
  const value = high === 0 ? BigInt(low) : high < 0x20_0000 ? BigInt(high * 4294967296 + low) : (BigInt(high) << 32n) | BigInt(low);
  const way = victims[set]!;
  lows[at + way] = low;
  highs[at + way] = high;
  values[at + way] = value;
  victims[set] = way ^ 1;
  return value;
}

/** The bigint of an unsigned 32-bit number. */
export function bigintOfU32(value: number): bigint {
  return bigintOf(value, 0);
}
