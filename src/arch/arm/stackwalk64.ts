/**
 * The ARM StackWalk64 backend for IMAGE_FILE_MACHINE_ARMNT, modelled on the ARM64 one (the native
 * model: each call unwinds the CONTEXT once with the Windows ARM unwinder).
 */
import type { Registers, Snapshot } from "../../model/snapshot.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../../model/context-layout.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { linkRegisterWalk, unwindInPlace, type ContextRecord, type FacadeCall, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
import { armUnwind } from "./unwind.js";

const U32 = 0xffff_ffffn;

/**
 * One ARM unwind applied to `ctx` in place: looked up at Pc − 2 when CONTEXT_UNWOUND_TO_CALL is
 * set (Pc is then a return address), else at Pc; the function's .pdata entry, or the leaf rule.
 * The flag is set after every unwind. False when the Pc is in no module, the unwind fails, or its
 * result fails the sanity checks: Pc and Sp both unchanged, a Pc other than 0 below 0x1000, or an
 * Sp that moved down.
 */
function unwindArm(call: FacadeCall, context: ContextRecord): boolean {
  const ctx = context.registers;
  const pc = ctx["pc"] ?? 0n;
  const returned = ((context.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
  const lookup = lookupAddress(pc, returned, "arm") & U32;
  if (lookup === 0n || call.cb.getModuleBase(lookup) === 0n) return false;
  const sp = ctx["sp"] ?? 0n;
  const sane = (caller: Registers): boolean => {
    const newPc = caller["pc"] ?? 0n;
    const newSp = caller["sp"] ?? 0n;
    return !(newPc === pc && newSp === sp) && !(newPc !== 0n && newPc < 0x1000n) && newSp >= sp;
  };
  const result = unwindInPlace(call, ctx, { strategy: armUnwind, machine: "arm", pc, lookup, contextFrame: !returned, accept: sane });
  if (result === undefined) return false;
  context.contextFlags = (context.contextFlags ?? 0) | CONTEXT_UNWOUND_TO_CALL;
  return true;
}

/**
 * The ARM walker: the link-register walk of stackwalk64-call.ts with AddrFrame = R11, the
 * Windows frame pointer; with Wine compatibility, pc = lr with Sp and R11 unchanged, until Pc
 * equals Lr.
 */
export function armWalk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  return linkRegisterWalk({ name: "ARM", fp: "r11", machine: "arm", unwind: unwindArm }, frame, context, target, cb);
}
