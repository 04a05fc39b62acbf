/**
 * INLINE and INLINE_ORIGIN records (minidump.md §7) as Breakpad's SymbolParseHelper reads them,
 * in the current form and the older one (the forms of google/breakpad's linux_inline symbols,
 * test/fixtures/real-dumps/breakpad-linux-inline), through the pattern reader and the strict
 * one, and the inline sites a FUNC's records give.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { breakpadSymbols, BreakpadSymParser, parseBreakpadSym, type BreakpadSymbols } from "../../src/formats/breakpad-sym.js";
import { inlineChain } from "../../src/model/inline.js";
import { FIXTURES } from "../support/fixtures.js";

const DIR = join(FIXTURES, "real-dumps/breakpad-linux-inline");
const CURRENT = readFileSync(join(DIR, "symbols/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.sym"));
const OLDER = readFileSync(join(DIR, "linux_inline.old-format.sym"));

const HEAD = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 m\nFILE 0 a.c\nFILE 1 b.h\n";

/** The chain at rva of the first FUNC of `sym`: each inline frame's function, file and line, then the physical frame's file and line. */
function chainAt(sym: BreakpadSymbols, rva: number): string[] {
  const func = breakpadSymbols(sym).find((s) => s.kind === "func" && BigInt(rva) >= s.rva && BigInt(rva) - s.rva < s.size!)!;
  const line = func.lines?.find((l) => BigInt(rva) >= l.rva && BigInt(rva) - l.rva < l.size);
  const chain = inlineChain(func.inlines?.at(BigInt(rva)) ?? [], BigInt(rva), line);
  if (chain === undefined) return [];
  return [...chain.frames.map((f) => `${f.function} ${f.file ?? "-"}:${f.line ?? "-"}`), `${func.name} ${chain.file ?? "-"}:${chain.line}`];
}

describe("INLINE and INLINE_ORIGIN records", () => {
  it("reads linux_inline.sym's current-form records", () => {
    const sym = parseBreakpadSym(CURRENT);
    expect(sym.inlineOrigins).toEqual([
      { id: 0, name: "bar()" },
      { id: 1, name: "foo()" },
      { id: 2, name: "func()" },
    ]);
    expect(sym.functions[0]!.inlines).toEqual([
      { depth: 0, callLine: 42, callFile: 1, origin: 1, ranges: [[0x15b45, 0x6b1]] },
      { depth: 1, callLine: 39, callFile: 2, origin: 0, ranges: [[0x15b72, 0x684]] },
      { depth: 2, callLine: 32, callFile: 3, origin: 2, ranges: [[0x15b83, 0x673]] },
    ]);
    expect([sym.inlineCount, sym.inlineOriginCount, sym.droppedInlineCount]).toEqual([3, 3, 0]);
    expect(chainAt(sym, 0x161b6)).toEqual(["func() linux_inline.cpp:27", "bar() c.cpp:32", "foo() b.cpp:39", "main a.cpp:42"]);
  });

  it("reads linux_inline.old-format.sym's older-form records: no call file, the line record's file shown", () => {
    const sym = parseBreakpadSym(OLDER);
    expect(sym.inlineOrigins).toEqual([
      { id: 0, file: 0, name: "bar()" },
      { id: 1, file: 0, name: "foo()" },
      { id: 2, file: 0, name: "func()" },
    ]);
    expect(sym.functions[0]!.inlines).toEqual([
      { depth: 0, callLine: 42, origin: 1, ranges: [[0x15b45, 0x6b1]] },
      { depth: 1, callLine: 39, origin: 0, ranges: [[0x15b72, 0x684]] },
      { depth: 2, callLine: 32, origin: 2, ranges: [[0x15b83, 0x673]] },
    ]);
    expect(chainAt(sym, 0x161b6)).toEqual(["func() linux_inline.cpp:27", "bar() linux_inline.cpp:32", "foo() linux_inline.cpp:39", "main linux_inline.cpp:42"]);
    // Between the sites: only the outer ones cover the address.
    expect(chainAt(sym, 0x15b50)).toEqual(["foo() linux_inline.cpp:36", "main linux_inline.cpp:42"]);
    expect(chainAt(sym, 0x15b30)).toEqual([]);
  });

  it("keeps several ranges per record, nests equal ranges in file order, leaves out a record deeper than its parent", () => {
    const text = `${HEAD}INLINE_ORIGIN 0 outer\nINLINE_ORIGIN 1 inner\nINLINE_ORIGIN 2 gone\nFUNC 100 100 0 f\nINLINE 0 5 0 0 110 10 140 10\nINLINE 0 6 1 1 140 10\nINLINE 2 7 0 2 142 2\n140 10 9 1\n`;
    const sym = parseBreakpadSym(text);
    expect(chainAt(sym, 0x115)).toEqual(["outer -:-", "f a.c:5"]);
    expect(chainAt(sym, 0x141)).toEqual(["inner b.h:9", "outer b.h:6", "f a.c:5"]);
    expect(sym.functions[0]!.inlines).toHaveLength(3);
  });

  it("names an origin without a record <name omitted>, and takes the line record's file for a call file of -1 or an unknown one", () => {
    const text = `${HEAD}FUNC 100 100 0 f\nINLINE 0 5 -1 7 100 20\nINLINE 1 6 9 7 100 10\n100 10 3 1\n`;
    expect(chainAt(parseBreakpadSym(text), 0x104)).toEqual(["<name omitted> b.h:3", "<name omitted> b.h:6", "f b.h:5"]);
  });

  it("leaves out and counts what Breakpad refuses, without making the file malformed", () => {
    const text = `${HEAD}INLINE 0 1 0 100 10\nINLINE_ORIGIN x name\nINLINE_ORIGIN 3\nFUNC 100 100 0 f\nINLINE 0 1 0\nINLINE -1 1 0 100 10\nINLINE 0 1 0 10g 10\nINLINE 0 1 0 0 100 10\nPUBLIC 300 0 p\nINLINE 0 1 0 0 300 10\n`;
    const sym = parseBreakpadSym(text);
    expect([sym.inlineCount, sym.inlineOriginCount, sym.droppedInlineCount, sym.malformedCount]).toEqual([6, 2, 7, 0]);
    expect(sym.functions[0]!.inlines).toEqual([{ depth: 0, callLine: 1, callFile: 0, origin: 0, ranges: [[0x100, 0x10]] }]);
  });

  it("reads an origin name that starts with digits as the current form, and a -1 file as the older one", () => {
    const sym = parseBreakpadSym(`${HEAD}INLINE_ORIGIN 0 2x name\nINLINE_ORIGIN 1 -1 artificial thing\n`);
    expect(sym.inlineOrigins).toEqual([
      { id: 0, name: "2x name" },
      { id: 1, file: -1, name: "artificial thing" },
    ]);
  });

  it("reads the same records through the strict reader (a line too long for the pattern window) and in chunks", () => {
    const ranges = Array.from({ length: 12000 }, (_, i) => `${(0x1000 + i * 4).toString(16)} 2`).join(" ");
    const text = `${HEAD}INLINE_ORIGIN 0 g\nFUNC 1000 10000 0 f\nINLINE 0 12 1 0 ${ranges}\n`;
    const sym = parseBreakpadSym(text);
    expect(sym.functions[0]!.inlines![0]!.ranges).toHaveLength(12000);
    expect(chainAt(sym, 0x1000 + 11999 * 4 + 1)).toEqual(["g -:-", "f b.h:12"]);
    expect(chainAt(sym, 0x1000 + 11999 * 4 + 2)).toEqual([]);
    const bytes = new TextEncoder().encode(text);
    const parser = new BreakpadSymParser();
    for (let i = 0; i < bytes.length; i += 7) parser.push(bytes.subarray(i, i + 7));
    const chunked = parser.finish();
    expect(chunked.functions[0]!.inlines).toEqual(sym.functions[0]!.inlines);
    expect(chunked.inlineOrigins).toEqual(sym.inlineOrigins);
  });

  it("gives the same sites from records made by hand as from a parse", () => {
    const sym = parseBreakpadSym(CURRENT);
    const plain: BreakpadSymbols = { ...sym, files: sym.files, functions: sym.functions.map((f) => ({ ...f, lines: f.lines, inlines: f.inlines! })), inlineOrigins: sym.inlineOrigins };
    expect(chainAt(plain, 0x161b6)).toEqual(chainAt(sym, 0x161b6));
  });
});

describe("hostile INLINE records", () => {
  it("a range repeated 20,000 times nests at most 256 deep (without the cap, each record would descend through all before it)", () => {
    const text = `${HEAD}FUNC 100 100 0 f\n${"INLINE 0 1 0 0 100 10\n".repeat(20_000)}`;
    const sym = parseBreakpadSym(text);
    const f = breakpadSymbols(sym)[0]!;
    expect(f.inlines!.at(0x105n)).toHaveLength(257);
  });
});
