/** What every command shares: argument parsing, exit codes, loading inputs from files. */
import { readFileSync, statSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { InputError } from "../errors.js";
import { parseJsonInput, type JsonInput } from "../formats/input.js";
import { minidumpSnapshot, readMinidump, type Minidump } from "../formats/minidump.js";
import type { Snapshot } from "../model/snapshot.js";
import { fileSource, ioReason } from "./file-source.js";
import { RegionMemory } from "../memory/region-memory.js";
import { WALKER_NAMES, type WalkerName } from "../walk/registry.js";
import { attachSymbolFiles, besideInput } from "./symbols.js";

/** Exit codes of the contract: 0 success, 1 a check found a difference, 2 bad input or usage. */
export const EXIT = { ok: 0, difference: 1, badInput: 2 } as const;

/** A usage mistake (exit 2), printed with the command's usage line. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Where a command writes; tests pass collectors. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** Parses options strictly; unknown options and missing values are usage errors. */
export function parseOptions<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message.split("\n")[0]! : String(e));
  }
}

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

/** Reads a whole file; a missing or unreadable file is an {@link InputError} naming it. */
export function readInputFile(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new InputError("io", `cannot read: ${ioReason(e)}`, { file });
  }
}

/** A loaded input: a vector or sweep (JSON), or a minidump read lazily from its file. */
export type Input = JsonInput | { kind: "dump"; snapshot: Snapshot; dump: Minidump };

/**
 * Loads an input: a stackwalk-vector/1 or stackwalk-sweep/1 JSON file, or a minidump (`MDMP`),
 * which is read by position: its memory is read from the file as the walk asks for it.
 */
export function loadInput(file: string): Input {
  const head = fileSource(file);
  const magic = head.read(0, Math.min(4, head.size));
  if (magic !== undefined && magic.length === 4 && String.fromCharCode(...magic) === "MDMP") {
    try {
      const dump = readMinidump(head, file);
      return { kind: "dump", snapshot: minidumpSnapshot(dump), dump };
    } catch (e) {
      head.close();
      if (e instanceof InputError && e.file === undefined) throw e.inFile(file);
      throw e;
    }
  }
  head.close();
  const bytes = readInputFile(file);
  let first = 0;
  while (first < bytes.length && (bytes[first] === 0x20 || bytes[first] === 0x0a || bytes[first] === 0x0d || bytes[first] === 0x09)) first++;
  if (bytes[first] !== 0x7b) {
    throw new InputError("bad-magic", "not a stackwalk-vector/1 or stackwalk-sweep/1 JSON file, nor a minidump", { file, offset: first });
  }
  return parseJsonInput(new TextDecoder("utf-8").decode(bytes), file);
}

/**
 * Fills in x86 unwind records for an input's modules from `--symbols` directories and the
 * input's own directory (see symbols.ts). With `--symbols` given, what was found for each module
 * is reported on stderr.
 */
export function attachSymbols(input: Input, file: string, dirs: readonly string[], io: Io): void {
  const modules = input.kind === "vector" ? input.vector.modules : input.kind === "dump" ? input.snapshot.modules : input.sweep.modules;
  const memory =
    input.kind === "vector" ? input.vector.memory : input.kind === "dump" ? input.snapshot.memory : new RegionMemory(input.sweep.memory.map((r) => ({ base: r.base, bytes: r.bytes })));
  const notes = attachSymbolFiles(modules, memory, dirs, besideInput(file));
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
