import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { InputError } from "../../src/errors.js";
import {
  FPO_ATTRIBUTE_BITS,
  FPO_DATA_LAYOUT,
  FPO_DATA_SIZE,
  FRAME_FPO,
  FRAME_NONFPO,
  FRAME_TRAP,
  FRAME_TSS,
  decodeFpoData,
  decodeFpoTable,
  encodeFpoData,
  encodeFpoTable,
  fpoAttributeWord,
} from "../../src/model/fpo-data.js";
import type { FpoData } from "../../src/model/fpo-data.js";

const ZERO: FpoData = {
  ulOffStart: 0,
  cbProcSize: 0,
  cdwLocals: 0,
  cdwParams: 0,
  cbProlog: 0,
  cbRegs: 0,
  fHasSEH: false,
  fUseBP: false,
  reserved: 0,
  cbFrame: 0,
};

/** The little-endian u16 at bytes 14-15 of an encoded record. */
const wordOf = (f: FpoData): number => {
  const b = encodeFpoData(f);
  return b[14]! | (b[15]! << 8);
};

function expectTruncatedAt(fn: () => unknown, offset: number): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(InputError);
  expect((caught as InputError).code).toBe("truncated");
  expect((caught as InputError).offset).toBe(offset);
}

const arbFpo: fc.Arbitrary<FpoData> = fc.record({
  ulOffStart: fc.integer({ min: 0, max: 0xffff_ffff }),
  cbProcSize: fc.integer({ min: 0, max: 0xffff_ffff }),
  cdwLocals: fc.integer({ min: 0, max: 0xffff_ffff }),
  cdwParams: fc.integer({ min: 0, max: 0xffff }),
  cbProlog: fc.integer({ min: 0, max: 0xff }),
  cbRegs: fc.integer({ min: 0, max: 7 }),
  fHasSEH: fc.boolean(),
  fUseBP: fc.boolean(),
  reserved: fc.integer({ min: 0, max: 1 }),
  cbFrame: fc.integer({ min: 0, max: 3 }),
});

describe("FPO_DATA layout (stackwalk64.md §2.7, x86-fpo.md §1.1)", () => {
  it("is 16 bytes: ulOffStart@0/4, cbProcSize@4/4, cdwLocals@8/4, cdwParams@12/2, bit fields@14/2", () => {
    expect(FPO_DATA_SIZE).toBe(16);
    expect(FPO_DATA_LAYOUT.size).toBe(16);
    expect(FPO_DATA_LAYOUT.fields.map((f) => [f.name, f.offset, f.size])).toEqual([
      ["ulOffStart", 0, 4],
      ["cbProcSize", 4, 4],
      ["cdwLocals", 8, 4],
      ["cdwParams", 12, 2],
      ["Attributes", 14, 2],
    ]);
  });

  it("lists the bit fields at bits 0-7, 8-10, 11, 12, 13, 14-15", () => {
    expect(FPO_ATTRIBUTE_BITS.map((b) => [b.name, b.bit, b.width])).toEqual([
      ["cbProlog", 0, 8],
      ["cbRegs", 8, 3],
      ["fHasSEH", 11, 1],
      ["fUseBP", 12, 1],
      ["reserved", 13, 1],
      ["cbFrame", 14, 2],
    ]);
  });

  it("has the frame kinds FPO=0, TRAP=1, TSS=2, NONFPO=3 (x86-fpo.md §1.2)", () => {
    expect([FRAME_FPO, FRAME_TRAP, FRAME_TSS, FRAME_NONFPO]).toEqual([0, 1, 2, 3]);
  });
});

describe("FPO_DATA bit fields, one at a time", () => {
  it("cbProlog = 0xFF → 0x00FF (and the measured 0xAB → 0x00AB)", () => {
    expect(wordOf({ ...ZERO, cbProlog: 0xff })).toBe(0x00ff);
    expect(wordOf({ ...ZERO, cbProlog: 0xab })).toBe(0x00ab);
  });

  it("cbRegs = 7 → 0x0700", () => {
    expect(wordOf({ ...ZERO, cbRegs: 7 })).toBe(0x0700);
  });

  it("fHasSEH = true → 0x0800", () => {
    expect(wordOf({ ...ZERO, fHasSEH: true })).toBe(0x0800);
  });

  it("fUseBP = true → 0x1000", () => {
    expect(wordOf({ ...ZERO, fUseBP: true })).toBe(0x1000);
  });

  it("reserved = 1 → 0x2000", () => {
    expect(wordOf({ ...ZERO, reserved: 1 })).toBe(0x2000);
  });

  it("cbFrame = 3 → 0xC000", () => {
    expect(wordOf({ ...ZERO, cbFrame: FRAME_NONFPO })).toBe(0xc000);
  });

  it("fpoAttributeWord agrees with the encoded bytes", () => {
    fc.assert(
      fc.property(arbFpo, (f) => {
        expect(fpoAttributeWord(f)).toBe(wordOf(f));
      }),
    );
  });

  it("decodes 0x1205 as cbProlog 5, cbRegs 2, no SEH, UseBP (the word LLVM misreads)", () => {
    const b = new Uint8Array(16);
    b[14] = 0x05;
    b[15] = 0x12;
    const f = decodeFpoData(b);
    expect(f.cbProlog).toBe(5);
    expect(f.cbRegs).toBe(2);
    expect(f.fHasSEH).toBe(false);
    expect(f.fUseBP).toBe(true);
    expect(f.reserved).toBe(0);
    expect(f.cbFrame).toBe(FRAME_FPO);
  });
});

describe("FPO_DATA encode/decode", () => {
  it("encodes a full record byte for byte", () => {
    const f: FpoData = {
      ulOffStart: 0x0000_1010,
      cbProcSize: 0x42,
      cdwLocals: 3,
      cdwParams: 2,
      cbProlog: 6,
      cbRegs: 3,
      fHasSEH: false,
      fUseBP: false,
      reserved: 0,
      cbFrame: FRAME_FPO,
    };
    expect(Array.from(encodeFpoData(f))).toEqual([0x10, 0x10, 0, 0, 0x42, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0x06, 0x03]);
  });

  it("round-trips records", () => {
    fc.assert(
      fc.property(arbFpo, (f) => {
        expect(decodeFpoData(encodeFpoData(f))).toEqual(f);
      }),
    );
  });

  it("round-trips any 16 bytes (every bit is modelled)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (b) => {
        expect(encodeFpoData(decodeFpoData(b))).toEqual(b);
      }),
    );
  });

  it("rejects out-of-range values with a RangeError naming the field", () => {
    const cases: [Partial<FpoData>, RegExp][] = [
      [{ cbProlog: 0x100 }, /cbProlog/],
      [{ cbRegs: 8 }, /cbRegs/],
      [{ reserved: 2 }, /reserved/],
      [{ cbFrame: 4 }, /cbFrame/],
      [{ cdwParams: 0x10000 }, /cdwParams/],
      [{ cdwLocals: 2 ** 32 }, /cdwLocals/],
      [{ ulOffStart: -1 }, /ulOffStart/],
      [{ cbProcSize: 1.5 }, /cbProcSize/],
    ];
    for (const [patch, name] of cases) {
      expect(() => encodeFpoData({ ...ZERO, ...patch })).toThrow(RangeError);
      expect(() => encodeFpoData({ ...ZERO, ...patch })).toThrow(name);
    }
  });

  it("reads at an offset inside a view of a larger buffer", () => {
    const backing = new Uint8Array(64).fill(0xff);
    const sub = backing.subarray(5, 5 + 40);
    const f = { ...ZERO, ulOffStart: 0x2000, fUseBP: true, cbFrame: FRAME_NONFPO };
    encodeFpoData(f, sub, 16);
    expect(decodeFpoData(sub, 16)).toEqual(f);
    expect(backing[5 + 16]).toBe(0x00);
    expect(backing[5 + 16 + 1]).toBe(0x20);
  });

  it("throws InputError(truncated) at the cut field", () => {
    expectTruncatedAt(() => decodeFpoData(new Uint8Array(15)), 14);
    expectTruncatedAt(() => decodeFpoData(new Uint8Array(13)), 12);
    expectTruncatedAt(() => decodeFpoData(new Uint8Array(20), 8), 8 + 12);
  });
});

describe("FPO_DATA tables", () => {
  it("decodes a packed array", () => {
    const records = [
      { ...ZERO, ulOffStart: 0x1000, cbProcSize: 0x20 },
      { ...ZERO, ulOffStart: 0x1020, cbProcSize: 0x30, cbRegs: 2, fUseBP: true },
      { ...ZERO, ulOffStart: 0x1050, cbProcSize: 0x10, cbFrame: FRAME_TRAP },
    ];
    const bytes = encodeFpoTable(records);
    expect(bytes.length).toBe(48);
    expect(decodeFpoTable(bytes)).toEqual(records);
    expect(decodeFpoTable(new Uint8Array(0))).toEqual([]);
  });

  it("rejects a length that is not a multiple of 16, at the offset of the partial record", () => {
    expectTruncatedAt(() => decodeFpoTable(new Uint8Array(40)), 32);
    expectTruncatedAt(() => decodeFpoTable(new Uint8Array(5)), 0);
    expectTruncatedAt(() => decodeFpoTable(new Uint8Array(17)), 16);
  });

  it("round-trips tables", () => {
    fc.assert(
      fc.property(fc.array(arbFpo, { maxLength: 8 }), (rs) => {
        expect(decodeFpoTable(encodeFpoTable(rs))).toEqual(rs);
      }),
    );
  });
});
