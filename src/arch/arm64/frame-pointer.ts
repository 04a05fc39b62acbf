/**
 * The ARM64 frame-record chain (arm64.md Part 4), the walker that needs no unwind data: the ABI
 * requires x29 to point at a 16-byte frame record, {caller's x29, the return address saved from
 * lr}, so pc' = strip([fp + 8]), fp' = [fp]. Where the record sits in its frame is not fixed (at
 * the top with `stp x29, x30, [sp, #-16]!`, at the bottom of the local area in MSVC's layouts),
 * so the caller's sp is a guess: fp + 16, right when the record is at the top of the frame, as
 * Breakpad has it. A chain ends at fp = 0.
 *
 * The context frame is different: in a leaf, or in a prolog before the record is stored, x29
 * still points at the caller's record and the return address is in lr. Without unwind data the
 * walker takes lr when it is a return address whose call could have entered this function (the
 * `bl` before it targets an address at or below the pc, or is a `blr`) and differs from the
 * record's; the caller then has this frame's sp and fp. Otherwise lr is a stale return address
 * from a call this function made, and the record is followed.
 */
import { hex } from "../../hex.js";
import { readU64, type MemoryReader } from "../../memory/reader.js";
import type { Module, Registers } from "../../model/snapshot.js";
import type { Arm64BreakpadFpRule, LinkRegisterRule } from "./rule.js";
import { unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { chainMachine, notTaken, type ChainMachine, type FramePointerPlan } from "../frame-chain.js";
import { callSiteCheck, enteredElsewhere, NOT_RETURN, type CallSiteCheck } from "../scan.js";
import { returnAddressInfoArm64 } from "./code.js";
import { inheritedArm64 } from "./exec.js";
import { breakpadStripPac, cachedBreakpadPacMask, stripPac } from "./pac.js";

/** A chain step's caller registers (made by a constructor: see {@link Registers}). */
class Arm64ChainRegisters {
  [name: string]: bigint;
  constructor(pc: bigint, sp: bigint, fp: bigint) {
    this.pc = pc;
    this.sp = sp;
    this.fp = fp;
  }
}

/** The chain's registers; the return address read from a record is stripped of its pointer authentication code. */
export const ARM64_CHAIN: ChainMachine = chainMachine({
  pc: "pc",
  sp: "sp",
  fp: "fp",
  width: 8,
  make: (pc, sp, fp, ctx) => new Arm64ChainRegisters((ctx?.stripPac ?? stripPac)(pc), sp, fp),
  recovered: ["pc", "sp", "fp"],
  zeroFp: "end-of-stack",
  // Records are only 8-byte aligned in practice (clang's `stp x29, x30, [sp, #40]`, arm64.md Part 4).
  align: 8,
});

/** The frame-record rule; one value serves every frame. */
export const ARM64_FRAME_RECORD_RULE: FramePointerPlan = { kind: "frame-pointer", chain: ARM64_CHAIN };

/** The frame-record chain (trust `frame-pointer`). */
export const arm64FrameRecord: UnwindStrategy<FramePointerPlan> = {
  name: "frame-pointer",
  trust: "frame-pointer",
  fixed: ARM64_FRAME_RECORD_RULE,
  ruleFor: () => ARM64_FRAME_RECORD_RULE,
};

/** The context frame's step through lr (see the file comment), kept by value. */
export interface LinkRegisterPlan {
  kind: "arm64-link";
  check: CallSiteCheck;
}

/** Runs the link-register step: the caller's pc is lr when lr is this frame's return address, else the chain is left to go on. */
export function execLinkRegister(plan: LinkRegisterPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const raw = registers["lr"];
  const sp = registers["sp"];
  if (raw === undefined || sp === undefined) return notTaken("unsupported", "LR is not known for this frame");
  const strip = ctx.stripPac ?? stripPac;
  const lr = strip(raw);
  const fp = registers["fp"];
  const saved = fp === undefined || fp === 0n ? undefined : readU64(memory, fp + 8n);
  if (saved !== undefined && strip(saved) === lr) return notTaken("unsupported", "lr is the return address the frame record holds: the record is followed");
  const info = returnAddressInfoArm64(ctx.cache, plan.check.modules, plan.check.images, lr);
  if (info === NOT_RETURN) return notTaken("unsupported", "lr is not a return address");
  if (info >= 0 && enteredElsewhere(plan.check, info)) return notTaken("unsupported", "lr returns from a call this function made: the frame record is followed");
  const out = inheritedArm64(registers);
  out["pc"] = lr;
  out["sp"] = sp;
  const rule: LinkRegisterRule = { kind: "link-register", lr, sp };
  return unwindStep(out, rule, { recovered: ["pc", "sp"] });
}

/** The context frame's (or an interrupted frame's) return address in lr (trust `frame-pointer`). */
export const arm64LinkRegister: UnwindStrategy<LinkRegisterPlan> = {
  name: "link-register",
  trust: "frame-pointer",
  ruleFor: (site: FrameSite) => (site.index === 0 || site.interrupted ? { kind: "arm64-link", check: callSiteCheck(site) } : undefined),
};

/** Breakpad's ARM64 frame-pointer step (arm64.md Part 5), kept by value, with the modules and mask its pointer stripping uses. */
export interface BreakpadFramePointerPlan {
  kind: "arm64-breakpad-fp";
  modules: readonly Module[];
  mask: bigint;
}

/**
 * This frame's lr as Breakpad's frame-pointer step sees it: the context frame's stripped by
 * Breakpad's `PtrauthStrip`, a recovered one as it was recovered (Breakpad does not strip an lr
 * that call frame info restored). Otherwise Breakpad first tries `CorrectRegLRByFramePointer`:
 * when x29 is above sp and the record at the callee's x29 holds this frame's x29, lr is the
 * (stripped) word after it. Failing that, a frame found by call frame info (here also by the
 * unwind tables) has lr 0, from the zeroed context Breakpad builds it in, and a scanned frame the
 * lr its context was copied with.
 */
function breakpadLr(plan: BreakpadFramePointerPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): bigint | undefined {
  const lr = registers["lr"];
  // The context frame's lr, which Breakpad strips when it makes the frame.
  if (ctx.recovered === undefined) return lr === undefined ? undefined : breakpadStripPac(plan.modules, plan.mask, lr);
  if (ctx.recovered.includes("lr")) return lr;
  const fp = registers["fp"];
  const sp = registers["sp"];
  const calleeFp = ctx.calleeFp;
  if (fp !== undefined && sp !== undefined && calleeFp !== undefined && fp > sp) {
    const saved = calleeFp === 0n ? 0n : readU64(memory, calleeFp);
    if (saved === fp) {
      const next = calleeFp === 0n ? 0n : readU64(memory, calleeFp + 8n);
      if (next !== undefined) return breakpadStripPac(plan.modules, plan.mask, next);
    }
  }
  return ctx.foundBy === "cfi" || ctx.foundBy === "arm64-unwind" ? 0n : lr;
}

/**
 * Runs Breakpad's frame-pointer step (`GetCallerByFramePointer`): the caller's pc is this frame's
 * lr (for the context frame, lr first, even where the function has stored its own record and lr
 * is stale; see {@link breakpadLr} for a frame whose rule did not recover lr); the caller's x29
 * and lr come from the record at x29, lr stripped of any pointer authentication code, and its sp
 * is x29 + 16. With x29 = 0 the caller keeps this frame's sp, with x29 = lr = 0. An unreadable
 * record gives no frame.
 */
export function execBreakpadFramePointer(plan: BreakpadFramePointerPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const lr = breakpadLr(plan, registers, memory, ctx);
  const fp = registers["fp"];
  const sp = registers["sp"];
  if (lr === undefined || fp === undefined || sp === undefined) return notTaken("unsupported", "lr, fp or sp is not known for this frame");
  let savedFp = 0n;
  let savedLr = 0n;
  if (fp !== 0n) {
    const f = readU64(memory, fp);
    if (f === undefined) return notTaken("read-fault", `cannot read the frame record at fp ${hex(fp)}`, fp);
    const l = readU64(memory, fp + 8n);
    if (l === undefined) return notTaken("read-fault", `cannot read the saved lr at fp+8 ${hex(fp + 8n)}`, fp + 8n);
    savedFp = f;
    savedLr = breakpadStripPac(plan.modules, plan.mask, l);
  }
  const out = inheritedArm64(registers);
  out["pc"] = lr;
  out["sp"] = fp === 0n ? sp : fp + 16n;
  out["fp"] = savedFp;
  out["lr"] = savedLr;
  const rule: Arm64BreakpadFpRule = { kind: "arm64-breakpad-fp", fp, lr: out["pc"], savedFp, savedLr };
  return unwindStep(out, rule, { recovered: ["pc", "lr", "fp", "sp"] });
}

/** Breakpad's ARM64 frame-pointer step (trust `frame-pointer`), its order after STACK CFI and before scanning. */
export const arm64BreakpadFramePointer: UnwindStrategy<BreakpadFramePointerPlan> = {
  name: "breakpad-frame-pointer",
  trust: "frame-pointer",
  ruleFor: (site: FrameSite) => ({ kind: "arm64-breakpad-fp", modules: site.modules, mask: cachedBreakpadPacMask(site.cache, site.modules) }),
};
