/**
 * The ARM64 unwind-data decoders (src/formats/unwind-data/arm64-codes.ts and arm64-xdata.ts)
 * against the emulator's encoder (emulator/programs/arm64-unwind-encode.ts), which shares no code
 * with them: every unwind code, `.xdata` record and packed `.pdata` word the encoder writes
 * decodes to what it was written from.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ARM64_CODE, packedWord, xdataBytes, type PackedUnwind, type XdataRecord } from "../../../emulator/programs/arm64-unwind-encode.js";
import { decodeCode, type DecodedCode } from "../../../src/formats/unwind-data/arm64-codes.js";
import { decodeXdata, packedFields } from "../../../src/formats/unwind-data/arm64-xdata.js";
import { isProblem } from "../../../src/formats/unwind-data/problem.js";

type CodeName = keyof typeof ARM64_CODE;

/** A code as the encoder is called to write it: its name and arguments. */
type Call = [CodeName, ...number[]];

/** A decoded code as the encoder call that writes it. */
function callOf(d: DecodedCode): Call {
  const c = d.code;
  switch (c.op) {
    case "alloc":
      return [c.name, c.size];
    case "save":
      if (c.name === "save_any_reg") throw new Error("the encoder writes no save_any_reg");
      // The codes with fixed registers name only the offset.
      if (c.name === "save_r19r20_x" || c.name === "save_fplr" || c.name === "save_fplr_x") return [c.name, c.offset];
      return [c.name, c.first, c.offset];
    case "add_fp":
      return ["add_fp", c.offset];
    case "custom":
      if (c.name !== "machine_frame" && c.name !== "clear_unwound_to_call") throw new Error(`the encoder writes no ${c.name}`);
      return [c.name];
    case "nop":
      return ["nop"];
    case "set_fp":
    case "end":
    case "end_c":
    case "save_next":
    case "pac_sign_lr":
      return [c.op];
    case "invalid":
      throw new Error(`invalid: ${c.why}`);
  }
}

function encode([name, ...args]: Call): number[] {
  return (ARM64_CODE[name] as (...a: number[]) => number[])(...args);
}

/** n·unit for n in [min, max]. */
const units = (unit: number, min: number, max: number): fc.Arbitrary<number> => fc.integer({ min, max }).map((n) => n * unit);
const from = (first: number, count: number, step = 1): fc.Arbitrary<number> => fc.integer({ min: 0, max: count - 1 }).map((i) => first + step * i);

/** Every code the encoder writes, over the ranges of its fields in the format. */
const calls: fc.Arbitrary<Call> = fc.oneof(
  units(16, 0, 31).map((b): Call => ["alloc_s", b]),
  units(8, 0, 31).map((b): Call => ["save_r19r20_x", b]),
  units(8, 0, 63).map((b): Call => ["save_fplr", b]),
  units(8, 1, 64).map((b): Call => ["save_fplr_x", b]),
  units(16, 0, 0x7ff).map((b): Call => ["alloc_m", b]),
  fc.tuple(from(19, 16), units(8, 0, 63)).map(([r, b]): Call => ["save_regp", r, b]),
  fc.tuple(from(19, 16), units(8, 1, 64)).map(([r, b]): Call => ["save_regp_x", r, b]),
  fc.tuple(from(19, 16), units(8, 0, 63)).map(([r, b]): Call => ["save_reg", r, b]),
  fc.tuple(from(19, 16), units(8, 1, 32)).map(([r, b]): Call => ["save_reg_x", r, b]),
  fc.tuple(from(19, 8, 2), units(8, 0, 63)).map(([r, b]): Call => ["save_lrpair", r, b]),
  fc.tuple(from(8, 8), units(8, 0, 63)).map(([r, b]): Call => ["save_fregp", r, b]),
  fc.tuple(from(8, 8), units(8, 1, 64)).map(([r, b]): Call => ["save_fregp_x", r, b]),
  fc.tuple(from(8, 8), units(8, 0, 63)).map(([r, b]): Call => ["save_freg", r, b]),
  fc.tuple(from(8, 8), units(8, 1, 32)).map(([r, b]): Call => ["save_freg_x", r, b]),
  units(16, 0, 0xff_ffff).map((b): Call => ["alloc_l", b]),
  units(8, 0, 255).map((b): Call => ["add_fp", b]),
  fc.constantFrom<Call>(["set_fp"], ["nop"], ["end"], ["end_c"], ["save_next"], ["pac_sign_lr"], ["machine_frame"], ["clear_unwound_to_call"]),
);

/** Decodes a whole code string, code after code. */
function decodeAll(bytes: Uint8Array): DecodedCode[] {
  const out: DecodedCode[] = [];
  for (let at = 0; at < bytes.length; ) {
    const d = decodeCode(bytes, at);
    out.push(d);
    at += d.length;
  }
  return out;
}

describe("ARM64 unwind codes round trip through the emulator's encoder", () => {
  it("decodes each code the encoder writes to its name and fields, with its length (property)", () => {
    fc.assert(
      fc.property(calls, (call) => {
        const bytes = Uint8Array.from(encode(call));
        const decoded = decodeCode(bytes, 0);
        expect(decoded.length).toBe(bytes.length);
        expect(callOf(decoded)).toEqual(call);
      }),
      { numRuns: 3000 },
    );
  });

  it("decodes a string of codes one after another to the codes written (property)", () => {
    fc.assert(
      fc.property(fc.array(calls, { maxLength: 16 }), (list) => {
        const bytes = Uint8Array.from(list.flatMap(encode));
        expect(decodeAll(bytes).map(callOf)).toEqual(list);
      }),
      { numRuns: 1000 },
    );
  });
});

describe(".xdata records and packed words round trip through the emulator's encoder", () => {
  const record: fc.Arbitrary<XdataRecord> = fc
    .record({
      length: fc.integer({ min: 0, max: 0x3_ffff }),
      codes: fc.array(calls, { maxLength: 30 }).map((list) => list.flatMap(encode)),
      single: fc.boolean(),
      index: fc.nat(),
      scopes: fc.array(fc.record({ start: fc.integer({ min: 0, max: 0x3_ffff }), index: fc.nat() }), { maxLength: 31 }),
    })
    .filter(({ codes }) => codes.length <= 4 * 31)
    .map(({ length, codes, single, index, scopes }): XdataRecord => {
      // Code indexes lie within the codes (padded to a word), as the decoder requires.
      const bytes = (codes.length + 3) & ~3;
      if (single) return { length, codes, epilogIndex: Math.min(index % (bytes + 1), 31) };
      return { length, codes, scopes: scopes.map((s) => ({ start: s.start, index: s.index % (bytes + 1) })) };
    })
    .filter((r) => r.codes.length > 0 || (r.epilogIndex ?? r.scopes?.length ?? 0) > 0);

  it("decodes every .xdata record the encoder writes: length, epilog form, scopes and the codes padded with nops (property)", () => {
    fc.assert(
      fc.property(record, (r) => {
        const bytes = xdataBytes(r);
        const image = new Uint8Array(0x1000 + bytes.length);
        image.set(bytes, 0x1000);
        const data = decodeXdata((rva, size) => (rva + size <= image.length ? image.subarray(rva, rva + size) : undefined), 0x1000);
        if (isProblem(data)) throw new Error(data.problem);
        const padded = [...r.codes];
        while (padded.length % 4 !== 0) padded.push(0xe3);
        expect(data).toEqual({
          source: { form: "xdata", rva: 0x1000 },
          functionLength: r.length,
          epilogInHeader: r.epilogIndex !== undefined,
          epilogIndex: r.epilogIndex ?? 0,
          scopes: r.scopes ?? [],
          codes: Uint8Array.from(padded),
          handler: false,
        });
      }),
      { numRuns: 1000 },
    );
  });

  it("splits every packed word the encoder writes into the fields it was written from (property)", () => {
    const packed = fc.record({
      flag: fc.constantFrom(1 as const, 2 as const),
      regF: fc.integer({ min: 0, max: 7 }),
      regI: fc.integer({ min: 0, max: 15 }),
      h: fc.boolean(),
      cr: fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const),
      frameSize: units(16, 0, 0x1ff),
    });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x7ff }), packed, (length, p: Required<PackedUnwind>) => {
        expect(packedFields(packedWord(length, p))).toEqual({ flag: p.flag, functionLength: length, regF: p.regF, regI: p.regI, h: p.h, cr: p.cr, frameSize: p.frameSize / 16 });
      }),
      { numRuns: 1000 },
    );
  });
});
