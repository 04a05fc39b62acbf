/**
 * One function that loads an input by path with its symbols and images, for the command line and
 * for library users alike: {@link loadSnapshot}. A vector, a minidump (read by position), or one
 * snapshot of a sweep; the symbol path's directories, stores and caches first, then its servers
 * for what they lacked; a dump's module images from image directories and the symbol path.
 */
import type { SymbolTarget } from "../formats/symbol-file.js";
import type { Minidump } from "../formats/minidump.js";
import { replaySweep } from "../formats/sweep.js";
import { RegionMemory } from "../memory/region-memory.js";
import type { Snapshot } from "../model/snapshot.js";
import { attachImageDirectories, attachImagePath } from "./images.js";
import { loadInput, type Input } from "./input.js";
import { attachSymbolPath, downloadSymbols, missingDirectories, parseSymbolPath, type DownloadOptions, type SymbolPath } from "./symbol-path.js";
import { besideInput, SymbolFileCache, type SymbolNote } from "./symbol-store.js";

/** Where to look for symbols: the parsed path, whether one was given (which turns on the per-module notes), and the download limits. */
export interface SymbolSpec {
  path: SymbolPath;
  given: boolean;
  /** The download limits set (the others keep their defaults, DOWNLOAD_LIMITS). */
  limits: DownloadOptions;
}

/**
 * An option given to an input it does not apply to (a step to a minidump, images to a vector),
 * or a sweep given without a step. `option` names it as {@link LoadSnapshotOptions} does;
 * `words(name)` says the same naming the option as the caller calls it (the command line says
 * `--step`).
 */
export class LoadOptionError extends Error {
  constructor(
    readonly option: "step" | "images" | "minidump",
    readonly words: (name: string) => string,
  ) {
    super(words(option));
    this.name = "LoadOptionError";
  }
}

/** What {@link loadSnapshot} takes besides the path. */
export interface LoadSnapshotOptions {
  /** For a sweep: the instruction count of the snapshot to walk (a sweep needs one). */
  step?: number | undefined;
  /**
   * The symbol path: elements as debuggers take them (directories, `srv*CACHE*URL`, `cache*DIR`,
   * `;`-separated lists), or a spec parsed before. The input's own directory is searched last.
   * Default: none (the input's directory only).
   */
  symbols?: readonly string[] | SymbolSpec | undefined;
  /** Directories of module images a dump lacks the code of (DIR/<module file name>). */
  images?: readonly string[] | undefined;
  /**
   * Whether a dump's module images are looked for on the symbol path (stores, caches, then
   * servers); default true. Breakpad's walker reads no images: its callers pass false.
   */
  fetchImages?: boolean | undefined;
  /** Refuse anything but a minidump (what Breakpad's reports need). */
  minidumpOnly?: boolean | undefined;
  /** Symbol files read before (a batch's, shared by its dumps); default: one for this input. */
  symbolCache?: SymbolFileCache | undefined;
  /**
   * Each thing the search and the reader have to say, one line at a time (without a newline):
   * the symbol file used or passed over for each module (when a symbol path was given), images
   * found, what a damaged dump's reader passed over. Default: dropped.
   */
  onNote?: ((line: string) => void) | undefined;
}

/** A loaded input: the snapshot to walk, the minidump it is (if it is one) and what the symbol search found. */
export interface LoadedSnapshot {
  /** The path as given. */
  file: string;
  snapshot: Snapshot;
  dump?: Minidump | undefined;
  /** What the symbol search found, one note per module it looked at. */
  symbolNotes: SymbolNote[];
  /** Whether a symbol path was given. */
  symbolsGiven: boolean;
  /** Releases a dump's file (its memory reads nothing after it); nothing to release for JSON inputs. */
  close(): void;
}

/** A symbol spec of path elements (no servers' limits changed). */
export function symbolSpecOf(symbols: readonly string[] | SymbolSpec | undefined): SymbolSpec {
  if (symbols === undefined) return { path: parseSymbolPath([]), given: false, limits: {} };
  if (!Array.isArray(symbols)) return symbols as SymbolSpec;
  const entries = symbols as readonly string[];
  return { path: parseSymbolPath(entries), given: entries.length > 0, limits: {} };
}

/**
 * Loads `file` (a stackwalk-vector/1 or stackwalk-sweep/1 JSON file, or a minidump) with its
 * symbols and images. A dump's file stays open for its memory until `close`. Bad input is an
 * `InputError` (src/errors.ts) naming the file and offset or JSON path; an option that does not
 * fit the input (or a sweep's step it lacks) a {@link LoadOptionError}.
 */
export async function loadSnapshot(file: string, options: LoadSnapshotOptions = {}): Promise<LoadedSnapshot> {
  const note = options.onNote ?? (() => undefined);
  const spec = symbolSpecOf(options.symbols);
  const images = options.images ?? [];
  const input = loadInput(file);
  const close = input.kind === "dump" ? input.close : () => undefined;
  try {
    if (input.kind !== "dump" && options.minidumpOnly === true) {
      throw new LoadOptionError("minidump", (name) => `${name} reproduces Breakpad's report of a minidump; ${file} is a ${input.kind === "vector" ? "vector" : "sweep"}, not a .dmp`);
    }
    if (images.length > 0) {
      if (input.kind !== "dump") throw new LoadOptionError("images", (name) => `${name} applies to minidumps; ${file} is a ${input.kind}, which carries its images in its memory`);
      for (const n of attachImageDirectories(input.snapshot, images)) if (n.file !== undefined || !n.detail.startsWith("no ")) note(`images: ${n.module}: ${n.detail}`);
    }
    // Images from the symbol path's stores and caches, then its servers, for a dump's modules
    // whose code is not in the dump (vectors and sweeps carry their images).
    const fetchImages = input.kind === "dump" && options.fetchImages !== false;
    if (fetchImages && spec.given) {
      for (const n of attachImagePath(input.snapshot, spec.path, options.symbolCache === undefined ? {} : { cache: options.symbolCache })) if (n.file !== undefined || n.refused === true) note(`images: ${n.module}: ${n.detail}`);
    }
    const local = attachSymbols(input, file, spec, options.symbolCache);
    const target = input.kind === "dump" ? input.snapshot : input.kind === "vector" ? input.vector : undefined;
    const symbolNotes = await fetchSymbols(target, spec, local, note, { images: fetchImages });
    const loaded = { file, symbolNotes, symbolsGiven: spec.given, close };
    if (input.kind === "dump") {
      // What the reader passed over or repaired in a damaged dump (each names the offset).
      for (const n of input.dump.notes) note(`note: ${file}: ${n}`);
      if (options.step !== undefined) throw new LoadOptionError("step", (name) => `${name} applies to sweeps; ${file} is a minidump`);
      return { ...loaded, snapshot: input.snapshot, dump: input.dump };
    }
    if (input.kind === "vector") {
      if (options.step !== undefined) throw new LoadOptionError("step", (name) => `${name} applies to sweeps; ${file} is a single vector`);
      return { ...loaded, snapshot: input.vector };
    }
    const steps = input.sweep.steps;
    const wanted = options.step;
    if (wanted === undefined) {
      throw new LoadOptionError("step", (name) => `${file} is a sweep of ${steps.length} snapshots (steps ${steps[0]?.step ?? "-"}..${steps.at(-1)?.step ?? "-"}): choose one with ${name} N`);
    }
    for (const v of replaySweep(input.sweep)) if (v.step === wanted) return { ...loaded, snapshot: v };
    throw new LoadOptionError("step", () => `${file} has no snapshot at step ${wanted}`);
  } catch (e) {
    close();
    throw e;
  }
}

/**
 * Fills in unwind records and names for an input's modules from the symbol path's directories
 * (server caches included) and the input's own directory, through `cache` (a batch's, shared by
 * its dumps; by default one for this input, so that `.sym` files are read by position). Returns
 * a note per module looked at; {@link reportSymbols} says them.
 */
export function attachSymbols(input: Input, file: string, spec: SymbolSpec, cache: SymbolFileCache = new SymbolFileCache()): SymbolNote[] {
  if (input.kind !== "sweep") return attachSymbolPath(input.kind === "vector" ? input.vector : input.snapshot, spec.path, besideInput(file), { cache });
  const target = { modules: input.sweep.modules, memory: new RegionMemory(input.sweep.memory.map((r) => ({ base: r.base, bytes: r.bytes }))) };
  const notes = attachSymbolPath(target, spec.path, besideInput(file), { cache });
  input.sweep.modules = target.modules;
  return notes;
}

/**
 * Asks the symbol servers for what the directories did not have, and with `images`, for the
 * images of modules whose code the input lacks, then says every note of the search
 * ({@link reportSymbols}, a line per image found or refused and one naming the modules no server
 * had an image for); returns the symbol notes, one per module.
 */
export async function fetchSymbols(target: SymbolTarget | undefined, spec: SymbolSpec, notes: readonly SymbolNote[], note: (line: string) => void, options: { images?: boolean } = {}): Promise<SymbolNote[]> {
  let all = [...notes];
  const warnings: string[] = [];
  if (target !== undefined && spec.path.servers.length > 0) {
    const got = await downloadSymbols(target, spec.path, { ...spec.limits, images: options.images === true });
    const missing: string[] = [];
    for (const n of got.images ?? []) {
      if (n.file !== undefined || n.refused === true) note(`images: ${n.module}: ${n.detail}`);
      else missing.push(n.module);
    }
    if (missing.length > 0) note(`images: no image on the servers for ${missing.length} module(s): ${missing.join(", ")}`);
    warnings.push(...got.warnings);
    const byModule = new Map(got.notes.map((n) => [n.module, n]));
    all = all.map((n) => byModule.get(n.module) ?? n);
  }
  reportSymbols(spec, all, warnings, note);
  return all;
}

/**
 * Says what the symbol search did, when a symbol path was given: each path element that could
 * not be used and each missing directory (warnings naming them), each file used or passed over,
 * what each server answered for a module none had, and one line listing the modules left
 * without symbols.
 */
export function reportSymbols(spec: SymbolSpec, notes: readonly SymbolNote[], warnings: readonly string[], note: (line: string) => void): void {
  if (!spec.given) return;
  for (const w of spec.path.warnings) note(`warning: symbols: ${w}`);
  for (const d of missingDirectories(spec.path)) note(`warning: symbols: ${d}: no such directory`);
  for (const w of warnings) note(`warning: ${w}`);
  const missing: string[] = [];
  for (const n of notes) {
    if (n.file === undefined && n.passedOver === undefined && n.unusable !== true && n.misses === undefined) missing.push(n.module);
    else note(`symbols: ${n.module}: ${n.detail}`);
  }
  if (missing.length > 0) note(`symbols: no symbol file for ${missing.length} module(s): ${missing.join(", ")}`);
}
