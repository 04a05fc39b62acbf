/**
 * The short fuzz run (`npm run fuzz`, about 20,000 inputs over every target) as part of the test
 * suite: no input may end in a foreign error, a hang or a memory blow-up, and every typed error
 * must name its place. A hang is an input past 1 s of its child's CPU time, and past 2 s when it is
 * run again in a fresh child (fuzz.ts), so a loaded machine slows the run without failing it; the run itself may take 20 minutes before it counts
 * as stuck (about 60 s on the shared two-core machine: the `server` target's inputs wait on
 * their sockets).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { TARGETS } from "./targets.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

interface Counts {
  ok: number;
  typed: number;
  foreign: number;
  hang: number;
  memory: number;
  placeless: number;
}

describe("npm run fuzz", () => {
  it("20,000 mutated inputs over every target: no foreign error, hang or memory blow-up, and every typed error names its place", () => {
    const json = join(mkdtempSync(join(tmpdir(), "sw-fuzz-")), "fuzz.json");
    const r = spawnSync(process.execPath, ["--import", TSX, "test/fuzz/fuzz.ts", "--quiet", "--json", json], { cwd: ROOT, encoding: "utf8", timeout: 1_200_000 });
    process.stdout.write(r.stdout);
    const doc = JSON.parse(readFileSync(json, "utf8")) as { total: Counts; targets: Record<string, Counts> };
    expect(Object.keys(doc.targets).sort()).toEqual(TARGETS.map((t) => t.name).sort());
    const { ok, typed, foreign, hang, memory, placeless } = doc.total;
    expect(ok + typed + foreign + hang + memory).toBe(20_000);
    expect({ foreign, hang, memory, placeless }).toEqual({ foreign: 0, hang: 0, memory: 0, placeless: 0 });
    for (const [name, c] of Object.entries(doc.targets)) expect(c.ok + c.typed, name).toBeGreaterThan(1000);
    expect(r.status).toBe(0);
  }, 1_260_000);
});
