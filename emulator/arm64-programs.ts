/**
 * The sweeps of the real C programs built for ARM64 (vectors/programs/c, targets `arm64` and
 * `arm64-fp`): every program run on the emulated AArch64 CPU from its entry point to its return,
 * with a snapshot before every instruction and the truth from the shadow call stack (bl/blr and
 * ret). Each run must end with the checksum the programs' README gives (the same on every
 * target) and the instruction count recorded here, so a sweep is only written for a run that did
 * what the native code does.
 *
 * `noreturn-longjmp` is not built for ARM64 (clang 14 has no `__builtin_setjmp` there).
 * The synthetic ARM64 chains (emulator/programs/arm64-corpus.ts) are swept the same way into
 * vectors/arm64/synthetic.
 *
 * `npx tsx emulator/arm64-programs.ts --write` rewrites the committed sweeps under
 * vectors/arm64/c, vectors/arm64/c-fp and vectors/arm64/synthetic; the corpus test checks they
 * equal a fresh run.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatSweep, formatVector } from "../src/entry/formats.js";
import { buildArm64Program, type Arm64ProgramSpec } from "./programs/arm64-chain.js";
import { ARM64_CORPUS_SPECS } from "./programs/arm64-corpus.js";
import { EXPECTED, REPO_ROOT, sweepProvenance, writeGenerated } from "./real-programs.js";
import { runImage, runImageFile, vectorsOf, type RunResult } from "./run.js";

/** The programs built for ARM64, in the order of their README. */
export const ARM64_PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved"] as const;
/** One of {@link ARM64_PROGRAMS}. */
export type Arm64Program = (typeof ARM64_PROGRAMS)[number];

/** The ARM64 builds, each with the folder its sweeps go to. */
export const ARM64_TARGETS = [
  { target: "arm64", folder: "vectors/arm64/c" },
  { target: "arm64-fp", folder: "vectors/arm64/c-fp" },
] as const;
/** One ARM64 build of the programs. */
export type Arm64Target = (typeof ARM64_TARGETS)[number]["target"];

/** Instructions of a whole run, the final `ret` included, per program and build. */
export const ARM64_INSTRUCTIONS: Readonly<Record<Arm64Program, Readonly<Record<Arm64Target, number>>>> = {
  "recursion-callbacks": { arm64: 638, "arm64-fp": 683 },
  "big-frames-varargs": { arm64: 433, "arm64-fp": 446 },
  "aligned-callee-saved": { arm64: 316, "arm64-fp": 324 },
};

/** One program run of one ARM64 build. */
export interface Arm64ProgramRun {
  program: Arm64Program;
  target: Arm64Target;
  /** Where its sweep is committed, relative to the repository root. */
  file: string;
  result: RunResult;
}

/** The image of `program` built for `target`, relative to the repository root. */
export function arm64ProgramImage(program: Arm64Program, target: Arm64Target): string {
  return `vectors/programs/c/build/${target}/${program}.exe`;
}

/**
 * Runs one program as `stackwalk emulate <image> --sweep` does and checks its checksum (W0, the
 * low half of X0) and instruction count; throws when either differs.
 */
export async function runArm64Program(program: Arm64Program, target: Arm64Target): Promise<Arm64ProgramRun> {
  const image = arm64ProgramImage(program, target);
  const result = await runImageFile(join(REPO_ROOT, image), { sweep: true, provenance: sweepProvenance(image) });
  const w0 = Number(result.registers["x0"]! & 0xffff_ffffn);
  const checksum = EXPECTED[program].checksum;
  if (w0 !== checksum) throw new Error(`${image}: W0 is 0x${w0.toString(16)} at the end, expected the checksum 0x${checksum.toString(16)}`);
  const instructions = ARM64_INSTRUCTIONS[program][target];
  if (result.instructions !== instructions) throw new Error(`${image}: ran ${String(result.instructions)} instructions, expected ${instructions}`);
  const folder = ARM64_TARGETS.find((t) => t.target === target)!.folder;
  return { program, target, file: `${folder}/${program}.sweep.json`, result };
}

/** Every ARM64 program of every ARM64 build, run and checked. */
export async function runArm64Programs(): Promise<Arm64ProgramRun[]> {
  const runs: Arm64ProgramRun[] = [];
  for (const { target } of ARM64_TARGETS) for (const program of ARM64_PROGRAMS) runs.push(await runArm64Program(program, target));
  return runs;
}

/** The ARM64 sweep files as they should be committed. */
export async function arm64ProgramSweeps(): Promise<{ file: string; text: string }[]> {
  return (await runArm64Programs()).map((r) => ({ file: r.file, text: formatSweep(r.result.sweep) }));
}

/** Runs a synthetic ARM64 program: a snapshot before every instruction, or at its capture labels when it names some. */
export async function runArm64Synthetic(spec: Arm64ProgramSpec): Promise<RunResult> {
  const program = await buildArm64Program(spec);
  const captures = spec.captures;
  return runImage(
    { name: `${program.name}.exe`, image: program.image, symbols: program.symbols },
    {
      ...(captures === undefined ? { sweep: true } : { breaks: captures }),
      labels: program.labels,
      interruptHandlers: program.interruptHandlers.map((address) => ({ address, errorCode: false })),
      description: captures === undefined ? `${program.description}: a snapshot before every instruction` : `${program.description}: at ${captures.join(", ")}`,
      provenance: `emulator: synthetic ARM64 program ${program.name} (emulator/programs/arm64-corpus.ts); truth from the shadow call stack`,
    },
  );
}

/**
 * The synthetic ARM64 files (vectors/arm64/synthetic): a sweep of a swept program, one vector
 * per capture (`<program>-<label>.json`) of one that names captures.
 */
export async function arm64SyntheticSweeps(): Promise<{ file: string; text: string }[]> {
  const files: { file: string; text: string }[] = [];
  for (const spec of ARM64_CORPUS_SPECS) {
    const result = await runArm64Synthetic(spec);
    if (spec.captures === undefined) {
      files.push({ file: `vectors/arm64/synthetic/${spec.name}.sweep.json`, text: formatSweep(result.sweep) });
      continue;
    }
    vectorsOf(result).forEach((vector, i) => {
      const label = result.sweep.steps[i]!.label!;
      vector.description = `${spec.description} (at ${label})`;
      files.push({ file: `vectors/arm64/synthetic/${spec.name}-${label}.json`, text: formatVector(vector) });
    });
  }
  return files;
}

/** Every ARM64 file of the corpus. */
export async function arm64CorpusFiles(): Promise<{ file: string; text: string }[]> {
  return [...(await arm64ProgramSweeps()), ...(await arm64SyntheticSweeps())];
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) await writeGenerated(arm64CorpusFiles);
