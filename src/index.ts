/** The public API of stackwalk-emu: re-exports only. */
export { InputError, type InputErrorCode, type InputLocation } from "./errors.js";
export { hex } from "./hex.js";
export * from "./model/machine.js";
export * from "./model/snapshot.js";
export * from "./model/inline.js";
export * from "./model/address.js";
export * from "./model/stackframe.js";
export * from "./model/fpo-data.js";
export * from "./model/context.js";
export type { FieldKind, FieldSpec, RecordLayout } from "./model/record.js";
export type { MemoryReader } from "./memory/reader.js";
export { readU32, readU64, readPointer } from "./memory/reader.js";
export { RegionMemory, type MemoryRegion } from "./memory/region-memory.js";
export { ByteCursor } from "./memory/cursor.js";
export * from "./walk/frame.js";
export type * from "./unwind/rule.js";
export { ruleText, fpoLabel, unwindOpText, saveLocationText, pspText, stateText as ia64StateText } from "./unwind/rule-text.js";
export { UnwindCache } from "./unwind/cache.js";
export { unwindStep, type FrameSite, type UnwindStep, type UnwindStrategy, type UnwindResult, type ExecContext, type StepFields, type OkStep } from "./unwind/step.js";
export { execRule } from "./arch/exec.js";
export type { UnwindRule, ArchStrategy, CustomPlan } from "./arch/rule.js";
export { walkThread, walkSnapshot, checkProgress, DEFAULT_MAX_FRAMES, MIN_PC, type WalkOptions, type ThreadWalk } from "./walk/walk.js";
export { archWalker, strategiesFor, WALKER_NAMES, type ArchWalker, type WalkerName } from "./walk/registry.js";
export * as ia64Rse from "./arch/ia64/rse.js";
export * as ia64Descriptors from "./arch/ia64/unwind-descriptors.js";
export { frameStateAt as ia64FrameStateAt, type FrameState as Ia64FrameState } from "./arch/ia64/state.js";
export { ia64Unwind, ia64Params, ia64FunctionTableAccess } from "./arch/ia64/walker.js";
export { IA64_TWO_STACKS } from "./arch/ia64/two-stacks.js";
export { arm64Unwind } from "./arch/arm64/unwind.js";
export { arm64FunctionTableAccess } from "./arch/arm64/function-table.js";
export { stripPac as arm64StripPac, pacStripper as arm64PacStripper, PAC_VA_BITS as ARM64_PAC_VA_BITS } from "./arch/arm64/pac.js";
export { decodeCode as arm64DecodeCode, type Arm64Code } from "./arch/arm64/codes.js";
export { decodeXdata as arm64DecodeXdata, expandPacked as arm64ExpandPacked, packedFields as arm64PackedFields, type Arm64UnwindData } from "./arch/arm64/xdata.js";
export { ARM64_LINK_REGISTER } from "./arch/arm64/link-register.js";
export { lookupAddress } from "./unwind/lookup-address.js";
export { arm64ModuleCfi, arm64PlanRules, type Arm64PlanRules } from "./arch/arm64/cfi-from-unwind.js";
export { compareWithTruth, type TruthComparison, type TruthDifference } from "./walk/compare.js";
export * from "./walk/stackwalk64.js";
export * from "./walk/stackwalk64-inline.js";
export { parseVector, formatVector, VECTOR_FORMAT, type Vector } from "./formats/vector.js";
export { parseSweep, formatSweep, replaySweep, SWEEP_FORMAT, type Sweep, type SweepStep, type MemoryWrite } from "./formats/sweep.js";
export { parseJsonInput, type JsonInput } from "./formats/input.js";
export { JsonNode } from "./formats/json-input.js";
export {
  parseBreakpadSym,
  BreakpadSymParser,
  stackWinToFpoData,
  stackWinToFrameData,
  breakpadSymbols,
  symbolStorePath,
  STACK_WIN_TYPE,
  MAX_MALFORMED_LINES,
  type BreakpadSymbols,
  type BreakpadSymOptions,
  type BreakpadModule,
  type BreakpadCodeId,
  type BreakpadFunc,
  type BreakpadInline,
  type BreakpadInlineOrigin,
  type BreakpadLine,
  type BreakpadPublic,
  type BreakpadStackWin,
  type BreakpadStackCfi,
  type BreakpadCfiDelta,
} from "./formats/breakpad-sym.js";
export { parsePdb, omapTranslate, MSF_MAGIC, type Pdb, type PdbInfo, type PdbSymbol, type PdbSection, type OmapEntry, type SectionAddress } from "./formats/pdb.js";
export { parsePe, IMAGE_DIRECTORY_ENTRY, IMAGE_DEBUG_TYPE, PE_LIMITS, type PeImage, type PeSection, type PeDebugEntry, type CodeViewInfo, type RuntimeFunction } from "./formats/pe.js";
export { readMappedImage, type MappedImage } from "./formats/pe-mapped.js";
export { decodeFrameData, encodeFrameData, findFrameData, FRAME_DATA_SIZE, type FrameData } from "./formats/frame-data.js";
export {
  parseSymbolFile,
  breakpadSymbolFile,
  pdbSymbolFile,
  imageFile,
  imageCodeId,
  attachSymbolFile,
  attachSymbolFiles,
  moduleIdentity,
  symbolFileMismatch,
  type SymbolFile,
  type BreakpadSymbolFile,
  type PdbSymbolFile,
  type ImageFile,
  type ParseSymbolFileOptions,
  type SymbolTarget,
  type ModuleIdentity,
  type AttachOptions,
  type Attachment,
} from "./formats/symbol-file.js";
export { renderJson, walkJson, writeJson, frameJson, type JsonContext, type ModuleSymbolSource } from "./render/json.js";
export { dumpSystemInfo, type DumpSystemInfo } from "./analysis/system-info.js";
export { breakpadStackContents, writeBreakpadBrief } from "./render/breakpad-stack.js";
export { renderText, renderRoles } from "./render/text.js";
export { renderWindbg, fpoNote, windbgProcess, windbgThreadLine, type WindbgProcess, type WindbgThread } from "./render/windbg.js";
export { locate, locateAddress, locationText, sourceOf, symbolize, type Location, type SymbolMatch } from "./analysis/location.js";
export { explainWalk, explainSnapshot, MAX_DIAGRAM_WORDS, type ExplainOptions } from "./analysis/explain-walk.js";
export { stopInWords } from "./analysis/explain-words.js";
export { formatExplanation } from "./render/explain.js";
export type * from "./analysis/explain-model.js";
export { renderSvg, type SvgOptions } from "./render/svg.js";
export { renderHtml } from "./render/html.js";
export { compareChain, type CompareInput, type CompareTargetInput, type Comparison, type ComparedTarget, type WalkerResult } from "./analysis/compare-chain.js";
export { renderCompare } from "./render/compare.js";
export { breakpadReport, assertionText, type BreakpadReport, type BreakpadThread, type BreakpadOptions } from "./analysis/breakpad-report.js";
export { crashReason, WINDOWS_EXCEPTION_NAMES } from "./analysis/breakpad-crash.js";
export {
  renderBreakpad,
  renderBreakpadMachineReadable,
  writeBreakpad,
  writeBreakpadMachineReadable,
  breakpadTrust,
  breakpadRegisters,
  formatRegisterLines,
  type BreakpadPrintOptions,
} from "./render/breakpad.js";
export {
  readMinidump,
  minidumpSnapshot,
  bytesSource,
  snapshotMemoryRanges,
  elfDebugId,
  streamTypeName,
  MinidumpMemory,
  MINIDUMP_SIGNATURE,
  MINIDUMP_VERSION,
  MINIDUMP_STREAM,
  MINIDUMP_LIMITS,
  PROCESSOR_ARCHITECTURE,
  VS_FFI_SIGNATURE,
  type ByteSource,
  type Minidump,
  type MinidumpHeader,
  type MinidumpLocation,
  type MinidumpStreamEntry,
  type MinidumpMemoryRange,
  type MemoryOrigin,
  type MinidumpContext,
  type MinidumpThread,
  type MinidumpVersionInfo,
  type MinidumpModule,
  type MinidumpException,
  type MinidumpCpuInfo,
  type MinidumpSystemInfo,
  type MinidumpMiscInfo,
  type MinidumpFunctionTable,
  type MinidumpFunctionTableStream,
  type MinidumpBreakpadInfo,
  type MinidumpAssertion,
} from "./formats/minidump.js";
export {
  writeMinidump,
  minidumpBytes,
  bytesSink,
  moduleCodeView,
  moduleCodeId,
  moduleTimeDateStamp,
  encodeCodeView,
  EXCEPTION_BREAKPOINT,
  type ByteSink,
  type BytesSink,
  type MemoryExtent,
  type ExtentMemory,
  type MinidumpWriteOptions,
  type MinidumpWriteException,
  type MinidumpWriteSystem,
  type MinidumpWriteResult,
  type WrittenStreamInfo,
  type CodeViewIdentity,
} from "./formats/minidump-write.js";
export {
  breakpadSymLines,
  formatBreakpadSym,
  symFileInput,
  symFileStorePath,
  BREAKPAD_ARCH,
  type SymFileInput,
} from "./formats/breakpad-sym-write.js";
export * from "./etw/extended-data.js";
export * from "./etw/stitch.js";
export * from "./analysis/ebp-chain.js";
export * from "./analysis/crosscheck.js";
export { commonSubsequence } from "./analysis/crosscheck-align.js";
export { crossCheckJson, crossCheckText } from "./render/crosscheck.js";
export * from "./etw/etl.js";
