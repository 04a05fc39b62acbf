import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Every file under `dir`, relative to it, sorted ([] when `dir` does not exist): what a test checks nothing outside a cache was written with. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}
