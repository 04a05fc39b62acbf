/**
 * ARM64 minidumps as `stackwalk emulate --dmp --break F` writes them, for every function entry
 * of the arm64 sweeps (emulator/break-dumps.ts): the 912-byte ARM64_NT_CONTEXT and SystemInfo 12
 * through the product writer and reader, walked against the emulator's truth with the images in
 * the dump, and with the images withheld (stack and context only, as a Windows dump holds) and
 * the .sym files the emulator's symbol store writes, whose STACK CFI comes from .pdata/.xdata.
 */
import { describe, expect, it } from "vitest";
import { arm64DumpHits, dumpOf, scoreDumps } from "../support/break-dumps.js";
import { formatBreakpadSym, symFileInput } from "../../src/formats/breakpad-sym-write.js";
import { arm64ModuleCfi } from "../../src/entry/arch.js";

const hits = arm64DumpHits();

describe("ARM64 break dumps", () => {
  it("hold the ARM64 context and SystemInfo 12", () => {
    const d = dumpOf(hits[0]!.vector, { withholdImages: false, symbols: false });
    expect(d.machine).toBe("arm64");
    expect(d.threads[0]!.registers["pc"]).toBe(hits[0]!.vector.threads[0]!.registers["pc"]);
    expect(d.threads[0]!.registers["d8"]).toBe(hits[0]!.vector.threads[0]!.registers["d8"]);
  });

  it("walk exactly from the images in the dump, and from the .sym files' STACK CFI when the images are withheld (but through a machine frame)", () => {
    const withImages = scoreDumps(hits, { withholdImages: false, symbols: false }, { walker: "auto" });
    const fromCfi = scoreDumps(hits, { withholdImages: true, symbols: true }, { walker: "auto" });
    console.log(`ARM64 break dumps: ${hits.length} hits; with images ${withImages.stacks}/${hits.length} exact; images withheld, .sym STACK CFI ${fromCfi.stacks}/${hits.length} exact`);
    expect(hits.length).toBeGreaterThan(50);
    expect(withImages.stacks).toBe(hits.length);
    // STACK CFI has no way to say that a caller's pc is an interrupted one (Breakpad looks every
    // caller up at pc − 4), so a handler entered through a machine frame gets no record: only the
    // stacks that pass through one are missed.
    const missed = hits.filter((h) => !fromCfi.exact.has(h)).map((h) => h.program);
    expect(missed.length).toBeGreaterThan(0);
    expect(missed.every((p) => p.startsWith("arm64-machine-frame-"))).toBe(true);
  });

  it("write STACK CFI in Breakpad's arm64 register names, with a row wherever a prolog or epilog changes the rules", () => {
    const v = hits.find((h) => h.program === "arm64-chain")!.vector;
    const module = v.modules[0]!;
    const input = symFileInput(module, "arm64", v.memory)!;
    input.stackCfi = arm64ModuleCfi(module, v.memory);
    const text = formatBreakpadSym(input);
    expect(text).toMatch(/^MODULE windows arm64 /);
    // fc_fregs: the prolog's first instruction saves fp and lr pre-indexed; d8-d13 have no Breakpad name.
    const fc = module.symbols.find((s) => s.name === "fc_fregs")!;
    const begin = fc.rva.toString(16);
    expect(text).toContain(`STACK CFI INIT ${begin} ${(Number(fc.size!)).toString(16)} .cfa: sp .ra: x30\n`);
    expect(text).toContain(`STACK CFI ${(Number(fc.rva) + 4).toString(16)} .cfa: sp 16 + .ra: .cfa 8 - ^ x29: .cfa 16 - ^\n`);
    // A leaf without .pdata gets the Windows leaf rule: pc = lr, sp unchanged.
    const leaf = module.symbols.find((s) => s.name === "leaf_bare")!;
    expect(text).toContain(`STACK CFI INIT ${leaf.rva.toString(16)} ${Number(leaf.size!).toString(16)} .cfa: sp .ra: x30\n`);
  });
});
