/**
 * Many dumps at once, run by `npm run bench` (after `npm run build`) or alone with
 * `tsx test/bench/bench-batch.ts`: 1,000 minidumps written by the compiled bin's `stackwalk emulate
 * --sweep --dmp` (500 snapshots of a real clang x86 FPO program, 500 of the same program built
 * for x64, evenly spaced over their runs, with the .sym store the emulator writes beside them),
 * walked
 *
 * 1. in one call, `stackwalk walk DIR --format jsonl` on worker threads (`--jobs`, the core
 *    count) and on one thread (`--jobs 1`), timed whole;
 * 2. one call per dump, `stackwalk walk X.dmp --format json`, over every tenth dump, timed whole
 *    and counted per dump;
 *
 * and the per-dump cost of each. Every JSON Lines record's crashed thread is compared with the
 * emulator's truth for its snapshot (frame PCs and stack pointers).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSweep, replaySweep } from "../../src/entry/formats.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "dist/bin/stackwalk.cjs");
const PROGRAMS = [
  { name: "x86", exe: "vectors/programs/c/build/x86-fpo/recursion-callbacks.exe" },
  { name: "x64", exe: "vectors/programs/c/build/x64/recursion-callbacks.exe" },
];
const PER_PROGRAM = 500;

function bin(args: readonly string[]): { ms: number; stdout: string; stderr: string; status: number | null } {
  const started = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  return { ms: performance.now() - started, stdout: r.stdout, stderr: r.stderr, status: r.status };
}

/** The measured figures. */
export interface BatchBench {
  dumps: number;
  jobs: number;
  /** One call on `jobs` workers, and on one thread, in ms. */
  parallelMs: number;
  serialMs: number;
  /** One call per dump: ms per dump, over `sampled` calls. */
  perCallMs: number;
  sampled: number;
  /** Records whose crashed thread equals the emulator's truth. */
  exact: number;
  errors: number;
}

/**
 * Writes the 1,000 dumps into `dir` (with the .sym store beside them) through scratch folders of
 * `dir`'s parent; their names, sorted, and each one's truth (frame PCs and stack pointers).
 */
export function writeBatchDumps(dir: string): { dumps: string[]; truth: Map<string, { pc: bigint; sp: bigint }[]> } {
  const work = mkdtempSync(join(tmpdir(), "bench-batch-emulate-"));
  try {
    const truth = new Map<string, { pc: bigint; sp: bigint }[]>();
    for (const p of PROGRAMS) {
      const scratch = join(work, p.name);
      mkdirSync(scratch);
      const sweepFile = join(scratch, `${p.name}.sweep.json`);
      const r = bin(["emulate", join(ROOT, p.exe), "--sweep", "--dmp", "-o", sweepFile]);
      if (r.status !== 0) throw new Error(`emulate ${p.exe}: ${r.stderr}`);
      const steps = [...replaySweep(parseSweep(readFileSync(sweepFile, "utf8"), sweepFile))];
      const chosen = Array.from({ length: PER_PROGRAM }, (_, i) => steps[Math.floor((i * steps.length) / PER_PROGRAM)]!);
      for (const v of chosen) {
        const name = `${p.name}.${v.step}.dmp`;
        renameSync(join(scratch, name), join(dir, name));
        truth.set(name, v.threads[0]!.truth!.map((t) => ({ pc: t.pc, sp: t.sp })));
      }
      // The symbol store the emulator wrote beside its dumps goes with them.
      for (const entry of readdirSync(scratch)) if (entry.endsWith(".pdb")) cpSync(join(scratch, entry), join(dir, entry), { recursive: true });
    }
    return { dumps: readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort(), truth };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Writes the dumps, walks them both ways and checks the records against the truth. */
export function benchBatch(): BatchBench {
  const work = mkdtempSync(join(tmpdir(), "bench-batch-"));
  try {
    const dir = join(work, "dumps");
    mkdirSync(dir);
    const { dumps, truth } = writeBatchDumps(dir);
    const jobs = availableParallelism();
    const parallel = bin(["walk", dir, "--symbols", dir, "--format", "jsonl", "--jobs", String(jobs)]);
    const serial = bin(["walk", dir, "--symbols", dir, "--format", "jsonl", "--jobs", "1"]);
    if (parallel.stdout !== serial.stdout) throw new Error("the walks on workers and on one thread differ");
    let exact = 0;
    let errors = 0;
    for (const line of parallel.stdout.split("\n").filter((l) => l !== "")) {
      const record = JSON.parse(line) as { file: string; error?: string; threads?: { crashed: boolean; frames: { addrPC: string; addrStack: string }[] }[] };
      if (record.error !== undefined) {
        errors++;
        continue;
      }
      const expected = truth.get(record.file.slice(dir.length + 1))!;
      const frames = (record.threads!.find((t) => t.crashed) ?? record.threads![0]!).frames;
      if (frames.length === expected.length && frames.every((f, i) => BigInt(f.addrPC) === expected[i]!.pc && BigInt(f.addrStack) === expected[i]!.sp)) exact++;
    }
    const sample = dumps.filter((_, i) => i % 10 === 0);
    const started = performance.now();
    for (const d of sample) {
      const r = bin(["walk", join(dir, d), "--symbols", dir, "--format", "json"]);
      if (r.status !== 0) throw new Error(`walk ${d}: ${r.stderr}`);
    }
    const perCallMs = (performance.now() - started) / sample.length;
    return { dumps: dumps.length, jobs, parallelMs: parallel.ms, serialMs: serial.ms, perCallMs, sampled: sample.length, exact, errors };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The bench lines. */
export function formatBatchBench(b: BatchBench): string {
  const per = (ms: number): string => `${(ms / b.dumps).toFixed(2)} ms/dump`;
  return [
    `batch walk, ${b.dumps} emulator dumps (x86 FPO + x64, .sym store), jsonl:`,
    `  one call, --jobs ${b.jobs}:            ${(b.parallelMs / 1000).toFixed(2)} s, ${per(b.parallelMs)}`,
    `  one call, --jobs 1:            ${(b.serialMs / 1000).toFixed(2)} s, ${per(b.serialMs)}`,
    `  one call per dump:             ${b.perCallMs.toFixed(1)} ms/dump (${b.sampled} calls timed; ${((b.perCallMs * b.dumps) / 1000).toFixed(1)} s for all ${b.dumps}), ${(b.perCallMs / (b.parallelMs / b.dumps)).toFixed(1)}x the one-call cost`,
    `  records exact vs the emulator's truth: ${b.exact}/${b.dumps}, ${b.errors} errors`,
  ].join("\n") + "\n";
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(formatBatchBench(benchBatch()));
