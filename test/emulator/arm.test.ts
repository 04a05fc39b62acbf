/**
 * The emulator on 32-bit ARM: Unicorn's ARM engine in Thumb state through the wrapper, Thumb
 * calls through the link register and returns by their effect in the shadow stack, and runs of
 * the real clang-16 programs built for thumbv7-pc-windows-msvc (test/fixtures/arm-clang).
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ARM_INSTRUCTIONS, ARM_PROGRAMS, armProgramImage, runArmPrograms, type ArmProgramRun } from "../../emulator/arm/programs.js";
import { loadDisassembler } from "../../emulator/disassemble.js";
import { EXPECTED } from "../../emulator/real-programs.js";
import { decodeThumbCall, ShadowStack, TraceError } from "../../emulator/trace.js";
import { Unicorn } from "../../emulator/unicorn.js";
import { parsePe } from "../../src/formats/pe.js";
import { fixtureBytes } from "../support/fixtures.js";

const T = (...halfwords: number[]): Uint8Array => Uint8Array.from(halfwords.flatMap((h) => [h & 0xff, h >> 8]));

describe("the ARM engine", () => {
  let uc: Unicorn<"arm"> | undefined;
  afterEach(() => uc?.close());

  it("runs Thumb code started at its address | 1 and reads r0-r12, sp, lr, pc and cpsr by name", () => {
    uc = Unicorn.open("arm");
    uc.memMap(0x10000n, 0x1000n);
    // adds r1, r0, #1; mov lr, r1; mov r2, sp; cmp r0, r0
    uc.memWrite(0x10000n, T(0x1c41, 0x468e, 0x466a, 0x4280));
    uc.regWrite("r0", 41n);
    uc.regWrite("sp", 0x12340n);
    const stop = uc.start(0x10001n, 0x10008n);
    expect(stop).toEqual({ reason: "until", pc: 0x10008n });
    expect([uc.regRead("r1"), uc.regRead("lr"), uc.regRead("r2"), uc.sp(), uc.pc()]).toEqual([42n, 42n, 0x12340n, 0x12340n, 0x10008n]);
    const cpsr = uc.regRead("cpsr");
    expect(cpsr & 0x20n).toBe(0x20n); // Thumb state
    expect(cpsr & 0x6000_0000n).toBe(0x6000_0000n); // Z and C after cmp r0, r0
    expect(() => uc!.regRead("x0" as never)).toThrow(/not a register of the ARM engine/);
  });

  it("disassembles Thumb-2 for error messages", async () => {
    const d = await loadDisassembler();
    expect(d.describe(T(0xe8bd, 0x8800), 0x401010n, "arm")).toBe("0x00401010: bd e8 00 88  pop.w {fp, pc}");
  });
});

describe("Thumb calls and returns", () => {
  it("decodes bl, blx label and blx Rm as calls, and nothing else", () => {
    expect(decodeThumbCall(T(0xf000, 0xf802))).toBe(4); // bl
    expect(decodeThumbCall(T(0xf7ff, 0xfffe))).toBe(4); // bl backwards
    expect(decodeThumbCall(T(0xf000, 0xe802))).toBe(4); // blx label
    expect(decodeThumbCall(T(0x4788))).toBe(2); // blx r1
    expect(decodeThumbCall(T(0x4770))).toBeUndefined(); // bx lr
    expect(decodeThumbCall(T(0xe8bd, 0x8800))).toBeUndefined(); // pop.w {r11, pc}
    expect(decodeThumbCall(T(0xf000, 0xb802))).toBeUndefined(); // b.w
    expect(decodeThumbCall(T(0xf000))).toBeUndefined(); // truncated
  });

  it("pushes a bl's entry once LR holds the return address | 1 and SP is unchanged, and pops it when control comes back to it", () => {
    let lr = 0n;
    const shadow = new ShadowStack("arm", () => 0n, [], () => lr);
    shadow.before(0x1000n, 0x8000n, T(0xf000, 0xf802));
    lr = 0x1005n;
    shadow.before(0x1040n, 0x8000n, T(0xb500)); // push {lr}
    expect(shadow.entries).toEqual([{ slot: 0x8000n, returnAddress: 0x1005n, callSite: 0x1000n, callerSp: 0x8000n }]);
    shadow.before(0x1042n, 0x7ffcn, T(0xbd00)); // pop {pc}
    shadow.before(0x1004n, 0x8000n, T(0xbf00)); // back at the return address
    expect(shadow.entries).toEqual([]);
    const bad = new ShadowStack("arm", () => 0n, [], () => 0x2000n);
    bad.before(0x1000n, 0x8000n, T(0xf000, 0xf802));
    expect(() => bad.before(0x1040n, 0x8000n, T(0xbf00))).toThrow(TraceError);
    expect(() => new ShadowStack("arm", () => 0n)).toThrow(/register reader/);
  });

  it("makes no entry for a call an IT block skipped, and does not take falling through to a return address for a return", () => {
    const lr = 0x1005n;
    const shadow = new ShadowStack("arm", () => 0n, [], () => lr);
    shadow.before(0x2000n, 0x8000n, T(0xf000, 0xf802)); // a bl whose condition fails
    shadow.before(0x2004n, 0x8000n, T(0xbf00));
    expect(shadow.entries).toEqual([]);
    const outer = new ShadowStack("arm", () => 0n, [], () => 0x1005n);
    outer.before(0x1000n, 0x8000n, T(0xf000, 0xf802));
    outer.before(0x1002n, 0x8000n, T(0xbf00)); // the callee, entered at 0x1002
    outer.before(0x1004n, 0x8000n, T(0xbf00)); // falls through to 0x1004: still inside the call
    expect(outer.entries).toHaveLength(1);
  });
});

describe("the real C programs built for ARM by clang-16", () => {
  let runs: ArmProgramRun[] = [];
  beforeAll(async () => {
    runs = await runArmPrograms();
  });

  it.each(ARM_PROGRAMS)("%s returns the checksum of every other build in R0, after its own instruction count", (program) => {
    const run = runs.find((r) => r.program === program)!;
    expect(run.result.registers["r0"]).toBe(BigInt(EXPECTED[program].checksum));
    expect(run.result.sweep.steps).toHaveLength(ARM_INSTRUCTIONS[program]);
    expect(run.result.sweep.machine).toBe("arm");
    // A user-mode thread in Thumb state from the first instruction on.
    expect(run.result.sweep.steps[0]!.registers["cpsr"]).toBe(0x30n);
  });

  it("are PE32 images for machine 0x1C4 (ARMNT) with .pdata, loaded at their ImageBase", () => {
    for (const program of ARM_PROGRAMS) {
      const pe = parsePe(fixtureBytes(armProgramImage(program).replace("test/fixtures/", "")));
      expect(pe.machine).toBe(0x1c4);
      expect(pe.imageBase).toBe(0x40_0000n);
      const run = runs.find((r) => r.program === program)!;
      expect(run.result.sweep.modules[0]!.base).toBe(0x40_0000n);
    }
  });

  it("records every call's return address with the Thumb bit and the caller's SP at the call", () => {
    const run = runs.find((r) => r.program === "recursion-callbacks")!;
    const deepest = Math.max(...run.result.sweep.steps.map((s) => s.truth!.length));
    expect(deepest).toBe(9);
    for (const step of run.result.sweep.steps) {
      const [top, ...callers] = step.truth!;
      expect(top!.pc).toBe(step.registers["pc"]);
      expect(top!.sp).toBe(step.registers["sp"]);
      for (const caller of callers) expect(caller.pc & 1n).toBe(1n);
      for (let i = 1; i < step.truth!.length; i++) expect(step.truth![i]!.sp >= step.truth![i - 1]!.sp).toBe(true);
    }
  });
});
