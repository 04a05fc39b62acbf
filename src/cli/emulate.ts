/**
 * `stackwalk emulate <program>`: runs a program on the emulated CPU and writes snapshots with
 * ground truth: a sweep of every instruction, or one vector per break hit.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import type { RunOptions, RunResult } from "../../emulator/run.js";
import { InputError } from "../errors.js";
import { formatBreakpadSym, symFileInput, symFileStorePath } from "../formats/breakpad-sym-write.js";
import { archWalker } from "../walk/registry.js";
import { formatAddress, machineInfo } from "../model/machine.js";
import { moduleCodeView } from "../formats/minidump-write.js";
import { formatSweep, replaySweep } from "../formats/sweep.js";
import { formatVector } from "../formats/vector.js";
import type { MemoryReader } from "../memory/reader.js";
import type { Module, Snapshot } from "../model/snapshot.js";
import { writeMinidumpFile } from "../node/file-sink.js";
import { EXIT, isDirectory, parseOptions, readInputFile, UsageError, type Io } from "./common.js";

/** The instruction limit when --max-instructions is not given. */
export const DEFAULT_MAX_INSTRUCTIONS = 1_000_000;

/** Usage text of `emulate`. */
export const EMULATE_USAGE = `usage: stackwalk emulate <program.exe|spec.json|source.asm> [--sweep] [--break NAME|ADDR]... [-o OUT]
                        [--dmp] [--max-instructions N]

Runs a program on an emulated x86, x64, ARM64 or ARM (Thumb-2) CPU (Unicorn 2) from its entry
point until the entry function returns, as if called with a return address of 0 (on ARM64 and ARM
in LR; every general register 0 except the stack pointer). The stack is the SizeOfStackReserve the
image was linked for (/stack; 1 MiB by default; at most 256 MiB, a larger reserve is refused),
ending at 0x00130000 (x86, ARM) or 0x00300000 (x64, ARM64) when it fits below, else at the lowest free range above the images; only the pages the
program touches cost memory. Snapshots are taken before an instruction executes; their ground
truth comes from a shadow call stack that follows every call and return the CPU makes. Programs:
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
  --dmp                also write a Windows minidump per snapshot, and a Breakpad .sym file per
                       module in a symbol store beside the dumps (DIR/<pdb>/<debug id>/<name>.sym,
                       DIR being the dumps' directory; x64, ARM64 and ARM modules get STACK
                       CFI from their unwind tables). With --break: one dump per hit, named
                       as its vector with .dmp for .json. With --sweep alone: one dump per
                       instruction, named <sweep name>.<step>.dmp beside the sweep file (.json
                       or .sweep.json dropped). A dump holds the thread's CONTEXT, the module list
                       with CodeView records, an EXCEPTION_BREAKPOINT at the snapshot's PC, and
                       the recorded memory (stack and images) as a MemoryList. A module whose
                       image has no CodeView record (assembly sources) gets a made-up identity
                       <name>.pdb with an id hashed from its image, so its .sym can be found.
                       Walk a dump with "stackwalk walk X.dmp" (its directory is searched for
                       symbols) or Breakpad's "minidump_stackwalk X.dmp DIR"
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
    dmp: { type: "boolean" },
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
  const dumps = values.dmp === true;
  if (dumps && !sweep && breaks.length === 0) throw new UsageError("--dmp writes a minidump per snapshot: give --break or --sweep");
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
  const identities = new Map<Module, Module>();
  if (sweep) {
    const out = sweepPath(values.output, stem);
    const staging = new Staging();
    staging.text(out, formatSweep(result.sweep));
    const written: string[] = [];
    if (dumps) {
      const base = out.replace(/(\.sweep)?\.json$/i, "");
      const syms = new SymStore(staging);
      let index = 0;
      for (const snapshot of replaySweep(result.sweep)) {
        const step = result.sweep.steps[index++]!;
        const path = `${base}${step.label !== undefined ? `.${safeName(step.label)}` : ""}.${step.step}.dmp`;
        const dump = dumpSnapshot(snapshot, identities);
        staging.file(path, (tmp) => writeMinidumpFile(tmp, dump));
        syms.add(dirname(path), dump);
        written.push(path);
      }
      syms.notes.forEach((n) => io.err(`stackwalk emulate: ${n}\n`));
      staging.commit();
      io.out(`wrote ${out}: ${result.sweep.steps.length} snapshots (${executed})\n`);
      if (written.length > 0) io.out(`wrote ${written.length} minidump${written.length === 1 ? "" : "s"}: ${written[0]}${written.length > 1 ? ` ... ${written.at(-1)}` : ""}\n`);
      for (const p of syms.paths) io.out(`wrote ${p}\n`);
      return EXIT.ok;
    }
    staging.commit();
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
    const paths = vectorPaths(values.output, stem, result);
    const staging = new Staging();
    paths.forEach((path, i) => staging.text(path, formatVector(vectors[i]!)));
    const dumpPaths: string[] = [];
    const syms = new SymStore(staging);
    if (dumps) {
      paths.forEach((path, i) => {
        const dumpPath = /\.json$/i.test(path) ? path.replace(/\.json$/i, ".dmp") : `${path}.dmp`;
        const dump = dumpSnapshot(vectors[i]!, identities);
        staging.file(dumpPath, (tmp) => writeMinidumpFile(tmp, dump));
        syms.add(dirname(dumpPath), dump);
        dumpPaths.push(dumpPath);
      });
      syms.notes.forEach((n) => io.err(`stackwalk emulate: ${n}\n`));
    }
    staging.commit();
    for (const p of [...paths, ...dumpPaths, ...syms.paths]) io.out(`wrote ${p}\n`);
    const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;
    io.out(`${plural(paths.length, "vector")}${dumps ? `, ${plural(dumpPaths.length, "minidump")}` : ""} (${executed})\n`);
    return EXIT.ok;
  }
  // The function's result, in the machine's return register.
  const returnRegister = machineInfo(result.sweep.machine).returnValue;
  const value = result.registers[returnRegister]!;
  io.out(`${file}: returned to the sentinel after ${executed}; ${returnRegister} = ${formatAddress(result.sweep.machine, value)}\n`);
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

/** A Node system error (ENOENT, ENOSPC, ...), as opposed to a mistake in the program. */
function isSystemError(e: unknown): e is Error & { code: string } {
  return e instanceof Error && typeof (e as { code?: unknown }).code === "string";
}

/**
 * Writes every file or none: each file is written now under a temporary name beside its target,
 * and only {@link Staging.commit} renames them all into place. A failed write removes every
 * temporary file; a failing file system is an {@link InputError} naming the file.
 */
class Staging {
  private readonly staged: { tmp: string; path: string }[] = [];

  /** Writes `path` now, under a temporary name, with `write(tmp)`. */
  file(path: string, write: (tmp: string) => void): void {
    const dir = dirname(path);
    const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
    try {
      mkdirSync(dir, { recursive: true });
      this.staged.push({ tmp, path });
      write(tmp);
    } catch (e) {
      this.abort();
      if (isSystemError(e)) throw new InputError("io", `cannot write: ${e.message}`, { file: path });
      throw e;
    }
  }

  text(path: string, text: string): void {
    this.file(path, (tmp) => writeFileSync(tmp, text));
  }

  /** Gives every staged file its name. */
  commit(): void {
    for (const s of this.staged) renameSync(s.tmp, s.path);
    this.staged.length = 0;
  }

  private abort(): void {
    for (const s of this.staged) rmSync(s.tmp, { force: true });
    this.staged.length = 0;
  }
}

/** The Breakpad .sym files of the modules of the dumps, one per store directory and module identity. */
class SymStore {
  readonly paths: string[] = [];
  readonly notes: string[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly staging: Staging) {}

  /** Stages the .sym file of every module of `snapshot` under the store at `root`, once each. */
  add(root: string, snapshot: Snapshot): void {
    for (const module of snapshot.modules) {
      const input = symFileInput(module, snapshot.machine, snapshot.memory);
      if (input === undefined) {
        const note = `${module.name}: no CodeView identity, so no .sym file`;
        if (!this.notes.includes(note)) this.notes.push(note);
        continue;
      }
      const path = join(root, symFileStorePath(input));
      if (this.seen.has(path)) continue;
      this.seen.add(path);
      // STACK CFI from the image's unwind tables where the machine has them, so a dump without images walks with them.
      const cfi = archWalker(snapshot.machine).moduleCfi?.(module, snapshot.memory);
      if (cfi !== undefined) input.stackCfi = cfi;
      this.staging.text(path, formatBreakpadSym(input));
      this.paths.push(path);
    }
  }
}

/** 32 hex digits hashed from bytes (four FNV-1a lanes): a stable made-up GUID. */
function madeUpGuid(bytes: Uint8Array): string {
  const lanes = [0x811c9dc5, 0x01000193 ^ 0x5bd1e995, 0x9e3779b9, 0x85ebca6b];
  for (let i = 0; i < bytes.length; i++) {
    const lane = i & 3;
    lanes[lane] = Math.imul(lanes[lane]! ^ bytes[i]!, 0x01000193) >>> 0;
  }
  // Mix every lane with the length so that short images still differ in all digits.
  return lanes.map((h, i) => (Math.imul(h ^ (bytes.length + i), 0x27d4eb2d) >>> 0).toString(16).toUpperCase().padStart(8, "0")).join("");
}

/**
 * A module as the dump and its .sym record it: unchanged when its image has a CodeView record
 * (or it has a debug file and id), otherwise a copy with a made-up identity: `<name>.pdb` and a
 * GUID hashed from the mapped image, age 1.
 */
function withIdentity(module: Module, memory: MemoryReader): Module {
  if (moduleCodeView(module, memory) !== undefined) return module;
  const image = module.size <= 0x1000_0000n ? memory.read(module.base, Number(module.size)) : undefined;
  const name = module.name.replace(/\.[^.\\/]*$/, "");
  return { ...module, debugFile: `${name === "" ? module.name : name}.pdb`, debugId: `${madeUpGuid(image ?? new TextEncoder().encode(module.name))}1` };
}

/**
 * The snapshot a dump is written from: the modules get an identity (see {@link withIdentity}),
 * worked out once per module of the run (`identities`), so that every dump of a run agrees even
 * where the program wrote to its image.
 */
export function dumpSnapshot(snapshot: Snapshot, identities: Map<Module, Module>): Snapshot {
  const modules = snapshot.modules.map((m) => {
    let named = identities.get(m);
    if (named === undefined) {
      named = withIdentity(m, snapshot.memory);
      identities.set(m, named);
    }
    return named;
  });
  return { ...snapshot, modules };
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
