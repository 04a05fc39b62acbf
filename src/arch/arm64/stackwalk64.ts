/**
 * The ARM64 StackWalk64 backend (arm64.md §3.3, the native model; §3.2 with Wine compatibility).
 */
import type { Registers, Snapshot } from "../../model/snapshot.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../../model/context-layout.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { linkRegisterWalk, unwindInPlace, type ContextRecord, type FacadeCall, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
import { arm64Unwind } from "./unwind.js";

const U64 = 0xffff_ffff_ffff_ffffn;

/**
 * One ARM64 unwind (arm64.md §3.3 steps 4-6) applied to `ctx` in place: looked up at Pc − 4 when
 * CONTEXT_UNWOUND_TO_CALL is set, else at Pc; RtlVirtualUnwind over the function's .pdata entry,
 * or the leaf rule; the new Pc stripped of any pointer authentication code. The flag is set after
 * an unwind that returned to a call and cleared after one a custom stack gave. False when the
 * Pc is in no module, the unwind fails, or its result fails the sanity checks of §3.3 step 6: Pc
 * and Sp both unchanged, a Pc other than 0 below 0x1000, or an Sp that moved down (an Sp that is
 * not 16-byte aligned already fails the unwind).
 */
function unwindArm64(call: FacadeCall, context: ContextRecord): boolean {
  const ctx = context.registers;
  const pc = ctx["pc"] ?? 0n;
  const returned = ((context.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
  const lookup = lookupAddress(pc, returned, "arm64") & U64;
  if (lookup === 0n || call.cb.getModuleBase(lookup) === 0n) return false;
  const sp = ctx["sp"] ?? 0n;
  const sane = (caller: Registers): boolean => {
    const newPc = caller["pc"] ?? 0n;
    const newSp = caller["sp"] ?? 0n;
    return !(newPc === pc && newSp === sp) && !(newPc !== 0n && newPc < 0x1000n) && newSp >= sp;
  };
  const result = unwindInPlace(call, ctx, { strategy: arm64Unwind, machine: "arm64", pc, lookup, contextFrame: !returned, accept: sane });
  if (result === undefined) return false;
  const flags = context.contextFlags ?? 0;
  context.contextFlags = result.interrupted === true ? flags & ~CONTEXT_UNWOUND_TO_CALL : flags | CONTEXT_UNWOUND_TO_CALL;
  return true;
}

/**
 * The ARM64 walker (arm64.md §3.3, the native model; dbghelp documents nothing ARM64-specific):
 * the link-register walk of stackwalk64-call.ts with AddrFrame = Fp (x29); with Wine
 * compatibility, Wine's `arm64_stack_walk` without DWARF (§3.2).
 */
export function arm64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  return linkRegisterWalk({ name: "ARM64", fp: "fp", machine: "arm64", unwind: unwindArm64 }, frame, context, target, cb);
}
