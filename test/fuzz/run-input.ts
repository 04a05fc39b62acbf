/**
 * One input, run and classified: ok, a typed error (InputError, a usage error, the command
 * line's exit 2), or a foreign error (anything else: a TypeError, a RangeError, the command
 * line's exit 3). A typed error must also name its place: a byte offset that lies inside the
 * input (or at its end), a JSON path, or a line; one that does not is "placeless".
 */
import { InputError } from "../../src/errors.js";
import { UsageError } from "../../src/cli/io.js";
import { makeInput } from "./mutate.js";
import { Rng } from "./rng.js";
import { withMeter } from "./meter.js";
import { ForeignFromCli, TargetsByName, TypedFromCli, type RunContext, type Seed, type Target } from "./targets.js";

/** How an input ended. Hangs and memory blow-ups are seen from outside (fuzz.ts). */
export type Outcome = "ok" | "typed" | "foreign" | "hang" | "memory";

/** The result of one input. */
export interface Result {
  outcome: Outcome;
  /** A typed error without a place inside the input. */
  placeless?: boolean;
  /** The error's message (first line) and, for a foreign one, where it was thrown. */
  message?: string;
  stack?: string;
  ms: number;
}

/** Seeds per target, made once per process. */
const seedCache = new Map<string, Seed[]>();

export function seedsOf(target: Target): Seed[] {
  let seeds = seedCache.get(target.name);
  if (seeds === undefined) {
    seeds = target.seeds();
    if (seeds.length === 0) throw new Error(`target ${target.name} has no seeds (are test/fixtures and vectors/ in the checkout?)`);
    seedCache.set(target.name, seeds);
  }
  return seeds;
}

/** The seed of an iteration: iterations go round the seeds in order. */
export function seedFor(target: Target, iteration: number): Seed {
  const seeds = seedsOf(target);
  return seeds[iteration % seeds.length]!;
}

/** The bytes of (target, seed, iteration); `name` is the seed's name as the key gives it. */
export function inputOf(target: Target, seed: Seed, iteration: number, name = seed.name): { bytes: Uint8Array; rng: Rng } {
  const rng = Rng.of(target.name, name, iteration);
  const others = seedsOf(target).filter((s) => s !== seed).map((s) => s.bytes);
  const bytes = makeInput(seed.bytes, others, target.structure, rng, Math.floor(iteration / seedsOf(target).length));
  return { bytes, rng };
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** Whether a typed error names a place inside `length` bytes of input. */
function placed(e: InputError, length: number): boolean {
  if (e.message.includes("\n")) return false;
  if (e.path !== undefined) return true;
  if (e.offset !== undefined) return e.offset >= 0 && e.offset <= length;
  return /\bline \d+/.test(e.reason);
}

/** Runs `bytes` through `target` and classifies the outcome. */
export async function runInput(target: Target, seed: Seed, bytes: Uint8Array, rng: Rng, context: RunContext): Promise<Result> {
  const started = performance.now();
  try {
    await withMeter(context.meter, async () => void (await target.run(bytes, seed, rng, context)));
    return { outcome: "ok", ms: performance.now() - started };
  } catch (e) {
    const ms = performance.now() - started;
    if (e instanceof InputError) {
      const result: Result = { outcome: "typed", message: firstLine(e.message), ms };
      if (!placed(e, bytes.length)) result.placeless = true;
      return result;
    }
    if (e instanceof UsageError) return { outcome: "typed", message: firstLine(e.message), ms };
    if (e instanceof TypedFromCli) {
      const result: Result = { outcome: "typed", message: firstLine(e.message), ms };
      if (e.message.trim().split("\n").length > 1 && !/^(note|symbols|warning|images):/m.test(e.message)) result.placeless = true;
      return result;
    }
    const error = e instanceof Error ? e : new Error(String(e));
    const where = (error.stack ?? "").split("\n").filter((l) => l.trim().startsWith("at ")).slice(0, 6).join("\n");
    return { outcome: "foreign", message: `${e instanceof ForeignFromCli ? "" : `${error.name}: `}${firstLine(error.message)}`, stack: where, ms };
  }
}

export { TargetsByName };
