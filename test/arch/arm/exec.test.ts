/**
 * A plan of the usual shape makes the caller's sp two ways: in a walk, which knows the frame's sp
 * as a number, by adding the frame's size to the frame's own sp (a bigint); on its own, from the
 * number. Both give the same caller, also where the frame's top passes 2^32 and sp wraps to 0.
 */
import { describe, expect, it } from "vitest";
import { ARM_CODE, armXdataBytes } from "../../../emulator/programs/arm-unwind-encode.js";
import { RegionMemory } from "../../../src/memory/region-memory.js";
import type { Snapshot } from "../../../src/model/snapshot.js";
import { BASE, callerAt, callerOf, ImageBuilder, MODULE, unwindOnce } from "./fixture.js";

const FN = 0x2000;
/** The top 4 KiB of the address space as stack: word k holds 0x5000 + k. */
const STACK_LOW = 0xffff_f000n;

/** `push {r4, r5, lr}; sub sp, sp, #8` as codes; the frame is 20 bytes. */
function snapshot(): Snapshot {
  const image = new ImageBuilder().fn(FN, armXdataBytes({ length: 40, codes: [...ARM_CODE.add_sp(8), ...ARM_CODE.pop_r4(5, true), ...ARM_CODE.end()] })).build();
  const stack = new Uint8Array(0x1000);
  const view = new DataView(stack.buffer);
  for (let k = 0; k < 0x400; k++) view.setUint32(4 * k, 0x5000 + k, true);
  return { machine: "arm", threads: [], memory: new RegionMemory([{ base: BASE, bytes: image }, { base: STACK_LOW, bytes: stack }]), modules: [{ ...MODULE }] };
}

describe("the ARM caller's sp, in a walk and on its own", () => {
  const snap = snapshot();
  for (const sp of [0xffff_f800n, 0xffff_ffe0n, 0xffff_ffecn]) {
    it(`sp ${sp.toString(16)}`, () => {
      const registers = { ...callerAt(0), pc: BASE + BigInt(FN) + 12n + 1n, sp };
      const alone = callerOf(unwindOnce(snap, registers));
      const inWalk = callerOf(unwindOnce(snap, registers, 0, { sp: Number(sp) }));
      expect(inWalk).toEqual(alone);
      expect(alone["sp"]).toBe((sp + 20n) & 0xffff_ffffn);
      expect(alone["lr"]).toBe(BigInt(0x5000 + Number(sp + 16n - STACK_LOW) / 4));
    });
  }
});
