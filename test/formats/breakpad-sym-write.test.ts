/**
 * The Breakpad .sym writer (src/formats/breakpad-sym-write.ts): the exact text of each record
 * kind, and round trips through parseBreakpadSym, stackWinToFpoData / stackWinToFrameData and
 * stackWinToFpoData back to the records written, for made-up records, emulator modules, and
 * Breakpad's own test_app.sym and kernel32.sym.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import {
  breakpadSymLines,
  formatBreakpadSym,
  symFileInput,
  symFileStorePath,
  type SymFileInput,
} from "../../src/formats/breakpad-sym-write.js";
import { x64ModuleCfi } from "../../src/arch/x64/cfi-from-unwind.js";
import { parseBreakpadSym, stackWinToFpoData, stackWinToFrameData, type BreakpadStackWin, type BreakpadSymbols } from "../../src/formats/breakpad-sym.js";
import type { FrameData } from "../../src/formats/frame-data.js";
import { readMappedImage } from "../../src/formats/pe-mapped.js";
import { parseSweep } from "../../src/formats/sweep.js";
import { parseVector } from "../../src/formats/vector.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { FRAME_FPO, FRAME_NONFPO, FRAME_TRAP, FRAME_TSS, type FpoData } from "../../src/model/fpo-data.js";

const STORE = "test/fixtures/breakpad/symbols";
const TEST_APP = `${STORE}/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym`;
const KERNEL32 = `${STORE}/kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym`;

const fpo = (r: Partial<FpoData> & Pick<FpoData, "ulOffStart" | "cbProcSize">): FpoData => ({
  cdwLocals: 0,
  cdwParams: 0,
  cbProlog: 0,
  cbRegs: 0,
  fHasSEH: false,
  fUseBP: false,
  reserved: 0,
  cbFrame: FRAME_FPO,
  ...r,
});

const frameData = (r: Partial<FrameData> & Pick<FrameData, "rvaStart" | "codeSize">): FrameData => ({
  localSize: 0,
  paramsSize: 0,
  maxStackSize: 0,
  frameFunc: 0,
  prologSize: 0,
  savedRegsSize: 0,
  flags: 0,
  hasSEH: false,
  hasEH: false,
  isFunctionStart: false,
  ...r,
});

/** What survives the format: FPO_DATA without fHasSEH and the reserved bit, FrameData without flags and FrameFunc. */
const fpoCarried = (r: FpoData): FpoData => ({ ...r, fHasSEH: false, reserved: 0 });
const frameDataCarried = (r: FrameData): FrameData => {
  const out: FrameData = { ...r, frameFunc: 0, flags: 0, hasSEH: false, hasEH: false, isFunctionStart: false };
  if (r.program === undefined) delete out.program;
  return out;
};
const byStart = <T>(key: (x: T) => [number, number]) => (a: T, b: T): number => key(a)[0] - key(b)[0] || key(b)[1] - key(a)[1];

const SAMPLE: SymFileInput = {
  arch: "x86",
  debugId: "5A9832E5287241C1838ED98914E9B7FF1",
  debugFile: "c:\\build\\sample.pdb",
  codeId: "45E5E8E03C000",
  codeFile: "c:\\build\\sample.exe",
  symbols: [
    { name: "main", rva: 0x1000n, size: 0x40n },
    { name: "helper", rva: 0x1040n, size: 0x20n },
    { name: "folded_a", rva: 0x1060n, size: 0x10n },
    { name: "folded_b", rva: 0x1060n, size: 0x10n },
    { name: "_start@8", rva: 0x1080n },
    { name: "operator new(unsigned int)", rva: 0x1090n, size: 0x8n },
  ],
  fpo: [
    fpo({ ulOffStart: 0x1040, cbProcSize: 0x20, cdwLocals: 2, cdwParams: 3, cbProlog: 4, cbRegs: 2, fUseBP: true }),
    fpo({ ulOffStart: 0x1000, cbProcSize: 0x40, cdwLocals: 1, cdwParams: 0, cbProlog: 6, cbFrame: FRAME_NONFPO }),
    fpo({ ulOffStart: 0x1060, cbProcSize: 0x10, cbFrame: FRAME_TRAP }),
    fpo({ ulOffStart: 0x1070, cbProcSize: 0x10, cbFrame: FRAME_TSS }),
  ],
  frameData: [
    frameData({ rvaStart: 0x1090, codeSize: 0x8, paramsSize: 4, localSize: 8, savedRegsSize: 4, prologSize: 1, maxStackSize: 0x10, program: "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = " }),
    frameData({ rvaStart: 0x1080, codeSize: 0x10, paramsSize: 8 }),
  ],
};

describe("breakpadSymLines", () => {
  it("writes each record kind in dump_syms' field order", () => {
    expect([...breakpadSymLines(SAMPLE)]).toEqual([
      "MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 sample.pdb",
      "INFO CODE_ID 45E5E8E03C000 sample.exe",
      "FUNC 1000 40 0 main",
      "FUNC 1040 20 c helper",
      "FUNC m 1060 10 0 folded_a",
      "FUNC 1090 8 4 operator new(unsigned int)",
      "PUBLIC 1080 8 _start@8",
      "STACK WIN 3 1000 40 6 0 0 0 4 0 0 0",
      "STACK WIN 0 1040 20 4 0 c 8 8 0 0 1",
      "STACK WIN 1 1060 10 0 0 0 0 0 0 0 0",
      "STACK WIN 2 1070 10 0 0 0 0 0 0 0 0",
      "STACK WIN 4 1080 10 0 0 8 0 0 0 0 0",
      "STACK WIN 4 1090 8 1 0 4 4 8 10 1 $T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = ",
    ]);
    expect(formatBreakpadSym(SAMPLE).endsWith(" + = \n")).toBe(true);
    expect(symFileStorePath(SAMPLE)).toBe("sample.pdb/5A9832E5287241C1838ED98914E9B7FF1/sample.sym");
  });

  it("round-trips through parseBreakpadSym and the STACK WIN conversions", () => {
    const sym = parseBreakpadSym(formatBreakpadSym(SAMPLE));
    expect(sym.module).toEqual({ os: "windows", arch: "x86", debugId: SAMPLE.debugId, debugFile: "sample.pdb" });
    expect(sym.codeId).toEqual({ id: "45E5E8E03C000", file: "sample.exe" });
    expect(sym.functions.map((f) => [f.address, f.size, f.paramSize, f.name, f.multiple])).toEqual([
      [0x1000, 0x40, 0, "main", false],
      [0x1040, 0x20, 12, "helper", false],
      [0x1060, 0x10, 0, "folded_a", true],
      [0x1090, 0x8, 4, "operator new(unsigned int)", false],
    ]);
    expect(sym.publics).toEqual([{ address: 0x1080, paramSize: 8, name: "_start@8", multiple: false }]);
    expect(sym.droppedStackWin).toBe(0);
    expect(stackWinToFpoData(sym.stackWin)).toEqual([...SAMPLE.fpo!].sort(byStart((r: FpoData) => [r.ulOffStart, r.cbProcSize])).map(fpoCarried));
    expect(stackWinToFrameData(sym.stackWin)).toEqual([...SAMPLE.frameData!].sort(byStart((r: FrameData) => [r.rvaStart, r.codeSize])).map(frameDataCarried));
  });

  it("keeps names and programs on one line, and leaves out what Breakpad would not store", () => {
    const lines = [
      ...breakpadSymLines({
        arch: "x86_64",
        os: "windows",
        debugId: "ABCDEF012345678901234567890ABCDE2a",
        debugFile: "/tmp/x y.pdb",
        symbols: [
          { name: "two\nlines", rva: 0x10n, size: 4n },
          { name: "  leading", rva: 0x20n },
          { name: "", rva: 0x30n, size: 1n },
        ],
        fpo: [fpo({ ulOffStart: 0x50, cbProcSize: 0 })],
        frameData: [frameData({ rvaStart: 0x60, codeSize: 4, program: "$T0 $ebp =\r\n$eip $T0 4 + ^ =" }), frameData({ rvaStart: 0x70, codeSize: 4, program: "" })],
      }),
    ];
    expect(lines).toEqual([
      "MODULE windows x86_64 ABCDEF012345678901234567890ABCDE2a x y.pdb",
      "FUNC 10 4 0 two lines",
      "FUNC 30 1 0 <name omitted>",
      "PUBLIC 20 0 leading",
      "STACK WIN 4 60 4 0 0 0 0 0 0 1 $T0 $ebp =  $eip $T0 4 + ^ =",
      "STACK WIN 4 70 4 0 0 0 0 0 0 0 0",
    ]);
    const sym = parseBreakpadSym(lines.join("\n"));
    expect(sym.module.debugFile).toBe("x y.pdb");
    expect(sym.functions.map((f) => f.name)).toEqual(["two lines", "<name omitted>"]);
  });

  it("refuses what the format cannot say", () => {
    const base: SymFileInput = { arch: "x86", debugId: "0123", debugFile: "a.pdb" };
    const attempt = (input: SymFileInput): unknown => {
      try {
        formatBreakpadSym(input);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    expect(attempt({ ...base, debugId: "not-hex" })).toBeInstanceOf(InputError);
    expect(attempt({ ...base, debugFile: "c:\\dir\\" })).toBeInstanceOf(InputError);
    expect(attempt({ ...base, arch: "x 86" })).toBeInstanceOf(InputError);
    expect(attempt({ ...base, fpo: [fpo({ ulOffStart: 0, cbProcSize: 4, cbFrame: 4 })] })).toBeInstanceOf(RangeError);
    expect(attempt({ ...base, symbols: [{ name: "f", rva: -1n, size: 1n }] })).toBeInstanceOf(RangeError);
    expect(attempt({ ...base, frameData: [frameData({ rvaStart: 0, codeSize: 4, localSize: 2 ** 32 })] })).toBeInstanceOf(RangeError);
  });
});

/** Everything of a parsed file the writer writes, for comparison (line numbers and offsets left out). */
function written(sym: BreakpadSymbols) {
  const win = (r: BreakpadStackWin) => ({ ...r, line: 0, offset: 0 });
  return {
    module: sym.module,
    functions: sym.functions.map((f) => ({ ...f, lines: [] })),
    publics: sym.publics,
    stackWin: sym.stackWin.map(win).sort((a, b) => a.type - b.type || a.rva - b.rva || b.codeSize - a.codeSize),
  };
}

/** The writer's input for a parsed file: its symbols, parameter sizes and STACK WIN records. */
function inputOf(sym: BreakpadSymbols): SymFileInput {
  return {
    os: sym.module.os,
    arch: sym.module.arch,
    debugId: sym.module.debugId,
    debugFile: sym.module.debugFile,
    symbols: [...sym.functions.map((f) => ({ name: f.name, rva: BigInt(f.address), size: BigInt(f.size) })), ...sym.publics.map((p) => ({ name: p.name, rva: BigInt(p.address) }))],
    paramSizes: new Map([...sym.publics.map((p) => [p.address, p.paramSize] as const), ...sym.functions.map((f) => [f.address, f.paramSize] as const)]),
    fpo: stackWinToFpoData(sym.stackWin),
    frameData: stackWinToFrameData(sym.stackWin),
  };
}

describe("Breakpad's own .sym files written again", () => {
  for (const file of [TEST_APP, KERNEL32]) {
    it(`${file.split("/").pop()}: FUNC, PUBLIC and every stored STACK WIN record come back the same`, () => {
      const original = parseBreakpadSym(readFileSync(file));
      const again = parseBreakpadSym(formatBreakpadSym(inputOf(original)));
      expect(again.droppedStackWin).toBe(0);
      const a = written(original);
      const b = written(again);
      expect(b.module).toEqual(a.module);
      expect(b.functions).toEqual(a.functions);
      expect(b.publics).toEqual(a.publics);
      expect(b.stackWin.length).toBe(a.stackWin.length);
      expect(b.stackWin).toEqual(a.stackWin);
      expect(stackWinToFrameData(again.stackWin)).toEqual(stackWinToFrameData(original.stackWin));
      expect(stackWinToFpoData(again.stackWin)).toEqual(stackWinToFpoData(original.stackWin));
    });
  }
});

describe("symFileInput: the .sym of a snapshot's module", () => {
  it("an image with FPO_DATA in its debug directory: STACK WIN 0 and 3 from it, the identity from its RSDS record", () => {
    const v = parseVector(readFileSync("vectors/x86/synthetic/mixed-8.json", "utf8"));
    const m = v.modules[0]!;
    const image = readMappedImage(v.memory, m.base)!;
    const input = symFileInput(m, v.machine, v.memory)!;
    expect(input).toMatchObject({ arch: "x86", debugId: image.codeView!.debugId, debugFile: "mixed-8.pdb", codeFile: "mixed-8.exe" });
    expect(input.codeId).toMatch(/^[0-9A-F]{8}3000$/);
    expect(input.fpo).toEqual(image.fpo);
    const sym = parseBreakpadSym(formatBreakpadSym(input));
    expect(stackWinToFpoData(sym.stackWin)).toEqual(image.fpo!.map(fpoCarried));
    expect(new Set(sym.stackWin.map((r) => r.type))).toEqual(new Set([0, 3]));
    expect(sym.functions.map((f) => f.name)).toEqual(m.symbols.map((s) => s.name));
  });

  it("a module with FrameData from its PDB: STACK WIN 4 with the programs", () => {
    const sweep = parseSweep(readFileSync("vectors/x86/c-fpo/big-frames-varargs.sweep.json", "utf8"));
    const m = sweep.modules[0]!;
    const memory = new RegionMemory(sweep.memory);
    const input = symFileInput(m, sweep.machine, memory)!;
    expect(input.debugFile).toBe("big-frames-varargs.pdb");
    const sym = parseBreakpadSym(formatBreakpadSym(input));
    expect(stackWinToFrameData(sym.stackWin)).toEqual(m.unwind!.frameData.map(frameDataCarried));
    expect(sym.publics.length + sym.functions.length).toBe(m.symbols.length);
  });

  it("x64: MODULE x86_64, no STACK WIN; a module with no identity has no .sym", () => {
    const v = parseVector(readFileSync("vectors/x64/synthetic/chained-capture.json", "utf8"));
    const input = symFileInput(v.modules[0]!, v.machine, v.memory)!;
    const lines = [...breakpadSymLines(input)];
    expect(lines[0]).toMatch(/^MODULE windows x86_64 [0-9A-F]{33} chained\.pdb$/);
    expect(lines.filter((l) => l.startsWith("STACK"))).toEqual([]);
    expect(symFileInput({ name: "bare.exe", base: 0x400000n, size: 0x1000n, symbols: [] }, "x86", new RegionMemory([]))).toBeUndefined();
  });

  it("x64 with STACK CFI from the image's unwind tables: INIT and delta records that read back as written", () => {
    const v = parseVector(readFileSync("vectors/x64/synthetic/set-fpreg-capture_w1.json", "utf8"));
    const m = v.modules[0]!;
    const input = symFileInput(m, v.machine, v.memory)!;
    input.stackCfi = x64ModuleCfi(m, v.memory);
    const sym = parseBreakpadSym(formatBreakpadSym(input));
    expect(sym.stackCfi).toEqual(input.stackCfi);
    expect(sym.stackCfi.length).toBeGreaterThan(2);
    // w1: push rbp, rbx, rdi; sub rsp,0x100; lea rbp,[rsp+0x80]: in its body the CFA is RBP-based.
    const lines = formatBreakpadSym(input).split("\n");
    expect(lines.some((l) => /^STACK CFI [0-9a-f]+ \.cfa: \$rbp \d+ \+ \.ra: \.cfa 8 - \^ \$rbx: \.cfa 24 - \^ \$rbp: \.cfa 16 - \^ \$rsi: /.test(l))).toBe(true);
    expect(lines.filter((l) => l.startsWith("STACK CFI INIT")).every((l) => / \.cfa: \$rsp 8 \+ \.ra: \.cfa 8 - \^$/.test(l))).toBe(true);
  });
});
