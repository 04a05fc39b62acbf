/**
 * What running a rule gives (src/arch/exec.ts, the only place stack memory is read): a step, the
 * caller's registers and how they were found (a rule of arch/rule.ts's union, or how the caller's
 * frame works it out), or why the caller cannot be found; and what running a rule may know of
 * the frame besides its registers.
 */
import type { Registers } from "../model/snapshot.js";
import type { UnwindCache } from "../unwind/cache.js";
import type { FuncTableEntry, Trust, WalkStop } from "../unwind/frame.js";
import type { RuleKind, StepRule } from "./rule.js";

/** What a successful step reports besides the caller's registers and its rule (see {@link UnwindStep}). */
export interface StepFields {
  /** The names in the step's registers the rule actually recovered; all of them when omitted. */
  recovered?: readonly string[] | undefined;
  /** The trust of the caller frame when it differs from the strategy's (a rule that had to scan). */
  trust?: Trust | undefined;
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

/** The registers of the caller frame, and how the rule found them. */
export interface UnwindStep extends StepFields {
  /**
   * The registers to unwind the caller from, every value already within the machine's width
   * (rules compute modulo the pointer size). Besides what the rule recovered, this may carry
   * callee-saved registers over unchanged (their values by convention).
   */
  registers: Registers;
  /** How the caller frame was found, with the values the rule used (or how the caller's frame works them out). */
  rule: StepRule;
}

/** A successful step. */
export type OkStep = UnwindStep & { ok: true };

/** Result of running a rule: the caller's registers, or why it cannot be found. */
export type UnwindResult =
  | OkStep
  /**
   * `final`: the walk ends here, whatever later strategies would say (an FPO trap frame); an
   * `end-of-stack` stop is final unless `final` is false (a scan that found nothing, which a
   * later strategy may still better). `fallback`: the rule merely did not apply; when every
   * strategy fails, the walk reports a later one's failure rather than this one.
   */
  | { ok: false; stop: WalkStop; final?: boolean; fallback?: boolean };

const NONE: StepFields = {};

/**
 * A successful step with every field present (absent ones undefined): steps of one shape keep
 * the walk loop's reads of them fast.
 */
export function unwindStep(registers: Registers, rule: StepRule, fields: StepFields = NONE): OkStep {
  return {
    ok: true,
    registers,
    rule,
    recovered: fields.recovered,
    trust: fields.trust,
    paramsSize: fields.paramsSize,
    entry: fields.entry,
    interrupted: fields.interrupted,
    pcNumber: fields.pcNumber ?? -1,
    spNumber: fields.spNumber ?? -1,
    bstoreNumber: fields.bstoreNumber ?? -1,
  };
}

/** A failed step: `stop`, and whether it ends the walk or merely did not apply. */
export function failed(stop: WalkStop, how?: { final?: boolean; fallback?: boolean }): UnwindResult {
  return how === undefined ? { ok: false, stop } : { ok: false, stop, ...how };
}

/**
 * What running a rule may know of the frame besides its registers: its PC, SP and BSP as numbers
 * (−1 when unknown or 2^53 or more, so number-based rules skip converting them), what found it,
 * and the walk's cache. One object per walk, refilled for every frame.
 */
export interface ExecContext {
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
  /** The frame pointer of the frame this one was unwound from (its callee); undefined for the context frame. */
  calleeFp?: bigint | undefined;
  /**
   * ARM64: how a return address taken from lr or memory loses its pointer authentication code
   * (arm64.md §1.12): at the walk's virtual-address size, or by Breakpad's `PtrauthStrip` in
   * Breakpad's order; undefined for the default size, 48 bits.
   */
  stripPac?: PacStrip | undefined;
  /**
   * False once the walk has found its most frames by scanning (Breakpad's `max_frames_scanned`):
   * a rule that scans only as a fallback (Breakpad's STACK WIN and EBP-chain steps) does not.
   */
  scanAllowed?: boolean | undefined;
  cache: UnwindCache;
  /**
   * The step a rule's usual success is written into ({@link stepInto}): the walk's own, made on
   * the first success and refilled by every later one. Rules stay immutable values; the walk
   * reads a step before it runs the next rule, so one step at a time is all it holds (a rule that
   * keeps one step while it runs another copies it first).
   */
  step?: OkStep | undefined;
}

/**
 * A plain success written into the context's step ({@link ExecContext.step}), every field
 * rewritten: one step object per walk instead of one per frame.
 */
export function stepInto(ctx: ExecContext, registers: Registers, rule: StepRule, recovered: readonly string[] | undefined, entry: FuncTableEntry | undefined, pcNumber: number, spNumber: number, paramsSize?: number): OkStep {
  const step = ctx.step;
  if (step === undefined) return (ctx.step = unwindStep(registers, rule, { recovered, entry, pcNumber, spNumber, paramsSize }));
  step.registers = registers;
  step.rule = rule;
  step.recovered = recovered;
  step.trust = undefined;
  step.paramsSize = paramsSize;
  step.entry = entry;
  step.interrupted = undefined;
  step.pcNumber = pcNumber;
  step.spNumber = spNumber;
  step.bstoreNumber = -1;
  return step;
}

/** An execution context that knows nothing of the frame but its cache (for a rule run on its own). */
export function execContext(cache: UnwindCache): ExecContext {
  return { pc: -1, sp: -1, bstore: -1, recovered: undefined, foundBy: undefined, cache, step: undefined };
}

/**
 * Strips an ARM64 pointer authentication code from a return address; a value at or below
 * `plainBelow` holds no code and comes back as it is. `plainBelowNumber` is that limit as a number
 * (a number address at or below it is plain), {@link Number.MAX_SAFE_INTEGER} when the limit is
 * above every number address.
 */
export type PacStrip = ((p: bigint) => bigint) & { readonly plainBelow: bigint; readonly plainBelowNumber: number };
