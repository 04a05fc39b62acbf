import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { InputError } from "../../src/errors.js";
import { AddressMode, flatAddress32, flatAddress64 } from "../../src/model/address.js";
import type { Address32, Address64 } from "../../src/model/address.js";
import { flattenLayout } from "../../src/model/record.js";
import type { RecordLayout } from "../../src/model/record.js";
import {
  KDHELP32_LAYOUT,
  KDHELP32_SIZE,
  KDHELP64_LAYOUT,
  KDHELP64_SIZE,
  STACKFRAME32_LAYOUT,
  STACKFRAME32_SIZE,
  STACKFRAME64_LAYOUT,
  STACKFRAME64_SIZE,
  STACKFRAME_EX_LAYOUT,
  STACKFRAME_EX_SIZE,
  decodeKdHelp32,
  decodeKdHelp64,
  decodeStackFrame32,
  decodeStackFrame64,
  decodeStackFrameEx,
  encodeKdHelp32,
  encodeKdHelp64,
  encodeStackFrame32,
  encodeStackFrame64,
  encodeStackFrameEx,
  newKdHelp32,
  newKdHelp64,
  newStackFrame32,
  newStackFrame64,
  newStackFrameEx,
} from "../../src/model/stackframe.js";
import type { KdHelp32, KdHelp64, StackFrame32, StackFrame64, StackFrameEx } from "../../src/model/stackframe.js";

const rows = (l: RecordLayout): [string, number, number][] => l.fields.map((f) => [f.name, f.offset, f.size]);
const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

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

const U64_MAX = (1n << 64n) - 1n;
const u64 = fc.bigInt({ min: 0n, max: U64_MAX });
const u32n = fc.bigInt({ min: 0n, max: 0xffff_ffffn });
const u32 = fc.integer({ min: 0, max: 0xffff_ffff });

const arbAddress64: fc.Arbitrary<Address64> = fc.record({ offset: u64, segment: fc.integer({ min: 0, max: 0xffff }), mode: u32 });
const arbAddress32: fc.Arbitrary<Address32> = fc.record({ offset: u32n, segment: fc.integer({ min: 0, max: 0xffff }), mode: u32 });

const arbKdHelp64: fc.Arbitrary<KdHelp64> = fc.record({
  thread: u64,
  thCallbackStack: u32,
  thCallbackBStore: u32,
  nextCallback: u32,
  framePointer: u32,
  kiCallUserMode: u64,
  keUserCallbackDispatcher: u64,
  systemRangeStart: u64,
  kiUserExceptionDispatcher: u64,
  stackBase: u64,
  stackLimit: u64,
  buildVersion: u32,
  retpolineStubFunctionTableSize: u32,
  retpolineStubFunctionTable: u64,
  retpolineStubOffset: u32,
  retpolineStubSize: u32,
  reserved0: fc.tuple(u64, u64),
});

const arbKdHelp32: fc.Arbitrary<KdHelp32> = fc.record({
  thread: u32n,
  thCallbackStack: u32n,
  nextCallback: u32n,
  framePointer: u32n,
  kiCallUserMode: u32n,
  keUserCallbackDispatcher: u32n,
  systemRangeStart: u32n,
  thCallbackBStore: u32n,
  kiUserExceptionDispatcher: u32n,
  stackBase: u32n,
  stackLimit: u32n,
  reserved: fc.tuple(u32n, u32n, u32n, u32n, u32n),
});

const arbStackFrame64: fc.Arbitrary<StackFrame64> = fc.record({
  addrPC: arbAddress64,
  addrReturn: arbAddress64,
  addrFrame: arbAddress64,
  addrStack: arbAddress64,
  addrBStore: arbAddress64,
  funcTableEntry: u64,
  params: fc.tuple(u64, u64, u64, u64),
  far: u32,
  virtual: u32,
  reserved: fc.tuple(u64, u64, u64),
  kdHelp: arbKdHelp64,
});

const arbStackFrameEx: fc.Arbitrary<StackFrameEx> = fc
  .tuple(arbStackFrame64, u32, u32)
  .map(([f, stackFrameSize, inlineFrameContext]) => ({ ...f, stackFrameSize, inlineFrameContext }));

const arbStackFrame32: fc.Arbitrary<StackFrame32> = fc.record({
  addrPC: arbAddress32,
  addrReturn: arbAddress32,
  addrFrame: arbAddress32,
  addrStack: arbAddress32,
  funcTableEntry: u32n,
  params: fc.tuple(u32n, u32n, u32n, u32n),
  far: u32,
  virtual: u32,
  reserved: fc.tuple(u32n, u32n, u32n),
  kdHelp: arbKdHelp32,
  addrBStore: arbAddress32,
});

/** Random bytes of `size` with the 2-byte ADDRESS/ADDRESS64 paddings at `pads` cleared. */
const bytesWithPadding = (size: number, pads: readonly number[]): fc.Arbitrary<Uint8Array> =>
  fc.uint8Array({ minLength: size, maxLength: size }).map((b) => {
    for (const p of pads) b.fill(0, p, p + 2);
    return b;
  });

// ADDRESS64 padding sits at +0xA of each of the five addresses (stackwalk64.md §2.1, §2.4).
const SF64_PADS = [0x0a, 0x1a, 0x2a, 0x3a, 0x4a];
// ADDRESS padding sits at +0x6 of AddrPC, AddrReturn, AddrFrame, AddrStack and AddrBStore (§2.6).
const SF32_PADS = [0x06, 0x12, 0x1e, 0x2a, 0x9e];

describe("KDHELP64 (stackwalk64.md §2.2)", () => {
  it("is 112 bytes with the current SDK fields at their offsets", () => {
    expect(KDHELP64_SIZE).toBe(112);
    expect(KDHELP64_LAYOUT.size).toBe(112);
    expect(rows(KDHELP64_LAYOUT)).toEqual([
      ["Thread", 0x00, 8],
      ["ThCallbackStack", 0x08, 4],
      ["ThCallbackBStore", 0x0c, 4],
      ["NextCallback", 0x10, 4],
      ["FramePointer", 0x14, 4],
      ["KiCallUserMode", 0x18, 8],
      ["KeUserCallbackDispatcher", 0x20, 8],
      ["SystemRangeStart", 0x28, 8],
      ["KiUserExceptionDispatcher", 0x30, 8],
      ["StackBase", 0x38, 8],
      ["StackLimit", 0x40, 8],
      ["BuildVersion", 0x48, 4],
      ["RetpolineStubFunctionTableSize", 0x4c, 4],
      ["RetpolineStubFunctionTable", 0x50, 8],
      ["RetpolineStubOffset", 0x58, 4],
      ["RetpolineStubSize", 0x5c, 4],
      ["Reserved0[0]", 0x60, 8],
      ["Reserved0[1]", 0x68, 8],
    ]);
  });

  it("places markers at the spec offsets", () => {
    const k: KdHelp64 = { ...newKdHelp64(), thCallbackBStore: 0x1111_2222, stackLimit: 0x0123_4567_89ab_cdefn, retpolineStubSize: 0x55, reserved0: [0n, 7n] };
    const b = encodeKdHelp64(k);
    expect(b.length).toBe(112);
    expect(view(b).getUint32(0x0c, true)).toBe(0x1111_2222);
    expect(view(b).getBigUint64(0x40, true)).toBe(0x0123_4567_89ab_cdefn);
    expect(view(b).getUint32(0x5c, true)).toBe(0x55);
    expect(view(b).getBigUint64(0x68, true)).toBe(7n);
  });

  it("round-trips records and bytes (no padding: every bit is modelled)", () => {
    fc.assert(fc.property(arbKdHelp64, (k) => {
      expect(decodeKdHelp64(encodeKdHelp64(k))).toEqual(k);
    }));
    fc.assert(fc.property(fc.uint8Array({ minLength: 112, maxLength: 112 }), (b) => {
      expect(encodeKdHelp64(decodeKdHelp64(b))).toEqual(b);
    }));
  });

  it("throws InputError(truncated) at the cut field", () => {
    expectTruncatedAt(() => decodeKdHelp64(new Uint8Array(0x4a)), 0x48);
    expectTruncatedAt(() => decodeKdHelp64(new Uint8Array(111)), 0x68);
  });
});

describe("KDHELP (32-bit, stackwalk64.md §2.3)", () => {
  it("is 64 bytes of DWORDs in the current SDK order", () => {
    expect(KDHELP32_SIZE).toBe(64);
    expect(KDHELP32_LAYOUT.size).toBe(64);
    expect(rows(KDHELP32_LAYOUT)).toEqual([
      ["Thread", 0x00, 4],
      ["ThCallbackStack", 0x04, 4],
      ["NextCallback", 0x08, 4],
      ["FramePointer", 0x0c, 4],
      ["KiCallUserMode", 0x10, 4],
      ["KeUserCallbackDispatcher", 0x14, 4],
      ["SystemRangeStart", 0x18, 4],
      ["ThCallbackBStore", 0x1c, 4],
      ["KiUserExceptionDispatcher", 0x20, 4],
      ["StackBase", 0x24, 4],
      ["StackLimit", 0x28, 4],
      ["Reserved[0]", 0x2c, 4],
      ["Reserved[1]", 0x30, 4],
      ["Reserved[2]", 0x34, 4],
      ["Reserved[3]", 0x38, 4],
      ["Reserved[4]", 0x3c, 4],
    ]);
  });

  it("round-trips records and bytes", () => {
    fc.assert(fc.property(arbKdHelp32, (k) => {
      expect(decodeKdHelp32(encodeKdHelp32(k))).toEqual(k);
    }));
    fc.assert(fc.property(fc.uint8Array({ minLength: 64, maxLength: 64 }), (b) => {
      expect(encodeKdHelp32(decodeKdHelp32(b))).toEqual(b);
    }));
  });

  it("rejects a DWORD above 2^32-1", () => {
    expect(() => encodeKdHelp32({ ...newKdHelp32(), stackBase: 1n << 32n })).toThrow(/StackBase/);
  });
});

describe("STACKFRAME64 (stackwalk64.md §2.4)", () => {
  it("is 264 = 0x108 bytes with every field at its offset", () => {
    expect(STACKFRAME64_SIZE).toBe(264);
    expect(STACKFRAME64_LAYOUT.size).toBe(0x108);
    expect(rows(STACKFRAME64_LAYOUT)).toEqual([
      ["AddrPC", 0x00, 16],
      ["AddrReturn", 0x10, 16],
      ["AddrFrame", 0x20, 16],
      ["AddrStack", 0x30, 16],
      ["AddrBStore", 0x40, 16],
      ["FuncTableEntry", 0x50, 8],
      ["Params[0]", 0x58, 8],
      ["Params[1]", 0x60, 8],
      ["Params[2]", 0x68, 8],
      ["Params[3]", 0x70, 8],
      ["Far", 0x78, 4],
      ["Virtual", 0x7c, 4],
      ["Reserved[0]", 0x80, 8],
      ["Reserved[1]", 0x88, 8],
      ["Reserved[2]", 0x90, 8],
      ["KdHelp", 0x98, 112],
    ]);
  });

  it("nests ADDRESS64 and KDHELP64 at absolute offsets", () => {
    const flat = new Map(flattenLayout(STACKFRAME64_LAYOUT).map((f) => [f.name, [f.offset, f.size]]));
    expect(flat.get("AddrPC.Mode")).toEqual([0x0c, 4]);
    expect(flat.get("AddrBStore.Offset")).toEqual([0x40, 8]);
    expect(flat.get("AddrBStore.Mode")).toEqual([0x4c, 4]);
    expect(flat.get("KdHelp.Thread")).toEqual([0x98, 8]);
    expect(flat.get("KdHelp.StackLimit")).toEqual([0x98 + 0x40, 8]);
    expect(flat.get("KdHelp.Reserved0[1]")).toEqual([0x100, 8]);
  });

  it("a memset STACKFRAME64 is all zero and every address is AddrMode1616", () => {
    const f = newStackFrame64();
    for (const a of [f.addrPC, f.addrReturn, f.addrFrame, f.addrStack, f.addrBStore]) expect(a.mode).toBe(AddressMode.Mode1616);
    expect(encodeStackFrame64(f)).toEqual(new Uint8Array(264));
    expect(decodeStackFrame64(new Uint8Array(264))).toEqual(f);
  });

  it("places markers at the spec offsets", () => {
    const f: StackFrame64 = {
      ...newStackFrame64(),
      addrPC: flatAddress64(0x7ff6_0000_1000n),
      addrStack: flatAddress64(0x0000_00ff_ffe0n),
      addrBStore: { offset: 0x600n, segment: 0, mode: AddressMode.Flat },
      funcTableEntry: 0xabcdn,
      params: [1n, 2n, 3n, 4n],
      far: 1,
      virtual: 1,
      reserved: [0n, 0n, 0x99n],
      kdHelp: { ...newKdHelp64(), thread: 0x1234n },
    };
    const b = encodeStackFrame64(f);
    const v = view(b);
    expect(v.getBigUint64(0x00, true)).toBe(0x7ff6_0000_1000n);
    expect(v.getUint32(0x0c, true)).toBe(3);
    expect(v.getBigUint64(0x30, true)).toBe(0xff_ffe0n);
    expect(v.getBigUint64(0x40, true)).toBe(0x600n);
    expect(v.getBigUint64(0x50, true)).toBe(0xabcdn);
    expect(v.getBigUint64(0x70, true)).toBe(4n);
    expect(v.getUint32(0x78, true)).toBe(1);
    expect(v.getUint32(0x7c, true)).toBe(1);
    expect(v.getBigUint64(0x90, true)).toBe(0x99n);
    expect(v.getBigUint64(0x98, true)).toBe(0x1234n);
  });

  it("round-trips records", () => {
    fc.assert(fc.property(arbStackFrame64, (f) => {
      expect(decodeStackFrame64(encodeStackFrame64(f))).toEqual(f);
    }));
  });

  it("round-trips bytes whose ADDRESS64 paddings are zero", () => {
    fc.assert(fc.property(bytesWithPadding(264, SF64_PADS), (b) => {
      expect(encodeStackFrame64(decodeStackFrame64(b))).toEqual(b);
    }));
  });

  it("reads and writes inside a larger buffer at an offset (byteOffset respected)", () => {
    const backing = new Uint8Array(300 + 13);
    const sub = backing.subarray(13);
    const f = { ...newStackFrame64(), addrPC: flatAddress64(0x401000n), params: [5n, 6n, 7n, 8n] as [bigint, bigint, bigint, bigint] };
    encodeStackFrame64(f, sub, 16);
    expect(decodeStackFrame64(sub, 16)).toEqual(f);
    expect(backing[13 + 16 + 1]).toBe(0x10);
  });

  it("throws InputError(truncated) at the first cut field", () => {
    expectTruncatedAt(() => decodeStackFrame64(new Uint8Array(0)), 0x00);
    expectTruncatedAt(() => decodeStackFrame64(new Uint8Array(0x29)), 0x28);
    expectTruncatedAt(() => decodeStackFrame64(new Uint8Array(0x9a)), 0x98);
    expectTruncatedAt(() => decodeStackFrame64(new Uint8Array(263)), 0x100);
    expectTruncatedAt(() => decodeStackFrame64(new Uint8Array(270), 8), 8 + 0x100);
  });

  it("rejects out-of-range values naming the field", () => {
    expect(() => encodeStackFrame64({ ...newStackFrame64(), far: -1 })).toThrow(/Far/);
    expect(() => encodeStackFrame64({ ...newStackFrame64(), params: [0n, 0n, 1n << 64n, 0n] })).toThrow(/Params\[2\]/);
  });
});

describe("STACKFRAME_EX (stackwalk64.md §2.5)", () => {
  it("is 272 = 0x110 bytes: STACKFRAME64, then StackFrameSize@0x108 and InlineFrameContext@0x10C", () => {
    expect(STACKFRAME_EX_SIZE).toBe(272);
    expect(STACKFRAME_EX_LAYOUT.size).toBe(0x110);
    expect(rows(STACKFRAME_EX_LAYOUT)).toEqual([
      ["AddrPC", 0x00, 16],
      ["AddrReturn", 0x10, 16],
      ["AddrFrame", 0x20, 16],
      ["AddrStack", 0x30, 16],
      ["AddrBStore", 0x40, 16],
      ["FuncTableEntry", 0x50, 8],
      ["Params[0]", 0x58, 8],
      ["Params[1]", 0x60, 8],
      ["Params[2]", 0x68, 8],
      ["Params[3]", 0x70, 8],
      ["Far", 0x78, 4],
      ["Virtual", 0x7c, 4],
      ["Reserved[0]", 0x80, 8],
      ["Reserved[1]", 0x88, 8],
      ["Reserved[2]", 0x90, 8],
      ["KdHelp", 0x98, 112],
      ["StackFrameSize", 0x108, 4],
      ["InlineFrameContext", 0x10c, 4],
    ]);
  });

  it("newStackFrameEx presets StackFrameSize = 272 and is otherwise zero", () => {
    const f = newStackFrameEx();
    expect(f.stackFrameSize).toBe(272);
    expect(f.inlineFrameContext).toBe(0);
    const b = encodeStackFrameEx(f);
    expect(b.length).toBe(272);
    expect(view(b).getUint32(0x108, true)).toBe(272);
    const expected = new Uint8Array(272);
    expected[0x108] = 0x10;
    expected[0x109] = 0x01;
    expect(b).toEqual(expected);
  });

  it("encodes the same STACKFRAME64 prefix as STACKFRAME64", () => {
    fc.assert(
      fc.property(arbStackFrameEx, (f) => {
        expect(encodeStackFrameEx(f).subarray(0, 264)).toEqual(encodeStackFrame64(f));
      }),
    );
  });

  it("places InlineFrameContext at 0x10C", () => {
    const b = encodeStackFrameEx({ ...newStackFrameEx(), inlineFrameContext: 0xffff_ffff });
    expect(view(b).getUint32(0x10c, true)).toBe(0xffff_ffff);
  });

  it("round-trips records and bytes", () => {
    fc.assert(fc.property(arbStackFrameEx, (f) => {
      expect(decodeStackFrameEx(encodeStackFrameEx(f))).toEqual(f);
    }));
    fc.assert(fc.property(bytesWithPadding(272, SF64_PADS), (b) => {
      expect(encodeStackFrameEx(decodeStackFrameEx(b))).toEqual(b);
    }));
  });

  it("a STACKFRAME64-sized buffer is too short: truncated at 0x108", () => {
    expectTruncatedAt(() => decodeStackFrameEx(new Uint8Array(264)), 0x108);
    expectTruncatedAt(() => decodeStackFrameEx(new Uint8Array(0x10e)), 0x10c);
  });
});

describe("STACKFRAME (32-bit, stackwalk64.md §2.6)", () => {
  it("is 164 = 0xA4 bytes with AddrBStore last at 0x98", () => {
    expect(STACKFRAME32_SIZE).toBe(164);
    expect(STACKFRAME32_LAYOUT.size).toBe(0xa4);
    expect(rows(STACKFRAME32_LAYOUT)).toEqual([
      ["AddrPC", 0x00, 12],
      ["AddrReturn", 0x0c, 12],
      ["AddrFrame", 0x18, 12],
      ["AddrStack", 0x24, 12],
      ["FuncTableEntry", 0x30, 4],
      ["Params[0]", 0x34, 4],
      ["Params[1]", 0x38, 4],
      ["Params[2]", 0x3c, 4],
      ["Params[3]", 0x40, 4],
      ["Far", 0x44, 4],
      ["Virtual", 0x48, 4],
      ["Reserved[0]", 0x4c, 4],
      ["Reserved[1]", 0x50, 4],
      ["Reserved[2]", 0x54, 4],
      ["KdHelp", 0x58, 64],
      ["AddrBStore", 0x98, 12],
    ]);
    const last = STACKFRAME32_LAYOUT.fields[STACKFRAME32_LAYOUT.fields.length - 1];
    expect(last?.name).toBe("AddrBStore");
  });

  it("writes AddrBStore at 0x98, after KdHelp", () => {
    const f: StackFrame32 = { ...newStackFrame32(), addrBStore: flatAddress32(0xcafe_f00dn), kdHelp: { ...newKdHelp32(), reserved: [0n, 0n, 0n, 0n, 0x77n] } };
    const v = view(encodeStackFrame32(f));
    expect(v.getUint32(0x98, true)).toBe(0xcafe_f00d);
    expect(v.getUint32(0xa0, true)).toBe(AddressMode.Flat);
    expect(v.getUint32(0x58 + 0x3c, true)).toBe(0x77);
  });

  it("places the other markers at the spec offsets", () => {
    const f: StackFrame32 = {
      ...newStackFrame32(),
      addrPC: flatAddress32(0x0040_1234n),
      addrFrame: flatAddress32(0x0012_ff00n),
      funcTableEntry: 0x1000n,
      params: [0n, 0n, 0n, 0xaan],
      virtual: 1,
      reserved: [0n, 0xbbn, 0n],
    };
    const v = view(encodeStackFrame32(f));
    expect(v.getUint32(0x00, true)).toBe(0x0040_1234);
    expect(v.getUint32(0x08, true)).toBe(3);
    expect(v.getUint32(0x18, true)).toBe(0x0012_ff00);
    expect(v.getUint32(0x30, true)).toBe(0x1000);
    expect(v.getUint32(0x40, true)).toBe(0xaa);
    expect(v.getUint32(0x48, true)).toBe(1);
    expect(v.getUint32(0x50, true)).toBe(0xbb);
  });

  it("a memset STACKFRAME is all zero with AddrMode1616 addresses", () => {
    const f = newStackFrame32();
    expect(f.addrPC.mode).toBe(AddressMode.Mode1616);
    expect(f.addrBStore.mode).toBe(AddressMode.Mode1616);
    expect(encodeStackFrame32(f)).toEqual(new Uint8Array(164));
    expect(decodeStackFrame32(new Uint8Array(164))).toEqual(f);
  });

  it("round-trips records and bytes", () => {
    fc.assert(fc.property(arbStackFrame32, (f) => {
      expect(decodeStackFrame32(encodeStackFrame32(f))).toEqual(f);
    }));
    fc.assert(fc.property(bytesWithPadding(164, SF32_PADS), (b) => {
      expect(encodeStackFrame32(decodeStackFrame32(b))).toEqual(b);
    }));
  });

  it("rejects DWORD fields above 2^32-1", () => {
    expect(() => encodeStackFrame32({ ...newStackFrame32(), params: [1n << 32n, 0n, 0n, 0n] })).toThrow(/Params\[0\]/);
    expect(() => encodeStackFrame32({ ...newStackFrame32(), addrBStore: flatAddress32(1n << 32n) })).toThrow(/Offset/);
  });

  it("throws InputError(truncated) at the first cut field", () => {
    expectTruncatedAt(() => decodeStackFrame32(new Uint8Array(0xa0)), 0xa0);
    expectTruncatedAt(() => decodeStackFrame32(new Uint8Array(0x98)), 0x98);
    expectTruncatedAt(() => decodeStackFrame32(new Uint8Array(0x5e)), 0x5c);
  });
});
