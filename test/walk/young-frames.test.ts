/**
 * The frames of a deep walk are made in V8's young generation, on every machine and walker the
 * benches time: a walker that made a caller's registers with an object literal had that literal's
 * allocation site moved to the old generation (pretenured) once a deep walk kept most of what it
 * made, and every later frame paid a write barrier per value and a share of full collections —
 * the ARM walk ran at 3.0 instead of 5 million frames per second (model/snapshot.ts `Registers`).
 * What is counted is where V8 put the newest frame, in a child process with a young generation
 * of 1 MiB (test/support/young-frames.ts); nothing is timed. Each machine's register sets made as
 * literals fail this test.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const PROBE = fileURLToPath(new URL("../support/young-frames.ts", import.meta.url));

describe("deep walks keep their frames in the young generation", () => {
  it("every bench stack's newest frame: its registers and its row", () => {
    const r = spawnSync(process.execPath, ["--allow-natives-syntax", "--min-semi-space-size=1", "--max-semi-space-size=1", "--import", TSX, PROBE], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const found = JSON.parse(r.stdout) as Record<string, { frames: number; registers: boolean; row: boolean }>;
    expect(Object.keys(found)).toHaveLength(13);
    for (const [name, f] of Object.entries(found)) {
      expect(f.frames, name).toBeGreaterThanOrEqual(1_000);
      expect({ name, registers: f.registers, row: f.row }).toEqual({ name, registers: true, row: true });
    }
  }, 120_000);
});
