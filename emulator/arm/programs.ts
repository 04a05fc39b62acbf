/**
 * The sweeps of the real C programs built for 32-bit ARM (vectors/programs/c compiled by clang-16
 * for thumbv7-pc-windows-msvc at -O2; the images are test/fixtures/arm-clang, rebuilt
 * byte-identically by its build.sh): every program run on the emulated ARM CPU (Unicorn, Thumb
 * state) from its entry point to its return, with a snapshot before every instruction and the
 * truth from the shadow call stack (bl/blx and returns). Each run must end with the checksum the
 * programs' README gives (the same on every target) in R0 and the instruction count recorded
 * here, so a sweep is only written for a run that did what the native code does.
 *
 * `noreturn-longjmp` and `deep-recursion` are not built for ARM.
 *
 * `npx tsx emulator/arm/programs.ts --write` rewrites the committed sweeps under vectors/arm/c;
 * the corpus test checks they equal a fresh run.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatSweep } from "../../src/entry/formats.js";
import { EXPECTED, REPO_ROOT, sweepProvenance, writeGenerated } from "../real-programs.js";
import { runImageFile, type RunResult } from "../run.js";

/** The programs built for ARM, in the order of their README. */
export const ARM_PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved"] as const;
/** One of {@link ARM_PROGRAMS}. */
export type ArmProgram = (typeof ARM_PROGRAMS)[number];

/** Where the ARM programs' sweeps are committed. */
export const ARM_C_FOLDER = "vectors/arm/c";

/** Instructions of a whole run, the final `bx lr` included, per program. */
export const ARM_INSTRUCTIONS: Readonly<Record<ArmProgram, number>> = {
  "recursion-callbacks": 580,
  "big-frames-varargs": 414,
  "aligned-callee-saved": 322,
};

/** The image of `program`, relative to the repository root. */
export function armProgramImage(program: ArmProgram): string {
  return `test/fixtures/arm-clang/${program}.exe`;
}

/** One program run. */
export interface ArmProgramRun {
  program: ArmProgram;
  /** Where its sweep is committed, relative to the repository root. */
  file: string;
  result: RunResult;
}

/**
 * Runs one program as `stackwalk emulate <image> --sweep` does and checks its checksum (R0) and
 * instruction count; throws when either differs.
 */
export async function runArmProgram(program: ArmProgram): Promise<ArmProgramRun> {
  const image = armProgramImage(program);
  const result = await runImageFile(join(REPO_ROOT, image), { sweep: true, provenance: sweepProvenance(image) });
  const r0 = Number(result.registers["r0"]! & 0xffff_ffffn);
  const checksum = EXPECTED[program].checksum;
  if (r0 !== checksum) throw new Error(`${image}: R0 is 0x${r0.toString(16)} at the end, expected the checksum 0x${checksum.toString(16)}`);
  const instructions = ARM_INSTRUCTIONS[program];
  if (result.instructions !== instructions) throw new Error(`${image}: ran ${String(result.instructions)} instructions, expected ${instructions}`);
  return { program, file: `${ARM_C_FOLDER}/${program}.sweep.json`, result };
}

/** Every ARM program, run and checked. */
export async function runArmPrograms(): Promise<ArmProgramRun[]> {
  const runs: ArmProgramRun[] = [];
  for (const program of ARM_PROGRAMS) runs.push(await runArmProgram(program));
  return runs;
}

/** The ARM program sweep files as they should be committed. */
export async function armProgramSweeps(): Promise<{ file: string; text: string }[]> {
  return (await runArmPrograms()).map((r) => ({ file: r.file, text: formatSweep(r.result.sweep) }));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) await writeGenerated(armProgramSweeps);
