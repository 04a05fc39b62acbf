/** What the commands that read inputs share: option checks, loading inputs, symbol directories. */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { RegionMemory } from "../memory/region-memory.js";
import { WALKER_NAMES, type WalkerName } from "../walk/registry.js";
import { loadInput, type Input } from "../node/input.js";
import { attachSymbolDirectories, besideInput, readInputFile } from "../node/symbol-store.js";
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

/** Parses `--thread`: a thread id, or (when `allowAll`) "all"; undefined when not given. */
export function threadOption(value: string | undefined, allowAll: boolean): number | "all" | undefined {
  if (value === undefined) return undefined;
  if (value === "all" && allowAll) return "all";
  if (!/^\d+$/.test(value)) throw new UsageError(`--thread takes a thread id${allowAll ? ' or "all"' : ""}, not "${value}"`);
  return Number(value);
}

/**
 * Fills in x86 unwind records for an input's modules from `--symbols` directories and the
 * input's own directory (src/node/symbol-store.ts). With `--symbols` given, what was found for
 * each module is reported on stderr.
 */
export function attachSymbols(input: Input, file: string, dirs: readonly string[], io: Io): void {
  let notes;
  if (input.kind === "sweep") {
    const target = { modules: input.sweep.modules, memory: new RegionMemory(input.sweep.memory.map((r) => ({ base: r.base, bytes: r.bytes }))) };
    notes = attachSymbolDirectories(target, dirs, besideInput(file));
    input.sweep.modules = target.modules;
  } else notes = attachSymbolDirectories(input.kind === "vector" ? input.vector : input.snapshot, dirs, besideInput(file));
  if (dirs.length === 0) return;
  const missing: string[] = [];
  for (const n of notes) {
    if (n.file === undefined && n.passedOver === undefined && n.unusable !== true) missing.push(n.module);
    else io.err(`symbols: ${n.module}: ${n.detail}\n`);
  }
  if (missing.length > 0) io.err(`symbols: no symbol file for ${missing.length} module(s): ${missing.join(", ")}\n`);
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
