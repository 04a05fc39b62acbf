/**
 * The one place the rule unions are put together, each checked exhaustively where it is used:
 *
 * - the rules the strategies of src/arch work out, one tagged value per kind (framehop's
 *   `UnwindRule`): each holds what its frame needs — a frame chain's register names, an FPO_DATA
 *   record and the frame's sizes, an x64 unwind plan, an IA-64 save-location state — and none
 *   reads memory until exec.ts runs it (`execRule` dispatches on the kind);
 * - the rule a frame carries, {@link Rule}: what the rule followed and what it read, plain data.
 *   The kinds every machine shares are unwind/rule.ts's, each machine's own are beside it
 *   (arch/<machine>/rule.ts); rule-text.ts `ruleText` dispatches their words.
 */
import type { MemoryReader } from "../memory/reader.js";
import type { Registers } from "../model/snapshot.js";
import type { SharedRule } from "../unwind/rule.js";
import type { UnwindStrategy } from "../unwind/step.js";
import type { Arm64Rule } from "./arm64/rule.js";
import type { ArmRule } from "./arm/rule.js";
import type { ArmPlan } from "./arm/exec.js";
import type { ArmBreakpadFramePointerPlan, ArmLinkRegisterPlan } from "./arm/frame-pointer.js";
import type { Ia64Rule } from "./ia64/rule.js";
import type { ExecContext, UnwindResult } from "./step.js";
import type { X64Rule } from "./x64/rule.js";
import type { X86Rule } from "./x86/rule.js";
import type { Arm64Plan } from "./arm64/exec.js";
import type { BreakpadFramePointerPlan, LinkRegisterPlan } from "./arm64/frame-pointer.js";
import type { CfiPlan } from "./cfi.js";
import type { FramePointerPlan } from "./frame-chain.js";
import type { Ia64Plan } from "./ia64/exec.js";
import type { ScanPlan } from "./scan.js";
import type { StopPlan } from "./stop.js";
import type { CheckedX64ChainPlan } from "./x64/frame-pointer.js";
import type { UnwindInfoPlan } from "./x64/unwind.js";
import type { FpoPlan } from "./x86/fpo.js";
import type { FrameDataPlan, RecordAtReturnPlan } from "./x86/frame-data.js";
import type { X86BreakpadFramePointerPlan, X86BreakpadWinPlan } from "./x86/breakpad.js";
import type { CheckedX86ChainPlan } from "./x86/frame-pointer.js";
import type { X86EpilogPlan } from "./x86/site.js";

/** An x86 record's rule (FPO_DATA or FrameData), which an epilogue's rule falls back to. */
export type X86RecordPlan = FpoPlan | FrameDataPlan | RecordAtReturnPlan;

/**
 * A rule of a strategy of one's own (WalkOptions.strategies, a comparison with another walker):
 * a value that brings its own exec, which reads memory only through `memory`. Its frames carry a
 * `custom` rule that names it.
 */
export interface CustomPlan {
  kind: "custom";
  exec(registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult;
}

/** Every rule a strategy may return. */
export type UnwindRule =
  | FramePointerPlan
  | CheckedX86ChainPlan
  | CheckedX64ChainPlan
  | X86RecordPlan
  | X86EpilogPlan<X86RecordPlan>
  | X86BreakpadWinPlan
  | X86BreakpadFramePointerPlan
  | UnwindInfoPlan
  | Arm64Plan
  | ArmPlan
  | ArmLinkRegisterPlan
  | ArmBreakpadFramePointerPlan
  | LinkRegisterPlan
  | BreakpadFramePointerPlan
  | CfiPlan
  | ScanPlan
  | Ia64Plan
  | StopPlan
  | CustomPlan;

/** A strategy of src/arch: it returns rules of {@link UnwindRule}'s kinds. */
export type ArchStrategy = UnwindStrategy<UnwindRule>;

/** How a frame was found: the value every frame carries (its text: rule-text.ts). */
export type Rule = SharedRule | X86Rule | X64Rule | Arm64Rule | ArmRule | Ia64Rule;

/** The kind of a rule. */
export type RuleKind = Rule["kind"];

/**
 * A rule a frame works out from its own registers when it is first read: a frame chain's step
 * read exactly the frame's PC and frame pointer, just above the callee's frame pointer, so a deep
 * chain's rows keep one shared value instead of a rule each. Steps may carry it; frames never do.
 */
export interface DerivedRule {
  kind: "derived";
  /** The kind of the rule it works out. */
  of: RuleKind;
  derive(registers: Registers): Rule;
}

/** What a step says about how it found the caller: the rule, or how the caller's frame works it out. */
export type StepRule = Rule | DerivedRule;

/** The rule a frame with `registers` carries, from what its step said. */
export function frameRule(rule: StepRule, registers: Registers): Rule {
  return rule.kind === "derived" ? rule.derive(registers) : rule;
}

export type * from "../unwind/rule.js";
export type * from "./x86/rule.js";
export type * from "./x64/rule.js";
export type * from "./arm64/rule.js";
export type * from "./arm/rule.js";
export type * from "./ia64/rule.js";
