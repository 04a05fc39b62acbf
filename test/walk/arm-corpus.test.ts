/**
 * The ARM walkers against the ground truth, over every snapshot of every sweep in vectors/arm:
 * the real C programs built by clang-16 for thumbv7-pc-windows-msvc at -O2 (vectors/arm/c), run
 * on the emulated CPU (Unicorn in Thumb state) with the truth from its shadow call stack (bl/blx
 * and returns); and synthetic Thumb-2 chains whose packed words and `.xdata` records cover every
 * field and every unwind code, swept at every prolog, body and epilog instruction, with the truth
 * from the model's call stack (emulator/arm/corpus.ts). Neither truth comes from a walker.
 */
import { describe, expect, it } from "vitest";
import { ratePercent as pct, truthRate as rate } from "../support/corpus.js";

describe("ARM walkers against the emulator's truth", () => {
  it("--walker unwind is exact on every snapshot of the real clang-16 ARM programs", () => {
    const r = rate("vectors/arm/c", "unwind");
    console.log(`unwind walker, vectors/arm/c: ${r.exact}/${r.total} snapshots exact (${r.files.size} sweeps)`);
    expect(r.firstMiss).toBeUndefined();
    expect(r.files.size).toBe(3);
    expect(r.total).toBe(1316);
  });

  it("prints the frame-chain and scan rates on the same sweeps (for the record)", () => {
    const fp = rate("vectors/arm/c", "frame-pointer");
    const scan = rate("vectors/arm/c", "scan");
    console.log(`vectors/arm/c: frame-pointer walker ${fp.exact}/${fp.total} (${pct(fp)}); scan walker ${scan.exact}/${scan.total} (${pct(scan)})`);
    // clang -O2 keeps r11 as a frame pointer only in some functions, and a scan's sp is a guess.
    expect(fp.exact).toBeLessThan(fp.total);
    expect(scan.exact).toBeLessThan(scan.total);
  });
});

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
