/** Every snapshot of a vector folder, for tests that check walkers against the emulator's truth. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseJsonInput } from "../../src/formats/input.js";
import { replaySweep } from "../../src/formats/sweep.js";
import type { Vector } from "../../src/formats/vector.js";

/** The repository root. */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** The `.json` files below `dir`, sorted, directories recursed into. */
export function jsonFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? jsonFiles(path) : name.endsWith(".json") ? [path] : [];
    });
}

/**
 * Every snapshot under a folder of the repository (sweeps replayed step by step), with the file
 * it came from. A sweep's snapshots share one memory: use each before asking for the next.
 */
export function* snapshots(folder: string): Generator<{ file: string; vector: Vector & { step?: number } }> {
  for (const file of jsonFiles(join(ROOT, folder))) {
    const input = parseJsonInput(readFileSync(file, "utf8"), file);
    if (input.kind === "vector") yield { file, vector: input.vector };
    else for (const v of replaySweep(input.sweep)) yield { file, vector: v };
  }
}
