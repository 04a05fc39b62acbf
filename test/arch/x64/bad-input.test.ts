/**
 * Bad unwind data (issue 6): CountOfCodes running past the data, unknown ops, versions other than
 * 1 and 2, chains that loop or run too deep, ALLOC_LARGE sizes that overflow, RUNTIME_FUNCTION
 * tables that are unsorted, overlapping or empty-ranged. The frame stops with a reason — the
 * strategy's exec returns { ok: false, stop } — and a whole walk ends with that reason recorded;
 * nothing throws and nothing hangs.
 */
import { describe, expect, it } from "vitest";
import type { Registers } from "../../../src/model/snapshot.js";
import type { UnwindResult } from "../../../src/arch/step.js";
import { walkThread } from "../../../src/walk/walk.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { BASE, calleeRegisters, ImageBuilder, IMAGE_SIZE, ra, snapshot64, STACK_BASE, unwindStep } from "./fixture.js";

const NOPS = new Array<number>(0x40).fill(0x90);
/** A stack with no return address on it: after the unwind-info strategy fails, the scan finds nothing either. */
const noReturnAddresses = (): ReturnType<StackBuilder["build"]> => new StackBuilder(STACK_BASE, 8).fill(64, 0x1234n).build();

/** Unwinds the context frame at 0x2010 of `image`, and walks it with `--walker unwind`. */
function attempt(image: Uint8Array, registers: Registers = {}): { step: UnwindResult | undefined; stopDetail: string; frames: number } {
  const regs = calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE, ...registers });
  const snap = snapshot64(image, noReturnAddresses(), regs);
  const step = unwindStep(snap, regs);
  const walk = walkThread(snap, snap.threads[0]!, { walker: "unwind" });
  return { step, stopDetail: walk.stop.detail, frames: walk.frames.length };
}

function expectStop(image: Uint8Array, pattern: RegExp, registers: Registers = {}): void {
  const { step, stopDetail, frames } = attempt(image, registers);
  expect(step?.ok).toBe(false);
  if (step !== undefined && !step.ok) expect(step.stop.detail).toMatch(pattern);
  // The walk keeps the unwind-info strategy's reason (the scan found nothing) and only the context frame.
  expect(stopDetail).toMatch(pattern);
  expect(frames).toBe(1);
}

const one = (info: readonly number[]): Uint8Array => new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, info).build();

describe("bad UNWIND_INFO", () => {
  it("CountOfCodes running past the codes: a 2-slot op in the last slot", () => {
    expectStop(one([0x01, 0x08, 0x01, 0x00, 0x08, 0x01, 0x00, 0x00]), /needs 2 slots, but CountOfCodes is 1/);
  });

  it("CountOfCodes running past the image", () => {
    const b = new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, IMAGE_SIZE - 8);
    b.at(IMAGE_SIZE - 8, [0x01, 0x10, 0xff, 0x00, 0x10, 0x32, 0x00, 0x00]);
    expectStop(b.build(), /run past the image/);
  });

  it("UnwindData outside the image", () => {
    expectStop(new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, 0x7fff_fff0).build(), /not in the image/);
  });

  it("unknown ops: 11 and above, and UWOP_SPARE (7)", () => {
    expectStop(one([0x01, 0x04, 0x02, 0x00, 0x04, 0x0b, 0x00, 0x00]), /unknown op 11/);
    expectStop(one([0x01, 0x04, 0x02, 0x00, 0x04, 0x0f, 0x00, 0x00]), /unknown op 15/);
    expectStop(one([0x01, 0x04, 0x04, 0x00, 0x04, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), /UWOP_SPARE/);
  });

  it("an unknown op the prolog offset has not reached still stops (Windows checks every code)", () => {
    // At offset 0x10 the code at 0x20 would be skipped, but op 12 is invalid wherever it is.
    expectStop(one([0x01, 0x20, 0x02, 0x00, 0x20, 0x0c, 0x01, 0x30]), /unknown op 12/);
  });

  it("versions other than 1 and 2 (3 is the experimental APX format)", () => {
    for (const version of [0, 3, 4, 7]) expectStop(one([version, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), new RegExp(`version ${version}`));
  });

  it("SET_FPREG without a frame register", () => {
    expectStop(one([0x01, 0x04, 0x01, 0x00, 0x04, 0x03, 0x00, 0x00]), /FrameRegister is 0/);
  });

  it("a v2 EPILOG header with size 0", () => {
    expectStop(one([0x02, 0x04, 0x02, 0x00, 0x00, 0x16, 0x00, 0x06]), /epilog size of 0/);
  });
});

describe("bad chains", () => {
  const chainedInfo = (parent: readonly [number, number, number]): number[] => [0x21, 0x00, 0x00, 0x00, ...le32(parent[0]), ...le32(parent[1]), ...le32(parent[2])];

  it("a chain that loops back to an info it has seen", () => {
    const b = new ImageBuilder().at(0x2000, NOPS);
    // A at 0x8000 chains to B at 0x8010, which chains back to A.
    b.at(0x8000, chainedInfo([0x3000, 0x3010, 0x8010]));
    b.at(0x8010, chainedInfo([0x2000, 0x2040, 0x8000]));
    b.fn(0x2000, 0x2040, 0x8000);
    expectStop(b.build(), /loops/);
  });

  it("a chain of 32 parents is followed; one of 33 is refused (UNWIND_CHAIN_LIMIT)", () => {
    const build = (parents: number): Uint8Array => {
      const b = new ImageBuilder().at(0x2000, NOPS);
      // Info k at 0x8000 + 0x20k; info `parents` is the primary (sub rsp,8 then return).
      for (let k = 0; k < parents; k++) b.at(0x8000 + 0x20 * k, chainedInfo([0x4000 + 0x10 * k, 0x4010 + 0x10 * k, 0x8000 + 0x20 * (k + 1)]));
      b.at(0x8000 + 0x20 * parents, [0x01, 0x04, 0x01, 0x00, 0x04, 0x02, 0x00, 0x00]);
      return b.fn(0x2000, 0x2040, 0x8000).build();
    };
    const s = new StackBuilder(STACK_BASE, 8).u64(0).u64(ra(0)).build();
    const regs = calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE });
    const ok = unwindStep(snapshot64(build(32), s, regs), regs);
    expect(ok?.ok && ok.registers["rip"]).toBe(ra(0));
    expectStop(build(33), /deeper than 32/);
  });

  it("an indirect entry that names another indirect entry", () => {
    const b = new ImageBuilder().at(0x2000, NOPS);
    b.at(0x9000, [...le32(0x2000), ...le32(0x2040), ...le32(0x9000 | 1)]);
    expectStop(b.fn(0x2000, 0x2040, 0x9000 | 1).build(), /another indirect entry/);
  });
});

describe("ALLOC_LARGE sizes that overflow", () => {
  it("a 32-bit allocation that would carry RSP past 2^64 stops instead of wrapping", () => {
    const image = one([0x01, 0x07, 0x03, 0x00, 0x07, 0x11, 0xf8, 0xff, 0xff, 0xff, 0x00, 0x00]); // ALLOC_LARGE 0xfffffff8
    expectStop(image, /leaves the 64-bit address space/, { rsp: 0xffff_ffff_ffff_0000n });
  });

  it("one that lands outside the stack stops with a read fault", () => {
    const { step } = attempt(one([0x01, 0x07, 0x03, 0x00, 0x07, 0x11, 0xf8, 0xff, 0xff, 0xff, 0x00, 0x00]));
    expect(step?.ok === false && step.stop.reason).toBe("read-fault");
  });
});

describe("bad RUNTIME_FUNCTION tables", () => {
  it("unsorted", () => {
    const b = new ImageBuilder().at(0x2000, NOPS).fn(0x3000, 0x3040, [0x01, 0, 0, 0, 0, 0, 0, 0]).fn(0x2000, 0x2040, [0x01, 0, 0, 0, 0, 0, 0, 0]);
    expectStop(b.build("as-given"), /not sorted/);
  });

  it("overlapping", () => {
    const b = new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, [0x01, 0, 0, 0, 0, 0, 0, 0]).fn(0x2030, 0x2050, [0x01, 0, 0, 0, 0, 0, 0, 0]);
    expectStop(b.build(), /overlap/);
  });

  it("an empty range, and one past the image", () => {
    expectStop(new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, [0x01, 0, 0, 0, 0, 0, 0, 0]).fn(0x2050, 0x2050, [0x01, 0, 0, 0, 0, 0, 0, 0]).build(), /is empty/);
    expectStop(new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x20000, [0x01, 0, 0, 0, 0, 0, 0, 0]).build(), /runs past the image/);
  });

  it("an exception directory outside the image", () => {
    const image = new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, [0x01, 0, 0, 0, 0, 0, 0, 0]).build();
    new DataView(image.buffer).setUint32(0x58 + 112 + 3 * 8, 0xfff8, true);
    expectStop(image, /does not fit the image/);
  });
});

describe("garbage never throws or hangs", () => {
  it("random UNWIND_INFOs and tables", () => {
    let seed = 12345;
    const rand = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
    for (let round = 0; round < 300; round++) {
      const b = new ImageBuilder().at(0x2000, Array.from({ length: 0x40 }, () => rand() & 0xff));
      const info = Array.from({ length: 4 + 2 * (rand() % 40) }, () => rand() & 0xff);
      info[0] = (info[0]! & ~7) | (1 + (rand() % 2));
      b.at(0x8000, info);
      b.at(0x8100, Array.from({ length: 64 }, () => rand() & 0xff));
      b.fn(0x2000, 0x2040, rand() % 3 === 0 ? 0x8100 + 4 * (rand() % 8) : 0x8000);
      const stack = new StackBuilder(STACK_BASE, 8);
      for (let i = 0; i < 64; i++) stack.u64(BigInt(rand()) * BigInt(rand()));
      const regs = calleeRegisters({ rip: BASE + 0x2000n + BigInt(rand() % 0x40), rsp: STACK_BASE + BigInt(8 * (rand() % 8)), rbp: STACK_BASE + BigInt(rand() % 0x200) });
      const snap = snapshot64(b.build(), stack.build(), regs);
      expect(() => walkThread(snap, snap.threads[0]!, { walker: "unwind" })).not.toThrow();
      expect(() => walkThread(snap, snap.threads[0]!, { walker: "auto" })).not.toThrow();
    }
  });
});

function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}
