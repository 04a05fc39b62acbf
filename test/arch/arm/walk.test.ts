/**
 * Whole ARM walks over the chain of chain.ts, compared with the frames its prologs imply: the
 * table walker finds every frame and every preserved register; the r11 frame chain, which only
 * `outer` keeps, loses `middle`; scanning finds the return addresses; a Thumb chain in r7 is
 * followed off Windows and not on Windows.
 */
import { describe, expect, it } from "vitest";
import { walkThread } from "../../../src/walk/walk.js";
import type { Walk } from "../../../src/walk/frame.js";
import { BASE, CALLER, callerAt, ImageBuilder, Machine, snapshotArm } from "./fixture.js";
import { chainStop, thumbBl } from "./chain.js";

const rows = (w: Walk): [bigint, bigint][] => w.frames.map((f) => [f.addrPC, f.addrStack]);

describe("ARM walks", () => {
  it("the table walker is exact from the leaf, trusting the unwind data, and restores the caller's registers", () => {
    const c = chainStop();
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "unwind" });
    expect(rows(w)).toEqual(c.truth.map((t) => [t.pc, t.sp]));
    expect(w.frames.map((f) => f.trust)).toEqual(["context", "unwind-info", "unwind-info", "unwind-info"]);
    // middle's codes gave outer back its d8, d9 (outer saved none); outer's gave the caller its r4-r7, r11.
    for (const r of ["d8", "d9"]) expect(w.frames[2]!.registers[r], r).toBe(CALLER[r]);
    for (const r of ["r4", "r5", "r6", "r7", "r11"]) expect(w.frames[3]!.registers[r], r).toBe(CALLER[r]);
    // AddrFrame is r11 as each frame had it; AddrReturn the next frame's pc.
    expect(w.frames.map((f) => f.addrReturn).slice(0, 3)).toEqual(c.truth.slice(1).map((t) => t.pc));
    expect(w.stop.reason).toBe("no-progress");
  });

  it("auto takes the tables too, and the rule says what it undid", () => {
    const c = chainStop();
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "auto" });
    expect(rows(w)).toEqual(c.truth.map((t) => [t.pc, t.sp]));
    expect(w.frames[1]!.rule).toMatchObject({ kind: "arm-unwind", function: { leafRva: 0x2204 }, callerSp: "sp" });
    expect(w.frames[2]!.rule).toMatchObject({ kind: "arm-unwind", function: { begin: 0x2100, form: "xdata" }, callerSp: "sp+0x3c" });
    expect(w.frames[3]!.rule).toMatchObject({ kind: "arm-unwind", function: { begin: 0x2000, form: "packed" }, callerSp: "sp+0x28" });
  });

  it("the r11 chain: lr for the leaf, then outer's pair, which skips middle (it keeps no chain)", () => {
    const c = chainStop();
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "frame-pointer" });
    expect(w.frames[1]!.addrPC).toBe(c.truth[1]!.pc);
    expect(w.frames.map((f) => f.addrPC)).toContain(c.truth[3]!.pc);
    expect(w.frames.map((f) => f.addrPC)).not.toContain(c.truth[2]!.pc);
  });

  it("scanning finds every return address after a bl", () => {
    const c = chainStop();
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, { walker: "scan" });
    // The leaf's own return address is in lr, not on the stack: the scan finds the ones pushed.
    expect(w.frames.map((f) => f.addrPC)).toEqual(expect.arrayContaining([c.truth[2]!.pc, c.truth[3]!.pc]));
  });

  it("a Thumb chain in r7 (push {r7, lr}; mov r7, sp) is followed off Windows, where Thumb code keeps it there", () => {
    const fns = [0x3000, 0x3100, 0x3200];
    const b = new ImageBuilder();
    b.at(fns[0]! + 8, thumbBl(fns[0]! + 8, fns[1]!));
    b.at(fns[1]! + 8, thumbBl(fns[1]! + 8, fns[2]!));
    const image = b.build();
    const caller = callerAt(2);
    caller["r7"] = 0n;
    const m = new Machine(caller);
    const truth: bigint[] = [];
    for (let k = 0; k < 2; k++) {
      m.run({ op: "push", regs: ["r7", "lr"], size: 2 });
      m.run({ op: "set-fp", reg: "r7", n: 0, size: 2 });
      m.run({ op: "sub-sp", n: 8, size: 2 });
      m.regs["lr"] = BASE + BigInt(fns[k]! + 12) + 1n;
    }
    m.run({ op: "push", regs: ["r7", "lr"], size: 2 });
    m.run({ op: "set-fp", reg: "r7", n: 0, size: 2 });
    m.regs["pc"] = BASE + BigInt(fns[2]! + 6);
    m.regs["cpsr"] = 0x20n;
    truth.push(m.regs["pc"]!, BASE + BigInt(fns[1]! + 12) + 1n, BASE + BigInt(fns[0]! + 12) + 1n, caller["lr"]!);
    const linux = snapshotArm(image, m, m.regs, "android");
    const w = walkThread(linux, linux.threads[0]!, { walker: "frame-pointer" });
    expect(w.frames.map((f) => f.addrPC)).toEqual(truth);
    expect(w.stop.reason).toBe("end-of-stack");
    const windows = snapshotArm(image, m, m.regs, "windows");
    const ww = walkThread(windows, windows.threads[0]!, { walker: "frame-pointer" });
    expect(ww.frames.map((f) => f.addrPC)).not.toEqual(truth);
  });
});
