/**
 * What rules and steps say about a frame besides its registers: how far it is to be trusted, the
 * unwind-table entry it was found with, and why a walk ends (DESIGN.md "Core types"). The frame
 * rows themselves are made by the walk (../walk/frame.ts).
 */

/**
 * How a frame was found, most trusted first: `cfi` is a symbol file's STACK CFI records
 * (minidump.md §7), the unwind tables dump_syms derives from DWARF or UNWIND_INFO.
 */
export type Trust = "context" | "unwind-info" | "cfi" | "frame-data" | "fpo" | "ia64-unwind" | "frame-pointer" | "scan";

/** Trust levels in order, most trusted first. */
export const TRUST_ORDER: readonly Trust[] = ["context", "unwind-info", "cfi", "frame-data", "fpo", "ia64-unwind", "frame-pointer", "scan"];

/** Why a walk ended. */
export type StopReason =
  | "end-of-stack"
  | "read-fault"
  | "no-progress"
  | "bad-pc"
  | "max-frames"
  /** The walks of one snapshot (a dump's threads) shared a total frame budget, and it was spent. */
  | "frame-budget"
  /** The walks of one snapshot shared a total work budget (rules evaluated, words scanned, instructions decoded), and it was spent. */
  | "work-budget"
  | "unsupported"
  /** An x86 FPO_DATA record says FRAME_TRAP: the caller's context is in a kernel trap frame. */
  | "trap-frame"
  /** An x86 FPO_DATA record says FRAME_TSS: the caller's context is in a task-state segment. */
  | "tss-frame";

/** The unwind-table entry a frame's function was found in (FPO_DATA, RUNTIME_FUNCTION, IA-64 entry). */
export interface FuncTableEntry {
  kind: "fpo" | "frame-data" | "runtime-function" | "ia64-function";
  /** Image-relative start of the function the entry covers. */
  beginRva: bigint;
  /** Image-relative end (exclusive). */
  endRva: bigint;
  /** Base of the module the entry belongs to. */
  moduleBase: bigint;
}

/** How and where a walk ended. */
export interface WalkStop {
  reason: StopReason;
  /** The address involved (an unreadable address, a bad PC), when there is one. */
  address?: bigint;
  /** The same in words. */
  detail: string;
}

/** A stop with its address when there is one (no `address: undefined` key). */
export function walkStop(reason: StopReason, detail: string, address?: bigint): WalkStop {
  return address === undefined ? { reason, detail } : { reason, address, detail };
}
