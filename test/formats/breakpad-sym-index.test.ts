/**
 * A `.sym` file read lazily: one pass builds the index, and a lookup reads only the records it
 * needs. The work is counted, never timed: the bytes a lookup reads again from the file, against
 * the file's size. The index's answers are those of the records as lists (the symbolizer and the
 * STACK CFI table over `breakpadSymbols` and `stackCfi`, which the Breakpad reports test), for
 * files in order and out of it, with empty, repeated and overlapping records; the same for the
 * STACK WIN records as FrameData (against the list made from the records themselves).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cfiTable, rulesAt } from "../../src/arch/cfi.js";
import { breakpadSymbols, parseBreakpadSym, readBreakpadSym, stackWinToFrameData, symTables, type BreakpadSymbols } from "../../src/formats/breakpad-sym.js";
import { cfiIndex } from "../../src/formats/breakpad-sym/cfi-index.js";
import { findFrameData, type FrameData } from "../../src/formats/frame-data.js";
import { outermostContaining } from "../../src/formats/sorted-ranges.js";
import { attachSymbolFile } from "../../src/formats/symbol-file.js";
import { bytesSource, type ByteSource } from "../../src/memory/byte-source.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Module } from "../../src/model/snapshot.js";
import { symbolize } from "../../src/unwind/symbolize.js";
import { inputError } from "../support/input-error.js";

const encoder = new TextEncoder();
const hex = (n: number): string => n.toString(16);

/** A file of `functions` functions (each 0x100 bytes at 0x1000 + k·0x100, with 8 line records, an INLINE record every third, a STACK CFI INIT and two delta rows) and a PUBLIC every tenth. */
function generated(functions: number): string {
  const lines = ["MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libbig.so", "FILE 0 /src/a.c", "FILE 1 /src/b.c", "INLINE_ORIGIN 0 inlined_a", "INLINE_ORIGIN 1 inlined_b"];
  for (let k = 0; k < functions; k++) {
    const at = 0x1000 + k * 0x100;
    lines.push(`FUNC ${hex(at)} f0 0 function_${k}(int, char const*)`);
    if (k % 3 === 0) lines.push(`INLINE 0 ${k % 50} ${k % 2} ${k % 2} ${hex(at + 0x40)} 20`);
    for (let l = 0; l < 8; l++) lines.push(`${hex(at + l * 0x1e)} 1e ${100 + l} ${k % 2}`);
  }
  for (let k = 0; k < functions; k += 10) lines.push(`PUBLIC ${hex(0x1000 + k * 0x100 + 0xf0)} 0 public_${k}`);
  for (let k = 0; k < functions; k++) {
    const at = 0x1000 + k * 0x100;
    lines.push(`STACK CFI INIT ${hex(at)} f0 .cfa: $rsp 8 + .ra: .cfa 8 - ^`, `STACK CFI ${hex(at + 1)} .cfa: $rsp 16 + $rbx: .cfa 16 - ^`, `STACK CFI ${hex(at + 5)} .cfa: $rsp ${32 + (k % 4) * 16} +`);
  }
  return lines.join("\n") + "\n";
}

/** A source over `bytes` that counts what is read from it. */
function counting(bytes: Uint8Array): ByteSource & { bytesRead: number; reads: number } {
  const inner = bytesSource(bytes);
  const source = {
    size: inner.size,
    bytesRead: 0,
    reads: 0,
    read(offset: number, length: number): Uint8Array | undefined {
      source.reads++;
      source.bytesRead += length;
      return inner.read(offset, length);
    },
  };
  return source;
}

/** A module at 0x10000000 that the file is attached to. */
function attached(sym: BreakpadSymbols): Module {
  const target = { modules: [{ name: "libbig.so", base: 0x1000_0000n, size: 0x100_0000n, symbols: [], debugFile: "libbig.so", debugId: sym.module.debugId }] as Module[], memory: new RegionMemory([]) };
  attachSymbolFile(target, { kind: "breakpad", debugFile: sym.module.debugFile, debugId: sym.module.debugId, symbols: sym });
  return target.modules[0]!;
}

describe("a .sym file read by position", () => {
  const text = generated(20_000);
  const bytes = encoder.encode(text);

  it("gives the records a parse of the whole file gives", () => {
    const whole = parseBreakpadSym(bytes);
    const read = readBreakpadSym(bytesSource(bytes));
    expect(read.functions.length).toBe(20_000);
    expect(read.functions[12345]).toEqual(whole.functions[12345]);
    expect(read.functions[12345]!.lines).toEqual(whole.functions[12345]!.lines);
    expect(read.publics).toEqual(whole.publics);
    expect(read.stackCfi.slice(0, 50)).toEqual(whole.stackCfi.slice(0, 50));
  });

  it(`reads the file once to index it (${(bytes.length / 1e6).toFixed(1)} MB), then a few blocks for a frame's symbol, line, inline frames and STACK CFI rules`, () => {
    const source = counting(bytes);
    const sym = readBreakpadSym(source);
    // Each chunk but the last ends at a line end: the line cut by it is read again with the next.
    expect(source.bytesRead).toBeGreaterThanOrEqual(bytes.length);
    expect(source.bytesRead).toBeLessThan(bytes.length + source.reads * 100);
    const module = attached(sym);
    const afterIndex = source.bytesRead;
    // Attaching made no symbol and read no record: the lookups below read what they need.
    expect(source.bytesRead - afterIndex).toBe(0);
    const rva = 0x1000 + 15_000 * 0x100 + 0x45;
    const match = symbolize(module, BigInt(rva))!;
    expect(match.symbol.name).toBe("function_15000(int, char const*)");
    expect(match.line).toEqual({ rva: BigInt(0x1000 + 15_000 * 0x100 + 0x3c), size: 0x1en, line: 102, file: "/src/a.c" });
    expect(match.symbol.inlines!.at(BigInt(rva)).map((s) => s.function)).toEqual(["inlined_a"]);
    const cfi = module.unwind!.stackCfiIndex!.at(rva)!;
    expect([cfi.init, ...cfi.deltas]).toEqual([".cfa: $rsp 8 + .ra: .cfa 8 - ^", ".cfa: $rsp 16 + $rbx: .cfa 16 - ^", ".cfa: $rsp 32 +"]);
    // Blocks of 64 KiB around the records asked for: a few of them, whatever the file's size.
    const lookups = source.bytesRead - afterIndex;
    expect(lookups).toBeLessThanOrEqual(4 * 65_536);
    expect(lookups).toBeLessThan(bytes.length / 10);
  });

  it("reads a line longer than a chunk (1 MiB) as a parse of the whole file does", () => {
    const long = `${"x".repeat(1_500_000)}`;
    const file = encoder.encode(`MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libx.so\nFUNC 1000 10 0 ${long}\n1000 10 1 0\nPUBLIC 2000 0 p\n`);
    const read = readBreakpadSym(bytesSource(file));
    expect(read.functions[0]!.name.length).toBe(long.length);
    expect(read).toEqual(parseBreakpadSym(file));
  });
});

/** Every rva from 0 to past the last record, in steps: the lookups of the index and of the lists must agree. */
function probes(max: number, step: number): number[] {
  const out: number[] = [];
  for (let rva = 0; rva <= max; rva += step) out.push(rva);
  return out;
}

describe("the index answers as the lists do", () => {
  // Out of order, zero sizes, repeated addresses, PUBLICs at 0 and under FUNCs, overlapping and
  // empty STACK CFI INIT records, delta rows repeated and out of order, one past a postfix limit.
  const long = Array.from({ length: 70 }, (_, i) => `$r${i}`).join(" ");
  const file = [
    "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libx.so",
    "FILE 3 /src/c.c",
    "FILE 1 /src/a.c",
    "FUNC 3000 100 0 third",
    "3000 10 30 1",
    "3000 20 31 3",
    "3050 0 32 1",
    "FUNC 1000 100 4 first",
    "1000 80 10 1",
    "FUNC 1000 0 0 empty_at_first",
    "FUNC 2000 0 0 empty",
    "FUNC 1800 100 0 second",
    "1800 100 18 9",
    "PUBLIC 0 0 at_zero",
    "PUBLIC 1900 0 under_second",
    "PUBLIC 2100 0 after_second",
    "PUBLIC 2100 0 repeated",
    "PUBLIC 500 0 before_all",
    "STACK CFI INIT 3000 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
    "STACK CFI 3010 .cfa: $rsp 16 +",
    "STACK CFI INIT 1000 80 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
    "STACK CFI 1004 .cfa: $rsp 24 + $rbx: .cfa 16 - ^",
    "STACK CFI 1002 .cfa: $rsp 12 +",
    "STACK CFI 1004 .cfa: $rsp 40 +",
    "STACK CFI INIT 1040 80 .cfa: $rsp 99 + .ra: .cfa 8 - ^",
    "STACK CFI INIT 2000 0 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
    `STACK CFI INIT 2200 40 .cfa: ${long} + + + + .ra: .cfa 8 - ^`,
    `STACK CFI 3020 .cfa: ${long} +`,
    "STACK CFI INIT 2800 40 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
    "",
  ].join("\n");

  for (const [how, sym] of [
    ["a parse of the whole file", parseBreakpadSym(file)],
    ["a read by position", readBreakpadSym(bytesSource(encoder.encode(file)))],
  ] as const) {
    it(`${how}: symbols and line records`, () => {
      const module = attached(sym);
      const listed: Module = { name: "libx.so", base: module.base, size: module.size, symbols: breakpadSymbols({ ...sym }) };
      expect(module.symbolIndex).toBeDefined();
      for (const rva of probes(0x3200, 8)) {
        const r = BigInt(rva);
        expect(symbolize(module, r), `rva ${hex(rva)}`).toEqual(symbolize(listed, r));
      }
      expect(module.symbols).toEqual(listed.symbols);
    });

    it(`${how}: STACK CFI rules`, () => {
      const index = cfiIndex(symTables(sym)!);
      const list = cfiTable(attached(sym).unwind!.stackCfi!);
      for (const rva of probes(0x3200, 2)) expect(rulesAt(index, rva, 8), `rva ${hex(rva)}`).toEqual(rulesAt(list, rva, 8));
      expect(list.at(0x2210)).toBeUndefined();
    });
  }
});

describe("STACK CFI out of address order, as dump_syms writes it from the unwind sections", () => {
  /** One INIT: start, size, and its delta rows' offsets from the start (in the order written). */
  const initArb = fc.record({
    slot: fc.integer({ min: 0, max: 15 }),
    size: fc.oneof(fc.constant(0x40), fc.integer({ min: 0, max: 0x90 })),
    deltas: fc.oneof(
      // The usual: ascending inside the range.
      fc.uniqueArray(fc.integer({ min: 0, max: 0x3f }), { maxLength: 5 }).map((a): (number | "end")[] => a.sort((x, y) => x - y)),
      // Ascending inside the range, with a stray or two outside it ("end": at the range's end).
      fc
        .tuple(
          fc.uniqueArray(fc.integer({ min: 0, max: 0x3f }), { maxLength: 5 }).map((a) => a.sort((x, y) => x - y)),
          fc.array(fc.tuple(fc.oneof(fc.constant<"end">("end"), fc.integer({ min: -0x20, max: -1 }), fc.integer({ min: 0x90, max: 0xc0 })), fc.nat()), { minLength: 1, maxLength: 2 }),
        )
        .map(([rows, strays]) => {
          const out: (number | "end")[] = [...rows];
          for (const [stray, at] of strays) out.splice(at % (out.length + 1), 0, stray);
          return out;
        }),
      // Anything: out of order, repeated, outside the range.
      fc.array(fc.integer({ min: -0x20, max: 0x80 }), { maxLength: 5 }).map((a): (number | "end")[] => a),
    ),
  });

  it("the index, with or without sorting its delta rows, answers at every address as the list of records does", () => {
    fc.assert(
      fc.property(fc.array(initArb, { minLength: 1, maxLength: 8 }), (inits) => {
        const lines = ["MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libx.so"];
        inits.forEach((init, k) => {
          const start = 0x1000 + init.slot * 0x40;
          lines.push(`STACK CFI INIT ${hex(start)} ${hex(init.size)} .cfa: $rsp ${k + 8} + .ra: .cfa 8 - ^`);
          init.deltas.forEach((off, d) => lines.push(`STACK CFI ${hex(Math.max(0, start + (off === "end" ? init.size : off)))} .cfa: $rsp ${16 * (k + 1) + d} +`));
        });
        const file = lines.join("\n") + "\n";
        for (const sym of [parseBreakpadSym(file), readBreakpadSym(bytesSource(encoder.encode(file)))]) {
          const index = cfiIndex(symTables(sym)!);
          const list = cfiTable(sym.stackCfi);
          for (let rva = 0xff0; rva < 0x1000 + 17 * 0x40; rva += 3) expect(rulesAt(index, rva, 8), `rva ${hex(rva)}\n${file}`).toEqual(rulesAt(list, rva, 8));
        }
      }),
      { numRuns: 600 },
    );
  });
});

describe("STACK WIN FrameData looked up by address", () => {
  /** One record: its slot, size, type (4 mostly, some 0) and whether it has a program. */
  const winArb = fc.record({
    slot: fc.integer({ min: 0, max: 40 }),
    size: fc.oneof(fc.constant(0x40), fc.integer({ min: 0, max: 0x120 })),
    type: fc.oneof(fc.constant(4), fc.constant(4), fc.constant(0)),
    program: fc.boolean(),
  });
  const winLine = (w: { slot: number; size: number; type: number; program: boolean }, k: number): string =>
    `STACK WIN ${w.type} ${hex(0x1000 + w.slot * 0x10)} ${hex(w.size)} ${k % 5} 0 ${hex((k % 3) * 4)} ${hex(k % 2 ? 8 : 0)} ${hex(k * 4)} 0 ${w.program ? `1 $T0 $ebp = $eip $T0 4 + ^ = $esp $T0 8 + = $ebp $T0 ^ = $L $T0 .cbSavedRegs - = $P $T0 8 + .cbParams + = ${k}` : "0 1"}`;

  it("finds at every address the record the list of every record finds, one object per record", () => {
    fc.assert(
      fc.property(fc.array(winArb, { minLength: 1, maxLength: 30 }), (wins) => {
        const file = ["MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 x.pdb", ...wins.map(winLine)].join("\n") + "\n";
        for (const sym of [parseBreakpadSym(file), readBreakpadSym(bytesSource(encoder.encode(file)))]) {
          const unwind = attached(sym).unwind!;
          const index = unwind.frameDataIndex!;
          // The list made from the records themselves, not from the parse's tables.
          const list = stackWinToFrameData(sym.stackWin);
          expect(index.count).toBe(list.length);
          const found: FrameData[] = [];
          for (let rva = 0xff0; rva < 0x1000 + 0x2a0 + 0x120; rva += 3) {
            const inner = index.innermost(rva);
            expect(inner, `innermost ${hex(rva)}\n${file}`).toEqual(findFrameData(list, rva));
            expect(index.outermost(rva, 3), `outermost ${hex(rva)}\n${file}`).toEqual(outermostContaining(list, rva, (r) => r.rvaStart, (r) => r.codeSize, 3));
            if (inner !== undefined) found.push(inner);
          }
          // A record found twice is one object, and the one the module's list holds once made.
          const all = unwind.frameData;
          expect(all).toEqual(list);
          for (const record of found) expect(all.includes(record)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("names the line's offset when a FrameData record's line no longer reads as it did (the file changed)", () => {
    const file = encoder.encode(["MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 x.pdb", "STACK WIN 4 1000 20 3 0 8 4 10 0 1 $T0 .raSearch = $eip $T0 ^ =", ""].join("\n"));
    const unwind = attached(readBreakpadSym(bytesSource(file))).unwind!;
    const line = file.indexOf(0x0a) + 1;
    // The file changes under the parse: the prolog size is no longer hex.
    file[line + "STACK WIN 4 1000 20 ".length] = 0x78;
    const err = inputError(() => unwind.frameDataIndex!.innermost(0x1004));
    expect(err.offset).toBe(line);
    expect(err.message).toMatch(/no longer reads as it did/);
  });

  it("reads one record's program from the file for a lookup, not the section's", () => {
    const lines = ["MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 big.pdb"];
    for (let k = 0; k < 40_000; k++) lines.push(`STACK WIN 4 ${hex(0x1000 + k * 0x20)} 20 3 0 8 4 ${hex(k * 4)} 0 1 $T0 $ebp = $eip $T0 4 + ^ = $esp $T0 8 + = $ebp $T0 ^ = $L $T0 .cbSavedRegs - = $P $T0 8 + .cbParams + = ${k}`);
    const bytes = encoder.encode(lines.join("\n") + "\n");
    const source = counting(bytes);
    const unwind = attached(readBreakpadSym(source)).unwind!;
    const afterIndex = source.bytesRead;
    // Attachment leaves the FrameData index to the first walk that looks in the module.
    expect(Object.getOwnPropertyDescriptor(unwind, "frameDataIndex")?.get).toBeDefined();
    const record = unwind.frameDataIndex!.innermost(0x1000 + 31_234 * 0x20 + 5)!;
    expect(Object.getOwnPropertyDescriptor(unwind, "frameDataIndex")?.value).toBeDefined();
    expect(record).toMatchObject({ rvaStart: 0x1000 + 31_234 * 0x20, codeSize: 0x20, localSize: 31_234 * 4, savedRegsSize: 4, paramsSize: 8 });
    expect(record.program).toMatch(/ = 31234$/);
    expect(source.bytesRead - afterIndex).toBeLessThanOrEqual(65_536);
    expect(source.bytesRead - afterIndex).toBeLessThan(bytes.length / 20);
  });
});
