/**
 * The ARM walkers against the model's ground truth, over every snapshot of every sweep in
 * vectors/arm: synthetic Thumb-2 chains whose packed words and `.xdata` records cover every field
 * and every unwind code, swept at every prolog, body and epilog instruction. The truth comes from
 * the model's call stack (emulator/arm/corpus.ts), not from any walker.
 */
import { describe, expect, it } from "vitest";
import { ratePercent as pct, truthRate as rate } from "../support/corpus.js";

describe("ARM walkers against the model's truth", () => {
  it("--walker unwind is exact at every instruction of the synthetic chains", () => {
    const r = rate("vectors/arm/synthetic", "unwind");
    console.log(`unwind walker, vectors/arm/synthetic: ${r.exact}/${r.total} snapshots exact (${r.files.size} sweeps)`);
    expect(r.firstMiss).toBeUndefined();
    expect(r.files.size).toBe(2);
    expect(r.total).toBeGreaterThan(150);
  });

  it("--walker auto is exact on everything in vectors/arm", () => {
    const r = rate("vectors/arm", "auto");
    console.log(`auto walker, vectors/arm: ${r.exact}/${r.total} exact`);
    expect(r.firstMiss).toBeUndefined();
  });

  it("prints the frame-chain and scan rates on the same sweeps (for the record)", () => {
    const fp = rate("vectors/arm/synthetic", "frame-pointer");
    const scan = rate("vectors/arm/synthetic", "scan");
    console.log(`frame-pointer walker: ${fp.exact}/${fp.total} (${pct(fp)}); scan walker: ${scan.exact}/${scan.total} (${pct(scan)})`);
    // Most of these functions keep no frame chain, and a scan's sp is a guess.
    expect(fp.exact).toBeLessThan(fp.total);
    expect(scan.exact).toBeLessThan(scan.total);
  });
});
