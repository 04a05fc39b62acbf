/**
 * ARM `.pdata` lookups and `.xdata` layouts: the Thumb bit in function starts (an address is
 * found in the function from its first halfword to its last), a gap between entries is a leaf,
 * a Flag 3 entry (reserved) stops only its own frames, an unsorted table stops every frame of the
 * module with the reason, SymFunctionTableAccess64 gives the entry's address; `.xdata` records
 * with several epilog scopes, with the F bit (a fragment), and with the extension word unwind as
 * the instructions they describe, run forward.
 */
import { describe, expect, it } from "vitest";
import { ARM_CODE, armPackedWord, armXdataBytes } from "../../../emulator/programs/arm-unwind-encode.js";
import { armFunctionTableAccess } from "../../../src/arch/arm/function-table.js";
import { BASE, bytesOf, callerAt, callerOf, expectedOf, ImageBuilder, type Machine, pick, positions, snapshotArm, unwindOnce, type Insn } from "./fixture.js";

const FN = 0x2000;
const PROLOG: Insn[] = [{ op: "push", regs: ["r4", "r5", "lr"], size: 2 }, { op: "sub-sp", n: 8, size: 2 }];
const WORD = armPackedWord(0x20, { ret: 1, h: false, reg: 1, r: false, l: true, c: false, stackAdjust: 2 });

function bodyMachine(pcOffset: number): Machine {
  const m = positions(FN, PROLOG, 8, undefined, callerAt(2)).at(-1)!.machine;
  m.regs["pc"] = BASE + BigInt(FN + pcOffset);
  return m;
}

describe("ARM .pdata lookups", () => {
  it("the Thumb bit in the start takes no part: the first and the last halfword are in the function, the next is not", () => {
    const image = new ImageBuilder().fn(FN, WORD).build();
    const first = bodyMachine(0);
    expect(unwindOnce(snapshotArm(image, first), first.regs)).toMatchObject({ ok: true, rule: { function: { begin: FN, form: "packed" }, position: { at: "prolog", offset: 0 } } });
    // The last halfword: the epilog's bx lr, everything undone already.
    const last = bodyMachine(0x1e);
    expect(unwindOnce(snapshotArm(image, last), last.regs)).toMatchObject({ ok: true, rule: { function: { begin: FN }, position: { at: "epilog", offset: 6 } } });
    const past = bodyMachine(0x20);
    const r = unwindOnce(snapshotArm(image, past), past.regs);
    expect(r?.ok && r.rule).toMatchObject({ kind: "arm-unwind", function: { leafRva: 0x2020 } });
  });

  it("a Flag 3 entry stops only its own frames; an unsorted table stops every frame of the module", () => {
    const image = new ImageBuilder().fn(FN, WORD).fn(0x3000, 0x0000_0013).build();
    const m = bodyMachine(8);
    expect(callerOf(unwindOnce(snapshotArm(image, m), m.regs))["pc"]).toBe(callerAt(2)["lr"]);
    m.regs["pc"] = BASE + 0x3004n;
    const r = unwindOnce(snapshotArm(image, m), m.regs);
    expect(r?.ok).toBe(false);
    if (r !== undefined && !r.ok) expect(r.stop.detail).toMatch(/reserved Flag 3/);
    const unsorted = new ImageBuilder().fn(FN, WORD).fn(0x3000, WORD).build();
    const view = new DataView(unsorted.buffer);
    // Swap the two entries in place.
    const [b0, u0, b1, u1] = [0, 4, 8, 12].map((o) => view.getUint32(0xc000 + o, true));
    view.setUint32(0xc000, b1!, true);
    view.setUint32(0xc004, u1!, true);
    view.setUint32(0xc008, b0!, true);
    view.setUint32(0xc00c, u0!, true);
    const u = unwindOnce(snapshotArm(unsorted, bodyMachine(8)), bodyMachine(8).regs);
    expect(u?.ok).toBe(false);
    if (u !== undefined && !u.ok) expect(u.stop.detail).toMatch(/not sorted/);
  });

  it("SymFunctionTableAccess64 gives the covering entry's address, 0 in a gap", () => {
    const image = new ImageBuilder().fn(FN, WORD).fn(0x3000, WORD).build();
    const snap = snapshotArm(image, bodyMachine(8));
    expect(armFunctionTableAccess(snap, BASE + 0x3004n)).toBe(BASE + 0xc008n);
    expect(armFunctionTableAccess(snap, BASE + 0x2804n)).toBe(0n);
  });
});

describe("ARM .xdata layouts", () => {
  it("two epilog scopes, one conditional, each unwound from its own codes at every instruction", () => {
    const epilog: Insn[] = [{ op: "add-sp", n: 8, size: 2 }, { op: "pop", regs: ["r4", "r5", "pc"], size: 2 }];
    const prologCodes = [...ARM_CODE.add_sp(8), ...ARM_CODE.pop_r4(5, true), ...ARM_CODE.end()];
    // Both epilogs share the prolog's codes (add sp, pop {r4, r5, pc}: FF ends them).
    const first = bytesOf(PROLOG) + 6;
    const second = first + bytesOf(epilog) + 6;
    const length = second + bytesOf(epilog);
    const image = new ImageBuilder()
      .fn(FN, armXdataBytes({ length, codes: prologCodes, scopes: [{ start: first, index: 0, condition: 0x0 }, { start: second, index: 0 }] }))
      .build();
    const caller = callerAt(4);
    for (const start of [first, second]) {
      for (const { where, machine } of positions(FN, PROLOG, start - bytesOf(PROLOG), epilog, caller)) {
        // The second scope's "body" snapshot would stand in the first epilog.
        if (start === second && where === "body") continue;
        const got = callerOf(unwindOnce(snapshotArm(image, machine), machine.regs));
        expect(pick(got, expectedOf(caller)), `scope at +${start} ${where}`).toEqual(expectedOf(caller));
      }
    }
  });

  it("F (a fragment): no prolog, so its first byte unwinds in full; the extension word's counts read the same", () => {
    const image = new ImageBuilder()
      .fn(FN, WORD)
      .fn(0x2400, armXdataBytes({ length: 0x40, fragment: true, extended: true, codes: [...ARM_CODE.add_sp(8), ...ARM_CODE.pop_r4(5, true), ...ARM_CODE.end()] }))
      .build();
    const m = bodyMachine(8);
    m.regs["pc"] = BASE + 0x2400n;
    expect(pick(callerOf(unwindOnce(snapshotArm(image, m), m.regs)), expectedOf(callerAt(2)))).toEqual(expectedOf(callerAt(2)));
  });
});
