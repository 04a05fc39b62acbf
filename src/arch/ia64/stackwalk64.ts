/**
 * The IA-64 StackWalk64 backend (stackwalk64.md §8, ia64.md §5.3): one unwind step per call.
 */
import { AddressMode } from "../../model/address.js";
import type { Registers, Snapshot } from "../../model/snapshot.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { MODE64, open64, reported64, tableEntryAt, unwindInPlace, type ContextRecord, type FacadeCall, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
import { ia64Pc } from "./rse.js";
import { ia64Params, ia64Unwind } from "./walker.js";

const U64 = 0xffff_ffff_ffff_ffffn;

/**
 * One IA-64 unwind step (ia64.md §2) applied to `ctx` in place: StIIP ← rp (slot 0), IntSp ← psp,
 * RsBSP ← skip(bsp, −sol(pfs)), StIFS ← pfs.pfm, RsPFS ← pfs, BrRp ← rp (§5.3 step 4). The
 * context frame is looked up at its IP, every later frame at its return address − 1.
 */
function unwindIa64(call: FacadeCall, ctx: Registers, contextFrame: boolean): boolean {
  const pc = ia64Pc(ctx) ?? 0n;
  return unwindInPlace(call, ctx, { strategy: ia64Unwind, machine: "ia64", pc, lookup: lookupAddress(pc, !contextFrame) & U64, contextFrame }) !== undefined;
}

/**
 * The IA-64 walker (stackwalk64.md §8, ia64.md §5.3): one unwind step per call, the CONTEXT
 * (required) rewritten in place. AddrPC = StIIP with the slot as `bundle | slot·4`, AddrStack =
 * IntSp, AddrBStore = RsBSP, AddrFrame = 0 (there is no frame pointer); AddrReturn = the caller's
 * IP. Params = r32-r35 from the backing store and FuncTableEntry = the IA-64 function-table entry
 * of the frame's function: dbghelp documents neither, so both are this port's choice, as is
 * setting Far and Virtual as the AMD64 walker does. A frame whose return address cannot be
 * computed is not reported; a return address of 0 ends the walk on the next call.
 */
export function ia64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  const opened = open64("IA64", frame, context, target, cb, ": the frame markers and RsBSP are only there");
  if ("ok" in opened) return opened;
  const { call, done } = opened;
  const { count } = opened;
  let { mode } = opened;
  const ctx = opened.context.registers;
  if (mode === MODE64.start) {
    mode = MODE64.walking;
    frame.addrPC.mode = frame.addrReturn.mode = frame.addrFrame.mode = frame.addrStack.mode = frame.addrBStore.mode = AddressMode.Flat;
  } else {
    if (frame.addrReturn.offset === 0n) return done("done", "the previous frame's return address is 0: the stack ends there");
    if (!unwindIa64(call, ctx, count === 1n)) {
      return done("unwind-failed", "the previous frame cannot be unwound (no unwind entry, or its backing store or stack cannot be read)");
    }
  }
  frame.reserved[0] = mode;
  const pc = ia64Pc(ctx) ?? 0n;
  frame.addrPC.offset = pc;
  frame.addrStack.offset = ctx["intsp"] ?? 0n;
  frame.addrBStore.offset = ctx["rsbsp"] ?? 0n;
  frame.addrFrame.offset = 0n;
  const tmp: Registers = { ...ctx };
  if (!unwindIa64(call, tmp, count === 0n)) {
    return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported");
  }
  frame.addrReturn.offset = ia64Pc(tmp) ?? 0n;
  frame.params = ia64Params(ctx, call.memory);
  const lookup = lookupAddress(pc, count !== 0n);
  frame.funcTableEntry = tableEntryAt(cb, lookup);
  return reported64(frame, count);
}
