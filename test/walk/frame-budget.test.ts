/**
 * The frame budget shared by the walks of one snapshot, on a hostile dump whose threads all list
 * one deep EBP chain: the walks stop with `frame-budget` once it is spent, each later thread
 * keeping its context frame; the command line's --frame-budget sets it. Explanations (explain,
 * view, render) share a smaller one.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { DEFAULT_FRAME_BUDGET, walkSnapshot } from "../../src/walk/walk.js";
import { EXPLAIN_FRAME_BUDGET, explainThreads } from "../../src/analysis/explain-walk.js";
import { craftedDump } from "../support/crafted-dump.js";
import { parseWalkJson } from "../support/walk-schema.js";

const snapshotOf = (bytes: Uint8Array) => minidumpSnapshot(readMinidump(bytesSource(bytes)));

describe("the frame budget of a snapshot's walks", () => {
  it("is spent thread by thread: the walk that reaches it stops there, the later ones after their context frame", () => {
    const walks = walkSnapshot(snapshotOf(craftedDump({ threads: 6, depth: 1000 })), { frameBudget: 2500 });
    expect(walks.map((w) => [w.thread.id, w.walk.frames.length, w.walk.stop.reason])).toEqual([
      [1000, 1001, "end-of-stack"],
      [1001, 1001, "end-of-stack"],
      [1002, 498, "frame-budget"],
      [1003, 1, "frame-budget"],
      [1004, 1, "frame-budget"],
      [1005, 1, "frame-budget"],
    ]);
    expect(walks[2]!.walk.stop.detail).toBe("the walks of this snapshot reached their shared budget of 2500 frames");
    // No budget: every thread walked whole.
    const all = walkSnapshot(snapshotOf(craftedDump({ threads: 6, depth: 1000 })), { frameBudget: Infinity });
    expect(all.every((w) => w.walk.frames.length === 1001 && w.walk.stop.reason === "end-of-stack")).toBe(true);
  });

  it("defaults to 2^18 frames: a dump of under 1 MB listing one 100,000-deep chain three times walks two of them whole", () => {
    expect(DEFAULT_FRAME_BUDGET).toBe(262_144);
    const bytes = craftedDump({ threads: 3, depth: 100_000 });
    expect(bytes.length).toBeLessThan(1 << 20);
    const walks = walkSnapshot(snapshotOf(bytes));
    expect(walks.map((w) => [w.walk.frames.length, w.walk.stop.reason])).toEqual([
      [100_001, "end-of-stack"],
      [100_001, "end-of-stack"],
      [262_144 - 200_002, "frame-budget"],
    ]);
  });

  it("walk --frame-budget N sets it, and the JSON says why each thread stopped; a budget below 1 is a usage error", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "sw-budget-")), "hostile.dmp");
    writeFileSync(file, craftedDump({ threads: 4, depth: 300 }));
    let out = "";
    let err = "";
    const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
    expect(await run(["walk", file, "--frame-budget", "500", "--format", "json"], io)).toBe(0);
    const doc = parseWalkJson(out);
    expect(doc.threads.map((t: { frames: unknown[]; stop: { reason: string } }) => [t.frames.length, t.stop.reason])).toEqual([
      [301, "end-of-stack"],
      [199, "frame-budget"],
      [1, "frame-budget"],
      [1, "frame-budget"],
    ]);
    expect(await run(["walk", file, "--frame-budget", "0"], io)).toBe(2);
    expect(err).toBe('stackwalk walk: --frame-budget takes a whole number ≥ 1, not "0"\n');
  });

  it("explain, view and render share one of their own, 2^14 frames: a hundred threads listing one 120,000-deep chain are explained in 16,384 frames, not twelve million (they took the process past 4 GB)", async () => {
    expect(EXPLAIN_FRAME_BUDGET).toBe(16_384);
    const bytes = craftedDump({ threads: 100, depth: 120_000 });
    const explained = [...explainThreads(snapshotOf(bytes))];
    expect(explained).toHaveLength(100);
    expect(explained.reduce((n, e) => n + e.frames.length, 0)).toBe(16_384 + 99);
    expect(explained.map((e) => e.stop.reason).every((r) => r === "frame-budget")).toBe(true);
    expect(explained.slice(1).every((e) => e.frames.length === 1)).toBe(true);
    // --frame-budget moves it; the explanation of each thread says why it stopped.
    const file = join(mkdtempSync(join(tmpdir(), "sw-budget-")), "hostile.dmp");
    writeFileSync(file, craftedDump({ threads: 3, depth: 300 }));
    let out = "";
    const io = { out: (t: string) => void (out += t), err: () => undefined };
    expect(await run(["explain", file, "--frame-budget", "400"], io)).toBe(0);
    expect(out.match(/^stop: .*$/gm)).toEqual([
      "stop: The walk reached the outermost frame (end-of-stack: EBP is 0: the frame chain ends here, and no return address was found above ESP).",
      "stop: The walk stopped: the snapshot's walks had used up their shared frame budget (frame-budget: the walks of this snapshot reached their shared budget of 400 frames).",
      "stop: The walk stopped: the snapshot's walks had used up their shared frame budget (frame-budget: the walks of this snapshot reached their shared budget of 400 frames).",
    ]);
  });
});
