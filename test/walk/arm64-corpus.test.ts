/**
 * The ARM64 walkers against the emulator's ground truth, over every snapshot of every sweep in
 * vectors/arm64: the real clang-14 programs built for arm64 (-O2, and -O2 with frame pointers
 * kept) and the synthetic chains whose prologs and epilogs use every unwind code, packed and
 * .xdata forms, fragments and leaves, each swept instruction by instruction. The truth comes from
 * the emulated CPU's shadow call stack (bl/blr and ret), not from any walker.
 */
import { describe, expect, it } from "vitest";
import { ratePercent as pct, truthRate as rate } from "../support/corpus.js";

describe("ARM64 walkers against the emulator's truth", () => {
  it("--walker unwind is exact on every snapshot of the real clang arm64 programs (-O2 and frame pointers kept)", () => {
    for (const folder of ["vectors/arm64/c", "vectors/arm64/c-fp"]) {
      const r = rate(folder, "unwind");
      console.log(`unwind walker, ${folder}: ${r.exact}/${r.total} snapshots exact (${r.files.size} sweeps)`);
      expect(r.firstMiss, folder).toBeUndefined();
      expect(r.files.size).toBe(3);
      expect(r.total).toBeGreaterThan(1300);
    }
  });

  it("--walker unwind is exact at every instruction of the synthetic chains (every prolog/epilog code, packed and .xdata, fragments, leaves)", () => {
    const r = rate("vectors/arm64/synthetic", "unwind");
    console.log(`unwind walker, vectors/arm64/synthetic: ${r.exact}/${r.total} snapshots exact`);
    expect(r.firstMiss).toBeUndefined();
    expect(r.total).toBeGreaterThan(150);
  });

  it("--walker auto is exact on everything in vectors/arm64", () => {
    const r = rate("vectors/arm64", "auto");
    console.log(`auto walker, vectors/arm64: ${r.exact}/${r.total} exact`);
    expect(r.firstMiss).toBeUndefined();
  });

  it("prints the frame-record chain's rate on the same sweeps (for the record)", () => {
    const rates = ["vectors/arm64/c", "vectors/arm64/c-fp", "vectors/arm64/synthetic"].map((folder) => ({ folder, r: rate(folder, "frame-pointer") }));
    console.log(`frame-pointer walker: ${rates.map(({ folder, r }) => `${folder} ${r.exact}/${r.total} (${pct(r)})`).join(", ")}`);
    // x29 does not give the caller's sp (the record may sit anywhere in the frame) and clang -O2
    // keeps no chain: the record walk is exact only in shallow stacks.
    for (const { r } of rates) expect(r.exact).toBeLessThan(r.total);
  });
});
