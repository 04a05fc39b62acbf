/**
 * The work budget beside the frame budget, and the postfix limits of symbol files (issue 33): a
 * `.sym` whose STACK CFI rule is 10,000 tokens long made each frame cost milliseconds for
 * 262,144 frames. The rule is now left out when the file is attached (a note names the limit),
 * and a rule within the limits that is still costly ends the walks with `work-budget` once their
 * shared budget is spent. The tests count the work (unwind/work.ts), never time it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { breakpadEvaluate } from "../../src/arch/x86/breakpad.js";
import { parseProgram } from "../../src/formats/frame-data.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { MAX_POSTFIX_DEPTH, MAX_POSTFIX_TOKENS } from "../../src/formats/postfix-limits.js";
import { attachSymbolFile, parseSymbolFile } from "../../src/formats/symbol-file.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { work } from "../../src/unwind/work.js";
import { DEFAULT_WORK_BUDGET, walkSnapshot, walkThread } from "../../src/walk/walk.js";
import { cfaOf, cfiDump, cfiSym } from "../support/hostile-inputs.js";
import { parseWalkJson } from "../support/walk-schema.js";

function withSym(bytes: Uint8Array, tokens: number): { snapshot: Snapshot; warnings: string[] } {
  const snapshot = minidumpSnapshot(readMinidump(bytesSource(bytes)));
  const attached = attachSymbolFile(snapshot, parseSymbolFile(new TextEncoder().encode(cfiSym(tokens)), { name: "app.sym", skipMalformed: true }));
  return { snapshot, warnings: attached.flatMap((a) => a.warnings) };
}

/** The work units `f` spends. */
function counted<T>(f: () => T): { value: T; units: number } {
  const before = work.units;
  const value = f();
  return { value, units: work.units - before };
}

describe("the postfix limits of symbol files", () => {
  it("the issue's finding: a STACK CFI rule of 10,000 tokens is left out when attached, with a note naming the limit, and the walk does little work", () => {
    expect(cfaOf(9_999).split(" ")).toHaveLength(9_999);
    const { snapshot, warnings } = withSym(cfiDump(4000), 9_999);
    expect(warnings).toEqual([`app.sym: postfix limits: 1 STACK CFI record(s) left out (first: STACK CFI INIT 1000: an expression of more than ${MAX_POSTFIX_TOKENS} tokens)`]);
    expect(snapshot.modules[0]!.unwind!.stackCfi).toEqual([]);
    const { value: walk, units } = counted(() => walkThread(snapshot, snapshot.threads[0]!, { walker: "breakpad" }));
    // Without the rule, each frame is a scan of a word or two: no 10,000-token evaluation.
    expect(walk.frames.length).toBeGreaterThan(1);
    expect(units).toBeLessThan(walk.frames.length * 64);
  });

  it("a rule within the limits is kept; the limits count tokens (a glued '=' is two) and the stack's depth", () => {
    const { snapshot, warnings } = withSym(cfiDump(10), MAX_POSTFIX_TOKENS - 1);
    expect(warnings).toEqual([]);
    expect(snapshot.modules[0]!.unwind!.stackCfi).toHaveLength(1);
    const deep = `${"1 ".repeat(MAX_POSTFIX_DEPTH + 1)}${"+ ".repeat(MAX_POSTFIX_DEPTH)}`;
    const program = parseProgram(`$T0 ${deep}=`);
    expect(program.ok).toBe(false);
    expect(!program.ok && program.error.reason).toBe(`the program is an expression that stacks more than ${MAX_POSTFIX_DEPTH} values (the postfix limits)`);
    const long = parseProgram(`$eip ${"=$eip 1 ".repeat(200)}`);
    expect(!long.ok && long.error.reason).toBe(`the program is an expression of more than ${MAX_POSTFIX_TOKENS} tokens (the postfix limits)`);
    expect(parseProgram("$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =").ok).toBe(true);
    // Breakpad's own evaluator (the breakpad walker's STACK WIN) fails such programs too.
    const none = new RegionMemory([]);
    expect(breakpadEvaluate(`$T0 ${deep}=`, new Map(), new Set(), none)).toBe(false);
    expect(breakpadEvaluate(`$eip ${"=$eip 1 ".repeat(200)}`, new Map(), new Set(), none)).toBe(false);
    expect(breakpadEvaluate(`$T0 ${"1 ".repeat(MAX_POSTFIX_DEPTH - 1)}${"+ ".repeat(MAX_POSTFIX_DEPTH - 2)}=`, new Map(), new Set(), none)).toBe(true);
  });

  it("a STACK WIN program of 20,000 tokens (past the limits) under Breakpad's walker: split into tokens once per walk, not once per frame (found by npm run fuzz: 2,000 frames took 3 s)", () => {
    const program = `$T0 .raSearch =${" $T0 $T0 0 + =".repeat(4000)} $eip $T0 ^ = $esp $T0 4 + =`;
    const text = ["MODULE windows x86 000000011111222233334444555566661 app.pdb", "FUNC 1000 100 0 recurse", `STACK WIN 4 1000 100 4 0 0 0 0 0 1 ${program}`, ""].join("\n");
    const snapshot = minidumpSnapshot(readMinidump(bytesSource(cfiDump(2000))));
    attachSymbolFile(snapshot, parseSymbolFile(new TextEncoder().encode(text), { name: "app.sym" }));
    // Count the splits of the program text: String.prototype.split is what tokenizing costs.
    const split = String.prototype.split;
    let splits = 0;
    String.prototype.split = function (this: string, ...args: Parameters<typeof split>) {
      if (this === program) splits++;
      return split.apply(this, args);
    } as typeof split;
    try {
      const walk = walkThread(snapshot, snapshot.threads[0]!, { walker: "breakpad" });
      // The program fails (it passes the limits), so each frame is found by Breakpad's scan.
      expect(walk.frames.length).toBeGreaterThan(1000);
      expect(walk.frames[1]!.trust).toBe("scan");
    } finally {
      String.prototype.split = split;
    }
    expect(splits).toBe(1);
  });
});

describe("the work budget of a snapshot's walks", () => {
  it("a costly rule within the limits: the walk stops with work-budget once the budget is spent, the later threads after their context frame", () => {
    const { snapshot } = withSym(cfiDump(20_000, 3), 501);
    const budget = 1_000_000;
    const { value: walks, units } = counted(() => walkSnapshot(snapshot, { walker: "breakpad", workBudget: budget }));
    expect(walks.map((w) => w.walk.stop.reason)).toEqual(["work-budget", "work-budget", "work-budget"]);
    expect(walks[0]!.walk.stop.detail).toBe("the walks of this snapshot reached their shared work budget of 1000000 units (rules evaluated, stack words scanned, instructions decoded)");
    // Each frame evaluates 501 + 4 tokens: about 1,980 frames, then nothing more.
    const frames = walks[0]!.walk.frames.length;
    expect(frames).toBeGreaterThan(budget / 600);
    expect(frames).toBeLessThan(budget / 500 + 2);
    expect(walks.slice(1).map((w) => w.walk.frames.length)).toEqual([1, 1]);
    expect(units).toBeGreaterThanOrEqual(budget);
    expect(units).toBeLessThan(budget + 1000);
    // The same walk without a work budget goes to the end of the stack.
    const whole = walkThread(snapshot, snapshot.threads[0]!, { walker: "breakpad" });
    expect(whole.frames.length).toBe(20_001);
  });

  it("scanned words count too: the same dump without symbols, walked by scanning, stops with work-budget", () => {
    const snapshot = minidumpSnapshot(readMinidump(bytesSource(cfiDump(5000))));
    const { value: walks, units } = counted(() => walkSnapshot(snapshot, { walker: "scan", workBudget: 2000 }));
    expect(walks[0]!.walk.stop.reason).toBe("work-budget");
    // One word scanned per frame here: the budget ends the walk after 2,000 of its 5,000 frames.
    expect(walks[0]!.walk.frames.length).toBeLessThanOrEqual(2001);
    expect(units).toBeGreaterThanOrEqual(2000);
    expect(units).toBeLessThan(2000 + 100);
  });

  it("defaults to 2^26 units", () => {
    expect(DEFAULT_WORK_BUDGET).toBe(67_108_864);
  });

  it("walk --work-budget N sets it, and the JSON says why each thread stopped; a budget below 1 is a usage error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-work-"));
    const file = join(dir, "app.dmp");
    const bytes = cfiDump(3000, 2);
    writeFileSync(file, bytes);
    const snapshot = minidumpSnapshot(readMinidump(bytesSource(bytes)));
    const m = snapshot.modules[0]!;
    const symDir = join(dir, "symbols", "app.pdb", m.debugId!);
    const { mkdirSync } = await import("node:fs");
    mkdirSync(symDir, { recursive: true });
    writeFileSync(join(symDir, "app.sym"), cfiSym(101));
    let out = "";
    let err = "";
    const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
    expect(await run(["walk", file, "--symbols", join(dir, "symbols"), "--work-budget", "50000", "--format", "json"], io)).toBe(0);
    const doc = parseWalkJson(out);
    const stops = doc.threads.map((t: { frames: unknown[]; stop: { reason: string } }) => [t.frames.length > 1, t.stop.reason]);
    expect(stops).toEqual([
      [true, "work-budget"],
      [false, "work-budget"],
    ]);
    expect(await run(["walk", file, "--work-budget", "0"], io)).toBe(2);
    expect(err).toContain('stackwalk walk: --work-budget takes a whole number ≥ 1, not "0"\n');
  });
});
