/**
 * The sweeps of the real C programs (vectors/programs/c): every program of every target run
 * on the emulated CPU from its entry point to its return, with a snapshot before every
 * instruction. Each run must end with the checksum and instruction count the programs'
 * README gives, so a sweep is only written for a run that did what the native code does.
 *
 * `npx tsx emulator/real-programs.ts --write` rewrites the committed sweeps under
 * vectors/x86/c-fpo, vectors/x86/c-fp and vectors/x64/c; a test checks they equal a fresh run.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Vector } from "../src/index.js";
import { formatSweep, parsePe } from "../src/entry/formats.js";
import { pdbPathFor } from "./symbols.js";
import { runImageFile, vectorsOf, type RunResult } from "./run.js";

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
export function realProgramImage(program: RealProgram | typeof DEEP_RECURSION.program, target: RealTarget): string {
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

/**
 * deep-recursion (vectors/programs/c): not swept, as it runs millions of instructions, but run
 * to its break at `bottom`, where the stack holds the whole recursion: `bottom`, one `descend`
 * per level and `entry`. Its depth is the initial value of `g_depth`, the first word of .data;
 * {@link deepRecursionImage} makes the same image with another depth.
 */
export const DEEP_RECURSION = {
  program: "deep-recursion",
  break: "bottom",
  /** RVA of g_depth in every build (the PDB's S_LDATA32 g_depth at 0003:0000). */
  depthRva: 0x3000,
  /** Per build: the depth it was compiled with, the instructions of a whole run, SizeOfStackReserve. */
  targets: {
    "x86-fpo": { depth: 100_000, instructions: 4_800_020, stackReserve: 0x100_0000 },
    "x86-fp": { depth: 100_000, instructions: 5_100_026, stackReserve: 0x100_0000 },
    x64: { depth: 20_000, instructions: 880_016, stackReserve: 0x20_0000 },
  } satisfies Record<RealTarget, { depth: number; instructions: number; stackReserve: number }>,
  /** EAX at the end by depth, the same for every build (the C code compiled natively agrees). */
  checksums: { 1_000: 0x5e835a9d, 10_000: 0x38ce0349, 20_000: 0x0db266af, 100_000: 0x269d93b1 } as Readonly<Record<number, number>>,
} as const;

/**
 * The deep-recursion image of `target` recursing `depth` levels: the committed image with
 * g_depth's initial value replaced (the code, the unwind data and the PDB stay valid). Throws
 * when g_depth does not hold the depth the build was compiled with, i.e. the image changed.
 */
export function deepRecursionImage(target: RealTarget, depth: number = DEEP_RECURSION.targets[target].depth): Uint8Array {
  const image = realProgramImage("deep-recursion", target);
  const bytes = new Uint8Array(readFileSync(join(REPO_ROOT, image)));
  const data = parsePe(bytes).sections.find((s) => DEEP_RECURSION.depthRva >= s.virtualAddress && DEEP_RECURSION.depthRva + 4 <= s.virtualAddress + s.rawSize);
  if (data === undefined) throw new Error(`${image}: no section holds g_depth at RVA 0x${DEEP_RECURSION.depthRva.toString(16)}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset + data.rawOffset + DEEP_RECURSION.depthRva - data.virtualAddress, 4);
  const built = DEEP_RECURSION.targets[target].depth;
  if (view.getUint32(0, true) !== built) throw new Error(`${image}: g_depth at RVA 0x${DEEP_RECURSION.depthRva.toString(16)} is ${view.getUint32(0, true)}, not ${built}`);
  if (!Number.isInteger(depth) || depth < 1 || depth > built) throw new RangeError(`depth must be a whole number from 1 to ${built}, not ${depth}`);
  view.setUint32(0, depth, true);
  return bytes;
}

/** Writes {@link deepRecursionImage} and the build's PDB to `dir`, as `deep-recursion.exe`/`.pdb`; returns the image's path. */
export function writeDeepRecursion(dir: string, target: RealTarget, depth?: number): string {
  const path = join(dir, "deep-recursion.exe");
  writeFileSync(path, deepRecursionImage(target, depth));
  copyFileSync(pdbPathFor(join(REPO_ROOT, realProgramImage("deep-recursion", target))), pdbPathFor(path));
  return path;
}

/** The instruction limit a run of deep-recursion `depth` levels deep needs: 60 a level is more than any build takes. */
export function deepRecursionLimit(depth: number): number {
  return 60 * depth + 1000;
}

/**
 * Runs deep-recursion's image at `path` (built for `target`, recursing `depth` levels) as
 * `stackwalk emulate <path> --break bottom` does, and checks the run: the checksum, the
 * instruction count (for the depth it was built with) and the truth at the break (`depth` + 2
 * frames). Returns the run and the break's vector.
 */
export async function runDeepRecursion(path: string, target: RealTarget, depth: number): Promise<{ result: RunResult; vector: Vector }> {
  const result = await runImageFile(path, { breaks: [DEEP_RECURSION.break], maxInstructions: deepRecursionLimit(depth) });
  const eax = Number((result.registers["eax"] ?? result.registers["rax"]!) & 0xffff_ffffn);
  const checksum = DEEP_RECURSION.checksums[depth];
  const name = basename(path);
  if (checksum !== undefined && eax !== checksum) throw new Error(`${name}: EAX is 0x${eax.toString(16)} at the end, expected the checksum 0x${checksum.toString(16)}`);
  const expected = DEEP_RECURSION.targets[target];
  if (depth === expected.depth && result.instructions !== expected.instructions) {
    throw new Error(`${name}: ran ${String(result.instructions)} instructions, expected ${expected.instructions}`);
  }
  const vectors = vectorsOf(result);
  const frames = vectors[0]?.threads[0]?.truth?.length;
  if (vectors.length !== 1 || frames !== depth + 2) throw new Error(`${name}: ${vectors.length} break(s) at bottom with ${String(frames)} frames of truth, expected one with ${depth + 2}`);
  return { result, vector: vectors[0]! };
}

/**
 * Writes generated files under the repository root, one line each, and how long making them took:
 * the `--write` mode of the corpus scripts (`npx tsx emulator/real-programs.ts --write`, ...).
 */
export async function writeGenerated(make: () => Promise<{ file: string; text: string }[]>): Promise<void> {
  const started = performance.now();
  for (const { file, text } of await make()) {
    const path = join(REPO_ROOT, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    process.stdout.write(`wrote ${file} (${text.length} bytes)\n`);
  }
  process.stdout.write(`regenerated in ${Math.round(performance.now() - started)} ms\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) await writeGenerated(realProgramSweeps);
