/**
 * Breakpad's walker (`--walker breakpad`, the Breakpad report's default), one behaviour per test,
 * each on a small dump the test writes: the classes of difference that real dumps of other
 * projects showed between Breakpad's reports and the project's own walk (test/cli/real-dumps
 * checks those dumps byte for byte). Each test fixes what Breakpad's sources do
 * (stackwalker.cc, stackwalker.h, stackwalker_x86.cc, stackwalker_amd64.cc, the postfix
 * evaluator, stackwalk_common.cc) and, where `auto` differs, what `auto` does instead.
 */
import { describe, expect, it } from "vitest";
import { breakpadReport } from "../../src/analysis/breakpad-report.js";
import { attachSymbolFile, parseSymbolFile } from "../../src/formats/symbol-file.js";
import { bytesSource, minidumpSnapshot, readMinidump, type Minidump } from "../../src/formats/minidump.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { renderBreakpad } from "../../src/render/breakpad.js";
import type { Walk } from "../../src/walk/frame.js";
import { walkThread, type WalkOptions } from "../../src/walk/walk.js";
import { writeMinidump, type MinidumpSpec, type WriterModule } from "../support/minidump-writer.js";

const STACK = 0x0012_f000n;
const APP = 0x0040_0000n;
const LIB = 0x1000_0000n;

/** Little-endian 32-bit words. */
function words32(...values: bigint[]): Uint8Array {
  const b = new Uint8Array(values.length * 4);
  const dv = new DataView(b.buffer);
  values.forEach((v, i) => dv.setUint32(4 * i, Number(v & 0xffff_ffffn), true));
  return b;
}

function words64(...values: bigint[]): Uint8Array {
  const b = new Uint8Array(values.length * 8);
  const dv = new DataView(b.buffer);
  values.forEach((v, i) => dv.setBigUint64(8 * i, v, true));
  return b;
}

/** A module with a CodeView record, so that a `.sym` file of its debug id attaches to it. */
function module(path: string, base: bigint, n: number): WriterModule {
  const guid = `${n.toString(16).padStart(8, "0")}-1111-2222-3333-444455556666`;
  return { path, base, size: 0x10000, codeView: { rsds: { guid, age: 1, pdb: path.replace(/\.\w+$/, ".pdb") } } };
}

/** A dump read back, with `.sym` texts (without their MODULE line) attached to modules by index. */
function dumpOf(spec: MinidumpSpec, syms: Record<number, string[]> = {}): { dump: Minidump; snapshot: Snapshot } {
  const dump = readMinidump(bytesSource(writeMinidump(spec).bytes));
  const snapshot = minidumpSnapshot(dump);
  for (const [index, lines] of Object.entries(syms)) {
    const m = snapshot.modules[Number(index)]!;
    const cpu = spec.machine === "x64" ? "x86_64" : spec.machine;
    const text = [`MODULE windows ${cpu} ${m.debugId} ${m.debugFile}`, ...lines].join("\n");
    attachSymbolFile(snapshot, parseSymbolFile(new TextEncoder().encode(text)));
  }
  return { dump, snapshot };
}

/** One x86 thread with this stack at STACK, app.exe and lib.dll loaded. */
function x86(registers: Record<string, bigint>, stack: Uint8Array, syms: Record<number, string[]> = {}) {
  return dumpOf(
    {
      machine: "x86",
      threads: [{ id: 1, registers, stack: { base: STACK, bytes: stack } }],
      modules: [module("C:\\app\\app.exe", APP, 1), module("C:\\app\\lib.dll", LIB, 2)],
      exception: { threadId: 1, code: 0xc0000005, address: registers["eip"]!, parameters: [0n, 0n] },
    },
    syms,
  );
}

function walk(d: { snapshot: Snapshot }, options: WalkOptions): Walk {
  return walkThread(d.snapshot, d.snapshot.threads[0]!, options);
}

const rows = (w: Walk): [bigint, bigint, string][] => w.frames.map((f) => [f.addrPC, f.addrStack, f.trust]);

/** The "Found by:" lines of the Breakpad report's first thread. */
function foundBy(d: { dump: Minidump; snapshot: Snapshot }): string[] {
  const text = renderBreakpad(breakpadReport(d.dump, d.snapshot));
  return [...text.matchAll(/Found by: (.*)/g)].map((m) => m[1]!);
}

describe("x86: where the frame chain ends and where it goes on", () => {
  it("EBP = 0 in a dump without the modules' code: Breakpad scans from ESP and takes a word in a module; auto does too", () => {
    // The context frame's EBP is 0; two words up the stack, a return address into lib.dll.
    const d = x86({ eip: APP + 0x1010n, esp: STACK, ebp: 0n }, words32(0x1234n, 0x5678n, LIB + 0x2345n, 0n, 0n, 0n));
    const want: [bigint, bigint, string][] = [[APP + 0x1010n, STACK, "context"], [LIB + 0x2345n, STACK + 12n, "scan"]];
    expect(rows(walk(d, { walker: "breakpad" }))).toEqual(want);
    expect(rows(walk(d, { walker: "auto" }))).toEqual(want);
    expect(foundBy(d)).toEqual(["given as instruction pointer in context", "stack scanning"]);
  });

  it("a frame-pointer step whose return address is below 0x1000 ends Breakpad's walk (TerminateWalk); auto scans on", () => {
    // [ebp] = a saved EBP, [ebp+4] = 0x400; a real return address further up.
    const d = x86({ eip: APP + 0x1010n, esp: STACK, ebp: STACK + 8n }, words32(0n, 0n, STACK + 0x20n, 0x400n, LIB + 0x2345n, 0n, 0n, 0n, 0n, 0n));
    const bp = walk(d, { walker: "breakpad" });
    expect(rows(bp)).toEqual([[APP + 0x1010n, STACK, "context"]]);
    expect(bp.stop.reason).toBe("bad-pc");
    expect(walk(d, { walker: "auto" }).frames.length).toBeGreaterThan(1);
  });

  it("a frame-pointer step whose return address is 0 ends Breakpad's walk", () => {
    const d = x86({ eip: APP + 0x1010n, esp: STACK, ebp: STACK + 8n }, words32(0n, 0n, STACK + 0x20n, 0n, LIB + 0x2345n, 0n, 0n, 0n, 0n, 0n));
    const bp = walk(d, { walker: "breakpad" });
    expect(rows(bp)).toEqual([[APP + 0x1010n, STACK, "context"]]);
    expect(bp.stop.reason).toBe("end-of-stack");
  });

  it("a frame-pointer step that lands outside every module is kept by Breakpad (JIT code), and the chain goes on from it", () => {
    const JIT = 0x5000_0000n;
    const d = x86({ eip: APP + 0x1010n, esp: STACK, ebp: STACK + 8n }, words32(0n, 0n, STACK + 0x18n, JIT + 0x10n, 0n, 0n, 0n, LIB + 0x2345n, 0n, 0n));
    expect(rows(walk(d, { walker: "breakpad" }))).toEqual([
      [APP + 0x1010n, STACK, "context"],
      [JIT + 0x10n, STACK + 0x10n, "frame-pointer"],
      [LIB + 0x2345n, STACK + 0x20n, "frame-pointer"],
    ]);
  });

  it("after a scanned frame, the next frame's STACK CFI is tried again", () => {
    // Frame 0: EBP points nowhere, so Breakpad scans and finds lib.dll+0x1010; lib.dll's STACK CFI
    // for that function then finds its caller in app.exe, with EBP restored from the stack.
    const stack = words32(0x11n, LIB + 0x1010n, STACK + 0x40n, APP + 0x2222n, 0n, 0n, 0n, 0n);
    const d = x86({ eip: APP + 0x1010n, esp: STACK, ebp: 0x7777_0000n }, stack, {
      1: ["FUNC 1000 100 0 lib_function", "STACK CFI INIT 1000 100 .cfa: $esp 8 + .ra: .cfa 4 - ^ $ebp: .cfa 8 - ^"],
    });
    const w = walk(d, { walker: "breakpad" });
    expect(rows(w).slice(0, 3)).toEqual([
      [APP + 0x1010n, STACK, "context"],
      [LIB + 0x1010n, STACK + 8n, "scan"],
      [APP + 0x2222n, STACK + 16n, "cfi"],
    ]);
    expect(w.frames[2]!.registers["ebp"]).toBe(STACK + 0x40n);
  });
});

describe("scanning: the walk's limit on scanned frames", () => {
  it("after 16,384 frames found by scanning, Breakpad's EBP-chain step no longer falls back to a scan", () => {
    // EBP never points at the stack; every word is a return address into app.exe.
    const words = Array.from({ length: 16_400 }, () => APP + 0x1010n);
    const d = x86({ eip: APP + 0x1010n, esp: STACK, ebp: 0x7777_0000n }, words32(...words));
    const w = walk(d, { walker: "breakpad" });
    expect(w.frames.length).toBe(1 + 16_384);
    expect(w.frames.slice(1).every((f) => f.trust === "scan")).toBe(true);
  });
});

describe("scanning: a word must lie in a function of a module with symbols", () => {
  it("Breakpad's scan passes over a word inside a module with symbols but in none of its functions; without symbols it takes it", () => {
    // ESP: app.exe+0x40 (the headers), then lib.dll+0x1010.
    const stack = words32(APP + 0x40n, LIB + 0x1010n, 0n, 0n);
    const regs = { eip: LIB + 0x1008n, esp: STACK, ebp: 0n };
    const bare = x86(regs, stack);
    expect(walk(bare, { walker: "breakpad" }).frames[1]!.addrPC).toBe(APP + 0x40n);
    const withSyms = x86(regs, stack, { 0: ["FUNC 1000 100 0 main"], 1: ["FUNC 1000 100 0 lib_function"] });
    expect(walk(withSyms, { walker: "breakpad" }).frames[1]!.addrPC).toBe(LIB + 0x1010n);
    expect(walk(withSyms, { walker: "auto" }).frames[1]!.addrPC).toBe(LIB + 0x1010n);
  });
});

describe("STACK WIN programs, as Breakpad's postfix evaluator runs them", () => {
  // A FrameData record for app.exe's function at 0x1000: the return address at ESP + 8, EBX saved
  // at ESP + 0 under its register name or under its CodeView number.
  const program = (ebx: string): string => `STACK WIN 4 1000 100 0 0 0 4 4 0 1 $T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = ${ebx} $T0 8 - ^ =`;
  const stack = words32(0xb0b0n, 0n, LIB + 0x2345n, 0n, 0n, 0n);
  const regs = { eip: APP + 0x1010n, esp: STACK, ebp: 0n, ebx: 0xeeeen };

  it("a register named $ebx is recovered", () => {
    const d = x86(regs, stack, { 0: [program("$ebx")] });
    const w = walk(d, { walker: "breakpad" });
    expect(rows(w)[1]).toEqual([LIB + 0x2345n, STACK + 12n, "frame-data"]);
    expect(w.frames[1]!.registers["ebx"]).toBe(0xb0b0n);
  });

  it("a register named by its CodeView number ($20 for EBX) recovers nothing in Breakpad; auto reads it as EBX", () => {
    const d = x86(regs, stack, { 0: [program("$20")] });
    const w = walk(d, { walker: "breakpad" });
    expect(rows(w)[1]).toEqual([LIB + 0x2345n, STACK + 12n, "frame-data"]);
    expect(w.frames[1]!.registers["ebx"]).toBeUndefined();
    expect(walk(d, { walker: "auto" }).frames[1]!.registers["ebx"]).toBe(0xb0b0n);
  });

  it("an `=` glued to the next token is two tokens", () => {
    const d = x86(regs, stack, { 0: ["STACK WIN 4 1000 100 0 0 0 4 4 0 1 $T0 .raSearch =$eip $T0 ^ =$esp $T0 4 + ="] });
    expect(rows(walk(d, { walker: "breakpad" }))[1]).toEqual([LIB + 0x2345n, STACK + 12n, "frame-data"]);
  });

  it("a record without a program string (FPO) carries EBX over from the callee", () => {
    // STACK WIN 0: 4 bytes of locals, 4 of saved registers: the return address at ESP + 8.
    const d = x86(regs, stack, { 0: ["STACK WIN 0 1000 100 0 0 0 4 4 0 0 0"] });
    const w = walk(d, { walker: "breakpad" });
    expect(rows(w)[1]).toEqual([LIB + 0x2345n, STACK + 12n, "frame-data"]);
    expect(w.frames[1]!.registers["ebx"]).toBe(0xeeeen);
  });

  it("a program whose EIP lies outside every module is replaced by a scan above it: call frame info with scanning", () => {
    // The program reads 0xfffffffe at ESP + 8 (no word in a module in the four from there, so
    // .raSearchStart stays); the scan from ESP + 12 finds lib.dll+0x2345 at ESP + 28.
    const bad = words32(0xb0b0n, 0n, 0xffff_fffen, 1n, 2n, 3n, 4n, LIB + 0x2345n, 0n, 0n);
    const d = x86(regs, bad, { 0: [program("$ebx")] });
    const w = walk(d, { walker: "breakpad" });
    expect(rows(w)[1]).toEqual([LIB + 0x2345n, STACK + 32n, "scan"]);
    expect(w.frames[1]!.rule.kind).toBe("site-check");
    expect(foundBy(d)[1]).toBe("call frame info with scanning");
  });
});

describe("x64: STACK CFI that yields a return address of 0", () => {
  it("fails the rule: Breakpad (and auto) scan on and find the caller", () => {
    const S = 0x0000_0000_0012_0000n;
    const A = 0x0000_7ff6_0000_0000n;
    const L = 0x0000_7ffc_0000_0000n;
    const stack = words64(0n, L + 0x2345n, 0n, 0n);
    const d = dumpOf(
      {
        machine: "x64",
        threads: [{ id: 1, registers: { rip: A + 0x1010n, rsp: S, rbp: 0n }, stack: { base: S, bytes: stack } }],
        modules: [module("C:\\app\\app.exe", A, 1), module("C:\\app\\lib.dll", L, 2)],
        exception: { threadId: 1, code: 0xc0000005, address: A + 0x1010n, parameters: [0n, 0n] },
      },
      // The CFI reads the return address at RSP: 0.
      { 0: ["FUNC 1000 100 0 start", "STACK CFI INIT 1000 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^"] },
    );
    for (const walker of ["breakpad", "auto"] as const) {
      const w = walk(d, { walker });
      expect(w.frames.map((f) => [f.addrPC, f.trust]), walker).toEqual([[A + 0x1010n, "context"], [L + 0x2345n, "scan"]]);
    }
  });
});

describe("x64 off Windows: the RBP chain", () => {
  it("a readable step whose return address is 0 (a thread's start) ends the walk in Breakpad's walker and in auto; no scan past it", () => {
    const S = 0x0000_7ffd_0000_0000n;
    const A = 0x0000_5555_0000_0000n;
    // RBP = S + 0x10: [RBP] = S + 0x40 (readable, above), [RBP + 8] = 0; a word in app further up.
    const stack = words64(0n, 0n, S + 0x40n, 0n, A + 0x2345n, 0n, 0n, 0n, 0n, 0n);
    const d = dumpOf({
      machine: "x64",
      platformId: 0x8201,
      threads: [{ id: 1, registers: { rip: A + 0x1010n, rsp: S, rbp: S + 0x10n }, stack: { base: S, bytes: stack } }],
      modules: [module("/usr/bin/app", A, 1)],
      exception: { threadId: 1, code: 11, address: A + 0x1010n, parameters: [] },
    });
    for (const walker of ["breakpad", "auto"] as const) {
      const w = walk(d, { walker });
      expect(w.frames.map((f) => f.addrPC), walker).toEqual([A + 0x1010n]);
      expect(w.stop.reason, walker).toBe("end-of-stack");
    }
  });
});

describe("the module list of Breakpad's report", () => {
  it("warns about every module whose debug file and id match one without symbols: modules without an id share the warning", () => {
    const d = dumpOf({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x2000_0010n, esp: STACK, ebp: 0n }, stack: { base: STACK, bytes: words32(0n, 0n) } }],
      modules: [
        { path: "/system/anon-a", base: 0x2000_0000n, size: 0x1000 },
        { path: "/system/anon-b", base: 0x3000_0000n, size: 0x1000 },
      ],
      exception: { threadId: 1, code: 0xc0000005, address: 0x2000_0010n, parameters: [0n, 0n] },
    });
    const text = renderBreakpad(breakpadReport(d.dump, d.snapshot, { symbolPathGiven: true }));
    // Only anon-a has a frame, but anon-b has the same (empty) debug file and id.
    expect(text).toContain("anon-a  ???  (main)  (WARNING: No symbols, , )\n");
    expect(text).toContain("anon-b  ???  (WARNING: No symbols, , )\n");
  });
});
