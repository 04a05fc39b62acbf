/**
 * The recent-bigints table (memory/bigint-cache.ts): every value it hands out is the value asked
 * for, and two values that alternate in one set are both kept — a saved register and a return
 * address that shared a slot of a direct-mapped table made a new bigint for each, frame after
 * frame, in the ARM bench's recursion.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bigintHeld, bigintOf, bigintOfU32, bigintSetOf } from "../../src/memory/bigint-cache.js";

const u32 = fc.integer({ min: 0, max: 0xffff_ffff });

/** `count` values of one set, found by searching up from `from`. */
function sameSet(count: number, from: number): number[] {
  const set = bigintSetOf(from, 0);
  const found = [from];
  for (let v = from + 1; found.length < count; v++) if (bigintSetOf(v, 0) === set) found.push(v);
  return found;
}

describe("recent bigints", () => {
  it("hands out the value asked for, held or not", () => {
    fc.assert(
      fc.property(u32, u32, (low, high) => {
        const want = (BigInt(high) << 32n) | BigInt(low);
        expect(bigintOf(low, high)).toBe(want);
        expect(bigintHeld(low, high)).toBe(true);
        expect(bigintOf(low, high)).toBe(want);
        expect(bigintOfU32(low)).toBe(BigInt(low));
      }),
      { numRuns: 5_000 },
    );
  });

  it("keeps two values that alternate in one set, and replaces the one used less recently", () => {
    const [a, b, c] = sameSet(3, 0x1000_0105) as [number, number, number];
    for (let k = 0; k < 10; k++) {
      bigintOfU32(a);
      bigintOfU32(b);
      expect([bigintHeld(a, 0), bigintHeld(b, 0)]).toEqual([true, true]);
    }
    bigintOfU32(a);
    bigintOfU32(c);
    expect([bigintHeld(a, 0), bigintHeld(b, 0), bigintHeld(c, 0)]).toEqual([true, false, true]);
  });
});
