/**
 * The rules the strategies of src/arch work out, one tagged value per kind (framehop's
 * `UnwindRule`): each holds what its frame needs — a frame chain's register names, an FPO_DATA
 * record and the frame's sizes, an x64 unwind plan, an IA-64 save-location state — and none reads
 * memory until exec.ts runs it. The frame a rule finds carries a different value, unwind/rule.ts's
 * `Rule`: what the rule followed and what it read.
 */
import type { MemoryReader } from "../memory/reader.js";
import type { Registers } from "../model/snapshot.js";
import type { ExecContext, UnwindResult, UnwindStrategy } from "../unwind/step.js";
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
  | LinkRegisterPlan
  | BreakpadFramePointerPlan
  | CfiPlan
  | ScanPlan
  | Ia64Plan
  | StopPlan
  | CustomPlan;

/** A strategy of src/arch: it returns rules of {@link UnwindRule}'s kinds. */
export type ArchStrategy = UnwindStrategy<UnwindRule>;
