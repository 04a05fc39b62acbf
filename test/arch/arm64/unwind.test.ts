/**
 * The ARM64 unwinder around the codes (arm64.md §1.1, §1.3, §1.7, §1.10, §1.11): `.pdata` lookup,
 * the `.xdata` header, prolog and epilog positions with several epilog scopes, a return address in
 * a prolog after `bl __chkstk`, a no-return call at the end of a function, Flag 3 entries, leaves
 * without an entry, and bad data stopping the frame with a reason.
 */
import { describe, expect, it } from "vitest";
import { StackBuilder } from "../../support/stack-builder.js";
import { stepText } from "../../support/rules.js";
import { BASE, CALLER, calleeRegisters, ImageBuilder, ra, recoveredOf, snapshotArm64, STACK_BASE, stopOf, unwindStep, xdata } from "./fixture.js";

const FN = 0x2000;
const at = (k: number): bigint => BASE + BigInt(FN + 4 * k);

describe(".pdata lookup", () => {
  const image = new ImageBuilder()
    .code(0x2000, 8)
    .code(0x2100, 8)
    .fn(0x2000, xdata({ length: 8, codes: [0x81, 0xe4], epilog: 0 }))
    .fn(0x2100, xdata({ length: 8, codes: [0x01, 0xe4], epilog: 0 }))
    .build();
  const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["fp"]!).u64(ra(0)).build();

  it("the last entry starting at or below the pc, if the pc lies within its 4 × FunctionLength bytes", () => {
    expect(stepText(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: BASE + 0x2110n, sp: STACK_BASE, lr: ra(1) })))).toContain("rva=0x2100");
    // The first entry's last instruction, and the first byte past it (no entry: a leaf).
    expect(stepText(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: BASE + 0x201cn, sp: STACK_BASE, lr: ra(1) })))).toContain("rva=0x2000");
    const past = unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: BASE + 0x2020n, sp: STACK_BASE, lr: ra(1) }));
    expect(recoveredOf(past)).toEqual({ pc: ra(1), sp: STACK_BASE });
    expect(stepText(past)).toBe("leaf (no .pdata entry at rva 0x2020): pc=lr, sp unchanged");
  });

  it("an unsorted table stops every frame of its module with the reason", () => {
    const bad = new ImageBuilder().code(0x2000, 8).fn(0x2100, 0x01000025).fn(0x2000, 0x01000025).build("as-given");
    expect(stopOf(unwindStep(snapshotArm64(bad, s, {}), calleeRegisters({ pc: BASE + 0x2004n, sp: STACK_BASE })))).toContain("not sorted");
  });
});

describe("the .xdata header", () => {
  const s = new StackBuilder(STACK_BASE, 8).zeros(32).build();

  it("a version other than 0 is refused", () => {
    const image = new ImageBuilder().code(FN, 8).fn(FN, xdata({ length: 8, codes: [0x02, 0xe4], version: 1 })).build();
    expect(stopOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(4), sp: STACK_BASE })))).toContain("version 1");
  });

  it("the extension word carries the epilog count and code words when both header fields are 0; an exception handler's RVA follows the codes", () => {
    const image = new ImageBuilder()
      .code(FN, 8)
      .fn(FN, xdata({ length: 8, codes: [0x02, 0xe4], scopes: [{ start: 6, index: 0 }], extended: true, handler: 0x3000 }))
      .build();
    const r = unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(7), sp: STACK_BASE, lr: ra(2) }));
    // At the scope's second instruction (the ret): the allocation is already undone.
    expect(recoveredOf(r)).toEqual({ pc: ra(2), sp: STACK_BASE });
    expect(stepText(r)).toContain("epilog@+0x18+1");
  });

  it("an epilog index past the code bytes is bad data", () => {
    const image = new ImageBuilder().code(FN, 8).fn(FN, xdata({ length: 8, codes: [0x02, 0xe4], epilog: 9 })).build();
    expect(stopOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(4), sp: STACK_BASE })))).toContain("past the 4 code bytes");
  });
});

describe("epilog scopes (E = 0)", () => {
  // Prolog: `stp x29,lr,[sp,#-32]!; stp x19,x20,[sp,#16]` (codes save_regp(x19,16) save_fplr_x(32) end).
  // Epilog 1 at 10: `ldp x19,x20; ldp x29,lr; ret` shares the codes (index 0); epilog 2 at 20 has
  // its own: `ldp x29,lr,[sp],#32; b ext` (save_fplr_x(32) end, index 4), x19/x20 restored earlier.
  const image = new ImageBuilder()
    .code(FN, 24)
    .fn(FN, xdata({ length: 24, codes: [0xc8, 0x02, 0x83, 0xe4, 0x83, 0xe4], scopes: [{ start: 10, index: 0 }, { start: 20, index: 4 }] }))
    .build();
  const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["fp"]!).u64(ra(3)).u64(CALLER["x19"]!).u64(CALLER["x20"]!).build();
  const full = { pc: ra(3), sp: STACK_BASE + 32n, fp: CALLER["fp"], lr: ra(3), x19: CALLER["x19"], x20: CALLER["x20"] };

  it("the body between the scopes undoes the whole prolog", () => {
    for (const k of [2, 9, 13, 19]) {
      expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(k), sp: STACK_BASE }))), `at ${k}`).toEqual(full);
    }
  });

  it("inside the first scope, the instructions run are skipped", () => {
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(11), sp: STACK_BASE })))).toEqual({ pc: ra(3), sp: STACK_BASE + 32n, fp: CALLER["fp"], lr: ra(3) });
    // At its ret (the third instruction): nothing is left but pc = lr.
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(12), sp: STACK_BASE + 32n, lr: ra(3) })))).toEqual({ pc: ra(3), sp: STACK_BASE + 32n });
  });

  it("the second scope runs its own codes: at its first instruction sp is still down, at the tail branch it is not", () => {
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(20), sp: STACK_BASE })))).toEqual({ pc: ra(3), sp: STACK_BASE + 32n, fp: CALLER["fp"], lr: ra(3) });
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(21), sp: STACK_BASE + 32n, lr: ra(3) })))).toEqual({ pc: ra(3), sp: STACK_BASE + 32n });
  });
});

describe("return addresses in caller frames", () => {
  it("inside a prolog after `bl __chkstk` (clang's 8000-byte frame, G4): looked up at ra − 4, the allocation not yet made is skipped", () => {
    // stp x29,x30,[sp,#-16]!; mov x15,#500; bl __chkstk; sub sp,sp,x15,lsl #4 … header 0x1840000D, scope 0x01800009.
    const image = new ImageBuilder()
      .code(FN, 13)
      .fn(FN, xdata({ length: 13, codes: [0xc1, 0xf4, 0xe3, 0xe3, 0x81, 0xe4, 0xc1, 0x00, 0xc0, 0xf4, 0x81, 0xe4], scopes: [{ start: 9, index: 6 }] }))
      .build();
    const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["fp"]!).u64(ra(4)).build();
    // The frame __chkstk returns to: pc = the `sub` (+0xC), sp after the stp.
    const r = unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(3), sp: STACK_BASE }), { index: 1 });
    expect(recoveredOf(r)).toEqual({ pc: ra(4), sp: STACK_BASE + 16n, fp: CALLER["fp"], lr: ra(4) });
    expect(stepText(r)).toContain("prolog+2 (2 skipped)");
  });

  it("after a no-return call that ends its function: ra is the next function's start, ra − 4 the call (body, every code)", () => {
    // G5: `str x30,[sp,#-16]!` … a scope at +16 `ldr x30,[sp],#16; b ext` … `bl die` as the last instruction.
    const image = new ImageBuilder()
      .code(FN, 8)
      .code(FN + 32, 4)
      .fn(FN, xdata({ length: 8, codes: [0xd5, 0x61, 0xe4, 0xd5, 0x61, 0xe4], scopes: [{ start: 4, index: 3 }] }))
      .fn(FN + 32, 0x01000025)
      .build();
    const s = new StackBuilder(STACK_BASE, 8).u64(ra(5)).u64(0).build();
    const r = unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(8), sp: STACK_BASE }), { index: 1 });
    expect(recoveredOf(r)).toEqual({ pc: ra(5), sp: STACK_BASE + 16n, lr: ra(5) });
    expect(stepText(r)).toContain("rva=0x2000 xdata ops=");
  });
});

describe("fragments and chaining", () => {
  it("an epilog-only region (end_c first) is never in a prolog; its epilog's index points at the parent's codes", () => {
    // end_c set_fp save_fplr_x(16) end; one scope at 6 with index 1.
    const image = new ImageBuilder().code(FN, 8).fn(FN, xdata({ length: 8, codes: [0xe5, 0xe1, 0x81, 0xe4], scopes: [{ start: 6, index: 1 }] })).build();
    const fp = STACK_BASE;
    const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["fp"]!).u64(ra(6)).build();
    const full = { pc: ra(6), sp: fp + 16n, fp: CALLER["fp"], lr: ra(6) };
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(0), sp: STACK_BASE - 0x20n, fp })))).toEqual(full);
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(6), sp: STACK_BASE - 0x20n, fp })))).toEqual(full);
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(7), sp: fp, fp })))).toEqual(full);
  });

  it("Flag 3: UnwindData − 3 is the parent entry, unwound as at the parent's start; bit 2 set is refused", () => {
    const builder = new ImageBuilder().code(FN, 8).code(FN + 0x100, 8).fn(FN, 0x00e00041);
    // The parent's entry is entry 0 of the table (BeginAddress FN).
    const image = builder.fn(FN + 0x100, ImageBuilder.entryRva(0) + 3).build();
    const s = new StackBuilder(STACK_BASE, 8).zeros(16).build();
    const r = unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: BASE + BigInt(FN + 0x104), sp: STACK_BASE, lr: ra(7) }));
    // At the parent's start no prolog code has run: only pc = lr.
    expect(recoveredOf(r)).toEqual({ pc: ra(7), sp: STACK_BASE });
    expect(stepText(r)).toContain("Flag 3: as its parent at rva 0x2000");
    const bad = new ImageBuilder().code(FN, 8).code(FN + 0x100, 8).fn(FN, 0x00e00041).fn(FN + 0x100, ImageBuilder.entryRva(0) + 7).build();
    expect(stopOf(unwindStep(snapshotArm64(bad, s, {}), calleeRegisters({ pc: BASE + BigInt(FN + 0x104), sp: STACK_BASE })))).toContain("bit 2 set");
  });
});

describe("leaves without an entry (arm64.md §1.10)", () => {
  const image = new ImageBuilder().code(FN, 8).build();
  const s = new StackBuilder(STACK_BASE, 8).zeros(16).build();

  it("pc = lr, sp unchanged", () => {
    expect(recoveredOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: at(2), sp: STACK_BASE, lr: ra(8) })))).toEqual({ pc: ra(8), sp: STACK_BASE });
  });

  it("a pc that already is lr makes no progress: RtlVirtualUnwind's check on the raw pc", () => {
    expect(stopOf(unwindStep(snapshotArm64(image, s, {}), calleeRegisters({ pc: ra(8), sp: STACK_BASE, lr: ra(8) }), { index: 1 }))).toContain("no-progress");
  });
});

describe("save_next ranges (arm64.md §1.5)", () => {
  it("x19 to x30 through save_next: the Windows reading, no crossover into d8", () => {
    // 5 × save_next + save_regp_x(x19, 96): x19…x30 (12 registers) from [sp], then sp += 96.
    const s = new StackBuilder(STACK_BASE, 8);
    for (let i = 0; i < 10; i++) s.u64(CALLER[`x${19 + i}`]!);
    s.u64(CALLER["fp"]!).u64(ra(9));
    const image = new ImageBuilder().code(FN, 32).fn(FN, xdata({ length: 32, codes: [0xe6, 0xe6, 0xe6, 0xe6, 0xe6, 0xcc, 0x0b, 0xe4] })).build();
    const r = unwindStep(snapshotArm64(image, s.build(), {}), calleeRegisters({ pc: at(20), sp: STACK_BASE }));
    const xs = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`x${19 + i}`, CALLER[`x${19 + i}`]]));
    expect(recoveredOf(r)).toEqual({ pc: ra(9), sp: STACK_BASE + 96n, fp: CALLER["fp"], lr: ra(9), ...xs });
  });

  it("save_next continues an FP pair code the same way", () => {
    const s = new StackBuilder(STACK_BASE, 8);
    for (let i = 0; i < 4; i++) s.u64(CALLER[`d${8 + i}`]!);
    const image = new ImageBuilder().code(FN, 32).fn(FN, xdata({ length: 32, codes: [0xe6, 0xda, 0x03, 0xe4] })).build();
    const r = unwindStep(snapshotArm64(image, s.build(), {}), calleeRegisters({ pc: at(20), sp: STACK_BASE, lr: ra(10) }));
    expect(recoveredOf(r)).toEqual({ pc: ra(10), sp: STACK_BASE + 32n, d8: CALLER["d8"], d9: CALLER["d9"], d10: CALLER["d10"], d11: CALLER["d11"] });
  });
});
