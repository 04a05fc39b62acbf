/**
 * The StackWalkEx facade and dbghelp's inline-frame functions (src/walk/stackwalk64-inline.ts).
 *
 * On google/breakpad's linux_inline dump with its symbols (test/fixtures/real-dumps/breakpad-linux-inline),
 * SymFromInlineContext and SymGetLineFromInlineContext of the contexts SymQueryInlineTrace starts
 * from give the functions, files and lines of Breakpad's own report of the crashed frame and its
 * three inline frames. (The AMD64 facade, Windows' unwinder, cannot walk that Linux dump past its
 * first frame.)
 *
 * On an x64 vector of the emulator with a symbol file written for the test (inline sites at three
 * of its four frames), a caller looping over StackWalkEx with SYM_STKWALK_DEFAULT gets each frame
 * once per inline site at its PC and once more as itself, in Wine's call sequence and encoding
 * (stackwalk64.md §5.3: INLINE|0 … INLINE|N−1, then REGULAR); the frames with a REGULAR context
 * are StackWalk64's frames, which equal the emulator's truth; and the inline frames the
 * Sym*InlineContext functions name are the ones the Breakpad report of the same walk prints.
 * SYM_STKWALK_ZEROEXTEND_PTRS and an IGNORE context give the physical frames only.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AddressMode } from "../../src/model/address.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { newStackFrame64, newStackFrameEx, type StackFrame64, type StackFrameEx } from "../../src/model/stackframe.js";
import { attachSymbolDirectories, openDump } from "../../src/node/index.js";
import { breakpadSymbols, parseBreakpadSym } from "../../src/formats/breakpad-sym.js";
import { parseVector } from "../../src/formats/vector.js";
import { locate, sourceOf } from "../../src/analysis/location.js";
import { walkThread } from "../../src/walk/walk.js";
import { stackWalk64Detailed } from "../../src/walk/stackwalk64.js";
import {
  INLINE_CONTEXT,
  INLINE_FRAME_CONTEXT_IGNORE,
  SYM_STKWALK_FORCE_FRAMEPTR,
  SYM_STKWALK_ZEROEXTEND_PTRS,
  stackWalkExDetailed,
  symAddrIncludeInlineTrace,
  symFromInlineContext,
  symGetLineFromInlineContext,
  symQueryInlineTrace,
} from "../../src/walk/stackwalk64-inline.js";
import { FIXTURES } from "../support/fixtures.js";

const DIR = join(FIXTURES, "real-dumps/breakpad-linux-inline");
const opened = openDump(join(DIR, "linux_inline.dmp"));
const snapshot: Snapshot = opened.snapshot;
attachSymbolDirectories(snapshot, [join(DIR, "symbols")]);
afterAll(() => opened.close());

const PC = 0x2161b6n;
const fileName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

/** Breakpad's first `n` frames of the crashed thread (-m): function, file and line. */
function breakpadFrames(n: number): string[] {
  return readFileSync(join(DIR, "linux_inline.stackwalk.machine_readable.out"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("0|"))
    .slice(0, n)
    .map((l) => l.split("|"))
    .map((f) => `${f[3]} ${f[4]}:${f[5]}`);
}

function flat<T extends StackFrame64>(f: T): T {
  for (const a of [f.addrPC, f.addrFrame, f.addrStack]) a.mode = AddressMode.Flat;
  return f;
}

const VECTOR = new URL("../../vectors/x64/synthetic/alloc-large-16-capture.json", import.meta.url).pathname;
/** Inline sites for the vector's functions: two at inner's PC, one at w2's return address, one at f136's, none at main's. */
const SYM = [
  "MODULE windows x86_64 00000000000000000000000000000000 alloc-large-16.pdb",
  "FILE 0 main.c",
  "FILE 1 helpers.h",
  "INLINE_ORIGIN 0 clamp",
  "INLINE_ORIGIN 1 scale",
  "INLINE_ORIGIN 2 fill",
  "FUNC 1000 18 0 main",
  "1000 18 10 0",
  "FUNC 1020 1e 0 f136",
  "INLINE 0 21 0 2 1028 10",
  "1020 1e 20 0",
  "1028 10 5 1",
  "FUNC 1040 30 0 w2",
  "INLINE 0 31 0 1 105c 8",
  "1040 30 30 0",
  "105c 8 7 1",
  "FUNC 1070 12 0 inner",
  "INLINE 0 41 0 1 1074 c",
  "INLINE 1 8 1 0 1078 6",
  "1070 12 40 0",
  "1078 6 3 1",
  "",
].join("\n");

function vectorSnapshot(): Snapshot {
  const v = parseVector(readFileSync(VECTOR, "utf8"), "alloc-large-16-capture.json");
  v.modules[0]!.symbols = breakpadSymbols(parseBreakpadSym(SYM));
  return v;
}

/** StackWalkEx called until FALSE (at most `max` times): the PC and InlineFrameContext of each frame. */
function loop(target: Snapshot, flags: number, context = 0, max = 20): { pc: bigint; ctx: number }[] {
  const f: StackFrameEx = flat(newStackFrameEx());
  f.inlineFrameContext = context;
  const regs = { registers: { ...target.threads[0]!.registers } };
  const out: { pc: bigint; ctx: number }[] = [];
  while (out.length < max && stackWalkExDetailed(IMAGE_FILE_MACHINE.AMD64, target, f, regs, {}, flags).ok) out.push({ pc: f.addrPC.offset, ctx: f.inlineFrameContext });
  return out;
}

describe("StackWalkEx and the inline-frame functions", () => {
  it("SymQueryInlineTrace and the Sym*InlineContext functions name Breakpad's frames 0-3 of linux_inline.dmp", () => {
    const q = symQueryInlineTrace(snapshot, PC, 0, PC, PC);
    expect(q).toEqual({ ok: true, curContext: INLINE_CONTEXT.inline, curFrameIndex: 3 });
    const contexts = [...Array.from({ length: q.curFrameIndex! }, (_, i) => q.curContext! + i), INLINE_CONTEXT.regular];
    const named = contexts.map((ctx) => {
      const s = symFromInlineContext(snapshot, PC, ctx);
      const l = symGetLineFromInlineContext(snapshot, PC, ctx);
      return `${s.symbol!.name} ${fileName(l.line!.fileName)}:${l.line!.lineNumber}`;
    });
    expect(named).toEqual(breakpadFrames(4));
  });

  it("SYM_STKWALK_DEFAULT: each frame's inline frames, innermost first, then the frame, in Wine's sequence", () => {
    const target = vectorSnapshot();
    const truth = target.threads[0]!.truth!.map((t) => t.pc);
    const frames = loop(target, 0);
    const I = INLINE_CONTEXT.inline;
    const R = INLINE_CONTEXT.regular;
    expect(frames).toEqual([
      { pc: truth[0], ctx: I },
      { pc: truth[0], ctx: I + 1 },
      { pc: truth[0], ctx: R },
      { pc: truth[1], ctx: I },
      { pc: truth[1], ctx: R },
      { pc: truth[2], ctx: I },
      { pc: truth[2], ctx: R },
      { pc: truth[3], ctx: R },
    ]);
    // What the Sym*InlineContext functions name is what the walk's outputs show (the Breakpad report's frames).
    const named = frames.map(({ pc, ctx }) => {
      const s = symFromInlineContext(target, pc, ctx);
      const l = symGetLineFromInlineContext(target, pc, ctx);
      return `${s.symbol!.name}|${l.line!.fileName}|${l.line!.lineNumber}`;
    });
    const printed = walkThread(target, target.threads[0]!).frames.flatMap((frame) => {
      const loc = locate(target.modules, frame);
      const source = sourceOf(loc);
      return [...(loc.inlines ?? []).map((i) => `${i.function}|${i.file}|${i.line}`), `${loc.function}|${source?.file}|${source?.line}`];
    });
    expect(named).toEqual(printed);
    expect(named.slice(0, 3)).toEqual(["clamp|helpers.h|3", "scale|helpers.h|8", "inner|main.c|41"]);
  });

  it("the physical frames are StackWalk64's: with ZEROEXTEND_PTRS, with an IGNORE context, and the REGULAR ones with DEFAULT", () => {
    const target = vectorSnapshot();
    const f = flat(newStackFrame64());
    const regs = { registers: { ...target.threads[0]!.registers } };
    const physical: bigint[] = [];
    while (physical.length < 20 && stackWalk64Detailed(IMAGE_FILE_MACHINE.AMD64, target, f, regs).ok) physical.push(f.addrPC.offset);
    expect(physical).toEqual(target.threads[0]!.truth!.map((t) => t.pc));
    expect(loop(target, SYM_STKWALK_ZEROEXTEND_PTRS)).toEqual(physical.map((pc) => ({ pc, ctx: 0 })));
    expect(loop(target, 0, INLINE_FRAME_CONTEXT_IGNORE)).toEqual(physical.map((pc) => ({ pc, ctx: INLINE_FRAME_CONTEXT_IGNORE })));
    expect(loop(target, 0).filter((x) => x.ctx === INLINE_CONTEXT.regular).map((x) => x.pc)).toEqual(physical);
  });

  it("refuses a wrong StackFrameSize and FORCE_FRAMEPTR", () => {
    const f = flat(newStackFrameEx());
    f.stackFrameSize = 0;
    expect(stackWalkExDetailed(IMAGE_FILE_MACHINE.AMD64, snapshot, f, { registers: { ...snapshot.threads[0]!.registers } }).reason).toBe("invalid-parameter");
    expect(stackWalkExDetailed(IMAGE_FILE_MACHINE.AMD64, snapshot, flat(newStackFrameEx()), { registers: {} }, {}, SYM_STKWALK_FORCE_FRAMEPTR).reason).toBe("invalid-parameter");
  });

  it("SymAddrIncludeInlineTrace, SymQueryInlineTrace, and the Sym*InlineContext functions outside inline sites", () => {
    expect(symAddrIncludeInlineTrace(snapshot, PC)).toBe(3);
    expect(symAddrIncludeInlineTrace(snapshot, 0x215b30n)).toBe(0);
    expect(symAddrIncludeInlineTrace(snapshot, 0x215b50n)).toBe(1);
    expect(symAddrIncludeInlineTrace(snapshot, 0x1000n)).toBe(0);
    expect(symQueryInlineTrace(snapshot, PC, 0, PC, PC)).toEqual({ ok: true, curContext: INLINE_CONTEXT.inline, curFrameIndex: 3 });
    expect(symQueryInlineTrace(snapshot, 0x215b30n, 0, 0x215b30n, 0x215b30n)).toEqual({ ok: true, curContext: INLINE_CONTEXT.regular, curFrameIndex: 0 });
    expect(symQueryInlineTrace(snapshot, PC, INLINE_CONTEXT.inline, PC, PC).reason).toBe("unsupported");
    expect(symQueryInlineTrace(snapshot, 0x1000n, 0, 0x1000n, PC).reason).toBe("invalid-parameter");
    // A context deeper than the sites, or REGULAR, names the function at the address.
    expect(symFromInlineContext(snapshot, PC, INLINE_CONTEXT.inline + 7).symbol).toEqual({ name: "main", address: 0x215b30n, modBase: 0x200000n, size: 0x6cfn, inlined: false });
    expect(symFromInlineContext(snapshot, PC, INLINE_CONTEXT.inline + 2)).toEqual({ ok: true, symbol: { name: "foo()", address: 0x215b45n, modBase: 0x200000n, inlined: true }, displacement: PC - 0x215b45n });
    expect(symFromInlineContext(snapshot, PC, 0).reason).toBe("invalid-parameter");
    expect(symGetLineFromInlineContext(snapshot, PC, INLINE_CONTEXT.inline)).toEqual({ ok: true, line: { fileName: "linux_inline.cpp", lineNumber: 27, address: PC }, displacement: 0n });
    expect(symGetLineFromInlineContext(snapshot, PC, INLINE_CONTEXT.regular).line).toEqual({ fileName: "a.cpp", lineNumber: 42, address: 0x215b45n });
    expect(symGetLineFromInlineContext(snapshot, 0x215b30n, INLINE_CONTEXT.regular).line).toEqual({ fileName: "linux_inline.cpp", lineNumber: 41, address: 0x215b30n });
  });
});
