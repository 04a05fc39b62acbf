/**
 * The sweeps of the real C programs (vectors/programs/c): every program of every target run
 * on the emulated CPU from its entry point to its return, with a snapshot before every
 * instruction. Each run must end with the checksum and instruction count the programs'
 * README gives, so a sweep is only written for a run that did what the native code does.
 *
 * `npx tsx emulator/real-programs.ts --write` rewrites the committed sweeps under
 * vectors/x86/c-fpo, vectors/x86/c-fp and vectors/x64/c; a test checks they equal a fresh run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatSweep } from "../src/formats/sweep.js";
import { runImageFile, type RunResult } from "./run.js";

/** The programs, in the order of their README. */
export const REAL_PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved", "noreturn-longjmp"] as const;
/** One of {@link REAL_PROGRAMS}. */
export type RealProgram = (typeof REAL_PROGRAMS)[number];

/** The builds, each with the folder its sweeps go to. */
export const REAL_TARGETS = [
  { target: "x86-fpo", folder: "vectors/x86/c-fpo" },
  { target: "x86-fp", folder: "vectors/x86/c-fp" },
  { target: "x64", folder: "vectors/x64/c" },
] as const;
/** One build of the programs. */
export type RealTarget = (typeof REAL_TARGETS)[number]["target"];

/** What each program must end with (vectors/programs/c/README.md): EAX and the instructions per target. */
export const EXPECTED: Readonly<Record<RealProgram, { checksum: number; instructions: Readonly<Record<RealTarget, number>> }>> = {
  "recursion-callbacks": { checksum: 0x02410e65, instructions: { "x86-fpo": 725, "x86-fp": 926, x64: 702 } },
  "big-frames-varargs": { checksum: 0x00bccc42, instructions: { "x86-fpo": 568, "x86-fp": 608, x64: 455 } },
  "aligned-callee-saved": { checksum: 0x0000300a, instructions: { "x86-fpo": 432, "x86-fp": 485, x64: 355 } },
  "noreturn-longjmp": { checksum: 0xffffe954, instructions: { "x86-fpo": 207, "x86-fp": 235, x64: 295 } },
};

/** The repository root (this file lives in emulator/). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The image of `program` built for `target`, relative to the repository root. */
export function realProgramImage(program: RealProgram, target: RealTarget): string {
  return `vectors/programs/c/build/${target}/${program}.exe`;
}

/** One program run of one target. */
export interface RealProgramRun {
  program: RealProgram;
  target: RealTarget;
  /** Where its sweep is committed, relative to the repository root. */
  file: string;
  result: RunResult;
}

/**
 * Runs one program as `stackwalk emulate <image> --sweep` does and checks its checksum and
 * instruction count; throws when either differs from the README.
 */
export async function runRealProgram(program: RealProgram, target: RealTarget): Promise<RealProgramRun> {
  const image = realProgramImage(program, target);
  const result = await runImageFile(join(REPO_ROOT, image), { sweep: true, provenance: sweepProvenance(image) });
  const expected = EXPECTED[program];
  const eax = Number((result.registers["eax"] ?? result.registers["rax"]!) & 0xffff_ffffn);
  if (eax !== expected.checksum) {
    throw new Error(`${image}: EAX is 0x${eax.toString(16)} at the end, expected the checksum 0x${expected.checksum.toString(16)}`);
  }
  if (result.instructions !== expected.instructions[target]) {
    throw new Error(`${image}: ran ${String(result.instructions)} instructions, expected ${expected.instructions[target]}`);
  }
  const folder = REAL_TARGETS.find((t) => t.target === target)!.folder;
  return { program, target, file: `${folder}/${program}.sweep.json`, result };
}

/** The provenance line of a sweep made by `stackwalk emulate <image> --sweep`. */
export function sweepProvenance(image: string): string {
  return `emulator: stackwalk emulate ${image} --sweep (Unicorn 2; truth from the shadow call stack)`;
}

/** Every real program of every target, run and checked, in README order per target. */
export async function runRealPrograms(): Promise<RealProgramRun[]> {
  const runs: RealProgramRun[] = [];
  for (const { target } of REAL_TARGETS) for (const program of REAL_PROGRAMS) runs.push(await runRealProgram(program, target));
  return runs;
}

/** The sweep files as they should be committed: paths relative to the repository root, and their text. */
export async function realProgramSweeps(): Promise<{ file: string; text: string }[]> {
  return (await runRealPrograms()).map((r) => ({ file: r.file, text: formatSweep(r.result.sweep) }));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) {
  const started = performance.now();
  for (const { file, text } of await realProgramSweeps()) {
    const path = join(REPO_ROOT, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    process.stdout.write(`wrote ${file} (${text.length} bytes)\n`);
  }
  process.stdout.write(`regenerated in ${Math.round(performance.now() - started)} ms\n`);
}
