/**
 * stackwalk-emu/arch: the machine table and the walker's insides, for those who build on them: the
 * rule values and their text, one unwind step, the per-machine strategies (x86, x64, IA-64,
 * ARM64), the progress check, and the IA-64 and ARM64 decoders.
 * Like the root entry it runs in a browser (no Node built-ins). Re-exports only.
 */
export * from "../model/machine.js";
export { TRUST_ORDER, type FuncTableEntry, type Frame, type Walk, type Trust, type WalkStop, type StopReason } from "../walk/frame.js";
export type * from "../unwind/rule.js";
export type {
  Rule,
  RuleKind,
  DerivedRule,
  StepRule,
  frameRule,
  X86Rule,
  X64Rule,
  Arm64Rule,
  FpoRule,
  FrameDataReturn,
  FrameDataRule,
  SiteCheckRule,
  EpilogSource,
  X86EpilogRule,
  UnwindOpStep,
  UnwindInfoPart,
  UnwindInfoEpilog,
  UnwindInfoRule,
  RescanRule,
  Arm64OpStep,
  Arm64Position,
  Arm64UnwindRule,
  LinkRegisterRule,
  Arm64BreakpadFpRule,
  SaveLocation,
  RpLocation,
  PfsLocation,
  PspRule,
  Ia64Locations,
  Ia64Rule,
} from "../arch/rule.js";
export { ruleText, fpoLabel, unwindOpText, saveLocationText, pspText, stateText as ia64StateText } from "../arch/rule-text.js";
export { UnwindCache } from "../unwind/cache.js";
export type { FrameSite, UnwindStrategy } from "../unwind/step.js";
export { unwindStep, type UnwindStep, type UnwindResult, type ExecContext, type StepFields, type OkStep } from "../arch/step.js";
export { execRule } from "../arch/exec.js";
export type { UnwindRule, ArchStrategy, CustomPlan } from "../arch/rule.js";
export { walkThread, walkSnapshot, checkProgress, DEFAULT_MAX_FRAMES, MIN_PC, type WalkOptions, type ThreadWalk } from "../walk/walk.js";
export { archWalker, strategiesFor, WALKER_NAMES, type ArchWalker, type WalkerName } from "../walk/registry.js";
export type { ArchDefinition } from "../arch/definition.js";
export type { StackWalkBackend, FunctionTableAccess, ResolvedCallbacks } from "../arch/stackwalk64-call.js";
export { ia64Rse, ia64FrameStateAt, type Ia64FrameState, ia64Unwind, ia64Params, ia64FunctionTableAccess, IA64_TWO_STACKS } from "../arch/ia64/index.js";
export {
  arm64Unwind,
  arm64FunctionTableAccess,
  stripPac as arm64StripPac,
  pacStripper as arm64PacStripper,
  PAC_VA_BITS as ARM64_PAC_VA_BITS,
  ARM64_LINK_REGISTER,
  arm64ModuleCfi,
  arm64PlanRules,
  type Arm64PlanRules,
} from "../arch/arm64/index.js";
export { armUnwind, armFunctionTableAccess, ARM_LINK_REGISTER, armModuleCfi, armPlanRules } from "../arch/arm/index.js";
export { lookupAddress } from "../unwind/lookup-address.js";
// The unwind-data decoders (formats/unwind-data/), under the names the machines give them.
export * as ia64Descriptors from "../formats/unwind-data/ia64.js";
export { decodeCode as arm64DecodeCode, type Arm64Code } from "../formats/unwind-data/arm64-codes.js";
export { decodeXdata as arm64DecodeXdata, expandPacked as arm64ExpandPacked, packedFields as arm64PackedFields, type Arm64UnwindData } from "../formats/unwind-data/arm64-xdata.js";
export { decodeArmCode as armDecodeCode, decodeArmXdata as armDecodeXdata, expandArmPacked as armExpandPacked, packedFields as armPackedFields, type ArmCode, type ArmPacked, type ArmUnwindData } from "../formats/unwind-data/arm.js";
