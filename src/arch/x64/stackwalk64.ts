/**
 * The AMD64 StackWalk64 backend (stackwalk64.md §7): one call, the Windows unwinder on the CONTEXT.
 */
import { AddressMode } from "../../model/address.js";
import type { Registers, Snapshot } from "../../model/snapshot.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { MODE64, open64, reported64, unwindInPlace, type ContextRecord, type FacadeCall, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
import { x64UnwindInfo } from "./unwind.js";

const U64 = 0xffff_ffff_ffff_ffffn;

/**
 * unwind64(ctx, pc) (stackwalk64.md §7.3): a PC outside every module ends the walk; otherwise
 * the Windows unwinder (x64-unwind.md) runs on `ctx` in place: the function's unwind info, or
 * the leaf rule when it has no RUNTIME_FUNCTION. `pc` is the frame's PC, looked up as it is for
 * the context frame and at return address − 1 otherwise. Records FuncTableEntry when asked.
 */
function unwind64(call: FacadeCall, ctx: Registers, at: { pc: bigint; contextFrame: boolean; entry?: (rtf: bigint) => void }): boolean {
  const { pc, contextFrame } = at;
  const lookup = lookupAddress(pc, !contextFrame) & U64;
  if (lookup === 0n || call.cb.getModuleBase(lookup) === 0n) return false;
  const rtf = call.cb.functionTableAccess(lookup);
  at.entry?.(rtf);
  return unwindInPlace(call, ctx, { strategy: x64UnwindInfo, machine: "x64", pc, lookup, contextFrame }) !== undefined;
}

/**
 * The AMD64 walker (stackwalk64.md §7.2): AddrPC/AddrStack/AddrFrame always come from the CONTEXT
 * (AddrFrame is the unwound RBP), Params are 0, the context frame uses the exact IP and every
 * later frame return address − 1, a frame whose return cannot be computed is not reported, and
 * a return of 0 ends the walk on the next call. Unwinding follows Windows' rules rather than
 * Wine's interpreter (x64-unwind.md), in both compatibility modes.
 */
export function amd64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  const opened = open64("AMD64", frame, context, target, cb);
  if ("ok" in opened) return opened;
  const { call, done } = opened;
  const { count } = opened;
  let { mode } = opened;
  const ctx = opened.context.registers;
  let deltapc = count <= 1n ? 0n : 1n;
  if (mode === MODE64.start) {
    if (frame.addrPC.mode === AddressMode.Flat && frame.addrFrame.mode !== AddressMode.Flat) {
      return done("bad-frame", "AddrPC is flat but AddrFrame is not: set AddrFrame.Mode = AddrModeFlat");
    }
    mode = MODE64.walking;
    frame.addrReturn.mode = AddressMode.Flat;
    frame.addrStack.mode = AddressMode.Flat;
    frame.addrBStore = { offset: 0n, segment: 0, mode: 0 };
  } else {
    if (frame.addrReturn.offset === 0n) return done("done", "the previous frame's return address is 0: the stack ends there");
    if (!unwind64(call, ctx, { pc: frame.addrPC.offset, contextFrame: deltapc === 0n, entry: (rtf) => (frame.funcTableEntry = rtf) })) {
      return done("unwind-failed", "the previous frame cannot be unwound (its PC is in no module, or its stack cannot be read)");
    }
    deltapc = 1n;
  }
  frame.reserved[0] = mode;
  frame.params = [0n, 0n, 0n, 0n];
  frame.addrStack.offset = ctx["rsp"] ?? 0n;
  frame.addrFrame.offset = ctx["rbp"] ?? 0n;
  frame.addrPC.offset = ctx["rip"] ?? 0n;
  const tmp: Registers = { ...ctx };
  if (!unwind64(call, tmp, { pc: frame.addrPC.offset, contextFrame: deltapc === 0n })) {
    return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported (as Wine's walker does)");
  }
  frame.addrReturn.mode = AddressMode.Flat;
  frame.addrReturn.offset = tmp["rip"] ?? 0n;
  return reported64(frame, count);
}
