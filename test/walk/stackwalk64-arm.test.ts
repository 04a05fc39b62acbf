/**
 * The StackWalk64 facade for IMAGE_FILE_MACHINE_ARMNT call by call over the chain of
 * test/arch/arm/chain.ts, whose frames come from its prologs: each call unwinds the CONTEXT in
 * place with the image's .pdata/.xdata (Pc − 2 after a return), AddrReturn from an unwind of a
 * copy, AddrFrame r11, FuncTableEntry the .pdata entry's address; Wine compatibility gives two
 * frames from Pc and Lr.
 */
import { describe, expect, it } from "vitest";
import { AddressMode } from "../../src/model/address.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../../src/model/context-layout.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";
import { newStackFrame64, type StackFrame64 } from "../../src/model/stackframe.js";
import { stackWalk64, stackWalk64Detailed, type ContextRecord } from "../../src/walk/stackwalk64.js";
import { BASE } from "../arch/arm/fixture.js";
import { chainStop } from "../arch/arm/chain.js";

const ARMNT = IMAGE_FILE_MACHINE.ARMNT;
type Row = [pc: bigint, ret: bigint, frame: bigint, stack: bigint, entry: bigint];
const row = (f: StackFrame64): Row => [f.addrPC.offset, f.addrReturn.offset, f.addrFrame.offset, f.addrStack.offset, f.funcTableEntry];
/** The .pdata entry i (outer, middle: sorted by start) as the image maps it. */
const entry = (i: number): bigint => BASE + BigInt(0xc000 + 8 * i);

describe("StackWalk64 for ARMNT", () => {
  it("native model: one unwind per call, AddrReturn from a copy, the .pdata entry as FuncTableEntry; a frame whose return cannot be computed is not reported", () => {
    const c = chainStop();
    const ctx: ContextRecord = { registers: { ...c.machine.regs, cpsr: 0x20n } };
    const f = newStackFrame64();
    const rows: Row[] = [];
    while (stackWalk64(ARMNT, c.snapshot, undefined, f, ctx)) {
      rows.push(row(f));
      expect(f.params).toEqual([0n, 0n, 0n, 0n]);
      expect([f.far, f.virtual]).toEqual([1, 1]);
      expect(f.addrBStore).toEqual({ offset: 0n, segment: 0, mode: 0 });
      expect(f.addrPC.mode).toBe(AddressMode.Flat);
    }
    const t = c.truth;
    const r11 = c.machine.regs["r11"]!;
    expect(rows).toEqual([
      // The leaf has no .pdata entry: FuncTableEntry NULL.
      [t[0]!.pc, t[1]!.pc, r11, t[0]!.sp, 0n],
      [t[1]!.pc, t[2]!.pc, r11, t[1]!.sp, entry(1)],
      [t[2]!.pc, t[3]!.pc, r11, t[2]!.sp, entry(0)],
    ]);
    expect((ctx.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL).toBe(CONTEXT_UNWOUND_TO_CALL);
    // The caller region has no entry and pc already is lr: no return address, so no fourth frame.
    expect(stackWalk64Detailed(ARMNT, c.snapshot, f, ctx).reason).toBe("done");
  });

  it("Wine compatibility: Pc, then Lr, then the end", () => {
    const c = chainStop();
    const ctx: ContextRecord = { registers: { ...c.machine.regs } };
    const f = newStackFrame64();
    const pcs: bigint[] = [];
    while (stackWalk64Detailed(ARMNT, c.snapshot, f, ctx, { compatibility: "wine" }).ok) pcs.push(f.addrPC.offset);
    expect(pcs).toEqual([c.truth[0]!.pc, c.truth[1]!.pc]);
  });

  it("without a CONTEXT the ARM walker refuses the call", () => {
    const c = chainStop();
    const r = stackWalk64Detailed(ARMNT, c.snapshot, newStackFrame64(), undefined);
    expect(r).toMatchObject({ ok: false, reason: "invalid-parameter" });
  });
});
