/**
 * The ARM64 StackWalk64 backend (arm64.md §3.3, the native model; §3.2 with Wine compatibility):
 * the link-register walk of stackwalk64-call.ts with AddrFrame = Fp (x29), each unwind looked up
 * at Pc − 4 after a return and run by RtlVirtualUnwind over the function's .pdata entry (the new
 * Pc stripped of any pointer authentication code; an Sp that is not 16-byte aligned fails it).
 * With Wine compatibility, Wine's `arm64_stack_walk` without DWARF (§3.2).
 */
import type { Snapshot } from "../../model/snapshot.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { linkRegisterWalk, type ContextRecord, type LinkRegisterWalker, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
import { arm64Unwind } from "./unwind.js";

const ARM64_WALKER: LinkRegisterWalker = { name: "ARM64", fp: "fp", machine: "arm64", strategy: arm64Unwind };

/** The ARM64 walker: one call of StackWalk64. */
export function arm64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  return linkRegisterWalk(ARM64_WALKER, frame, context, target, cb);
}
