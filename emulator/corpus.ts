/**
 * The generated vector corpus, all of it: sweeps of the real C programs, and vectors taken at
 * the capture points of the synthetic call chains. `npm run vectors` rewrites every file; the
 * corpus test checks that the committed files equal a fresh regeneration, byte for byte, and
 * that no generated folder holds a file the generator no longer makes.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Vector } from "../src/index.js";
import { formatVector } from "../src/entry/formats.js";
import { captureVectors as etwCaptureVectors } from "./etw-capture.js";
import { buildX86Program, X64_CORPUS_SPECS, X86_CORPUS_SPECS, type X64ProgramSpec, type X86ProgramSpec } from "./programs/index.js";
import { buildSpec, runBuiltProgram } from "./programs/program-file.js";
import { X86_ETW_SPECS } from "./programs/x86-corpus.js";
import { realProgramSweeps, REPO_ROOT } from "./real-programs.js";
import { vectorsOf, type RunResult } from "./run.js";
import { ia64CorpusFiles } from "./ia64/corpus.js";
import { arm64CorpusFiles } from "./arm64-programs.js";
import { armCorpusFiles } from "./arm/corpus.js";
import { armProgramSweeps } from "./arm/programs.js";

/** One generated file: a path relative to the repository root, and its text. */
export interface CorpusFile {
  file: string;
  text: string;
}

/** The folders whose every file the generator owns. */
export const GENERATED_FOLDERS = [
  "vectors/x86/c-fpo",
  "vectors/x86/c-fp",
  "vectors/x64/c",
  "vectors/x86/synthetic",
  "vectors/x86/etw",
  "vectors/x64/synthetic",
  "vectors/ia64/synthetic",
  "vectors/arm64/c",
  "vectors/arm64/c-fp",
  "vectors/arm64/synthetic",
  "vectors/arm/synthetic",
  "vectors/arm/c",
] as const;

/** One vector per snapshot of a break run, described by the program and the label it was taken at. */
function captureVectors(result: RunResult, description: string): { label: string; vector: Vector }[] {
  const labels = result.sweep.steps.map((s) => s.label ?? "");
  return vectorsOf(result).map((vector, i) => {
    vector.description = `${description} (at ${labels[i]})`;
    return { label: labels[i]!, vector };
  });
}

/** Runs a synthetic program and returns one vector per capture label; x64 interrupt handlers put the interrupted frame in the truth. */
async function specCaptureVectors(spec: { machine: "x86"; spec: X86ProgramSpec } | { machine: "x64"; spec: X64ProgramSpec }): Promise<{ label: string; vector: Vector }[]> {
  const program = await buildSpec(spec);
  const result = await runBuiltProgram(program, {
    breaks: program.captures,
    provenance: `emulator: synthetic ${spec.machine} program ${program.name} (emulator/programs/${spec.machine}-corpus.ts, source vectors/programs/${spec.machine}/${program.name}.asm); truth from the shadow call stack`,
  });
  return captureVectors(result, program.description);
}

/** Runs a synthetic x86 program and returns one vector per capture label, named after it. */
export function x86CaptureVectors(spec: X86ProgramSpec): Promise<{ label: string; vector: Vector }[]> {
  return specCaptureVectors({ machine: "x86", spec });
}

/** Runs a synthetic x64 program and returns one vector per capture label. */
export function x64CaptureVectors(spec: X64ProgramSpec): Promise<{ label: string; vector: Vector }[]> {
  return specCaptureVectors({ machine: "x64", spec });
}

/** Vector files for every capture of every program: `<folder>/<program>.json`, or `<program>-<label>.json` when a program has several captures. */
async function captureFiles<S extends { name: string }>(
  folder: string,
  specs: readonly S[],
  run: (spec: S) => Promise<{ label: string; vector: Vector }[]>,
): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  for (const spec of specs) {
    const captures = await run(spec);
    for (const { label, vector } of captures) {
      const suffix = captures.length === 1 ? "" : `-${label.replace(/[^A-Za-z0-9_-]/g, "_")}`;
      files.push({ file: `${folder}/${spec.name}${suffix}.json`, text: formatVector(vector) });
    }
  }
  return files;
}

/** The synthetic x86 vectors (vectors/x86/synthetic). */
export function syntheticX86Files(): Promise<CorpusFile[]> {
  return captureFiles("vectors/x86/synthetic", X86_CORPUS_SPECS, x86CaptureVectors);
}

/** Runs a logging x86 program: one vector per capture label, each with the ETW events its logging call produced. */
export async function x86EtwVectors(spec: X86ProgramSpec): Promise<{ label: string; vector: Vector }[]> {
  const program = await buildX86Program(spec);
  const vectors = await etwCaptureVectors(spec);
  if (vectors.length !== program.captures.length) throw new Error(`${spec.name}: ${vectors.length} vectors for ${program.captures.length} capture labels`);
  return vectors.map((vector, i) => ({ label: program.captures[i]!, vector }));
}

/** The x86 vectors that carry ETW stacks (vectors/x86/etw). */
export function etwX86Files(): Promise<CorpusFile[]> {
  return captureFiles("vectors/x86/etw", X86_ETW_SPECS, x86EtwVectors);
}

/** The synthetic x64 vectors (vectors/x64/synthetic). */
export function syntheticX64Files(): Promise<CorpusFile[]> {
  return captureFiles("vectors/x64/synthetic", X64_CORPUS_SPECS, x64CaptureVectors);
}

/** Every generated file of the corpus. */
export async function corpusFiles(): Promise<CorpusFile[]> {
  return [...(await realProgramSweeps()), ...(await syntheticX86Files()), ...(await etwX86Files()), ...(await syntheticX64Files()), ...ia64CorpusFiles(), ...(await arm64CorpusFiles()), ...armCorpusFiles(), ...(await armProgramSweeps())];
}

/** Rewrites the corpus: every generated folder is emptied of .json files first, so nothing stale stays. */
export async function writeCorpus(root = REPO_ROOT): Promise<CorpusFile[]> {
  const files = await corpusFiles();
  for (const folder of GENERATED_FOLDERS) {
    const dir = join(root, folder);
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) if (name.endsWith(".json")) rmSync(join(dir, name));
  }
  for (const { file, text } of files) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const files = await writeCorpus();
  const bytes = files.reduce((n, f) => n + f.text.length, 0);
  process.stdout.write(`wrote ${files.length} files (${(bytes / 1e6).toFixed(2)} MB) in ${Math.round(performance.now() - started)} ms\n`);
}
