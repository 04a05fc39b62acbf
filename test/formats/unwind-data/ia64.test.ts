/**
 * IA-64 unwind descriptors (ia64.md §3): every record format decoded and encoded bit-exactly,
 * round trips both ways, the spec's worked example, the info header and the table entry, and bad
 * streams (past their length, undefined codes, reserved bits) as InputErrors naming the offset;
 * and what the emulator's own encoder (emulator/ia64/unwind-encode.ts, which shares no code with
 * this codec) writes, decoded back to the records it was given.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeRecords, unwindInfoBlock, type Record as EmulatorRecord } from "../../../emulator/ia64/unwind-encode.js";
import { InputError } from "../../../src/errors.js";
import {
  decodeDescriptors,
  decodeRuntimeFunctions,
  decodeUnwindInfo,
  encodeDescriptors,
  encodeRecord,
  encodeRuntimeFunctions,
  encodeUnwindInfo,
  P3_KINDS,
  P7_KINDS,
  P8_KINDS,
  packUnwindInfoHeader,
  pushUleb128,
  recordText,
  spillMaskBytes,
  unpackUnwindInfoHeader,
  type UnwindRecord,
} from "../../../src/formats/unwind-data/ia64.js";

const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(" ");
const bytes = (s: string): Uint8Array => Uint8Array.from(s.split(/\s+/).filter(Boolean).map((x) => parseInt(x, 16)));
const records = (s: string): UnwindRecord[] => decodeDescriptors(bytes(s)).map((d) => d.record);

function inputError(f: () => unknown): InputError {
  try {
    f();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error("no InputError");
}

/** A prologue header (rlen 10) to decode prologue records in, and a body header for body records. */
const PROLOGUE: UnwindRecord = { format: "R1", body: false, rlen: 10 };
const BODY: UnwindRecord = { format: "R1", body: true, rlen: 10 };

/** One example of every record the codec knows, each in the region kind it belongs to. */
const EXAMPLES: { bytes: string; region: UnwindRecord | undefined; record: UnwindRecord }[] = [
  { bytes: "06", region: undefined, record: { format: "R1", body: false, rlen: 6 } },
  { bytes: "29", region: undefined, record: { format: "R1", body: true, rlen: 9 } },
  { bytes: "46 21 0c", region: undefined, record: { format: "R2", body: false, mask: 0xc, grsave: 33, rlen: 12 } },
  { bytes: "47 a1 80 01", region: undefined, record: { format: "R2", body: false, mask: 0xf, grsave: 33, rlen: 128 } },
  { bytes: "60 c8 01", region: undefined, record: { format: "R3", body: false, rlen: 200 } },
  { bytes: "61 20", region: undefined, record: { format: "R3", body: true, rlen: 32 } },
  { bytes: "95", region: PROLOGUE, record: { format: "P1", brmask: 0x15 } },
  { bytes: "a7 a5", region: PROLOGUE, record: { format: "P2", brmask: 0xf, gr: 37 } },
  { bytes: "b0 a1", region: PROLOGUE, record: { format: "P3", kind: "rp_gr", reg: 33 } },
  { bytes: "b1 22", region: PROLOGUE, record: { format: "P3", kind: "pfs_gr", reg: 34 } },
  { bytes: "b0 23", region: PROLOGUE, record: { format: "P3", kind: "psp_gr", reg: 35 } },
  { bytes: "b3 01", region: PROLOGUE, record: { format: "P3", kind: "rp_br", reg: 1 } },
  { bytes: "b8 a5 5a 0f", region: PROLOGUE, record: { format: "P4", imask: Uint8Array.of(0xa5, 0x5a, 0x0f) } },
  { bytes: "b9 3f ff ff", region: PROLOGUE, record: { format: "P5", grmask: 3, frmask: 0xfffff } },
  { bytes: "c5", region: PROLOGUE, record: { format: "P6", kind: "fr_mem", mask: 5 } },
  { bytes: "d9", region: PROLOGUE, record: { format: "P6", kind: "gr_mem", mask: 9 } },
  { bytes: "e0 02 02", region: PROLOGUE, record: { format: "P7", kind: "mem_stack_f", value: 2, size: 2 } },
  { bytes: "e0 03 80 02", region: PROLOGUE, record: { format: "P7", kind: "mem_stack_f", value: 3, size: 256 } },
  { bytes: "e1 04", region: PROLOGUE, record: { format: "P7", kind: "mem_stack_v", value: 4 } },
  { bytes: "e3 04", region: PROLOGUE, record: { format: "P7", kind: "psp_sprel", value: 4 } },
  { bytes: "e4 01", region: PROLOGUE, record: { format: "P7", kind: "rp_when", value: 1 } },
  { bytes: "e5 06", region: PROLOGUE, record: { format: "P7", kind: "rp_psprel", value: 6 } },
  { bytes: "e6 00", region: PROLOGUE, record: { format: "P7", kind: "pfs_when", value: 0 } },
  { bytes: "e7 08", region: PROLOGUE, record: { format: "P7", kind: "pfs_psprel", value: 8 } },
  { bytes: "f0 01 04", region: PROLOGUE, record: { format: "P8", kind: "rp_sprel", value: 4 } },
  { bytes: "f0 02 06", region: PROLOGUE, record: { format: "P8", kind: "pfs_sprel", value: 6 } },
  { bytes: "f0 13 05", region: PROLOGUE, record: { format: "P8", kind: "priunat_when_mem", value: 5 } },
  { bytes: "f1 0c 29", region: PROLOGUE, record: { format: "P9", grmask: 0xc, gr: 41 } },
  { bytes: "ff 03 69", region: PROLOGUE, record: { format: "P10", abi: 3, context: 0x69 } },
  { bytes: "81", region: BODY, record: { format: "B1", kind: "label_state", label: 1 } },
  { bytes: "a1", region: BODY, record: { format: "B1", kind: "copy_state", label: 1 } },
  { bytes: "c0 01", region: BODY, record: { format: "B2", ecount: 0, t: 1 } },
  { bytes: "df 90 01", region: BODY, record: { format: "B2", ecount: 31, t: 144 } },
  { bytes: "e0 05 40", region: BODY, record: { format: "B3", t: 5, ecount: 64 } },
  { bytes: "f0 40", region: BODY, record: { format: "B4", kind: "label_state", label: 64 } },
  { bytes: "f8 40", region: BODY, record: { format: "B4", kind: "copy_state", label: 64 } },
  { bytes: "f9 84 03 10", region: PROLOGUE, record: { format: "X1", sprel: true, abreg: 4, t: 3, offset: 16 } },
  { bytes: "fa 81 86 02", region: BODY, record: { format: "X2", x: 1, abreg: 1, ytreg: 0x86, t: 2 } },
  { bytes: "fb 85 06 03 08", region: PROLOGUE, record: { format: "X3", sprel: true, qp: 5, abreg: 6, t: 3, offset: 8 } },
  { bytes: "fc 3f 87 00 07", region: BODY, record: { format: "X4", qp: 0x3f, x: 1, abreg: 7, ytreg: 0, t: 7 } },
];

describe("descriptor records (§3.4)", () => {
  it.each(EXAMPLES)("$bytes decodes to its record and encodes back to the same bytes", ({ bytes: b, region, record }) => {
    const prefix = region === undefined ? [] : [region];
    const stream = encodeDescriptors([...prefix, record]);
    expect(hex(stream.subarray(prefix.length === 0 ? 0 : 1))).toBe(hex(bytes(b)));
    const decoded = decodeDescriptors(stream);
    expect(decoded.at(-1)!.record).toEqual(record);
    expect(decoded.at(-1)!.offset).toBe(prefix.length === 0 ? 0 : 1);
    expect(hex(encodeRecord(decoded.at(-1)!.record))).toBe(hex(bytes(b)));
    expect(recordText(record).startsWith(record.format)).toBe(true);
  });

  it("covers every P3, P7 and P8 kind both ways", () => {
    for (const kind of P3_KINDS) expect(records(hex(encodeDescriptors([PROLOGUE, { format: "P3", kind, reg: 77 }])))[1]).toEqual({ format: "P3", kind, reg: 77 });
    for (const kind of P7_KINDS) {
      const r: UnwindRecord = kind === "mem_stack_f" ? { format: "P7", kind, value: 300, size: 5 } : { format: "P7", kind, value: 300 };
      expect(records(hex(encodeDescriptors([PROLOGUE, r])))[1]).toEqual(r);
    }
    for (const kind of P8_KINDS) expect(records(hex(encodeDescriptors([PROLOGUE, { format: "P8", kind, value: 1000 }])))[1]).toEqual({ format: "P8", kind, value: 1000 });
  });

  it("decodes the first byte by region: 0xF1 is P9 in a prologue and X1 in a body (the kernel reads bits 2:0 there)", () => {
    expect(records("00 f1 0c 29")[1]).toEqual({ format: "P9", grmask: 0xc, gr: 41 });
    expect(records("20 f1 84 03 10")[1]).toEqual({ format: "X1", sprel: true, abreg: 4, t: 3, offset: 16 });
    expect(records("20 b0")[1]).toEqual({ format: "B1", kind: "copy_state", label: 0x10 });
    expect(records("00 b0 a1")[1]).toEqual({ format: "P3", kind: "rp_gr", reg: 33 });
  });

  it("sizes a P4 spill mask by the enclosing prologue's rlen: 2 bits per slot", () => {
    expect(spillMaskBytes(10)).toBe(3);
    expect(spillMaskBytes(4)).toBe(1);
    expect(records("04 b8 ff 00")).toEqual([{ format: "R1", body: false, rlen: 4 }, { format: "P4", imask: Uint8Array.of(0xff) }, { format: "R1", body: false, rlen: 0 }]);
  });

  it("round-trips random records of every kind (property)", () => {
    const u = fc.integer({ min: 0, max: 0xffff_ffff });
    const n = (bits: number): fc.Arbitrary<number> => fc.integer({ min: 0, max: 2 ** bits - 1 });
    const prologueRecord: fc.Arbitrary<UnwindRecord> = fc.oneof(
      fc.record({ format: fc.constant("P1" as const), brmask: n(5) }),
      fc.record({ format: fc.constant("P2" as const), brmask: n(5), gr: n(7) }),
      fc.record({ format: fc.constant("P3" as const), kind: fc.constantFrom(...P3_KINDS), reg: n(7) }),
      fc.record({ format: fc.constant("P5" as const), grmask: n(4), frmask: n(20) }),
      fc.record({ format: fc.constant("P6" as const), kind: fc.constantFrom("fr_mem" as const, "gr_mem" as const), mask: n(4) }),
      fc.record({ format: fc.constant("P7" as const), kind: fc.constantFrom(...P7_KINDS.filter((k) => k !== "mem_stack_f")), value: u }),
      fc.record({ format: fc.constant("P7" as const), kind: fc.constant("mem_stack_f" as const), value: u, size: u }),
      fc.record({ format: fc.constant("P8" as const), kind: fc.constantFrom(...P8_KINDS), value: u }),
      fc.record({ format: fc.constant("P9" as const), grmask: n(4), gr: n(7) }),
      fc.record({ format: fc.constant("P10" as const), abi: n(8), context: n(8) }),
      fc.record({ format: fc.constant("X1" as const), sprel: fc.boolean(), abreg: n(7), t: u, offset: u }),
      fc.record({ format: fc.constant("X3" as const), sprel: fc.boolean(), qp: n(6), abreg: n(7), t: u, offset: u }),
    );
    const bodyRecord: fc.Arbitrary<UnwindRecord> = fc.oneof(
      fc.record({ format: fc.constant("B1" as const), kind: fc.constantFrom("label_state" as const, "copy_state" as const), label: n(5) }),
      fc.record({ format: fc.constant("B2" as const), ecount: n(5), t: u }),
      fc.record({ format: fc.constant("B3" as const), t: u, ecount: u }),
      fc.record({ format: fc.constant("B4" as const), kind: fc.constantFrom("label_state" as const, "copy_state" as const), label: u }),
      fc.record({ format: fc.constant("X2" as const), x: n(1), abreg: n(7), ytreg: n(8), t: u }),
      fc.record({ format: fc.constant("X4" as const), qp: n(6), x: n(1), abreg: n(7), ytreg: n(8), t: u }),
    );
    const region = fc.oneof(
      fc.record({ format: fc.constant("R1" as const), body: fc.boolean(), rlen: n(5) }),
      fc.record({ format: fc.constant("R3" as const), body: fc.boolean(), rlen: u }),
      fc.record({ format: fc.constant("R2" as const), body: fc.constant(false as const), mask: n(4), grsave: n(7), rlen: u }),
    );
    const stream = fc.array(fc.tuple(region, fc.array(prologueRecord, { maxLength: 4 }), fc.array(bodyRecord, { maxLength: 4 })), { maxLength: 5 }).map((regions) =>
      regions.flatMap(([r, p, b]) => [r, ...(r.body ? b : p)]),
    );
    fc.assert(
      fc.property(stream, (list) => {
        const encoded = encodeDescriptors(list);
        const decoded = decodeDescriptors(encoded).map((d) => d.record);
        expect(decoded).toEqual(list);
        expect(hex(encodeDescriptors(decoded))).toBe(hex(encoded));
      }),
      { numRuns: 500 },
    );
  });

  it("writes ULEB128 in its shortest form", () => {
    const out: number[] = [];
    pushUleb128(out, 0);
    pushUleb128(out, 127);
    pushUleb128(out, 128);
    pushUleb128(out, 0xffff_ffff);
    expect(out).toEqual([0, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(() => pushUleb128([], -1)).toThrow(RangeError);
  });
});

describe("the worked example (§3.5)", () => {
  const STREAM = "06 e6 00 b1 22 e4 01 b0 a1 e0 02 02 29 c0 01 00";

  it("decodes record for record", () => {
    expect(records(STREAM)).toEqual([
      { format: "R1", body: false, rlen: 6 },
      { format: "P7", kind: "pfs_when", value: 0 },
      { format: "P3", kind: "pfs_gr", reg: 34 },
      { format: "P7", kind: "rp_when", value: 1 },
      { format: "P3", kind: "rp_gr", reg: 33 },
      { format: "P7", kind: "mem_stack_f", value: 2, size: 2 },
      { format: "R1", body: true, rlen: 9 },
      { format: "B2", ecount: 0, t: 1 },
      { format: "R1", body: false, rlen: 0 },
    ]);
  });

  it("is a 2-word info block with header 0x0001000000000002", () => {
    const info = encodeUnwindInfo(records(STREAM).slice(0, -1));
    expect(info.length).toBe(24);
    expect(new DataView(info.buffer).getBigUint64(0, true)).toBe(0x0001_0000_0000_0002n);
    expect(hex(info.subarray(8))).toBe(STREAM);
    const back = decodeUnwindInfo(info, 0x3000);
    expect(back.header).toEqual({ version: 1, flags: 0, length: 2 });
    expect(back.records[0]!.offset).toBe(0x3008);
    expect(back.records.map((r) => r.record)).toEqual(records(STREAM));
  });
});

describe("the info header and the table entry (§3.1, §3.2)", () => {
  it("packs version 63:48, flags 47:32, length 31:0", () => {
    const h = { version: 1, flags: 0x3, length: 0x1234 };
    expect(packUnwindInfoHeader(h)).toBe(0x0001_0003_0000_1234n);
    expect(unpackUnwindInfoHeader(0x0001_0003_0000_1234n)).toEqual(h);
  });

  it("encodes IMAGE_IA64_RUNTIME_FUNCTION_ENTRY as three little-endian u32s", () => {
    const entries = [{ begin: 0x1000, end: 0x1040, unwindInfo: 0x3000 }, { begin: 0x1040, end: 0x10a0, unwindInfo: 0x3018 }];
    const b = encodeRuntimeFunctions(entries);
    expect(hex(b.subarray(0, 12))).toBe("00 10 00 00 40 10 00 00 00 30 00 00");
    expect(decodeRuntimeFunctions(b)).toEqual(entries);
    expect(inputError(() => decodeRuntimeFunctions(b.subarray(0, 20), 0x2000))).toMatchObject({ code: "truncated", offset: 0x200c });
  });
});

describe("bad descriptor streams", () => {
  it.each([
    ["a P3 cut after its first byte", "00 b0", 1],
    ["a ULEB128 that never ends", "00 e4 81 82 83", 1],
    ["an R2 whose rlen runs past the end", "46 21", 0],
    ["a P4 mask longer than the stream", "0a b8 ff", 1],
    ["a B3 missing its ecount", "20 e0 05", 1],
    ["an X3 cut short", "00 fb 85 06 03", 1],
  ])("%s is an InputError naming the record's offset", (_what, s, at) => {
    const e = inputError(() => decodeDescriptors(bytes(s), 0x100));
    expect(e.code).toBe("truncated");
    expect(e.offset).toBe(0x100 + at);
  });

  it.each([
    ["an undefined P3 r (12)", "00 b6 00", 1],
    ["an undefined P8 r (0)", "00 f0 00 00", 1],
    ["an undefined prologue code 0xBA", "00 ba", 1],
    ["an undefined prologue code 0xF2", "00 f2", 1],
    ["an R2 with reserved bits set", "48 21 01", 0],
    ["an R3 with region type 2", "62 01", 0],
    ["a B3 with reserved bits", "20 e1 01 01", 1],
    ["a body code 0xF5", "20 f5", 1],
  ])("%s is an InputError", (_what, s, at) => {
    const e = inputError(() => decodeDescriptors(bytes(s), 0));
    expect(e.code).toBe("bad-value");
    expect(e.offset).toBe(at);
  });

  it("refuses a ULEB128 beyond 32 bits", () => {
    expect(inputError(() => decodeDescriptors(bytes("00 e4 ff ff ff ff 7f")))).toMatchObject({ code: "bad-value", offset: 1 });
  });

  it("refuses an info block whose length runs past the data, or whose version is not 1", () => {
    const info = encodeUnwindInfo([{ format: "R1", body: false, rlen: 3 }]);
    expect(inputError(() => decodeUnwindInfo(info.subarray(0, 12), 0x40))).toMatchObject({ code: "truncated", offset: 0x40 });
    const v2 = info.slice();
    v2[6] = 2;
    expect(inputError(() => decodeUnwindInfo(v2))).toMatchObject({ code: "bad-value" });
    expect(inputError(() => decodeUnwindInfo(info.subarray(0, 5)))).toMatchObject({ code: "truncated" });
  });

  it("never throws anything but InputError, and always ends, on random bytes (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        try {
          const decoded = decodeDescriptors(b);
          expect(decoded.length).toBeLessThanOrEqual(b.length);
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("round trips through the emulator's encoder", () => {
  /** A decoded record in the emulator's terms (its `which` is the record's r field). */
  function emulatorRecord(r: UnwindRecord): EmulatorRecord {
    switch (r.format) {
      case "R1":
      case "R3":
        return { r: r.format, body: r.body, rlen: r.rlen };
      case "R2":
        return { r: "R2", mask: r.mask, grsave: r.grsave, rlen: r.rlen };
      case "P3":
        return { r: "P3", which: P3_KINDS.indexOf(r.kind) as 0 | 1 | 2 | 6, reg: r.reg };
      case "P7":
        return r.kind === "mem_stack_f"
          ? { r: "P7", which: 0, value: r.value, size: r.size ?? 0 }
          : { r: "P7", which: P7_KINDS.indexOf(r.kind) as 1 | 3 | 4 | 5 | 6 | 7, value: r.value };
      case "P8":
        return { r: "P8", which: (P8_KINDS.indexOf(r.kind) + 1) as 1 | 2, value: r.value };
      case "B2":
        return { r: "B2", ecount: r.ecount, t: r.t };
      default:
        throw new Error(`the emulator writes no ${r.format} record`);
    }
  }

  const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
  const small = fc.integer({ min: 0, max: 300 });
  const prologueRecord: fc.Arbitrary<EmulatorRecord> = fc.oneof(
    fc.record({ r: fc.constant("P3" as const), which: fc.constantFrom(0 as const, 1 as const, 2 as const, 6 as const), reg: fc.integer({ min: 0, max: 127 }) }),
    fc.record({ r: fc.constant("P7" as const), which: fc.constant(0 as const), value: small, size: u32 }),
    fc.record({ r: fc.constant("P7" as const), which: fc.constantFrom(1 as const, 3 as const, 4 as const, 5 as const, 6 as const, 7 as const), value: u32 }),
    fc.record({ r: fc.constant("P8" as const), which: fc.constantFrom(1 as const, 2 as const), value: u32 }),
  );
  const rlen = fc.integer({ min: 0, max: 5000 });
  const prologue = fc.tuple(
    fc.oneof(
      fc.record({ r: fc.constant("R1" as const), body: fc.constant(false), rlen: fc.integer({ min: 0, max: 31 }) }),
      fc.record({ r: fc.constant("R2" as const), mask: fc.integer({ min: 0, max: 15 }), grsave: fc.integer({ min: 0, max: 127 }), rlen }),
      fc.record({ r: fc.constant("R3" as const), body: fc.constant(false), rlen }),
    ),
    fc.array(prologueRecord, { maxLength: 6 }),
  );
  const body = fc.tuple(
    fc.oneof(
      fc.record({ r: fc.constant("R1" as const), body: fc.constant(true), rlen: fc.integer({ min: 0, max: 31 }) }),
      fc.record({ r: fc.constant("R3" as const), body: fc.constant(true), rlen }),
    ),
    fc.array(fc.record({ r: fc.constant("B2" as const), ecount: fc.integer({ min: 0, max: 31 }), t: u32 }), { maxLength: 3 }),
  );
  /** Regions as the emulator lays them out: a header, then the records of its kind. */
  const regions = fc.array(fc.oneof(prologue, body), { minLength: 1, maxLength: 5 }).map((rs) => rs.flatMap(([header, records]): EmulatorRecord[] => [header, ...records]));

  it("decodes every record stream the emulator writes to the records it was given (property)", () => {
    fc.assert(
      fc.property(regions, (records) => {
        const decoded = decodeDescriptors(Uint8Array.from(encodeRecords(records)));
        expect(decoded.map((d) => emulatorRecord(d.record))).toEqual(records);
      }),
      { numRuns: 1000 },
    );
  });

  it("decodes the emulator's unwind info blocks: version 1, no flags, the records, then zero padding (property)", () => {
    fc.assert(
      fc.property(regions, (records) => {
        const block = unwindInfoBlock(records);
        const info = decodeUnwindInfo(block);
        expect(info.header).toEqual({ version: 1, flags: 0, length: (block.length - 8) / 8 });
        const decoded = info.records.map((d) => d.record);
        const padding = decoded.slice(records.length);
        expect(decoded.slice(0, records.length).map(emulatorRecord)).toEqual(records);
        expect(padding.every((r) => r.format === "R1" && !r.body && r.rlen === 0)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
