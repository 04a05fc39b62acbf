/**
 * What a walk produces: frames named after STACKFRAME64 fields, each stamped with how it was
 * found (its trust and its rule, a value: ../arch/rule.ts), and a recorded reason why the walk
 * ended (DESIGN.md "Core types"). The vocabulary of trust, stop reasons and table entries is the
 * unwind layer's, re-exported here with the rows that use it.
 */
import type { Registers } from "../model/snapshot.js";
import type { FuncTableEntry, Trust, WalkStop } from "../unwind/frame.js";
import type { Rule } from "../arch/rule.js";

export { TRUST_ORDER, type FuncTableEntry, type StopReason, type Trust, type WalkStop } from "../unwind/frame.js";

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
  /** How this frame was found, with the values its rule used; `ruleText(rule)` gives it in words. */
  rule: Rule;
  /** The registers the rule recovered for this frame (the whole context for frame 0). */
  registers: Registers;
  /**
   * What the next unwind starts from: `registers` plus callee-saved registers the rule left
   * alone, carried over from the callee (their values by convention). Absent when equal to
   * `registers`.
   */
  unwindRegisters?: Registers;
}

/** A walked thread. */
export interface Walk {
  frames: Frame[];
  stop: WalkStop;
}
