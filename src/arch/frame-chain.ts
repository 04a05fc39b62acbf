/**
 * The frame-pointer chain shared by x86 and x64 code built with frame pointers. A prolog of
 * `push fp; mov fp, sp` leaves, at [fp], the caller's saved frame pointer and, one slot above,
 * the return address the call pushed:
 *
 *     fp + 2w  caller's stack (arguments)      <- caller's sp after return
 *     fp + w   return address                  -> caller's pc
 *     fp       saved caller fp                 -> caller's fp
 *
 * so pc' = [fp + w], sp' = fp + 2w, fp' = [fp] (stackwalk64.md §6.4 step 4).
 */
import { readPointer, type MemoryReader } from "../memory/reader.js";
import type { Registers } from "../model/snapshot.js";
import type { WalkStop } from "../walk/frame.js";
import { lazyText } from "../walk/lazy-text.js";
import { unwindStep, type UnwindResult, type UnwindRule } from "../walk/strategy.js";

/** The registers a frame chain uses and the slot width. */
export interface FrameChainRegisters {
  pc: string;
  sp: string;
  fp: string;
  width: 4 | 8;
  /** The caller's register object, written with fixed property names (this runs for every frame). */
  make(pc: bigint, sp: bigint, fp: bigint): Registers;
}

export function padHex(v: bigint, width: number): string {
  return "0x" + v.toString(16).padStart(width * 2, "0");
}

/** The rule text of one frame-chain step. */
export function chainText(regs: FrameChainRegisters, fp: bigint, raSlot: bigint, pc: bigint, savedFp: bigint, sp: bigint): string {
  const h = (v: bigint): string => padHex(v, regs.width);
  return `${regs.fp}-chain ${regs.fp}=${h(fp)}: ${regs.pc}=[${h(raSlot)}]=${h(pc)} ${regs.fp}=[${h(fp)}]=${h(savedFp)} ${regs.sp}=${h(sp)}`;
}

/** The frame-pointer rule for a machine: the same for every frame, so it reads no memory to build. */
export function frameChainRule(regs: FrameChainRegisters): UnwindRule {
  const w = BigInt(regs.width);
  const mask = regs.width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const name = `${regs.fp}-chain`;
  const hex = (v: bigint): string => "0x" + v.toString(16).padStart(regs.width * 2, "0");
  return {
    describe: () => `${name}: ${regs.pc}=[${regs.fp}+${regs.width}], ${regs.sp}=${regs.fp}+${regs.width * 2}, ${regs.fp}=[${regs.fp}]`,
    exec(registers: Registers, memory: MemoryReader): UnwindResult {
      const fp = registers[regs.fp];
      if (fp === undefined) {
        return { ok: false, stop: { reason: "unsupported", detail: `${regs.fp.toUpperCase()} is not known for this frame` } };
      }
      if (fp === 0n) {
        // x86 code that keeps a chain ends it with EBP = 0 (thread start); x64 code keeps none,
        // so an RBP of 0 says nothing about where the stack ends.
        return regs.width === 4
          ? { ok: false, stop: { reason: "end-of-stack", detail: `${regs.fp.toUpperCase()} is 0: the frame chain ends here` } }
          : { ok: false, stop: { reason: "unsupported", detail: `${regs.fp.toUpperCase()} is 0: no frame pointer to follow` } };
      }
      const raSlot = (fp + w) & mask;
      const pc = readPointer(memory, raSlot, regs.width);
      if (pc === undefined) {
        return { ok: false, stop: { reason: "read-fault", address: raSlot, detail: `cannot read the return address at [${regs.fp}+${regs.width}] = ${hex(raSlot)}` } };
      }
      const savedFp = readPointer(memory, fp, regs.width);
      if (savedFp === undefined) {
        return { ok: false, stop: { reason: "read-fault", address: fp, detail: `cannot read the saved ${regs.fp.toUpperCase()} at ${hex(fp)}` } };
      }
      const sp = (fp + 2n * w) & mask;
      return unwindStep(regs.make(pc, sp, savedFp), lazyText(chainText, regs, fp, raSlot, pc, savedFp, sp));
    },
  };
}

/**
 * Why a checked frame-chain step is not taken; the walk goes on to the next strategy. A step that
 * failed for memory the snapshot lacks is what the walk reports if nothing else finds a caller
 * (the stack may go on where it cannot be read); any other is passed over for a later failure.
 */
export function notTaken(reason: WalkStop["reason"], detail: string, address?: bigint): UnwindResult {
  const stop: WalkStop = address === undefined ? { reason, detail } : { reason, address, detail };
  return reason === "read-fault" ? { ok: false, stop } : { ok: false, stop, fallback: true };
}
