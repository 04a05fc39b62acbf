/**
 * The IA-64 walker's speed (issue 8: at least 1 million frames per second, one core, warm): the
 * model executor's recursion-1000 chain (1002 frames, every `recurse` frame found through its
 * unwind descriptors, rp and ar.pfs read from the backing store), walked with `--walker ia64`
 * after checking that the walk is exact.
 */
import { fileURLToPath } from "node:url";
import { compareWithTruth, UnwindCache, walkThread, type Snapshot } from "../../src/index.js";
import { bestRate } from "./bench-rate.js";
import { IA64_CORPUS } from "../../emulator/ia64/corpus.js";
import { runChain } from "../../emulator/ia64/executor.js";

/** Frames per second the IA-64 walker must reach on the 1000-deep chain. */
export const IA64_WALK_TARGET = 1_000_000;

/** The model executor's recursion-1000 chain: its snapshot (for the `ia64` walker). */
export function ia64BenchStack(): Snapshot {
  const chain = IA64_CORPUS.find((c) => c.name === "recursion-1000");
  if (chain === undefined) throw new Error("the corpus has no recursion-1000 chain");
  return runChain(chain).vector;
}

/**
 * Walks recursion-1000 with the `ia64` walker: frames per second, the best of the short batches
 * of `rounds` walks (about 5,000 frames each) of bench-rate.ts after 100 warm-up walks, one core.
 * Short batches, many of them: on a shared machine some batch runs undisturbed.
 */
export function benchIa64Walk(rounds = 5): { frames: number; perSecond: number } {
  const vector = ia64BenchStack();
  const thread = vector.threads[0]!;
  // Warm: the walks share what they learn (tables, rules).
  const options = { walker: "ia64" as const, cache: new UnwindCache() };
  const walk = walkThread(vector, thread, options);
  const c = compareWithTruth("ia64", walk, thread.truth!);
  if (!c.exact) throw new Error(`the bench stack does not walk exactly: ${c.difference?.text ?? ""}`);
  const once = (): number => walkThread(vector, thread, options).frames.length;
  return { frames: walk.frames.length, perSecond: bestRate(once, rounds, 100) };
}

/** Runs {@link benchIa64Walk} and prints its line (for `npm run bench`). */
export function printIa64Bench(): void {
  const r = benchIa64Walk();
  const verdict = r.perSecond >= IA64_WALK_TARGET ? "meets" : "BELOW";
  process.stdout.write(
    `ia64 unwind walk:               ${Math.round(r.perSecond).toLocaleString("en-US")} frames/s (${verdict} the ${IA64_WALK_TARGET.toLocaleString("en-US")} target), ${r.frames} frames\n`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printIa64Bench();
