/**
 * x64 RBP-chain walking: RIP = [RBP+8], RSP = RBP+16, RBP = [RBP]. Unreliable on Windows, where
 * a frame register is optional and may sit anywhere in the fixed allocation (x64-unwind.md §1.4);
 * it holds only for code built to keep RBP as a chained frame pointer.
 */
import type { UnwindStrategy } from "../../walk/strategy.js";
import { frameChainRule } from "../frame-chain.js";

/** The RBP-chain rule; one value serves every frame. */
export const X64_FRAME_POINTER_RULE = frameChainRule({ pc: "rip", sp: "rsp", fp: "rbp", width: 8, make: (rip, rsp, rbp) => ({ rip, rsp, rbp }) });

/** The x64 frame-pointer strategy (trust `frame-pointer`). */
export const x64FramePointer: UnwindStrategy = {
  name: "frame-pointer",
  trust: "frame-pointer",
  ruleFor: () => X64_FRAME_POINTER_RULE,
};
