/**
 * A three-function ARM (Thumb-2) call chain whose stack is what its prologs store, run forward
 * (fixture.ts): `outer` (packed: push {r4-r7, r11, lr}; add r11, sp, #16; sub sp, sp, #16), called
 * from the caller region at 0x1000, calls `middle` (.xdata: push {r4, r5, lr}; vpush {d8-d9};
 * sub sp, sp, #32), which calls `leaf` (no .pdata entry: it touches no stack). Each call is a real
 * Thumb `bl` in the caller's code, so return addresses pass a call-site check. The expected frames
 * are worked out here from those prologs, never by a walker.
 */
import { ARM_CODE, armPackedWord, armXdataBytes } from "../../../emulator/programs/arm-unwind-encode.js";
import type { Snapshot } from "../../../src/model/snapshot.js";
import { BASE, bytesOf, callerAt, ImageBuilder, Machine, snapshotArm, type Insn } from "./fixture.js";

export const OUTER = 0x2000;
export const MIDDLE = 0x2100;
export const LEAF = 0x2200;
/** Where each function's `bl` is (the return address is 4 bytes on, Thumb bit set). */
const OUTER_CALL = 0x20;
const MIDDLE_CALL = 0x30;

/** A Thumb `bl` from `from` to `to`: its two halfwords. */
export function thumbBl(from: number, to: number): number[] {
  const offset = to - (from + 4);
  const s = offset < 0 ? 1 : 0;
  const imm = offset & 0x1ff_ffff;
  const i1 = (imm >> 23) & 1;
  const i2 = (imm >> 22) & 1;
  const j1 = (~i1 ^ s) & 1;
  const j2 = (~i2 ^ s) & 1;
  const hw1 = 0xf000 | (s << 10) | ((imm >> 12) & 0x3ff);
  const hw2 = 0xd000 | (j1 << 13) | (j2 << 11) | ((imm >> 1) & 0x7ff);
  return [hw1 & 0xff, hw1 >> 8, hw2 & 0xff, hw2 >> 8];
}

export const OUTER_PROLOG: Insn[] = [
  { op: "push", regs: ["r4", "r5", "r6", "r7", "r11", "lr"], size: 4 },
  { op: "set-fp", reg: "r11", n: 16, size: 4 },
  { op: "sub-sp", n: 16, size: 2 },
];
export const MIDDLE_PROLOG: Insn[] = [
  { op: "push", regs: ["r4", "r5", "lr"], size: 2 },
  { op: "vpush", first: 8, last: 9 },
  { op: "sub-sp", n: 32, size: 2 },
];

/** The chain's image: outer packed (C, L, Reg 3, Stack Adjust 4), middle's .xdata, leaf without an entry. */
export function chainImage(): Uint8Array {
  const b = new ImageBuilder();
  b.fn(OUTER, armPackedWord(0x40, { ret: 0, h: false, reg: 3, r: false, l: true, c: true, stackAdjust: 4 }));
  b.fn(MIDDLE, armXdataBytes({ length: 0x60, codes: [...ARM_CODE.add_sp(32), ...ARM_CODE.vpop_d8(9), ...ARM_CODE.pop_r4(5, true), ...ARM_CODE.end()] }));
  b.at(OUTER + OUTER_CALL, thumbBl(OUTER + OUTER_CALL, MIDDLE));
  b.at(MIDDLE + MIDDLE_CALL, thumbBl(MIDDLE + MIDDLE_CALL, LEAF));
  return b.build();
}

/** One expected frame: its pc and sp. */
export interface Truth {
  pc: bigint;
  sp: bigint;
}

/** The chain stopped in the leaf, `leafOffset` bytes in: the snapshot and the frames it holds. */
export function chainStop(leafOffset = 4): { snapshot: Snapshot; truth: Truth[]; machine: Machine } {
  const caller = callerAt(0);
  const m = new Machine(caller);
  const truth: Truth[] = [];
  const outerCallerSp = m.regs["sp"]!;
  OUTER_PROLOG.forEach((i) => m.run(i));
  m.regs["lr"] = BASE + BigInt(OUTER + OUTER_CALL + 4) + 1n;
  const outerSp = m.regs["sp"]!;
  MIDDLE_PROLOG.forEach((i) => m.run(i));
  m.regs["lr"] = BASE + BigInt(MIDDLE + MIDDLE_CALL + 4) + 1n;
  const middleSp = m.regs["sp"]!;
  m.regs["pc"] = BASE + BigInt(LEAF + leafOffset);
  // The Thumb bit of the interrupted code is in Cpsr (T, bit 5); Pc itself is even.
  m.regs["cpsr"] = 0x20n;
  truth.push({ pc: m.regs["pc"]!, sp: middleSp });
  truth.push({ pc: BASE + BigInt(MIDDLE + MIDDLE_CALL + 4) + 1n, sp: middleSp });
  truth.push({ pc: BASE + BigInt(OUTER + OUTER_CALL + 4) + 1n, sp: outerSp });
  truth.push({ pc: caller["lr"]!, sp: outerCallerSp });
  void bytesOf;
  return { snapshot: snapshotArm(chainImage(), m), truth, machine: m };
}
