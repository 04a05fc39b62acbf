/**
 * Walking minidumps of the emulator's snapshots against its ground truth (the shadow call stack),
 * as `stackwalk emulate --dmp --break NAME` writes them for every function of the real C programs
 * (test/support/break-dumps.ts), and for every capture of the synthetic x64 chains:
 *
 * - x64, module images withheld (stack and context only, as a real Windows dump holds): with the
 *   STACK CFI the emulator's symbol store writes, every stack is exact; without any symbols, the
 *   leaf simulation and scanning find what they can, printed beside the frame-pointer walker's.
 * - x86 built without frame pointers, the symbol store withheld: every stack is exact where the
 *   dump holds the code (call-site checks), and where it does not, still every stack that
 *   Breakpad's walker find; with the symbol store, every stack.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { scoreDumps, truthTable, x64DumpHits, x86FpoDumpHits } from "../support/break-dumps.js";

const pct = (n: number, total: number): string => `${((100 * n) / total).toFixed(1)}%`;

describe("x64 dumps of the C programs and the synthetic chains, images withheld", () => {
  const hits = x64DumpHits();

  it("walk exactly with the STACK CFI of the emulator's symbol store", () => {
    const cfi = scoreDumps(hits, { withholdImages: true, symbols: true }, { walker: "auto" });
    console.log(`x64 dumps, STACK CFI: ${cfi.stacks}/${hits.length} stacks exact, ${cfi.frames}/${cfi.totalFrames} frames`);
    expect(hits.length).toBeGreaterThan(300);
    expect(cfi.stacks).toBe(hits.length);
  });

  it("without symbols: auto (leaf simulation, scanning) beside the frame-pointer walker", () => {
    const auto = scoreDumps(hits, { withholdImages: true, symbols: false }, { walker: "auto" });
    const fp = scoreDumps(hits, { withholdImages: true, symbols: false }, { walker: "frame-pointer" });
    const n = hits.length;
    const f = auto.totalFrames;
    console.log(
      `x64 dumps, no symbols: auto ${auto.stacks}/${n} stacks exact (${pct(auto.stacks, n)}), ${auto.frames}/${f} frames (${pct(auto.frames, f)}); ` +
        `frame-pointer ${fp.stacks}/${n} stacks (${pct(fp.stacks, n)}), ${fp.frames}/${f} frames (${pct(fp.frames, f)})`,
    );
    expect(auto.stacks).toBeGreaterThanOrEqual(195);
    expect(auto.frames).toBeGreaterThanOrEqual(1731);
    expect(auto.stacks).toBeGreaterThan(fp.stacks);
  });
});

describe("x86 dumps of the C programs built without frame pointers, the symbol store withheld", () => {
  const hits = x86FpoDumpHits();

  it("every stack is exact where the dump holds the code, and every stack Breakpad's walker find where it does not", () => {
    const auto = scoreDumps(hits, { withholdImages: false, symbols: false }, { walker: "auto" });
    const fp = scoreDumps(hits, { withholdImages: false, symbols: false }, { walker: "frame-pointer" });
    const breakpad = scoreDumps(hits, { withholdImages: false, symbols: false }, { walker: "breakpad" });
    const bare = scoreDumps(hits, { withholdImages: true, symbols: false }, { walker: "auto" });
    const bareBreakpad = scoreDumps(hits, { withholdImages: true, symbols: false }, { walker: "breakpad" });
    const n = hits.length;
    console.log(
      `x86 FPO dumps, no symbols: auto ${auto.stacks}/${n} stacks exact, frame-pointer ${fp.stacks}/${n}, Breakpad's walker ${breakpad.stacks}/${n}; ` +
        `images withheld too: auto ${bare.stacks}/${n}, Breakpad's walker ${bareBreakpad.stacks}/${n}`,
    );
    expect(n).toBeGreaterThan(100);
    expect(auto.stacks).toBe(n);
    expect(fp.stacks).toBeLessThan(auto.stacks);
    for (const h of breakpad.exact) expect(auto.exact.has(h), `${h.program} ${h.function} step ${h.step}`).toBe(true);
    for (const h of bareBreakpad.exact) expect(bare.exact.has(h), `${h.program} ${h.function} step ${h.step} (no images)`).toBe(true);
  });

  it("with the symbol store every stack is exact", () => {
    const sym = scoreDumps(hits, { withholdImages: false, symbols: true }, { walker: "auto" });
    console.log(`x86 FPO dumps, with the .sym store: auto ${sym.stacks}/${hits.length} stacks exact`);
    expect(sym.stacks).toBe(hits.length);
  });
});

describe("auto beside Breakpad's walker on every class of dump (the table of docs/learn.md)", () => {
  const rows = truthTable();

  it("auto is ahead or equal on every class, and exact on every stack Breakpad's walker gets exact", () => {
    for (const r of rows) {
      console.log(`${r.name}: auto ${r.auto.stacks}/${r.total}, Breakpad's walker ${r.breakpad.stacks}/${r.total}`);
      expect(r.auto.stacks, r.name).toBeGreaterThanOrEqual(r.breakpad.stacks);
      for (const h of r.breakpad.exact) expect(r.auto.exact.has(h), `${r.name}: ${h.program} ${h.function} step ${h.step}`).toBe(true);
    }
  });

  it("docs/learn.md's table holds these figures", () => {
    const readme = readFileSync("docs/learn.md", "utf8");
    for (const r of rows) expect(readme).toContain(`| ${r.name} (${r.total}) | ${r.auto.stacks} | ${r.breakpad.stacks} |`);
  });
});
