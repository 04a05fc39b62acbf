/**
 * The x64 UNWIND_INFO decoder (src/formats/unwind-data/x64.ts) against the emulator's encoder
 * (emulator/programs/unwind-encode.ts), which shares no code with it: every UNWIND_INFO the
 * encoder writes, whatever its version, codes, frame register, EPILOG codes and tail, decodes to
 * the description it was written from.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  allocCode,
  encodeUnwindInfo,
  saveNonvolCode,
  saveXmm128Code,
  UNWIND_REGISTERS,
  type EpilogCodes,
  type UnwindCode,
  type UnwindInfoSpec,
  type UnwindRegister,
} from "../../../emulator/programs/unwind-encode.js";
import { isProblem } from "../../../src/formats/unwind-data/problem.js";
import {
  decodeUnwindInfo,
  REG64,
  UWOP_ALLOC_LARGE,
  UWOP_ALLOC_SMALL,
  UWOP_EPILOG,
  UWOP_PUSH_MACHFRAME,
  UWOP_PUSH_NONVOL,
  UWOP_SAVE_NONVOL,
  UWOP_SAVE_NONVOL_FAR,
  UWOP_SAVE_XMM128,
  UWOP_SAVE_XMM128_FAR,
  UWOP_SET_FPREG,
  type UnwindInfo,
  type UnwindOp,
} from "../../../src/formats/unwind-data/x64.js";

/** Where the tests put the UNWIND_INFO in a small image. */
const RVA = 0x2000;

function decode(bytes: Uint8Array): UnwindInfo {
  const image = new Uint8Array(RVA + bytes.length + 16);
  image.set(bytes, RVA);
  const info = decodeUnwindInfo((rva, size) => (rva + size <= image.length ? image.subarray(rva, rva + size) : undefined), RVA);
  if (isProblem(info)) throw new Error(info.problem);
  return info;
}

const register = (n: number): UnwindRegister => REG64[n] as UnwindRegister;

/** A decoded op as the encoder describes it. */
function codeOf(op: UnwindOp): UnwindCode {
  const codeOffset = op.codeOffset;
  switch (op.op) {
    case UWOP_PUSH_NONVOL: return { op: "push-nonvol", codeOffset, register: register(op.info) };
    case UWOP_ALLOC_SMALL: return { op: "alloc-small", codeOffset, size: op.value };
    case UWOP_ALLOC_LARGE: return { op: "alloc-large", codeOffset, size: op.value, form: op.info === 0 ? 16 : 32 };
    case UWOP_SET_FPREG: return { op: "set-fpreg", codeOffset };
    case UWOP_SAVE_NONVOL: return { op: "save-nonvol", codeOffset, register: register(op.info), offset: op.value };
    case UWOP_SAVE_NONVOL_FAR: return { op: "save-nonvol-far", codeOffset, register: register(op.info), offset: op.value };
    case UWOP_SAVE_XMM128: return { op: "save-xmm128", codeOffset, xmm: op.info, offset: op.value };
    case UWOP_SAVE_XMM128_FAR: return { op: "save-xmm128-far", codeOffset, xmm: op.info, offset: op.value };
    case UWOP_PUSH_MACHFRAME: return { op: "push-machframe", codeOffset, errorCode: op.info !== 0 };
    default: throw new Error(`op ${op.op} is not a prolog code`);
  }
}

/** A decoded UNWIND_INFO as the encoder's description (the handler's data, which the decoder does not read, left out). */
function specOf(info: UnwindInfo): UnwindInfoSpec {
  const spec: { -readonly [K in keyof UnwindInfoSpec]: UnwindInfoSpec[K] } = {
    version: info.version as 1 | 2,
    sizeOfProlog: info.sizeOfProlog,
    prolog: info.ops.filter((op) => op.op !== UWOP_EPILOG).map(codeOf).reverse(),
  };
  if (info.frameRegister !== 0) spec.frameRegister = register(info.frameRegister);
  if (info.frameOffset !== 0) spec.frameOffset = info.frameOffset;
  if (info.epilogs !== undefined) spec.epilogs = info.epilogs;
  if (info.chained !== undefined) spec.chained = { beginRva: info.chained.begin, endRva: info.chained.end, unwindData: info.chained.unwindData };
  if (info.handlerRva !== undefined) spec.handler = { flags: info.flags, rva: info.handlerRva };
  return spec;
}

const general = fc.constantFrom(...UNWIND_REGISTERS);
const at = fc.integer({ min: 0, max: 0xff });
const code: fc.Arbitrary<UnwindCode> = fc.oneof(
  fc.record({ op: fc.constant("push-nonvol" as const), codeOffset: at, register: general }),
  fc.tuple(at, fc.integer({ min: 1, max: 0xffff_fff8 / 8 })).map(([o, n]) => allocCode(o, n * 8)),
  fc.tuple(at, fc.integer({ min: 1, max: 0xffff })).map(([o, n]): UnwindCode => ({ op: "alloc-large", codeOffset: o, size: n * 8, form: 32 })),
  fc.record({ op: fc.constant("set-fpreg" as const), codeOffset: at }),
  fc.tuple(at, general, fc.integer({ min: 0, max: 0xffff_fff8 / 8 })).map(([o, r, n]) => saveNonvolCode(o, r, n * 8)),
  fc.tuple(at, general, fc.integer({ min: 0, max: 0xffff })).map(([o, r, n]): UnwindCode => ({ op: "save-nonvol-far", codeOffset: o, register: r, offset: n * 8 })),
  fc.tuple(at, fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 0xffff_fff0 / 16 })).map(([o, x, n]) => saveXmm128Code(o, x, n * 16)),
  fc.record({ op: fc.constant("push-machframe" as const), codeOffset: at, errorCode: fc.boolean() }),
);

const epilogs: fc.Arbitrary<EpilogCodes> = fc
  .tuple(fc.integer({ min: 1, max: 0xff }), fc.boolean(), fc.uniqueArray(fc.integer({ min: 0, max: 0xfff }), { maxLength: 6 }))
  .map(([size, atEnd, offsets]) => {
    const rest = offsets.filter((o) => o >= size && !(atEnd && o === size));
    return { size, atEnd: atEnd || rest.length === 0, offsets: rest };
  });

const entry = fc.tuple(fc.integer({ min: 0, max: 0xffff_fffe }), fc.integer({ min: 1, max: 0x1000 }), fc.integer({ min: 0, max: 0x3fff_ffff })).map(([begin, length, data]) => ({
  beginRva: begin,
  endRva: Math.min(begin + length, 0xffff_ffff),
  unwindData: data * 4,
}));

/** Every UNWIND_INFO the encoder accepts: prolog codes in prolog order within SizeOfProlog, a frame register for SET_FPREG, EPILOG codes in version 2 only, a chained entry or a handler. */
const infos: fc.Arbitrary<UnwindInfoSpec> = fc
  .record({
    version: fc.constantFrom(1 as const, 2 as const),
    codes: fc.array(code, { maxLength: 24 }),
    frame: fc.option(fc.tuple(fc.integer({ min: 1, max: 15 }), fc.integer({ min: 0, max: 15 }))),
    epilogs: fc.option(epilogs),
    tail: fc.oneof(fc.constant(undefined), entry, fc.record({ flags: fc.integer({ min: 1, max: 3 }), rva: fc.integer({ min: 0, max: 0xffff_ffff }) })),
  })
  .map(({ version, codes, frame, epilogs, tail }) => {
    const kept = codes.filter((c) => c.op !== "set-fpreg" || frame !== null);
    const offsets = kept.map((c) => c.codeOffset).sort((a, b) => a - b);
    const prolog = kept.map((c, i) => ({ ...c, codeOffset: offsets[i]! }));
    const spec: { -readonly [K in keyof UnwindInfoSpec]: UnwindInfoSpec[K] } = { version, sizeOfProlog: offsets[offsets.length - 1] ?? 0, prolog };
    if (frame !== null) {
      spec.frameRegister = register(frame[0]);
      if (frame[1] !== 0) spec.frameOffset = frame[1] * 16;
    }
    if (version === 2 && epilogs !== null) spec.epilogs = epilogs;
    if (tail !== undefined && "beginRva" in tail) spec.chained = tail;
    else if (tail !== undefined) spec.handler = tail;
    return spec;
  });

describe("UNWIND_INFO round trips through the emulator's encoder", () => {
  it("decodes every UNWIND_INFO the encoder writes to the description it was written from (property)", () => {
    fc.assert(
      fc.property(infos, (spec) => {
        expect(specOf(decode(encodeUnwindInfo(spec)))).toEqual(spec);
      }),
      { numRuns: 2000 },
    );
  });

  it("counts the slots the encoder wrote, EPILOG codes and their padding entry included", () => {
    const spec: UnwindInfoSpec = {
      version: 2,
      sizeOfProlog: 9,
      prolog: [{ op: "push-nonvol", codeOffset: 1, register: "rbp" }, allocCode(5, 0x4e40), saveXmm128Code(9, 6, 0x20)],
      frameRegister: "rbp",
      epilogs: { size: 3, atEnd: true, offsets: [0x20] },
    };
    const bytes = encodeUnwindInfo(spec);
    const info = decode(bytes);
    expect(info.countOfCodes).toBe(bytes[2]);
    // The EPILOG header and one entry, then SAVE_XMM128, the 16-bit ALLOC_LARGE and PUSH_NONVOL, last first.
    expect(info.ops.map((op) => [op.slot, op.op, op.slots])).toEqual([[0, UWOP_EPILOG, 2], [2, UWOP_SAVE_XMM128, 2], [4, UWOP_ALLOC_LARGE, 2], [6, UWOP_PUSH_NONVOL, 1]]);
    expect(info.countOfCodes).toBe(7);
    expect(specOf(info)).toEqual(spec);
  });
});
