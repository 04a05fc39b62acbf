/**
 * The playground's work, without the page: the files a user dropped, told apart by their first
 * bytes (one minidump, vector or sweep; any number of Breakpad `.sym` files, PDBs and module
 * images), loaded as `stackwalk walk` loads them (images, then symbol files, each attached to the
 * modules it belongs to and only to a module that has no unwind records yet), then walked and
 * written by the command line's own functions: the view of `stackwalk view`, and the text, JSON,
 * WinDbg and Breakpad outputs of `stackwalk walk --format`. Browser-safe: the Web Worker of
 * src/site/worker.ts runs it on the bytes of `File`s, read where the reader asks (a minidump's
 * memory is read when a walk reads it); tests run it in Node on files' bytes.
 */
import { compareChain } from "../analysis/compare-chain.js";
import { EXPLAIN_FRAME_BUDGET } from "../analysis/explain-walk.js";
import { breakpadRefusal } from "../analysis/breakpad-report.js";
import { explainLoaded, walkDocument, type LoadedInput } from "../analysis/walk-document.js";
import { outputFormat } from "../render/output-formats.js";
import { InputError } from "../errors.js";
import { parseJsonInput, type JsonInput } from "../formats/input.js";
import { minidumpSnapshot, readMinidump } from "../formats/minidump.js";
import { replaySweep, type Sweep } from "../formats/sweep.js";
import { attachSymbolFile, breakpadSymbolFile, imageFile, pdbSymbolFile, symbolFileMismatch, type SymbolFile, type SymbolTarget } from "../formats/symbol-file.js";
import type { ByteSource } from "../memory/byte-source.js";
import { RegionMemory } from "../memory/region-memory.js";
import { MSF_MAGIC } from "../formats/pdb.js";
import { machineInfo } from "../model/machine.js";
import type { Snapshot } from "../model/snapshot.js";
import { renderCompare } from "../render/compare.js";
import type { ModuleSymbolSource } from "../render/json.js";
import { renderWalkView } from "../render/html.js";
import { archWalker, WALKER_NAMES, type WalkerName } from "../walk/registry.js";
import { DEFAULT_FRAME_BUDGET, DEFAULT_MAX_FRAMES, DEFAULT_WORK_BUDGET, frameBudgetOf, workBudgetOf } from "../walk/walk.js";

/**
 * The playground has no disassembler (Capstone's WebAssembly is ten times the size of the rest),
 * so it states no crashing instruction, as the command line without its optional packages; the
 * JSON says why its crash analysis is null.
 */
const NO_DISASSEMBLER = { missing: "the playground has no disassembler (stackwalk walk states the instruction when Capstone is installed)" };

/** A file the user gave: its name and its bytes, read by position. */
export interface SiteFile {
  name: string;
  source: ByteSource;
}

/** What a file is, by its first bytes. */
export type FileKind = "minidump" | "json" | "sym" | "pdb" | "image";

/** The outputs the playground shows as tabs, besides the view. */
export const SITE_FORMATS = ["text", "json", "windbg", "breakpad"] as const;
/** One of {@link SITE_FORMATS}: names of render/output-formats.ts's table. */
export type OutputFormat = (typeof SITE_FORMATS)[number];

/** What to walk: a thread (or all of them), a walker (absent: auto, and Breakpad's own for its report), a sweep's step. */
export interface WalkChoice {
  thread: number | "all";
  walker?: WalkerName | undefined;
  step?: number | undefined;
}

/** What the page shows of an opened input before any walk. */
export interface SessionSummary {
  file: string;
  kind: "dump" | "vector" | "sweep";
  /** The machine's title: `x86 (I386)`. */
  machine: string;
  description?: string;
  /** The threads, the crashed one first, each with the words the thread chooser shows. */
  threads: { id: number; crashed: boolean; label: string }[];
  /** A sweep's steps (instruction counts), in order. */
  steps?: number[];
  /** The walkers the machine has. */
  walkers: WalkerName[];
  /** Why the Breakpad report cannot be written, when it cannot. */
  breakpadRefusal?: string;
  /** What the reader passed over or repaired, and what became of each symbol file and image. */
  notes: string[];
}

/** Reports how far a long job has come: a phase in words, and a fraction when one is known. */
export type Progress = (phase: string, done?: number, total?: number) => void;

const startsWith = (bytes: Uint8Array, text: string): boolean => {
  if (bytes.length < text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[i] !== text.charCodeAt(i)) return false;
  return true;
};

/** What a file is, from its first bytes; undefined when it is none of the kinds the playground reads. */
export function fileKind(source: ByteSource): FileKind | undefined {
  const head = source.read(0, Math.min(source.size, 64)) ?? new Uint8Array(0);
  if (startsWith(head, "MDMP")) return "minidump";
  if (startsWith(head, "MZ")) return "image";
  if (startsWith(head, MSF_MAGIC)) return "pdb";
  const bom = startsWith(head, "\xef\xbb\xbf") ? 3 : 0;
  if (startsWith(head.subarray(bom), "MODULE ")) return "sym";
  let first = bom;
  while (first < head.length && (head[first] === 0x20 || head[first] === 0x0a || head[first] === 0x0d || head[first] === 0x09)) first++;
  return head[first] === 0x7b ? "json" : undefined;
}

/** The whole of a file (a JSON input, a symbol file or an image is parsed whole). */
function wholeOf(file: SiteFile): Uint8Array {
  const bytes = file.source.read(0, file.source.size);
  if (bytes === undefined) throw new InputError("io", "cannot read the file", { file: file.name });
  return bytes;
}

type Loaded = { kind: "dump"; input: LoadedInput } | { kind: "vector"; input: LoadedInput } | { kind: "sweep"; sweep: Sweep; symbolNotes: ModuleSymbolSource[] };

/** An input opened with its symbol files and images, walked on request. */
export class Session {
  readonly summary: SessionSummary;
  readonly #loaded: Loaded;
  readonly #symbolsGiven: boolean;
  #step: { step: number; snapshot: Snapshot } | undefined;

  private constructor(loaded: Loaded, summary: SessionSummary, symbolsGiven: boolean) {
    this.#loaded = loaded;
    this.summary = summary;
    this.#symbolsGiven = symbolsGiven;
  }

  /**
   * Opens the files: exactly one minidump, vector or sweep, and any symbol files and images.
   * Throws {@link InputError} naming the file for an input that cannot be read or a file of no
   * kind the playground reads; a symbol file or image that belongs to no module is a note.
   */
  static open(files: readonly SiteFile[], progress: Progress = () => {}): Session {
    const kinds = files.map((f) => ({ file: f, kind: fileKind(f.source) }));
    const unknown = kinds.find((k) => k.kind === undefined);
    if (unknown !== undefined) {
      throw new InputError("bad-magic", "not a minidump (MDMP), a stackwalk vector or sweep (JSON), a Breakpad .sym file, a PDB or a PE image", { file: unknown.file.name, offset: 0 });
    }
    const inputs = kinds.filter((k) => k.kind === "minidump" || k.kind === "json");
    if (inputs.length !== 1) {
      throw new InputError("bad-value", inputs.length === 0 ? "no minidump, vector or sweep among the files: give one, with any .sym, .pdb and image files" : `one input at a time: ${inputs.map((k) => k.file.name).join(", ")} are all inputs`);
    }
    const main = inputs[0]!.file;
    const notes: string[] = [];
    progress(`reading ${main.name}`);
    let json: JsonInput | undefined;
    let dumpInput: LoadedInput | undefined;
    if (inputs[0]!.kind === "minidump") {
      const dump = readMinidump(main.source, main.name);
      const snapshot = minidumpSnapshot(dump);
      for (const note of dump.notes) notes.push(`${main.name}: ${note}`);
      dumpInput = { file: main.name, snapshot, dump, symbolNotes: [], symbolsGiven: false, disassembler: async () => NO_DISASSEMBLER };
    } else json = parseJsonInput(new TextDecoder("utf-8").decode(wholeOf(main)), main.name);

    // Images first, then symbol files, as the command line attaches --images and --symbols.
    const others = kinds.filter((k) => k.kind !== "minidump" && k.kind !== "json");
    const ordered = [...others.filter((k) => k.kind === "image"), ...others.filter((k) => k.kind !== "image")];
    const target: SymbolTarget =
      dumpInput !== undefined
        ? dumpInput.snapshot
        : json!.kind === "vector"
          ? json!.vector
          : { modules: json!.sweep.modules, memory: new RegionMemory(json!.sweep.memory.map((r) => ({ base: r.base, bytes: r.bytes }))) };
    const symbolNotes: ModuleSymbolSource[] = [];
    ordered.forEach(({ file, kind }, i) => {
      progress(`reading ${file.name}`, i, ordered.length);
      if (kind === "image" && dumpInput === undefined) {
        notes.push(`${file.name}: images apply to minidumps; a ${json!.kind} carries its images in its memory`);
        return;
      }
      const bytes = wholeOf(file);
      const parsed: SymbolFile = kind === "image" ? imageFile(bytes, { name: file.name }) : kind === "pdb" ? pdbSymbolFile(bytes, { name: file.name }) : breakpadSymbolFile(bytes, { name: file.name, skipMalformed: true });
      notes.push(...attach(target, parsed, symbolNotes));
    });
    const symbolsGiven = others.some((k) => k.kind !== "image");
    let loaded: Loaded;
    if (dumpInput !== undefined) loaded = { kind: "dump", input: { ...dumpInput, symbolNotes, symbolsGiven } };
    else if (json!.kind === "vector") loaded = { kind: "vector", input: { file: main.name, snapshot: json!.vector, symbolNotes, symbolsGiven } };
    else {
      json!.sweep.modules = target.modules;
      loaded = { kind: "sweep", sweep: json!.sweep, symbolNotes };
    }
    return new Session(loaded, summarize(main.name, loaded), symbolsGiven);

    function summarize(file: string, l: Loaded): SessionSummary {
      const machine = l.kind === "sweep" ? l.sweep.machine : l.input.snapshot.machine;
      const first: Snapshot | undefined = l.kind === "sweep" ? (replaySweep(l.sweep).next().value ?? undefined) : undefined;
      const threads = l.kind === "sweep" ? (first?.threads ?? []) : l.input.snapshot.threads;
      const ordered = [...threads.filter((t) => t.crashed), ...threads.filter((t) => !t.crashed)];
      const summary: SessionSummary = {
        file,
        kind: l.kind,
        machine: machineInfo(machine).title,
        threads: ordered.map((t) => ({ id: t.id, crashed: t.crashed, label: `thread ${t.id}${t.crashed ? " (crashed)" : ""}` })),
        walkers: WALKER_NAMES.filter((w) => w === "auto" || archWalker(machine).walkers[w] !== undefined),
        notes,
      };
      const description = l.kind === "sweep" ? l.sweep.description : l.input.snapshot.description;
      if (description !== undefined) summary.description = description;
      if (l.kind === "sweep") summary.steps = l.sweep.steps.map((s) => s.step);
      const refusal = l.kind !== "dump" ? `Breakpad's report is of a minidump; ${file} is a ${l.kind}` : breakpadRefusal(machine, file);
      if (refusal !== undefined) summary.breakpadRefusal = refusal;
      return summary;
    }
  }

  /** The loaded input to walk: a sweep's snapshot at `step` (default its first). */
  #input(step: number | undefined): LoadedInput {
    const l = this.#loaded;
    if (l.kind !== "sweep") return l.input;
    const wanted = step ?? l.sweep.steps[0]?.step;
    if (this.#step === undefined || this.#step.step !== wanted) {
      // The replay stops at the step: its memory is left as it was then.
      let found: Snapshot | undefined;
      for (const v of replaySweep(l.sweep)) {
        if (v.step !== wanted) continue;
        found = v;
        break;
      }
      if (found === undefined || wanted === undefined) throw new InputError("bad-value", `${this.summary.file} has no snapshot at step ${wanted}`);
      this.#step = { step: wanted, snapshot: found };
    }
    return { file: this.summary.file, snapshot: this.#step.snapshot, symbolNotes: l.symbolNotes, symbolsGiven: this.#symbolsGiven };
  }

  /** The walks of `choice`, explained and drawn as `stackwalk view` draws them (the page's walk sections). */
  view(choice: WalkChoice, progress: Progress = () => {}): { html: string; threads: number; frames: number } {
    const input = this.#input(choice.step);
    const threads = choice.thread === "all" ? input.snapshot.threads.map((t) => t.id) : [choice.thread];
    // The threads share one frame budget and one work budget, as `view`'s do.
    const frameBudget = frameBudgetOf({ frameBudget: EXPLAIN_FRAME_BUDGET });
    const workBudget = workBudgetOf({});
    const walks = threads.flatMap((thread, i) => {
      progress(`walking thread ${thread}`, i, threads.length);
      return [...explainLoaded(input, { walker: choice.walker ?? "auto", thread, frameBudget, workBudget })];
    });
    // The crashed thread first, as `view` orders them.
    const ordered = [...walks.filter((w) => w.crashed === true), ...walks.filter((w) => w.crashed !== true)];
    progress("drawing");
    return { html: renderWalkView(ordered, { landmarks: false }), threads: ordered.length, frames: ordered.reduce((n, w) => n + w.frames.length, 0) };
  }

  /**
   * One output, as `stackwalk walk <file> --format F [--thread T] [--walker W] [--step N]` writes
   * it (the Breakpad tab is `--format breakpad`).
   */
  async output(format: OutputFormat, choice: WalkChoice, progress: Progress = () => {}): Promise<string> {
    if (outputFormat(format)!.minidumpOnly && this.summary.breakpadRefusal !== undefined) throw new InputError("bad-value", this.summary.breakpadRefusal);
    const input = this.#input(choice.step);
    const parts: string[] = [];
    let length = 0;
    progress(`writing ${format}`);
    const request = {
      walker: choice.walker ?? "auto",
      walkerGiven: choice.walker !== undefined,
      thread: choice.thread,
      maxFrames: DEFAULT_MAX_FRAMES,
      frameBudget: DEFAULT_FRAME_BUDGET,
      workBudget: DEFAULT_WORK_BUDGET,
    };
    await outputFormat(format)!.write(walkDocument(input, request), (t) => {
      parts.push(t);
      length += t.length;
      progress(`writing ${format}: ${length.toLocaleString("en-US")} characters`);
    });
    return parts.join("");
  }
}

/**
 * Attaches one symbol file or image to the modules it belongs to that have no unwind records yet
 * (a module with records keeps them, as with the command line's symbol directories). Returns the
 * notes saying what became of it; fills in `symbolNotes` for the JSON output.
 */
function attach(target: SymbolTarget, file: SymbolFile, symbolNotes: ModuleSymbolSource[]): string[] {
  const name = file.name ?? file.kind;
  const mine = target.modules.filter((m) => symbolFileMismatch(m, target.memory, file) === undefined);
  if (mine.length === 0) {
    const why = target.modules.map((m) => symbolFileMismatch(m, target.memory, file)).find((w) => w !== undefined && !w.startsWith("no "));
    return [`${name}: belongs to no module of the input${why !== undefined ? ` (${why})` : ""}; not used`];
  }
  if (file.kind !== "image" && mine.every((m) => m.unwind !== undefined)) return [`${name}: ${mine.map((m) => m.name).join(", ")} already has unwind records; not used`];
  const notes: string[] = [];
  for (const a of attachSymbolFile(target, file, { names: "keep" })) {
    notes.push(`${a.module.name}: ${[a.detail, ...a.warnings].join("; ")}`);
    if (file.kind !== "image") {
      const source: ModuleSymbolSource = { module: a.module.name, file: name };
      if (a.warnings.length > 0) source.corrupt = true;
      symbolNotes.push(source);
    }
  }
  return notes;
}

/** The chain examples: the snapshots of one call chain on each target, and what `stackwalk compare` says of them. */
export interface CompareExample {
  name: string;
  description: string;
  chain: string[];
  targets: { target: string; title: string; walker: WalkerName; build: string; etwSource: string; vector: string }[];
}

/** `stackwalk compare`'s text for a chain's committed snapshots (`files` holds each target's vector by file name). */
export function compareText(example: CompareExample, files: ReadonlyMap<string, string>): string {
  const targets = example.targets.map((t) => {
    const text = files.get(t.vector);
    if (text === undefined) throw new InputError("bad-value", `the example ${example.name} has no ${t.vector}`);
    const input = parseJsonInput(text, t.vector);
    if (input.kind !== "vector") throw new InputError("bad-value", "not a vector", { file: t.vector });
    return { target: t.target, build: t.build, snapshot: input.vector, etwSource: t.etwSource };
  });
  return renderCompare(compareChain({ name: example.name, description: example.description, chain: example.chain, targets }));
}

