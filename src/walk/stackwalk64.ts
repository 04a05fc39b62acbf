/**
 * A call-by-call StackWalk64: each call fills a caller-owned STACKFRAME64 with the next frame,
 * keeping all walk state in its Reserved[] slots, with the semantics of stackwalk64.md §5-§6
 * (Wine's i386 walker, which native dbghelp matches on these points; arm64.md Part 3 for ARM64). Like dbghelp it has no
 * progress guard: a cyclic EBP chain returns frames for as long as the caller keeps calling.
 * The guarded walk is walk.ts. Each machine's backend is its definition's `stackWalk64`
 * (src/arch/<machine>/stackwalk64.ts); this file keeps the call: the machine chosen by its
 * IMAGE_FILE_MACHINE value, the callbacks resolved, and the 32-bit STACKFRAME wrappers.
 *
 * In this port hProcess is the {@link Snapshot} being walked (the `target` parameter): the NULL-callback defaults
 * (stackwalk64.md §3) read its memory, its module list and its unwind sources.
 */
import { hex } from "../hex.js";
import { address32To64Sign, address32To64Zero, address64To32 } from "../model/address.js";
import { machineFromImageFileMachine } from "../model/machine.js";
import type { Snapshot } from "../model/snapshot.js";
import { newStackFrame64, type StackFrame32, type StackFrame64 } from "../model/stackframe.js";
import { pacStripper } from "../arch/arm64/index.js";
import type { PacStrip } from "../arch/step.js";
import {
  callbacksOf,
  resolveCallbacks,
  type ContextRecord,
  type FunctionTableAccessRoutine,
  type GetModuleBaseRoutine,
  type ReadMemoryRoutine,
  type StackWalkCallbacks,
  type StackWalkResult,
  type TranslateAddressRoutine,
} from "../arch/stackwalk64-call.js";
import { archWalker } from "./registry.js";

const U32 = 0xffff_ffffn;

export type {
  Compatibility,
  ContextRecord,
  FunctionTableAccessRoutine,
  GetModuleBaseRoutine,
  ReadMemoryRoutine,
  StackWalkCallbacks,
  StackWalkResult,
  TranslateAddressRoutine,
} from "../arch/stackwalk64-call.js";

/**
 * One StackWalk64 call, with the reason for a FALSE. `target` plays hProcess (the snapshot);
 * `thread` plays hThread and is unused (no live thread to query).
 */
export function stackWalk64Detailed(
  machineType: number,
  target: Snapshot | undefined,
  frame: StackFrame64,
  context?: ContextRecord,
  callbacks: StackWalkCallbacks = {},
): StackWalkResult {
  const machine = machineFromImageFileMachine(machineType);
  if (machine === undefined) {
    return { ok: false, reason: "invalid-parameter", detail: `machine type ${hex(machineType)} has no StackWalk64 backend (ERROR_INVALID_PARAMETER)` };
  }
  let strip: PacStrip | undefined;
  if (callbacks.pacVaBits !== undefined) {
    try {
      strip = pacStripper(callbacks.pacVaBits);
    } catch (e) {
      return { ok: false, reason: "invalid-parameter", detail: (e as Error).message };
    }
  }
  const arch = archWalker(machine);
  return arch.stackWalk64(frame, context, target, resolveCallbacks(target, callbacks, strip, arch.functionTableAccess));
}

/** StackWalk64 (dbghelp.h): fills `frame` with the next frame and returns TRUE, or returns FALSE at the end. */
export function stackWalk64(
  machineType: number,
  target: Snapshot | undefined,
  _thread: unknown,
  frame: StackFrame64,
  context?: ContextRecord,
  readMemory?: ReadMemoryRoutine,
  functionTableAccess?: FunctionTableAccessRoutine,
  getModuleBase?: GetModuleBaseRoutine,
  translateAddress?: TranslateAddressRoutine,
): boolean {
  return stackWalk64Detailed(machineType, target, frame, context, callbacksOf(readMemory, functionTableAccess, getModuleBase, translateAddress)).ok;
}

/** How StackWalk widens 32-bit ADDRESS offsets: Wine zero-extends, Microsoft's Address32To64 sign-extends. */
export type AddressWidening = "zero-extend" | "sign-extend";

/**
 * The 32-bit StackWalk over a STACKFRAME (164 bytes) (stackwalk64.md §5.2): converts the record
 * in, runs the same backend, and copies the results back only on success (addresses, Params and
 * Reserved truncated to 32 bits). KdHelp is not copied.
 */
export function stackWalk32Detailed(
  machineType: number,
  target: Snapshot | undefined,
  frame: StackFrame32,
  context?: ContextRecord,
  callbacks: StackWalkCallbacks = {},
  widening: AddressWidening = "zero-extend",
): StackWalkResult {
  const widen = widening === "zero-extend" ? address32To64Zero : address32To64Sign;
  const f64: StackFrame64 = newStackFrame64();
  f64.addrPC = widen(frame.addrPC);
  f64.addrReturn = widen(frame.addrReturn);
  f64.addrFrame = widen(frame.addrFrame);
  f64.addrStack = widen(frame.addrStack);
  f64.addrBStore = widen(frame.addrBStore);
  f64.funcTableEntry = frame.funcTableEntry;
  f64.params = [...frame.params];
  f64.far = frame.far;
  f64.virtual = frame.virtual;
  f64.reserved = [...frame.reserved];
  const result = stackWalk64Detailed(machineType, target, f64, context, callbacks);
  if (!result.ok) return result;
  frame.addrPC = address64To32(f64.addrPC);
  frame.addrReturn = address64To32(f64.addrReturn);
  frame.addrFrame = address64To32(f64.addrFrame);
  frame.addrStack = address64To32(f64.addrStack);
  frame.addrBStore = address64To32(f64.addrBStore);
  frame.funcTableEntry = f64.funcTableEntry & U32;
  frame.far = f64.far;
  frame.virtual = f64.virtual;
  frame.params = [f64.params[0] & U32, f64.params[1] & U32, f64.params[2] & U32, f64.params[3] & U32];
  frame.reserved = [f64.reserved[0] & U32, f64.reserved[1] & U32, f64.reserved[2] & U32];
  return result;
}

/** StackWalk (32-bit dbghelp.h): like {@link stackWalk64} over a STACKFRAME. */
export function stackWalk(
  machineType: number,
  target: Snapshot | undefined,
  _thread: unknown,
  frame: StackFrame32,
  context?: ContextRecord,
  callbacks: StackWalkCallbacks = {},
  widening: AddressWidening = "zero-extend",
): boolean {
  return stackWalk32Detailed(machineType, target, frame, context, callbacks, widening).ok;
}
