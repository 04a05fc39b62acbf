/**
 * Deep stacks, run by `npm run bench` (test/bench/bench.ts) or alone with `tsx test/bench/bench-deep.ts`:
 * deep-recursion (vectors/programs/c), real clang-14/lld-14 output, emulated to its break at the
 * bottom of the recursion and written with `--dmp`, then walked as a user walks a dump.
 *
 * 1. Generation, `stackwalk emulate deep-recursion.exe --break bottom --dmp` run by the package's
 *    bin in a child process (whole process time and peak RSS), for the x86-fpo build at 10,000
 *    and 100,000 levels (the same image with g_depth changed) and the x64 build at its 20,000;
 *    and the same steps in this process, timed apart: the emulation (with the shadow stack and
 *    the truth), the vector, the dump and the .sym. CPU time per frame at 10,000 and at 100,000 shows
 *    each step is linear.
 * 2. The walk, `stackwalk walk X.dmp --format breakpad` by the bin (its symbols from the .sym
 *    store beside the dump): whole process time (best of 5), peak RSS and frames per second,
 *    against the targets for the 100,000-frame x86 dump (1 s, 150 MB); and in this process the
 *    library's part alone: the walk, and the walk plus the report (warm, best of 5).
 * 3. Exactness: the walk of each dump, with the .sym, equals the emulator's truth frame for frame
 *    (the bench stops with an error otherwise).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { breakpadReport, compareWithTruth, parseVector, writeBreakpad, type Walk } from "../../src/index.js";
import { formatBreakpadSym, formatVector, symFileInput } from "../../src/entry/formats.js";
import { attachSymbolDirectories, besideInput, loadInput, writeMinidumpFile } from "../../src/node/index.js";
import { check, runChild } from "./bench-dump.js";
import { DEEP_RECURSION, deepRecursionLimit, REPO_ROOT, runDeepRecursion, writeDeepRecursion, type RealTarget } from "../../emulator/real-programs.js";

/** Targets for walking the 100,000-frame x86 dump with `stackwalk walk X.dmp --format breakpad`. */
export const DEEP_WALK_MS_TARGET = 1000;
export const DEEP_WALK_RSS_TARGET = 150 * 1024 * 1024;

/** The package's `stackwalk` bin (package.json), which is what a user runs. */
export function stackwalkBin(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { bin: Record<string, string> };
  return join(REPO_ROOT, pkg.bin["stackwalk"]!);
}

/** One deep stack: where it comes from and what making and walking it took. */
export interface DeepCase {
  target: RealTarget;
  depth: number;
  /** Frames of truth at the break: depth + 2. */
  frames: number;
  generation: { ms: number; maxRss: number; dumpBytes: number; vectorBytes: number };
  /** In-process steps of the generation: CPU milliseconds of this process (a shared machine's load changes wall time far more). */
  steps: { emulate: number; vector: number; dump: number; sym: number; instructions: number };
  walk: { ms: number; maxRss: number; frames: number; libraryWalkMs: number; libraryReportMs: number; exact: string };
}

/** The fewest milliseconds `run` took in `n` runs. */
export function fastest(n: number, run: () => void): number {
  let min = Infinity;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    run();
    min = Math.min(min, performance.now() - started);
  }
  return min;
}

/** What `run` returns, and the CPU milliseconds (user and system) this process spent on it. */
async function cpuTimed<T>(run: () => T | Promise<T>): Promise<{ value: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const value = await run();
  const used = process.cpuUsage(before);
  return { value, cpuMs: (used.user + used.system) / 1000 };
}

/** Makes and walks one deep dump (see the file comment); `dir` is a scratch directory. */
export async function benchDeepCase(target: RealTarget, depth: number, dir: string): Promise<DeepCase> {
  const exe = writeDeepRecursion(dir, target, depth);
  const out = join(dir, "out");
  const bin = stackwalkBin();
  const limit = String(deepRecursionLimit(depth));

  // 1. Generation by the CLI, then the same steps here, one by one.
  const generated = check(runChild([], [bin, "emulate", exe, "--break", DEEP_RECURSION.break, "--dmp", "-o", `${out}/`, "--max-instructions", limit]), `emulate ${target} ${depth}`);
  const files = readdirSync(out);
  const vectorFile = join(out, files.find((f) => f.endsWith(".json"))!);
  const dumpFile = join(out, files.find((f) => f.endsWith(".dmp"))!);
  const run = await cpuTimed(() => runDeepRecursion(exe, target, depth));
  const { result, vector } = run.value;
  const vectorText = await cpuTimed(() => formatVector(vector));
  const written = await cpuTimed(() => writeMinidumpFile(join(dir, "again.dmp"), vector));
  const sym = await cpuTimed(() => formatBreakpadSym(symFileInput(vector.modules[0]!, vector.machine, vector.memory)!));
  if (sym.value.length === 0 || written.value.size !== readFileSync(dumpFile).length) throw new Error(`${target} ${depth}: the dump written here differs in size from the CLI's`);

  // 2. The walk by the CLI (best of 5), and the library's part in this process.
  // The fastest of 5 runs, and the largest peak RSS of them.
  const walkRuns = Array.from({ length: 5 }, () => check(runChild([], [bin, "walk", dumpFile, "--format", "breakpad"]), `walk ${dumpFile}`));
  const walkMs = Math.min(...walkRuns.map((r) => r.ms));
  const walkRss = Math.max(...walkRuns.map((r) => r.maxRss));
  const printed = walkRuns[0]!.stdout.match(/\n {4}Found by: /g)?.length ?? 0;
  const input = loadInput(dumpFile);
  if (input.kind !== "dump") throw new Error(`${dumpFile} is not a dump`);
  attachSymbolDirectories(input.snapshot, [], besideInput(dumpFile));
  const { snapshot, dump } = input;
  // The library's part of what the command does: the walk (as a Breakpad report walks a thread,
  // through its own stack memory), then the walk and the report.
  const walk = (): Walk => breakpadReport(dump, snapshot).threads[0]!.walk;
  const libraryWalkMs = fastest(5, walk);
  const libraryReportMs = fastest(5, () => writeBreakpad(breakpadReport(dump, snapshot), () => {}));

  // 3. Exactness against the truth the CLI wrote beside the dump.
  const truth = parseVector(readFileSync(vectorFile, "utf8")).threads[0]!.truth!;
  const comparison = compareWithTruth(snapshot.machine, walk(), truth);
  if (!comparison.exact) throw new Error(`${dumpFile}: the walk is not exact: ${comparison.difference?.text ?? ""}`);
  if (printed !== truth.length) throw new Error(`${dumpFile}: stackwalk walk --format breakpad printed ${printed} frames, the truth has ${truth.length}`);

  return {
    target,
    depth,
    frames: truth.length,
    generation: { ms: generated.ms, maxRss: generated.maxRss, dumpBytes: written.value.size, vectorBytes: vectorText.value.length },
    steps: { emulate: run.cpuMs, vector: vectorText.cpuMs, dump: written.cpuMs, sym: sym.cpuMs, instructions: result.instructions ?? 0 },
    walk: { ms: walkMs, maxRss: walkRss, frames: printed, libraryWalkMs, libraryReportMs, exact: `exact (${comparison.walkedFrames.toLocaleString("en-US")} frames)` },
  };
}

/** The cases: x86-fpo at 10,000 and 100,000 levels, x64 at 20,000. */
export async function benchDeep(): Promise<DeepCase[]> {
  const cases: DeepCase[] = [];
  for (const [target, depth] of [["x86-fpo", 10_000], ["x86-fpo", DEEP_RECURSION.targets["x86-fpo"].depth], ["x64", DEEP_RECURSION.targets.x64.depth]] as const) {
    const dir = mkdtempSync(join(tmpdir(), "bench-deep-"));
    try {
      cases.push(await benchDeepCase(target, depth, dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return cases;
}

const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
const ms = (n: number): string => `${Math.round(n).toLocaleString("en-US")} ms`;
const us = (n: number, frames: number): string => `${((n * 1000) / frames).toFixed(2)} µs`;
const rate = (frames: number, milliseconds: number): string => `${Math.round(frames / (milliseconds / 1000)).toLocaleString("en-US")} frames/s`;

/** The bench lines. */
export function formatDeepBench(cases: readonly DeepCase[]): string {
  const lines: string[] = [];
  for (const c of cases) {
    const name = `${c.target} ${c.frames.toLocaleString("en-US")} frames`;
    const g = c.generation;
    const s = c.steps;
    lines.push(
      `deep ${name}, emulate --dmp:`.padEnd(40) +
        `${ms(g.ms)} (process), peak RSS ${mb(g.maxRss)}; dump ${mb(g.dumpBytes)}, vector ${mb(g.vectorBytes)}`,
      `  steps in-process, CPU per frame:`.padEnd(40) +
        `emulate ${us(s.emulate, c.frames)} (${s.instructions.toLocaleString("en-US")} instructions), vector ${us(s.vector, c.frames)}, dump ${us(s.dump, c.frames)}, .sym ${ms(s.sym)}`,
    );
    const w = c.walk;
    const verdict = c.target === "x86-fpo" && c.depth === DEEP_RECURSION.targets["x86-fpo"].depth
      ? ` (${w.ms <= DEEP_WALK_MS_TARGET ? "within" : "OVER"} the 1 s target; RSS ${w.maxRss <= DEEP_WALK_RSS_TARGET ? "within" : "OVER"} the 150 MB target)`
      : "";
    lines.push(
      `  walk --format breakpad (process):`.padEnd(40) + `${ms(w.ms)}, peak RSS ${mb(w.maxRss)}, ${rate(w.frames, w.ms)}${verdict}`,
      `  walk in-process (library only):`.padEnd(40) + `walk ${ms(w.libraryWalkMs)} (${rate(c.frames, w.libraryWalkMs)}), walk + Breakpad report ${ms(w.libraryReportMs)}`,
      `  against the emulator's truth:`.padEnd(40) + w.exact,
    );
  }
  const small = cases.find((c) => c.target === "x86-fpo" && c.depth === 10_000);
  const large = cases.find((c) => c.target === "x86-fpo" && c.depth === DEEP_RECURSION.targets["x86-fpo"].depth);
  if (small !== undefined && large !== undefined) {
    const ratio = (f: (c: DeepCase) => number): string => ((f(large) / large.frames) / (f(small) / small.frames)).toFixed(2);
    lines.push(
      `deep x86 linearity, per-frame cost at ${large.frames.toLocaleString("en-US")} / at ${small.frames.toLocaleString("en-US")} frames: ` +
        `emulate ${ratio((c) => c.steps.emulate)}, vector ${ratio((c) => c.steps.vector)}, dump ${ratio((c) => c.steps.dump)}, ` +
        `whole emulate --dmp process ${ratio((c) => c.generation.ms)} (1.00 is linear, 10 would be quadratic; the process includes start-up)`,
    );
  }
  return lines.join("\n") + "\n";
}

/** Runs and prints the deep-stack benchmarks (called from test/bench/bench.ts). */
export async function printDeepBench(): Promise<void> {
  process.stdout.write(formatDeepBench(await benchDeep()));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await printDeepBench();
