import { describe, expect, it } from "vitest";
import * as dbghelp from "../src/entry/dbghelp.js";
import * as api from "../src/index.js";

describe("public API", () => {
  it("walks a vector parsed from text, in-process", async () => {
    const { readFileSync } = await import("node:fs");
    const v = api.parseVector(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    const [{ walk }] = api.walkSnapshot(v) as [api.ThreadWalk];
    expect(walk.frames).toHaveLength(4);
    expect(api.compareWithTruth(v.machine, walk, v.threads[0]!.truth!).exact).toBe(true);
    expect(dbghelp.STACKFRAME64_SIZE).toBe(264);
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

describe("rules and the cache, as docs/library.md shows them", () => {
  it("a frame's rule is a value with a kind and fields; ruleText gives the words walk prints; one cache serves repeated walks", async () => {
    const { readFileSync } = await import("node:fs");
    const v = api.parseVector(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    const cache = new api.UnwindCache();
    const walk = api.walkThread(v, v.threads[0]!, { cache });
    const rule = walk.frames[1]!.rule;
    expect(rule.kind).toBe("frame-pointer");
    expect(rule.kind === "frame-pointer" && [rule.fp, rule.pc, rule.savedFp]).toEqual([0x0012fe08n, 0x00401097n, 0x0012fe28n]);
    expect(api.ruleText(rule)).toBe("ebp-chain ebp=0x0012fe08: eip=[0x0012fe0c]=0x00401097 ebp=[0x0012fe08]=0x0012fe28 esp=0x0012fe10");
    const again = api.walkThread(v, v.threads[0]!, { cache });
    expect(again.frames.map((f) => [f.addrPC, f.addrStack, api.ruleText(f.rule)])).toEqual(walk.frames.map((f) => [f.addrPC, f.addrStack, api.ruleText(f.rule)]));
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
