/**
 * Whole ARM64 walks over a chain with clang-14's unwind shapes (chain.ts, arm64.md §1.8 and Part
 * 6), compared with the frames the prologs imply: the table walker finds every frame, prolog and
 * epilog positions of the context frame included, strips the signed return address, and ends at
 * main's return address of 0; the frame-record chain, which x29 does not maintain here, does not.
 */
import { describe, expect, it } from "vitest";
import { walkThread } from "../../../src/walk/walk.js";
import type { Walk } from "../../../src/walk/frame.js";
import { arm64Unwind } from "../../../src/arch/arm64/unwind.js";
import { BASE, CALLER, calleeRegisters, ImageBuilder, packed, snapshotArm64, STACK_BASE } from "./fixture.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { chainStop, PAC_BITS, STUB_RVA, type ChainStop } from "./chain.js";
import { arm64PacStripper } from "../../../src/entry/arch.js";
import { inputError } from "../../support/input-error.js";

const rows = (w: Walk): [bigint, bigint][] => w.frames.map((f) => [f.addrPC, f.addrStack]);
const expected = (c: ChainStop): [bigint, bigint][] => c.truth.map((t) => [t.pc, t.sp]);

describe("ARM64 walks of the clang-14 shapes", () => {
  it("the table walker is exact from the leaf's body, trusting the unwind data, and ends at the outermost frame", () => {
    const c = chainStop();
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "unwind" });
    expect(rows(w)).toEqual(expected(c));
    expect(w.frames.map((f) => f.trust)).toEqual(["context", "unwind-info", "unwind-info", "unwind-info"]);
    expect(w.stop.reason).toBe("end-of-stack");
    // AddrReturn is the next frame's pc; AddrFrame is x29 as each frame had it.
    expect(w.frames.map((f) => f.addrReturn)).toEqual([...c.truth.slice(1).map((t) => t.pc), 0n]);
    expect(w.frames.map((f) => f.addrFrame)).toEqual([c.labels["F"], c.labels["F"], c.labels["F"], c.labels["F"]]);
    // fregs restored d8-d12 for main; bigframe's record gave fregs x29.
    for (let d = 8; d <= 12; d++) expect(w.frames[3]!.registers[`d${d}`]).toBe(CALLER[`d${d}`]);
  });

  it("a leaf stopped before its allocation or at its ret has not moved sp: the caller keeps it (equal sp is progress once)", () => {
    for (const leaf of [0, 7, 8]) {
      const c = chainStop({ leaf });
      const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "auto" });
      expect(rows(w), `leaf_locals+${4 * leaf}`).toEqual(expected(c));
    }
  });

  it("a function without a .pdata entry at frame 0 returns through lr with sp unchanged", () => {
    const c = chainStop("stub");
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "unwind" });
    expect(rows(w)).toEqual(expected(c));
    expect(w.frames[1]!.rule).toMatchObject({ kind: "arm64-unwind", pcFrom: "lr", callerSp: "sp" });
  });

  it("the signed return address bigframe saved is stripped", () => {
    const c = chainStop();
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "unwind" });
    expect(w.frames[2]!.addrPC >> 48n).toBe(0n);
  });

  it("the frame-record chain, which -O2 code does not keep, loses the chain after lr", () => {
    const c = chainStop();
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "frame-pointer" });
    // lr gives frame 1's pc (its sp is a guess: the leaf's own); the record x29 points at is main's.
    expect(w.frames[1]!.addrPC).toBe(c.truth[1]!.pc);
    expect(rows(w)).not.toEqual(expected(c));
  });
});

describe("a machine frame in the middle of an ARM64 walk (arm64.md §1.9, §1.10)", () => {
  it("the interrupted pc is looked up as it is; a function there without an entry returns through lr, and its unchanged sp is progress", () => {
    const c = chainStop("dispatcher");
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "unwind" });
    expect(rows(w)).toEqual(expected(c));
    expect(w.frames[1]!.rule).toMatchObject({ kind: "arm64-unwind", pcFrom: "machine-frame" });
    expect(w.frames[2]!.rule).toMatchObject({ kind: "arm64-unwind", pcFrom: "lr", callerSp: "sp" });
    expect(w.stop.reason).toBe("end-of-stack");
  });

  it("a caller frame (a return address) in a function without an entry makes no progress: its pc already is lr", () => {
    const c = chainStop();
    const stubRa = BASE + BigInt(STUB_RVA + 4);
    const thread = { ...c.snapshot.threads[0]!, registers: { ...c.registers, lr: stubRa } };
    const w = walkThread(c.snapshot, thread, { strategies: [arm64Unwind] });
    expect(rows(w)).toEqual([[c.registers["pc"]!, c.labels["sp0"]!], [stubRa, c.labels["L"]!]]);
    expect(w.stop).toMatchObject({ reason: "no-progress" });
    expect(w.stop.detail).toContain("already is lr");
  });
});

describe("the walk's pointer-authentication size (pacVaBits, arm64.md §1.12)", () => {
  it("strips at 48 bits by default, at the size given otherwise, and refuses a size outside 16-52", () => {
    const c = chainStop();
    const thread = c.snapshot.threads[0]!;
    // bigframe's saved return address carries a code in bits 48-53 (chain.ts PAC_BITS = 0x35 << 48).
    expect(rows(walkThread(c.snapshot, thread, { walker: "unwind" }))).toEqual(expected(c));
    expect(rows(walkThread(c.snapshot, thread, { walker: "unwind", pacVaBits: 36 }))).toEqual(expected(c));
    const wide = walkThread(c.snapshot, thread, { walker: "unwind", pacVaBits: 50 });
    expect(wide.frames[2]!.addrPC).toBe(c.truth[2]!.pc | (PAC_BITS & ((1n << 50n) - 1n)));
    expect(arm64PacStripper(50)(PAC_BITS | 0x1234n)).toBe(0x0001_0000_0000_1234n);
    for (const bad of [15, 53, 48.5]) expect(inputError(() => walkThread(c.snapshot, thread, { pacVaBits: bad })).message).toContain("from 16 to 52");
  });
});

describe("a return address back into a function that does not restore lr", () => {
  it("stops with no-progress where the caller would be the frame itself again, instead of repeating it higher up the stack until the budget", () => {
    const FN = 0x2000;
    // Packed: an 80-byte allocation and nothing saved (lr stays in its register).
    const image = new ImageBuilder().code(FN, 16).fn(FN, packed({ length: 16, cr: 0, frameSize: 5 })).build();
    const stack = new StackBuilder(STACK_BASE, 8).fill(512).build();
    const pc = BASE + BigInt(FN + 8);
    const lr = BASE + BigInt(FN + 12);
    const snapshot = snapshotArm64(image, stack, calleeRegisters({ pc, sp: STACK_BASE, lr, fp: 0n }));
    for (const walker of ["unwind", "auto"] as const) {
      const w = walkThread(snapshot, snapshot.threads[0]!, { walker });
      expect(rows(w), walker).toEqual([
        [pc, STACK_BASE],
        [lr, STACK_BASE + 80n],
      ]);
      if (walker === "unwind") {
        expect(w.stop.reason).toBe("no-progress");
        expect(w.stop.detail).toMatch(/is this frame's own, from an lr the function does not restore/);
      }
    }
  });
});
