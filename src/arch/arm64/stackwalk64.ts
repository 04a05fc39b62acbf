/**
 * The ARM64 StackWalk64 backend (arm64.md §3.3, the native model; §3.2 with Wine compatibility).
 */
import type { Registers, Snapshot } from "../../model/snapshot.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../../model/context-layout.js";
import { AddressMode } from "../../model/address.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { MODE64, open64, reported64, tableEntryAt, unwindInPlace, type ContextRecord, type FacadeCall, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
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
 * AddrPC = Pc, AddrStack = Sp, AddrFrame = Fp of the unwound CONTEXT (required), AddrReturn the Pc
 * an unwind of a copy gives, Params 0, FuncTableEntry the 8-byte .pdata entry, Far and Virtual
 * TRUE. A frame whose return address cannot be computed is not reported; a return address of 0
 * ends the walk on the next call. With Wine compatibility, Wine's `arm64_stack_walk` without DWARF
 * (§3.2): AddrReturn = Lr of the same CONTEXT, and the next frame is Pc = Lr with Sp and Fp
 * unchanged, until Pc equals Lr: two frames.
 */
export function arm64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  const opened = open64("ARM64", frame, context, target, cb);
  if ("ok" in opened) return opened;
  const { call, done } = opened;
  const { count } = opened;
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
      // Wine without DWARF: pc = lr, nothing else changes; no progress once pc is lr.
      if (ctx["pc"] === ctx["lr"]) return done("unwind-failed", "Pc equals Lr: Wine's walker has no other way to the caller without DWARF unwind data");
      ctx["pc"] = ctx["lr"] ?? 0n;
    } else if (!unwindArm64(call, context)) {
      return done("unwind-failed", "the previous frame cannot be unwound (its Pc is in no module, or its unwind data or stack cannot be read)");
    }
  }
  frame.reserved[0] = mode;
  frame.params = [0n, 0n, 0n, 0n];
  frame.addrPC.offset = ctx["pc"] ?? 0n;
  frame.addrStack.offset = ctx["sp"] ?? 0n;
  frame.addrFrame.offset = ctx["fp"] ?? 0n;
  if (wine) frame.addrReturn.offset = ctx["lr"] ?? 0n;
  else {
    const copy: ContextRecord = { registers: { ...ctx }, contextFlags: context.contextFlags ?? 0 };
    if (!unwindArm64(call, copy)) return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported");
    frame.addrReturn.offset = copy.registers["pc"] ?? 0n;
    const returned = ((context.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
    const lookup = lookupAddress(frame.addrPC.offset, returned, "arm64");
    frame.funcTableEntry = tableEntryAt(cb, lookup);
  }
  return reported64(frame, count);
}
