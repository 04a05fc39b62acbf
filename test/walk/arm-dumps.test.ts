/**
 * ARM minidumps as `stackwalk emulate --dmp` writes them, for every snapshot of the clang-16 ARM
 * programs' sweeps (vectors/arm/c, run on the emulated CPU): Breakpad's 368-byte ARM context and
 * SystemInfo 5 through the product writer and reader, walked against the emulator's truth with
 * the images in the dump, and with the images withheld (stack and context only, as a Windows dump
 * holds) and the .sym files the emulator's symbol store writes, whose STACK CFI comes from
 * .pdata/.xdata.
 */
import { describe, expect, it } from "vitest";
import { armDumpHits, dumpOf, scoreDumps } from "../support/break-dumps.js";

const hits = armDumpHits();

describe("ARM dumps of the emulated clang-16 programs", () => {
  it("hold the ARM context and SystemInfo 5", () => {
    const d = dumpOf(hits[0]!.vector, { withholdImages: false, symbols: false });
    expect(d.machine).toBe("arm");
    expect(d.threads[0]!.registers["pc"]).toBe(hits[0]!.vector.threads[0]!.registers["pc"]);
    expect(d.threads[0]!.registers["cpsr"]).toBe(0x30n);
  });

  it("walk exactly from the images in the dump, and from the .sym files' STACK CFI when the images are withheld", () => {
    const withImages = scoreDumps(hits, { withholdImages: false, symbols: false }, { walker: "auto" });
    const fromCfi = scoreDumps(hits, { withholdImages: true, symbols: true }, { walker: "auto" });
    const bare = scoreDumps(hits, { withholdImages: true, symbols: false }, { walker: "auto" });
    console.log(
      `ARM dumps: ${hits.length} snapshots; with images ${withImages.stacks}/${hits.length} exact; images withheld, .sym STACK CFI ${fromCfi.stacks}/${hits.length}; neither ${bare.stacks}/${hits.length}`,
    );
    expect(hits.length).toBe(1316);
    expect(withImages.stacks).toBe(hits.length);
    expect(fromCfi.stacks).toBe(hits.length);
    expect(bare.stacks).toBeLessThan(hits.length);
  });

  it("beside Breakpad's walker: equal from the .sym store, ahead without code or symbols (for the record)", () => {
    const fromCfi = scoreDumps(hits, { withholdImages: true, symbols: true }, { walker: "breakpad" });
    const bare = scoreDumps(hits, { withholdImages: true, symbols: false }, { walker: "breakpad" });
    const autoBare = scoreDumps(hits, { withholdImages: true, symbols: false }, { walker: "auto" });
    const breakpadOnly = [...bare.exact].filter((h) => !autoBare.exact.has(h)).length;
    console.log(
      `Breakpad's walker on the ARM dumps: .sym STACK CFI ${fromCfi.stacks}/${hits.length}; neither ${bare.stacks}/${hits.length} (auto ${autoBare.stacks}; ${breakpadOnly} of the stacks Breakpad gets exact, auto does not)`,
    );
    expect(fromCfi.stacks).toBe(hits.length);
    // Without code to check a call site, auto takes lr as the context frame's return address, which
    // a function that has saved it and called since holds stale; Breakpad's scan finds the saved copy.
    expect(autoBare.stacks).toBeGreaterThan(bare.stacks);
  });
});
