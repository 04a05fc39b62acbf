/**
 * x64 RBP-chain walking: RIP = [RBP+8], RSP = RBP+16, RBP = [RBP]. Unreliable on Windows, where
 * a frame register is optional and may sit anywhere in the fixed allocation (x64-unwind.md §1.4);
 * it holds only for code built to keep RBP as a chained frame pointer, as System V x86-64 code
 * usually is.
 */
import { readPointer, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import { unwindStep, type UnwindResult } from "../step.js";
import type { UnwindStrategy } from "../../unwind/step.js";
import { chainMachine, notTaken, padHex, type ChainMachine, type FramePointerPlan } from "../frame-chain.js";

/** A chain step's caller registers (made by a constructor: see {@link Registers}). */
class X64ChainRegisters {
  [name: string]: bigint;
  constructor(rip: bigint, rsp: bigint, rbp: bigint) {
    this.rip = rip;
    this.rsp = rsp;
    this.rbp = rbp;
  }
}

/** The x64 chain's registers: x64 code keeps no chain, so an RBP of 0 says nothing about where the stack ends. */
export const X64_CHAIN: ChainMachine = chainMachine({
  pc: "rip",
  sp: "rsp",
  fp: "rbp",
  width: 8,
  make: (rip, rsp, rbp) => new X64ChainRegisters(rip, rsp, rbp),
  recovered: ["rip", "rsp", "rbp"],
  zeroFp: "unsupported",
});

/** The RBP-chain rule; one value serves every frame. */
export const X64_FRAME_POINTER_RULE: FramePointerPlan = { kind: "frame-pointer", chain: X64_CHAIN };

/** The x64 frame-pointer strategy (trust `frame-pointer`). */
export const x64FramePointer: UnwindStrategy<FramePointerPlan> = {
  name: "frame-pointer",
  trust: "frame-pointer",
  fixed: X64_FRAME_POINTER_RULE,
  ruleFor: () => X64_FRAME_POINTER_RULE,
};

/**
 * The x64 RBP chain with Breakpad's checks (minidump.md §5.6 step 3), used off Windows: RBP
 * 8-aligned, [RBP+8] and [RBP] readable, the return address canonical, the caller's RBP at or
 * above its RSP and pointing at readable stack. A step that fails them is passed over (the walk
 * scans); RBP = 0 is never the end of the stack here, a return address of 0 is.
 */
export interface CheckedX64ChainPlan {
  kind: "x64-checked-chain";
}

/** The checked RBP chain's rule; one value serves every frame. */
export const CHECKED_X64_CHAIN_RULE: CheckedX64ChainPlan = { kind: "x64-checked-chain" };

/** Runs the checked RBP chain. */
export function execCheckedX64Chain(registers: Registers, memory: MemoryReader): UnwindResult {
  const rbp = registers["rbp"];
  if (rbp === undefined) return notTaken("unsupported", "RBP is not known for this frame");
  if (rbp === 0n) return notTaken("unsupported", "RBP is 0: this frame does not use it as a frame pointer");
  if ((rbp & 7n) !== 0n) return notTaken("unsupported", `RBP ${padHex(rbp, 8)} is not 8-byte aligned: not a frame pointer`, rbp);
  const raSlot = rbp + 8n;
  const pc = readPointer(memory, raSlot, 8);
  const savedFp = pc === undefined ? undefined : readPointer(memory, rbp, 8);
  if (pc === undefined || savedFp === undefined) return notTaken("read-fault", `RBP ${padHex(rbp, 8)} does not point into this thread's stack`, pc === undefined ? raSlot : rbp);
  // A return address below 0x1000 (0 at a thread's start) is a step the walk takes and then ends
  // on, as Breakpad's TerminateWalk does: a scan past it finds only what the thread's creator
  // left on the stack.
  if (pc > 0x7fff_ffff_ffffn && pc < 0xffff_8000_0000_0000n) return notTaken("bad-pc", `[RBP+8] = ${padHex(pc, 8)} is not a canonical address`, pc);
  const sp = rbp + 16n;
  if (sp > 0xffff_ffff_ffff_ffffn || savedFp < sp) return notTaken("unsupported", `the saved RBP ${padHex(savedFp, 8)} is below the caller's RSP ${padHex(sp & 0xffff_ffff_ffff_ffffn, 8)}`, savedFp);
  if (readPointer(memory, savedFp, 8) === undefined) return notTaken("read-fault", `the saved RBP ${padHex(savedFp, 8)} does not point into this thread's stack`, savedFp);
  return unwindStep(X64_CHAIN.make(pc, sp, savedFp), X64_CHAIN.rule, { recovered: X64_CHAIN.recovered });
}

/** The RBP chain with Breakpad's checks (the `auto` walker's off Windows, trust `frame-pointer`). */
export const x64CheckedFramePointer: UnwindStrategy<CheckedX64ChainPlan> = {
  name: "checked-frame-pointer",
  trust: "frame-pointer",
  fixed: CHECKED_X64_CHAIN_RULE,
  ruleFor: () => CHECKED_X64_CHAIN_RULE,
};
