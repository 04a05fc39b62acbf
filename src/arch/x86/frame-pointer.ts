/** x86 EBP-chain walking: EIP = [EBP+4], ESP = EBP+8, EBP = [EBP] (stackwalk64.md §6.4, §6.7). */
import { readPointer, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import { unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { chainMachine, notTaken, padHex, type ChainMachine, type FramePointerPlan } from "../frame-chain.js";
import { callSiteCheck, enteredElsewhere, NOT_RETURN, type CallSiteCheck } from "../scan.js";
import { returnAddressInfo } from "./code.js";
import { x86Site } from "./site.js";

/** A chain step's caller registers (made by a constructor: see {@link Registers}). */
class X86ChainRegisters {
  [name: string]: bigint;
  constructor(eip: bigint, esp: bigint, ebp: bigint) {
    this.eip = eip;
    this.esp = esp;
    this.ebp = ebp;
  }
}

/** The x86 chain's registers. */
export const X86_CHAIN: ChainMachine = chainMachine({
  pc: "eip",
  sp: "esp",
  fp: "ebp",
  width: 4,
  make: (eip, esp, ebp) => new X86ChainRegisters(eip, esp, ebp),
  recovered: ["eip", "esp", "ebp"],
  zeroFp: "end-of-stack",
});

/** The EBP-chain rule; one value serves every frame. */
export const X86_FRAME_POINTER_RULE: FramePointerPlan = { kind: "frame-pointer", chain: X86_CHAIN };

/** The x86 frame-pointer strategy (trust `frame-pointer`). */
export const x86FramePointer: UnwindStrategy<FramePointerPlan> = {
  name: "frame-pointer",
  trust: "frame-pointer",
  fixed: X86_FRAME_POINTER_RULE,
  ruleFor: () => X86_FRAME_POINTER_RULE,
};

/**
 * The x86 EBP chain where no record describes the frame, taken only when the step is plausible
 * (a frame without an unwind record may well not use EBP as a frame pointer): EBP not 0, not
 * below ESP, [EBP] and [EBP+4] readable, and [EBP+4] a return address whose call site does not
 * contradict the frame (see ../scan.ts). Otherwise the walk scans. An EBP of 0 ends the stack
 * only in a frame the chain itself found (its callee saved 0 there: the chain's conventional
 * end); a return address of 0 only together with a saved EBP of 0.
 */
export interface CheckedX86ChainPlan {
  kind: "x86-checked-chain";
  check: CallSiteCheck;
}

/** Runs the checked x86 chain. */
export function execCheckedX86Chain(plan: CheckedX86ChainPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const ebp = registers["ebp"];
  const esp = registers["esp"];
  if (ebp === undefined || esp === undefined) return notTaken("unsupported", "EBP or ESP is not known for this frame");
  if (ebp === 0n) {
    // A 0 the chain recovered is its conventional end, unless a scan finds a return address
    // (one its call site confirms, where the dump holds the code); any other EBP of 0 is a
    // register value, not a frame pointer.
    if (ctx.foundBy === "frame-pointer") {
      return { ok: false, stop: { reason: "end-of-stack", detail: "EBP is 0: the frame chain ends here, and no return address was found above ESP" }, final: false };
    }
    return notTaken("unsupported", "EBP is 0: this frame does not use it as a frame pointer");
  }
  if (ebp < esp) return notTaken("unsupported", `EBP ${padHex(ebp, 4)} is below ESP ${padHex(esp, 4)}: not this frame's frame pointer`, ebp);
  const raSlot = (ebp + 4n) & 0xffff_ffffn;
  const pc = readPointer(memory, raSlot, 4);
  const savedFp = pc === undefined ? undefined : readPointer(memory, ebp, 4);
  if (pc === undefined || savedFp === undefined) return notTaken("read-fault", `EBP ${padHex(ebp, 4)} does not point into this thread's stack`, pc === undefined ? raSlot : ebp);
  if (pc === 0n && savedFp !== 0n) return notTaken("bad-pc", `[EBP+4] = 0 under a saved EBP of ${padHex(savedFp, 4)}: not the chain's end`, raSlot);
  const check = plan.check;
  if (pc !== 0n) {
    const info = returnAddressInfo(ctx.cache, check.modules, check.images, pc);
    if (info === NOT_RETURN) return notTaken("bad-pc", `[EBP+4] = ${padHex(pc, 4)} is not a return address`, pc);
    if (info >= 0 && enteredElsewhere(check, info)) return notTaken("bad-pc", `[EBP+4] = ${padHex(pc, 4)} returns from a call to ${padHex(BigInt(info), 4)}, above this frame's PC`, pc);
  }
  const sp = (ebp + 8n) & 0xffff_ffffn;
  return unwindStep(X86_CHAIN.make(pc, sp, savedFp), X86_CHAIN.rule);
}

/**
 * The `auto` walker's EBP chain (trust `frame-pointer`): in a module without unwind records, the
 * chain where plausible, else a pass to the scan; in a module with records, whose rules failed
 * for this frame, the plain chain (the records, not a free scan, describe such a frame).
 */
export const x86CheckedFramePointer: UnwindStrategy<FramePointerPlan | CheckedX86ChainPlan> = {
  name: "checked-frame-pointer",
  trust: "frame-pointer",
  ruleFor: (site: FrameSite) => (x86Site(site) !== undefined ? X86_FRAME_POINTER_RULE : { kind: "x86-checked-chain", check: callSiteCheck(site) }),
};
