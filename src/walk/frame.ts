/**
 * What a walk produces: frames named after STACKFRAME64 fields, each stamped with how it was
 * found, and a recorded reason why the walk ended (DESIGN.md "Core types").
 */
import type { Registers } from "../model/snapshot.js";

/**
 * How a frame was found, most trusted first: `cfi` is a symbol file's STACK CFI records
 * (minidump.md §7), the unwind tables dump_syms derives from DWARF or UNWIND_INFO.
 */
export type Trust = "context" | "unwind-info" | "cfi" | "frame-data" | "fpo" | "ia64-unwind" | "frame-pointer" | "scan";

/** Trust levels in order, most trusted first. */
export const TRUST_ORDER: readonly Trust[] = ["context", "unwind-info", "cfi", "frame-data", "fpo", "ia64-unwind", "frame-pointer", "scan"];

/**
 * What kind of rule found a frame: the `kind` of its rule value (DESIGN.md "Core types"). Mostly
 * the trust's own kind; it says more where one trust covers several rules: a record rule whose
 * result was repaired by scanning keeps its record's kind with trust `scan`, and `leaf` is the
 * return simulated from a leaf function (the return address at the stack pointer or one word
 * above, the whole register set carried over), also trust `scan`.
 */
export type RuleKind = "context" | "unwind-info" | "cfi" | "frame-data" | "fpo" | "ia64-unwind" | "frame-pointer" | "scan" | "leaf";

/** Why a walk ended. */
export type StopReason =
  | "end-of-stack"
  | "read-fault"
  | "no-progress"
  | "bad-pc"
  | "max-frames"
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

/** One row of a walk. */
export interface Frame {
  index: number;
  addrPC: bigint;
  /** The return address of this frame: the PC of the next frame out, 0 when none is known. */
  addrReturn: bigint;
  addrFrame: bigint;
  addrStack: bigint;
  addrBStore: bigint;
  params: bigint[];
  far: boolean;
  virtual: boolean;
  funcTableEntry?: FuncTableEntry;
  trust: Trust;
  /** The kind of rule that found this frame; absent when it is the trust's own kind. */
  ruleKind?: RuleKind | undefined;
  /** The rule that found this frame, with the values it used, e.g. "ebp-chain ebp=0x0012ff70". */
  rule: string;
  /** The registers the rule recovered for this frame (the whole context for frame 0). */
  registers: Registers;
  /**
   * What the next unwind starts from: `registers` plus callee-saved registers the rule left
   * alone, carried over from the callee (their values by convention). Absent when equal to
   * `registers`.
   */
  unwindRegisters?: Registers;
}

/** How and where a walk ended. */
export interface WalkStop {
  reason: StopReason;
  /** The address involved (an unreadable address, a bad PC), when there is one. */
  address?: bigint;
  /** The same in words. */
  detail: string;
}

/** A walked thread. */
export interface Walk {
  frames: Frame[];
  stop: WalkStop;
}
