/**
 * The public API of stackwalk-emu (the package's root entry): what a user needs to load inputs,
 * walk them, symbolise the frames and render the walks. It runs in Node and in browsers (no Node
 * built-ins). The rest of the library is in named entries, each as browser-safe as this one:
 * `stackwalk-emu/formats` (every format reader and writer), `stackwalk-emu/dbghelp` (the
 * StackWalk64 facade and dbghelp's records), `stackwalk-emu/arch` (the machine table and the
 * per-machine unwinders), `stackwalk-emu/etw` (ETW stacks and the cross-check) and
 * `stackwalk-emu/render` (the parts reports are made of); files and the network are in
 * `stackwalk-emu/node`. Re-exports only.
 */
export { InputError, type InputErrorCode, type InputLocation } from "./errors.js";
export { hex } from "./hex.js";
export { MACHINES, formatAddress, type Machine } from "./model/machine.js";
export type { Snapshot, ThreadSnapshot, Module, ModuleSymbol, Registers, TruthFrame } from "./model/snapshot.js";
export type { MemoryReader } from "./memory/reader.js";
export { RegionMemory, type MemoryRegion } from "./memory/region-memory.js";
export { TRUST_ORDER, type Frame, type Walk, type Trust, type WalkStop, type StopReason } from "./walk/frame.js";
export { walkThread, walkSnapshot, DEFAULT_MAX_FRAMES, type WalkOptions, type ThreadWalk } from "./walk/walk.js";
export { WALKER_NAMES, type WalkerName } from "./walk/registry.js";
export { UnwindCache } from "./unwind/cache.js";
export type { Rule } from "./arch/rule.js";
export { ruleText } from "./arch/rule-text.js";
export { compareWithTruth, type TruthComparison, type TruthDifference } from "./walk/compare.js";
export { parseVector, type Vector } from "./formats/vector.js";
export { parseJsonInput, type JsonInput } from "./formats/input.js";
export { readMinidump, minidumpSnapshot, bytesSource, type ByteSource, type Minidump } from "./formats/minidump.js";
export { parseSymbolFile, attachSymbolFile, attachSymbolFiles, type SymbolFile, type ParseSymbolFileOptions, type AttachOptions, type Attachment } from "./formats/symbol-file.js";
export { locate, locationText, sourceOf, symbolize, type Location, type SymbolMatch } from "./analysis/location.js";
export type { InlineFrame } from "./model/inline.js";
export { renderText, renderRoles } from "./render/text.js";
export { renderJson, writeJson } from "./render/json.js";
export { renderWindbg } from "./render/windbg.js";
export { breakpadReport, type BreakpadReport, type BreakpadOptions } from "./analysis/breakpad-report.js";
export { renderBreakpad, renderBreakpadMachineReadable, writeBreakpad, writeBreakpadMachineReadable } from "./render/breakpad.js";
export { explainWalk, explainSnapshot, type ExplainOptions } from "./analysis/explain-walk.js";
export type { ExplainedWalk } from "./analysis/explain-model.js";
export { formatExplanation } from "./render/explain.js";
export { renderSvg, type SvgOptions } from "./render/svg.js";
export { renderHtml } from "./render/html.js";
