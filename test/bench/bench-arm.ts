/**
 * The ARM table-based walker's speed (at least {@link ARM_WALK_TARGET} frames per second, one
 * core, warm): a recursion `depth` calls deep whose every `recurse` frame is the packed canonical prolog
 * `push {r4, r5, lr}; sub sp, sp, #8` (Flag 1, Reg 1, L, Stack Adjust 2), found through its
 * `.pdata` word, walked with `--walker unwind` after checking that the walk is exact against the
 * model's truth (emulator/arm/corpus.ts).
 */
import { fileURLToPath } from "node:url";
import { compareWithTruth, UnwindCache, walkThread } from "../../src/index.js";
import { bestRate, rateText } from "./bench-rate.js";
import { armRecursionSnapshot } from "../../emulator/arm/corpus.js";

/** Frames per second the ARM unwind walk must reach. */
export const ARM_WALK_TARGET = 4_000_000;

/** Walks the recursion's stack: frames per second, the best of several batches of `rounds` walks after `4 × rounds` warm-up walks. */
export function benchArmUnwindWalk(depth = 10_000, rounds = 10): { frames: number; perSecond: number } {
  const snapshot = armRecursionSnapshot(depth);
  const thread = snapshot.threads[0]!;
  const options = { walker: "unwind" as const, cache: new UnwindCache(), maxFrames: depth + 100 };
  const walk = walkThread(snapshot, thread, options);
  const c = compareWithTruth("arm", walk, thread.truth!);
  if (!c.exact) throw new Error(`the bench stack does not walk exactly: ${c.difference?.text ?? ""}`);
  if (walk.frames.length < depth) throw new Error(`the bench stack has ${walk.frames.length} frames, fewer than ${depth}`);
  return { frames: walk.frames.length, perSecond: bestRate(() => walkThread(snapshot, thread, options).frames.length, rounds, 4 * rounds) };
}

/** Runs {@link benchArmUnwindWalk} and prints its line (for `npm run bench`). */
export function printArmBench(): void {
  const r = benchArmUnwindWalk();
  process.stdout.write(`arm unwind walk:                ${rateText(r.perSecond, ARM_WALK_TARGET)}, ${r.frames} frames\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printArmBench();
