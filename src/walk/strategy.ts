/**
 * The split between working out an unwind rule and running it (framehop's design): a strategy
 * looks at the frame's registers and the unwind sources and returns a rule without reading
 * memory; {@link UnwindRule.exec} applies it through the memory reader.
 */
import type { MemoryReader } from "../memory/reader.js";
import type { Machine } from "../model/machine.js";
import type { Module, Registers } from "../model/snapshot.js";
import type { FuncTableEntry, RuleKind, Trust, WalkStop } from "./frame.js";
import type { RuleText } from "./lazy-text.js";

/**
 * What a strategy may look at when it works out a rule for one frame. A walk refills one site
 * object for every frame, so a rule must copy what it needs from the site when it is made
 * rather than keep the site.
 */
export interface FrameSite {
  machine: Machine;
  /** The frame's position in the walk; 0 is the context frame. */
  index: number;
  /**
   * The frame's PC is an interrupted instruction (a machine frame's, x64-unwind.md §1.8), not a
   * return address: it is unwound like the context frame's, and `lookupPc` is the PC itself.
   */
  interrupted: boolean;
  /** The frame's registers as recovered so far. */
  registers: Registers;
  /**
   * The address to look unwind information up at: the PC for the context frame, and the
   * return address − 1 for frames whose PC is a return address (see lookup-address.ts).
   */
  lookupPc: bigint;
  modules: readonly Module[];
  /**
   * The target's memory, for the images it maps (headers, unwind tables, code bytes around the
   * PC). Working out a rule may read images; only {@link UnwindRule.exec} reads the stack.
   */
  images: MemoryReader;
  /**
   * Bytes of stack parameters of the frame unwound just before this one (this frame's callee),
   * as its unwind record gave them; 0 for the context frame or when no record said so.
   */
  calleeParams: number;
}

/** The registers of the caller frame, and how the rule found them. */
export interface UnwindStep {
  /**
   * The registers to unwind the caller from, every value already within the machine's width
   * (rules compute modulo the pointer size). Besides what the rule recovered, this may carry
   * callee-saved registers over unchanged (their values by convention).
   */
  registers: Registers;
  /** The names in `registers` the rule actually recovered; all of them when omitted. */
  recovered?: readonly string[] | undefined;
  /** The rule with the values it used, for the caller frame's `rule` field; built on first read when lazy. */
  rule: RuleText;
  /** The trust of the caller frame when it differs from the strategy's (a rule that had to scan). */
  trust?: Trust | undefined;
  /** The kind of rule that found the caller when it differs from the strategy's (see {@link RuleKind}). */
  kind?: RuleKind | undefined;
  /** Bytes of stack parameters of the frame just unwound, when its record says (the next unwind's calleeParams). */
  paramsSize?: number | undefined;
  /** The unwind-table entry used for the frame just unwound. */
  entry?: FuncTableEntry | undefined;
  /** The caller's PC was interrupted (it comes from a machine frame), not returned to. */
  interrupted?: boolean | undefined;
  /**
   * The caller's PC and SP as numbers when the rule computed them as numbers (values below
   * 2^53), −1 or absent otherwise: the walk then need not convert the bigints back.
   */
  pcNumber?: number | undefined;
  spNumber?: number | undefined;
  /** The caller's backing-store pointer as a number (IA-64), −1 or absent otherwise. */
  bstoreNumber?: number | undefined;
}

/**
 * A frame's PC and SP as numbers, −1 when unknown or 2^53 or more: what the walk knows besides the
 * registers, handed to {@link UnwindRule.exec} so that number-based rules skip converting them.
 */
export interface FrameNumbers {
  pc: number;
  sp: number;
  /** The backing-store pointer (IA-64). */
  bstore: number;
  /**
   * The registers of the frame that its rule recovered (its validity, in Breakpad's terms);
   * undefined when all of them are (the context frame, or a rule that recovers everything it
   * hands on). Rules that treat a carried-over register differently from a recovered one read it.
   */
  recovered?: readonly string[] | undefined;
  /** The kind of rule that found the frame; undefined for the context frame. */
  foundBy?: RuleKind | undefined;
}

/**
 * A successful step with every field present (absent ones undefined): steps of one shape keep
 * the walk loop's reads of them fast. Rules on the per-frame path build their steps here.
 */
export function unwindStep(
  registers: Registers,
  rule: RuleText,
  recovered?: readonly string[],
  paramsSize?: number,
  entry?: FuncTableEntry,
  trust?: Trust,
  interrupted?: boolean,
  pcNumber = -1,
  spNumber = -1,
  bstoreNumber = -1,
): UnwindStep & { ok: true } {
  return { ok: true, registers, rule, recovered, paramsSize, entry, trust, interrupted, pcNumber, spNumber, bstoreNumber };
}

/** Result of running a rule: the caller's registers, or why it cannot be found. */
export type UnwindResult =
  | (UnwindStep & { ok: true })
  /**
   * `final`: the walk ends here, whatever later strategies would say (an FPO trap frame); an
   * `end-of-stack` stop is final unless `final` is false (a scan that found nothing, which a
   * later strategy may still better). `fallback`: the rule merely did not apply; when every
   * strategy fails, the walk reports a later one's failure rather than this one.
   */
  | { ok: false; stop: WalkStop; final?: boolean; fallback?: boolean };

/** A rule computed for one frame; running it is the only place memory is read. */
export interface UnwindRule {
  /** A short description of the rule itself, before it runs. */
  describe(): string;
  /** `numbers`, when given, are the PC and SP of `registers` as numbers (see {@link FrameNumbers}). */
  exec(registers: Registers, memory: MemoryReader, numbers?: FrameNumbers): UnwindResult;
}

/** One way of finding a caller frame. */
export interface UnwindStrategy {
  name: string;
  /** The trust stamped on frames this strategy finds. */
  trust: Trust;
  /** The kind of rule it makes (the trust's own kind when absent). */
  kind?: RuleKind;
  /**
   * The rule for unwinding `site` to its caller, or undefined when this strategy has none. Reads
   * no stack memory. For a caller frame (index > 0) the answer may depend only on `lookupPc`,
   * `calleeParams`, `modules` and `images` (whether the frame is the context frame, not which
   * caller it is): the walk caches rules on those, as framehop caches by PC.
   */
  ruleFor(site: FrameSite): UnwindRule | undefined;
}
