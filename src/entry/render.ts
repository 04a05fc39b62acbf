/**
 * stackwalk-emu/render: what the reports and views are made of, beyond the root entry's renderers:
 * the JSON document's parts, the Breakpad report's pieces (stack contents, registers, trust
 * words, crash reasons), WinDbg's thread lines and FPO notes, the explanation model, the
 * six-target chain comparison and its text.
 * Like the root entry it runs in a browser (no Node built-ins). Re-exports only.
 */
export { renderJson, walkJson, writeJson, frameJson, type JsonContext, type ModuleSymbolSource } from "../render/json.js";
export type { InstructionDecoder, DecodedInstruction } from "../analysis/instruction.js";
export { dumpSystemInfo, type DumpSystemInfo } from "../analysis/system-info.js";
export { breakpadStackContents, writeBreakpadBrief } from "../render/breakpad-stack.js";
export { renderText, renderRoles } from "../render/text.js";
export { renderWindbg, fpoNote, windbgProcess, windbgThreadLine, type WindbgProcess, type WindbgThread } from "../render/windbg.js";
export { locate, locateAddress, locationText, sourceOf, symbolize, type Location, type SymbolMatch } from "../analysis/location.js";
export { explainWalk, explainSnapshot, EXPLAIN_FRAME_BUDGET, MAX_DIAGRAM_WORDS, type ExplainOptions } from "../analysis/explain-walk.js";
export { stopInWords } from "../analysis/explain-words.js";
export { formatExplanation, writeExplanation } from "../render/explain.js";
export type * from "../analysis/explain-model.js";
export { renderSvg, type SvgOptions } from "../render/svg.js";
export { renderHtml } from "../render/html.js";
export { compareChain, type CompareInput, type CompareTargetInput, type Comparison, type ComparedTarget, type WalkerResult } from "../analysis/compare-chain.js";
export { renderCompare } from "../render/compare.js";
export { breakpadReport, assertionText, type BreakpadReport, type BreakpadThread, type BreakpadOptions } from "../analysis/breakpad-report.js";
export { crashReason, WINDOWS_EXCEPTION_NAMES } from "../analysis/breakpad-crash.js";
export {
  renderBreakpad,
  renderBreakpadMachineReadable,
  writeBreakpad,
  writeBreakpadMachineReadable,
  breakpadTrust,
  breakpadRegisters,
  formatRegisterLines,
  type BreakpadPrintOptions,
} from "../render/breakpad.js";
export { OUTPUT_FORMATS, OUTPUT_FORMAT_NAMES, outputFormat, formatNames, jsonContextOf, type OutputFormat, type OutputFormatName } from "../render/output-formats.js";
export { formatSummary, summaryRow, type SummaryRow, type SummaryEntry } from "../render/summary.js";
export { walkDocument, explainLoaded, type WalkDocument, type WalkRequest, type LoadedInput, type Disassembler } from "../analysis/walk-document.js";
