/** Every snapshot of a vector folder, for tests that check walkers against the emulator's truth. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseJsonInput } from "../../src/formats/input.js";
import { replaySweep } from "../../src/formats/sweep.js";
import type { Vector } from "../../src/formats/vector.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import type { WalkerName } from "../../src/walk/registry.js";
import { walkThread } from "../../src/walk/walk.js";

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

/** How one walker fares against the truth over every snapshot of a folder. */
export interface TruthRate {
  exact: number;
  total: number;
  files: Set<string>;
  /** The first snapshot walked wrongly, with the difference. */
  firstMiss?: string;
}

/** Walks every snapshot with truth under `folder` with `walker` and counts the exact walks. */
export function truthRate(folder: string, walker: WalkerName): TruthRate {
  const r: TruthRate = { exact: 0, total: 0, files: new Set() };
  for (const { file, vector } of snapshots(folder)) {
    r.files.add(file);
    for (const thread of vector.threads) {
      if (thread.truth === undefined) continue;
      r.total++;
      const c = compareWithTruth(vector.machine, walkThread(vector, thread, { walker }), thread.truth);
      if (c.exact) r.exact++;
      else r.firstMiss ??= `${file}${vector.step === undefined ? "" : ` step ${vector.step}`}: ${c.difference?.text ?? ""}`;
    }
  }
  return r;
}

/** A rate as a percentage with one decimal. */
export const ratePercent = (r: TruthRate): string => `${((100 * r.exact) / r.total).toFixed(1)}%`;
