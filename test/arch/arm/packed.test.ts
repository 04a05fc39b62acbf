/**
 * Packed `.pdata` words (Microsoft's "ARM exception handling", Packed Unwind Data): for every
 * shape the fields allow — H, the integer or VFP register range (Reg, R), L, C, a plain or folded
 * Stack Adjust, each Ret — the canonical prolog and epilog the documentation's two instruction
 * tables describe are run forward here, and the unwinder, given only the packed word, must give the
 * caller's registers back at every instruction of the prolog, in the body and at every instruction
 * of the epilog. Flag 2 (a fragment without a prolog) unwinds in full from its first byte.
 */
import { describe, expect, it } from "vitest";
import { expandArmPacked, packedFields, type ArmPacked } from "../../../src/formats/unwind-data/arm.js";
import { armPackedWord } from "../../../emulator/programs/arm-unwind-encode.js";
import { canonicalPacked } from "../../../emulator/arm/thumb-model.js";
import { isProblem } from "../../../src/formats/unwind-data/problem.js";
import { bytesOf, callerAt, callerOf, expectedOf, ImageBuilder, pick, positions, snapshotArm, unwindOnce, type Insn } from "./fixture.js";

const FN = 0x2000;
const BODY = 8;

/** The canonical prolog and epilog of a packed shape (the emulator's model of the documentation's two tables). */
const canonical = (p: ArmPacked): { prolog: Insn[]; epilog: Insn[] | undefined } => canonicalPacked(p);

/** Every valid packed shape, each with every Ret that applies. */
function shapes(): ArmPacked[] {
  const out: ArmPacked[] = [];
  // 0x3F4-0x3F7 fold into the prolog's push only, 0x3F8-0x3FB into the epilog's pop only, 0x3FC-0x3FF both.
  const adjusts = [0, 3, 0x90, 0x3f5, 0x3f7, 0x3f9, 0x3fc, 0x3ff];
  for (const h of [false, true])
    for (const r of [false, true])
      for (const reg of [0, 3, 7])
        for (const l of [false, true])
          for (const c of [false, true])
            for (const stackAdjust of adjusts)
              for (const ret of [0, 1, 2, 3] as const) {
                if (c && !l) continue;
                if (c && !r && reg === 7) continue;
                if (ret === 0 && !l) continue;
                if (h && !l && ret === 0) continue;
                // With d registers pushed after the integer ones, a fold on one side only leaves the
                // folded words on the wrong side of them: no canonical function has it.
                const pf = stackAdjust >= 0x3f4 && (stackAdjust & 4) !== 0;
                const ef = stackAdjust >= 0x3f4 && (stackAdjust & 8) !== 0;
                if (r && reg !== 7 && pf !== ef) continue;
                out.push({ flag: 1, functionLength: 0, ret, h, reg, r, l, c, stackAdjust });
              }
  return out;
}

function check(p: ArmPacked): void {
  const { prolog, epilog } = canonical(p);
  const length = bytesOf(prolog) + BODY + (epilog === undefined ? 0 : bytesOf(epilog));
  const word = armPackedWord(length, p);
  const image = new ImageBuilder().fn(FN, word).build();
  const caller = callerAt(3);
  for (const { where, machine } of positions(FN, prolog, BODY, epilog, caller)) {
    const snap = snapshotArm(image, machine);
    const got = callerOf(unwindOnce(snap, machine.regs));
    const want = expectedOf(caller);
    expect(pick(got, want), `${word.toString(16)} ${JSON.stringify(p)} at ${where}`).toEqual(want);
  }
}

describe("ARM packed unwind data, unwound at every position against its canonical prolog and epilog", () => {
  it("the fields round-trip", () => {
    for (const p of shapes()) expect(packedFields(armPackedWord(0x40, p))).toEqual({ ...p, functionLength: 0x40 });
  });

  it("H: the four homed argument registers (push {r0-r3}, add sp / ldr pc, [sp], #0x14)", () => {
    for (const p of shapes().filter((s) => s.h)) check(p);
  });

  it("Reg with R = 0: r4-rN pushed", () => {
    for (const p of shapes().filter((s) => !s.h && !s.r)) check(p);
  });

  it("Reg with R = 1: d8-dE pushed, and R = 1, Reg = 7: none", () => {
    for (const p of shapes().filter((s) => !s.h && s.r)) check(p);
  });

  it("L and C: lr and the r11 frame chain (mov r11, sp or add r11, sp, #n)", () => {
    const chained = shapes().filter((s) => s.c);
    expect(chained.length).toBeGreaterThan(20);
    for (const p of chained) check(p);
  });

  it("Stack Adjust folded into the prolog's push (PF) or the epilog's pop (EF)", () => {
    for (const p of shapes().filter((s) => s.stackAdjust >= 0x3f4)) check(p);
  });

  it("Ret 0 (pop {pc}), 1 (bx lr), 2 (b.w) and 3 (no epilog)", () => {
    for (const ret of [0, 1, 2, 3]) {
      const list = shapes().filter((s) => s.ret === ret && !s.h && s.stackAdjust < 0x3f4);
      expect(list.length).toBeGreaterThan(0);
      for (const p of list) check(p);
    }
  });

  it("Flag 2: a fragment has no prolog, so it unwinds in full from its first byte", () => {
    const p: ArmPacked = { flag: 2, functionLength: 0, ret: 3, h: false, reg: 1, r: false, l: true, c: false, stackAdjust: 2 };
    const { prolog } = canonical(p);
    const word = armPackedWord(0x20, p);
    const fragment = 0x2400;
    const image = new ImageBuilder().fn(fragment, word).build();
    const caller = callerAt(5);
    const m = positions(FN, prolog, BODY, undefined, caller).at(-1)!.machine;
    m.regs["pc"] = 0x0040_0000n + BigInt(fragment);
    const got = callerOf(unwindOnce(snapshotArm(image, m), m.regs));
    const want = expectedOf(caller);
    expect(pick(got, want)).toEqual(want);
    const data = expandArmPacked(word);
    expect(!isProblem(data) && data.fragment).toBe(true);
  });

  it("the combinations the documentation calls unsupported are problems, not guesses", () => {
    const bad = (p: Partial<Omit<ArmPacked, "functionLength">>): string => {
      const d = expandArmPacked(armPackedWord(8, { flag: 1, ret: 1, h: false, reg: 0, r: false, l: false, c: false, stackAdjust: 0, ...p }));
      return isProblem(d) ? d.problem : "";
    };
    expect(bad({ c: true, l: false })).toMatch(/C is set without L/);
    expect(bad({ c: true, l: true, reg: 7 })).toMatch(/Reg 7/);
    expect(bad({ ret: 0, l: false })).toMatch(/Ret 0/);
  });
});
