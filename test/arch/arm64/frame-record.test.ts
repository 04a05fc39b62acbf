/**
 * The ARM64 walkers that need no unwind data (arm64.md Parts 4 and 5): the frame-record chain
 * x29 keeps, with the context frame's return address taken from lr while the function has not
 * stored its record, and stack scanning for a `bl`/`blr` call site, both stripping pointer
 * authentication codes.
 */
import { describe, expect, it } from "vitest";
import { walkThread } from "../../../src/walk/walk.js";
import type { ExecContext } from "../../../src/arch/step.js";
import { runRule } from "../../support/rules.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { breakpadPacMask } from "../../../src/arch/arm64/pac.js";
import { BASE, ImageBuilder, MODULE, ra, snapshotArm64, STACK_BASE } from "./fixture.js";

/** A caller at RVA 0x3000 whose `bl` targets the function at 0x2000: `bl #-0x1000` (imm26 = −0x400). */
const BL_TO_2000 = (0x9400_0000 | (-0x400 & 0x03ff_ffff)) >>> 0;
/** Breakpad's step for the fixture's one module (t.exe, 0x1_4000_0000 + 0x10000): its pointer mask is 0x1_ffff_ffff. */
const ARM64_BREAKPAD_FP = { kind: "arm64-breakpad-fp", modules: [MODULE], mask: breakpadPacMask([MODULE]) } as const;
const word = (w: number): number[] => [w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, (w >>> 24) & 0xff];

function image(): Uint8Array {
  return new ImageBuilder().code(0x2000, 16).at(0x3000, word(BL_TO_2000)).build();
}

describe("the frame-record chain", () => {
  // Two records: frame 1's at r1, frame 2's at r2, whose saved fp of 0 ends the chain.
  it("follows {x29, x30} records up to fp = 0, stripping the saved return addresses", () => {
    const stack = new StackBuilder(STACK_BASE, 8);
    stack.zeros(0x20).mark("r1").u64(stack.ref("r2")).u64(ra(1) | 0x0012_0000_0000_0000n).zeros(0x10).mark("r2").u64(0).u64(ra(2));
    const built = stack.build();
    const snap = snapshotArm64(image(), built, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: built.labels["r1"]!, lr: BASE + 0x1008n });
    const walk = walkThread(snap, snap.threads[0]!, { walker: "frame-pointer" });
    expect(walk.frames.map((f) => [f.addrPC, f.addrStack])).toEqual([
      [BASE + 0x2010n, STACK_BASE],
      [ra(1), built.labels["r1"]! + 16n],
      [ra(2), built.labels["r2"]! + 16n],
    ]);
    expect(walk.frames[1]!.rule.kind).toBe("frame-pointer");
    expect(walk.stop.reason).toBe("end-of-stack");
  });

  it("an x29 that is not 8-byte aligned is no frame record: the chain stops with the reason", () => {
    const stack = new StackBuilder(STACK_BASE, 8);
    stack.zeros(0x20).mark("r1").u64(stack.ref("r2", 4)).u64(ra(1)).zeros(0x10).mark("r2").u64(0).u64(0).u64(ra(2));
    const built = stack.build();
    const snap = snapshotArm64(image(), built, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: built.labels["r1"]!, lr: BASE + 0x1008n });
    const walk = walkThread(snap, snap.threads[0]!, { walker: "frame-pointer" });
    expect(walk.frames.map((f) => f.addrPC)).toEqual([BASE + 0x2010n, ra(1)]);
    expect(walk.stop.reason).toBe("unsupported");
    expect(walk.stop.detail).toContain("is not 8-byte aligned");
  });

  it("at the context frame, takes lr when its call could have entered this function and the record does not hold it", () => {
    const stack = new StackBuilder(STACK_BASE, 8);
    stack.zeros(0x20).mark("r1").u64(0).u64(ra(2));
    const built = stack.build();
    // A leaf at 0x2010, called from the `bl` at 0x3000 (lr = 0x3004), x29 still the caller's record.
    const lr = BASE + 0x3004n;
    const snap = snapshotArm64(image(), built, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: built.labels["r1"]!, lr });
    const walk = walkThread(snap, snap.threads[0]!, { walker: "frame-pointer" });
    expect(walk.frames.map((f) => [f.addrPC, f.addrStack])).toEqual([
      [BASE + 0x2010n, STACK_BASE],
      [lr, STACK_BASE],
      [ra(2), built.labels["r1"]! + 16n],
    ]);
    expect(walk.frames[1]!.rule).toEqual({ kind: "link-register", lr, sp: STACK_BASE });
  });
});

describe("stack scanning", () => {
  it("takes the first word after a `bl` or `blr` in a module, stripped of a pointer authentication code; sp = slot + 8", () => {
    const stack = new StackBuilder(STACK_BASE, 8);
    // 0x1234 is not code; BASE + 0x2004 follows a nop, not a call; ra(3), signed, follows a bl.
    stack.u64(0x1234).u64(BASE + 0x2004n).u64(ra(3) | 0x0055_0000_0000_0000n).u64(0);
    const built = stack.build();
    const snap = snapshotArm64(image(), built, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: 0n, lr: 0n });
    const walk = walkThread(snap, snap.threads[0]!, { walker: "scan" });
    expect(walk.frames[1]).toMatchObject({ addrPC: ra(3), addrStack: STACK_BASE + 24n, trust: "scan" });
  });
});

describe("Breakpad's frame-pointer step (arm64.md Part 5, GetCallerByFramePointer)", () => {
  const PAC = 0x002a_0000_0000_0000n;
  // Two frame records: R0 = {R1, ra(3) signed}, R1 = {0, ra(4)}.
  const s = new StackBuilder(STACK_BASE, 8).zeros(16).mark("R0").u64({ label: "R1", add: 0n }).u64(ra(3) | PAC).zeros(16).mark("R1").u64(0n).u64(ra(4)).build();
  const R0 = s.labels["R0"]!;
  const R1 = s.labels["R1"]!;
  const memory = snapshotArm64(image(), s, {}).memory;
  const step = (registers: Record<string, bigint>, known: Partial<ExecContext> = {}): Record<string, bigint> => {
    const r = runRule(ARM64_BREAKPAD_FP, registers, memory, known);
    if (!r.ok) throw new Error(r.stop.detail);
    return { pc: r.registers["pc"]!, sp: r.registers["sp"]!, fp: r.registers["fp"]!, lr: r.registers["lr"]! };
  };

  it("the context frame: pc = lr as it stands, then x29 and lr from the record at x29 (lr stripped), sp = x29 + 16", () => {
    expect(step({ pc: BASE + 0x2010n, sp: STACK_BASE, fp: R0, lr: ra(2) })).toEqual({ pc: ra(2), sp: R0 + 16n, fp: R1, lr: ra(3) });
  });

  it("PtrauthStrip: Breakpad's mask is the highest module's end with every lower bit set; a value it does not bring into a module stays as it is", () => {
    expect(ARM64_BREAKPAD_FP.mask).toBe(0x1_ffff_ffffn);
    expect(step({ pc: BASE + 0x2010n, sp: STACK_BASE, fp: R0, lr: ra(2) | PAC }).pc).toBe(ra(2));
    expect(step({ pc: BASE + 0x2010n, sp: STACK_BASE, fp: R0, lr: 0x0035_0000_dead_0000n }).pc).toBe(0x0035_0000_dead_0000n);
  });

  it("x29 = 0: the caller keeps sp, with x29 = lr = 0; an unreadable record gives no frame", () => {
    expect(step({ pc: BASE + 0x2010n, sp: STACK_BASE, fp: 0n, lr: ra(2) })).toEqual({ pc: ra(2), sp: STACK_BASE, fp: 0n, lr: 0n });
    const r = runRule(ARM64_BREAKPAD_FP, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: 0x10n, lr: ra(2) }, memory);
    expect(r.ok).toBe(false);
  });

  it("a frame whose rule did not recover lr: CorrectRegLRByFramePointer takes [callee x29 + 8] when [callee x29] is this frame's x29", () => {
    // A scanned frame (pc and sp recovered) whose callee's x29 was R0, which holds this frame's x29 (R1).
    const scanned = { recovered: ["pc", "sp"], foundBy: "scan" as const, calleeFp: R0 };
    expect(step({ pc: ra(5), sp: STACK_BASE + 8n, fp: R1, lr: ra(9) }, scanned).pc).toBe(ra(3));
    // The callee's record does not agree: a scanned frame keeps the lr it was copied with...
    expect(step({ pc: ra(5), sp: STACK_BASE + 8n, fp: R1, lr: ra(9) }, { ...scanned, calleeFp: R1 }).pc).toBe(ra(9));
    // ...and a frame found by call frame info has lr 0 (Breakpad builds it in a zeroed context).
    expect(step({ pc: ra(5), sp: STACK_BASE + 8n, fp: R1, lr: ra(9) }, { ...scanned, calleeFp: R1, foundBy: "cfi" }).pc).toBe(0n);
  });
});
