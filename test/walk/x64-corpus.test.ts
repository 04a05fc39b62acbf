/**
 * The x64 walkers against the emulator's ground truth, over every x64 vector and every snapshot
 * of every sweep in vectors/x64: the synthetic programs (every unwind op, the epilog forms,
 * chained info, machine frames, a leaf without pdata, recursion 1000) and the real clang-14 x64
 * programs swept instruction by instruction. The truth comes from the emulated CPU's shadow call
 * stack, not from any walker.
 */
import { describe, expect, it } from "vitest";
import { ratePercent as pct, truthRate as rate } from "../support/corpus.js";
import { docFigures, quotedNumber } from "../support/docs.js";

describe("x64 walkers against the emulator's truth", () => {
  it("--walker unwind is exact on every synthetic x64 vector (188: every UWOP, epilogs, chains, machine frames, leaf, recursion 1000)", () => {
    const r = rate("vectors/x64/synthetic", "unwind");
    console.log(`unwind walker, vectors/x64/synthetic: ${r.exact}/${r.total} exact`);
    expect(r.firstMiss).toBeUndefined();
    expect(r.total).toBe(188);
  });

  it("--walker unwind is exact on every snapshot of every sweep of the real clang x64 programs", () => {
    const r = rate("vectors/x64/c", "unwind");
    console.log(`unwind walker, vectors/x64/c: ${r.exact}/${r.total} snapshots exact (${r.files.size} sweeps)`);
    expect(r.firstMiss).toBeUndefined();
    expect(r.files.size).toBe(4);
    expect(r.total).toBeGreaterThan(1500);
  });

  it("--walker unwind and --walker auto are exact on everything in vectors/x64", () => {
    for (const walker of ["unwind", "auto"] as const) {
      const r = rate("vectors/x64", walker);
      console.log(`${walker} walker, vectors/x64: ${r.exact}/${r.total} exact`);
      expect(r.firstMiss, walker).toBeUndefined();
      // docs/learn.md quotes the count.
      expect(quotedNumber(docFigures("docs/learn.md", /the unwind tables find all ([\d,]+) x64 snapshots/)[0]!)).toBe(r.total);
    }
  });

  it("prints the RBP chain's rate on the same real sweeps (for the record)", () => {
    const fp = rate("vectors/x64/c", "frame-pointer");
    const synthetic = rate("vectors/x64/synthetic", "frame-pointer");
    console.log(`frame-pointer walker: vectors/x64/c ${fp.exact}/${fp.total} (${pct(fp)}), vectors/x64/synthetic ${synthetic.exact}/${synthetic.total} (${pct(synthetic)})`);
    // clang keeps no RBP chain on x64: the chain is right only where the walk is one or two frames deep.
    expect(fp.exact).toBeLessThan(fp.total);
    // docs/learn.md quotes the rate.
    expect(docFigures("docs/learn.md", /Following it finds ([\d.]+%) of the real clang programs' stacks/)).toEqual([pct(fp)]);
  });
});
