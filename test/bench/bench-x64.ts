/**
 * The x64 table-based walker's speed (issue 6: at least 2 million frames per second, one core,
 * warm): a real emulated stack of `depth` + 2 frames, recursion-1000's shape made deeper (every
 * `recurse` frame is `push rbx; sub rsp, 0x20`, found through its RUNTIME_FUNCTION), walked with
 * `--walker unwind` after checking that the walk is exact.
 */
import { fileURLToPath } from "node:url";
import { compareWithTruth, UnwindCache, walkThread, type Snapshot } from "../../src/index.js";
import { replaySweep } from "../../src/entry/formats.js";
import { bestRate, rateText } from "./bench-rate.js";
import { buildSpec, runBuiltProgram } from "../../emulator/programs/program-file.js";
import type { X64ProgramSpec } from "../../emulator/programs/x64-chain.js";
import { RECURSION_1000 } from "../../emulator/programs/x64-corpus.js";

/** Builds and runs a recursion `depth` calls deep: its snapshot (for the `unwind` walker). */
export async function x64BenchStack(depth = 10_000): Promise<Snapshot> {
  const spec: X64ProgramSpec = {
    ...RECURSION_1000,
    name: "recursion-bench",
    functions: RECURSION_1000.functions.map((f) => (f.recursion === undefined ? f : { ...f, recursion: depth })),
  };
  const program = await buildSpec({ machine: "x64", spec });
  const result = await runBuiltProgram(program, { breaks: program.captures, maxInstructions: 20 * depth + 1_000_000 });
  const vector = replaySweep(result.sweep).next().value;
  if (vector === undefined) throw new Error("the bench program took no snapshot");
  return vector;
}

/**
 * Walks the stack of {@link x64BenchStack} with the `unwind` walker: frames per second, the best
 * of several batches (bench-rate.ts) of `rounds` walks after `4 × rounds` warm-up walks (one core).
 */
export async function benchX64UnwindWalk(depth = 10_000, rounds = 10): Promise<{ frames: number; perSecond: number }> {
  const vector = await x64BenchStack(depth);
  const thread = vector.threads[0]!;
  // Warm: the walks share what they learn (tables, rules, return addresses).
  const options = { walker: "unwind" as const, cache: new UnwindCache() };
  const walk = walkThread(vector, thread, options);
  const c = compareWithTruth("x64", walk, thread.truth!);
  if (!c.exact) throw new Error(`the bench stack does not walk exactly: ${c.difference?.text ?? ""}`);
  if (walk.frames.length < depth) throw new Error(`the bench stack has ${walk.frames.length} frames, fewer than ${depth}`);
  // Warm: the walker's code optimised and its per-address rules cached before anything is timed.
  return { frames: walk.frames.length, perSecond: bestRate(() => walkThread(vector, thread, options).frames.length, rounds, 4 * rounds) };
}

/** Runs {@link benchX64UnwindWalk} and prints its line (for `npm run bench`). */
export async function printX64Bench(): Promise<void> {
  const r = await benchX64UnwindWalk();
  process.stdout.write(`x64 unwind walk:                ${rateText(r.perSecond)}, ${r.frames} frames\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await printX64Bench();
