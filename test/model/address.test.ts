import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { InputError } from "../../src/errors.js";
import {
  ADDRESS32_LAYOUT,
  ADDRESS32_SIZE,
  ADDRESS64_LAYOUT,
  ADDRESS64_SIZE,
  AddressMode,
  address32To64Sign,
  address32To64Zero,
  address64To32,
  decodeAddress32,
  decodeAddress64,
  encodeAddress32,
  encodeAddress64,
  flatAddress32,
  flatAddress64,
  zeroAddress32,
  zeroAddress64,
} from "../../src/model/address.js";
import type { Address32, Address64 } from "../../src/model/address.js";
import { defineLayout, encodeFields, flattenLayout } from "../../src/model/record.js";
import type { RecordLayout } from "../../src/model/record.js";

const rows = (l: RecordLayout): [string, number, number][] => l.fields.map((f) => [f.name, f.offset, f.size]);

const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

function expectTruncatedAt(fn: () => unknown, offset: number): void {
  const e = thrown(fn);
  expect(e).toBeInstanceOf(InputError);
  expect((e as InputError).code).toBe("truncated");
  expect((e as InputError).offset).toBe(offset);
}

const U64_MAX = (1n << 64n) - 1n;
const arbAddress64: fc.Arbitrary<Address64> = fc.record({
  offset: fc.bigInt({ min: 0n, max: U64_MAX }),
  segment: fc.integer({ min: 0, max: 0xffff }),
  mode: fc.integer({ min: 0, max: 0xffff_ffff }),
});
const arbAddress32: fc.Arbitrary<Address32> = fc.record({
  offset: fc.bigInt({ min: 0n, max: 0xffff_ffffn }),
  segment: fc.integer({ min: 0, max: 0xffff }),
  mode: fc.integer({ min: 0, max: 0xffff_ffff }),
});

describe("ADDRESS_MODE (stackwalk64.md §1)", () => {
  it("has the SDK values", () => {
    expect(AddressMode).toEqual({ Mode1616: 0, Mode1632: 1, Real: 2, Flat: 3 });
  });
});

describe("ADDRESS64 layout (stackwalk64.md §2.1)", () => {
  it("is 16 bytes with Offset@0x0/8, Segment@0x8/2, Mode@0xC/4", () => {
    expect(ADDRESS64_SIZE).toBe(16);
    expect(ADDRESS64_LAYOUT.size).toBe(16);
    expect(rows(ADDRESS64_LAYOUT)).toEqual([
      ["Offset", 0x0, 8],
      ["Segment", 0x8, 2],
      ["Mode", 0xc, 4],
    ]);
  });

  it("an all-zero ADDRESS64 decodes as AddrMode1616, not Flat", () => {
    const a = decodeAddress64(new Uint8Array(16));
    expect(a).toEqual({ offset: 0n, segment: 0, mode: 0 });
    expect(a.mode).toBe(AddressMode.Mode1616);
    expect(zeroAddress64()).toEqual(a);
  });

  it("encodes a flat address byte for byte", () => {
    const a = { ...flatAddress64(0x1122_3344_5566_7788n), segment: 0x2b };
    expect(hex(encodeAddress64(a))).toBe("8877665544332211" + "2b00" + "0000" + "03000000");
    expect(flatAddress64(5n)).toEqual({ offset: 5n, segment: 0, mode: 3 });
  });

  it("decodes from a view into a larger buffer (byteOffset respected) and at an offset", () => {
    const backing = new Uint8Array(64).fill(0xee);
    const view = backing.subarray(7, 7 + 40);
    encodeAddress64({ offset: 0xdead_beefn, segment: 0x33, mode: 3 }, view, 8);
    expect(decodeAddress64(view, 8)).toEqual({ offset: 0xdead_beefn, segment: 0x33, mode: 3 });
    expect(backing[7 + 8]).toBe(0xef);
    expect(backing[7 + 8 + 0xa]).toBe(0xee);
  });

  it("round-trips every record: decode(encode(a)) == a", () => {
    fc.assert(fc.property(arbAddress64, (a) => {
      expect(decodeAddress64(encodeAddress64(a))).toEqual(a);
    }));
  });

  it("round-trips bytes with the padding at 0xA-0xB zero: encode(decode(b)) == b", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (b) => {
        b[0xa] = 0;
        b[0xb] = 0;
        expect(encodeAddress64(decodeAddress64(b))).toEqual(b);
      }),
    );
  });

  it("rejects values that do not fit their field, naming it", () => {
    expect(() => encodeAddress64({ offset: 1n << 64n, segment: 0, mode: 0 })).toThrow(/Offset/);
    expect(() => encodeAddress64({ offset: -1n, segment: 0, mode: 0 })).toThrow(RangeError);
    expect(() => encodeAddress64({ offset: 0n, segment: 0x10000, mode: 0 })).toThrow(/Segment/);
    expect(() => encodeAddress64({ offset: 0n, segment: 0, mode: 2 ** 32 })).toThrow(/Mode/);
    expect(() => encodeAddress64({ offset: 0n, segment: 1.5, mode: 0 })).toThrow(RangeError);
  });

  it("throws InputError(truncated) at the first field that does not fit", () => {
    expectTruncatedAt(() => decodeAddress64(new Uint8Array(5)), 0x0);
    expectTruncatedAt(() => decodeAddress64(new Uint8Array(9)), 0x8);
    expectTruncatedAt(() => decodeAddress64(new Uint8Array(15)), 0xc);
    expectTruncatedAt(() => decodeAddress64(new Uint8Array(20), 8), 20);
    expectTruncatedAt(() => decodeAddress64(new Uint8Array(4), 10), 10);
  });
});

describe("ADDRESS layout (stackwalk64.md §2.1)", () => {
  it("is 12 bytes with Offset@0x0/4, Segment@0x4/2, Mode@0x8/4", () => {
    expect(ADDRESS32_SIZE).toBe(12);
    expect(ADDRESS32_LAYOUT.size).toBe(12);
    expect(rows(ADDRESS32_LAYOUT)).toEqual([
      ["Offset", 0x0, 4],
      ["Segment", 0x4, 2],
      ["Mode", 0x8, 4],
    ]);
  });

  it("an all-zero ADDRESS decodes as AddrMode1616", () => {
    const a = decodeAddress32(new Uint8Array(12));
    expect(a).toEqual({ offset: 0n, segment: 0, mode: AddressMode.Mode1616 });
    expect(zeroAddress32()).toEqual(a);
  });

  it("encodes byte for byte", () => {
    expect(hex(encodeAddress32({ ...flatAddress32(0x0040_1000n), segment: 0x1b }))).toBe("00104000" + "1b00" + "0000" + "03000000");
  });

  it("round-trips records and bytes (padding at 0x6-0x7 zero)", () => {
    fc.assert(fc.property(arbAddress32, (a) => {
      expect(decodeAddress32(encodeAddress32(a))).toEqual(a);
    }));
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 12, maxLength: 12 }), (b) => {
        b[6] = 0;
        b[7] = 0;
        expect(encodeAddress32(decodeAddress32(b))).toEqual(b);
      }),
    );
  });

  it("rejects an offset above 2^32-1", () => {
    expect(() => encodeAddress32({ offset: 1n << 32n, segment: 0, mode: 3 })).toThrow(/Offset/);
  });

  it("throws InputError(truncated) with the offset of the cut field", () => {
    expectTruncatedAt(() => decodeAddress32(new Uint8Array(11)), 0x8);
    expectTruncatedAt(() => decodeAddress32(new Uint8Array(5)), 0x4);
  });
});

describe("32 ↔ 64 conversions (stackwalk64.md §2.1)", () => {
  it("sign-extension (Address32To64) and zero-extension (Wine) differ on 0x80000000", () => {
    const a = { offset: 0x8000_0000n, segment: 7, mode: 3 };
    expect(address32To64Sign(a)).toEqual({ offset: 0xffff_ffff_8000_0000n, segment: 7, mode: 3 });
    expect(address32To64Zero(a)).toEqual({ offset: 0x8000_0000n, segment: 7, mode: 3 });
  });

  it("agree below 0x80000000", () => {
    const a = flatAddress32(0x7fff_ffffn);
    expect(address32To64Sign(a).offset).toBe(0x7fff_ffffn);
    expect(address32To64Zero(a).offset).toBe(0x7fff_ffffn);
    expect(address32To64Sign(flatAddress32(0xffff_ffffn)).offset).toBe(U64_MAX);
  });

  it("Address64To32 keeps the low 32 bits", () => {
    expect(address64To32(flatAddress64(0xffff_ffff_8000_0000n))).toEqual({ offset: 0x8000_0000n, segment: 0, mode: 3 });
    expect(address64To32(flatAddress64(0x1_2345_6789n)).offset).toBe(0x2345_6789n);
  });

  it("truncation undoes either extension", () => {
    fc.assert(
      fc.property(arbAddress32, (a) => {
        expect(address64To32(address32To64Sign(a))).toEqual(a);
        expect(address64To32(address32To64Zero(a))).toEqual(a);
      }),
    );
  });
});

describe("field-table codec (record.ts)", () => {
  it("rejects malformed tables", () => {
    expect(() => defineLayout("X", 4, [{ name: "a", offset: 0, size: 2, kind: "u32" }])).toThrow();
    expect(() => defineLayout("X", 4, [{ name: "a", offset: 2, size: 4, kind: "u32" }])).toThrow();
    expect(() =>
      defineLayout("X", 8, [
        { name: "a", offset: 0, size: 4, kind: "u32" },
        { name: "b", offset: 2, size: 4, kind: "u32" },
      ]),
    ).toThrow();
  });

  it("rejects unknown field names and bytes of the wrong length", () => {
    expect(() => encodeFields(ADDRESS64_LAYOUT, { Bogus: 1 })).toThrow(/Bogus/);
    const l = defineLayout("B", 4, [{ name: "raw", offset: 0, size: 4, kind: "bytes" }]);
    expect(() => encodeFields(l, { raw: new Uint8Array(3) })).toThrow(/raw/);
  });

  it("flattens nested records to absolute offsets", () => {
    const outer = defineLayout("OUTER", 20, [
      { name: "Head", offset: 0, size: 4, kind: "u32" },
      { name: "Addr", offset: 4, size: 16, kind: "bytes", record: ADDRESS64_LAYOUT },
    ]);
    expect(rows({ name: "flat", size: 20, fields: flattenLayout(outer) })).toEqual([
      ["Head", 0, 4],
      ["Addr.Offset", 4, 8],
      ["Addr.Segment", 12, 2],
      ["Addr.Mode", 16, 4],
    ]);
  });
});
