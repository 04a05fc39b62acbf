/**
 * A module's "fpo" and "frameData" fields in vector JSON (src/formats/module-unwind.ts):
 * they round-trip through parseVector/formatVector, and bad records are InputErrors naming
 * the JSON path.
 */
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { formatVector, parseVector } from "../../src/formats/vector.js";

const FPO = [
  { ulOffStart: "0x00001000", cbProcSize: "0x00000040", cdwLocals: 2, cdwParams: 1, cbProlog: 7, cbRegs: 4, fHasSEH: false, fUseBP: true, cbFrame: 0 },
  { ulOffStart: "0x00001040", cbProcSize: "0x00000020", cdwLocals: 0, cdwParams: 0, cbProlog: 3, cbRegs: 7, fHasSEH: true, fUseBP: false, cbFrame: 3 },
  { ulOffStart: "0x00001060", cbProcSize: "0x00000010", cdwLocals: 65536, cdwParams: 65535, cbProlog: 255, cbRegs: 0, fHasSEH: false, fUseBP: false, cbFrame: 1 },
];
const FRAME_DATA = [
  // LLVM's nested suffix records: the function start, then after each prolog push.
  { rvaStart: "0x00002000", codeSize: "0x00000030", localSize: 0, paramsSize: 8, maxStackSize: 0, prologSize: 4, savedRegsSize: 0, flags: 4, program: "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =" },
  { rvaStart: "0x00002001", codeSize: "0x0000002f", localSize: 0, paramsSize: 8, maxStackSize: 0, prologSize: 3, savedRegsSize: 4, flags: 0, program: "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ =" },
  { rvaStart: "0x00002004", codeSize: "0x0000002c", localSize: 256, paramsSize: 8, maxStackSize: 16, prologSize: 0, savedRegsSize: 4, flags: 3 },
];

function vectorWith(module: Record<string, unknown>): Record<string, unknown> {
  return {
    format: "stackwalk-vector/1",
    machine: "x86",
    context: { eip: "0x00401010", esp: "0x0012ff00", ebp: "0x0012ff40" },
    memory: [{ base: "0x0012ff00", hex: "00000000" }],
    modules: [{ name: "app.exe", base: "0x00400000", size: "0x00004000", symbols: [], ...module }],
  };
}

/** The InputError parseVector throws for `v`. */
function errorOf(v: unknown): InputError {
  try {
    parseVector(JSON.stringify(v));
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error("expected an InputError");
}

describe("vector JSON module fields fpo and frameData", () => {
  it("parses the records with their units and flags", () => {
    const v = parseVector(JSON.stringify(vectorWith({ fpo: FPO, frameData: FRAME_DATA })));
    const unwind = v.modules[0]!.unwind!;
    expect(unwind.origin).toBe("vector");
    expect(unwind.fpo).toEqual([
      { ulOffStart: 0x1000, cbProcSize: 0x40, cdwLocals: 2, cdwParams: 1, cbProlog: 7, cbRegs: 4, fHasSEH: false, fUseBP: true, reserved: 0, cbFrame: 0 },
      { ulOffStart: 0x1040, cbProcSize: 0x20, cdwLocals: 0, cdwParams: 0, cbProlog: 3, cbRegs: 7, fHasSEH: true, fUseBP: false, reserved: 0, cbFrame: 3 },
      { ulOffStart: 0x1060, cbProcSize: 0x10, cdwLocals: 65536, cdwParams: 65535, cbProlog: 255, cbRegs: 0, fHasSEH: false, fUseBP: false, reserved: 0, cbFrame: 1 },
    ]);
    expect(unwind.frameData.map((r) => [r.rvaStart, r.codeSize, r.localSize, r.paramsSize, r.maxStackSize, r.prologSize, r.savedRegsSize, r.flags, r.program])).toEqual([
      [0x2000, 0x30, 0, 8, 0, 4, 0, 4, FRAME_DATA[0]!.program],
      [0x2001, 0x2f, 0, 8, 0, 3, 4, 0, FRAME_DATA[1]!.program],
      [0x2004, 0x2c, 256, 8, 16, 0, 4, 3, undefined],
    ]);
    expect(unwind.frameData.map((r) => [r.isFunctionStart, r.hasSEH, r.hasEH])).toEqual([
      [true, false, false],
      [false, false, false],
      [false, true, true],
    ]);
  });

  it("round-trips through formatVector and parseVector", () => {
    const first = parseVector(JSON.stringify(vectorWith({ fpo: FPO, frameData: FRAME_DATA })));
    const text = formatVector(first);
    expect(text).toContain('"fpo": [');
    expect(text).toContain('"frameData": [');
    const second = parseVector(text);
    expect(second.modules).toEqual(first.modules);
    expect(formatVector(second)).toBe(text);
  });

  it("round-trips a module with only one of the two kinds, and sorts records by start", () => {
    const reversed = [...FPO].reverse();
    const v = parseVector(JSON.stringify(vectorWith({ fpo: reversed })));
    expect(v.modules[0]!.unwind!.fpo.map((r) => r.ulOffStart)).toEqual([0x1000, 0x1040, 0x1060]);
    expect(v.modules[0]!.unwind!.frameData).toEqual([]);
    const text = formatVector(v);
    expect(text).not.toContain("frameData");
    expect(parseVector(text).modules).toEqual(v.modules);
    const fd = parseVector(JSON.stringify(vectorWith({ frameData: [FRAME_DATA[2], FRAME_DATA[0], FRAME_DATA[1]] })));
    expect(fd.modules[0]!.unwind!.frameData.map((r) => r.rvaStart)).toEqual([0x2000, 0x2001, 0x2004]);
    expect(parseVector(formatVector(fd)).modules).toEqual(fd.modules);
  });

  it("leaves unwind undefined for a module with neither field", () => {
    expect(parseVector(JSON.stringify(vectorWith({}))).modules[0]!.unwind).toBeUndefined();
  });
});

describe("bad fpo and frameData records: an InputError naming the JSON path", () => {
  it("an FPO_DATA record running past the module end", () => {
    const e = errorOf(vectorWith({ fpo: [FPO[0], { ...FPO[1], ulOffStart: "0x00003ff0", cbProcSize: "0x00000020" }] }));
    expect(e.code).toBe("bad-value");
    expect(e.path).toBe("$.modules[0].fpo[1]");
    expect(e.message).toContain("past the end of the module");
  });

  it("a FrameData record running past the module end", () => {
    const e = errorOf(vectorWith({ frameData: [{ ...FRAME_DATA[0], rvaStart: "0x00003ffc", codeSize: "0x00000005" }] }));
    expect(e.code).toBe("bad-value");
    expect(e.path).toBe("$.modules[0].frameData[0]");
  });

  it("a record that ends exactly at the module end is fine", () => {
    expect(() => parseVector(JSON.stringify(vectorWith({ fpo: [{ ...FPO[0], ulOffStart: "0x00003fc0", cbProcSize: "0x00000040" }] })))).not.toThrow();
  });

  it("partially overlapping FrameData records (code overlap)", () => {
    const e = errorOf(vectorWith({ frameData: [FRAME_DATA[0], { ...FRAME_DATA[1], rvaStart: "0x00002010", codeSize: "0x00000030" }] }));
    expect(e.code).toBe("overlap");
    expect(e.path).toBe("$.modules[0].frameData[1]");
    expect(e.message).toContain("$.modules[0].frameData[0]");
  });

  it("partially overlapping FPO_DATA records (code overlap), whatever their order in the file", () => {
    const e = errorOf(vectorWith({ fpo: [{ ...FPO[1], ulOffStart: "0x00001030" }, FPO[0]] }));
    expect(e.code).toBe("overlap");
    expect(e.path).toBe("$.modules[0].fpo[0]");
    expect(e.message).toContain("$.modules[0].fpo[1]");
  });

  it("FPO_DATA and FrameData may overlap each other: the check is per kind", () => {
    const v = parseVector(JSON.stringify(vectorWith({ fpo: [FPO[0]], frameData: [{ ...FRAME_DATA[0], rvaStart: "0x00001020" }] })));
    expect(v.modules[0]!.unwind!.fpo).toHaveLength(1);
  });

  it("cbRegs 8 (the field has 3 bits)", () => {
    const e = errorOf(vectorWith({ fpo: [{ ...FPO[0], cbRegs: 8 }] }));
    expect(e.code).toBe("bad-value");
    expect(e.path).toBe("$.modules[0].fpo[0].cbRegs");
  });

  it("cbFrame 4 and cbProlog 256", () => {
    expect(errorOf(vectorWith({ fpo: [{ ...FPO[0], cbFrame: 4 }] })).path).toBe("$.modules[0].fpo[0].cbFrame");
    expect(errorOf(vectorWith({ fpo: [{ ...FPO[0], cbProlog: 256 }] })).path).toBe("$.modules[0].fpo[0].cbProlog");
  });

  it("an unknown field", () => {
    const e = errorOf(vectorWith({ fpo: [FPO[0], { ...FPO[1], cbLocals: 3 }] }));
    expect(e.code).toBe("bad-value");
    expect(e.path).toBe("$.modules[0].fpo[1].cbLocals");
    const f = errorOf(vectorWith({ frameData: [{ ...FRAME_DATA[0], frameFunc: 2 }] }));
    expect(f.path).toBe("$.modules[0].frameData[0].frameFunc");
  });

  it("a start that is not 0x-prefixed hex", () => {
    const e = errorOf(vectorWith({ fpo: [{ ...FPO[0], ulOffStart: "1000" }] }));
    expect(e.code).toBe("bad-hex");
    expect(e.path).toBe("$.modules[0].fpo[0].ulOffStart");
    const f = errorOf(vectorWith({ frameData: [{ ...FRAME_DATA[0], rvaStart: 8192 }] }));
    expect(f.path).toBe("$.modules[0].frameData[0].rvaStart");
  });

  it("a missing field and a program that is not a string", () => {
    const { cbFrame: _omit, ...noFrame } = FPO[0]!;
    const e = errorOf(vectorWith({ fpo: [noFrame] }));
    expect(e.code).toBe("missing-field");
    expect(e.path).toBe("$.modules[0].fpo[0].cbFrame");
    expect(errorOf(vectorWith({ frameData: [{ ...FRAME_DATA[0], program: 7 }] })).path).toBe("$.modules[0].frameData[0].program");
  });
});
