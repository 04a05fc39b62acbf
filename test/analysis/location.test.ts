/**
 * The symbolizer (src/analysis/location.ts) with Breakpad `.sym` symbols (minidump.md §7): FUNC
 * covering the lookup address with its line record, PUBLIC only where no FUNC covers and above
 * the nearest preceding FUNC, module + offset otherwise, nothing outside every module; caller
 * frames looked up at return address − 1 with offsets from the return address itself.
 */
import { describe, expect, it } from "vitest";
import type { Module, ModuleSymbol } from "../../src/model/snapshot.js";
import { breakpadSymbols, parseBreakpadSym } from "../../src/formats/breakpad-sym.js";
import { locate, locateAddress, symbolize } from "../../src/analysis/location.js";
import type { Frame } from "../../src/walk/frame.js";

const BASE = 0x400000n;

/**
 * Module-relative layout:
 *   0x0000 PUBLIC zero        (Breakpad skips PUBLICs at 0)
 *   0x0800 PUBLIC before      (no FUNC below it)
 *   0x1000 FUNC alpha, 0x100 bytes, lines 0x1000+0x10 → 10, 0x1010+0x20 → 11, 0x1030+0x10 → 12 (FILE 9: no FILE record)
 *   0x1050 PUBLIC inner       (inside alpha: a FUNC covers it, never used there)
 *   0x1f00 PUBLIC low         (below beta's start)
 *   0x2000 FUNC beta, 0x10 bytes, no lines
 */
const SYM = `MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 app.pdb
FILE 1 c:\\src\\app.cc
FUNC 1000 100 8 alpha
1000 10 10 1
1010 20 11 1
1030 10 12 9
FUNC 2000 10 0 beta
PUBLIC 0 0 zero
PUBLIC 800 4 before
PUBLIC 1050 0 inner
PUBLIC 1f00 0 low
`;

function moduleFromSym(): Module {
  return { name: "app.exe", base: BASE, size: 0x3000n, symbols: breakpadSymbols(parseBreakpadSym(SYM)) };
}

/** A frame with just what the symbolizer reads. */
function frame(index: number, pc: bigint): Frame {
  return { index, addrPC: pc, addrReturn: 0n, addrFrame: 0n, addrStack: 0n, addrBStore: 0n, params: [], far: false, virtual: false, trust: index === 0 ? "context" : "frame-data", rule: { kind: "custom", text: "" }, registers: {} };
}

describe("symbols from a Breakpad .sym file", () => {
  const m = moduleFromSym();

  it("keeps kinds, parameter sizes and line records with FILE names resolved", () => {
    const alpha = m.symbols.find((s) => s.name === "alpha")!;
    expect(alpha).toMatchObject({ kind: "func", rva: 0x1000n, size: 0x100n, paramSize: 8 });
    expect(alpha.lines).toEqual([
      { rva: 0x1000n, size: 0x10n, line: 10, file: "c:\\src\\app.cc" },
      { rva: 0x1010n, size: 0x20n, line: 11, file: "c:\\src\\app.cc" },
      { rva: 0x1030n, size: 0x10n, line: 12 },
    ]);
    expect(m.symbols.find((s) => s.name === "before")).toEqual({ name: "before", rva: 0x800n, kind: "public", paramSize: 4 });
    expect(m.symbols.map((s) => s.rva)).toEqual([...m.symbols.map((s) => s.rva)].sort((a, b) => (a < b ? -1 : 1)));
  });

  it("FUNC with a line record: function, source line and the offsets from the PC", () => {
    const loc = locate([m], frame(0, BASE + 0x1015n));
    expect(loc.function).toBe("alpha");
    expect(loc.functionOffset).toBe(0x15n);
    expect(loc.moduleOffset).toBe(0x1015n);
    expect(loc.line).toEqual({ rva: 0x1010n, size: 0x20n, line: 11, file: "c:\\src\\app.cc" });
    expect(loc.lineOffset).toBe(5n);
  });

  it("caller frames are looked up at return address − 1, offsets taken from the return address", () => {
    // Return address 0x1010 is the first byte of line 11; the call was on line 10.
    const caller = locate([m], frame(1, BASE + 0x1010n));
    expect(caller.line?.line).toBe(10);
    expect(caller.lineOffset).toBe(0x10n);
    expect(caller.functionOffset).toBe(0x10n);
    // The same address as the context frame's PC is line 11 itself.
    expect(locate([m], frame(0, BASE + 0x1010n)).line?.line).toBe(11);
    // A call as alpha's last instruction returns to alpha's end: still alpha for a caller frame.
    const noReturn = locate([m], frame(1, BASE + 0x1100n));
    expect([noReturn.function, noReturn.functionOffset]).toEqual(["alpha", 0x100n]);
  });

  it("FUNC with no line record covering the address: function + offset only", () => {
    const loc = locate([m], frame(0, BASE + 0x2004n));
    expect([loc.function, loc.functionOffset, loc.line]).toEqual(["beta", 4n, undefined]);
  });

  it("a line record whose FILE number has no FILE record: the line without a file", () => {
    const loc = locate([m], frame(0, BASE + 0x1032n));
    expect(loc.line).toEqual({ rva: 0x1030n, size: 0x10n, line: 12 });
    expect(loc.lineOffset).toBe(2n);
  });

  it("a PUBLIC inside a FUNC that covers the address is not used", () => {
    expect(locate([m], frame(0, BASE + 0x1060n)).function).toBe("alpha");
  });

  it("PUBLIC: used when no FUNC covers the address and it lies above the nearest preceding FUNC", () => {
    // 0x1100 is past alpha's end; the nearest PUBLIC below it, inner (0x1050), starts above alpha.
    const past = locate([m], frame(0, BASE + 0x1100n));
    expect([past.function, past.functionOffset, past.symbol?.kind]).toEqual(["inner", 0xb0n, "public"]);
    // No FUNC below 0x900 at all: the PUBLIC at 0x800 applies.
    expect(locate([m], frame(0, BASE + 0x900n)).function).toBe("before");
  });

  it("PUBLIC below the nearest preceding FUNC's start is not used: module + offset", () => {
    // 0x2050: beta (0x2000) does not cover it; the nearest PUBLIC, low (0x1f00), is below beta's start.
    const loc = locate([m], frame(0, BASE + 0x2050n));
    expect(loc.function).toBeUndefined();
    expect(loc.module).toBe(m);
    expect(loc.moduleOffset).toBe(0x2050n);
    expect(symbolize(m, 0x2050n)).toBeUndefined();
  });

  it("a PUBLIC at address 0 is skipped, as Breakpad skips it", () => {
    expect(symbolize(m, 0x10n)).toBeUndefined();
  });

  it("no module: nothing", () => {
    expect(locateAddress([m], 0x1000n, false)).toEqual({});
    expect(locate([m], frame(2, BASE + 0x3001n))).toEqual({});
    // Return address just past the module's end: the call is inside it.
    expect(locate([m], frame(2, BASE + 0x3000n)).module).toBe(m);
  });
});

describe("symbols without a kind (PDB, vectors)", () => {
  it("keep the last-start-at-or-below rule", () => {
    const symbols: ModuleSymbol[] = [
      { name: "outer", rva: 0x1000n, size: 0x100n },
      { name: "label", rva: 0x1050n },
    ];
    const m: Module = { name: "a.dll", base: BASE, size: 0x2000n, symbols };
    expect(symbolize(m, 0x1060n)?.symbol.name).toBe("label");
    expect(symbolize(m, 0x1010n)?.symbol.name).toBe("outer");
    expect(symbolize(m, 0x1010n)?.line).toBeUndefined();
  });
});
