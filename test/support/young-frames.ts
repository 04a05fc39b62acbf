/**
 * Whether the frames of deep walks stay in V8's young generation, run as a child process
 * (test/walk/young-frames.test.ts): `node --allow-natives-syntax --min-semi-space-size=1
 * --max-semi-space-size=1 --import tsx young-frames.ts`. Each machine's bench stack is walked
 * again and again with its bench walker while the last walks are kept — at least
 * {@link KEPT_FRAMES} frames alive, so that nearly everything a walk makes outlives the
 * scavenges of a 1 MiB young generation, as in a deep walk held by its caller. V8 then moves any
 * object literal's allocation site that makes those frames to the old generation (pretenuring),
 * and the newest frame's registers are no longer young. Prints one JSON line: per stack, whether
 * the newest frame's registers and row were made in the young generation.
 */
import { UnwindCache, walkThread, type Snapshot, type Walk } from "../../src/index.js";
import type { WalkerName } from "../../src/walk/registry.js";
import { armRecursionSnapshot } from "../../emulator/arm/corpus.js";
import { framePointerBenchStack, fpoBenchStacks } from "../bench/bench.js";
import { arm64BenchStack } from "../bench/bench-arm64.js";
import { ia64BenchStack } from "../bench/bench-ia64.js";
import { x64BenchStack } from "../bench/bench-x64.js";

/** Frames the kept walks hold together. */
export const KEPT_FRAMES = 60_000;
/** Walks of each stack after the kept ones are full. */
const ROUNDS = 40;

/** V8's own test of where an object is (needs --allow-natives-syntax). */
const inYoungGeneration = new Function("o", "return %InYoungGeneration(o)") as (o: object) => boolean;

/** The bench stacks and their walkers. */
async function stacks(): Promise<{ name: string; snapshot: Snapshot; walker: WalkerName }[]> {
  const fpo = await fpoBenchStacks(2_000);
  const x86 = framePointerBenchStack(10_000);
  const x64 = await x64BenchStack(10_000);
  const arm64 = await arm64BenchStack(10_000);
  const arm = armRecursionSnapshot(10_000);
  return [
    { name: "x86 frame-pointer", snapshot: x86, walker: "frame-pointer" },
    { name: "x86 breakpad", snapshot: x86, walker: "breakpad" },
    { name: "x86 FPO_DATA", snapshot: fpo.fpo, walker: "fpo" },
    { name: "x86 FrameData", snapshot: fpo.frameData, walker: "fpo" },
    { name: "x86 scan", snapshot: fpo.fpo, walker: "scan" },
    { name: "x64 unwind", snapshot: x64, walker: "unwind" },
    { name: "x64 scan", snapshot: x64, walker: "scan" },
    { name: "arm64 unwind", snapshot: arm64, walker: "unwind" },
    { name: "arm64 frame-pointer", snapshot: arm64, walker: "frame-pointer" },
    { name: "arm64 scan", snapshot: arm64, walker: "scan" },
    { name: "arm unwind", snapshot: arm, walker: "unwind" },
    { name: "arm scan", snapshot: arm, walker: "scan" },
    { name: "ia64 unwind", snapshot: ia64BenchStack(), walker: "ia64" },
  ];
}

/** Walks one stack as described above: whether its newest frame's registers and row are young. */
function probe(snapshot: Snapshot, walker: WalkerName): { frames: number; registers: boolean; row: boolean } {
  const thread = snapshot.threads[0]!;
  const options = { walker, cache: new UnwindCache() };
  const kept: Walk[] = [];
  let held = 0;
  let last = walkThread(snapshot, thread, options);
  for (let round = 0; round < ROUNDS || held < KEPT_FRAMES; round++) {
    last = walkThread(snapshot, thread, options);
    kept.push(last);
    held += last.frames.length;
    while (held - kept[0]!.frames.length >= KEPT_FRAMES) held -= kept.shift()!.frames.length;
  }
  const newest = last.frames[last.frames.length - 1]!;
  return { frames: last.frames.length, registers: inYoungGeneration(newest.unwindRegisters ?? {}), row: inYoungGeneration(newest) };
}

const out: Record<string, { frames: number; registers: boolean; row: boolean }> = {};
for (const s of await stacks()) out[s.name] = probe(s.snapshot, s.walker);
process.stdout.write(`${JSON.stringify(out)}\n`);
