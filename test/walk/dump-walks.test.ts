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
 *   Breakpad's rules find; with the symbol store, every stack.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseVector } from "../../src/formats/vector.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import { walkThread, type WalkOptions } from "../../src/walk/walk.js";
import { BREAKPAD_X86, dumpOf, folderBreakHits, type BreakHit } from "../support/break-dumps.js";

const PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved", "noreturn-longjmp"];

/** Stacks walked exactly, frames matching the truth up to the first difference, and the misses. */
interface Score {
  stacks: number;
  frames: number;
  exact: Set<BreakHit>;
}

function score(hits: readonly BreakHit[], dump: { withholdImages: boolean; symbols: boolean }, options: WalkOptions): Score {
  const out: Score = { stacks: 0, frames: 0, exact: new Set() };
  for (const h of hits) {
    const d = dumpOf(h.vector, dump);
    const walk = walkThread(d, d.threads[0]!, options);
    let k = 0;
    while (k < walk.frames.length && k < h.truth.length && walk.frames[k]!.addrPC === h.truth[k]!.pc && walk.frames[k]!.addrStack === h.truth[k]!.sp) k++;
    out.frames += k;
    if (compareWithTruth(h.vector.machine, walk, h.truth).exact) {
      out.stacks++;
      out.exact.add(h);
    }
  }
  return out;
}

const frameCount = (hits: readonly BreakHit[]): number => hits.reduce((n, h) => n + h.truth.length, 0);
const pct = (n: number, total: number): string => `${((100 * n) / total).toFixed(1)}%`;

describe("x64 dumps of the C programs and the synthetic chains, images withheld", () => {
  const hits: BreakHit[] = folderBreakHits("vectors/x64/c", PROGRAMS);
  for (const f of readdirSync("vectors/x64/synthetic").sort()) {
    const v = parseVector(readFileSync(`vectors/x64/synthetic/${f}`, "utf8"));
    hits.push({ program: f, function: "capture", step: 0, vector: v, truth: v.threads[0]!.truth! });
  }
  const frames = frameCount(hits);

  it("walk exactly with the STACK CFI of the emulator's symbol store", () => {
    const cfi = score(hits, { withholdImages: true, symbols: true }, { walker: "auto" });
    console.log(`x64 dumps, STACK CFI: ${cfi.stacks}/${hits.length} stacks exact, ${cfi.frames}/${frames} frames`);
    expect(hits.length).toBeGreaterThan(300);
    expect(cfi.stacks).toBe(hits.length);
  });

  it("without symbols: auto (leaf simulation, scanning) beside the frame-pointer walker", () => {
    const auto = score(hits, { withholdImages: true, symbols: false }, { walker: "auto" });
    const fp = score(hits, { withholdImages: true, symbols: false }, { walker: "frame-pointer" });
    console.log(
      `x64 dumps, no symbols: auto ${auto.stacks}/${hits.length} stacks exact (${pct(auto.stacks, hits.length)}), ${auto.frames}/${frames} frames (${pct(auto.frames, frames)}); ` +
        `frame-pointer ${fp.stacks}/${hits.length} stacks (${pct(fp.stacks, hits.length)}), ${fp.frames}/${frames} frames (${pct(fp.frames, frames)})`,
    );
    expect(auto.stacks).toBeGreaterThanOrEqual(195);
    expect(auto.frames).toBeGreaterThanOrEqual(1731);
    expect(auto.stacks).toBeGreaterThan(fp.stacks);
  });
});

describe("x86 dumps of the C programs built without frame pointers, the symbol store withheld", () => {
  const hits = folderBreakHits("vectors/x86/c-fpo", PROGRAMS);

  it("every stack is exact where the dump holds the code, and every stack Breakpad's rules find where it does not", () => {
    const auto = score(hits, { withholdImages: false, symbols: false }, { walker: "auto" });
    const fp = score(hits, { withholdImages: false, symbols: false }, { walker: "frame-pointer" });
    const breakpad = score(hits, { withholdImages: false, symbols: false }, { strategies: BREAKPAD_X86 });
    const bare = score(hits, { withholdImages: true, symbols: false }, { walker: "auto" });
    const bareBreakpad = score(hits, { withholdImages: true, symbols: false }, { strategies: BREAKPAD_X86 });
    console.log(
      `x86 FPO dumps, no symbols: auto ${auto.stacks}/${hits.length} stacks exact, frame-pointer ${fp.stacks}/${hits.length}, Breakpad's rules ${breakpad.stacks}/${hits.length}; ` +
        `images withheld too: auto ${bare.stacks}/${hits.length}, Breakpad's rules ${bareBreakpad.stacks}/${hits.length}`,
    );
    expect(hits.length).toBeGreaterThan(100);
    expect(auto.stacks).toBe(hits.length);
    expect(fp.stacks).toBeLessThan(auto.stacks);
    for (const h of [...breakpad.exact]) expect(auto.exact.has(h), `${h.program} ${h.function} step ${h.step}`).toBe(true);
    for (const h of [...bareBreakpad.exact]) expect(bare.exact.has(h), `${h.program} ${h.function} step ${h.step} (no images)`).toBe(true);
  });

  it("with the symbol store every stack is exact", () => {
    const sym = score(hits, { withholdImages: false, symbols: true }, { walker: "auto" });
    console.log(`x86 FPO dumps, with the .sym store: auto ${sym.stacks}/${hits.length} stacks exact`);
    expect(sym.stacks).toBe(hits.length);
  });
});
