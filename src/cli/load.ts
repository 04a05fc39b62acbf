/**
 * What the commands that walk one input share: the input loaded with its symbols and images by
 * src/node/load.ts (the options' mistakes said as the command line's flags), and the thread
 * `--thread` chooses.
 */
import { InputError } from "../errors.js";
import type { Snapshot } from "../model/snapshot.js";
import { loadSnapshot as loadWithSymbols, LoadOptionError, type LoadedSnapshot } from "../node/load.js";
import { outputFormat } from "../render/output-formats.js";
import type { SymbolFileCache } from "../node/symbol-store.js";
import { noteTo, UsageError, type Io, type SymbolSpec } from "./common.js";

/** What {@link loadSnapshot} needs besides the file. */
export interface LoadOptions {
  /** For a sweep: `--step`, the instruction count of the snapshot to walk. */
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
 * The snapshot to walk (src/node/load.ts's `loadSnapshot`), its notes printed on stderr; an
 * option that does not fit the input is a usage error naming the flag. A command that walks one
 * input leaves closing a dump's file to the end of the process.
 */
export async function loadSnapshot(file: string, options: LoadOptions, io: Io): Promise<LoadedSnapshot> {
  const { step } = options;
  const format = options.format ?? "text";
  if (step !== undefined && !/^\d+$/.test(step)) throw new UsageError(`--step takes an instruction count, not "${step}"`);
  const output = outputFormat(format);
  try {
    return await loadWithSymbols(file, {
      step: step === undefined ? undefined : Number(step),
      symbols: options.symbols,
      images: options.images,
      // Breakpad's walker reads no images: none is fetched for it.
      fetchImages: (options.walker ?? output?.walker) !== "breakpad",
      minidumpOnly: output?.minidumpOnly === true,
      symbolCache: options.symbolCache,
      onNote: noteTo(io),
    });
  } catch (e) {
    if (e instanceof LoadOptionError) throw new UsageError(e.words(e.option === "minidump" ? `--format ${format}` : `--${e.option}`));
    throw e;
  }
}
