/**
 * x64 RBP-chain walking: RIP = [RBP+8], RSP = RBP+16, RBP = [RBP]. Unreliable on Windows, where
 * a frame register is optional and may sit anywhere in the fixed allocation (x64-unwind.md §1.4);
 * it holds only for code built to keep RBP as a chained frame pointer, as System V x86-64 code
 * usually is.
 */
import { readPointer, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import { lazyText } from "../../walk/lazy-text.js";
import { unwindStep, type UnwindResult, type UnwindRule, type UnwindStrategy } from "../../walk/strategy.js";
import { chainText, frameChainRule, notTaken, padHex, type FrameChainRegisters } from "../frame-chain.js";

const X64_CHAIN: FrameChainRegisters = { pc: "rip", sp: "rsp", fp: "rbp", width: 8, make: (rip, rsp, rbp) => ({ rip, rsp, rbp }) };
const X64_CHAIN_RECOVERED: readonly string[] = ["rip", "rsp", "rbp"];

/** The RBP-chain rule; one value serves every frame. */
export const X64_FRAME_POINTER_RULE = frameChainRule(X64_CHAIN);

/** The x64 frame-pointer strategy (trust `frame-pointer`). */
export const x64FramePointer: UnwindStrategy = {
  name: "frame-pointer",
  trust: "frame-pointer",
  kind: "frame-pointer",
  ruleFor: () => X64_FRAME_POINTER_RULE,
};

/**
 * The x64 RBP chain with Breakpad's checks (minidump.md §5.6 step 3), used off Windows: RBP
 * 8-aligned, [RBP+8] and [RBP] readable, the return address canonical and at least 0x1000, the
 * caller's RBP at or above its RSP and pointing at readable stack. A step that fails them is
 * passed over (the walk scans); RBP = 0 is never the end of the stack here.
 */
export const CHECKED_X64_CHAIN_RULE: UnwindRule = {
  describe: () => "rbp-chain with Breakpad's checks: rip=[rbp+8], rsp=rbp+16, rbp=[rbp]",
  exec(registers: Registers, memory: MemoryReader): UnwindResult {
    const rbp = registers["rbp"];
    if (rbp === undefined) return notTaken("unsupported", "RBP is not known for this frame");
    if (rbp === 0n) return notTaken("unsupported", "RBP is 0: this frame does not use it as a frame pointer");
    if ((rbp & 7n) !== 0n) return notTaken("unsupported", `RBP ${padHex(rbp, 8)} is not 8-byte aligned: not a frame pointer`, rbp);
    const raSlot = rbp + 8n;
    const pc = readPointer(memory, raSlot, 8);
    const savedFp = pc === undefined ? undefined : readPointer(memory, rbp, 8);
    if (pc === undefined || savedFp === undefined) return notTaken("read-fault", `RBP ${padHex(rbp, 8)} does not point into this thread's stack`, pc === undefined ? raSlot : rbp);
    if ((pc > 0x7fff_ffff_ffffn && pc < 0xffff_8000_0000_0000n) || pc < 0x1000n) return notTaken("bad-pc", `[RBP+8] = ${padHex(pc, 8)} is not a code address`, pc);
    const sp = rbp + 16n;
    if (sp > 0xffff_ffff_ffff_ffffn || savedFp < sp) return notTaken("unsupported", `the saved RBP ${padHex(savedFp, 8)} is below the caller's RSP ${padHex(sp & 0xffff_ffff_ffff_ffffn, 8)}`, savedFp);
    if (readPointer(memory, savedFp, 8) === undefined) return notTaken("read-fault", `the saved RBP ${padHex(savedFp, 8)} does not point into this thread's stack`, savedFp);
    return unwindStep(X64_CHAIN.make(pc, sp, savedFp), lazyText(chainText, X64_CHAIN, rbp, raSlot, pc, savedFp, sp), X64_CHAIN_RECOVERED);
  },
};

/** The RBP chain with Breakpad's checks (the `auto` walker's off Windows, trust `frame-pointer`). */
export const x64CheckedFramePointer: UnwindStrategy = {
  name: "checked-frame-pointer",
  trust: "frame-pointer",
  kind: "frame-pointer",
  ruleFor: () => CHECKED_X64_CHAIN_RULE,
};
