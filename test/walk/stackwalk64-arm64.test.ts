/**
 * The ARM64 StackWalk64 facade (arm64.md Part 3) call by call over the clang-14 chain of
 * test/arch/arm64/chain.ts, whose frames come from its prologs: the native model unwinds the
 * CONTEXT in place with the .pdata/.xdata of the image (Pc − 4 after a return), AddrReturn from an
 * unwind of a copy, FuncTableEntry the .pdata entry's address; Wine's `arm64_stack_walk` without
 * DWARF gives exactly two frames from Pc and Lr.
 */
import { describe, expect, it } from "vitest";
import { AddressMode } from "../../src/model/address.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../../src/model/context-layout.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";
import { newStackFrame64, type StackFrame64 } from "../../src/model/stackframe.js";
import { stackWalk64, stackWalk64Detailed, type ContextRecord } from "../../src/walk/stackwalk64.js";
import { BASE, ImageBuilder } from "../arch/arm64/fixture.js";
import { chainStop, insn } from "../arch/arm64/chain.js";

const ARM64 = IMAGE_FILE_MACHINE.ARM64;
type Row = [pc: bigint, ret: bigint, frame: bigint, stack: bigint, entry: bigint];
const row = (f: StackFrame64): Row => [f.addrPC.offset, f.addrReturn.offset, f.addrFrame.offset, f.addrStack.offset, f.funcTableEntry];
/** The .pdata entry of the chain's function i (main, fregs, bigframe, leaf_locals: sorted by start). */
const entry = (i: number): bigint => BASE + BigInt(ImageBuilder.entryRva(i));

describe("StackWalk64 for ARM64", () => {
  it("native model: one unwind per call, AddrReturn from a copy, the .pdata entry as FuncTableEntry, FALSE after AddrReturn 0", () => {
    const c = chainStop();
    const ctx: ContextRecord = { registers: { ...c.registers } };
    const f = newStackFrame64();
    const rows: Row[] = [];
    while (stackWalk64(ARM64, c.snapshot, undefined, f, ctx)) {
      rows.push(row(f));
      expect(f.params).toEqual([0n, 0n, 0n, 0n]);
      expect([f.far, f.virtual]).toEqual([1, 1]);
      expect(f.addrBStore).toEqual({ offset: 0n, segment: 0, mode: 0 });
      expect(f.addrPC.mode).toBe(AddressMode.Flat);
    }
    const L = c.labels;
    expect(rows).toEqual([
      [insn("leaf_locals", 4), insn("bigframe", 6), L["F"], L["sp0"], entry(3)],
      [insn("bigframe", 6), insn("fregs", 7), L["F"], L["L"], entry(2)],
      [insn("fregs", 7), insn("main", 3), L["F"], L["B"], entry(1)],
      [insn("main", 3), 0n, L["F"], L["F"], entry(0)],
    ]);
    // The pcs and sps are the chain's truth; the CONTEXT now holds main's unwound registers.
    expect(rows.map((r) => [r[0], r[3]])).toEqual(c.truth.map((t) => [t.pc, t.sp]));
    expect(ctx.registers["pc"]).toBe(insn("main", 3));
    expect((ctx.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL).toBe(CONTEXT_UNWOUND_TO_CALL);
    expect(stackWalk64Detailed(ARM64, c.snapshot, f, ctx).reason).toBe("done");
  });

  it("pacVaBits: a return address signed in bits 40-47 loses its code only at the size the caller gives", () => {
    const pac = 0x0000_2a00_0000_0000n;
    const c = chainStop({ leaf: 4 }, pac);
    const walk = (pacVaBits?: number): bigint[] => {
      const ctx: ContextRecord = { registers: { ...c.registers } };
      const f = newStackFrame64();
      const pcs: bigint[] = [];
      while (stackWalk64Detailed(ARM64, c.snapshot, f, ctx, pacVaBits === undefined ? {} : { pacVaBits }).ok) pcs.push(f.addrPC.offset);
      return pcs;
    };
    // At the default 48 bits the code stays: bigframe returns to no module, and the walk ends there.
    expect(walk()).toEqual([insn("leaf_locals", 4), insn("bigframe", 6)]);
    expect(walk(48)).toEqual([insn("leaf_locals", 4), insn("bigframe", 6)]);
    expect(walk(40)).toEqual(c.truth.map((t) => t.pc));
    const bad = stackWalk64Detailed(ARM64, c.snapshot, newStackFrame64(), { registers: { ...c.registers } }, { pacVaBits: 53 });
    expect(bad.ok).toBe(false);
    expect(bad.reason).toBe("invalid-parameter");
    expect(bad.detail).toContain("from 16 to 52");
  });

  it("native model: a pc in a function without an entry (a tail-call stub) returns through Lr, Sp unchanged", () => {
    const c = chainStop("stub");
    const ctx: ContextRecord = { registers: { ...c.registers } };
    const f = newStackFrame64();
    expect(stackWalk64(ARM64, c.snapshot, undefined, f, ctx)).toBe(true);
    expect(row(f)).toEqual([c.registers["pc"], insn("bigframe", 6), c.labels["F"], c.labels["L"], 0n]);
    expect(stackWalk64(ARM64, c.snapshot, undefined, f, ctx)).toBe(true);
    expect([f.addrPC.offset, f.addrStack.offset]).toEqual([insn("bigframe", 6), c.labels["L"]]);
  });

  it("Wine compatibility: AddrReturn = Lr, then Pc = Lr with Sp and Fp unchanged, then FALSE (Pc equals Lr)", () => {
    const c = chainStop();
    const ctx: ContextRecord = { registers: { ...c.registers } };
    const f = newStackFrame64();
    const rows: Row[] = [];
    const wine = { compatibility: "wine" as const };
    while (stackWalk64Detailed(ARM64, c.snapshot, f, ctx, wine).ok) rows.push(row(f));
    const L = c.labels;
    expect(rows).toEqual([
      [insn("leaf_locals", 4), insn("bigframe", 6), L["F"], L["sp0"], 0n],
      [insn("bigframe", 6), insn("bigframe", 6), L["F"], L["sp0"], 0n],
    ]);
    expect(stackWalk64Detailed(ARM64, c.snapshot, f, ctx, wine).reason).toBe("done");
  });

  it("needs a CONTEXT, and ends when the pc is in no module", () => {
    const c = chainStop();
    expect(stackWalk64Detailed(ARM64, c.snapshot, newStackFrame64())).toMatchObject({ ok: false, reason: "invalid-parameter" });
    const ctx: ContextRecord = { registers: { ...c.registers, pc: 0x7000_0000n, lr: 0x7000_1000n } };
    const f = newStackFrame64();
    // The first call reports the context frame only if its return address can be computed.
    expect(stackWalk64Detailed(ARM64, c.snapshot, f, ctx)).toMatchObject({ ok: false, reason: "unwind-failed" });
  });
});

describe("StackWalk64 for ARM64: the sanity checks of each unwind (arm64.md §3.3 step 6)", () => {
  it("a machine frame that gives the same Pc and Sp again ends the walk instead of repeating the frame", () => {
    const c = chainStop("dispatcher");
    const S = c.labels["dispatcher"]!;
    // The machine frame at S now names the dispatcher itself: sp = S, pc = dispatcher+4.
    const memory = c.snapshot.memory as { read(a: bigint, n: number): Uint8Array | undefined };
    const frameBytes = memory.read(S, 16)!;
    new DataView(frameBytes.buffer, frameBytes.byteOffset).setBigUint64(0, S, true);
    new DataView(frameBytes.buffer, frameBytes.byteOffset).setBigUint64(8, c.registers["pc"]!, true);
    const ctx: ContextRecord = { registers: { ...c.registers } };
    const f = newStackFrame64();
    const r = stackWalk64Detailed(ARM64, c.snapshot, f, ctx);
    expect(r).toMatchObject({ ok: false, reason: "unwind-failed" });
  });

  it("walks the dispatcher's machine frame into the stub, whose return address is still in Lr, and on to main", () => {
    const c = chainStop("dispatcher");
    const ctx: ContextRecord = { registers: { ...c.registers } };
    const f = newStackFrame64();
    const rows: [bigint, bigint][] = [];
    while (stackWalk64(ARM64, c.snapshot, undefined, f, ctx)) rows.push([f.addrPC.offset, f.addrStack.offset]);
    expect(rows).toEqual(c.truth.map((t) => [t.pc, t.sp]));
  });
});
