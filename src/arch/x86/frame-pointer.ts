/** x86 EBP-chain walking: EIP = [EBP+4], ESP = EBP+8, EBP = [EBP] (stackwalk64.md §6.4, §6.7). */
import type { UnwindStrategy } from "../../walk/strategy.js";
import { frameChainRule } from "../frame-chain.js";

/** The EBP-chain rule; one value serves every frame. */
export const X86_FRAME_POINTER_RULE = frameChainRule({ pc: "eip", sp: "esp", fp: "ebp", width: 4, make: (eip, esp, ebp) => ({ eip, esp, ebp }) });

/** The x86 frame-pointer strategy (trust `frame-pointer`). */
export const x86FramePointer: UnwindStrategy = {
  name: "frame-pointer",
  trust: "frame-pointer",
  ruleFor: () => X86_FRAME_POINTER_RULE,
};
