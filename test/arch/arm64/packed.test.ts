/**
 * Packed unwind data (arm64.md §1.2, §1.6): one test per shape of the packed word, each checking
 * the codes the Windows unwinder's expansion gives (stored order, the codes nearest the body first)
 * and the epilog's first code, worked out by hand from the expansion's rules and Microsoft's
 * canonical prologs; then real words clang-14 emits, unwound at every prolog instruction.
 */
import { describe, expect, it } from "vitest";
import { expandPacked, packedFields } from "../../../src/formats/unwind-data/arm64-xdata.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { BASE, CALLER, calleeRegisters, ImageBuilder, packed, ra, recoveredOf, snapshotArm64, STACK_BASE, unwindStep } from "./fixture.js";

/** The stored codes as hex and the epilog index. */
function expansion(word: number): { codes: string; epilog: number | undefined } {
  const d = expandPacked(word);
  const end = d.codes.length - [...d.codes].reverse().findIndex((b) => b !== 0);
  return { codes: Buffer.from(d.codes.subarray(0, end)).toString("hex"), epilog: d.epilogInHeader ? d.epilogIndex : undefined };
}

describe("the fields of a packed word", () => {
  it("Microsoft's Example 1, 0x416101ED: Flag 1, FunctionLength 123, RegF 0, RegI 1, H 0, CR 3, FrameSize 130", () => {
    expect(packedFields(0x416101ed)).toEqual({ flag: 1, functionLength: 123, regF: 0, regI: 1, h: false, cr: 3, frameSize: 130 });
    // `str x19, [sp, #-16]!; sub sp, sp, #0x810; stp fp, lr, [sp]; mov fp, sp`.
    expect(expansion(0x416101ed)).toEqual({ codes: "e140c081d401e4", epilog: 1 });
  });
});

describe("one expansion per shape", () => {
  const shapes: [string, Parameters<typeof packed>[0], string, number | undefined][] = [
    ["CR 0, nothing saved: one allocation", { length: 9, frameSize: 2 }, "02e4", 0],
    ["CR 1, RegI 0: lr alone, pre-indexed (save_reg_x with X = 11)", { length: 20, cr: 1, frameSize: 2 }, "01d561e4", 0],
    ["CR 1, RegI 1: sp moves first, then save_lrpair (no pre-indexed stp of a register with lr)", { length: 20, cr: 1, regI: 1, frameSize: 2 }, "01d60001e4", 0],
    ["CR 1, RegI 5: pairs then x23 with lr (clang's 5 x-registers)", { length: 26, cr: 1, regI: 5, frameSize: 3 }, "d684c882cc05e4", 0],
    ["CR 0, RegI 1: save_reg_x", { length: 20, regI: 1, frameSize: 1 }, "d401e4", 0],
    ["CR 0, RegI 2: save_regp_x", { length: 20, regI: 2, frameSize: 1 }, "cc01e4", 0],
    ["CR 3, nothing saved: save_fplr_x and set_fp (clang's alloca function); the epilog skips set_fp", { length: 16, cr: 3, frameSize: 1 }, "e181e4", 1],
    ["CR 3 with integer and FP pairs", { length: 40, cr: 3, regI: 2, regF: 1, frameSize: 6 }, "e187d802cc03e4", 1],
    ["CR 2: pac_sign_lr is the first prolog instruction, the last code", { length: 16, cr: 2, frameSize: 1 }, "e181fce4", 1],
    ["RegF 1 (two registers) alone: save_fregp_x", { length: 16, regF: 1, frameSize: 1 }, "da01e4", 0],
    ["RegF 2 (three registers): a pair then save_freg", { length: 16, regF: 2, frameSize: 2 }, "dc82da03e4", 0],
    ["CR 1, RegF 4: lr, then two FP pairs and d12 (clang's 5 d-registers)", { length: 28, cr: 1, regF: 4, frameSize: 3 }, "dd05d883d801d565e4", 0],
    ["H with nothing saved: the homes are in the local area, outside the prolog (no nops)", { length: 20, h: true, frameSize: 4 }, "04e4", 0],
    ["H with saved registers: four nops in the prolog, and an epilog copy without them", { length: 60, regI: 2, h: true, frameSize: 6 }, "01e3e3e3e3cc09e401cc09e4", 8],
    ["the largest local area of one alloc_m: 8176 bytes", { length: 20, frameSize: 511 }, "c1ffe4", 0],
    ["CR 3 with a 512-byte local area: still save_fplr_x (cpp-docs issue 3830)", { length: 20, cr: 3, frameSize: 32 }, "e1bfe4", 1],
    ["CR 3 with 528 bytes: an allocation, then save_fplr(0)", { length: 20, cr: 3, frameSize: 33 }, "e140c021e4", 1],
    ["Flag 2, a fragment: end_c first, so the prolog is empty and every code runs; no epilog", { flag: 2, length: 20, cr: 3, frameSize: 1 }, "e5e181e4", undefined],
  ];
  for (const [name, fields, codes, epilog] of shapes) {
    it(name, () => {
      expect(expansion(packed(fields))).toEqual({ codes, epilog });
    });
  }

  it("the largest case in the Windows unwinder's comment: RegF 7, RegI 10, H 1, CR 2, FrameSize 500", () => {
    const e = expansion(packed({ length: 100, regF: 7, regI: 10, h: true, cr: 2, frameSize: 500 }));
    expect(e.codes).toBe("e140c1e7e3e3e3e3d990d90ed88cd80aca08c986c904c882cc19fce4" + "e140c1e7d990d90ed88cd80aca08c986c904c882cc19fce4");
    expect(e.epilog).toBe(28 + 1);
  });
});

describe("unwinding packed functions at every prolog and epilog instruction", () => {
  /** clang-14's 5-d-register function G2 (0x01A08071): `str x30,[sp,#-48]!; stp d8,d9,[sp,#8]; stp d10,d11,[sp,#24]; str d12,[sp,#40]`. */
  const FN = 0x2000;
  const image = new ImageBuilder().code(FN, 28).fn(FN, 0x01a08071).build();
  const frame = new StackBuilder(STACK_BASE, 8).u64(ra(1)).u64(CALLER["d8"]!).u64(CALLER["d9"]!).u64(CALLER["d10"]!).u64(CALLER["d11"]!).u64(CALLER["d12"]!).build();
  const all = { pc: ra(1), sp: STACK_BASE + 48n, lr: ra(1), d8: CALLER["d8"], d9: CALLER["d9"], d10: CALLER["d10"], d11: CALLER["d11"], d12: CALLER["d12"] };
  /** What the unwind restores with the first `n` prolog instructions run. */
  const afterProlog = [
    { pc: ra(9), sp: STACK_BASE + 48n },
    { pc: ra(1), sp: STACK_BASE + 48n, lr: ra(1) },
    { pc: ra(1), sp: STACK_BASE + 48n, lr: ra(1), d8: CALLER["d8"], d9: CALLER["d9"] },
    { pc: ra(1), sp: STACK_BASE + 48n, lr: ra(1), d8: CALLER["d8"], d9: CALLER["d9"], d10: CALLER["d10"], d11: CALLER["d11"] },
    all,
  ];

  it("in the prolog, only the instructions already run are undone", () => {
    for (let k = 0; k <= 4; k++) {
      // Before instruction k the stack pointer is already moved once the first has run.
      const sp = k === 0 ? STACK_BASE + 48n : STACK_BASE;
      const r = unwindStep(snapshotArm64(image, frame, {}), calleeRegisters({ pc: BASE + BigInt(FN + 4 * k), sp, lr: ra(9) }));
      expect(recoveredOf(r), `prolog instruction ${k}`).toEqual(afterProlog[k]);
    }
  });

  it("in the epilog (the last 5 instructions: 4 restores and ret), the instructions already run are skipped", () => {
    // At the epilog's start everything is restored; at `ret` (offset 27) only pc = lr remains.
    const at = (n: number) => unwindStep(snapshotArm64(image, frame, {}), calleeRegisters({ pc: BASE + BigInt(FN + 4 * (23 + n)), sp: STACK_BASE, lr: ra(9) }));
    expect(recoveredOf(at(0))).toEqual(all);
    // Two instructions in: d12, then d10/d11 were reloaded; d8/d9, lr and sp remain (arm64.md §1.8 G2 at +0x64).
    expect(recoveredOf(at(2))).toEqual({ pc: ra(1), sp: STACK_BASE + 48n, lr: ra(1), d8: CALLER["d8"], d9: CALLER["d9"] });
    const atRet = unwindStep(snapshotArm64(image, frame, {}), calleeRegisters({ pc: BASE + BigInt(FN + 4 * 27), sp: STACK_BASE + 48n, lr: ra(1) }));
    expect(recoveredOf(atRet)).toEqual({ pc: ra(1), sp: STACK_BASE + 48n });
  });

  it("a CR 3 function's `mov sp, x29` before its epilog is body: set_fp then save_fplr_x, still right", () => {
    // G3 (0x00E00041): `stp x29,x30,[sp,#-16]!; mov x29,sp` … `mov sp,x29` at 13, `ldp x29,x30,[sp],#16` 14, `ret` 15.
    const g3 = new ImageBuilder().code(FN, 16).fn(FN, 0x00e00041).build();
    const fp = STACK_BASE + 0x40n;
    const s = new StackBuilder(STACK_BASE, 8).zeros(0x40).u64(CALLER["fp"]!).u64(ra(2)).build();
    const restored = { pc: ra(2), sp: fp + 16n, fp: CALLER["fp"], lr: ra(2) };
    // At 13 sp is still below fp (an alloca); at 14 `mov sp, x29` has run.
    expect(recoveredOf(unwindStep(snapshotArm64(g3, s, {}), calleeRegisters({ pc: BASE + BigInt(FN + 4 * 13), sp: STACK_BASE, fp })))).toEqual(restored);
    expect(recoveredOf(unwindStep(snapshotArm64(g3, s, {}), calleeRegisters({ pc: BASE + BigInt(FN + 4 * 14), sp: fp, fp })))).toEqual(restored);
  });

  it("a Flag 2 fragment unwinds every parent code wherever the pc is", () => {
    const frag = new ImageBuilder().code(FN, 16).fn(FN, packed({ flag: 2, length: 16, cr: 3, frameSize: 1 })).build();
    const fp = STACK_BASE;
    const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["fp"]!).u64(ra(3)).build();
    for (const k of [0, 1, 15]) {
      const r = unwindStep(snapshotArm64(frag, s, {}), calleeRegisters({ pc: BASE + BigInt(FN + 4 * k), sp: STACK_BASE, fp }));
      expect(recoveredOf(r), `instruction ${k}`).toEqual({ pc: ra(3), sp: fp + 16n, fp: CALLER["fp"], lr: ra(3) });
    }
  });
});
