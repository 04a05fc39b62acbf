/**
 * One loaded input and how to walk it, as the output formats of render/output-formats.ts take
 * it: the walks of its threads (made one thread at a time as a renderer reads them), Breakpad's
 * report, the crash its text header states, and what the summary of a batch needs. Nothing here
 * reads a file or needs Node: the command line, its batch workers and the playground (src/site)
 * all write through it, so their outputs cannot differ.
 */
import { crashSummary, type CrashSummary } from "./breakpad-crash.js";
import { breakpadReport, type BreakpadReport } from "./breakpad-report.js";
import { analyzeCrash, decodesCrashInstruction } from "./crash-info.js";
import type { ExplainedWalk } from "./explain-model.js";
import { EXPLAIN_FRAME_BUDGET, explainThreads } from "./explain-walk.js";
import type { InstructionDecoder } from "./instruction.js";
import type { Minidump } from "../formats/minidump.js";
import type { Snapshot } from "../model/snapshot.js";
import type { WalkerName } from "../walk/registry.js";
import type { UnwindCache } from "../unwind/cache.js";
import { DEFAULT_FRAME_BUDGET, DEFAULT_MAX_FRAMES, DEFAULT_WORK_BUDGET, walkThreads, type FrameBudget, type ThreadWalk, type ThreadWalks, type WorkBudget } from "../walk/walk.js";
import { fileNameOf } from "../path-name.js";

/** Where a module's symbols came from, as a symbol search reports it (src/node's SymbolNote has this shape). */
export interface ModuleSymbolSource {
  /** The module's file name. */
  module: string;
  /** The symbol file used (a path), when one was. */
  file?: string;
  /** The URL it was downloaded from, when it came from a symbol server. */
  url?: string;
  /** The file used had malformed records, which were left out. */
  corrupt?: boolean;
}

/** A disassembler, or why there is none. */
export type Disassembler = { decoder: InstructionDecoder } | { missing: string };

/** An input loaded with its symbols: what a {@link WalkDocument} walks. */
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
   * Capstone, when installed: src/node/disassembler.ts); called only when an output needs it,
   * for a crash whose instruction is decoded (an x86-64 dump with an exception). Absent: there
   * is none, and the outputs say what they say without one.
   */
  disassembler?: (() => Promise<Disassembler>) | undefined;
}

/** How an input is walked for its output; every field has the command line's default. */
export interface WalkRequest {
  /** Default "auto". */
  walker?: WalkerName | undefined;
  /**
   * Whether the walker was chosen (default: whether `walker` is given): the Breakpad formats
   * walk with Breakpad's own walker unless it was.
   */
  walkerGiven?: boolean | undefined;
  /** A thread id, or "all" (default: the crashed thread first). */
  thread?: number | "all" | undefined;
  /** Frame cap of one thread's walk (default DEFAULT_MAX_FRAMES). */
  maxFrames?: number | undefined;
  /** The most frames of all threads together (default DEFAULT_FRAME_BUDGET). */
  frameBudget?: number | undefined;
  /** The most work of all threads together (default DEFAULT_WORK_BUDGET). */
  workBudget?: number | undefined;
  pacVaBits?: number | undefined;
  /** Text: each frame's recovered registers. */
  registers?: boolean | undefined;
  /** Text: the machine's register-role table first (and the registers). */
  roles?: boolean | undefined;
  /**
   * What the walks keep (see {@link UnwindCache}), shared with the documents of other inputs:
   * a batch passes one to all its inputs, so that what the walkers work out from the symbol
   * files the inputs share (parsed FrameData programs, STACK CFI tables) is worked out once.
   * Default: a new one per document.
   */
  cache?: UnwindCache | undefined;
}

/** An input with how to walk it: what every output format writes from. */
export interface WalkDocument {
  readonly input: LoadedInput;
  readonly request: WalkRequest;
  /**
   * The chosen threads' walks, each made when it is read (the crashed thread first; `listed`:
   * the dump's order, as WinDbg's `~*k`). Every call walks again.
   */
  walks(listed?: boolean): ThreadWalks;
  /** Breakpad's report of the dump (Breakpad's walker unless another was chosen); undefined for an input that is not a minidump. */
  breakpadReport(): BreakpadReport | undefined;
  /** The crash a dump's text header states, with the crashing instruction when the disassembler decodes it. */
  crashHeader(): Promise<CrashSummary | undefined>;
  /** The input's disassembler, loaded once; undefined when it has none. */
  disassembler(): Promise<Disassembler | undefined>;
  /**
   * The first chosen thread's walk (the crashed one when there is one): the one {@link walks}
   * already made when it was read, else that thread walked alone.
   */
  firstWalk(): ThreadWalk | undefined;
}

/** A {@link WalkDocument} of a loaded input. */
export function walkDocument(input: LoadedInput, request: WalkRequest = {}): WalkDocument {
  const { snapshot, dump } = input;
  const options = {
    walker: request.walker ?? "auto",
    maxFrames: request.maxFrames ?? DEFAULT_MAX_FRAMES,
    frameBudget: request.frameBudget ?? DEFAULT_FRAME_BUDGET,
    workBudget: request.workBudget ?? DEFAULT_WORK_BUDGET,
    ...(request.pacVaBits === undefined ? {} : { pacVaBits: request.pacVaBits }),
    thread: request.thread ?? "all",
    ...(request.cache === undefined ? {} : { cache: request.cache }),
  };
  let first: ThreadWalk | undefined;
  let disassembler: Promise<Disassembler | undefined> | undefined;
  const document: WalkDocument = {
    input,
    request,
    walks(listed = false) {
      const walks = walkThreads(snapshot, { ...options, listed });
      return {
        threads: walks.threads,
        *[Symbol.iterator]() {
          for (const w of walks) {
            if (!listed) first ??= w;
            yield w;
          }
        },
      };
    },
    breakpadReport() {
      if (dump === undefined) return undefined;
      const walker = (request.walkerGiven ?? request.walker !== undefined) ? options.walker : "breakpad";
      const { maxFrames, frameBudget, workBudget } = options;
      return breakpadReport(dump, snapshot, {
        walk: { walker, maxFrames, frameBudget, workBudget, ...(request.cache === undefined ? {} : { cache: request.cache }) },
        thread: options.thread,
        symbolPathGiven: input.symbolsGiven,
        keepWalks: false,
      });
    },
    disassembler() {
      disassembler ??= input.disassembler === undefined ? Promise.resolve(undefined) : input.disassembler();
      return disassembler;
    },
    async crashHeader() {
      if (dump === undefined) return undefined;
      const summary = crashSummary(dump);
      const crashed = snapshot.threads.find((t) => t.crashed);
      if (summary === undefined || crashed === undefined || input.disassembler === undefined || !decodesCrashInstruction(dump, snapshot.machine)) return summary;
      const found = await document.disassembler();
      const decoder = found !== undefined && "decoder" in found ? found.decoder : undefined;
      const instruction = analyzeCrash({ dump, machine: snapshot.machine, registers: crashed.registers, memory: snapshot.memory, decoder })?.instruction;
      return instruction === undefined ? summary : { ...summary, instruction };
    },
    firstWalk() {
      if (first !== undefined) return first;
      // The walks are made as they are read: only the first chosen thread is walked.
      const walked = walkThreads(snapshot, options)[Symbol.iterator]().next();
      first = walked.done === true ? undefined : walked.value;
      return first;
    },
  };
  return document;
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
