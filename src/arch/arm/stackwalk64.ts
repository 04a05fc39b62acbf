/**
 * The ARM StackWalk64 backend for IMAGE_FILE_MACHINE_ARMNT: the link-register walk of
 * stackwalk64-call.ts (the native model: each call unwinds the CONTEXT once with the Windows ARM
 * unwinder, looked up at Pc − 2 after a return) with AddrFrame = R11, the Windows frame pointer.
 * With Wine compatibility, pc = lr with Sp and R11 unchanged, until Pc equals Lr.
 */
import type { Snapshot } from "../../model/snapshot.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { linkRegisterWalk, type ContextRecord, type LinkRegisterWalker, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
import { armUnwind } from "./unwind.js";

const ARM_WALKER: LinkRegisterWalker = { name: "ARM", fp: "r11", machine: "arm", strategy: armUnwind };

/** The ARM walker: one call of StackWalk64. */
export function armWalk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  return linkRegisterWalk(ARM_WALKER, frame, context, target, cb);
}
