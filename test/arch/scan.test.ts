/**
 * The one scanning policy (src/arch/scan.ts) and the rules around it: Breakpad's window, the
 * call-site checks that pass over stale return addresses, the extended search for frames larger
 * than the window, the frame chain's conventional end, the x86 EBP chain taken only where
 * plausible, the x64 RBP chain with Breakpad's checks, and the x64 leaf simulation.
 */
import { describe, expect, it } from "vitest";
import { callSiteCheck, scanForReturn } from "../../src/arch/scan.js";
import { callBefore } from "../../src/arch/x86/code.js";
import { x86CheckedFramePointer } from "../../src/arch/x86/frame-pointer.js";
import { X86_SCAN } from "../../src/arch/x86/scan.js";
import { x64CheckedFramePointer } from "../../src/arch/x64/frame-pointer.js";
import { x64Leaf } from "../../src/arch/x64/scan.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { WindowMemory } from "../../src/memory/window-memory.js";
import type { Module, Registers } from "../../src/model/snapshot.js";
import type { FrameSite } from "../../src/unwind/step.js";
import { UnwindCache } from "../../src/unwind/cache.js";
import { runRule } from "../support/rules.js";
import { MAX_SCANNED_FRAMES, walkThread } from "../../src/walk/walk.js";
import { StackBuilder } from "../support/stack-builder.js";

const BASE = 0x0040_0000n;
const MODULE: Module = { name: "app.exe", base: BASE, size: 0x4000n, symbols: [] };

/** Code with a direct call ending at each `ret` to its `target` (E8 rel32), int3 elsewhere. */
function code(calls: { ret: bigint; target: bigint }[]): RegionMemory {
  const bytes = new Uint8Array(0x4000).fill(0xcc);
  for (const { ret, target } of calls) {
    const at = Number(ret - BASE) - 5;
    bytes[at] = 0xe8;
    new DataView(bytes.buffer).setInt32(at + 1, Number(target - ret), true);
  }
  return new RegionMemory([{ base: BASE, bytes }]);
}

function site(pc: bigint, images: RegionMemory, index = 1, registers: Registers = {}): FrameSite {
  return { machine: "x86", index, interrupted: false, registers, pc, lookupPc: pc, modules: [MODULE], images, calleeParams: 0, cache: new UnwindCache() };
}

const STACK = 0x0012_f000n;
const stackOf = (s: StackBuilder): RegionMemory => {
  const b = s.build();
  return new RegionMemory([{ base: b.base, bytes: b.bytes }]);
};

describe("the scanning policy", () => {
  // f at 0x401100 (its frame's PC 0x401120); g at 0x401300; main calls f from 0x401050.
  const images = code([
    { ret: 0x0040_1055n, target: 0x0040_1100n }, // main → f: the real return address
    { ret: 0x0040_1135n, target: 0x0040_1300n }, // f → g, long returned: stale
  ]);

  it("passes over a return address whose direct call went above the frame's PC in its module, for a consistent one", () => {
    const stack = stackOf(new StackBuilder(STACK).u32(0x0040_1135).u32(7).u32(0x0040_1055));
    const found = scanForReturn(X86_SCAN, new UnwindCache(), stack, { check: callSiteCheck(site(0x0040_1120n, images)), start: STACK, words: 40 });
    expect(found).toEqual({ slot: STACK + 8n, value: 0x0040_1055n });
  });

  it("takes the first return address when none is consistent (a tail call entered the frame)", () => {
    const stack = stackOf(new StackBuilder(STACK).u32(0x0040_1135).u32(7));
    expect(scanForReturn(X86_SCAN, new UnwindCache(), stack, { check: callSiteCheck(site(0x0040_1120n, images)), start: STACK, words: 40 })).toEqual({ slot: STACK, value: 0x0040_1135n });
  });

  it("looks past Breakpad's window only for a return address its call site confirms", () => {
    const far = new StackBuilder(STACK).fill(300, 0).u32(0x0040_1055);
    expect(scanForReturn(X86_SCAN, new UnwindCache(), stackOf(far), { check: callSiteCheck(site(0x0040_1120n, images)), start: STACK, words: 40 })).toEqual({ slot: STACK + 1200n, value: 0x0040_1055n });
    // Without the code, lying in the module is all that could be checked: not enough out there.
    const noCode = new RegionMemory([]);
    expect(scanForReturn(X86_SCAN, new UnwindCache(), stackOf(new StackBuilder(STACK).fill(300, 0).u32(0x0040_1055)), { check: callSiteCheck(site(0x0040_1120n, noCode)), start: STACK, words: 40 })).toBeUndefined();
    expect(scanForReturn(X86_SCAN, new UnwindCache(), stackOf(new StackBuilder(STACK).fill(30, 0).u32(0x0040_1055)), { check: callSiteCheck(site(0x0040_1120n, noCode)), start: STACK, words: 40 })).toEqual({
      slot: STACK + 120n,
      value: 0x0040_1055n,
    });
  });

  it("does not take alignment padding for a call: ff 90 90 90 90 90 before a function's first byte", () => {
    const bytes = new Uint8Array(0x40).fill(0xcc);
    bytes.set([0xff, 0x90, 0x90, 0x90, 0x90, 0x90], 0x1a);
    const pad = new RegionMemory([{ base: BASE, bytes }]);
    expect(callBefore(pad, BASE + 0x20n)).toBeUndefined();
    bytes.set([0xff, 0x90, 0x10, 0x00, 0x00, 0x00], 0x1a);
    expect(callBefore(new RegionMemory([{ base: BASE, bytes }]), BASE + 0x20n)).toBe("call [r32+disp32]");
  });
});

describe("the x86 EBP chain where no record describes the frame", () => {
  const images = code([{ ret: 0x0040_1055n, target: 0x0040_1100n }, { ret: 0x0040_1135n, target: 0x0040_1300n }]);
  const run = (registers: Registers, stack: RegionMemory, index = 1, foundBy?: "frame-pointer" | "scan") =>
    runRule(x86CheckedFramePointer.ruleFor(site(registers["eip"]!, images, index, registers))!, registers, stack, foundBy === undefined ? {} : { foundBy });

  it("follows a plausible EBP", () => {
    const s = new StackBuilder(STACK).fill(2).mark("ebp").u32(0).u32(0x0040_1055).mark("sp1");
    const { labels } = s.build();
    const r = run({ eip: 0x0040_1120n, esp: STACK, ebp: labels["ebp"]! }, stackOf(s));
    expect(r.ok && [r.registers["eip"], r.registers["esp"]]).toEqual([0x0040_1055n, labels["sp1"]]);
  });

  it("passes an implausible step on to the scan: EBP 0 outside the chain, below ESP, a stale or no return address at [EBP+4]", () => {
    const s = new StackBuilder(STACK).fill(2).mark("ebp").u32(STACK + 0x100n).u32(0x0040_1135).u32(0).u32(0x1234);
    const { labels } = s.build();
    const mem = stackOf(s);
    for (const [registers, why] of [
      [{ eip: 0x0040_1120n, esp: STACK, ebp: 0n }, "EBP is 0"],
      [{ eip: 0x0040_1120n, esp: STACK + 8n, ebp: STACK }, "below ESP"],
      [{ eip: 0x0040_1120n, esp: STACK, ebp: labels["ebp"]! }, "returns from a call to 0x00401300"],
      [{ eip: 0x0040_1120n, esp: STACK, ebp: labels["ebp"]! + 8n }, "is not a return address"],
    ] as const) {
      const r = run(registers, mem);
      expect(r.ok, why).toBe(false);
      expect(!r.ok && r.fallback && r.stop.detail, why).toContain(why);
    }
  });

  it("ends at an EBP of 0 the chain itself recovered unless a scan confirms more; memory EBP points outside is a read fault", () => {
    const mem = stackOf(new StackBuilder(STACK).fill(4));
    const end = run({ eip: 0x0040_1120n, esp: STACK, ebp: 0n }, mem, 2, "frame-pointer");
    expect(end).toMatchObject({ ok: false, final: false, stop: { reason: "end-of-stack" } });
    const outside = run({ eip: 0x0040_1120n, esp: STACK, ebp: 0x0050_0000n }, mem);
    expect(outside).toMatchObject({ ok: false, stop: { reason: "read-fault" } });
    expect(!outside.ok && outside.fallback).toBeFalsy();
  });
});

describe("x64 rules Breakpad uses without unwind data", () => {
  const STACK64 = 0x7ffd_8330_0000n;
  const lib: Module = { name: "libc.so", base: 0x7f3f_0e03_c000n, size: 0x40_0000n, symbols: [] };
  const ra = lib.base + 0x21ec5n;
  const x64site = (registers: Registers, index = 0): FrameSite => ({ machine: "x64", index, interrupted: false, registers, pc: registers["rip"]!, lookupPc: registers["rip"]!, modules: [lib], images: new RegionMemory([]), calleeParams: 0, cache: new UnwindCache() });

  it("the RBP chain with Breakpad's checks: taken when plausible; an RBP of 0, a saved RBP below the caller's RSP or unreadable are passed over", () => {
    const s = new StackBuilder(STACK64, 8).fill(2).mark("rbp").u64(STACK64 + 0x40n).u64(ra).fill(8, 0);
    const { labels } = s.build();
    const mem = stackOf(s);
    const take = (rbp: bigint) => runRule(x64CheckedFramePointer.ruleFor(x64site({ rip: lib.base + 0x100n, rsp: STACK64, rbp }))!, { rip: lib.base + 0x100n, rsp: STACK64, rbp }, mem);
    expect(take(labels["rbp"]!)).toMatchObject({ ok: true, registers: { rip: ra, rsp: labels["rbp"]! + 16n, rbp: STACK64 + 0x40n }, recovered: ["rip", "rsp", "rbp"] });
    expect(take(0n)).toMatchObject({ ok: false, fallback: true });
    const low = stackOf(new StackBuilder(STACK64, 8).mark("rbp").u64(STACK64).u64(ra));
    expect(runRule(x64CheckedFramePointer.ruleFor(x64site({ rip: 1n, rsp: STACK64, rbp: STACK64 }))!, { rip: 1n, rsp: STACK64, rbp: STACK64 }, low)).toMatchObject({ ok: false, fallback: true });
  });

  it("the leaf simulation: for the context frame only, a return address at RSP or RSP + 8, every register and the whole validity carried over", () => {
    const registers: Registers = { rip: lib.base + 0x100n, rsp: STACK64, rbp: 0n, rax: 0x1d3n, r15: 9n };
    expect(x64Leaf.ruleFor(x64site(registers, 1))).toBeUndefined();
    const at1 = stackOf(new StackBuilder(STACK64, 8).u64(5).u64(ra));
    expect(runRule(x64Leaf.ruleFor(x64site(registers))!, registers, at1)).toMatchObject({ ok: true, rule: { kind: "leaf" }, recovered: undefined, registers: { ...registers, rip: ra, rsp: STACK64 + 16n } });
    const at2 = stackOf(new StackBuilder(STACK64, 8).u64(5).u64(6).u64(ra));
    expect(runRule(x64Leaf.ruleFor(x64site(registers))!, registers, at2)).toMatchObject({ ok: false, fallback: true });
  });
});

describe("WindowMemory", () => {
  it("reads only inside its ranges, through every fast path", () => {
    const below = new RegionMemory([{ base: 0x1000n, bytes: new Uint8Array(0x100).fill(7) }]);
    const w = new WindowMemory(below, [{ start: 0x1010n, end: 0x1020n }]);
    expect(w.read(0x1010n, 16)).toHaveLength(16);
    expect(w.read(0x100cn, 8)).toBeUndefined();
    expect(w.read(0x101cn, 8)).toBeUndefined();
    expect(w.u32(0x101cn)).toBe(0x07070707);
    expect(w.u32n(0x1020)).toBeUndefined();
    const into = { low: 0, high: 0 };
    expect(w.u64n(0x1018, into)).toBe(true);
    expect(w.u64n(0x101c, into)).toBe(false);
  });
});

describe("the walk's scan limit", () => {
  it("scans no more after 16384 frames found by scanning (Breakpad's max_frames_scanned)", () => {
    const lib: Module = { name: "lib.dll", base: 0x7ff0_0000_0000n, size: 0x10_0000n, symbols: [] };
    const words = 17_000;
    const bytes = new Uint8Array(words * 8);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < words; i++) view.setBigUint64(i * 8, lib.base + 0x1000n + BigInt(i % 64), true);
    const stack = 0x0000_00d2_0000_0000n;
    const snap = { machine: "x64" as const, modules: [lib], memory: new RegionMemory([{ base: stack, bytes }]), threads: [{ id: 1, crashed: true, registers: { rip: lib.base + 0x10n, rsp: stack, rbp: 0n } }] };
    const walk = walkThread(snap, snap.threads[0]!);
    expect(walk.frames).toHaveLength(1 + MAX_SCANNED_FRAMES);
    expect(walk.frames[1]!.rule.kind).toBe("leaf");
    expect(walk.frames.at(-1)!.trust).toBe("scan");
  });
});
