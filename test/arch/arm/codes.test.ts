/**
 * Every unwind code of Microsoft's "ARM exception handling" table, one test each: the code, as
 * the emulator's encoder writes it from the documentation, decodes to what the table says, and a
 * function whose prolog is the instruction the code describes — run forward here — unwinds to
 * its caller's registers from every prolog position and from the body. The end codes are tested
 * in epilogs, where FD and FE count one more 16- or 32-bit instruction; reserved codes stop the
 * frame with the reason.
 */
import { describe, expect, it } from "vitest";
import { ARM_CODE, armXdataBytes } from "../../../emulator/programs/arm-unwind-encode.js";
import { armCodeLength, armCodeOpSize, decodeArmCode, type ArmCode } from "../../../src/formats/unwind-data/arm.js";
import { bytesOf, callerAt, callerOf, expectedOf, ImageBuilder, pick, positions, snapshotArm, unwindOnce, type Insn } from "./fixture.js";

const FN = 0x2000;
const BODY = 6;

/** Decodes a code written by the encoder: its decoded form, its length and its instruction size. */
function decoded(bytes: readonly number[]): { code: ArmCode; length: number; opSize: number } {
  const { code, length } = decodeArmCode(Uint8Array.from(bytes), 0);
  expect(length).toBe(bytes.length);
  expect(armCodeLength(bytes[0]!)).toBe(bytes.length);
  return { code, length, opSize: armCodeOpSize(bytes[0]!) };
}

/** A function with `prolog` described by `codes` (undo order, end appended) unwinds correctly everywhere but in its epilog. */
function unwindsEverywhere(prolog: Insn[], codes: number[], saved?: readonly string[], body = BODY, alloca = 0): void {
  const length = bytesOf(prolog) + body + 2;
  const image = new ImageBuilder().fn(FN, armXdataBytes({ length, codes: [...codes, ...ARM_CODE.end()] })).build();
  const caller = callerAt(7);
  for (const { where, machine } of positions(FN, prolog, body, undefined, caller)) {
    if (where === "body") machine.regs["sp"]! -= BigInt(alloca);
    const got = callerOf(unwindOnce(snapshotArm(image, machine), machine.regs));
    const want = expectedOf(caller, saved);
    expect(pick(got, want), where).toEqual(want);
  }
}

describe("ARM unwind codes, one by one", () => {
  it("00-7F: add sp, sp, #4×X (16-bit)", () => {
    expect(decoded(ARM_CODE.add_sp(0x1fc))).toEqual({ code: { op: "alloc", name: "alloc_s", size: 0x1fc }, length: 1, opSize: 2 });
    unwindsEverywhere([{ op: "sub-sp", n: 0x1fc, size: 2 }], ARM_CODE.add_sp(0x1fc));
  });

  it("80-BF: pop {r0-r12, lr} by mask (32-bit)", () => {
    const code = ARM_CODE.pop_w(["r4", "r8", "r9", "lr"]);
    expect(code).toEqual([0xa3, 0x10]);
    expect(decoded(code)).toEqual({ code: { op: "pop", name: "pop_w", mask: (1 << 4) | (1 << 8) | (1 << 9) | (1 << 14) }, length: 2, opSize: 4 });
    unwindsEverywhere([{ op: "push", regs: ["r4", "r8", "r9", "lr"], size: 4 }], code);
  });

  it("C0-CF: mov sp, rX (16-bit): sp comes back from the register a prolog copied it to, past a dynamic allocation", () => {
    expect(decoded(ARM_CODE.mov_sp(7))).toEqual({ code: { op: "mov-sp", register: 7 }, length: 1, opSize: 2 });
    unwindsEverywhere(
      [
        { op: "push", regs: ["r4", "r5", "r6", "r7", "lr"], size: 2 },
        { op: "set-fp", reg: "r7", n: 0, size: 2 },
      ],
      [...ARM_CODE.mov_sp(7), ...ARM_CODE.pop_r4(7, true)],
      undefined,
      BODY,
      0x40,
    );
  });

  it("D0-D7: pop {r4-rX} with or without lr, X 4-7 (16-bit)", () => {
    expect(decoded(ARM_CODE.pop_r4(6, false))).toEqual({ code: { op: "pop", name: "pop_r4", mask: 0x70 }, length: 1, opSize: 2 });
    unwindsEverywhere([{ op: "push", regs: ["r4", "r5", "r6"], size: 2 }], ARM_CODE.pop_r4(6, false));
    unwindsEverywhere([{ op: "push", regs: ["r4", "lr"], size: 2 }], ARM_CODE.pop_r4(4, true));
  });

  it("D8-DF: pop {r4-rX} with or without lr, X 8-11 (32-bit)", () => {
    expect(decoded(ARM_CODE.pop_r4_w(10, true))).toEqual({ code: { op: "pop", name: "pop_r4_w", mask: 0x7f0 | (1 << 14) }, length: 1, opSize: 4 });
    unwindsEverywhere([{ op: "push", regs: ["r4", "r5", "r6", "r7", "r8", "r9", "r10", "lr"], size: 4 }], ARM_CODE.pop_r4_w(10, true));
  });

  it("E0-E7: vpop {d8-dX} (32-bit)", () => {
    expect(decoded(ARM_CODE.vpop_d8(11))).toEqual({ code: { op: "vpop", name: "vpop_d8", first: 8, last: 11 }, length: 1, opSize: 4 });
    unwindsEverywhere([{ op: "vpush", first: 8, last: 11 }], ARM_CODE.vpop_d8(11));
  });

  it("E8-EB: addw sp, sp, #4×X (32-bit)", () => {
    expect(decoded(ARM_CODE.addw_sp(0x800))).toEqual({ code: { op: "alloc", name: "alloc_w", size: 0x800 }, length: 2, opSize: 4 });
    unwindsEverywhere([{ op: "push", regs: ["r4", "lr"], size: 2 }, { op: "sub-sp", n: 0x800, size: 4 }], [...ARM_CODE.addw_sp(0x800), ...ARM_CODE.pop_r4(4, true)]);
  });

  it("EC-ED: pop {r0-r7, lr} by mask (16-bit)", () => {
    const code = ARM_CODE.pop_lo(["r0", "r2", "lr"]);
    expect(code).toEqual([0xed, 0x05]);
    expect(decoded(code)).toEqual({ code: { op: "pop", name: "pop_lo", mask: 0b101 | (1 << 14) }, length: 2, opSize: 2 });
    unwindsEverywhere([{ op: "push", regs: ["r0", "r2", "lr"], size: 2 }], code);
  });

  it("EE 00-0F: Microsoft-specific, not modelled: the frame stops with the reason", () => {
    expect(decoded(ARM_CODE.microsoft(1))).toEqual({ code: { op: "microsoft", value: 1 }, length: 2, opSize: 2 });
    const image = new ImageBuilder().fn(FN, armXdataBytes({ length: 0x20, codes: [...ARM_CODE.microsoft(1), ...ARM_CODE.end()] })).build();
    const m = positions(FN, [], BODY, undefined, callerAt(1))[1]!.machine;
    const r = unwindOnce(snapshotArm(image, m), m.regs)!;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.stop.detail).toMatch(/Microsoft-specific code ee 0x1 is not modelled/);
  });

  it("EF 00-0F: ldr lr, [sp], #4×X (32-bit)", () => {
    expect(decoded(ARM_CODE.ldr_lr(8))).toEqual({ code: { op: "ldr-lr", size: 8 }, length: 2, opSize: 4 });
    unwindsEverywhere([{ op: "str-lr", n: 8 }], ARM_CODE.ldr_lr(8));
  });

  it("F5: vpop {dS-dE}, d0-d15 (32-bit)", () => {
    expect(decoded(ARM_CODE.vpop_lo(1, 9))).toEqual({ code: { op: "vpop", name: "vpop_lo", first: 1, last: 9 }, length: 2, opSize: 4 });
    unwindsEverywhere([{ op: "vpush", first: 1, last: 9 }], ARM_CODE.vpop_lo(1, 9), ["d8", "d9"]);
  });

  it("F6: vpop {dS-dE}, d16-d31 (32-bit)", () => {
    expect(decoded(ARM_CODE.vpop_hi(16, 19))).toEqual({ code: { op: "vpop", name: "vpop_hi", first: 16, last: 19 }, length: 2, opSize: 4 });
    unwindsEverywhere([{ op: "vpush", first: 16, last: 19 }], ARM_CODE.vpop_hi(16, 19));
  });

  it("F7: add sp, sp, #4×X with a 16-bit X (16-bit)", () => {
    expect(decoded(ARM_CODE.add_sp_m(0x400))).toEqual({ code: { op: "alloc", name: "alloc_m", size: 0x400 }, length: 3, opSize: 2 });
    unwindsEverywhere([{ op: "sub-sp", n: 0x400, size: 2 }], ARM_CODE.add_sp_m(0x400));
  });

  it("F8: add sp, sp, #4×X with a 24-bit X (16-bit)", () => {
    expect(decoded(ARM_CODE.add_sp_l(0x4_0000))).toEqual({ code: { op: "alloc", name: "alloc_l", size: 0x4_0000 }, length: 4, opSize: 2 });
    unwindsEverywhere([{ op: "sub-sp", n: 0x4_0000, size: 2 }], ARM_CODE.add_sp_l(0x4_0000));
  });

  it("F9: add sp, sp, #4×X with a 16-bit X (32-bit)", () => {
    expect(decoded(ARM_CODE.add_sp_m_w(0x1000))).toEqual({ code: { op: "alloc", name: "alloc_m_w", size: 0x1000 }, length: 3, opSize: 4 });
    unwindsEverywhere([{ op: "sub-sp", n: 0x1000, size: 4 }], ARM_CODE.add_sp_m_w(0x1000));
  });

  it("FA: add sp, sp, #4×X with a 24-bit X (32-bit)", () => {
    expect(decoded(ARM_CODE.add_sp_l_w(0x2_0000))).toEqual({ code: { op: "alloc", name: "alloc_l_w", size: 0x2_0000 }, length: 4, opSize: 4 });
    unwindsEverywhere([{ op: "sub-sp", n: 0x2_0000, size: 4 }], ARM_CODE.add_sp_l_w(0x2_0000));
  });

  it("FB: a 16-bit nop (mov r11, sp of a frame chain)", () => {
    expect(decoded(ARM_CODE.nop())).toEqual({ code: { op: "nop" }, length: 1, opSize: 2 });
    unwindsEverywhere(
      [
        { op: "push", regs: ["r11", "lr"], size: 4 },
        { op: "set-fp", reg: "r11", n: 0, size: 2 },
      ],
      [...ARM_CODE.nop(), ...ARM_CODE.pop_w(["r11", "lr"])],
    );
  });

  it("FC: a 32-bit nop (add r11, sp, #n of a frame chain)", () => {
    expect(decoded(ARM_CODE.nop_w())).toEqual({ code: { op: "nop" }, length: 1, opSize: 4 });
    unwindsEverywhere(
      [
        { op: "push", regs: ["r4", "r5", "r11", "lr"], size: 4 },
        { op: "set-fp", reg: "r11", n: 8, size: 4 },
      ],
      [...ARM_CODE.nop_w(), ...ARM_CODE.pop_w(["r4", "r5", "r11", "lr"])],
    );
  });

  it("FD, FE, FF: the end codes; in an epilog FD and FE count a 16- or 32-bit return after the codes", () => {
    expect(decoded(ARM_CODE.end_nop())).toEqual({ code: { op: "end", extra: 2 }, length: 1, opSize: 0 });
    expect(decoded(ARM_CODE.end_nop_w())).toEqual({ code: { op: "end", extra: 4 }, length: 1, opSize: 0 });
    expect(decoded(ARM_CODE.end())).toEqual({ code: { op: "end", extra: 0 }, length: 1, opSize: 0 });
    const prolog: Insn[] = [
      { op: "push", regs: ["r4", "r5", "lr"], size: 4 },
      { op: "sub-sp", n: 8, size: 2 },
    ];
    const shared = [...ARM_CODE.add_sp(8), ...ARM_CODE.pop_w(["r4", "r5", "lr"])];
    for (const [end, ret] of [
      [ARM_CODE.end_nop(), { op: "ret", size: 2 }],
      [ARM_CODE.end_nop_w(), { op: "ret", size: 4 }],
      [ARM_CODE.end(), { op: "pop", regs: ["r4", "r5", "pc"], size: 4 }],
    ] as const) {
      const epilog: Insn[] = ret.op === "pop" ? [{ op: "add-sp", n: 8, size: 2 }, ret] : [{ op: "add-sp", n: 8, size: 2 }, { op: "pop", regs: ["r4", "r5", "lr"], size: 4 }, ret];
      const length = bytesOf(prolog) + BODY + bytesOf(epilog);
      // One code sequence for the prolog, the body and the epilog (index 0), as the documentation recommends.
      const image = new ImageBuilder().fn(FN, armXdataBytes({ length, epilogIndex: 0, codes: [...shared, ...end] })).build();
      const caller = callerAt(9);
      for (const { where, machine } of positions(FN, prolog, BODY, epilog, caller)) {
        const got = callerOf(unwindOnce(snapshotArm(image, machine), machine.regs));
        const want = expectedOf(caller);
        expect(pick(got, want), `${end[0]!.toString(16)} ${where}`).toEqual(want);
      }
    }
  });

  it("F0-F4, EE 10-FF and EF 10-FF are reserved: the frame stops with the reason", () => {
    for (const code of [[0xf0], [0xf4], [0xee, 0x10], [0xef, 0x20]]) {
      const image = new ImageBuilder().fn(FN, armXdataBytes({ length: 0x20, codes: [...code, 0xff] })).build();
      const m = positions(FN, [], BODY, undefined, callerAt(1))[1]!.machine;
      // In the body, past the prolog the codes would describe.
      m.regs["pc"] = 0x0040_0000n + BigInt(FN + 0x10);
      const r = unwindOnce(snapshotArm(image, m), m.regs)!;
      expect(r.ok, code.map((b) => b.toString(16)).join(" ")).toBe(false);
      if (!r.ok) expect(r.stop.detail).toMatch(/reserved/);
    }
  });
});
