/**
 * What the commands that walk one input share: the snapshot loaded with its symbols and images
 * (one snapshot of a sweep chosen by `--step`), and the thread `--thread` chooses.
 */
import { InputError } from "../errors.js";
import type { Minidump } from "../formats/minidump.js";
import { replaySweep } from "../formats/sweep.js";
import type { Snapshot } from "../model/snapshot.js";
import { attachImageDirectories, attachImagePath } from "../node/images.js";
import type { SymbolFileCache, SymbolNote } from "../node/symbol-store.js";
import { attachSymbols, fetchSymbols, loadInput, UsageError, type Io, type SymbolSpec } from "./common.js";

/** What {@link loadSnapshot} needs besides the file. */
export interface LoadOptions {
  /** For a sweep: the instruction count of the snapshot to walk. */
  step?: string | undefined;
  symbols: SymbolSpec;
  images: readonly string[];
  /** The output format (the Breakpad formats need a minidump). */
  format?: string;
  /** The `--walker` given, if any: Breakpad's walker never reads images, so none is fetched for it. */
  walker?: string | undefined;
  /** Symbol files read before (a batch's, shared by its dumps). */
  symbolCache?: SymbolFileCache;
}

/** `--thread crashed`: the crashed thread's id (an input error when none crashed); a thread id or "all" as given. */
export function resolveThread(snapshot: Snapshot, choice: number | "all" | "crashed", file: string): number | "all" {
  if (choice !== "crashed") return choice;
  const crashed = snapshot.threads.find((t) => t.crashed);
  if (crashed === undefined) throw new InputError("bad-value", `no thread crashed (threads: ${snapshot.threads.map((t) => t.id).join(", ")}), so --thread crashed chooses none`, { file });
  return crashed.id;
}

/**
 * The snapshot to walk: a vector or minidump itself, or one snapshot of a sweep chosen with
 * `--step`; with the minidump it came from, if any, and what the symbol search found (symbol
 * directories, then symbol servers for what they lacked; its notes are printed on stderr). A
 * dump's file stays open for its memory until `close` (a command that walks one input leaves
 * that to the end of the process).
 */
export async function loadSnapshot(file: string, options: LoadOptions, io: Io): Promise<{ snapshot: Snapshot; dump?: Minidump; symbolNotes: SymbolNote[]; close?: () => void }> {
  const { step, symbols, images } = options;
  const format = options.format ?? "text";
  const input = loadInput(file);
  if (input.kind !== "dump" && (format === "breakpad" || format === "breakpad-m")) {
    throw new UsageError(`--format ${format} reproduces Breakpad's report of a minidump; ${file} is a ${input.kind === "vector" ? "vector" : "sweep"}, not a .dmp`);
  }
  if (images.length > 0) {
    if (input.kind !== "dump") throw new UsageError(`--images applies to minidumps; ${file} is a ${input.kind}, which carries its images in its memory`);
    for (const n of attachImageDirectories(input.snapshot, images)) if (n.file !== undefined || !n.detail.startsWith("no ")) io.err(`images: ${n.module}: ${n.detail}\n`);
  }
  // Images from the symbol path's stores and caches, then its servers, for a dump's modules whose
  // code is not in the dump (vectors and sweeps carry their images); not for Breakpad's walker.
  const breakpadWalker = options.walker === "breakpad" || (options.walker === undefined && (format === "breakpad" || format === "breakpad-m"));
  const fetchImages = input.kind === "dump" && !breakpadWalker;
  if (fetchImages && symbols.given) {
    for (const n of attachImagePath(input.snapshot, symbols.path)) if (n.file !== undefined || n.refused === true) io.err(`images: ${n.module}: ${n.detail}\n`);
  }
  const local = attachSymbols(input, file, symbols, io, options.symbolCache);
  const symbolNotes = await fetchSymbols(input.kind === "dump" ? input.snapshot : input.kind === "vector" ? input.vector : undefined, symbols, local, io, { images: fetchImages });
  if (input.kind === "dump") {
    // What the reader passed over or repaired in a damaged dump (each names the offset).
    for (const note of input.dump.notes) io.err(`note: ${file}: ${note}\n`);
    if (step !== undefined) throw new UsageError(`--step applies to sweeps; ${file} is a minidump`);
    return { snapshot: input.snapshot, dump: input.dump, symbolNotes, close: input.close };
  }
  if (input.kind === "vector") {
    if (step !== undefined) throw new UsageError(`--step applies to sweeps; ${file} is a single vector`);
    return { snapshot: input.vector, symbolNotes };
  }
  const steps = input.sweep.steps;
  if (step === undefined) {
    throw new UsageError(`${file} is a sweep of ${steps.length} snapshots (steps ${steps[0]?.step ?? "-"}..${steps.at(-1)?.step ?? "-"}): choose one with --step N`);
  }
  if (!/^\d+$/.test(step)) throw new UsageError(`--step takes an instruction count, not "${step}"`);
  const wanted = Number(step);
  for (const v of replaySweep(input.sweep)) if (v.step === wanted) return { snapshot: v, symbolNotes };
  throw new UsageError(`${file} has no snapshot at step ${wanted}`);
}

