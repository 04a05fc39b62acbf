/**
 * The ARM64 table-based walker's speed (at least 2 million frames per second, one core, warm): a
 * real emulated stack of `depth` + 3 frames, a recursion whose every `recurse` frame is the packed
 * canonical prolog `stp x19, x20, [sp, #-16]!; stp x29, lr, [sp, #-16]!; mov x29, sp` (Flag 1,
 * CR 3, RegI 2, 32 bytes), found through its `.pdata` word, walked with `--walker unwind` after
 * checking that the walk is exact against the shadow stack's truth.
 */
import { fileURLToPath } from "node:url";
import { compareWithTruth, UnwindCache, walkThread, type Snapshot } from "../../src/index.js";
import { replaySweep } from "../../src/entry/formats.js";
import { bestRate, rateText } from "./bench-rate.js";
import { buildArm64Program, type Arm64ProgramSpec } from "../../emulator/programs/arm64-chain.js";
import { runImage } from "../../emulator/run.js";

/** entry → recurse × (depth + 1) → bottom; the snapshot is taken at `bottom`. */
export function arm64RecursionSpec(depth: number): Arm64ProgramSpec {
  return {
    name: "arm64-recursion",
    description: `ARM64 recursion ${depth} calls deep`,
    functions: [
      {
        name: "entry",
        lines: ["stp x29, x30, [sp, #-16]!", "mov x29, sp", `ldr x0, =${depth}`, "bl recurse", "ldp x29, x30, [sp], #16", "ret"],
        unwind: { kind: "packed", cr: 3, frameSize: 16 },
      },
      {
        name: "recurse",
        lines: [
          "stp x19, x20, [sp, #-16]!",
          "stp x29, x30, [sp, #-16]!",
          "mov x29, sp",
          "mov x19, x0",
          "cbz x0, recurse_base",
          "sub x0, x0, #1",
          "bl recurse",
          "b recurse_out",
          "recurse_base:",
          "bl bottom",
          "recurse_out:",
          "add x0, x0, x19",
          "ldp x29, x30, [sp], #16",
          "ldp x19, x20, [sp], #16",
          "ret",
        ],
        unwind: { kind: "packed", cr: 3, regI: 2, frameSize: 32 },
      },
      { name: "bottom", lines: ["mov x0, #1", "ret"], unwind: { kind: "none" } },
    ],
  };
}

/** Builds and runs the recursion `depth` calls deep: its snapshot at `bottom` (for the `unwind` walker). */
export async function arm64BenchStack(depth = 10_000): Promise<Snapshot> {
  const program = await buildArm64Program(arm64RecursionSpec(depth));
  const result = await runImage({ name: "arm64-recursion.exe", image: program.image, symbols: program.symbols }, { breaks: ["bottom"], labels: program.labels, maxInstructions: 20 * depth + 1_000 });
  const vector = replaySweep(result.sweep).next().value;
  if (vector === undefined) throw new Error("the bench program took no snapshot");
  return vector;
}

/**
 * Walks the stack of {@link arm64BenchStack} with the `unwind` walker: frames per second, the best
 * of several batches (bench-rate.ts) of `rounds` walks after `4 × rounds` warm-up walks (one core).
 */
export async function benchArm64UnwindWalk(depth = 10_000, rounds = 10): Promise<{ frames: number; perSecond: number }> {
  const vector = await arm64BenchStack(depth);
  const thread = vector.threads[0]!;
  const options = { walker: "unwind" as const, cache: new UnwindCache() };
  const walk = walkThread(vector, thread, options);
  const c = compareWithTruth("arm64", walk, thread.truth!);
  if (!c.exact) throw new Error(`the bench stack does not walk exactly: ${c.difference?.text ?? ""}`);
  if (walk.frames.length < depth) throw new Error(`the bench stack has ${walk.frames.length} frames, fewer than ${depth}`);
  return { frames: walk.frames.length, perSecond: bestRate(() => walkThread(vector, thread, options).frames.length, rounds, 4 * rounds) };
}

/** Runs {@link benchArm64UnwindWalk} and prints its line (for `npm run bench`). */
export async function printArm64Bench(): Promise<void> {
  const r = await benchArm64UnwindWalk();
  process.stdout.write(`arm64 unwind walk:              ${rateText(r.perSecond)}, ${r.frames} frames\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await printArm64Bench();
