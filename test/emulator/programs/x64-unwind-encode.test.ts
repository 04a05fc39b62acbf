import { describe, expect, it } from "vitest";
import {
  UWOP,
  allocCode,
  encodeEpilogCodes,
  encodeRuntimeFunctions,
  encodeUnwindCode,
  encodeUnwindInfo,
  formatUnwindCode,
  hexBytes,
  saveNonvolCode,
  saveXmm128Code,
  unwindCodeSlots,
  type UnwindCode,
} from "../../../emulator/programs/unwind-encode.js";

/** CodeOffset, UnwindOp and OpInfo of the UNWIND_CODE in slot `slot` of an UNWIND_INFO (x64-unwind.md §1.2). */
function codeAt(info: Uint8Array, slot: number): [number, number, number] {
  const view = new DataView(info.buffer, info.byteOffset, info.byteLength);
  const opByte = view.getUint8(5 + 2 * slot);
  return [view.getUint8(4 + 2 * slot), opByte & 0xf, opByte >> 4];
}

/** Bytes from the spec's hex notation: "01 0E 03 00 | 0E 01 ..." (bars and spaces ignored). */
const bytes = (text: string): Uint8Array => Uint8Array.from(text.replace(/\|/g, " ").trim().split(/\s+/).map((b) => parseInt(b, 16)));

describe("UNWIND_CODE: one test per op (x64-unwind.md §1.3)", () => {
  it.each<[string, UnwindCode, string, number]>([
    ["PUSH_NONVOL rbp", { op: "push-nonvol", codeOffset: 1, register: "rbp" }, "01 50", 1],
    ["PUSH_NONVOL r15 (OpInfo 15)", { op: "push-nonvol", codeOffset: 0x0c, register: "r15" }, "0c f0", 1],
    ["ALLOC_LARGE 16-bit form, size ÷ 8", { op: "alloc-large", codeOffset: 0x0e, size: 0x4e40, form: 16 }, "0e 01 c8 09", 2],
    ["ALLOC_LARGE 16-bit form, the largest", { op: "alloc-large", codeOffset: 7, size: 524280, form: 16 }, "07 01 ff ff", 2],
    ["ALLOC_LARGE 32-bit form, unscaled low then high", { op: "alloc-large", codeOffset: 0x0b, size: 2097152, form: 32 }, "0b 11 00 00 20 00", 3],
    ["ALLOC_SMALL 8 (OpInfo 0)", { op: "alloc-small", codeOffset: 4, size: 8 }, "04 02", 1],
    ["ALLOC_SMALL 0x28 (OpInfo 4)", { op: "alloc-small", codeOffset: 6, size: 0x28 }, "06 42", 1],
    ["ALLOC_SMALL 128 (OpInfo 15)", { op: "alloc-small", codeOffset: 5, size: 128 }, "05 f2", 1],
    ["SET_FPREG (OpInfo 0)", { op: "set-fpreg", codeOffset: 0x11 }, "11 03", 1],
    ["SAVE_NONVOL rsi at 0x20 (÷ 8)", { op: "save-nonvol", codeOffset: 0x16, register: "rsi", offset: 0x20 }, "16 64 04 00", 2],
    ["SAVE_NONVOL_FAR rsi at 0x80010 (unscaled)", { op: "save-nonvol-far", codeOffset: 0x19, register: "rsi", offset: 0x80010 }, "19 65 10 00 08 00", 3],
    ["SAVE_XMM128 xmm6 at 0x20 (÷ 16)", { op: "save-xmm128", codeOffset: 0x0d, xmm: 6, offset: 0x20 }, "0d 68 02 00", 2],
    ["SAVE_XMM128_FAR xmm7 at 0x100010 (unscaled)", { op: "save-xmm128-far", codeOffset: 0x1a, xmm: 7, offset: 0x100010 }, "1a 79 10 00 10 00", 3],
    ["PUSH_MACHFRAME without error code", { op: "push-machframe", codeOffset: 0, errorCode: false }, "00 0a", 1],
    ["PUSH_MACHFRAME with error code (OpInfo 1)", { op: "push-machframe", codeOffset: 0, errorCode: true }, "00 1a", 1],
  ])("%s", (_, code, expected, slots) => {
    expect(hexBytes(encodeUnwindCode(code))).toBe(hexBytes(bytes(expected)));
    expect(unwindCodeSlots(code)).toBe(slots);
    expect(encodeUnwindCode(code).length).toBe(2 * slots);
  });

  it("picks the smallest allocation form: ALLOC_SMALL to 128, the 16-bit ALLOC_LARGE to 512 KiB − 8, then the 32-bit one", () => {
    expect(allocCode(4, 8)).toEqual({ op: "alloc-small", codeOffset: 4, size: 8 });
    expect(allocCode(4, 128)).toEqual({ op: "alloc-small", codeOffset: 4, size: 128 });
    expect(allocCode(7, 136)).toEqual({ op: "alloc-large", codeOffset: 7, size: 136, form: 16 });
    expect(allocCode(7, 524280)).toMatchObject({ form: 16 });
    expect(allocCode(7, 524288)).toMatchObject({ form: 32 });
  });

  it("picks the FAR save forms only when the scaled offset no longer fits 16 bits", () => {
    expect(saveNonvolCode(5, "rdi", 0xffff * 8).op).toBe("save-nonvol");
    expect(saveNonvolCode(5, "rdi", 0x80000).op).toBe("save-nonvol-far");
    expect(saveXmm128Code(5, 8, 0xffff * 16).op).toBe("save-xmm128");
    expect(saveXmm128Code(5, 8, 0x100000).op).toBe("save-xmm128-far");
  });

  it.each<[string, UnwindCode, RegExp]>([
    ["ALLOC_SMALL above 128", { op: "alloc-small", codeOffset: 1, size: 136 }, /size 136/],
    ["ALLOC_SMALL of 0", { op: "alloc-small", codeOffset: 1, size: 0 }, /size 0/],
    ["an allocation not a multiple of 8", { op: "alloc-large", codeOffset: 1, size: 0x104, form: 16 }, /multiple of 8/],
    ["a 16-bit ALLOC_LARGE of 512 KiB", { op: "alloc-large", codeOffset: 1, size: 524288, form: 16 }, /size 524288/],
    ["a near SAVE_NONVOL past 0xFFFF·8", { op: "save-nonvol", codeOffset: 1, register: "rsi", offset: 0x80000 }, /offset 524288/],
    ["a SAVE_NONVOL offset not a multiple of 8", { op: "save-nonvol", codeOffset: 1, register: "rsi", offset: 0x24 }, /multiple of 8/],
    ["a SAVE_XMM128 offset not a multiple of 16", { op: "save-xmm128", codeOffset: 1, xmm: 6, offset: 0x28 }, /multiple of 16/],
    ["an XMM register above 15", { op: "save-xmm128", codeOffset: 1, xmm: 16, offset: 0x20 }, /XMM register 16/],
    ["a CodeOffset past 255", { op: "push-nonvol", codeOffset: 256, register: "rbx" }, /CodeOffset 256/],
  ])("refuses %s", (_, code, message) => {
    expect(() => encodeUnwindCode(code)).toThrow(message);
  });

  it("formats codes the way the generated sources quote them", () => {
    expect(formatUnwindCode({ op: "alloc-large", codeOffset: 0x0e, size: 0x4e40, form: 16 })).toBe("UWOP_ALLOC_LARGE 0x4e40 (16-bit scaled form)");
    expect(formatUnwindCode({ op: "save-xmm128-far", codeOffset: 0, xmm: 7, offset: 0x100010 })).toBe("UWOP_SAVE_XMM128_FAR xmm7 at 0x100010");
    expect(formatUnwindCode({ op: "push-machframe", codeOffset: 0, errorCode: true })).toBe("UWOP_PUSH_MACHFRAME with error code");
  });
});

describe("UNWIND_INFO: the worked examples of x64-unwind.md §1.10 byte for byte", () => {
  it("W1: SAVE_NONVOL after SET_FPREG, RBP frame with FrameOffset 8 (0x80), 7 slots padded to 8", () => {
    const info = encodeUnwindInfo({
      version: 1,
      sizeOfProlog: 0x16,
      frameRegister: "rbp",
      frameOffset: 0x80,
      prolog: [
        { op: "push-nonvol", codeOffset: 0x01, register: "rbp" },
        { op: "push-nonvol", codeOffset: 0x02, register: "rbx" },
        allocCode(0x09, 0x100),
        { op: "set-fpreg", codeOffset: 0x11 },
        saveNonvolCode(0x16, "rsi", 0x20),
      ],
    });
    // Header: version 1, no flags, prolog 0x16, 7 slots, FrameRegister 5 | FrameOffset 8 << 4.
    expect(hexBytes(info)).toBe(hexBytes(bytes("01 16 07 85 | 16 64 04 00 | 11 03 | 09 01 20 00 | 02 30 | 01 50 | 00 00")));
  });

  it("W2: ALLOC_LARGE 0x4E40 after a __chkstk call, PUSH rsi", () => {
    const info = encodeUnwindInfo({
      version: 1,
      sizeOfProlog: 0x0e,
      prolog: [{ op: "push-nonvol", codeOffset: 0x01, register: "rsi" }, allocCode(0x0e, 0x4e40)],
    });
    expect(hexBytes(info)).toBe(hexBytes(bytes("01 0e 03 00 | 0e 01 c8 09 | 01 60 | 00 00")));
  });

  it("W3 (§1.6): version 2 with an EPILOG header at the end and one epilog at End − 0xF", () => {
    const info = encodeUnwindInfo({
      version: 2,
      sizeOfProlog: 6,
      prolog: [
        { op: "push-nonvol", codeOffset: 1, register: "rsi" },
        { op: "push-nonvol", codeOffset: 2, register: "rdi" },
        allocCode(6, 0x28),
      ],
      epilogs: { size: 3, atEnd: true, offsets: [0x0f] },
    });
    expect(hexBytes(info)).toBe(hexBytes(bytes("02 06 05 00 | 03 16 | 0F 06 | 06 42 | 02 70 | 01 60 | 00 00")));
  });

  it("W4: a chained fragment with its own SAVE_NONVOL, then the parent RUNTIME_FUNCTION after the even-padded codes", () => {
    const info = encodeUnwindInfo({
      version: 1,
      sizeOfProlog: 5,
      prolog: [saveNonvolCode(5, "rsi", 0x30)],
      chained: { beginRva: 0x1030, endRva: 0x104c, unwindData: 0x2000 },
    });
    // Flags CHAININFO (4 << 3 | 1 = 0x21); 2 slots (no pad); then Begin, End, UnwindData.
    expect(hexBytes(info)).toBe(hexBytes(bytes("21 05 02 00 | 05 64 06 00 | 30 10 00 00 4c 10 00 00 00 20 00 00")));
  });

  it("W4: a chained fragment with no codes is the header and the parent", () => {
    const info = encodeUnwindInfo({ version: 1, sizeOfProlog: 0, prolog: [], chained: { beginRva: 0x1030, endRva: 0x104c, unwindData: 0x2000 } });
    expect(hexBytes(info)).toBe(hexBytes(bytes("21 00 00 00 | 30 10 00 00 4c 10 00 00 00 20 00 00")));
  });

  it("W5: PUSH_MACHFRAME with error code first in the prolog, so last in the array", () => {
    const info = encodeUnwindInfo({
      version: 1,
      sizeOfProlog: 5,
      prolog: [
        { op: "push-machframe", codeOffset: 0, errorCode: true },
        { op: "push-nonvol", codeOffset: 1, register: "rbp" },
        allocCode(5, 0x20),
      ],
    });
    expect(hexBytes(info)).toBe(hexBytes(bytes("01 05 03 00 | 05 32 | 01 50 | 00 1a | 00 00")));
  });

  it("§2.5: clang's SEH function (flags 3, RBP frame at 0x20) with the handler RVA and its data in the tail", () => {
    const scope = bytes("01 00 00 00 10 10 00 00 20 10 00 00 01 00 00 00 00 00 00 00");
    const info = encodeUnwindInfo({
      version: 1,
      sizeOfProlog: 0x0a,
      frameRegister: "rbp",
      frameOffset: 0x20,
      prolog: [{ op: "push-nonvol", codeOffset: 1, register: "rbp" }, allocCode(5, 0x20), { op: "set-fpreg", codeOffset: 0x0a }],
      handler: { flags: 3, rva: 0x1234, data: scope },
    });
    expect(hexBytes(info.subarray(0, 12))).toBe(hexBytes(bytes("19 0A 03 25 | 0A 03 05 32 01 50 00 00")));
    expect(hexBytes(info.subarray(12, 16))).toBe("34 12 00 00");
    expect(info.subarray(16)).toEqual(scope);
  });

  it("§2.5: the FAR fixture (3-slot ALLOC_LARGE 2097152, SAVE_NONVOL_FAR rsi 0x80010, SAVE_XMM128_FAR xmm7 0x100010)", () => {
    const info = encodeUnwindInfo({
      version: 1,
      sizeOfProlog: 0x1c,
      prolog: [
        { op: "push-nonvol", codeOffset: 1, register: "rbx" },
        allocCode(0x0e, 2097152),
        saveNonvolCode(0x16, "rsi", 0x80010),
        saveXmm128Code(0x1c, 7, 0x100010),
      ],
    });
    // 3 + 3 + 3 + 1 = 10 slots.
    expect(hexBytes(info)).toBe(hexBytes(bytes("01 1c 0a 00 | 1c 79 10 00 10 00 | 16 65 10 00 08 00 | 0e 11 00 00 20 00 | 01 30")));
  });

  it("a 0-code info without a tail is padded to the 8-byte minimum (as LLVM writes it)", () => {
    expect(hexBytes(encodeUnwindInfo({ version: 1, sizeOfProlog: 0, prolog: [] }))).toBe("01 00 00 00 00 00 00 00");
  });

  it("codes are stored in reverse prolog order whatever their slot counts", () => {
    const info = encodeUnwindInfo({
      version: 1,
      sizeOfProlog: 0x0d,
      prolog: [{ op: "push-nonvol", codeOffset: 2, register: "r12" }, allocCode(9, 0x88), saveXmm128Code(0x0d, 6, 0x20)],
    });
    expect(info[2]).toBe(5);
    expect(codeAt(info, 0)).toEqual([0x0d, UWOP.SAVE_XMM128, 6]);
    expect(codeAt(info, 2)).toEqual([0x09, UWOP.ALLOC_LARGE, 0]);
    expect(codeAt(info, 4)).toEqual([0x02, UWOP.PUSH_NONVOL, 12]);
    expect(info.length).toBe(4 + 2 * 6);
  });

  it.each<[string, Parameters<typeof encodeUnwindInfo>[0], RegExp]>([
    ["EPILOG codes in version 1", { version: 1, sizeOfProlog: 0, prolog: [], epilogs: { size: 1, atEnd: true, offsets: [] } }, /need version 2/],
    ["prolog codes out of order", { version: 1, sizeOfProlog: 4, prolog: [allocCode(4, 8), { op: "push-nonvol", codeOffset: 1, register: "rbx" }] }, /prolog order/],
    ["a code past SizeOfProlog", { version: 1, sizeOfProlog: 3, prolog: [allocCode(4, 8)] }, /past SizeOfProlog/],
    ["SET_FPREG without a frame register", { version: 1, sizeOfProlog: 4, prolog: [{ op: "set-fpreg", codeOffset: 4 }] }, /needs a FrameRegister/],
    ["a FrameOffset not a multiple of 16", { version: 1, sizeOfProlog: 0, prolog: [], frameRegister: "rbp", frameOffset: 0x28 }, /multiple of 16/],
    ["a FrameOffset past 240", { version: 1, sizeOfProlog: 0, prolog: [], frameRegister: "rbp", frameOffset: 256 }, /FrameOffset 256/],
    ["RAX as the frame register", { version: 1, sizeOfProlog: 0, prolog: [], frameRegister: "rax" }, /RAX/],
    [
      "CHAININFO together with a handler",
      { version: 1, sizeOfProlog: 0, prolog: [], chained: { beginRva: 0x1000, endRva: 0x1010, unwindData: 0x2000 }, handler: { flags: 1, rva: 0x1100 } },
      /excludes a handler/,
    ],
  ])("refuses %s", (_, spec, message) => {
    expect(() => encodeUnwindInfo(spec)).toThrow(message);
  });
});

describe("EPILOG codes (x64-unwind.md §1.6)", () => {
  it("a single epilog at the end is the header plus one 00 06 padding entry", () => {
    expect(hexBytes(encodeEpilogCodes({ size: 3, atEnd: true, offsets: [] }))).toBe("03 16 00 06");
  });

  it("an epilog that is not at the end has the header's bit 0 clear and its own entry", () => {
    expect(hexBytes(encodeEpilogCodes({ size: 4, atEnd: false, offsets: [0x20] }))).toBe("04 06 20 06");
  });

  it("offsets above 0xFF keep their high four bits in OpInfo, and the slot count is padded to even", () => {
    expect(hexBytes(encodeEpilogCodes({ size: 6, atEnd: true, offsets: [0x123, 0xabc] }))).toBe("06 16 23 16 bc a6 00 06");
  });

  it("counts padding entries in CountOfCodes, but not the pad slot after an odd count", () => {
    const info = encodeUnwindInfo({ version: 2, sizeOfProlog: 1, prolog: [{ op: "push-nonvol", codeOffset: 1, register: "rbx" }], epilogs: { size: 2, atEnd: true, offsets: [] } });
    expect(hexBytes(info)).toBe("02 01 03 00 02 16 00 06 01 30 00 00");
  });

  it.each<[string, Parameters<typeof encodeEpilogCodes>[0], RegExp]>([
    ["no epilog at all", { size: 1, atEnd: false, offsets: [] }, /at least one epilog/],
    ["an epilog size of 0", { size: 0, atEnd: true, offsets: [] }, /EpilogSize 0/],
    ["an offset past 12 bits", { size: 1, atEnd: false, offsets: [0x1000] }, /offset 4096/],
    ["an epilog that would run past EndAddress", { size: 5, atEnd: false, offsets: [4] }, /offset 4/],
    ["the at-end epilog listed again", { size: 3, atEnd: true, offsets: [3] }, /described twice/],
  ])("refuses %s", (_, epilogs, message) => {
    expect(() => encodeEpilogCodes(epilogs)).toThrow(message);
  });
});

describe("RUNTIME_FUNCTION table (x64-unwind.md §1.1)", () => {
  it("is written sorted by BeginAddress, 12 bytes per entry", () => {
    const table = encodeRuntimeFunctions([
      { beginRva: 0x1040, endRva: 0x1050, unwindData: 0x2010 },
      { beginRva: 0x1000, endRva: 0x1020, unwindData: 0x2000 },
    ]);
    expect(hexBytes(table)).toBe(hexBytes(bytes("00 10 00 00 20 10 00 00 00 20 00 00 | 40 10 00 00 50 10 00 00 10 20 00 00")));
  });

  it("accepts an indirect entry (UnwindData bit 0)", () => {
    expect(encodeRuntimeFunctions([{ beginRva: 0x1000, endRva: 0x1010, unwindData: 0x3001 }]).length).toBe(12);
  });

  it.each<[string, { beginRva: number; endRva: number; unwindData: number }[], RegExp]>([
    ["overlapping entries", [{ beginRva: 0x1000, endRva: 0x1030, unwindData: 0x2000 }, { beginRva: 0x1020, endRva: 0x1040, unwindData: 0x2010 }], /overlap/],
    ["an empty range", [{ beginRva: 0x1000, endRva: 0x1000, unwindData: 0x2000 }], /empty/],
    ["UnwindData that is not DWORD-aligned", [{ beginRva: 0x1000, endRva: 0x1010, unwindData: 0x2002 }], /DWORD-aligned/],
  ])("refuses %s", (_, entries, message) => {
    expect(() => encodeRuntimeFunctions(entries)).toThrow(message);
  });
});
