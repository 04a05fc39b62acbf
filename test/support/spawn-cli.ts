/** The `stackwalk` command run from its TypeScript sources through tsx's loader, for tests that start it as a process. */
import { spawnSync, type SpawnSyncOptionsWithStringEncoding, type SpawnSyncReturns } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const BIN = fileURLToPath(new URL("../../src/cli/stackwalk.ts", import.meta.url));

/** Runs `stackwalk <args>` in a new Node process (any working directory). */
export function spawnStackwalk(args: readonly string[], options: Omit<SpawnSyncOptionsWithStringEncoding, "encoding"> = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ["--import", TSX, BIN, ...args], { ...options, encoding: "utf8" });
}
