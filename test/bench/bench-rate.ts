/** How the benchmarks time a walker: frames per second, warm, the best of several batches. */

/** Frames per second the walkers must reach on a 10,000-frame stack (one core, warm). */
export const WALK_TARGET = 2_000_000;

/** Timed batches per measurement. */
const BATCHES = 80;

/**
 * Frames per second of `walk` (which returns the frames it produced): after `warmups` untimed
 * walks, the best of {@link BATCHES} batches of `rounds` walks, so that other work on the machine
 * does not decide the number.
 */
export function bestRate(walk: () => number, rounds: number, warmups = 0): number {
  for (let r = 0; r < warmups; r++) walk();
  let best = 0;
  for (let batch = 0; batch < BATCHES; batch++) {
    let frames = 0;
    const started = performance.now();
    for (let r = 0; r < rounds; r++) frames += walk();
    best = Math.max(best, frames / ((performance.now() - started) / 1000));
  }
  return best;
}

/** `N frames/s (meets|BELOW the target)` for a bench line. */
export function rateText(perSecond: number, target = WALK_TARGET): string {
  return `${Math.round(perSecond).toLocaleString("en-US")} frames/s (${perSecond >= target ? "meets" : "BELOW"} the ${target.toLocaleString("en-US")} target)`;
}
