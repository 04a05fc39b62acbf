/**
 * The x86 walkers against the emulator's ground truth, over every x86 vector and every snapshot
 * of every sweep in vectors/x86 (the real clang-14 programs built with and without frame
 * pointers, and the synthetic FPO_DATA programs). The truth comes from the emulated CPU's shadow
 * call stack, not from any walker.
 */
import { describe, expect, it } from "vitest";
import type { Vector } from "../../src/formats/vector.js";
import { AddressMode } from "../../src/model/address.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";
import { newStackFrame64 } from "../../src/model/stackframe.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import type { WalkerName } from "../../src/walk/registry.js";
import { x86FunctionTableEntry } from "../../src/arch/x86/function-table.js";
import { stackWalk64Detailed } from "../../src/walk/stackwalk64.js";
import { walkThread } from "../../src/walk/walk.js";
import { snapshots } from "../support/corpus.js";
import { dumpOf, x86FpoDumpHits } from "../support/break-dumps.js";
import { docFigures, quotedNumber } from "../support/docs.js";

function rate(folder: string, walker: WalkerName): { exact: number; total: number; firstMiss?: string } {
  let exact = 0;
  let total = 0;
  let firstMiss: string | undefined;
  for (const { file, vector } of snapshots(folder)) {
    for (const thread of vector.threads) {
      if (thread.truth === undefined) continue;
      total++;
      const c = compareWithTruth(vector.machine, walkThread(vector, thread, { walker }), thread.truth);
      if (c.exact) exact++;
      else firstMiss ??= `${file}: ${c.difference?.text ?? ""}`;
    }
  }
  return firstMiss === undefined ? { exact, total } : { exact, total, firstMiss };
}

describe("x86 walkers against the emulator's truth", () => {
  it("--walker fpo is exact on every x86 vector and every sweep snapshot", () => {
    const r = rate("vectors/x86", "fpo");
    console.log(`fpo walker, vectors/x86: ${r.exact}/${r.total} snapshots exact`);
    expect(r.firstMiss).toBeUndefined();
    expect(r.total).toBeGreaterThan(4000);
    // docs/learn.md quotes the count.
    expect(quotedNumber(docFigures("docs/learn.md", /every one of the ([\d,]+) x86 snapshots/)[0]!)).toBe(r.total);
  });

  it("--walker auto is exact on every x86 vector too", () => {
    const r = rate("vectors/x86", "auto");
    expect(r.firstMiss).toBeUndefined();
  });

  it("prints the EBP chain's rate on the same real sweeps: low on the FPO build", () => {
    const fpo = rate("vectors/x86/c-fpo", "frame-pointer");
    const fp = rate("vectors/x86/c-fp", "frame-pointer");
    const pct = (r: { exact: number; total: number }): string => `${((100 * r.exact) / r.total).toFixed(1)}%`;
    console.log(`frame-pointer walker: c-fpo ${fpo.exact}/${fpo.total} (${pct(fpo)}), c-fp ${fp.exact}/${fp.total} (${pct(fp)})`);
    expect(fpo.exact / fpo.total).toBeLessThan(0.5);
    expect(fp.exact).toBeLessThan(fp.total);
    // docs/learn.md quotes both rates.
    expect(docFigures("docs/learn.md", /the EBP chain alone gets ([\d.]+%) of the FPO build and (\d+%) of the frame-pointer build/)).toEqual([pct(fpo), `${((100 * fp.exact) / fp.total).toFixed(0)}%`]);
  });
});

describe("the native StackWalk64 facade follows FPO and FrameData", () => {
  /** Frames (pc, stack) the facade returns for a vector, as dbghelp's callers loop over it. */
  function facadeFrames(vector: Vector, compatibility: "native" | "wine"): { frames: [bigint, bigint][]; entries: bigint[] } {
    const t = vector.threads[0]!;
    const f = newStackFrame64();
    f.addrPC = { offset: t.registers["eip"]!, segment: 0, mode: AddressMode.Flat };
    f.addrFrame = { offset: t.registers["ebp"]!, segment: 0, mode: AddressMode.Flat };
    f.addrStack = { offset: t.registers["esp"]!, segment: 0, mode: AddressMode.Flat };
    const frames: [bigint, bigint][] = [];
    const entries: bigint[] = [];
    const context = { registers: { ...t.registers } };
    while (frames.length < 2000 && stackWalk64Detailed(IMAGE_FILE_MACHINE.I386, vector, f, context, { compatibility }).ok) {
      frames.push([f.addrPC.offset, f.addrStack.offset]);
      entries.push(f.funcTableEntry);
      if (f.addrReturn.offset === 0n) break;
    }
    return { frames, entries };
  }

  it("walks the synthetic FPO programs frame for frame like the truth", () => {
    let checked = 0;
    for (const { file, vector } of snapshots("vectors/x86/synthetic")) {
      const truth = vector.threads[0]!.truth!;
      const { frames } = facadeFrames(vector, "native");
      expect(frames, file).toEqual(truth.map((t) => [t.pc, t.sp]));
      checked++;
    }
    expect(checked).toBe(9);
  });

  it("hands out the FPO_DATA covering each frame through FuncTableEntry; Wine's hands out NULL and follows EBP", () => {
    const { vector } = [...snapshots("vectors/x86/synthetic")].find((s) => s.file.endsWith("mixed-8.json"))!;
    const truth = vector.threads[0]!.truth!;
    const native = facadeFrames(vector, "native");
    expect(native.entries.every((e) => e !== 0n)).toBe(true);
    const record = x86FunctionTableEntry(vector, native.entries[0]!);
    expect(record?.kind).toBe("fpo");
    const module = vector.modules[0]!;
    if (record?.kind === "fpo") expect(module.base + BigInt(record.record.ulOffStart) <= truth[0]!.pc).toBe(true);
    const wine = facadeFrames(vector, "wine");
    expect(wine.entries.every((e) => e === 0n)).toBe(true);
    expect(wine.frames).not.toEqual(truth.map((t) => [t.pc, t.sp]));
  });
});

describe("the native StackWalk64 facade scans where the EBP chain gives nothing", () => {
  it("walks dumps of code built without frame pointers and without its symbols, where Wine's chain stops", () => {
    const hits = x86FpoDumpHits();
    const exact = { native: 0, wine: 0 };
    for (const h of hits) {
      const d = dumpOf(h.vector, { withholdImages: false, symbols: false });
      const t = d.threads[0]!;
      for (const compatibility of ["native", "wine"] as const) {
        const f = newStackFrame64();
        f.addrPC = { offset: t.registers["eip"]!, segment: 0, mode: AddressMode.Flat };
        f.addrFrame = { offset: t.registers["ebp"]!, segment: 0, mode: AddressMode.Flat };
        f.addrStack = { offset: t.registers["esp"]!, segment: 0, mode: AddressMode.Flat };
        const frames: [bigint, bigint][] = [];
        const context = { registers: { ...t.registers } };
        while (frames.length < 200 && stackWalk64Detailed(IMAGE_FILE_MACHINE.I386, d, f, context, { compatibility }).ok) {
          frames.push([f.addrPC.offset, f.addrStack.offset]);
          if (f.addrReturn.offset === 0n) break;
        }
        if (JSON.stringify(frames, (_k, v) => (typeof v === "bigint" ? v.toString(16) : v)) === JSON.stringify(h.truth.map((x) => [x.pc.toString(16), x.sp.toString(16)]))) exact[compatibility]++;
      }
    }
    console.log(`StackWalk64 facade on the x86 FPO break dumps without symbols: native ${exact.native}/${hits.length} exact, wine ${exact.wine}/${hits.length}`);
    expect(exact.native).toBeGreaterThanOrEqual(95);
    expect(exact.wine).toBeLessThan(10);
  });
});
