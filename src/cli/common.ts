/** What the commands that read inputs share: option checks, loading inputs, symbol directories. */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { PAC_VA_BITS_MAX, PAC_VA_BITS_MIN } from "../arch/arm64/index.js";
import { WALKER_NAMES, type WalkerName } from "../walk/registry.js";
import { DEFAULT_FRAME_BUDGET, DEFAULT_WORK_BUDGET } from "../walk/walk.js";
import { loadInput, type Input } from "../node/input.js";
import { readInputFile, type SymbolNote } from "../node/symbol-store.js";
import { parseSymbolPath, type DownloadOptions } from "../node/symbol-path.js";
import { attachSymbols, reportSymbols, type SymbolSpec } from "../node/load.js";
import { UsageError, type Io } from "./io.js";

export { EXIT, UsageError, parseOptions, type Io } from "./io.js";
export { loadInput, readInputFile, reportSymbols, type Input, type SymbolSpec };

/** Validates a `--walker` value. */
export function walkerOption(value: string | undefined): WalkerName {
  if (value === undefined) return "auto";
  if (!(WALKER_NAMES as readonly string[]).includes(value)) throw new UsageError(`--walker must be one of ${WALKER_NAMES.join(", ")}, not "${value}"`);
  return value as WalkerName;
}

/** Parses `--max-frames`: a whole number ≥ 1, or undefined when not given. */
export function maxFramesOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`--max-frames takes a whole number ≥ 1, not "${value}"`);
  return Number(value);
}

/** Parses `--pac-va-bits`: the ARM64 virtual-address size pointer authentication codes are stripped at, 16 to 52, or undefined when not given. */
export function pacVaBitsOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < PAC_VA_BITS_MIN || n > PAC_VA_BITS_MAX) {
    throw new UsageError(`--pac-va-bits takes a whole number from ${PAC_VA_BITS_MIN} to ${PAC_VA_BITS_MAX} (the virtual-address size, 64 − TxSZ), not "${value}"`);
  }
  return n;
}

/** Parses `--frame-budget`: a whole number ≥ 1, or the default (`walk`'s, unless given) when not given. */
export function frameBudgetOption(value: string | undefined, fallback = DEFAULT_FRAME_BUDGET): number {
  if (value === undefined) return fallback;
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`--frame-budget takes a whole number ≥ 1, not "${value}"`);
  return Number(value);
}

/** Parses `--work-budget`: a whole number ≥ 1, or the default when not given. */
export function workBudgetOption(value: string | undefined): number {
  if (value === undefined) return DEFAULT_WORK_BUDGET;
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`--work-budget takes a whole number ≥ 1, not "${value}"`);
  return Number(value);
}

/**
 * Parses `--thread`: a thread id, or (when `allowAll`) "all", or (when `allowCrashed`) "crashed";
 * undefined when not given.
 */
export function threadOption(value: string | undefined, allowAll: boolean): number | "all" | undefined;
export function threadOption(value: string | undefined, allowAll: boolean, allowCrashed: true): number | "all" | "crashed" | undefined;
export function threadOption(value: string | undefined, allowAll: boolean, allowCrashed = false): number | "all" | "crashed" | undefined {
  if (value === undefined) return undefined;
  if (value === "all" && allowAll) return "all";
  if (value === "crashed" && allowCrashed) return "crashed";
  if (!/^\d+$/.test(value)) throw new UsageError(`--thread takes a thread id${allowAll && allowCrashed ? ', "all" or "crashed"' : allowAll ? ' or "all"' : ""}, not "${value}"`);
  return Number(value);
}

/** The options that say where symbols are, shared by the commands that walk dumps. */
export const SYMBOL_OPTIONS = {
  symbols: { type: "string", multiple: true },
  "symbols-url": { type: "string", multiple: true },
  "symbols-cache": { type: "string" },
  "symbol-download-timeout-secs": { type: "string" },
  "symbol-download-deadline-secs": { type: "string" },
  "symbol-run-deadline-secs": { type: "string" },
} as const;

/** The parsed values of {@link SYMBOL_OPTIONS}. */
export interface SymbolValues {
  symbols?: string[] | undefined;
  "symbols-url"?: string[] | undefined;
  "symbols-cache"?: string | undefined;
  "symbol-download-timeout-secs"?: string | undefined;
  "symbol-download-deadline-secs"?: string | undefined;
  "symbol-run-deadline-secs"?: string | undefined;
}

/**
 * The symbol path of `--symbols` (directories, symbol stores, `srv*CACHE*URL`, `cache*DIR`, `;`
 * lists), then `_NT_SYMBOL_PATH` when it is set, then the `--symbols-url` servers (their cache
 * `--symbols-cache`, else the default cache).
 */
export function symbolSpec(values: SymbolValues, env: NodeJS.ProcessEnv = process.env): SymbolSpec {
  const cache = values["symbols-cache"];
  const fromEnv = env["_NT_SYMBOL_PATH"];
  const entries = [...(values.symbols ?? []), ...(fromEnv !== undefined && fromEnv.trim() !== "" ? [fromEnv] : [])];
  for (const url of values["symbols-url"] ?? []) {
    if (!/^https?:\/\//i.test(url)) throw new UsageError(`--symbols-url takes an http:// or https:// URL, not "${url}"`);
    entries.push(cache !== undefined ? `srv*${cache}*${url}` : url);
  }
  const limits: DownloadOptions = {};
  const flags = [
    ["symbol-download-timeout-secs", "timeoutMs"],
    ["symbol-download-deadline-secs", "downloadDeadlineMs"],
    ["symbol-run-deadline-secs", "runDeadlineMs"],
  ] as const;
  for (const [flag, key] of flags) {
    const seconds = values[flag];
    if (seconds === undefined) continue;
    if (!(/^\d+(\.\d+)?$/.test(seconds) && Number(seconds) > 0)) throw new UsageError(`--${flag} takes a number of seconds > 0, not "${seconds}"`);
    limits[key] = Number(seconds) * 1000;
  }
  const path = parseSymbolPath(entries, cache !== undefined ? { defaultCache: cache } : {});
  return { path, given: entries.length > 0, limits };
}

/**
 * Fills in unwind records and names for an input's modules from symbol directories and the
 * input's own directory (what `check` and `crosscheck` take), and prints what the search did.
 */
export function attachSymbolDirectories(input: Input, file: string, directories: readonly string[], io: Io): SymbolNote[] {
  const spec = symbolSpec({ symbols: [...directories] }, {});
  const notes = attachSymbols(input, file, spec);
  reportSymbols(spec, notes, [], noteTo(io));
  return notes;
}

/** Prints the loader's notes on stderr, a line each. */
export function noteTo(io: Io): (line: string) => void {
  return (line) => io.err(`${line}\n`);
}

/** Whether `path` names a directory (false when it names nothing). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Expands directories (recursively, sorted) into the `.json` files below them. */
export function expandInputs(paths: readonly string[]): string[] {
  const out: string[] = [];
  const visit = (p: string): void => {
    let isDir = false;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      out.push(p);
      return;
    }
    if (!isDir) {
      out.push(p);
      return;
    }
    for (const name of readdirSync(p).sort()) {
      const child = join(p, name);
      if (statSync(child).isDirectory()) visit(child);
      else if (name.endsWith(".json")) out.push(child);
    }
  };
  for (const p of paths) visit(p);
  return out;
}
