/**
 * What `walk` writes of one loaded input, in each single-input format: text, JSON, WinDbg's `kb`
 * and Breakpad's reports. Nothing here reads a file or needs Node: the command line and the
 * playground (src/site) write their outputs with this one function, so the two cannot differ.
 */
import { crashSummary, type CrashSummary } from "../analysis/breakpad-crash.js";
import { analyzeCrash } from "../analysis/crash-info.js";
import type { ExplainedWalk } from "../analysis/explain-model.js";
import { EXPLAIN_FRAME_BUDGET, explainThreads } from "../analysis/explain-walk.js";
import type { InstructionDecoder } from "../analysis/instruction.js";
import { breakpadReport } from "../analysis/breakpad-report.js";
import type { Minidump } from "../formats/minidump.js";
import { machineInfo } from "../model/machine.js";
import type { Snapshot } from "../model/snapshot.js";
import { writeBreakpad, writeBreakpadMachineReadable } from "../render/breakpad.js";
import { writeJson, type JsonContext, type ModuleSymbolSource } from "../render/json.js";
import { renderRoles, writeText } from "../render/text.js";
import { windbgProcess, writeWindbg } from "../render/windbg.js";
import type { WalkerName } from "../walk/registry.js";
import { walkThreads, type FrameBudget, type WorkBudget } from "../walk/walk.js";
import { fileNameOf } from "../path-name.js";

/** The formats of one input. */
export const SINGLE_FORMATS = ["text", "json", "windbg", "breakpad", "breakpad-m"] as const;
/** One of {@link SINGLE_FORMATS}. */
export type SingleFormat = (typeof SINGLE_FORMATS)[number];

/** An input loaded with its symbols: what {@link writeWalkOutput} writes about. */
export interface LoadedInput {
  /** The input's name as the user gave it: the text format's first line starts with it. */
  file: string;
  snapshot: Snapshot;
  /** The minidump the snapshot is, when it is one (the Breakpad formats need it). */
  dump?: Minidump | undefined;
  /** What the symbol search found for each module it looked at. */
  symbolNotes: readonly ModuleSymbolSource[];
  /** Whether the user gave symbols (a symbol path, or symbol files): Breakpad then warns of modules without them. */
  symbolsGiven: boolean;
  /**
   * Loads the disassembler that states a dump's crashing instruction (the command line's is
   * Capstone, when installed: src/node/disassembler.ts); called only when an output needs it.
   * Absent: there is none, and the outputs say what they say without one.
   */
  disassembler?: (() => Promise<Disassembler>) | undefined;
}

/** A disassembler, or why there is none. */
export type Disassembler = { decoder: InstructionDecoder } | { missing: string };

/**
 * What the JSON document is told beside the walks of a loaded input: the dump and the snapshot's
 * memory (for crash_info's analysis and the threads' last errors), the disassembler when there is
 * one (else why not), the OS, where symbols came from and the threads' order.
 */
export async function jsonContextOf(input: LoadedInput, file?: string): Promise<JsonContext> {
  const { snapshot, dump } = input;
  const context: JsonContext = { os: snapshot.os, symbols: input.symbolNotes, threadOrder: snapshot.threads };
  if (file !== undefined) context.file = file;
  if (dump === undefined) return context;
  context.dump = dump;
  context.memory = snapshot.memory;
  const disassembler = input.disassembler === undefined ? undefined : await input.disassembler();
  if (disassembler !== undefined && "decoder" in disassembler) context.decoder = disassembler.decoder;
  else if (disassembler !== undefined) context.decoderMissing = disassembler.missing;
  return context;
}

/** The crash the text header states, with the crashing instruction when a disassembler decodes it. */
async function crashHeader(input: LoadedInput, dump: Minidump): Promise<CrashSummary | undefined> {
  const { snapshot } = input;
  const summary = crashSummary(dump);
  const crashed = snapshot.threads.find((t) => t.crashed);
  if (summary === undefined || crashed === undefined || input.disassembler === undefined) return summary;
  const disassembler = await input.disassembler();
  const decoder = "decoder" in disassembler ? disassembler.decoder : undefined;
  const instruction = analyzeCrash({ dump, machine: snapshot.machine, registers: crashed.registers, memory: snapshot.memory, decoder })?.instruction;
  return instruction === undefined ? summary : { ...summary, instruction };
}

/** How {@link writeWalkOutput} walks and writes. */
export interface WalkOutputOptions {
  format: SingleFormat;
  walker: WalkerName;
  /** Whether the walker was chosen: the Breakpad formats walk with Breakpad's own walker unless it was. */
  walkerGiven: boolean;
  thread: number | "all";
  maxFrames: number;
  frameBudget: number;
  workBudget: number;
  pacVaBits?: number | undefined;
  /** Text: each frame's recovered registers. */
  registers?: boolean;
  /** Text: the machine's register-role table first (and the registers). */
  roles?: boolean;
}

/**
 * Walks the input and writes it in one format, piece by piece to `out`, one thread walked at a
 * time: the output of a dump whose threads are deep is never one text. The Breakpad formats need
 * a minidump of a machine Breakpad walks (`breakpadRefusal` says why not).
 */
export async function writeWalkOutput(input: LoadedInput, options: WalkOutputOptions, out: (text: string) => void): Promise<void> {
  const { snapshot, dump } = input;
  const { format, walker, maxFrames, frameBudget, workBudget, pacVaBits, thread } = options;
  if (format === "breakpad" || format === "breakpad-m") {
    if (dump === undefined) throw new Error(`--format ${format} needs a minidump`);
    // Breakpad's own walker unless another was chosen.
    const report = breakpadReport(dump, snapshot, { walk: { walker: options.walkerGiven ? walker : "breakpad", maxFrames, frameBudget, workBudget }, thread, symbolPathGiven: input.symbolsGiven, keepWalks: false });
    (format === "breakpad" ? writeBreakpad : writeBreakpadMachineReadable)(report, out);
    return;
  }
  // WinDbg's ~*k goes through the threads in the dump's order.
  const walks = walkThreads(snapshot, { walker, maxFrames, frameBudget, workBudget, ...(pacVaBits === undefined ? {} : { pacVaBits }), thread, listed: format === "windbg" });
  if (format === "json") {
    writeJson(snapshot.machine, snapshot.modules, walks, out, await jsonContextOf(input));
    return;
  }
  if (options.roles === true) out(renderRoles([snapshot.machine]) + "\n");
  if (format === "windbg") writeWindbg(snapshot.machine, snapshot.modules, walks, out, snapshot.memory, dump !== undefined ? windbgProcess(dump) : { threads: snapshot.threads });
  else {
    out(`${input.file}: ${machineInfo(snapshot.machine).title}${snapshot.description !== undefined ? ` - ${snapshot.description}` : ""}\n`);
    writeText(snapshot.machine, snapshot.modules, walks, out, options.registers === true || options.roles === true, dump === undefined ? undefined : await crashHeader(input, dump));
  }
}

/**
 * Explains the chosen threads of a loaded input (the crashed thread first), titled as `explain`,
 * `render` and `view` title it: the input's name, and its description when that says more. The
 * explanations are made as they are read, within one frame budget (default
 * {@link EXPLAIN_FRAME_BUDGET}) and one work budget; pass budget objects to share them with
 * other calls.
 */
export function explainLoaded(
  input: Pick<LoadedInput, "file" | "snapshot">,
  options: { walker: WalkerName; thread: number | "all"; maxFrames?: number | undefined; pacVaBits?: number | undefined; frameBudget?: number | FrameBudget | undefined; workBudget?: number | WorkBudget | undefined },
): Iterable<ExplainedWalk> {
  const { file, snapshot } = input;
  const name = fileNameOf(file);
  return explainThreads(snapshot, {
    walker: options.walker,
    thread: options.thread,
    title: snapshot.description !== undefined && snapshot.description !== file && snapshot.description !== name ? `${name} - ${snapshot.description}` : name,
    ...(options.maxFrames !== undefined ? { maxFrames: options.maxFrames } : {}),
    ...(options.pacVaBits !== undefined ? { pacVaBits: options.pacVaBits } : {}),
    ...(options.frameBudget !== undefined ? { frameBudget: options.frameBudget } : {}),
    ...(options.workBudget !== undefined ? { workBudget: options.workBudget } : {}),
  });
}
