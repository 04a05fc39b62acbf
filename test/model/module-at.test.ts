/**
 * moduleAt answers as the definition says (the first module in list order whose range holds the
 * address) for lists short and long, overlapping or not, with gaps, empty modules and modules
 * at the top of the address space.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { moduleAt, type Module } from "../../src/model/snapshot.js";

/** The definition, one module after another. */
function firstHolding(modules: readonly Module[], address: bigint): Module | undefined {
  return modules.find((m) => address >= m.base && address < m.base + m.size);
}

const mod = (i: number, base: bigint, size: bigint): Module => ({ name: `m${i}`, base, size, symbols: [] });

describe("moduleAt", () => {
  it("agrees with the first module in list order holding the address, on lists of up to 200 overlapping modules", () => {
    const ranges = fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 0x3000n }), fc.bigInt({ min: 0n, max: 0x800n })), { minLength: 0, maxLength: 200, size: "max" });
    fc.assert(
      fc.property(ranges, fc.array(fc.bigInt({ min: 0n, max: 0x4000n }), { minLength: 1, maxLength: 50 }), (rs, addresses) => {
        const modules = rs.map(([base, size], i) => mod(i, base, size));
        for (const a of [...addresses, ...modules.flatMap((m) => [m.base, m.base + m.size - 1n, m.base + m.size])]) {
          expect(moduleAt(modules, a)).toBe(firstHolding(modules, a));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a long list reaching the end of the 64-bit address space, and one that grows after its first lookup", () => {
    const top = 1n << 64n;
    const modules = Array.from({ length: 100 }, (_, i) => mod(i, top - BigInt(100 - i) * 0x1000n, 0x1000n));
    expect(moduleAt(modules, top - 1n)).toBe(modules[99]);
    expect(moduleAt(modules, top - 0x64000n - 1n)).toBeUndefined();
    modules.push(mod(100, 0x1000n, 0x1000n));
    expect(moduleAt(modules, 0x1800n)).toBe(modules[100]);
  });
});
