import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("public API", () => {
  it("walks a vector parsed from text, in-process", async () => {
    const { readFileSync } = await import("node:fs");
    const v = api.parseVector(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    const [{ walk }] = api.walkSnapshot(v) as [api.ThreadWalk];
    expect(walk.frames).toHaveLength(4);
    expect(api.compareWithTruth(v.machine, walk, v.threads[0]!.truth!).exact).toBe(true);
    expect(api.STACKFRAME64_SIZE).toBe(264);
  });

  it("explains and draws a walk in-process (what explain, render and view print)", async () => {
    const { readFileSync } = await import("node:fs");
    const v = api.parseVector(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    const e = api.explainWalk(v, v.threads[0]!);
    expect(e.frames).toHaveLength(4);
    expect(api.formatExplanation(e)).toContain("→ return address: EIP ←");
    expect(api.renderSvg(e)).toMatch(/^<svg /);
    expect(api.renderHtml([e])).toMatch(/^<!DOCTYPE html>/i);
  });
});

describe("InputError", () => {
  it("is recognised with instanceof when another copy of the module made it (the bin's bundles, a package loaded twice)", () => {
    const fromAnotherCopy = Object.defineProperty(new Error("offset 0x4: bad"), Symbol.for("stackwalk-emu.InputError"), { value: true });
    expect(fromAnotherCopy instanceof api.InputError).toBe(true);
    expect(new api.InputError("bad-value", "x") instanceof api.InputError).toBe(true);
    expect(new Error("x") instanceof api.InputError).toBe(false);
    expect((null as unknown) instanceof api.InputError).toBe(false);
  });
});
