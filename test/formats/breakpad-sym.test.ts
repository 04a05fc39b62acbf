import { existsSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fixtureFile } from "../support/fixtures.js";
import { InputError } from "../../src/errors.js";
import {
  breakpadFpoData,
  breakpadFrameData,
  breakpadSymbols,
  BreakpadSymParser,
  parseBreakpadSym,
  readBreakpadSym,
  stackWinToFpoData,
  stackWinToFrameData,
  symbolStorePath,
  type BreakpadStackCfi,
  type BreakpadStackWin,
  type BreakpadSymbols,
} from "../../src/formats/breakpad-sym.js";
import { BYTE_LOOP_FROM } from "../../src/formats/breakpad-sym/parser.js";
import { bytesSource } from "../../src/memory/byte-source.js";
import { encodeFpoData } from "../../src/model/fpo-data.js";
import { inputError } from "../support/input-error.js";

// Counts below were taken from the files with grep, awk and an independent Python script
// (e.g. `grep -c '^FUNC '`, `grep '^STACK WIN 4' | wc -l`, and a brute-force check of every pair
// of STACK WIN ranges for the contained-range rule), not from the parser.

const SYMBOLS = fixtureFile("breakpad/symbols/");
const TEST_APP = "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym";
const KERNEL32 = "kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym";

function fixture(path: string): Uint8Array {
  return new Uint8Array(readFileSync(`${SYMBOLS}${path}`));
}


const MODULE = "MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 test_app.pdb";
const utf8 = new TextEncoder();

/** Parses `lines` joined by LF after a MODULE line and expects an error on the last line. */
function errorOnLastLine(...lines: string[]): InputError {
  const all = [MODULE, ...lines];
  const err = inputError(() => parseBreakpadSym(all.join("\n")));
  const line = all.length;
  expect(err.reason).toMatch(new RegExp(`^line ${line}: `));
  expect(err.offset).toBe(utf8.encode(all.slice(0, -1).map((l) => `${l}\n`).join("")).length);
  expect(err.message).toContain(`offset 0x${err.offset!.toString(16)}`);
  return err;
}

function ofType(s: BreakpadSymbols, type: number): BreakpadStackWin[] {
  return s.stackWin.filter((r) => r.type === type);
}

function pushInChunks(bytes: Uint8Array, size: number, options: { skipMalformed?: boolean } = {}): BreakpadSymbols {
  const p = new BreakpadSymParser(options);
  for (let at = 0; at < bytes.length; at += size) p.push(bytes.subarray(at, at + size));
  return p.finish();
}

describe("Breakpad .sym files from google/breakpad's minidump2 test data", () => {
  const testApp = parseBreakpadSym(fixture(TEST_APP));
  const kernel32 = parseBreakpadSym(fixture(KERNEL32));

  it("reads test_app.sym: MODULE, 6661 FILE, 1065 FUNC with 12604 line records, 5 PUBLIC", () => {
    expect(testApp.module).toEqual({ os: "windows", arch: "x86", debugId: "5A9832E5287241C1838ED98914E9B7FF1", debugFile: "test_app.pdb" });
    expect(testApp.info).toEqual([]);
    expect(testApp.codeId).toBeUndefined();
    expect(testApp.files.size).toBe(6661);
    expect(testApp.files.get(1)).toBe("c:\\program files\\microsoft visual studio 8\\vc\\platformsdk\\include\\winbase.h");
    expect(testApp.functions).toHaveLength(1065);
    expect(testApp.functions.reduce((n, f) => n + f.lines.length, 0)).toBe(12604);
    const first = testApp.functions[0]!;
    expect({ ...first, lines: first.lines }).toEqual({
      address: 0x1000,
      size: 0x13,
      paramSize: 4,
      name: "vswprintf",
      multiple: false,
      lines: [
        { address: 0x1000, size: 0, line: 50, file: 71 },
        { address: 0x1000, size: 0x12, line: 51, file: 71 },
        { address: 0x1012, size: 1, line: 52, file: 71 },
      ],
    });
    expect(testApp.publics.map((p) => [p.address, p.name])).toEqual([
      [0x9b07, "_NLG_Return"],
      [0x142e8, "_NLG_Dispatch2"],
      [0x142f2, "_NLG_Return2"],
      [0x21466, "_alloca_probe_8"],
      [0x23b06, "__from_strstr_to_strchr"],
    ]);
    expect(testApp.stackCfi).toEqual([]);
    expect([testApp.inlineCount, testApp.inlineOriginCount, testApp.unknownCount]).toEqual([0, 0, 0]);
  });

  it("keeps functions and publics sorted by address", () => {
    for (const list of [testApp.functions, testApp.publics, kernel32.publics]) {
      expect(list.every((r, i) => i === 0 || list[i - 1]!.address <= r.address)).toBe(true);
    }
  });

  it("reads test_app.sym's STACK WIN records: 259 of type 0 and 1556 of type 4, two of which the contained-range rule drops", () => {
    expect(ofType(testApp, 0)).toHaveLength(259);
    expect(ofType(testApp, 4)).toHaveLength(1554);
    expect(testApp.droppedStackWin).toBe(2);
    // 1005c+b2 reaches past 1005b+a1, and 19be7+2e past 19be6+1a: partial overlaps.
    expect(testApp.stackWin.map((r) => r.line)).not.toContain(21067);
    expect(testApp.stackWin.map((r) => r.line)).not.toContain(21503);
    expect(testApp.stackWin.find((r) => r.type === 4 && r.rva === 0x4290)).toEqual({
      type: 4,
      rva: 0x4290,
      codeSize: 0x18,
      prologSize: 4,
      epilogSize: 0,
      paramsSize: 0,
      savedRegsSize: 0,
      localsSize: 4,
      maxStackSize: 0,
      hasProgram: true,
      program: "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + = $L $T0 .cbSavedRegs - = $P $T0 8 + .cbParams + =",
      line: 20339,
      offset: 596680,
    });
    expect(testApp.stackWin.find((r) => r.type === 0)).toEqual({
      type: 0,
      rva: 0x1000,
      codeSize: 0x13,
      prologSize: 0,
      epilogSize: 0,
      paramsSize: 4,
      savedRegsSize: 0,
      localsSize: 0,
      maxStackSize: 0,
      hasProgram: false,
      allocatesBasePointer: false,
      line: 21893,
      offset: 808835,
    });
  });

  it("reads kernel32.sym: 1576 PUBLIC, no FUNC or FILE, 507 type-0 and 3703 type-4 STACK WIN records (503 dropped)", () => {
    expect(kernel32.module).toEqual({ os: "windows", arch: "x86", debugId: "BCE8785C57B44245A669896B6A19B9542", debugFile: "kernel32.pdb" });
    expect(kernel32.functions).toEqual([]);
    expect(kernel32.files.size).toBe(0);
    expect(kernel32.publics).toHaveLength(1576);
    expect(kernel32.publics.find((p) => p.name === "CloseHandle")).toEqual({ address: 0x9b47, paramSize: 4, name: "CloseHandle", multiple: false });
    expect(ofType(kernel32, 0)).toHaveLength(507);
    expect(ofType(kernel32, 4)).toHaveLength(3200);
    expect(kernel32.droppedStackWin).toBe(503);
  });

  it("finds the 5,259 type-4 records that x86-fpo.md §3.2 counts in the two files (stored plus dropped)", () => {
    const inText = [TEST_APP, KERNEL32]
      .map((f) => new TextDecoder().decode(fixture(f)).match(/^STACK WIN 4 /gm)?.length ?? 0)
      .reduce((a, b) => a + b, 0);
    expect(inText).toBe(5259);
    expect(ofType(testApp, 4).length + ofType(kernel32, 4).length + testApp.droppedStackWin + kernel32.droppedStackWin).toBe(5259);
  });

  it("lives at symbolStorePath(debug file, debug id) under the store root", () => {
    for (const [s, path] of [[testApp, TEST_APP], [kernel32, KERNEL32]] as const) {
      expect(symbolStorePath(s.module.debugFile, s.module.debugId)).toBe(path);
      expect(existsSync(`${SYMBOLS}${path}`)).toBe(true);
    }
  });

  it("converts type 4 to FrameData and type 0 to FPO_DATA, sorted by start", () => {
    const fd = stackWinToFrameData(testApp.stackWin);
    expect(fd).toHaveLength(1554);
    expect(fd.every((r, i) => i === 0 || fd[i - 1]!.rvaStart <= r.rvaStart)).toBe(true);
    expect(fd.find((r) => r.rvaStart === 0x4290)).toEqual({
      rvaStart: 0x4290,
      codeSize: 0x18,
      localSize: 4,
      paramsSize: 0,
      maxStackSize: 0,
      frameFunc: 0,
      prologSize: 4,
      savedRegsSize: 0,
      flags: 0,
      hasSEH: false,
      hasEH: false,
      isFunctionStart: false,
      program: "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + = $L $T0 .cbSavedRegs - = $P $T0 8 + .cbParams + =",
    });

    const fpo = [...stackWinToFpoData(testApp.stackWin), ...stackWinToFpoData(kernel32.stackWin)];
    expect(fpo).toHaveLength(259 + 507);
    expect(fpo[0]).toEqual({
      ulOffStart: 0x1000, cbProcSize: 0x13, cdwLocals: 0, cdwParams: 1, cbProlog: 0, cbRegs: 0,
      fHasSEH: false, fUseBP: false, reserved: 0, cbFrame: 0,
    });
    // Every record fits FPO_DATA's fields.
    for (const f of fpo) expect(encodeFpoData(f)).toHaveLength(16);
  });

  it("gives the same result when the file is pushed in small byte chunks or as text", () => {
    const bytes = fixture(TEST_APP);
    expect(pushInChunks(bytes, 7)).toEqual(testApp);
    expect(pushInChunks(bytes, 4093)).toEqual(testApp);
    expect(parseBreakpadSym(new TextDecoder().decode(bytes))).toEqual(testApp);
  });
});

describe("records read from the parse's tables, as symbol attachment reads them", () => {
  // A copy of the parsed symbols (`{ ...sym }`) has the same records as plain arrays and none of
  // the parse's tables: the conversions then read the records themselves, as for symbols made
  // another way. Both routes must give the same unwind records and module symbols.
  for (const [name, path] of [["test_app.sym", TEST_APP], ["kernel32.sym", KERNEL32]] as const) {
    it(`${name}: FrameData, FPO_DATA and module symbols with their line records`, () => {
      const sym = parseBreakpadSym(fixture(path));
      const copy: BreakpadSymbols = { ...sym };
      expect(breakpadFrameData(sym)).toEqual(breakpadFrameData(copy));
      expect(breakpadFrameData(sym)).toEqual(stackWinToFrameData(sym.stackWin));
      expect(breakpadFpoData(sym)).toEqual(breakpadFpoData(copy));
      const fromTables = breakpadSymbols(sym);
      const fromRecords = breakpadSymbols(copy);
      expect(fromTables).toEqual(fromRecords);
      expect(fromTables.map((s) => s.lines)).toEqual(fromRecords.map((s) => s.lines));
      // Records with one program share its string.
      const programs = breakpadFrameData(sym).map((f) => f.program).filter((p) => p !== undefined);
      expect(new Set(programs).size).toBeLessThan(programs.length);
    });
  }

  it("numbers wider than 32 bits, in files of thousands of records, read back as the file gives them", () => {
    const lines = ["MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 wide.pdb", "FILE 123456789012 /src/wide.c", "FILE 7 /src/narrow.c"];
    for (let i = 0; i < 3000; i++) {
      lines.push(`FUNC ${(0x1f0000000000 + i * 16).toString(16)} ffffffff 80000000 f${i}`, `${(0xfffffff0 - i).toString(16)} 10 ${4000000000 - i} 7`);
    }
    lines.push("PUBLIC 1fffffffffff 80000001 p");
    for (let i = 0; i < 3000; i++) lines.push(`STACK WIN 4 ${(0x1f0000000000 + i * 16).toString(16)} 10 ffffffff 0 80000000 fffffffc 7fffffff ffffffff 1 $T0 .raSearch = $eip $T0 ^ =`);
    const sym = parseBreakpadSym(new TextEncoder().encode(lines.join("\n")));
    expect(sym.files.get(123456789012)).toBe("/src/wide.c");
    const last = sym.functions[2999]!;
    expect(last).toMatchObject({ address: 0x1f0000000000 + 2999 * 16, size: 0xffffffff, paramSize: 0x80000000, name: "f2999" });
    expect(last.lines).toEqual([{ address: 0xfffffff0 - 2999, size: 0x10, line: 4000000000 - 2999, file: 7 }]);
    expect(sym.publics).toEqual([{ address: 0x1fffffffffff, paramSize: 0x80000001, name: "p", multiple: false }]);
    expect(sym.stackWin).toHaveLength(3000);
    expect(sym.stackWin[1234]).toMatchObject({ rva: 0x1f0000000000 + 1234 * 16, codeSize: 0x10, prologSize: 0xffffffff, paramsSize: 0x80000000, savedRegsSize: 0xfffffffc, localsSize: 0x7fffffff, maxStackSize: 0xffffffff });
    expect(breakpadFrameData(sym)).toEqual(stackWinToFrameData(sym.stackWin));
    expect(breakpadFrameData(sym)[2999]).toMatchObject({ rvaStart: 0x1f0000000000 + 2999 * 16, paramsSize: 0x80000000, program: "$T0 .raSearch = $eip $T0 ^ =" });
    const names = breakpadSymbols(sym);
    expect(names[3000]).toMatchObject({ name: "p", rva: 0x1fffffffffffn, kind: "public", paramSize: 0x80000001 });
    expect(names[5]!.lines).toEqual([{ rva: BigInt(0xfffffff0 - 5), size: 0x10n, line: 4000000000 - 5, file: "/src/narrow.c" }]);
  });
});

describe("runs of FILE, STACK WIN and STACK CFI records, however they are spaced and ended", () => {
  // A module's file is mostly FILE, STACK WIN and STACK CFI lines. Each line below is written from
  // known values, in dump_syms's usual form or not (two spaces, leading zeros, trailing spaces,
  // CR LF, a field too long for its reader), and the records read back must be those values,
  // with their line numbers and offsets, whichever reader took the line.
  const hexOf = (v: number, form: { zeros: number }): string => "0".repeat(form.zeros) + v.toString(16);
  const winArb = fc.record({
    type: fc.integer({ min: 0, max: 4 }),
    size: fc.integer({ min: 1, max: 0x30 }),
    sizes: fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 6, maxLength: 6 }),
    program: fc.option(fc.constantFrom("$T0 $ebp = $eip $T0 4 + ^ =", "$eip $esp ^ = $esp $esp 4 + =", "x"), { nil: undefined }),
    flag: fc.integer({ min: 0, max: 3 }),
    gap: fc.constantFrom(" ", " ", " ", "  "),
    zeros: fc.constantFrom(0, 0, 0, 1, 6),
    trailing: fc.constantFrom("", "", " "),
  });
  const fileArb = fc.record({ name: fc.constantFrom("c:\\src\\a.c", "/src/b c.h", "\u00e9t\u00e9.c", "x"), gap: fc.constantFrom(" ", " ", "  "), zeros: fc.constantFrom(0, 0, 2) });
  const cfiArb = fc.record({
    init: fc.boolean(),
    size: fc.integer({ min: 0, max: 0x100 }),
    rules: fc.constantFrom(".cfa: $esp 4 + .ra: .cfa 4 - ^", "$ebp: .cfa 8 - ^", ".cfa: $rsp 16 +  "),
    gap: fc.constantFrom(" ", " ", " ", "  "),
    zeros: fc.constantFrom(0, 0, 0, 3),
  });
  const lineArb = fc.oneof(
    { weight: 3, arbitrary: winArb.map((w) => ({ kind: "win" as const, ...w })) },
    { weight: 2, arbitrary: fileArb.map((f) => ({ kind: "file" as const, ...f })) },
    { weight: 3, arbitrary: cfiArb.map((c) => ({ kind: "cfi" as const, ...c })) },
    { weight: 1, arbitrary: fc.constant({ kind: "bad" as const }) },
  );

  it("reads back the values each line was written from", () => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 40 }), fc.constantFrom("\n", "\r\n"), (lines, eol) => {
        const text = [MODULE];
        const wins: Omit<BreakpadStackWin, "offset">[] = [];
        const files = new Map<number, string>();
        const cfi: BreakpadStackCfi[] = [];
        const bad: number[] = [];
        lines.forEach((l, k) => {
          const lineNumber = text.length + 1;
          if (l.kind === "cfi") {
            const address = 0x2000 + k * 0x10;
            const hexAddress = hexOf(address, l);
            if (l.init) {
              text.push(["STACK", "CFI", "INIT", hexAddress, hexOf(l.size, l), l.rules].join(l.gap));
              cfi.push({ address, size: l.size, init: l.rules, deltas: [] });
            } else {
              text.push(["STACK", "CFI", hexAddress, l.rules].join(l.gap));
              // A delta row with no INIT before it is malformed.
              if (cfi.length === 0) bad.push(lineNumber);
              else cfi[cfi.length - 1]!.deltas.push({ address, rules: l.rules });
            }
          } else if (l.kind === "bad") {
            text.push(`STACK WIN 4 ${(0x100000 + k * 0x40).toString(16)} 10 123456789 0 0 0 0 0 1 $T0`);
            bad.push(lineNumber);
          } else if (l.kind === "file") {
            text.push(["FILE", "0".repeat(l.zeros) + String(1000 + k), l.name].join(l.gap));
            files.set(1000 + k, l.name);
          } else {
            const rva = 0x1000 + k * 0x40;
            const [prolog, epilog, params, saved, locals, maxStack] = l.sizes as [number, number, number, number, number, number];
            const form = { zeros: l.zeros };
            const numbers = [l.type, rva, l.size, prolog, epilog, params, saved, locals, maxStack, l.program === undefined ? 0 : 1].map((v) => hexOf(v, form));
            text.push(["STACK", "WIN", ...numbers, l.program ?? hexOf(l.flag, form)].join(l.gap) + l.trailing);
            const record: Omit<BreakpadStackWin, "offset"> = { type: l.type, rva, codeSize: l.size, prologSize: prolog, epilogSize: epilog, paramsSize: params, savedRegsSize: saved, localsSize: locals, maxStackSize: maxStack, hasProgram: l.program !== undefined, line: lineNumber };
            if (l.program !== undefined) record.program = l.program + l.trailing;
            else record.allocatesBasePointer = l.flag !== 0;
            wins.push(record);
          }
        });
        const file = text.join(eol) + eol;
        const bytes = utf8.encode(file);
        for (const sym of [parseBreakpadSym(bytes, { skipMalformed: true }), readBreakpadSym(bytesSource(bytes), { skipMalformed: true }), pushInChunks(bytes, 37, { skipMalformed: true })]) {
          expect(sym.stackWin.map(({ offset: _, ...r }) => r)).toEqual(wins);
          // Each record's offset is its line's.
          for (const r of sym.stackWin) expect(new TextDecoder().decode(bytes.subarray(r.offset, r.offset + 6))).toBe("STACK ");
          expect(sym.files).toEqual(files);
          expect(sym.stackCfi).toEqual(cfi);
          expect(sym.malformedCount).toBe(bad.length);
          if (bad.length > 0) expect(sym.firstMalformed?.reason).toMatch(new RegExp(`^line ${bad[0]}: `));
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe("parseBreakpadSym on hand-written files", () => {
  it("reads every record kind, counts INLINE, INLINE_ORIGIN and unknown records, and skips empty lines", () => {
    const s = parseBreakpadSym(
      [
        "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libfoo.so",
        "INFO CODE_ID 5F4E3D2C1B libfoo.so",
        "INFO GENERATOR dump_syms 1.0",
        "FILE 0 /src/a b.c",
        "FILE 0 /src/ignored.c",
        "INLINE_ORIGIN 0 inlined_fn",
        "FUNC m 2000 20 8 operator new(unsigned long)",
        "2000 10 7 0",
        "INLINE 0 7 0 0 2004 4",
        "2010 10 8 0",
        "FUNC 1000 10 0 first",
        "",
        "PUBLIC m 3000 4 pub name",
        "PUBLIC 2800 0 earlier",
        "STACK CFI INIT 1000 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^",
        "STACK CFI 1001 .cfa: $rsp 16 +",
        "STACK CFI 1004 .cfa: $rbp 16 +",
        "STACK WIN 0 1000 10 2 0 8 4 c 0 0 1",
        "STACK WIN 4 2000 20 3 1 0 0 0 0 0 0",
        "STACK XYZ 1 2 3",
        "FOO bar",
        "",
      ].join("\n"),
    );
    expect(s.module).toEqual({ os: "Linux", arch: "x86_64", debugId: "0123456789ABCDEF0123456789ABCDEF0", debugFile: "libfoo.so" });
    expect(s.info).toEqual(["CODE_ID 5F4E3D2C1B libfoo.so", "GENERATOR dump_syms 1.0"]);
    expect(s.codeId).toEqual({ id: "5F4E3D2C1B", file: "libfoo.so" });
    expect([...s.files]).toEqual([[0, "/src/a b.c"]]);
    expect(s.functions.map((f) => [f.address, f.name, f.multiple, f.paramSize, f.lines.length])).toEqual([
      [0x1000, "first", false, 0, 0],
      [0x2000, "operator new(unsigned long)", true, 8, 2],
    ]);
    expect(s.publics).toEqual([
      { address: 0x2800, paramSize: 0, name: "earlier", multiple: false },
      { address: 0x3000, paramSize: 4, name: "pub name", multiple: true },
    ]);
    expect(s.stackCfi).toEqual([
      {
        address: 0x1000,
        size: 0x10,
        init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^",
        deltas: [
          { address: 0x1001, rules: ".cfa: $rsp 16 +" },
          { address: 0x1004, rules: ".cfa: $rbp 16 +" },
        ],
      },
    ]);
    expect(s.stackWin.map((r) => [r.type, r.hasProgram, r.allocatesBasePointer, r.program])).toEqual([
      [0, false, true, undefined],
      [4, false, false, undefined],
    ]);
    expect([s.inlineCount, s.inlineOriginCount, s.unknownCount]).toEqual([1, 1, 2]);

    expect(stackWinToFpoData(s.stackWin)).toEqual([
      { ulOffStart: 0x1000, cbProcSize: 0x10, cdwLocals: 3, cdwParams: 2, cbProlog: 2, cbRegs: 1, fHasSEH: false, fUseBP: true, reserved: 0, cbFrame: 0 },
    ]);
    const fd = stackWinToFrameData(s.stackWin);
    expect(fd).toHaveLength(1);
    expect(fd[0]!.program).toBeUndefined();
    expect("program" in fd[0]!).toBe(false);
  });

  it("accepts CR, LF and CR LF line ends, a missing final line end and a UTF-8 BOM", () => {
    const lines = [MODULE, "FUNC 1000 10 0 f", "1000 10 1 0", "PUBLIC 2000 0 g"];
    const expected = parseBreakpadSym(lines.join("\n"));
    expect(parseBreakpadSym(lines.join("\r\n") + "\r\n")).toEqual(expected);
    expect(parseBreakpadSym(lines.join("\r"))).toEqual(expected);
    expect(parseBreakpadSym(`\ufeff${lines.join("\n")}\n`)).toEqual(expected);
    expect(expected.functions[0]!.lines).toEqual([{ address: 0x1000, size: 0x10, line: 1, file: 0 }]);
  });

  it("keeps STACK WIN records the way Breakpad's contained range map stores them, per type", () => {
    const s = parseBreakpadSym(
      [
        MODULE,
        "STACK WIN 4 1000 100 0 0 0 0 0 0 0 0", // stored
        "STACK WIN 4 1010 10 0 0 0 0 0 0 0 0", // nested inside: stored
        "STACK WIN 4 1010 10 0 0 0 0 0 0 0 0", // the same range again: dropped
        "STACK WIN 4 1018 10 0 0 0 0 0 0 0 0", // partly overlaps 1010+10: dropped
        "STACK WIN 4 10f0 20 0 0 0 0 0 0 0 0", // partly overlaps 1000+100: dropped
        "STACK WIN 4 1000 100 0 0 0 0 0 0 1 $eip 0 =", // repeats the outer range: dropped
        "STACK WIN 4 1000 10 0 0 0 0 0 0 0 0", // same start, inside: stored
        "STACK WIN 4 2000 0 0 0 0 0 0 0 0 0", // empty: dropped
        "STACK WIN 4 3010 10 0 0 0 0 0 0 0 0", // stored
        "STACK WIN 4 3000 100 0 0 0 0 0 0 0 0", // encloses 3010+10: stored
        "STACK WIN 0 1018 10 0 0 0 0 0 0 0 0", // another type has its own map: stored
      ].join("\n"),
    );
    expect(s.stackWin.map((r) => `${r.type}:${r.rva.toString(16)}+${r.codeSize.toString(16)}`)).toEqual([
      "4:1000+100", "4:1010+10", "4:1000+10", "4:3010+10", "4:3000+100", "0:1018+10",
    ]);
    expect(s.droppedStackWin).toBe(5);
    // Sorted by start, the outer range first where two start together.
    expect(stackWinToFrameData(s.stackWin).map((r) => [r.rvaStart, r.codeSize])).toEqual([
      [0x1000, 0x100], [0x1000, 0x10], [0x1010, 0x10], [0x3000, 0x100], [0x3010, 0x10],
    ]);
  });

  it("streams: chunks that split lines, CR LF pairs, UTF-8 sequences and UTF-16 surrogate pairs give the same result", () => {
    const text = [MODULE, "FILE 1 naïve € 𝄞.c", "FUNC 1000 10 0 ünïcödé 𝄞", "1000 10 1 1", "PUBLIC 2000 0 x"].join("\r\n") + "\r\n";
    const whole = parseBreakpadSym(text);
    expect(whole.files.get(1)).toBe("naïve € 𝄞.c");
    expect(whole.functions[0]!.name).toBe("ünïcödé 𝄞");
    const bytes = utf8.encode(text);
    for (const size of [1, 2, 3, 5]) expect(pushInChunks(bytes, size)).toEqual(whole);
    for (const size of [1, 2, 3]) {
      const p = new BreakpadSymParser();
      for (let at = 0; at < text.length; at += size) p.push(text.slice(at, at + size));
      expect(p.finish()).toEqual(whole);
    }
    const p = new BreakpadSymParser();
    p.push(text.slice(0, 10));
    expect(p.module).toBeUndefined();
    p.push(text.slice(10, 80));
    expect(p.module?.debugFile).toBe("test_app.pdb");
    p.push(text.slice(80));
    expect(p.finish()).toEqual(whole);
    expect(() => p.push("x")).toThrow(/after finish/);
  });

  it("names the line and the byte offset of the line start, counting UTF-8 bytes and empty lines", () => {
    const text = `${MODULE}\r\nFILE 1 €uro.c\r\n\r\nFUNC 1000 10 0\r\n`;
    const err = inputError(() => parseBreakpadSym(text));
    expect(err.code).toBe("missing-field");
    expect(err.reason).toBe("line 4: FUNC has no name");
    expect(err.offset).toBe(utf8.encode(`${MODULE}\r\nFILE 1 €uro.c\r\n\r\n`).length);
    // The same error when the file arrives one byte at a time.
    const chunked = inputError(() => pushInChunks(utf8.encode(text), 1));
    expect([chunked.code, chunked.reason, chunked.offset]).toEqual([err.code, err.reason, err.offset]);
    // After an error the parser takes nothing more.
    const p = new BreakpadSymParser();
    expect(() => p.push("FILE 1 a.c\n")).toThrow(InputError);
    expect(() => p.push(`${MODULE}\n`)).toThrow(/after an error/);
  });
});

describe("parseBreakpadSym rejects malformed lines", () => {
  it("a truncated STACK WIN record", () => {
    const err = errorOnLastLine("FUNC 4290 18 0 f", "STACK WIN 4 4290 18 4 0 0 0 4 0");
    expect(err.code).toBe("missing-field");
    expect(err.reason).toContain("STACK WIN has no has_program flag");
    expect(errorOnLastLine("STACK WIN 4 4290 18 4 0 0 0 4 0 1").reason).toContain("STACK WIN has no program string");
    expect(errorOnLastLine("STACK WIN 0 4290 18 4 0 0 0 4 0 0").reason).toContain("allocates_base_pointer");
    expect(errorOnLastLine("STACK WIN").code).toBe("missing-field");
    expect(errorOnLastLine("STACK CFI INIT 1000 10").code).toBe("missing-field");
  });

  it("a field that is not strict hex", () => {
    const err = errorOnLastLine("STACK WIN 4 4290 18 4 0 0 0 4 0x0 1 $eip 0 =");
    expect(err.code).toBe("bad-hex");
    expect(err.reason).toContain('max stack size "0x0" is not a hex number');
    expect(errorOnLastLine("FUNC 10g0 10 0 f").code).toBe("bad-hex");
    expect(errorOnLastLine("PUBLIC -10 0 f").code).toBe("bad-hex");
    expect(errorOnLastLine("STACK WIN 4 4290 18 4 0 0 0 4 0 0 x").code).toBe("bad-hex");
    expect(errorOnLastLine("STACK WIN 4 4290 18 4 0 0 0 4 0 0 1 extra").reason).toContain("unexpected extra field");
    expect(errorOnLastLine("STACK CFI 10z0 .cfa: $esp 4 +").code).toBe("bad-hex");
  });

  it("STACK WIN type 5", () => {
    const err = errorOnLastLine("STACK WIN 5 4290 18 4 0 0 0 4 0 1 $eip 0 =");
    expect(err.code).toBe("bad-value");
    expect(err.reason).toContain("type 0x5 is not 0..4");
  });

  it("a FUNC or PUBLIC without a name", () => {
    const err = errorOnLastLine("FUNC 1000 10 0");
    expect(err.code).toBe("missing-field");
    expect(err.reason).toContain("FUNC has no name");
    expect(errorOnLastLine("FUNC m 1000 10 0 ").reason).toContain("FUNC has no name");
    expect(errorOnLastLine("FUNC").reason).toContain("FUNC has no address");
    expect(errorOnLastLine("PUBLIC 1000 0").reason).toContain("PUBLIC has no name");
  });

  it("a line record before any FUNC, or after a PUBLIC", () => {
    const err = errorOnLastLine("FILE 1 a.c", "1000 10 1 1");
    expect(err.code).toBe("bad-value");
    expect(err.reason).toContain("a line record must follow a FUNC record");
    expect(errorOnLastLine("FUNC 1000 10 0 f", "PUBLIC 2000 0 g", "2000 4 1 1").code).toBe("bad-value");
    expect(errorOnLastLine("FUNC 1000 10 0 f", "1000 4 1 1 9").reason).toContain("unexpected extra field");
    expect(errorOnLastLine("FUNC 1000 10 0 f", "1000 4 x 1").code).toBe("bad-value");
    expect(errorOnLastLine("STACK CFI 1000 .cfa: $esp 4 +").reason).toContain("must follow a STACK CFI INIT record");
  });

  it("a number too large for a safe integer, or for a 32-bit STACK WIN size", () => {
    const err = errorOnLastLine("FUNC 100000000000000 10 0 f");
    expect(err.code).toBe("bad-value");
    expect(err.reason).toContain("larger than 2^53 - 1");
    expect(errorOnLastLine("FUNC 1000 ffffffffffffffffffff 0 f").code).toBe("bad-value");
    expect(errorOnLastLine("FILE 99999999999999999999 a.c").code).toBe("bad-value");
    const u32 = errorOnLastLine("STACK WIN 4 4290 18 4 0 0 0 100000000 0 1 $eip 0 =");
    expect(u32.code).toBe("bad-value");
    expect(u32.reason).toContain("locals size 100000000 is larger than 0xffffffff");
  });

  it("a file that does not start with a well-formed MODULE record", () => {
    const notModule = inputError(() => parseBreakpadSym("FILE 1 a.c\nFUNC 1000 10 0 f\n"));
    expect([notModule.code, notModule.offset]).toEqual(["bad-magic", 0]);
    expect(notModule.reason).toMatch(/^line 1: a \.sym file starts with a MODULE record/);
    const afterEmptyLine = inputError(() => parseBreakpadSym("\nSTACK WIN 4 1000 10 0 0 0 0 0 0 0 0\n"));
    expect([afterEmptyLine.code, afterEmptyLine.offset]).toEqual(["bad-magic", 1]);
    expect(afterEmptyLine.reason).toMatch(/^line 2: /);
    const empty = inputError(() => parseBreakpadSym(new Uint8Array(0)));
    expect([empty.code, empty.offset, empty.reason]).toEqual(["bad-magic", 0, "line 1: the file ends before its MODULE record (a .sym file starts with MODULE)"]);
    const short = inputError(() => parseBreakpadSym("MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1\n"));
    expect([short.code, short.reason]).toEqual(["missing-field", "line 1: MODULE has no debug file name"]);
    expect(inputError(() => parseBreakpadSym("MODULE windows x86 not-an-id test.pdb")).code).toBe("bad-hex");
    expect(errorOnLastLine(MODULE).reason).toContain("a second MODULE record");
  });
});

describe("a FUNC's line records far into a file (past BYTE_LOOP_FROM: read byte by byte) read as near its start (by the pattern)", () => {
  // Line records in every spelling the usual form allows, and some only the strict reader takes.
  const lines = ["1000 10 5 0", "1010  10   6  0   ", "1020 10 7 0\r", "1030 10 8 1\r", "\n1040 10 123456789 0", "1044 4 8 1\r1048 4 8 1", "00000001050 10 9 0", "1060 10 1234567890 1", "1070 a 10 1", "A080 FFFFFFFF 11 0"];
  const block = (bad: string | undefined): string => ["FILE 0 a.c", "FILE 1 b.c", "FUNC 1000 90 0 f", ...lines, ...(bad === undefined ? [] : [bad]), "FUNC 2000 10 0 g", "2000 10 1 0"].join("\n") + "\n";
  // Enough PUBLIC records to put what follows them past BYTE_LOOP_FROM.
  const count = Math.ceil(BYTE_LOOP_FROM / 20) + 10;
  const padding = Array.from({ length: count }, (_, i) => `PUBLIC ${(0x100000 + i).toString(16)} 0 p${i}`).join("\n") + "\n";
  const module = "MODULE windows x86_64 0123456789ABCDEF0123456789ABCDEF1 t.pdb\n";
  const early = (bad?: string): string => module + block(bad) + padding;
  const late = (bad?: string): string => module + padding + block(bad);
  const functions = (sym: BreakpadSymbols): unknown => sym.functions.map((f) => [f.address, f.size, f.name, f.lines]);

  it("the same functions and lines", () => {
    expect(module.length + padding.length).toBeGreaterThan(BYTE_LOOP_FROM);
    const a = parseBreakpadSym(early());
    const b = parseBreakpadSym(late());
    expect(functions(b)).toEqual(functions(a));
    expect(a.functions[0]!.lines).toHaveLength(lines.length + 1);
  });

  for (const bad of ["1090 10 x 0", "1090 10 5", "1090 10 5 0 7", "1090 123456789 5 0", "1090 10 5 0\t"]) {
    it(`the same error, at the same line of the block, for ${JSON.stringify(bad)}`, () => {
      const where = (text: string): { reason: string; line: number } => {
        const e = inputError(() => parseBreakpadSym(text));
        const m = /^line (\d+): (.*)$/s.exec(e.reason)!;
        return { reason: m[2]!, line: Number(m[1]) };
      };
      const a = where(early(bad));
      const b = where(late(bad));
      expect(b).toEqual({ reason: a.reason, line: a.line + count });
      // Skipped, it is counted alike and the rest reads the same.
      const sa = parseBreakpadSym(early(bad), { skipMalformed: true });
      const sb = parseBreakpadSym(late(bad), { skipMalformed: true });
      expect([sb.malformedCount, functions(sb)]).toEqual([sa.malformedCount, functions(sa)]);
    });
  }
});

describe("stackWinToFpoData", () => {
  const record = (fields: string): BreakpadStackWin[] => parseBreakpadSym(`${MODULE}\nSTACK WIN 0 1000 10 ${fields}\n`).stackWin;

  it("rejects sizes that FPO_DATA cannot hold, naming the record's line", () => {
    const regs = inputError(() => stackWinToFpoData(record("0 0 0 20 0 0 0 0")));
    expect(regs.code).toBe("bad-value");
    expect(regs.reason).toBe("line 2: STACK WIN 0 at rva 0x1000: saved register size 0x20 is not 4 × 0..7 (FPO_DATA.cbRegs has 3 bits)");
    expect(regs.offset).toBe(MODULE.length + 1);
    expect(inputError(() => stackWinToFpoData(record("0 0 0 6 0 0 0 0"))).reason).toContain("saved register size 0x6");
    expect(inputError(() => stackWinToFpoData(record("100 0 0 0 0 0 0 0"))).reason).toContain("prolog size 0x100");
    expect(inputError(() => stackWinToFpoData(record("0 0 2 0 0 0 0 0"))).reason).toContain("parameter size 0x2");
    expect(inputError(() => stackWinToFpoData(record("0 0 40000 0 0 0 0 0"))).reason).toContain("parameter size 0x40000");
    expect(inputError(() => stackWinToFpoData(record("0 0 0 0 3 0 0 0"))).reason).toContain("locals size 0x3");
    expect(stackWinToFpoData(record("ff 0 3fffc 1c 10 0 0 1"))).toEqual([
      { ulOffStart: 0x1000, cbProcSize: 0x10, cdwLocals: 4, cdwParams: 0xffff, cbProlog: 0xff, cbRegs: 7, fHasSEH: false, fUseBP: true, reserved: 0, cbFrame: 0 },
    ]);
  });

  it("ignores records of other types", () => {
    expect(stackWinToFpoData(parseBreakpadSym(`${MODULE}\nSTACK WIN 4 1000 10 0 0 0 20 0 0 1 $eip 0 =\n`).stackWin)).toEqual([]);
  });
});

describe("symbolStorePath", () => {
  it("replaces a trailing .pdb (any case) with .sym and appends .sym to other names (minidump.md §8)", () => {
    expect(symbolStorePath("test_app.pdb", "5A9832E5287241C1838ED98914E9B7FF1")).toBe("test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym");
    expect(symbolStorePath("KERNEL32.PDB", "AB1")).toBe("KERNEL32.PDB/AB1/KERNEL32.sym");
    expect(symbolStorePath("libfoo.so", "0123")).toBe("libfoo.so/0123/libfoo.so.sym");
    expect(symbolStorePath("app", "1")).toBe("app/1/app.sym");
    expect(symbolStorePath(".pdb", "1")).toBe(".pdb/1/.pdb.sym");
  });

  it("uses the base name of a path", () => {
    expect(symbolStorePath("c:\\build\\out\\test_app.pdb", "AB1")).toBe("test_app.pdb/AB1/test_app.sym");
    expect(symbolStorePath("/usr/lib/debug/libc.so.6", "AB1")).toBe("libc.so.6/AB1/libc.so.6.sym");
  });

  it("refuses names that would leave the store", () => {
    expect(inputError(() => symbolStorePath("..", "AB1")).code).toBe("bad-value");
    expect(inputError(() => symbolStorePath("dir/", "AB1")).code).toBe("bad-value");
    expect(inputError(() => symbolStorePath("test_app.pdb", "../../etc")).code).toBe("bad-value");
    expect(inputError(() => symbolStorePath("test_app.pdb", "")).code).toBe("bad-value");
  });

  it("refuses Windows device names, COM¹ to COM³ and LPT¹ to LPT³ among them, in any case and with any extension", () => {
    for (const name of ["CON", "nul.pdb", "com1.sym", "COM\u00b9", "lpt\u00b3.pdb", "Lpt9"]) expect(inputError(() => symbolStorePath(name, "AB1")).message, name).toMatch(/Windows device/);
    for (const name of ["com10.pdb", "console.pdb", "lpt.pdb", "com\u00b4.pdb"]) expect(symbolStorePath(name, "AB1"), name).toContain(name.replace(/\.pdb$/, ""));
  });
});

describe("skipMalformed: Breakpad's tolerant loading (minidump.md §7 Errors)", () => {
  const good = ["MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 app.pdb", "FUNC 1000 10 0 f", "1000 10 1 0"];

  it("leaves malformed lines out, counts them and keeps the first error with its line and offset", () => {
    const text = [...good, "FUNC zz 10 0 g", "STACK WIN 4 2000", "FUNC 2000 10 0 h", "2000 8 3 0"].join("\n");
    expect(() => parseBreakpadSym(text)).toThrow(InputError);
    const sym = parseBreakpadSym(text, { skipMalformed: true });
    expect(sym.functions.map((f) => f.name)).toEqual(["f", "h"]);
    expect(sym.malformedCount).toBe(2);
    expect(sym.truncated).toBe(false);
    expect(sym.firstMalformed?.reason).toMatch(/^line 4: /);
    expect(sym.firstMalformed?.offset).toBe(text.indexOf("FUNC zz"));
  });

  it("stops reading after more than 100 malformed lines, keeping what came before", () => {
    const bad = Array.from({ length: 120 }, () => "FUNC nothex 1 0 x");
    const sym = parseBreakpadSym([...good, ...bad, "FUNC 3000 10 0 late"].join("\n"), { skipMalformed: true });
    expect(sym.malformedCount).toBe(101);
    expect(sym.truncated).toBe(true);
    expect(sym.functions.map((f) => f.name)).toEqual(["f"]);
  });

  it("still refuses a file that does not start with MODULE", () => {
    expect(() => parseBreakpadSym("FUNC 1000 10 0 f\n", { skipMalformed: true })).toThrow(/MODULE/);
  });
});

describe("any spelling of well-formed records reads as what was written (property)", () => {
  // Records are generated with their values, then written the ways the format allows: runs of
  // spaces, hex in either case, leading zeros (beyond the common short forms), trailing spaces,
  // LF, CR LF or CR line ends, non-ASCII names; fed whole or in chunks. The expected result is the
  // generator's own values, not another parse.
  type Rec =
    | { kind: "file"; id: number; name: string }
    | { kind: "func"; multiple: boolean; address: number; size: number; paramSize: number; name: string; lines: [number, number, number, number][] }
    | { kind: "public"; multiple: boolean; address: number; paramSize: number; name: string }
    | { kind: "win"; type: number; rva: number; codeSize: number; sizes: number[]; program: string | undefined; allocates: number }
    | { kind: "cfi"; address: number; size: number; init: string; deltas: [number, string][] };
  const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
  const big = fc.oneof(u32, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
  const word = fc.stringMatching(/^[!-~]([ -~]{0,10}[!-~])?$/);
  const name = fc.oneof(word, fc.constantFrom("ünïcode::näme", "日本語", "a b  c", "operator<<", "x"));
  const rec: fc.Arbitrary<Rec> = fc.oneof(
    fc.record({ kind: fc.constant("file" as const), id: fc.integer({ min: 0, max: 1e12 }), name }),
    fc.record({ kind: fc.constant("func" as const), multiple: fc.boolean(), address: big, size: big, paramSize: big, name, lines: fc.array(fc.tuple(u32, u32, u32, u32), { maxLength: 4 }) }),
    fc.record({ kind: fc.constant("public" as const), multiple: fc.boolean(), address: big, paramSize: big, name }),
    fc.record({ kind: fc.constant("win" as const), type: fc.integer({ min: 0, max: 4 }), rva: u32, codeSize: fc.integer({ min: 1, max: 0x7fff }), sizes: fc.array(u32, { minLength: 6, maxLength: 6 }), program: fc.option(word, { nil: undefined }), allocates: u32 }),
    fc.record({ kind: fc.constant("cfi" as const), address: big, size: big, init: word, deltas: fc.array(fc.tuple(big, word), { maxLength: 3 }) }),
  );
  const spelling = fc.record({ spaces: fc.integer({ min: 1, max: 3 }), zeros: fc.integer({ min: 0, max: 12 }), upper: fc.boolean(), trailing: fc.integer({ min: 0, max: 2 }), eol: fc.constantFrom("\n", "\r\n", "\r") });

  it("parses generated files to the generated values", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(rec, spelling), { maxLength: 12 }), fc.constantFrom(0, 1, 5, 64), (records, chunk) => {
        const lines: string[] = [];
        const eols: string[] = [];
        const expected = { files: new Map<number, string>(), functions: [] as unknown[], publics: [] as unknown[], stackWin: [] as unknown[], stackCfi: [] as unknown[] };
        const put = (text: string, s: { trailing: number; eol: string }, trailing = true): void => {
          lines.push(trailing ? text + " ".repeat(s.trailing) : text);
          eols.push(s.eol);
        };
        for (const [r, s] of records) {
          const sp = " ".repeat(s.spaces);
          const hex = (n: number): string => "0".repeat(s.zeros) + (s.upper ? n.toString(16).toUpperCase() : n.toString(16));
          const dec = (n: number): string => "0".repeat(s.zeros) + String(n);
          if (r.kind === "file") {
            put(`FILE${sp}${dec(r.id)}${sp}${r.name}`, s, false);
            if (!expected.files.has(r.id)) expected.files.set(r.id, r.name);
          } else if (r.kind === "func") {
            put(`FUNC${sp}${r.multiple ? `m${sp}` : ""}${hex(r.address)}${sp}${hex(r.size)}${sp}${hex(r.paramSize)}${sp}${r.name}`, s, false);
            for (const [a, z, l, f] of r.lines) put([hex(a), hex(z), dec(l), dec(f)].join(sp), s);
            expected.functions.push({ address: r.address, size: r.size, paramSize: r.paramSize, name: r.name, multiple: r.multiple, lines: r.lines.map(([address, size, line, file]) => ({ address, size, line, file })) });
          } else if (r.kind === "public") {
            put(`PUBLIC${sp}${r.multiple ? `m${sp}` : ""}${hex(r.address)}${sp}${hex(r.paramSize)}${sp}${r.name}`, s, false);
            expected.publics.push({ address: r.address, paramSize: r.paramSize, name: r.name, multiple: r.multiple });
          } else if (r.kind === "win") {
            // Ranges far apart, so the contained-range rule keeps every record.
            const rva = expected.stackWin.length * 0x10000 + (r.rva % 0x8000);
            const tail = r.program !== undefined ? `1${sp}${r.program}` : `0${sp}${hex(r.allocates)}`;
            lines.push(`STACK${sp}WIN${sp}${[r.type, rva, r.codeSize, ...r.sizes].map(hex).join(sp)}${sp}${tail}${r.program === undefined ? " ".repeat(s.trailing) : ""}`);
            eols.push(s.eol);
            const w: Record<string, unknown> = { type: r.type, rva, codeSize: r.codeSize, prologSize: r.sizes[0], epilogSize: r.sizes[1], paramsSize: r.sizes[2], savedRegsSize: r.sizes[3], localsSize: r.sizes[4], maxStackSize: r.sizes[5], hasProgram: r.program !== undefined };
            if (r.program !== undefined) w.program = r.program;
            else w.allocatesBasePointer = r.allocates !== 0;
            expected.stackWin.push(w);
          } else {
            put(`STACK${sp}CFI${sp}INIT${sp}${hex(r.address)}${sp}${hex(r.size)}${sp}${r.init}`, s, false);
            for (const [a, rules] of r.deltas) put(`STACK${sp}CFI${sp}${hex(a)}${sp}${rules}`, s, false);
            expected.stackCfi.push({ address: r.address, size: r.size, init: r.init, deltas: r.deltas.map(([address, rules]) => ({ address, rules })) });
          }
        }
        const text = [MODULE, ...lines].map((l, i) => l + (i === 0 ? "\n" : eols[i - 1])).join("");
        const bytes = utf8.encode(text);
        const sym = chunk === 0 ? parseBreakpadSym(bytes) : pushInChunks(bytes, chunk);
        const byAddress = (a: { address: number }, b: { address: number }): number => a.address - b.address;
        expect(sym.files).toEqual(expected.files);
        expect(sym.functions.map((f) => ({ ...f, lines: f.lines }))).toEqual((expected.functions as { address: number }[]).sort(byAddress));
        expect(sym.publics).toEqual((expected.publics as { address: number }[]).sort(byAddress));
        expect(sym.stackWin.map(({ line: _l, offset: _o, ...w }) => w)).toEqual(expected.stackWin);
        // Each STACK WIN record names its line and the byte offset where the line starts.
        for (const w of sym.stackWin) expect(new TextDecoder().decode(bytes.subarray(w.offset, w.offset + 5))).toBe("STACK");
        expect(sym.stackCfi).toEqual(expected.stackCfi);
        expect([sym.malformedCount, sym.unknownCount]).toEqual([0, 0]);
      }),
      { numRuns: 300 },
    );
  });
});

describe("STACK WIN ranges: nested or disjoint, the first of a repeated range kept (property)", () => {
  it("keeps what a pairwise check of each new range against every kept one keeps, in any order", () => {
    // Small addresses force nesting, repeats and partial overlaps.
    const range = fc.tuple(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 24 }));
    fc.assert(
      fc.property(fc.array(range, { maxLength: 60 }), (ranges) => {
        const kept: [number, number][] = [];
        let dropped = 0;
        for (const [base, size] of ranges) {
          const end = base + size;
          const fits = size > 0 && kept.every(([b, s]) => end <= b || base >= b + s || (base >= b && end <= b + s && (base !== b || end !== b + s)) || (b >= base && b + s <= end && (base !== b || end !== b + s)));
          if (fits) kept.push([base, size]);
          else dropped++;
        }
        const text = [MODULE, ...ranges.map(([b, s]) => `STACK WIN 4 ${b.toString(16)} ${s.toString(16)} 0 0 0 0 0 0 1 $eip 0 =`)].join("\n");
        const sym = parseBreakpadSym(text);
        expect(sym.stackWin.map((r) => [r.rva, r.codeSize])).toEqual(kept);
        expect(sym.droppedStackWin).toBe(dropped);
      }),
      { numRuns: 2000 },
    );
  });
});
