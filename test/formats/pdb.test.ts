import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { decodeFrameData, encodeFrameData, findFrameData } from "../../src/formats/frame-data.js";
import type { FrameData } from "../../src/formats/frame-data.js";
import { omapTranslate, parsePdb, type Pdb, type PdbSymbol } from "../../src/formats/pdb.js";
import { indexSymbols, SymbolRows } from "../../src/formats/pdb/streams.js";
import { bytesSource, type ByteSource } from "../../src/memory/byte-source.js";
import { inputError } from "../support/input-error.js";
import { layout, le, optionalHeaderAt, streamsOf, writeMsf } from "../support/msf.js";

// Expected values below were taken from llvm-pdbutil-14 (`dump --fpo --publics --symbols --summary`)
// and llvm-readobj-14 (`--coff-debug-directory`) on the committed clang-14/lld-14 images.

const BUILD = fileURLToPath(new URL("../../vectors/programs/c/build/", import.meta.url));
const PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved", "noreturn-longjmp"] as const;

function file(target: string, name: string): Uint8Array {
  return new Uint8Array(readFileSync(`${BUILD}${target}/${name}`));
}


/** The columns llvm-pdbutil prints for a FrameData record. */
function row(r: FrameData): unknown[] {
  return [r.rvaStart, r.codeSize, r.localSize, r.paramsSize, r.maxStackSize, r.prologSize, r.savedRegsSize, r.hasSEH, r.hasEH, r.isFunctionStart, r.program];
}

/** The CodeView RSDS record of a PE image, read by hand: GUID bytes and age. */
function rsds(exe: Uint8Array): { guid: Uint8Array; age: number } {
  const v = le(exe);
  const pe = v.getUint32(0x3c, true);
  const opt = pe + 24;
  const dirs = opt + (v.getUint16(opt, true) === 0x20b ? 112 : 96);
  const debugSize = v.getUint32(dirs + 6 * 8 + 4, true);
  const debugRva = v.getUint32(dirs + 6 * 8, true);
  const nSections = v.getUint16(pe + 6, true);
  const sections = opt + v.getUint16(pe + 20, true);
  let debugAt = -1;
  for (let i = 0; i < nSections; i++) {
    const s = sections + 40 * i;
    const va = v.getUint32(s + 12, true);
    if (debugRva >= va && debugRva < va + v.getUint32(s + 8, true)) debugAt = debugRva - va + v.getUint32(s + 20, true);
  }
  for (let e = debugAt; e < debugAt + debugSize; e += 28) {
    if (v.getUint32(e + 12, true) !== 2) continue;
    const at = v.getUint32(e + 24, true);
    expect(String.fromCharCode(...exe.subarray(at, at + 4))).toBe("RSDS");
    return { guid: exe.slice(at + 4, at + 20), age: v.getUint32(at + 20, true) };
  }
  throw new Error("no CodeView debug directory entry");
}

// ---- real data ----

describe("parsePdb on clang-14/lld-14 PDBs", () => {
  const counts: Record<string, readonly number[]> = {
    "x86-fpo": [26, 34, 23, 14],
    "x86-fp": [58, 43, 30, 23],
  };

  for (const target of ["x86-fpo", "x86-fp"] as const) {
    it(`${target}: slot 9 holds the FrameData records, slot 0 is empty, every program resolves`, () => {
      PROGRAMS.forEach((name, i) => {
        const pdb = parsePdb(file(target, `${name}.pdb`));
        expect(pdb.machine).toBe(0x14c);
        expect(pdb.fpo).toEqual([]);
        expect(pdb.frameData.length).toBe(counts[target]![i]);
        expect(pdb.omapFromSrc).toBeUndefined();
        expect(pdb.omapToSrc).toBeUndefined();
        expect(pdb.sections?.map((s) => [s.name, s.virtualAddress])).toEqual([
          [".text", 0x1000],
          [".rdata", 0x2000],
          [".data", 0x3000],
        ]);
        for (const [k, r] of pdb.frameData.entries()) {
          expect(r.program).toMatch(/^\$T[01] (\.raSearch|\$ebp 4 \+) = .*\$eip \$T[01] \^ = \$esp \$T[01] 4 \+ = /);
          expect(r.maxStackSize).toBe(0);
          expect(r.hasSEH || r.hasEH).toBe(false);
          if (k > 0) expect(r.rvaStart).toBeGreaterThanOrEqual(pdb.frameData[k - 1]!.rvaStart);
        }
      });
    });
  }

  it("x86-fpo recursion-callbacks: records match llvm-pdbutil (pushes, function starts)", () => {
    const fd = parsePdb(file("x86-fpo", "recursion-callbacks.pdb")).frameData;
    const at = (rva: number): unknown[] => row(fd.find((r) => r.rvaStart === rva)!);
    const base = "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = ";
    expect(row(fd[0]!)).toEqual([0x1000, 12, 0, 8, 0, 0, 0, false, false, true, base]);
    expect(fd[0]!.frameFunc).toBe(2);
    expect(at(0x1070)).toEqual([0x1070, 56, 0, 4, 0, 2, 0, false, false, true, base]);
    expect(at(0x1072)).toEqual([0x1072, 54, 0, 4, 0, 0, 8, false, false, false, `${base}$edi $T0 4 - ^ = $esi $T0 8 - ^ = `]);
    expect(at(0x1163)).toEqual([
      0x1163, 56, 0, 12, 0, 0, 12, false, false, false,
      `${base}$ebx $T0 4 - ^ = $edi $T0 8 - ^ = $esi $T0 12 - ^ = `,
    ]);
    expect(at(0x1241)).toEqual([0x1241, 149, 0, 0, 0, 0, 4, false, false, false, `${base}$esi $T0 4 - ^ = `]);
    expect(fd[fd.length - 1]!.rvaStart).toBe(0x1241);
  });

  it("x86-fpo aligned-callee-saved: frame-pointer and realigned (@) programs", () => {
    const fd = parsePdb(file("x86-fpo", "aligned-callee-saved.pdb")).frameData;
    const at = (rva: number): unknown[] => row(fd.find((r) => r.rvaStart === rva)!);
    expect(at(0x1043)).toEqual([0x1043, 63, 0, 4, 0, 7, 4, false, false, false, "$T0 $ebp 4 + = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ = "]);
    expect(at(0x1047)).toEqual([
      0x1047, 59, 0, 4, 0, 3, 8, false, false, false,
      "$T1 $ebp 4 + = $T0 $T1 8 - 32 @ = $eip $T1 ^ = $esp $T1 4 + = $ebp $T1 4 - ^ = $esi $T1 8 - ^ = ",
    ]);
    expect(at(0x1217)).toEqual([
      0x1217, 232, 32, 16, 0, 0, 16, false, false, false,
      "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ = $ebx $T0 8 - ^ = $edi $T0 12 - ^ = $esi $T0 16 - ^ = ",
    ]);
  });

  it("x86-fp recursion-callbacks: push ebp / mov ebp,esp records", () => {
    const fd = parsePdb(file("x86-fp", "recursion-callbacks.pdb")).frameData;
    expect(fd.slice(0, 3).map(row)).toEqual([
      [0x1000, 14, 0, 8, 0, 3, 0, false, false, true, "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = "],
      [0x1001, 13, 0, 8, 0, 2, 4, false, false, false, "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ = "],
      [0x1003, 11, 0, 8, 0, 0, 4, false, false, false, "$T0 $ebp 4 + = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ = "],
    ]);
  });

  it("x64: no FrameData or FPO, machine AMD64", () => {
    for (const name of PROGRAMS) {
      const pdb = parsePdb(file("x64", `${name}.pdb`));
      expect(pdb.machine).toBe(0x8664);
      expect(pdb.frameData).toEqual([]);
      expect(pdb.fpo).toEqual([]);
      expect(pdb.sections?.map((s) => s.name)).toEqual([".text", ".rdata", ".data", ".pdata"]);
    }
  });

  it("the info stream GUID and the DBI age equal the image's RSDS record", () => {
    for (const target of ["x86-fpo", "x86-fp", "x64"]) {
      for (const name of PROGRAMS) {
        const pdb = parsePdb(file(target, `${name}.pdb`));
        const cv = rsds(file(target, `${name}.exe`));
        const v = le(cv.guid);
        const h = (n: number, w: number): string => n.toString(16).toUpperCase().padStart(w, "0");
        const expected = h(v.getUint32(0, true), 8) + h(v.getUint16(4, true), 4) + h(v.getUint16(6, true), 4) + Array.from(cv.guid.subarray(8), (b) => h(b, 2)).join("");
        expect(pdb.info.guid).toBe(expected);
        expect(pdb.dbiAge).toBe(cv.age);
        expect(pdb.info.age).toBe(cv.age);
        expect(pdb.info.debugId).toBe(expected + cv.age.toString(16));
      }
    }
    const pdb = parsePdb(file("x86-fpo", "recursion-callbacks.pdb"));
    expect(pdb.info).toEqual({
      version: 20000404,
      signature: 643939997,
      age: 1,
      guid: "2661BE9D7347A0524C4C44205044422E", // llvm-pdbutil: {2661BE9D-7347-A052-4C4C-44205044422E}
      debugId: "2661BE9D7347A0524C4C44205044422E1",
    });
    expect(parsePdb(file("x64", "recursion-callbacks.pdb")).info.guid).toBe("519E9BC3FFE0F1FF4C4C44205044422E");
  });

  it("x86-fpo recursion-callbacks symbols: procedures with sizes, probe publics, no data publics", () => {
    const syms = parsePdb(file("x86-fpo", "recursion-callbacks.pdb")).symbols();
    const by = (name: string) => syms.find((s) => s.name === name);
    expect(by("entry")).toMatchObject({ name: "entry", rva: 0x1240, size: 150, kind: "procedure" });
    // Its source lines from the module's line table (llvm-pdbutil-14 dump --l: 143 at 0x240, 144 at 0x241, ...).
    expect(by("entry")!.lines!.slice(0, 2)).toEqual([
      { rva: 0x1240n, size: 1n, line: 143, file: "/stackwalk-emu/vectors/programs/c/recursion-callbacks.c" },
      { rva: 0x1241n, size: 13n, line: 144, file: "/stackwalk-emu/vectors/programs/c/recursion-callbacks.c" },
    ]);
    expect(by("tree_sum")).toMatchObject({ name: "tree_sum", rva: 0x1070, size: 56, kind: "procedure" });
    expect(by("ping")).toMatchObject({ name: "ping", rva: 0x10b0, size: 32, kind: "procedure" });
    // Two entries at 0x0b0 (70 and 71): the first is the line of that address, the last that of the bytes after it, as llvm-symbolizer reads them.
    expect(by("ping")!.lines!.slice(0, 3).map((l) => [l.rva, l.size, l.line])).toEqual([
      [0x10b0n, 1n, 70],
      [0x10b1n, 7n, 71],
      [0x10b8n, 0x11n, 73],
    ]);
    expect(by("pong")).toMatchObject({ name: "pong", rva: 0x10d0, size: 35, kind: "procedure" });
    expect(by("std_weigh")).toMatchObject({ name: "std_weigh", rva: 0x11a0, size: 37, kind: "procedure" });
    // `_entry` (S_PUB32 0001:0576) shares its RVA with the procedure and is merged away.
    expect(by("_entry")).toBeUndefined();
    expect(by("_std_weigh@12")).toBeUndefined();
    // Both probe names are publics at 0001:0736 (hand-written assembly has no S_GPROC32).
    expect(syms.filter((s) => s.rva === 0x12e0)).toEqual([
      { name: "__alloca_probe", rva: 0x12e0, kind: "public" },
      { name: "__chkstk", rva: 0x12e0, kind: "public" },
    ]);
    // `_g_sink` is a data public (flags none) in .data.
    expect(by("_g_sink")).toBeUndefined();
    expect(syms.length).toBe(18);
    expect(syms.map((s) => s.rva)).toEqual([...syms.map((s) => s.rva)].sort((a, b) => a - b));
  });

  it("x64 recursion-callbacks symbols", () => {
    const syms = parsePdb(file("x64", "recursion-callbacks.pdb")).symbols();
    expect(syms.find((s) => s.rva === 0x1280)).toMatchObject({ name: "entry", rva: 0x1280, size: 157, kind: "procedure" });
    expect(syms.filter((s) => s.rva === 0x1280).length).toBe(1);
    expect(syms.find((s) => s.name === "__chkstk")).toEqual({ name: "__chkstk", rva: 0x1320, kind: "public" });
  });

  it("reads S_LPROC32 like S_GPROC32", () => {
    // Turn `entry` (module stream 12, offset 2604) into a local procedure in place.
    const bytes = file("x86-fpo", "recursion-callbacks.pdb");
    const l = layout(bytes);
    const kindAt = l.fileOffset(12, 2604 + 2);
    expect(le(bytes).getUint16(kindAt, true)).toBe(0x1110);
    le(bytes).setUint16(kindAt, 0x110f, true);
    const syms = parsePdb(bytes).symbols();
    expect(syms.find((s) => s.name === "entry")).toMatchObject({ name: "entry", rva: 0x1240, size: 150, kind: "procedure" });
  });
});

describe("indexSymbols: the CodeView symbol records (x86-fpo.md §4.7)", () => {
  /** A record: u16 length (of what follows it), u16 kind, body. */
  const record = (kind: number, body: number[]): number[] => {
    const length = body.length + 2;
    return [length & 0xff, length >> 8, kind & 0xff, kind >> 8, ...body];
  };
  const u16 = (v: number): number[] => [v & 0xff, v >> 8];
  const u32 = (v: number): number[] => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >>> 24];
  const name = (text: string): number[] => [...new TextEncoder().encode(text), 0];
  /** A procedure: parent, end, next, then its length, debug start and end, type, offset, segment, flags, name. */
  const procedure = (kind: number, size: number, offset: number, text: string): number[] =>
    record(kind, [...u32(0), ...u32(0), ...u32(0), ...u32(size), ...u32(0), ...u32(0), ...u32(0), ...u32(offset), ...u16(1), 0, ...name(text)]);
  const publicRecord = (flags: number, offset: number, text: string): number[] => record(0x110e, [...u32(flags), ...u32(offset), ...u16(1), ...name(text)]);
  const index = (bytes: number[], start = 0, end = bytes.length): SymbolRows => {
    const rows = new SymbolRows();
    indexSymbols(new Uint8Array(bytes), start, end, 7, 2, rows);
    return rows;
  };

  it("a row for each public and each of the six procedure kinds, in record order; every other record skipped", () => {
    const kinds = [0x110f, 0x1110, 0x1146, 0x1147, 0x1155, 0x1156];
    const bytes = [
      ...record(0x1111 /* S_REGREL32 */, [1, 2, 3, 4, 5, 6]),
      ...publicRecord(2, 0x40, "pub"),
      ...kinds.flatMap((kind, i) => [...procedure(kind, 0x10 + i, 0x100 * i, `p${i}`), ...record(0x0006 /* S_END */, [])]),
      ...record(0x113c /* S_COMPILE3 */, [9, 9, 9]),
    ];
    const rows = index(bytes);
    expect(rows.kind).toEqual([0, 1, 1, 1, 1, 1, 1]);
    expect(rows.size).toEqual([0, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15]);
    expect(rows.offset).toEqual([0x40, 0, 0x100, 0x200, 0x300, 0x400, 0x500]);
    expect(rows.flags).toEqual([2, 0, 0, 0, 0, 0, 0]);
    expect(rows.stream.every((s) => s === 7) && rows.module.every((m) => m === 2)).toBe(true);
    const text = (i: number): string => new TextDecoder().decode(new Uint8Array(bytes.slice(rows.nameAt[i]!, rows.nameEnd[i]! - 1)));
    expect(Array.from({ length: rows.length }, (_, i) => text(i))).toEqual(["pub", "p0", "p1", "p2", "p3", "p4", "p5"]);
  });

  it("a damaged record is an InputError at its own offset", () => {
    const good = record(0x0006, []);
    // A length too short for a kind.
    let e = inputError(() => index([...good, 1, 0, 0x06, 0]));
    expect([e.code, e.offset, e.message]).toEqual(["bad-value", 4, "offset 0x4: symbol record length 1 is too short for a kind"]);
    // A record running past the end of the symbols, though not past the bytes.
    e = inputError(() => index([...good, ...record(0x1111, [1, 2, 3, 4]), 0, 0], 0, 10));
    expect([e.code, e.offset]).toEqual(["truncated", 4]);
    expect(e.message).toMatch(/runs past the end of the symbols at 0xa$/);
    // The last record cut short after its length, and in the middle of its length.
    e = inputError(() => index([...good, 4, 0, 0x11]));
    expect([e.code, e.offset]).toEqual(["truncated", 4]);
    e = inputError(() => index([...good, 4]));
    expect([e.code, e.offset]).toEqual(["truncated", 4]);
    // Symbols said to end past the bytes: the kind is missing.
    e = inputError(() => index([...good, 4, 0, 0x11], 0, 13));
    expect([e.code, e.offset]).toEqual(["truncated", 6]);
    // A public or procedure too short for its fields.
    expect(inputError(() => index(record(0x110e, [1, 2, 3]))).code).toBe("truncated");
    expect(inputError(() => index(record(0x1110, u32(0)))).code).toBe("truncated");
  });
});

describe("parsePdb read by position (a ByteSource)", () => {
  /** A source over `bytes` that notes every block it gives out, and the bytes. */
  function counting(bytes: Uint8Array, blockSize: number): { source: ByteSource; blocks: Set<number>; read: () => number } {
    const inner = bytesSource(bytes);
    const blocks = new Set<number>();
    let read = 0;
    const note = (offset: number, length: number): void => {
      read += length;
      for (let b = Math.floor(offset / blockSize); b * blockSize < offset + length; b++) blocks.add(b);
    };
    return {
      source: {
        size: inner.size,
        read: (offset, length) => {
          note(offset, length);
          return inner.read(offset, length);
        },
        readInto: (offset, into) => {
          note(offset, into.length);
          return inner.readInto!(offset, into);
        },
      },
      blocks,
      read: () => read,
    };
  }

  const cases = [
    ["x86-fpo recursion-callbacks", () => file("x86-fpo", "recursion-callbacks.pdb")],
    ["x64 inline-deep (inline sites: the IPI stream is read)", () => new Uint8Array(readFileSync(fileURLToPath(new URL("../fixtures/pdb-inline/x64/inline-deep.pdb", import.meta.url))))],
  ] as const;
  for (const [name, load] of cases) {
    it(`${name}: the same PDB as from its bytes, without a byte of the type stream (TPI)`, () => {
      const bytes = load();
      const whole = parsePdb(bytes);
      const l = layout(bytes);
      const { source, blocks, read } = counting(bytes, l.bs);
      const pdb = parsePdb(source);
      expect([pdb.info, pdb.fpo, pdb.frameData, pdb.sections]).toEqual([whole.info, whole.fpo, whole.frameData, whole.sections]);
      // Each symbol, its lines (read again when asked for) and the inline sites at each of its bytes.
      const seen = (p: Pdb): unknown[] =>
        p.symbols().map((s) => [s.name, s.rva, s.size, s.kind, s.lines, Array.from({ length: s.inlines === undefined ? 0 : (s.size ?? 0) }, (_, k) => s.inlines!.at(BigInt(s.rva + k)))]);
      const symbols = seen(pdb);
      expect(symbols).toEqual(seen(whole));
      expect(pdb.symbols().some((s) => s.lines !== undefined && s.lines.length > 0)).toBe(true);
      // The type stream's blocks, from its directory entries (test/support/msf.ts).
      const tpi = l.blockEntryAt[2]!.map((at) => le(bytes).getUint32(at, true));
      expect(tpi.length).toBeGreaterThan(0);
      expect(tpi.filter((b) => blocks.has(b))).toEqual([]);
      expect(read()).toBeLessThan(bytes.byteLength - tpi.length * l.bs);
    });

    it(`${name}: a lookup by RVA makes the one symbol it returns, reading its name and nothing else`, () => {
      const bytes = load();
      const list = parsePdb(bytes).symbols();
      const { source, read } = counting(bytes, layout(bytes).bs);
      const index = parsePdb(source).symbolIndex();
      expect(index.count).toBe(list.length);
      const key = (s: PdbSymbol | undefined): unknown => s && [s.name, s.rva, s.size, s.kind];
      // At every address up to past the last symbol, the answer of a search of the whole list.
      const last = list.at(-1)!;
      let k = -1;
      for (let rva = 0; rva < last.rva + (last.size ?? 0) + 64; rva++) {
        while (k + 1 < list.length && list[k + 1]!.rva <= rva) k++;
        const below = list[k];
        const want = below === undefined || (below.size !== undefined && rva - below.rva >= below.size) ? undefined : below;
        const before = read();
        const got = index.at(rva);
        expect(key(got)).toEqual(key(want));
        // A symbol made for the first time reads its name (up to the record's end) from the file.
        expect(read() - before).toBeLessThanOrEqual(got === undefined ? 0 : got.name.length + 4);
      }
      // Its lines and inline sites are read when asked for, and are those of the whole list.
      const procedure = index.at(list.find((s) => s.kind === "procedure" && (s.size ?? 0) > 0)!.rva)!;
      const before = read();
      const lines = procedure.lines;
      expect(read()).toBeGreaterThan(before);
      expect(lines).toEqual(list.find((s) => s.rva === procedure.rva && s.kind === "procedure")!.lines);
    });
  }
});

describe("findFrameData (x86-fpo.md §2.2)", () => {
  const fd = parsePdb(file("x86-fpo", "recursion-callbacks.pdb")).frameData;
  it("returns the innermost record containing the RVA", () => {
    expect(findFrameData(fd, 0x1160)?.rvaStart).toBe(0x1160);
    expect(findFrameData(fd, 0x1162)?.rvaStart).toBe(0x1162);
    expect(findFrameData(fd, 0x1190)?.rvaStart).toBe(0x1163);
    expect(findFrameData(fd, 0x119a)?.rvaStart).toBe(0x1163);
  });
  it("returns nothing in padding between functions and outside the table", () => {
    expect(findFrameData(fd, 0x10f3)).toBeUndefined();
    expect(findFrameData(fd, 0x0fff)).toBeUndefined();
    expect(findFrameData(fd, 0x12d6)).toBeUndefined();
  });
  it("walks back past a nested record that ends early (MSVC shape)", () => {
    const rec = (rvaStart: number, codeSize: number): FrameData => ({
      rvaStart, codeSize, localSize: 0, paramsSize: 0, maxStackSize: 0, frameFunc: 0,
      prologSize: 0, savedRegsSize: 0, flags: 0, hasSEH: false, hasEH: false, isFunctionStart: false,
    });
    const table = [rec(0x42ae, 0x18), rec(0x42af, 0x14)];
    expect(findFrameData(table, 0x42b0)?.rvaStart).toBe(0x42af);
    expect(findFrameData(table, 0x42c4)?.rvaStart).toBe(0x42ae);
  });
});

describe("decodeFrameData / encodeFrameData", () => {
  it("decodes the spec's sample record (x86-fpo.md §4.4) and round-trips", () => {
    const hexBytes = "00100000 10000000 00000000 08000000 00000000 02000000 0000 0000 04000000".replaceAll(" ", "");
    const bytes = Uint8Array.from(hexBytes.match(/../g)!, (h) => parseInt(h, 16));
    const [r] = decodeFrameData(bytes);
    expect(r).toEqual({
      rvaStart: 0x1000, codeSize: 16, localSize: 0, paramsSize: 8, maxStackSize: 0, frameFunc: 2,
      prologSize: 0, savedRegsSize: 0, flags: 4, hasSEH: false, hasEH: false, isFunctionStart: true,
    });
    expect(encodeFrameData([r!])).toEqual(bytes);
  });
  it("names the offset of an incomplete last record", () => {
    const e = inputError(() => decodeFrameData(new Uint8Array(70), 0x1000));
    expect(e.code).toBe("truncated");
    expect(e.offset).toBe(0x1040);
    expect(e.message).toMatch(/^offset 0x1040: FrameData stream is 70 bytes, not a multiple of 32/);
  });
});

// ---- synthetic PDBs built from a fixture's streams ----

describe("parsePdb on rewritten PDBs", () => {
  const original = file("x86-fpo", "recursion-callbacks.pdb");

  it("reads a re-packed MSF with 512-byte blocks identically", () => {
    const a = parsePdb(original);
    const b = parsePdb(writeMsf(streamsOf(original)));
    expect(b.blockSize).toBe(512);
    expect(b.frameData).toEqual(a.frameData);
    expect(b.info).toEqual(a.info);
    expect(b.symbols()).toEqual(a.symbols());
  });

  it("without the section header stream, converts with a PE section table", () => {
    const streams = streamsOf(original);
    const dbi = streams[3]!;
    le(dbi).setUint16(optionalHeaderAt(dbi) + 2 * 5, 0xffff, true);
    const pdb = parsePdb(writeMsf(streams));
    expect(pdb.sections).toBeUndefined();
    // Without a section table the symbols cannot be placed: a typed error naming the DBI stream.
    const missing = inputError(() => pdb.symbols());
    expect(missing.code).toBe("missing-field");
    expect(missing.offset).toBeLessThan(writeMsf(streams).length);
    expect(missing.message).toMatch(/no section header stream/);
    const pe = [
      { virtualAddress: 0x1000, characteristics: 0x60000020 },
      { virtualAddress: 0x2000, characteristics: 0x40000040 },
      { virtualAddress: 0x3000, characteristics: 0xc0000040 },
    ];
    expect(pdb.symbols(pe)).toEqual(parsePdb(original).symbols());
    // Without characteristics a public cannot be told to be data, so `_g_sink` (0003:0020) stays.
    const plain = pdb.symbols(pe.map(({ virtualAddress }) => ({ virtualAddress })));
    expect(plain.find((s) => s.name === "_g_sink")).toEqual({ name: "_g_sink", rva: 0x3014, kind: "public" });
  });

  it("detects OMAP and maps symbol addresses through OmapFromSrc", () => {
    const streams = streamsOf(original);
    const dbi = streams[3]!;
    const opt = optionalHeaderAt(dbi);
    const omap = (pairs: number[][]): Uint8Array => {
      const out = new Uint8Array(pairs.length * 8);
      pairs.forEach(([a, b], i) => {
        le(out).setUint32(i * 8, a!, true);
        le(out).setUint32(i * 8 + 4, b!, true);
      });
      return out;
    };
    const n = streams.length;
    streams.push(omap([[0x1200, 0x6000], [0x1000, 0x5000], [0x1100, 0]])); // from src (unsorted on purpose)
    streams.push(omap([[0x5000, 0x1000]])); // to src
    streams.push(streams[le(dbi).getUint16(opt + 10, true)]!); // original section headers
    le(dbi).setUint16(opt + 2 * 4, n, true);
    le(dbi).setUint16(opt + 2 * 3, n + 1, true);
    le(dbi).setUint16(opt + 2 * 10, n + 2, true);
    const pdb = parsePdb(writeMsf(streams));
    expect(pdb.omapFromSrc).toEqual([
      { rva: 0x1000, rvaTo: 0x5000 },
      { rva: 0x1100, rvaTo: 0 },
      { rva: 0x1200, rvaTo: 0x6000 },
    ]);
    expect(pdb.omapToSrc).toEqual([{ rva: 0x5000, rvaTo: 0x1000 }]);
    expect(pdb.originalSections?.length).toBe(3);
    const syms = pdb.symbols();
    expect(syms.find((s) => s.name === "tree_sum")?.rva).toBe(0x5070);
    expect(syms.find((s) => s.name === "entry")?.rva).toBe(0x6040);
    expect(syms.find((s) => s.name === "dispatch")).toBeUndefined(); // 0x1100 maps to 0: eliminated
  });

  it("debugId uses the DBI age in lower-case hex; info.age stays the info stream's", () => {
    const streams = streamsOf(original);
    le(streams[3]!).setUint32(8, 0x1a, true);
    const pdb = parsePdb(writeMsf(streams));
    expect(pdb.info.age).toBe(1);
    expect(pdb.dbiAge).toBe(0x1a);
    expect(pdb.info.debugId).toBe("2661BE9D7347A0524C4C44205044422E1a");
  });

  it("omapTranslate", () => {
    const t = [
      { rva: 0x1000, rvaTo: 0x5000 },
      { rva: 0x1100, rvaTo: 0 },
    ];
    expect(omapTranslate(t, 0xfff)).toBeUndefined();
    expect(omapTranslate(t, 0x1010)).toBe(0x5010);
    expect(omapTranslate(t, 0x1100)).toBeUndefined();
  });

  it("reads a PDB with an old FPO_DATA stream in slot 0", () => {
    const streams = streamsOf(original);
    const dbi = streams[3]!;
    const fpo = new Uint8Array(32);
    // Two FPO_DATA records, out of order: RVA 0x1070 then 0x1000; attribute word 0x1205.
    le(fpo).setUint32(0, 0x1070, true);
    le(fpo).setUint32(4, 56, true);
    le(fpo).setUint16(14, 0x1205, true);
    le(fpo).setUint32(16, 0x1000, true);
    le(fpo).setUint32(20, 12, true);
    streams.push(fpo);
    le(dbi).setUint16(optionalHeaderAt(dbi), streams.length - 1, true);
    const pdb = parsePdb(writeMsf(streams));
    expect(pdb.fpo.map((f) => f.ulOffStart)).toEqual([0x1000, 0x1070]);
    expect(pdb.fpo[1]).toMatchObject({ cbProlog: 5, cbRegs: 2, fHasSEH: false, fUseBP: true });
  });
});

// ---- bad input ----

describe("parsePdb rejects malformed PDBs with InputError naming the file offset", () => {
  const original = file("x86-fpo", "noreturn-longjmp.pdb");
  const copy = (): Uint8Array => original.slice();
  const l = layout(original);

  it("bad magic at offset 0", () => {
    expect(l.bs).toBe(4096);
    const b = copy();
    b[0] = 0x6d;
    const e = inputError(() => parsePdb(b));
    expect(e.code).toBe("bad-magic");
    expect(e.offset).toBe(0);
    expect(e.message).toMatch(/^offset 0x0: not an MSF 7.00 file/);
    expect(inputError(() => parsePdb(new TextEncoder().encode("Microsoft C/C++ program database 2.00\r\n\x1aJG\0\0"))).code).toBe("unsupported");
    expect(inputError(() => parsePdb(new Uint8Array(0))).code).toBe("truncated");
  });

  it("block size 3000 at offset 32", () => {
    const b = copy();
    le(b).setUint32(32, 3000, true);
    const e = inputError(() => parsePdb(b));
    expect(e.code).toBe("bad-value");
    expect(e.offset).toBe(32);
    expect(e.message).toBe("offset 0x20: BlockSize 3000 is not a power of two from 512 to 65536");
  });

  it("a directory block index beyond the file, at its block-map entry", () => {
    const b = copy();
    le(b).setUint32(l.mapAt, 0x4000, true);
    const e = inputError(() => parsePdb(b));
    expect(e.offset).toBe(l.mapAt);
    expect(e.message).toBe(`offset 0x${l.mapAt.toString(16)}: directory block 0: block 16384 is beyond the file's ${original.length / 4096} blocks`);
  });

  it("a block map address beyond the file", () => {
    const b = copy();
    le(b).setUint32(52, 0xffffff, true);
    expect(inputError(() => parsePdb(b)).offset).toBe(52);
  });

  it("a stream block used twice, and block 0, at the directory entry", () => {
    const b = copy();
    const at = l.blockEntryAt[11]![0]!;
    le(b).setUint32(at, le(b).getUint32(l.blockEntryAt[10]![0]!, true), true);
    const e = inputError(() => parsePdb(b));
    expect(e.offset).toBe(at);
    expect(e.message).toMatch(/stream directory \+0x[0-9a-f]+: stream 11 block 0: block \d+ is referenced twice$/);
    le(b).setUint32(at, 0, true);
    expect(inputError(() => parsePdb(b)).message).toMatch(/stream 11 block 0: block 0 is block 0, the superblock$/);
  });

  it("a stream size too large for the directory fails before allocating", () => {
    const b = copy();
    le(b).setUint32(l.sizeAt(11), 0x7fffffff, true);
    const e = inputError(() => parsePdb(b));
    expect(e.code).toBe("truncated");
    expect(e.message).toMatch(/block list of stream 11/);
    const c = copy();
    le(c).setUint32(l.dirAt, 0x3fffffff, true);
    expect(inputError(() => parsePdb(c)).message).toMatch(/NumStreams 1073741823 does not fit/);
  });

  it("a truncated DBI header", () => {
    const b = copy();
    le(b).setUint32(l.sizeAt(3), 40, true);
    const e = inputError(() => parsePdb(b));
    expect(e.code).toBe("truncated");
    expect(e.offset).toBe(l.fileOffset(3, 0));
    expect(e.message).toMatch(/DBI stream \(stream 3\) \+0x0: DBI header: needs 64 byte/);
  });

  it("a FrameData stream whose length is not a multiple of 32", () => {
    const b = copy();
    expect(l.sizes[11]).toBe(448);
    le(b).setUint32(l.sizeAt(11), 449, true);
    const e = inputError(() => parsePdb(b));
    expect(e.code).toBe("truncated");
    expect(e.offset).toBe(l.fileOffset(11, 448));
    expect(e.message).toMatch(/NewFPO stream \(stream 11\) \+0x1c0: FrameData stream is 449 bytes, not a multiple of 32/);
  });

  it("a /names offset out of range, at the record's FrameFunc field", () => {
    const b = copy();
    const at = l.fileOffset(11, 3 * 32 + 20);
    le(b).setUint32(at, 0xffff, true);
    const e = inputError(() => parsePdb(b));
    expect(e.code).toBe("bad-value");
    expect(e.offset).toBe(at);
    expect(e.message).toMatch(/FrameFunc 65535 is outside the \d+-byte \/names buffer/);
  });

  it("every sampled prefix throws InputError", () => {
    const lengths = new Set<number>();
    for (let n = 0; n < original.length; n += 97) lengths.add(n);
    for (let n = 0; n < 64; n++) lengths.add(n);
    for (let n = original.length - 64; n < original.length; n++) lengths.add(n);
    for (const n of lengths) inputError(() => parsePdb(original.subarray(0, n)));
  });

  it("every stream cut short (through its directory size) throws InputError or parses", () => {
    let failures = 0;
    for (let i = 1; i < l.n; i++) {
      const size = l.sizes[i]!;
      for (let cut = 1; cut < size && cut <= l.bs; cut += 7) {
        const b = copy();
        le(b).setUint32(l.sizeAt(i), cut, true);
        try {
          parsePdb(b).symbols();
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
          failures++;
        }
      }
    }
    expect(failures).toBeGreaterThan(0);
  });

  it("random byte corruption of the directory and small streams throws only InputError", () => {
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const targets = [l.dirAt, ...[1, 3, 8, 11, 12, 14].map((i) => l.fileOffset(i, 0))];
    for (let iter = 0; iter < 400; iter++) {
      const b = copy();
      const base = targets[iter % targets.length]!;
      for (let k = 0; k < 4; k++) b[base + rand(256)] = rand(256);
      try {
        parsePdb(b).symbols();
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
      }
    }
  });
});
