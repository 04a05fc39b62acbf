/**
 * The ARM StackWalk64 backend for IMAGE_FILE_MACHINE_ARMNT, modelled on the ARM64 one (the native
 * model: each call unwinds the CONTEXT once with the Windows ARM unwinder).
 */
import type { Registers, Snapshot } from "../../model/snapshot.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../../model/context-layout.js";
import { AddressMode } from "../../model/address.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { MODE64, open64, reported64, tableEntryAt, unwindInPlace, type ContextRecord, type FacadeCall, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
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
 * The ARM walker: AddrPC = Pc, AddrStack = Sp, AddrFrame = R11 of the unwound CONTEXT, AddrReturn
 * the Pc an unwind of a copy gives, Params 0, FuncTableEntry the 8-byte .pdata entry, Far and
 * Virtual TRUE. A frame whose return address cannot be computed is not reported; a return address
 * of 0 ends the walk on the next call. With Wine compatibility, pc = lr with Sp and R11 unchanged,
 * until Pc equals Lr.
 */
export function armWalk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  const opened = open64("ARM", frame, context, target, cb);
  if ("ok" in opened) return opened;
  const { call, done, count } = opened;
  let { mode } = opened;
  context = opened.context;
  const ctx = context.registers;
  const wine = cb.compatibility === "wine";
  if (mode === MODE64.start) {
    mode = MODE64.walking;
    frame.addrPC.mode = frame.addrReturn.mode = frame.addrFrame.mode = frame.addrStack.mode = AddressMode.Flat;
    frame.addrBStore = { offset: 0n, segment: 0, mode: 0 };
  } else {
    if (frame.addrReturn.offset === 0n) return done("done", "the previous frame's return address is 0: the stack ends there");
    if (wine) {
      if (ctx["pc"] === ctx["lr"]) return done("unwind-failed", "Pc equals Lr: without unwind data there is no other way to the caller");
      ctx["pc"] = ctx["lr"] ?? 0n;
    } else if (!unwindArm(call, context)) {
      return done("unwind-failed", "the previous frame cannot be unwound (its Pc is in no module, or its unwind data or stack cannot be read)");
    }
  }
  frame.reserved[0] = mode;
  frame.params = [0n, 0n, 0n, 0n];
  frame.addrPC.offset = ctx["pc"] ?? 0n;
  frame.addrStack.offset = ctx["sp"] ?? 0n;
  frame.addrFrame.offset = ctx["r11"] ?? 0n;
  if (wine) frame.addrReturn.offset = ctx["lr"] ?? 0n;
  else {
    const copy: ContextRecord = { registers: { ...ctx }, contextFlags: context.contextFlags ?? 0 };
    if (!unwindArm(call, copy)) return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported");
    frame.addrReturn.offset = copy.registers["pc"] ?? 0n;
    const returned = ((context.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
    frame.funcTableEntry = tableEntryAt(cb, lookupAddress(frame.addrPC.offset, returned, "arm"));
  }
  return reported64(frame, count);
}
