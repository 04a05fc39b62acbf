/**
 * `stackwalk emulate <program>`: runs a program on the emulated CPU and writes snapshots with
 * ground truth: a sweep of every instruction, or one vector per break hit.
 */
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import type { RunOptions, RunResult } from "../../emulator/run.js";
import { InputError } from "../errors.js";
import { formatSweep } from "../formats/sweep.js";
import { formatVector } from "../formats/vector.js";
import { EXIT, parseOptions, readInputFile, UsageError, type Io } from "./common.js";

/** The instruction limit when --max-instructions is not given. */
export const DEFAULT_MAX_INSTRUCTIONS = 1_000_000;

/** Usage text of `emulate`. */
export const EMULATE_USAGE = `usage: stackwalk emulate <program.exe|spec.json|source.asm> [--sweep] [--break NAME|ADDR]... [-o OUT]
                        [--max-instructions N]

Runs a program on an emulated x86 or x64 CPU (Unicorn 2) from its entry point until the entry
function returns, as if called with a return address of 0 (a 64 KiB stack, more for programs
built for a larger one; every general register 0 except the stack pointer). Snapshots are taken
before an instruction executes; their ground truth comes from a shadow call stack that follows
every call and return the CPU makes. Programs:
  program.exe   a freestanding PE image (no imports, loaded at its ImageBase), with symbols from
                the PDB of the same name beside it
  spec.json     a call-chain spec (format "stackwalk-program/1": machine, name, description and
                functions, as in emulator/programs/x86-corpus.ts and x64-corpus.ts), built into an
                image with the unwind data a compiler would emit; its labels (e.g. capture) are
                break names
  source.asm    Intel-syntax assembly (x86, or x64 with a "# machine: x64" line), entered at the
                label main or the first instruction; labels become symbols; no unwind data

  --sweep              one sweep file (stackwalk-sweep/1) with a snapshot before every
                       instruction; with --break, only the break snapshots go into it
  --break NAME|ADDR    a vector (stackwalk-vector/1) each time execution reaches a function
                       (NAME, NAME+0xN, module!NAME) or an address (0x...); repeatable
  -o OUT               where to write. A sweep: the file (default <program>.sweep.json). Vectors:
                       a directory (existing, or ending in /), or a file name pattern with
                       {program} {label} {step} {n} (step = instructions executed, n = hit
                       number); default {program}.{label}.{step}.json in the current directory.
                       A plain file name is accepted when there is exactly one hit
  --max-instructions N stop with an error after N instructions (default ${DEFAULT_MAX_INSTRUCTIONS})

Without --sweep or --break the program runs and its result (EAX/RAX) is printed.
Exit status: 0 success, 2 bad input, a program that faults or does not finish, or usage.
`;

/**
 * The emulator (Unicorn through koffi, Capstone) is loaded only when `emulate` runs, so the
 * other commands never touch the native library.
 */
const emulator = () => import("../../emulator/run.js");

/** The default name pattern of break vectors. */
const VECTOR_PATTERN = "{program}.{label}.{step}.json";

/** A kind of program `emulate` can run, recognised by its file name or first bytes. */
export interface ProgramKind {
  /** What it is, with its article, for messages ("a PE image"). */
  readonly name: string;
  /** True when the file is of this kind. */
  matches(file: string, head: Uint8Array): boolean;
  /** Runs it. */
  run(file: string, options: RunOptions): Promise<RunResult>;
}

/** PE images: "MZ" at offset 0. */
const PE_PROGRAM: ProgramKind = {
  name: "a PE image (.exe/.dll)",
  matches: (_file, head) => head[0] === 0x4d && head[1] === 0x5a,
  run: async (file, options) => (await emulator()).runImageFile(file, options),
};

const programFiles = () => import("../../emulator/programs/program-file.js");

/** Builds a program with `build`, then runs it. */
async function runBuilt(build: (text: string) => Promise<import("../../emulator/programs/program-file.js").BuiltProgram>, file: string, options: RunOptions): Promise<RunResult> {
  const program = await build(new TextDecoder().decode(readInputFile(file)));
  return (await programFiles()).runBuiltProgram(program, options);
}

/** Call-chain specs (stackwalk-program/1 JSON): built with their unwind data, then run. */
const SPEC_PROGRAM: ProgramKind = {
  name: "a program spec (.json, stackwalk-program/1)",
  matches: (file) => extname(file).toLowerCase() === ".json",
  run: async (file, options) => runBuilt(async (text) => (await programFiles()).buildProgramSpec(text, file), file, options),
};

/** Plain Intel-syntax assembly (.asm, .s): assembled into an image without unwind data, then run. */
const ASSEMBLY_PROGRAM: ProgramKind = {
  name: "an assembly source (.asm/.s)",
  matches: (file) => [".asm", ".s"].includes(extname(file).toLowerCase()),
  run: async (file, options) => runBuilt(async (text) => (await programFiles()).buildAssemblyProgram(text, file, basename(file, extname(file))), file, options),
};

/** The program kinds, tried in order; the first that matches runs the file. */
export const PROGRAM_KINDS: ProgramKind[] = [PE_PROGRAM, SPEC_PROGRAM, ASSEMBLY_PROGRAM];

/** Runs `emulate`. */
export async function emulateCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    sweep: { type: "boolean" },
    break: { type: "string", multiple: true },
    output: { type: "string", short: "o" },
    "max-instructions": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(EMULATE_USAGE);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`emulate takes exactly one program (got ${positionals.length})`);
  const file = positionals[0]!;
  let maxInstructions = DEFAULT_MAX_INSTRUCTIONS;
  const limit = values["max-instructions"];
  if (limit !== undefined) {
    if (!/^[1-9]\d*$/.test(limit) || !Number.isSafeInteger(Number(limit))) throw new UsageError(`--max-instructions takes a whole number ≥ 1, not "${limit}"`);
    maxInstructions = Number(limit);
  }
  const breaks = values.break ?? [];
  const sweep = values.sweep === true;
  const kind = programKind(file);

  const options: RunOptions = { maxInstructions, breaks, sweep: sweep && breaks.length === 0 };
  const stem = basename(file, extname(file));
  if (sweep) options.provenance = `emulator: stackwalk emulate ${[file, "--sweep", ...breaks.flatMap((b) => ["--break", b])].join(" ")} (Unicorn 2; truth from the shadow call stack)`;
  else if (breaks.length > 0) options.provenance = `emulator: stackwalk emulate ${[file, ...breaks.flatMap((b) => ["--break", b])].join(" ")} (Unicorn 2; truth from the shadow call stack)`;
  const progress = progressReporter(io);
  if (progress !== undefined) options.onProgress = progress.update;

  const { EmulationError, vectorsOf } = await emulator();
  let result: RunResult;
  try {
    result = await kind.run(file, options);
  } catch (e) {
    if (e instanceof EmulationError) {
      progress?.done();
      io.err(`stackwalk emulate: ${file}: ${e.message}\n`);
      return EXIT.badInput;
    }
    throw e;
  } finally {
    progress?.done();
  }

  const executed = `${result.instructions ?? "?"} instructions`;
  if (sweep) {
    const out = sweepPath(values.output, stem);
    writeAll([{ path: out, text: formatSweep(result.sweep) }]);
    io.out(`wrote ${out}: ${result.sweep.steps.length} snapshots (${executed})\n`);
    return EXIT.ok;
  }
  if (breaks.length > 0) {
    for (const b of breaks) {
      if (!result.sweep.steps.some((s) => s.label?.split(",").includes(b) === true)) io.err(`stackwalk emulate: --break ${b} was never reached\n`);
    }
    const vectors = vectorsOf(result);
    if (vectors.length === 0) {
      io.err(`stackwalk emulate: ${file}: no break was reached in ${executed}; nothing written\n`);
      return EXIT.badInput;
    }
    const outputs = vectorPaths(values.output, stem, result).map((path, i) => ({ path, text: formatVector(vectors[i]!) }));
    writeAll(outputs);
    for (const o of outputs) io.out(`wrote ${o.path}\n`);
    io.out(`${outputs.length} vector${outputs.length === 1 ? "" : "s"} (${executed})\n`);
    return EXIT.ok;
  }
  const value = result.registers["rax"] ?? result.registers["eax"]!;
  const width = result.sweep.machine === "x64" ? 16 : 8;
  io.out(`${file}: returned to the sentinel after ${executed}; ${result.sweep.machine === "x64" ? "rax" : "eax"} = 0x${value.toString(16).padStart(width, "0")}\n`);
  return EXIT.ok;
}

/** The kind of program in `file`; an unknown kind is an {@link InputError}. */
function programKind(file: string): ProgramKind {
  const head = readInputFile(file).subarray(0, 64);
  const kind = PROGRAM_KINDS.find((k) => k.matches(file, head));
  if (kind === undefined) {
    throw new InputError("unsupported", `not a program the emulator can run (expected ${PROGRAM_KINDS.map((k) => k.name).join(", or ")})`, { file });
  }
  return kind;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function sweepPath(output: string | undefined, stem: string): string {
  const name = `${stem}.sweep.json`;
  if (output === undefined) return name;
  if (output.endsWith("/") || isDirectory(output)) return join(output, name);
  return output;
}

/** One output path per snapshot, all different; see the usage text for the forms of OUT. */
function vectorPaths(output: string | undefined, stem: string, result: RunResult): string[] {
  const steps = result.sweep.steps;
  let pattern: string;
  if (output === undefined) pattern = VECTOR_PATTERN;
  else if (output.endsWith("/") || isDirectory(output)) pattern = join(output, VECTOR_PATTERN);
  else if (/\{(program|label|step|n)\}/.test(output)) pattern = output;
  else if (steps.length === 1) return [output];
  else throw new UsageError(`-o ${output} names one file, but the breaks were hit ${steps.length} times: give a directory or a pattern with {step} or {n}`);
  const paths = steps.map((s, i) =>
    pattern
      .replaceAll("{program}", stem)
      .replaceAll("{label}", safeName(s.label ?? "snapshot"))
      .replaceAll("{step}", String(s.step))
      .replaceAll("{n}", String(i + 1)),
  );
  const seen = new Set<string>();
  for (const p of paths) {
    if (seen.has(p)) throw new UsageError(`-o ${pattern} gives the same file name (${p}) to two snapshots: add {step} or {n}`);
    seen.add(p);
  }
  return paths;
}

/** A label as part of a file name: anything but letters, digits, `_`, `-` and `.` becomes `_`. */
function safeName(label: string): string {
  return label.replace(/[^A-Za-z0-9_.-]/g, "_");
}

/**
 * Writes every file or none: each text goes to a temporary file beside its target first, and
 * only when all are written are they renamed into place.
 */
function writeAll(outputs: readonly { path: string; text: string }[]): void {
  const temporary: string[] = [];
  try {
    for (const o of outputs) {
      const dir = dirname(o.path);
      mkdirSync(dir, { recursive: true });
      const tmp = join(dir, `.${basename(o.path)}.${process.pid}.tmp`);
      temporary.push(tmp);
      writeFileSync(tmp, o.text);
    }
  } catch (e) {
    for (const tmp of temporary) rmSync(tmp, { force: true });
    const failed = outputs[temporary.length - 1]?.path ?? outputs[0]?.path;
    const where = failed === undefined ? {} : { file: failed };
    throw new InputError("io", `cannot write: ${e instanceof Error ? e.message : String(e)}`, where);
  }
  outputs.forEach((o, i) => renameSync(temporary[i]!, o.path));
}

/**
 * A one-line progress counter on stderr, for long runs only: shown when stderr is a terminal,
 * from the first update after one second.
 */
function progressReporter(io: Io): { update: (executed: number) => void; done: () => void } | undefined {
  if (process.stderr.isTTY !== true) return undefined;
  const started = Date.now();
  let shown = false;
  return {
    update: (executed) => {
      if (Date.now() - started < 1000) return;
      shown = true;
      io.err(`\remulating: ${executed.toLocaleString("en-US")} instructions`);
    },
    done: () => {
      if (shown) io.err("\r\x1b[K");
      shown = false;
    },
  };
}
