import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { orderOfKeys } from "../../src/formats/sorted-ranges.js";

/** The order a plain stable sort of the places by key gives (Array.prototype.sort is stable). */
const reference = (keys: readonly number[]): number[] => keys.map((_, i) => i).sort((a, b) => keys[a]! - keys[b]!);

describe("orderOfKeys", () => {
  it("is a stable sort of the places by key, for addresses (packed) and for any other numbers", () => {
    const address = fc.integer({ min: 0, max: 2 ** 32 - 1 });
    const other = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 2 ** 32, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: -1000, max: -1 }));
    fc.assert(
      fc.property(fc.array(fc.oneof(address, fc.constantFrom(0, 5, 2 ** 32 - 1)), { maxLength: 200 }), fc.option(other, { nil: undefined }), (keys, odd) => {
        const all = odd === undefined ? keys : [...keys, odd];
        expect([...orderOfKeys(Float64Array.from(all))]).toEqual(reference(all));
      }),
    );
  });

  it("keeps equal keys in their own order", () => {
    expect([...orderOfKeys(Float64Array.from([7, 3, 7, 3, 0, 7]))]).toEqual([4, 1, 3, 0, 2, 5]);
  });
});
