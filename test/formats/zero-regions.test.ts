/**
 * A vector or sweep that declares a 256 MiB zero-filled region (`zeros`, the most one file may
 * declare) in a few hundred bytes (issue 33: such an input took seconds and hundreds of MB). A
 * zero-filled region is never copied or written whole: a sweep's regions are copied for its
 * replay page by page, leaving out pages that are all zero, and regions that touch are joined
 * the same way, so the system keeps those pages as zero pages that it does not count as memory
 * in use. The command runs in a child process that reports its own peak RSS; nothing is timed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { MAX_ZERO_BYTES } from "../../src/formats/vector.js";
import { RSS_HOOK } from "../bench/bench-dump.js";
import { zeroSweep, zeroVector } from "../support/hostile-inputs.js";

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const BIN = fileURLToPath(new URL("../../src/cli/stackwalk.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "sw-zeros-"));

/** Runs `stackwalk <args>` in a child; its exit status, output and peak RSS in MiB. */
function peakOf(args: string[]): { status: number | null; out: string; peakMib: number } {
  const r = spawnSync(process.execPath, ["--import", TSX, "--import", RSS_HOOK, BIN, ...args], { encoding: "utf8" });
  const marker = /@@maxrss (\d+)/.exec(r.stderr);
  if (marker === null) throw new Error(`no peak RSS from the child: ${r.stderr}`);
  return { status: r.status, out: r.stdout, peakMib: Number(marker[1]) / 1024 };
}

describe("a 256 MiB zero-filled region", () => {
  it("in a sweep, next to a stack page and written into at every step: replayed and checked without holding the region", () => {
    const file = join(dir, "zeros.sweep.json");
    writeFileSync(file, zeroSweep(50));
    const r = peakOf(["check", file]);
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/^50 passed, 0 failed$/m);
    expect(r.peakMib).toBeLessThan(MAX_ZERO_BYTES / 2 ** 20);
  });

  it("in a vector, holding its stack: walked by scanning, explained and viewed without holding the region", () => {
    const file = join(dir, "zeros.json");
    writeFileSync(file, zeroVector());
    for (const args of [["walk", file, "--walker", "scan"], ["explain", file], ["view", file, "-o", join(dir, "zeros.html")]]) {
      const r = peakOf(args);
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.peakMib, args.join(" ")).toBeLessThan(MAX_ZERO_BYTES / 2 ** 20);
    }
  });
});
