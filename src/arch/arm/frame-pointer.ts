/**
 * The ARM frame chains, the walker that needs no unwind data (docs/arm.md). A function built with
 * frame pointers pushes {frame pointer, lr} and points the frame pointer at the pair:
 *
 *     fp + 8   caller's stack                    <- caller's sp after return
 *     fp + 4   saved lr: the return address       -> caller's pc
 *     fp       saved frame pointer                -> caller's fp
 *
 * so pc' = [fp + 4], fp' = [fp], sp' = fp + 8 (a guess where the pair is not at the top of the
 * frame). Windows code keeps the chain in r11 (the C bit of packed unwind data), and so does ARM
 * code elsewhere; Thumb code on other systems keeps it in r7. A frame's code is Thumb when its pc
 * has bit 0 set (a return address) or, for the context frame, when Cpsr's T bit is. A chain ends
 * at a frame pointer of 0.
 *
 * The context frame may be a leaf, or in a prolog before the pair is pushed: the frame pointer
 * still points at the caller's pair and the return address is in lr. The walker takes lr when it
 * is a return address whose call could have entered this function and differs from the pair's;
 * the caller then has this frame's sp and frame pointers.
 */
import { hexPadded } from "../../hex.js";
import { readU32, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { chainMachine, notTaken, type ChainMachine, type FramePointerPlan } from "../frame-chain.js";
import { callSiteCheck, enteredElsewhere, NOT_RETURN, type CallSiteCheck } from "../scan.js";
import { unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import { returnAddressInfoArm } from "./code.js";
import { inheritedArm } from "./exec.js";
import type { ArmBreakpadFpRule, ArmLinkRegisterRule } from "./rule.js";

/** Cpsr's T bit: the interrupted code is Thumb. */
export const CPSR_THUMB = 0x20n;

/** An r11 chain step's caller registers (made by a constructor: see {@link Registers}). */
class ArmR11ChainRegisters {
  [name: string]: bigint;
  constructor(pc: bigint, sp: bigint, r11: bigint) {
    this.pc = pc;
    this.sp = sp;
    this.r11 = r11;
  }
}

/** An r7 chain step's caller registers (made by a constructor: see {@link Registers}). */
class ArmR7ChainRegisters {
  [name: string]: bigint;
  constructor(pc: bigint, sp: bigint, r7: bigint) {
    this.pc = pc;
    this.sp = sp;
    this.r7 = r7;
  }
}

function chainOn(fp: "r11" | "r7"): ChainMachine {
  return chainMachine({
    pc: "pc",
    sp: "sp",
    fp,
    width: 4,
    make: fp === "r11" ? (pc, sp, r11) => new ArmR11ChainRegisters(pc, sp, r11) : (pc, sp, r7) => new ArmR7ChainRegisters(pc, sp, r7),
    recovered: ["pc", "sp", fp],
    zeroFp: "end-of-stack",
    align: 4,
  });
}

/** The r11 chain: Windows, and ARM code elsewhere. */
export const ARM_R11_RULE: FramePointerPlan = { kind: "frame-pointer", chain: chainOn("r11") };
/** The r7 chain: Thumb code off Windows. */
export const ARM_R7_RULE: FramePointerPlan = { kind: "frame-pointer", chain: chainOn("r7") };

/** Whether a frame's code is Thumb: its return address's bit 0, or the context frame's T bit. */
export function isThumbFrame(site: Pick<FrameSite, "index" | "interrupted" | "pc" | "registers">): boolean {
  if ((site.pc & 1n) === 1n) return true;
  if (site.index === 0 || site.interrupted) return ((site.registers["cpsr"] ?? 0n) & CPSR_THUMB) !== 0n;
  return false;
}

/** The r11 chain (trust `frame-pointer`): Windows code. */
export const armFrameChain: UnwindStrategy<FramePointerPlan> = {
  name: "frame-pointer",
  trust: "frame-pointer",
  fixed: ARM_R11_RULE,
  ruleFor: () => ARM_R11_RULE,
};

/** The chain of code off Windows (trust `frame-pointer`): r7 in Thumb code, r11 in ARM code. */
export const armFrameChainElsewhere: UnwindStrategy<FramePointerPlan> = {
  name: "frame-pointer",
  trust: "frame-pointer",
  ruleFor: (site) => (isThumbFrame(site) ? ARM_R7_RULE : ARM_R11_RULE),
};

/** The context frame's step through lr, kept by value with the frame pointer its code uses. */
export interface ArmLinkRegisterPlan {
  kind: "arm-link";
  check: CallSiteCheck;
  fp: "r11" | "r7";
}

/** Runs the link-register step: the caller's pc is lr when lr is this frame's return address, else the chain is left to go on. */
export function execArmLinkRegister(plan: ArmLinkRegisterPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const lr = registers["lr"];
  const sp = registers["sp"];
  if (lr === undefined || sp === undefined) return notTaken("unsupported", "LR is not known for this frame");
  const fp = registers[plan.fp];
  const saved = fp === undefined || fp === 0n ? undefined : readU32(memory, fp + 4n);
  if (saved !== undefined && saved === lr) return notTaken("unsupported", "lr is the return address the frame pair holds: the chain is followed");
  const info = returnAddressInfoArm(ctx.cache, plan.check.modules, plan.check.images, lr);
  if (info === NOT_RETURN) return notTaken("unsupported", "lr is not a return address");
  if (info >= 0 && enteredElsewhere(plan.check, info)) return notTaken("unsupported", "lr returns from a call this function made: the chain is followed");
  const out = inheritedArm(registers);
  out["pc"] = lr;
  out["sp"] = sp;
  const rule: ArmLinkRegisterRule = { kind: "arm-link-register", lr, sp };
  return unwindStep(out, rule, { recovered: ["pc", "sp"] });
}

/** The context frame's (or an interrupted frame's) return address in lr, for Windows code (r11). */
export const armLinkRegister: UnwindStrategy<ArmLinkRegisterPlan> = {
  name: "link-register",
  trust: "frame-pointer",
  ruleFor: (site: FrameSite) => (site.index === 0 || site.interrupted ? { kind: "arm-link", check: callSiteCheck(site), fp: "r11" } : undefined),
};

/** The same for code off Windows, whose pair is at r7 in Thumb code. */
export const armLinkRegisterElsewhere: UnwindStrategy<ArmLinkRegisterPlan> = {
  name: "link-register",
  trust: "frame-pointer",
  ruleFor: (site: FrameSite) => (site.index === 0 || site.interrupted ? { kind: "arm-link", check: callSiteCheck(site), fp: isThumbFrame(site) ? "r7" : "r11" } : undefined),
};

/** Breakpad's ARM frame-pointer step (iOS), the same for every frame. */
export interface ArmBreakpadFramePointerPlan {
  kind: "arm-breakpad-fp";
}

const BREAKPAD_FP: ArmBreakpadFramePointerPlan = { kind: "arm-breakpad-fp" };

/**
 * Runs Breakpad's ARM frame-pointer step (stackwalker_arm.cc `GetCallerByFramePointer`, taken
 * only on iOS, whose frame pointer is r7): not taken when this frame's r7 was not recovered; the
 * caller's pc is this frame's lr, its r7 and lr the pair at r7, its sp r7 + 8; with r7 = 0 the
 * caller keeps this sp with r7 = lr = 0. An unreadable pair gives no frame.
 */
export function execArmBreakpadFramePointer(registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  if (ctx.recovered !== undefined && !ctx.recovered.includes("r7")) return notTaken("unsupported", "r7 is not known for this frame");
  const fp = registers["r7"];
  const lr = registers["lr"];
  const sp = registers["sp"];
  if (fp === undefined || lr === undefined || sp === undefined) return notTaken("unsupported", "r7, lr or sp is not known for this frame");
  let savedFp = 0n;
  let savedLr = 0n;
  if (fp !== 0n) {
    const f = readU32(memory, fp);
    if (f === undefined) return notTaken("read-fault", `cannot read the saved r7 at ${hexPadded(fp, 8)}`, fp);
    const l = readU32(memory, (fp + 4n) & 0xffff_ffffn);
    if (l === undefined) return notTaken("read-fault", `cannot read the saved lr at r7+4 ${hexPadded(fp + 4n, 8)}`, fp + 4n);
    savedFp = f;
    savedLr = l;
  }
  const out = inheritedArm(registers);
  out["pc"] = lr;
  out["sp"] = fp === 0n ? sp : (fp + 8n) & 0xffff_ffffn;
  out["r7"] = savedFp;
  out["lr"] = savedLr;
  const rule: ArmBreakpadFpRule = { kind: "arm-breakpad-fp", fp, lr, savedFp, savedLr };
  return unwindStep(out, rule, { recovered: ["pc", "lr", "r7", "sp"] });
}

/** Breakpad's ARM frame-pointer step on iOS (trust `frame-pointer`), before its scan. */
export const armBreakpadFramePointer: UnwindStrategy<ArmBreakpadFramePointerPlan> = {
  name: "breakpad-frame-pointer",
  trust: "frame-pointer",
  fixed: BREAKPAD_FP,
  ruleFor: () => BREAKPAD_FP,
};
