import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { readU32, readU64 } from "../../src/memory/reader.js";
import { RegionMemory } from "../../src/memory/region-memory.js";

const bytes = (...v: number[]): Uint8Array => Uint8Array.from(v);

describe("RegionMemory", () => {
  const mem = new RegionMemory([
    { base: 0x2000n, bytes: bytes(5, 6, 7, 8) },
    { base: 0x1000n, bytes: bytes(1, 2, 3, 4) },
    { base: 0x1004n, bytes: bytes(9, 10) },
  ]);

  it("sorts regions and finds the one containing an address", () => {
    expect(mem.regions.map((r) => r.base)).toEqual([0x1000n, 0x1004n, 0x2000n]);
    expect(mem.regionAt(0x1003n)?.base).toBe(0x1000n);
    expect(mem.regionAt(0x1005n)?.base).toBe(0x1004n);
    expect(mem.regionAt(0x1006n)).toBeUndefined();
    expect(mem.regionAt(0xfffn)).toBeUndefined();
  });

  it("reads within a region and across adjacent regions", () => {
    expect([...mem.read(0x1001n, 2)!]).toEqual([2, 3]);
    expect([...mem.read(0x1002n, 4)!]).toEqual([3, 4, 9, 10]);
    expect(readU32(mem, 0x1002n)).toBe(0x0a090403n);
  });

  it("returns undefined when any byte is unmapped, and never throws", () => {
    expect(mem.read(0x1004n, 3)).toBeUndefined(); // runs off the end of the second region
    expect(mem.read(0x1ffen, 4)).toBeUndefined(); // starts in a gap
    expect(mem.read(0x2002n, 4)).toBeUndefined();
    expect(mem.read(-4n, 4)).toBeUndefined();
    expect(mem.read(0x1000n, -1)).toBeUndefined();
    expect(readU64(mem, 0x2000n)).toBeUndefined();
    expect(mem.read(0xffff_ffff_ffff_ffffn, 8)).toBeUndefined();
  });

  it("reads zero bytes inside a region as an empty array", () => {
    expect(mem.read(0x1000n, 0)?.length).toBe(0);
  });

  it("rejects overlapping regions with an InputError naming both", () => {
    expect(() => new RegionMemory([{ base: 0x1000n, bytes: new Uint8Array(16) }, { base: 0x100fn, bytes: new Uint8Array(1), origin: "$.memory[1]" }])).toThrow(
      /0x100f overlaps the region 0x1000\.\.0x1010/,
    );
    try {
      new RegionMemory([{ base: 0x1000n, bytes: new Uint8Array(16) }, { base: 0x1008n, bytes: new Uint8Array(1), origin: "$.memory[1]" }]);
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).path).toBe("$.memory[1]");
    }
  });

  it("agrees with a byte-by-byte reference on random layouts", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 1, max: 16 })), { maxLength: 8 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 24 }),
        (layout, at, size) => {
          // Build non-overlapping regions from (gap, length) pairs.
          const byAddr = new Map<number, number>();
          const regions = [];
          let cursor = 0;
          for (const [gap, len] of layout) {
            cursor += gap;
            const b = new Uint8Array(len);
            for (let i = 0; i < len; i++) {
              b[i] = (cursor + i) & 0xff;
              byAddr.set(cursor + i, b[i]!);
            }
            regions.push({ base: BigInt(cursor), bytes: b });
            cursor += len;
          }
          const m = new RegionMemory(regions.reverse());
          const got = m.read(BigInt(at), size);
          let want: number[] | undefined = [];
          for (let i = 0; i < size; i++) {
            const v = byAddr.get(at + i);
            if (v === undefined) {
              want = undefined;
              break;
            }
            want.push(v);
          }
          if (size === 0 && !byAddr.has(at)) want = undefined;
          expect(got === undefined ? undefined : [...got]).toEqual(want);
        },
      ),
    );
  });

  it("u64n gives the same words as read, within a region, across adjacent ones, and none where a byte is unmapped", () => {
    const mem = new RegionMemory([
      { base: 0x1000n, bytes: Uint8Array.from({ length: 64 }, (_, i) => i * 7 + 1) },
      { base: 0x1040n, bytes: Uint8Array.from({ length: 32 }, (_, i) => 255 - i) },
      { base: 0x2000n, bytes: new Uint8Array(16).fill(0xab) },
    ]);
    fc.assert(
      fc.property(fc.integer({ min: 0xff0, max: 0x2020 }), (address) => {
        const into = { low: -1, high: -1 };
        const ok = mem.u64n(address, into);
        const expected = readU64(mem, BigInt(address));
        expect(ok).toBe(expected !== undefined);
        if (expected !== undefined) expect(BigInt(into.high) * 2n ** 32n + BigInt(into.low)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
