/** What the commands that read inputs share: option checks, loading inputs, symbol directories. */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { RegionMemory } from "../memory/region-memory.js";
import { PAC_VA_BITS_MAX, PAC_VA_BITS_MIN } from "../arch/arm64/index.js";
import { WALKER_NAMES, type WalkerName } from "../walk/registry.js";
import { DEFAULT_FRAME_BUDGET, DEFAULT_WORK_BUDGET } from "../walk/walk.js";
import { loadInput, type Input } from "../node/input.js";
import { besideInput, readInputFile, SymbolFileCache, type SymbolNote } from "../node/symbol-store.js";
import { attachSymbolPath, downloadSymbols, missingDirectories, parseSymbolPath, type DownloadOptions, type SymbolPath } from "../node/symbol-path.js";
import type { SymbolTarget } from "../formats/symbol-file.js";
import { UsageError, type Io } from "./io.js";

export { EXIT, UsageError, parseOptions, type Io } from "./io.js";
export { loadInput, readInputFile, type Input };

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

/** Where to look for symbols: the parsed path, and whether the user gave one (which turns on the per-module notes). */
export interface SymbolSpec {
  path: SymbolPath;
  given: boolean;
  /** The download limits the options set (the others keep their defaults, DOWNLOAD_LIMITS). */
  limits: DownloadOptions;
}

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

/** A spec of plain directories (what `check` and `crosscheck` take). */
function asSpec(symbols: readonly string[] | SymbolSpec): SymbolSpec {
  return Array.isArray(symbols) ? symbolSpec({ symbols: [...(symbols as readonly string[])] }, {}) : (symbols as SymbolSpec);
}

/**
 * Fills in unwind records and names for an input's modules from the symbol path's directories
 * (server caches included) and the input's own directory (src/node/symbol-store.ts), through
 * `cache` (the batch's, shared by its dumps; by default one for this input, so that `.sym` files
 * are read by position). Returns a note per module looked at; {@link reportSymbols} prints them.
 */
export function attachSymbols(input: Input, file: string, symbols: readonly string[] | SymbolSpec, io: Io, cache: SymbolFileCache = new SymbolFileCache()): SymbolNote[] {
  const spec = asSpec(symbols);
  let notes: SymbolNote[];
  if (input.kind === "sweep") {
    const target = { modules: input.sweep.modules, memory: new RegionMemory(input.sweep.memory.map((r) => ({ base: r.base, bytes: r.bytes }))) };
    notes = attachSymbolPath(target, spec.path, besideInput(file), { cache });
    input.sweep.modules = target.modules;
  } else notes = attachSymbolPath(input.kind === "vector" ? input.vector : input.snapshot, spec.path, besideInput(file), { cache });
  if (Array.isArray(symbols)) reportSymbols(spec, notes, [], io);
  return notes;
}

/**
 * Asks the symbol servers for what the directories did not have (src/node/symbol-path.ts), and
 * with `images`, for the images of modules whose code the input lacks (src/node/images.ts), then
 * prints every note of the search ({@link reportSymbols}, and a line per image found or refused
 * and one naming the modules no server had an image for); returns the symbol notes, one per module.
 */
export async function fetchSymbols(target: SymbolTarget | undefined, spec: SymbolSpec, notes: readonly SymbolNote[], io: Io, options: { images?: boolean } = {}): Promise<SymbolNote[]> {
  let all = [...notes];
  const warnings: string[] = [];
  if (target !== undefined && spec.path.servers.length > 0) {
    const got = await downloadSymbols(target, spec.path, { ...spec.limits, images: options.images === true });
    const missing: string[] = [];
    for (const n of got.images ?? []) {
      if (n.file !== undefined || n.refused === true) io.err(`images: ${n.module}: ${n.detail}\n`);
      else missing.push(n.module);
    }
    if (missing.length > 0) io.err(`images: no image on the servers for ${missing.length} module(s): ${missing.join(", ")}\n`);
    warnings.push(...got.warnings);
    const byModule = new Map(got.notes.map((n) => [n.module, n]));
    all = all.map((n) => byModule.get(n.module) ?? n);
  }
  reportSymbols(spec, all, warnings, io);
  return all;
}

/**
 * Prints what the symbol search did, when a symbol path was given: each path element that could
 * not be used and each missing directory (warnings naming them), each file used or passed over,
 * what each server answered for a module none had, and one line listing the modules left
 * without symbols.
 */
export function reportSymbols(spec: SymbolSpec, notes: readonly SymbolNote[], warnings: readonly string[], io: Io): void {
  if (!spec.given) return;
  for (const w of spec.path.warnings) io.err(`warning: symbols: ${w}\n`);
  for (const d of missingDirectories(spec.path)) io.err(`warning: symbols: ${d}: no such directory\n`);
  for (const w of warnings) io.err(`warning: ${w}\n`);
  const missing: string[] = [];
  for (const n of notes) {
    if (n.file === undefined && n.passedOver === undefined && n.unusable !== true && n.misses === undefined) missing.push(n.module);
    else io.err(`symbols: ${n.module}: ${n.detail}\n`);
  }
  if (missing.length > 0) io.err(`symbols: no symbol file for ${missing.length} module(s): ${missing.join(", ")}\n`);
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
